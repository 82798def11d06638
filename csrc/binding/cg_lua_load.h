/* cg_lua_load.c: load, parse, files. */
#ifndef CG_LUA_LOAD_H
#define CG_LUA_LOAD_H

#include "cg_binding.h"

CG_HIDDEN int cgl_module_load(lua_State *L);
CG_HIDDEN int cgl_filelist_gc(lua_State *L);
CG_HIDDEN int cgl_module_files(lua_State *L);
CG_HIDDEN int cgl_module_parse(lua_State *L);
#endif
