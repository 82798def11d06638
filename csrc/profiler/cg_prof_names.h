/* The standard library's names of C functions (cg_prof_names.c), what
 * core.prof_std_name answers, kept in C for the process. Layer 1 of
 * profiler/ (spec/layout_c_spec.lua): it uses nothing of the profiler. */
#ifndef CG_PROF_NAMES_H
#define CG_PROF_NAMES_H

#include "cg_common.h"

#include "lua.h"

/* The standard name of the C function f (its _G name, or lib.name), or
 * NULL: f is no C function of the standard library. Taken once per
 * process from fresh copies of the libraries, one at a time while f is
 * not among those named (table, math, os, coroutine, utf8 and debug in L
 * itself, their tables dropped; the others in a new Lua state): first
 * the library whose table in L's package.loaded
 * holds f (L: the profiled state, read raw; NULL: no guess), looked for
 * at key first (the name f is called by, a hint; NULL: none), then the
 * common ones first. */
CG_HIDDEN const char *cg_prof_std_name_of(lua_State *L, lua_CFunction f,
                                          const char *key);

/* Closes the state of cg_prof_std_name_of (the names stay: a later call
 * opens a new state for the libraries not yet named). */
CG_HIDDEN void cg_prof_std_names_done(void);

#endif
