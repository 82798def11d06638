/* cg_lua_write.c: the writer's binding. */
#ifndef CG_LUA_WRITE_H
#define CG_LUA_WRITE_H

#include "cg_lua.h"
#include "cg_write.h"

/* core.write_file_atomic into the module table at module, write_profile
 * and write_string into the internal table at internal. */
CG_HIDDEN void cgl_write_register(lua_State *L, int module, int internal);

/* What core.write_file_atomic does for text that fill(w, ud) emits into
 * the writer w (an fd target, flushed after fill): the whole to path
 * atomically, under the same SIGXFSZ guard, with the same results pushed
 * (true, or nil, "path: reason", kind). fill must not raise (no Lua call
 * that can fail): the temporary file would stay. Returns the number of
 * results. */
CG_HIDDEN int cgl_write_atomic_with(lua_State *L, const char *path,
                                    void (*fill)(CgWriter *w, void *ud),
                                    void *ud);

#endif
