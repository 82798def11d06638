/* The binding of the pictures and exports (lua/callgrind/pprof.lua):
 * gzip compression of a string. */
#include "cg_lua.h"
#include "cg_deflate.h"

/* internal.gzip(s) -> the gzip-compressed string; raises on failure. The
 * output buffer is a userdata, so an error leaks nothing; zlib's own state
 * lives only inside cg_gzip, which calls no Lua. */
int cgl_gzip(lua_State *L)
{
    size_t n, len = 0;
    const char *s = luaL_checklstring(L, 1, &n);
    size_t cap = cg_gzip_bound(n);
    unsigned char *buf = lua_newuserdatauv(L, cap, 0);
    if (cg_gzip((const unsigned char *)s, n, buf, cap, &len) != 0)
        return luaL_error(L, "gzip: zlib failed (out of memory)");
    lua_pushlstring(L, (const char *)buf, len);
    return 1;
}
