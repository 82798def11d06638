/* The Lua profiler's Lua face (cg_prof.c): the prof_* functions of the core
 * module table, over its collector, a C debug hook (cg_prof_collect.c).
 * Beside the binding: it needs lua.h. */
#ifndef CG_PROF_H
#define CG_PROF_H

#include "cg_common.h"

#include "lua.h"

/* Adds the profiler's functions to the table at the top of the stack. */
CG_HIDDEN void cg_prof_register(lua_State *L);

#endif
