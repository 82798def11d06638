/* The Lua profiler's Lua face (cg_prof.c): the prof_* functions of the core
 * module table, over its collector, a C debug hook (cg_prof_collect.c).
 * Beside the binding: it needs lua.h. */
#ifndef CG_PROF_H
#define CG_PROF_H

#include "cg_common.h"

#include "lua.h"

/* Adds the profiler's functions to the table at the top of the stack. */
CG_HIDDEN void cg_prof_register(lua_State *L);
/* Adds to the table at the top of the stack only the functions the start
 * and the write at exit of a whole run call (cg_prof_exit.c): prof_start,
 * prof_stopper, prof_running, prof_own_hook, prof_source_lines (the core's
 * starter entry, cg_lua.c). */
CG_HIDDEN void cg_prof_register_start(lua_State *L);

#endif
