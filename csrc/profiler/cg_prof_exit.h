/* The profile of a whole program started and written in C (cg_prof_exit.c):
 * the core's prof_autostart (callgrind.start) and prof_nest. On top of
 * cg_prof.c's functions, which it calls through the core's table: layer 7
 * of profiler/ (spec/layout_c_spec.lua), beside cg_prof.c. */
#ifndef CG_PROF_EXIT_H
#define CG_PROF_EXIT_H

#include "cg_common.h"

#include "lua.h"

/* Adds prof_autostart and prof_nest to the core module table at the top
 * of the stack (kept in the registry for the writer at exit). */
CG_HIDDEN void cg_prof_exit_register(lua_State *L);

/* core.prof_autostart itself, for the core's starter entry
 * (luaopen_callgrind_core_starter, cg_lua.c), which calls it in its own
 * frame: (none) -> the sentinel; raises as prof_autostart does. */
CG_HIDDEN int cg_prof_autostart(lua_State *L);

#endif
