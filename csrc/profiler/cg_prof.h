/* The Lua profiler's collector: a C debug hook beside the binding (it needs
 * lua.h). It adds prof_* functions to the core module table. */
#ifndef CG_PROF_H
#define CG_PROF_H

#include "cg_common.h"

#include "lua.h"

/* Adds the profiler's functions to the table at the top of the stack. */
CG_HIDDEN void cg_prof_register(lua_State *L);

#endif
