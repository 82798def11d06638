/* cg_lua_proc.c: a command run under a subreaper that keeps its children. */
#ifndef CG_LUA_PROC_H
#define CG_LUA_PROC_H

#include "cg_binding.h"

CG_HIDDEN int cgl_proc_supervise(lua_State *L);

#endif
