/* The standard library's names of C functions, for the profile written at
 * exit (cg_prof_exit.c) and core.prof_std_name (cg_prof.c, the Lua
 * writer's): read from a fresh copy of each library, so that nothing the
 * program loads or changes renames them. The names go into a C table
 * kept for the process (a C function's address is the same in every Lua
 * state of the process), a library at a time, opened only while a C
 * function of the profile is not named yet: no Lua string of the profiled
 * state is made for names nobody asks for. The libraries whose opening
 * makes their table and nothing else (table, math, os, coroutine, utf8,
 * debug) are opened in the profiled state itself, their new table
 * dropped at once; the others (_G, string, io, package: they set
 * globals, a metatable or registry entries) in a new Lua state, made at
 * the first of them. Which library to open first is a guess read from
 * the profiled state: the one whose table in its package.loaded holds
 * the function now (raw reads, nothing called), under the name it was
 * called by first. The guess only orders the opening: the name always
 * comes from the fresh library (a wrong guess costs one library opened
 * in vain). */
#include "cg_prof_names.h"

#include <string.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

#define MAX_NAMES 512
#define NAME_LEN 64

typedef struct StdName {
    lua_CFunction f;
    char name[NAME_LEN];
} StdName;

/* the names, taken at the first lookup (n < 0: not yet) */
static StdName names[MAX_NAMES];
static int n_names = -1;

/* Whether s is a Lua name (letters, digits, _; not a digit first). */
static int is_identifier(const char *s)
{
    const char *p = s;
    if (*p == '\0' || (*p >= '0' && *p <= '9'))
        return 0;
    for (; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
              || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return 1;
}

/* Names the C functions of the table at -1 of S: prefix.key (key alone
 * without a prefix). A function with two names keeps the one without a
 * prefix, else the shorter, else the first in byte order (prof_std_name's
 * rule). */
static void name_fields(lua_State *S, const char *prefix)
{
    lua_pushnil(S);
    while (lua_next(S, -2)) {
        lua_CFunction f;
        const char *key;
        if (lua_type(S, -2) == LUA_TSTRING && lua_iscfunction(S, -1)
            && (f = lua_tocfunction(S, -1)) != NULL
            && is_identifier(key = lua_tostring(S, -2))) {
            char name[NAME_LEN];
            size_t len = (prefix != NULL ? strlen(prefix) + 1 : 0) + strlen(key);
            int i;
            if (len < NAME_LEN) {
                if (prefix != NULL) {
                    strcpy(name, prefix);
                    strcat(name, ".");
                    strcat(name, key);
                } else {
                    strcpy(name, key);
                }
                for (i = 0; i < n_names && names[i].f != f; i++)
                    ;
                if (i == n_names && n_names < MAX_NAMES) {
                    names[n_names].f = f;
                    strcpy(names[n_names++].name, name);
                } else if (i < n_names) {
                    const char *old = names[i].name;
                    size_t oldlen = strlen(old);
                    if (strchr(old, '.') != NULL
                        && (prefix == NULL || len < oldlen
                            || (len == oldlen && strcmp(name, old) < 0)))
                        strcpy(names[i].name, name);
                }
            }
        }
        lua_pop(S, 1);
    }
}

/* The libraries in the order they are opened while a name is missing:
 * the common first (no C function of one is another's: a lib's names are
 * complete once it is opened, so the answers are those of a state with
 * every library) */
static const struct {
    const char *name;
    lua_CFunction open;
    /* pure: its luaopen makes its table and nothing else (no global,
     * registry entry or metatable set), so it can be opened in the
     * profiled state itself, without a new one: the table is dropped */
    int pure;
} libs[] = {
    {LUA_GNAME, luaopen_base, 0}, {LUA_STRLIBNAME, luaopen_string, 0},
    {LUA_TABLIBNAME, luaopen_table, 1}, {LUA_MATHLIBNAME, luaopen_math, 1},
    {LUA_OSLIBNAME, luaopen_os, 1}, {LUA_IOLIBNAME, luaopen_io, 0},
    {LUA_COLIBNAME, luaopen_coroutine, 1}, {LUA_UTF8LIBNAME, luaopen_utf8, 1},
    {LUA_DBLIBNAME, luaopen_debug, 1}, {LUA_LOADLIBNAME, luaopen_package, 0},
    {NULL, NULL, 0}
};

/* the state the libraries are opened in (until cg_prof_std_names_done),
 * and which are opened (and named) */
static lua_State *S;
static unsigned char opened[sizeof libs / sizeof libs[0]];

/* Opens library i and names its functions: a pure one in L (the
 * profiled state, when not NULL: its luaopen called as a C function, no
 * call the profiler could see), the others in S. 0 when it cannot (no
 * state) or is opened already. */
static int open_lib(lua_State *L, int i)
{
    if (n_names < 0)
        n_names = 0;
    if (opened[i])
        return 0;
    if (libs[i].pure && L != NULL && lua_checkstack(L, 8)) {
        int top = lua_gettop(L);
        opened[i] = 1;
        libs[i].open(L);
        name_fields(L, libs[i].name);
        lua_settop(L, top);
        return 1;
    }
    if (S == NULL && (S = luaL_newstate()) == NULL)
        return 0;
    opened[i] = 1;
    luaL_requiref(S, libs[i].name, libs[i].open, 1);
    if (libs[i].open == luaopen_base) {
        name_fields(S, NULL);
    } else {
        name_fields(S, libs[i].name);
        if (libs[i].open == luaopen_package) {
            /* require: a global */
            lua_pushglobaltable(S);
            name_fields(S, NULL);
            lua_pop(S, 1);
        }
    }
    lua_pop(S, 1);
    return 1;
}

/* Whether the table at -1 of L has a field (raw) whose value is the C
 * function f. */
static int holds(lua_State *L, lua_CFunction f)
{
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_iscfunction(L, -1) && lua_tocfunction(L, -1) == f) {
            lua_pop(L, 2);
            return 1;
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* Whether the table at -1 of L has the C function f at key (raw). */
static int holds_at(lua_State *L, lua_CFunction f, const char *key)
{
    int r;
    lua_pushstring(L, key);
    r = lua_rawget(L, -2) == LUA_TFUNCTION && lua_tocfunction(L, -1) == f;
    lua_pop(L, 1);
    return r;
}

/* The library not opened yet whose table in L's package.loaded (raw)
 * holds f now (_G, the largest, looked at last), or -1: at key first
 * (the name f was called by, or NULL), then in all their fields. */
static int guess(lua_State *L, lua_CFunction f, const char *key)
{
    int i, pass, found = -1, n = (int)(sizeof libs / sizeof libs[0]) - 1;
    if (L == NULL || !lua_checkstack(L, 4))
        return -1;
    lua_pushliteral(L, LUA_LOADED_TABLE);
    if (lua_rawget(L, LUA_REGISTRYINDEX) != LUA_TTABLE) {
        lua_pop(L, 1);
        return -1;
    }
    for (pass = key != NULL ? 0 : 1; pass < 2 && found < 0; pass++) {
        for (i = 1; i <= n && found < 0; i++) {
            int k = i % n;      /* _G (0) last */
            if (opened[k])
                continue;
            lua_pushstring(L, libs[k].name);
            if (lua_rawget(L, -2) == LUA_TTABLE
                && (pass == 0 ? holds_at(L, f, key) : holds(L, f)))
                found = k;
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    return found;
}

/* The name taken of f, or NULL. */
static const char *named(lua_CFunction f)
{
    int i;
    for (i = 0; i < n_names; i++)
        if (names[i].f == f)
            return names[i].name;
    return NULL;
}

const char *cg_prof_std_name_of(lua_State *L, lua_CFunction f,
                                const char *key)
{
    const char *name;
    int i, g;
    if (f == NULL)
        return NULL;
    if ((name = named(f)) != NULL)
        return name;
    /* the guessed library first: no C function of one library is
     * another's, so its names of f are all of them */
    g = guess(L, f, key);
    if (g >= 0 && open_lib(L, g) && (name = named(f)) != NULL)
        return name;
    for (i = 0; libs[i].name != NULL; i++)
        if (open_lib(L, i) && (name = named(f)) != NULL)
            return name;
    return NULL;
}

void cg_prof_std_names_done(void)
{
    if (S != NULL)
        lua_close(S);
    S = NULL;
}
