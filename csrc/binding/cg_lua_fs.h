/* cg_lua_fs.c: a lock file held by a userdata, an append in one write. */
#ifndef CG_LUA_FS_H
#define CG_LUA_FS_H

#include "cg_binding.h"

CG_HIDDEN int cgl_fs_lock(lua_State *L);
CG_HIDDEN int cgl_fs_append(lua_State *L);
CG_HIDDEN int cgl_fs_digest_line(lua_State *L);

#endif
