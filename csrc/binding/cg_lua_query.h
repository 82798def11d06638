/* cg_lua_query.c: the Lua layer's whole-profile arrays. */
#ifndef CG_LUA_QUERY_H
#define CG_LUA_QUERY_H

#include "cg_binding.h"

CG_HIDDEN int cgl_func_ab(lua_State *L);
CG_HIDDEN int cgl_profile_ab_all(lua_State *L);
CG_HIDDEN int cgl_profile_components(lua_State *L);
CG_HIDDEN int cgl_profile_self_all(lua_State *L);
CG_HIDDEN int cgl_profile_function(lua_State *L);
CG_HIDDEN int cgl_profile_file_costs(lua_State *L);
CG_HIDDEN int cgl_filelines_gc(lua_State *L);
CG_HIDDEN int cgl_profile_annotate(lua_State *L);
#endif
