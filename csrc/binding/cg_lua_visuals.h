/* cg_lua_visuals.c: gzip (whole or streamed), the estimated stacks (pictures and exports). */
#ifndef CG_LUA_VISUALS_H
#define CG_LUA_VISUALS_H

#include "cg_binding.h"

CG_HIDDEN int cgl_gzip_stream(lua_State *L);
CG_HIDDEN int cgl_profile_estimate(lua_State *L);
CG_HIDDEN int cgl_profile_in_calls(lua_State *L);
CG_HIDDEN int cgl_best_caller(lua_State *L);
CG_HIDDEN int cgl_folded_tree(lua_State *L);
CG_HIDDEN int cgl_flame_frames(lua_State *L);

#endif
