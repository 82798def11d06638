/* make bench: the floor of any line-level Lua profiler. `lua5.4
 * -lempty_hook script.lua` runs the script with a C debug hook on calls,
 * returns and lines that does nothing: what the interpreter's own hook
 * dispatch costs. */
#include "lua.h"

static void empty_hook(lua_State *L, lua_Debug *ar)
{
    (void)L;
    (void)ar;
}

int luaopen_empty_hook(lua_State *L);

int luaopen_empty_hook(lua_State *L)
{
    lua_sethook(L, empty_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE, 0);
    lua_pushboolean(L, 1);
    return 1;
}
