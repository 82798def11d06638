/* cg_lua_write.c: the writer's binding. */
#ifndef CG_LUA_WRITE_H
#define CG_LUA_WRITE_H

#include "cg_binding.h"

/* core.write_file_atomic into the module table at module, write_profile
 * and write_string into the internal table at internal. */
CG_HIDDEN void cgl_write_register(lua_State *L, int module, int internal);

#endif
