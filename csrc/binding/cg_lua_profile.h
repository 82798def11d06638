/* cg_lua_profile.c: profile fields, parts, finding a function. */
#ifndef CG_LUA_PROFILE_H
#define CG_LUA_PROFILE_H

#include "cg_binding.h"

CG_HIDDEN int cgl_profile_fields(lua_State *L);
CG_HIDDEN int cgl_profile_tostring(lua_State *L);
CG_HIDDEN int cgl_profile_warnings(lua_State *L);
CG_HIDDEN int cgl_warning_kinds(lua_State *L);
CG_HIDDEN int cgl_profile_memory(lua_State *L);
CG_HIDDEN int cgl_profile_load_stats(lua_State *L);
CG_HIDDEN int cgl_vector_paths(lua_State *L);
CG_HIDDEN int cgl_profile_parts(lua_State *L);
/* Pushes part i (0-based) of the profile at pidx. */
CG_HIDDEN void cgl_push_part(lua_State *L, int pidx, uint32_t i);
CG_HIDDEN uint32_t cgl_check_part(lua_State *L, int arg, int pidx_want,
                                  const CgProfile **P);
CG_HIDDEN int cgl_part_totals(lua_State *L);
CG_HIDDEN int cgl_part_tostring(lua_State *L);
CG_HIDDEN int cgl_profile_func(lua_State *L);
#endif
