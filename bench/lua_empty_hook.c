/* make bench: the floor of any Lua profiler of this kind. `lua5.4
 * -lempty_hook script.lua` runs the script with a C debug hook on calls,
 * returns and lines that does nothing: what the interpreter's own hook
 * dispatch costs. With EMPTY_HOOK_LINES=0 the floor of function level: a
 * hook on calls and returns, and a count hook of 2^31 - 1 (what keeps
 * the interpreter's instruction counter counting). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lua.h"

static void empty_hook(lua_State *L, lua_Debug *ar)
{
    (void)L;
    (void)ar;
}

int luaopen_empty_hook(lua_State *L);

int luaopen_empty_hook(lua_State *L)
{
    const char *lines = getenv("EMPTY_HOOK_LINES");
    if (lines != NULL && strcmp(lines, "0") == 0)
        lua_sethook(L, empty_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, INT_MAX);
    else
        lua_sethook(L, empty_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE, 0);
    lua_pushboolean(L, 1);
    return 1;
}
