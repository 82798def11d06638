/* SIGINT and SIGTERM while a whole run is profiled (until_exit): the
 * profile is written, and the run ends as it would without the profiler.
 * Private to profiler/: cg_prof.c arms and disarms, the functions'
 * records (cg_prof_fold.c) put the handlers back where lua.c took them.
 * Layer 1 of profiler/ (spec/layout_c_spec.lua): it uses nothing of the
 * profiler. */
#ifndef CG_PROF_SIGNAL_H
#define CG_PROF_SIGNAL_H

#include "cg_common.h"

#include "lua.h"

/* Arms SIGINT and SIGTERM (each unless ignored) for the state of L, whose
 * lua_State.hookcount is at hc_off (-1: not known); the function on top
 * of the stack (popped) is what a SIGTERM calls, with "SIGTERM", to write
 * the profile before the signal ends the process. One state at a time:
 * returns 0 when another state of the process has them. */
CG_HIDDEN int cg_prof_sig_arm(lua_State *L, int hc_off);
/* Our handlers back where another took their place (lua.c's docall sets
 * its own SIGINT handler before each chunk it runs): at a main chunk's
 * call. Nothing when not armed. */
CG_HIDDEN void cg_prof_sig_rearm(void);
/* The handlers the state of L replaced back (where ours still are), our
 * stand-in hook removed; nothing when that state has not armed them. */
CG_HIDDEN void cg_prof_sig_disarm(lua_State *L);

#endif
