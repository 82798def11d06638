/* The standard library's names of C functions (cg_prof_names.c): what
 * core.prof_std_name answers, without a Lua table per state. */
#ifndef CG_PROF_NAMES_H
#define CG_PROF_NAMES_H

#include "cg_common.h"

#include "lua.h"

/* The standard name of the C function f (its _G name, or lib.name), or
 * NULL: f is no C function of the standard library. Taken once per
 * process, at the first call. */
CG_HIDDEN const char *cg_prof_std_name_of(lua_CFunction f);

#endif
