/* The standard library's names of C functions, for the profile written at
 * exit (cg_prof_exit.c) and core.prof_std_name (cg_prof.c, the Lua
 * writer's): read from a new Lua state with the standard library opened,
 * so that nothing the program loads or changes renames them. The names go
 * into a C table kept for the process (a C function's address
 * is the same in every Lua state of the process), a library at a time,
 * opened in a new state only while a C function of the profile is not
 * named yet: no Lua string or table of the profiled state is made for
 * names nobody asks for. */
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
} libs[] = {
    {LUA_GNAME, luaopen_base}, {LUA_STRLIBNAME, luaopen_string},
    {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
    {LUA_OSLIBNAME, luaopen_os}, {LUA_IOLIBNAME, luaopen_io},
    {LUA_COLIBNAME, luaopen_coroutine}, {LUA_UTF8LIBNAME, luaopen_utf8},
    {LUA_DBLIBNAME, luaopen_debug}, {LUA_LOADLIBNAME, luaopen_package},
    {NULL, NULL}
};

/* the state the libraries are opened in (until cg_prof_std_names_done),
 * and how many are named */
static lua_State *S;
static int n_open;

/* Opens the next library in S and names its functions: 0 when all are. */
static int open_next(void)
{
    if (libs[n_open].name == NULL)
        return 0;
    if (n_names < 0)
        n_names = 0;
    if (S == NULL && (S = luaL_newstate()) == NULL) {
        n_open = (int)(sizeof libs / sizeof libs[0]) - 1;
        return 0;
    }
    luaL_requiref(S, libs[n_open].name, libs[n_open].open, 1);
    if (libs[n_open].open == luaopen_base) {
        name_fields(S, NULL);
    } else {
        name_fields(S, libs[n_open].name);
        if (libs[n_open].open == luaopen_package) {
            /* require: a global */
            lua_pushglobaltable(S);
            name_fields(S, NULL);
            lua_pop(S, 1);
        }
    }
    lua_pop(S, 1);
    n_open++;
    return 1;
}

const char *cg_prof_std_name_of(lua_CFunction f)
{
    int i = 0;
    if (f == NULL)
        return NULL;
    do {
        for (; i < (n_names > 0 ? n_names : 0); i++)
            if (names[i].f == f)
                return names[i].name;
        i = 0;          /* (an open may rename one seen: all again) */
    } while (open_next());
    return NULL;
}

void cg_prof_std_names_done(void)
{
    if (S != NULL)
        lua_close(S);
    S = NULL;
}
