/* cg_lua_lines.c: cost lines and jumps. */
#ifndef CG_LUA_LINES_H
#define CG_LUA_LINES_H

#include "cg_binding.h"

CG_HIDDEN int cgl_profile_ulines(lua_State *L);
CG_HIDDEN int cgl_func_ulines(lua_State *L);
CG_HIDDEN int cgl_profile_first_lines(lua_State *L);
CG_HIDDEN int cgl_profile_lines(lua_State *L);
CG_HIDDEN int cgl_profile_jumps(lua_State *L);
CG_HIDDEN int cgl_func_lines(lua_State *L);
CG_HIDDEN int cgl_func_jumps(lua_State *L);
CG_HIDDEN int cgl_line_fields(lua_State *L);
CG_HIDDEN int cgl_line_cost(lua_State *L);
CG_HIDDEN int cgl_line_tostring(lua_State *L);
CG_HIDDEN int cgl_jump_fields(lua_State *L);
CG_HIDDEN int cgl_jump_tostring(lua_State *L);
#endif
