/* The standard library's names of C functions for the profile written at
 * exit (cg_prof_exit.c): the answers of core.prof_std_name (cg_prof.c),
 * which reads them from a new Lua state with the standard library opened,
 * so that nothing the program loads or changes renames them. Here the
 * names are taken once per process into a C table (a C function's
 * address is the same in every Lua state of the process), only when a
 * profile has a C function: no Lua string or table of the profiled
 * state is made for the names that are not asked for. */
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

static void take_names(void)
{
    static const char *const libs[] = {"coroutine", "debug", "io", "math",
                                       "os", "package", "string", "table",
                                       "utf8", NULL};
    lua_State *S = luaL_newstate();
    int i;
    n_names = 0;
    if (S == NULL)
        return;
    luaL_openlibs(S);
    lua_pushglobaltable(S);
    name_fields(S, NULL);
    lua_pop(S, 1);
    for (i = 0; libs[i] != NULL; i++) {
        if (lua_getglobal(S, libs[i]) == LUA_TTABLE)
            name_fields(S, libs[i]);
        lua_pop(S, 1);
    }
    lua_close(S);
}

const char *cg_prof_std_name_of(lua_CFunction f)
{
    int i;
    if (f == NULL)
        return NULL;
    if (n_names < 0)
        take_names();
    for (i = 0; i < n_names; i++)
        if (names[i].f == f)
            return names[i].name;
    return NULL;
}
