/* cg_lua_func.c: functions and calls. */
#ifndef CG_LUA_FUNC_H
#define CG_LUA_FUNC_H

#include "cg_binding.h"

CG_HIDDEN int cgl_profile_functions(lua_State *L);
CG_HIDDEN int cgl_profile_calls(lua_State *L);
CG_HIDDEN const CgFunc *cgl_check_func(lua_State *L, int idx, CgProfile **PP);
CG_HIDDEN int cgl_func_self(lua_State *L);
CG_HIDDEN int cgl_func_fields(lua_State *L);
CG_HIDDEN int cgl_func_tostring(lua_State *L);
CG_HIDDEN int cgl_func_calls(lua_State *L);
CG_HIDDEN int cgl_func_callers(lua_State *L);
CG_HIDDEN int cgl_call_fields(lua_State *L);
CG_HIDDEN int cgl_call_cost(lua_State *L);
CG_HIDDEN int cgl_call_tostring(lua_State *L);
CG_HIDDEN int cgl_call_eq(lua_State *L);
/* Counts are unsigned: an integer up to 2^63-1, a float above (and its
 * exact decimal text for messages). */
CG_HIDDEN void cgl_push_count(lua_State *L, uint64_t n);
CG_HIDDEN void cgl_push_count_text(lua_State *L, uint64_t n);
#endif
