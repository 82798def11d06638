/* The names of a profile's functions as callgrind.profiler.writer gives
 * them (its describe: loaded_names, pick, module_finder, declared_name,
 * chunkid, the standard names), made through the Lua API for the profile
 * written at exit (cg_prof_exit.c); the Lua writer is the reference
 * (spec/profiler_exit_writer_spec.lua). */
#include "cg_prof_describe.h"
#include "cg_prof_names.h"

#include <ctype.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"

/* Its address keys the registry's core module table. */
static const char core_key = 'c';

void cg_prof_core_keep(lua_State *L)
{
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &core_key);
}

int cg_prof_core_kept(lua_State *L)
{
    int t = lua_rawgetp(L, LUA_REGISTRYINDEX, &core_key);
    lua_pop(L, 1);
    return t == LUA_TTABLE;
}

/* Pushes core[name]. */
void cg_prof_core_get(lua_State *L, const char *name)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &core_key);
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
}

static const char *const keywords[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for",
    "function", "goto", "if", "in", "local", "nil", "not", "or", "repeat",
    "return", "then", "true", "until", "while", NULL
};

static int is_keyword(const char *s, size_t len)
{
    int i;
    for (i = 0; keywords[i] != NULL; i++)
        if (strlen(keywords[i]) == len && memcmp(keywords[i], s, len) == 0)
            return 1;
    return 0;
}

/* ^[%a_][%w_]*$ */
static int is_ident(const char *s, size_t len)
{
    size_t i;
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (i = 1; i < len; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return 1;
}

/* The writer's is_name: has a letter, digit or _, and is no keyword. */
static int is_name(const char *s, size_t len)
{
    size_t i;
    if (s == NULL)
        return 0;
    for (i = 0; i < len; i++)
        if (isalnum((unsigned char)s[i]) || s[i] == '_')
            return !is_keyword(s, len);
    return 0;
}

/* Anchors the string on top (popped) and returns it. */
static Str anchor(W *w)
{
    Str r;
    r.s = lua_tolstring(w->L, -1, &r.len);
    lua_rawseti(w->L, w->anchor, (lua_Integer)lua_rawlen(w->L, w->anchor) + 1);
    return r;
}

static int str_eq(Str a, Str b)
{
    return a.s != NULL && b.s != NULL && a.len == b.len
           && memcmp(a.s, b.s, a.len) == 0;
}

/* Pushes the global package table's field (nil when package is none). */
int cg_prof_package_field(lua_State *L, const char *k)
{
    if (lua_getglobal(L, "package") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_pushnil(L);
        return LUA_TNIL;
    }
    lua_getfield(L, -1, k);
    lua_remove(L, -2);
    return lua_type(L, -1);
}

/* package.searchpath(name, path) pushed (its first result). */
static void searchpath(lua_State *L, int name, const char *pathfield)
{
    name = lua_absindex(L, name);
    cg_prof_package_field(L, "searchpath");
    lua_pushvalue(L, name);
    cg_prof_package_field(L, pathfield);
    lua_call(L, 2, 1);
}

/* What `each` calls per pair: the key at -2, the value at -1 (to leave
 * so). */
typedef void (*EachFn)(W *w, void *ud);

/* The pairs of the table at t as the writer's `pairs` gives them: through
 * its __pairs metamethod when it has one (an error there is the
 * writer's), else raw. */
static void each(W *w, int t, EachFn f, void *ud)
{
    lua_State *L = w->L;
    t = lua_absindex(L, t);
    if (luaL_getmetafield(L, t, "__pairs") == LUA_TNIL) {
        lua_pushnil(L);
        while (lua_next(L, t)) {
            f(w, ud);
            lua_pop(L, 1);
        }
        return;
    }
    lua_pushvalue(L, t);
    lua_call(L, 1, 3);
    for (;;) {
        lua_pushvalue(L, -3);
        lua_pushvalue(L, -3);
        lua_pushvalue(L, -3);
        lua_call(L, 2, 2);
        if (lua_isnil(L, -2)) {
            lua_pop(L, 2);
            break;
        }
        lua_pushvalue(L, -2);
        lua_replace(L, -4);
        f(w, ud);
        lua_pop(L, 2);
    }
    lua_pop(L, 3);
}

/* A field of a module (the modname at *(int *)ud): one more name of its
 * function when the set (w->set) has it. */
static void name_field(W *w, void *ud)
{
    lua_State *L = w->L;
    int modname = *(int *)ud;
    size_t klen;
    const char *k;
    lua_pushvalue(L, -1);
    if (lua_rawget(L, w->set) != LUA_TNIL && lua_type(L, -3) == LUA_TSTRING
        && (k = lua_tolstring(L, -3, &klen), is_ident(k, klen))) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, w->loaded) == LUA_TNIL) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_rawset(L, w->loaded);
        }
        lua_createtable(L, 2, 0);
        if (strcmp(lua_tostring(L, modname), "_G") == 0) {
            lua_pushvalue(L, -4);
        } else {
            lua_pushvalue(L, modname);
            lua_pushliteral(L, ".");
            lua_pushvalue(L, -6);
            lua_concat(L, 3);
        }
        lua_rawseti(L, -2, 1);
        lua_pushvalue(L, modname);
        lua_rawseti(L, -2, 2);
        lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    }
    lua_pop(L, 1);
}

static void skip_field(W *w, void *ud)
{
    (void)w;
    (void)ud;
}

/* A module of package.loaded: its fields named (with an empty set, only
 * those of a table with __pairs are gone through, for what they do). */
static void name_module(W *w, void *ud)
{
    lua_State *L = w->L;
    (void)ud;
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
        int modname = lua_absindex(L, -2);
        if (w->nset > 0) {
            each(w, -1, name_field, &modname);
        } else if (luaL_getmetafield(L, -1, "__pairs") != LUA_TNIL) {
            lua_pop(L, 1);
            each(w, -1, skip_field, NULL);
        }
    }
}

/* loaded_names: w->loaded = function -> { {"module.field", module}, ... }
 * for the functions of the set w->set. */
static void loaded_names(W *w)
{
    lua_State *L = w->L;
    lua_newtable(L);
    w->loaded = lua_gettop(L);
    if (cg_prof_package_field(L, "loaded") == LUA_TTABLE)
        each(w, -1, name_module, NULL);
    lua_pop(L, 1);
}

/* pick's filters */
enum { MINE_NONE, MINE_CMOD, MINE_OWN };

static int is_c_module(W *w, int mod)
{
    lua_State *L = w->L;
    int r;
    mod = lua_absindex(L, mod);
    lua_pushvalue(L, mod);
    if (lua_rawget(L, w->cmod) == LUA_TNIL) {
        lua_pop(L, 1);
        if (cg_prof_package_field(L, "cpath") == LUA_TSTRING) {
            lua_pop(L, 1);
            searchpath(L, mod, "cpath");
            lua_pushboolean(L, !lua_isnil(L, -1));
            lua_remove(L, -2);
        } else {
            lua_pop(L, 1);
            lua_pushboolean(L, 0);
        }
        lua_pushvalue(L, mod);
        lua_pushvalue(L, -2);
        lua_rawset(L, w->cmod);
    }
    r = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return r;
}

/* pick(cands at idx, mine): the shortest, then first in byte order, of
 * the names whose module passes mine (all when none does). Pushes it,
 * or nil. */
static void pick(W *w, int cands, int mine, Str own)
{
    lua_State *L = w->L;
    lua_Integer i, n = (lua_Integer)lua_rawlen(L, cands);
    int pass, best = 0;
    lua_pushnil(L);
    best = lua_gettop(L);
    for (pass = mine != MINE_NONE ? 1 : 2; pass <= 2; pass++) {
        for (i = 1; i <= n; i++) {
            int ok = pass == 2;
            lua_rawgeti(L, cands, i);
            lua_rawgeti(L, -1, 1);
            lua_rawgeti(L, -2, 2);
            if (!ok) {
                if (mine == MINE_CMOD) {
                    ok = is_c_module(w, -1);
                } else {
                    Str m;
                    m.s = lua_tolstring(L, -1, &m.len);
                    ok = str_eq(m, own);
                }
            }
            if (ok) {
                size_t len = lua_rawlen(L, -2);
                if (lua_isnil(L, best) || len < lua_rawlen(L, best)
                    || (len == lua_rawlen(L, best) && lua_compare(L, -2, best, LUA_OPLT))) {
                    lua_pushvalue(L, -2);
                    lua_replace(L, best);
                }
            }
            lua_pop(L, 3);
        }
        if (!lua_isnil(L, best))
            return;
    }
}

/* module_finder's index: the loaded names by the text "?" stands for,
 * and the templates of package.path with one "?" (none: every name). */
static void index_name(W *w, void *ud)
{
    lua_State *L = w->L;
    (void)ud;
    if (lua_type(L, -2) == LUA_TSTRING) {
        size_t len, i;
        const char *name = lua_tolstring(L, -2, &len);
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (i = 0; i < len; i++)
            luaL_addchar(&b, name[i] == '.' ? '/' : name[i]);
        luaL_pushresult(&b);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, w->by_sub) == LUA_TNIL) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_rawset(L, w->by_sub);
        }
        lua_pushvalue(L, -4);
        lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        lua_pop(L, 2);
    }
}

static void finder_names(W *w)
{
    lua_State *L = w->L;
    w->named = 1;
    if (cg_prof_package_field(L, "loaded") == LUA_TTABLE)
        each(w, -1, index_name, NULL);
    lua_pop(L, 1);
}

/* package.path's templates with one "?" each: where their text before
 * and after the "?" lies in the path (anchored), no Lua string made. */
typedef struct Templates {
    const char *path;
    size_t n;
    struct {
        size_t pre, pre_len, post, post_len;
    } t[1];
} Templates;

/* (the templates first: the names only when a template fits the file)
 * w->templates: a Templates userdata, or nil when a template has two
 * "?" (every loaded name is then tried) */
static void finder_index(W *w)
{
    lua_State *L = w->L;
    const char *p, *path;
    size_t n = 0, plen;
    Templates *tp;
    w->indexed = 1;
    cg_prof_package_field(L, "path");
    if (lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 1);
        lua_pushliteral(L, "");
    }
    path = anchor(w).s;
    plen = strlen(path);
    for (p = path; *p != '\0'; p++)
        n += *p == ';';
    tp = (Templates *)lua_newuserdatauv(L, sizeof *tp + n * sizeof tp->t[0], 0);
    tp->path = path;
    tp->n = 0;
    for (p = path; p < path + plen;) {
        const char *end = strchr(p, ';'), *q, *q2;
        size_t len;
        if (end == NULL)
            end = path + plen;
        len = (size_t)(end - p);
        if (len > 0) {
            q = memchr(p, '?', len);
            q2 = q != NULL ? memchr(q + 1, '?', (size_t)(end - q - 1)) : NULL;
            if (q != NULL && q2 == NULL) {
                tp->t[tp->n].pre = (size_t)(p - path);
                tp->t[tp->n].pre_len = (size_t)(q - p);
                tp->t[tp->n].post = (size_t)(q + 1 - path);
                tp->t[tp->n].post_len = (size_t)(end - q - 1);
                tp->n++;
            } else if (q != NULL) {
                lua_pop(L, 1);
                lua_pushnil(L);
                break;
            }
        }
        p = end + 1;
    }
    lua_replace(L, w->templates);
}

/* Considers the names of the array on top as the module of the file at
 * idx: best (at index best) becomes the first by name that
 * package.searchpath finds there. Pops the array. */
static void finder_try(W *w, int file, int best)
{
    lua_State *L = w->L;
    lua_Integer i, n = (lua_Integer)lua_rawlen(L, -1);
    for (i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        if (lua_toboolean(L, best) == 0 || lua_compare(L, -1, best, LUA_OPLT)) {
            searchpath(L, -1, "path");
            if (lua_rawequal(L, -1, file)) {
                lua_pushvalue(L, -2);
                lua_replace(L, best);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* module_of(file): the module a file was required as, pushed, or nil. */
static void module_of(W *w, Str f)
{
    lua_State *L = w->L;
    int file, best;
    lua_pushlstring(L, f.s, f.len);
    file = lua_gettop(L);
    lua_pushvalue(L, file);
    lua_rawget(L, w->by_file);
    cg_prof_package_field(L, "path");
    if (!lua_isnil(L, -2) || lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 1);
        if (!lua_toboolean(L, -1)) {
            lua_pop(L, 1);
            lua_pushnil(L);
        }
        lua_remove(L, file);
        return;
    }
    lua_pop(L, 2);
    if (!w->indexed)
        finder_index(w);
    lua_pushboolean(L, 0);
    best = lua_gettop(L);
    if (lua_type(L, w->templates) == LUA_TUSERDATA) {
        const Templates *tp = (const Templates *)lua_touserdata(L, w->templates);
        size_t i;
        for (i = 0; i < tp->n; i++) {
            size_t plen = tp->t[i].pre_len, qlen = tp->t[i].post_len;
            const char *pre = tp->path + tp->t[i].pre;
            const char *post = tp->path + tp->t[i].post;
            if (f.len >= plen + qlen && memcmp(f.s, pre, plen) == 0
                && memcmp(f.s + f.len - qlen, post, qlen) == 0) {
                if (!w->named)
                    finder_names(w);
                lua_pushlstring(L, f.s + plen, f.len - plen - qlen);
                if (lua_rawget(L, w->by_sub) == LUA_TTABLE)
                    finder_try(w, file, best);
                else
                    lua_pop(L, 1);
            }
        }
    } else {
        if (!w->named)
            finder_names(w);
        lua_pushnil(L);
        while (lua_next(L, w->by_sub)) {
            lua_pushvalue(L, -1);
            finder_try(w, file, best);
            lua_pop(L, 1);
        }
    }
    lua_pushvalue(L, file);
    lua_pushvalue(L, best);
    lua_rawset(L, w->by_file);
    if (!lua_toboolean(L, best)) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
    lua_remove(L, file);
}

/* Lua's chunkid (LUA_IDSIZE 60), pushed: the writer's for a function
 * collected while profiling. */
static void push_chunkid(lua_State *L, const char *s, size_t len)
{
    if (s[0] == '=') {
        lua_pushlstring(L, s + 1, len - 1 < 59 ? len - 1 : 59);
    } else if (s[0] == '@') {
        if (len <= 60)
            lua_pushlstring(L, s + 1, len - 1);
        else {
            lua_pushliteral(L, "...");
            lua_pushlstring(L, s + len - 56, 56);
            lua_concat(L, 2);
        }
    } else {
        const char *nl = memchr(s, '\n', len);
        size_t n;
        if (nl == NULL && len < 45) {
            lua_pushfstring(L, "[string \"");
            lua_pushlstring(L, s, len);
            lua_pushliteral(L, "\"]");
            lua_concat(L, 3);
            return;
        }
        n = nl != NULL ? (size_t)(nl - s) : len;
        if (n > 45)
            n = 45;
        lua_pushliteral(L, "[string \"");
        lua_pushlstring(L, s, n);
        lua_pushliteral(L, "...\"]");
        lua_concat(L, 3);
    }
}

/* string.match(s at idx, pat) pushed (one capture). */
static void match(W *w, int s, const char *pat)
{
    lua_State *L = w->L;
    s = lua_absindex(L, s);
    lua_getfield(L, w->strlib, "match");
    lua_pushvalue(L, s);
    lua_pushstring(L, pat);
    lua_call(L, 2, 1);
}

/* The writer's declared_name of the line on top, pushed (or nil). */
static void declared_name(W *w, int line)
{
    lua_State *L = w->L;
    size_t len;
    const char *k;
    line = lua_absindex(L, line);
    match(w, line, "function%s+([%a_][%w_%.:]*)%s*%(");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        match(w, line, "([%a_][%w_%.]*)%s*=%s*function%s*%(");
    }
    if (!lua_isnil(L, -1) && (k = lua_tolstring(L, -1, &len), !is_keyword(k, len)))
        return;
    lua_pop(L, 1);
    match(w, line, "%[%s*\"([^\"]+)\"%s*%]%s*=%s*function%s*%(");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        match(w, line, "%[%s*'([^']+)'%s*%]%s*=%s*function%s*%(");
    }
    if (lua_isnil(L, -1))
        return;
    k = lua_tolstring(L, -1, &len);
    if (is_ident(k, len) && !is_keyword(k, len))
        return;
    lua_pushliteral(L, "[\"");
    lua_insert(L, -2);
    lua_pushliteral(L, "\"]");
    lua_concat(L, 3);
}

/* The text of line n of source (cached by source), pushed, or nil. */
static void source_line(W *w, int source, lua_Integer n)
{
    lua_State *L = w->L;
    source = lua_absindex(L, source);
    lua_pushvalue(L, source);
    if (lua_rawget(L, w->srccache) == LUA_TNIL) {
        lua_pop(L, 1);
        cg_prof_core_get(L, "prof_source_lines");
        lua_pushvalue(L, source);
        lua_pushvalue(L, source);
        lua_rawget(L, w->want);
        lua_call(L, 2, 1);
        lua_pushvalue(L, source);
        lua_pushvalue(L, -2);
        lua_rawset(L, w->srccache);
    }
    lua_rawgeti(L, -1, n);
    lua_remove(L, -2);
}

/* The last part of a path's length offset. */
static size_t base_off(Str f)
{
    size_t i = f.len;
    while (i > 0 && f.s[i - 1] != '/')
        i--;
    return i;
}

/* The part of decl after its last . or :, pushed as Str (not anchored:
 * within decl). */
static Str short_of(Str d)
{
    Str r;
    size_t i = d.len;
    r.s = NULL;
    r.len = 0;
    if (d.s == NULL)
        return r;
    while (i > 0 && d.s[i - 1] != '.' && d.s[i - 1] != ':')
        i--;
    if (i == d.len)
        return r;       /* ([^.:]+)$ needs one character */
    r.s = d.s + i;
    r.len = d.len - i;
    return r;
}

static int is_cfile(Str f)
{
    return f.len == 3 && memcmp(f.s, "[C]", 3) == 0;
}

/* Pushes file .. "\0" .. s. */
static void push_key(lua_State *L, Str file, Str s)
{
    lua_pushlstring(L, file.s, file.len);
    lua_pushlstring(L, "\0", 1);
    lua_pushlstring(L, s.s, s.len);
    lua_concat(L, 3);
}

static void name_group(W *w, int group)
{
    lua_State *L = w->L;
    lua_Integer i, n = (lua_Integer)lua_rawlen(L, group);
    Fn *owner = NULL;
    lua_rawgeti(L, group, 1);
    owner = &w->fns[lua_tointeger(L, -1)];
    lua_pop(L, 1);
    if (n > 1) {
        int none = 0;
        owner = NULL;
        for (i = 1; i <= n; i++) {
            Fn *fn;
            lua_rawgeti(L, group, i);
            fn = &w->fns[lua_tointeger(L, -1)];
            lua_pop(L, 1);
            if (fn->callname.s != NULL && str_eq(fn->callname, short_of(fn->decl)))
                owner = fn;
        }
        if (owner == NULL) {
            for (i = 1; i <= n && !none; i++) {
                Fn *fn;
                lua_rawgeti(L, group, i);
                fn = &w->fns[lua_tointeger(L, -1)];
                lua_pop(L, 1);
                if (owner == NULL || fn->last > owner->last)
                    owner = fn;
                else if (fn->last == owner->last) {
                    owner = NULL;
                    none = 1;
                }
            }
        }
    }
    for (i = 1; i <= n; i++) {
        Fn *fn;
        Str sh;
        lua_rawgeti(L, group, i);
        fn = &w->fns[lua_tointeger(L, -1)];
        lua_pop(L, 1);
        sh = short_of(fn->decl);
        if (fn == owner && fn->decl.s != NULL) {
            fn->name = fn->decl;
        } else if (is_name(fn->callname.s, fn->callname.len)
                   && (fn == owner || !str_eq(fn->callname, sh))) {
            fn->name = fn->callname;
        } else {
            size_t b = base_off(fn->file);
            lua_pushliteral(L, "anonymous@");
            lua_pushlstring(L, fn->file.s + b, fn->file.len - b);
            lua_pushfstring(L, ":%I", fn->line);
            lua_concat(L, 3);
            fn->name = anchor(w);
        }
    }
}

/* Lua's getinfo fields of a function's description, pushed as source,
 * short_src, what; line and last set. */
static void describe_one(W *w, int info, lua_Integer *line, lua_Integer *last)
{
    lua_State *L = w->L;
    lua_rawgeti(L, info, 1);
    if (lua_istable(L, -1)) {
        size_t len;
        const char *s;
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        *line = lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_rawgeti(L, -2, 3);
        *last = lua_tointeger(L, -1);
        lua_pop(L, 1);
        s = lua_tolstring(L, -1, &len);
        if (s != NULL)
            push_chunkid(L, s, len);
        else
            lua_pushnil(L);
        lua_rawgeti(L, -3, 4);
        lua_remove(L, -4);
    } else {
        lua_Debug ar;
        lua_getinfo(L, ">S", &ar);
        *line = ar.linedefined;
        *last = ar.lastlinedefined;
        lua_pushstring(L, ar.source);
        lua_pushstring(L, ar.short_src);
        lua_pushstring(L, ar.what);
    }
}

/* describe(data): w->fns. */
/* A Lua function that is no main chunk: the name package.loaded gives
 * it (its own module's first), unless its line declares a method; else
 * its group of a line (groups: by file and line defined), named then. */
static void describe_other(W *w, Fn *fn, int base, lua_Integer i, int groups)
{
    lua_State *L = w->L;
    const char *source = lua_tostring(L, base + 2);
    int own = 0;
    source_line(w, base + 2, fn->line);
    if (!lua_isnil(L, -1))
        declared_name(w, -1);
    else
        lua_pushnil(L);
    if (!lua_isnil(L, -1))
        fn->decl = anchor(w);
    else
        lua_pop(L, 1);
    lua_pop(L, 1);
    lua_rawgeti(L, base + 1, 1);
    if (lua_rawget(L, w->loaded) == LUA_TTABLE) {
        Str ownmod = {NULL, 0};
        if (lua_rawlen(L, -1) > 1 && source[0] == '@') {
            module_of(w, fn->file);
            if (!lua_isnil(L, -1)) {
                ownmod = anchor(w);
                own = 1;
            } else {
                lua_pop(L, 1);
            }
        }
        pick(w, lua_gettop(L), own ? MINE_OWN : MINE_NONE, ownmod);
    } else {
        lua_pushnil(L);
    }
    if (!lua_isnil(L, -1)
        && !(fn->decl.s != NULL && memchr(fn->decl.s, ':', fn->decl.len) != NULL)) {
        fn->name = anchor(w);
    } else {
        lua_pop(L, 1);
        fn->grouped = 1;
        lua_pushlstring(L, fn->file.s, fn->file.len);
        lua_pushfstring(L, "%c%I", 0, fn->line);
        lua_concat(L, 2);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, groups) == LUA_TNIL) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_rawset(L, groups);
        }
        lua_pushinteger(L, i - 1);
        lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        lua_pop(L, 2);
    }
}

/* A C function's name (fn at base + 1 its info, base + 2.. its
 * description): its standard name, else the one package.loaded gives it
 * (a C module's first), else the name it is called by. */
static void describe_c(W *w, Fn *fn, int base)
{
    lua_State *L = w->L;
    const char *std;
    fn->c = 1;
    lua_pushliteral(L, "[C]");
    fn->file = anchor(w);
    fn->line = 0;
    lua_rawgeti(L, base + 1, 1);
    std = cg_prof_std_name_of(L, lua_tocfunction(L, -1), fn->callname.s);
    lua_pop(L, 1);
    if (std != NULL) {
        lua_pushstring(L, std);
    } else {
        lua_rawgeti(L, base + 1, 1);
        if (lua_rawget(L, w->loaded) == LUA_TTABLE) {
            Str none = {NULL, 0};
            pick(w, lua_gettop(L), lua_rawlen(L, -1) > 1 ? MINE_CMOD : MINE_NONE, none);
            lua_remove(L, -2);
        }
    }
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        if (is_name(fn->callname.s, fn->callname.len))
            lua_pushlstring(L, fn->callname.s, fn->callname.len);
        else
            lua_pushliteral(L, "anonymous C function");
    }
    fn->name = anchor(w);
}

/* A Lua function's name or its group of a line (groups: by file and line
 * defined). */
static void describe_lua(W *w, Fn *fn, int base, lua_Integer i, int groups)
{
    lua_State *L = w->L;
    int src = base + 2, what = base + 4;
    size_t slen;
    const char *source = lua_tolstring(L, src, &slen);
    if (source[0] == '@')
        lua_pushlstring(L, source + 1, slen - 1);
    else
        lua_pushvalue(L, base + 3);
    fn->file = anchor(w);
    if (strcmp(lua_tostring(L, what), "main") == 0) {
        fn->main = 1;
        if (source[0] == '@')
            module_of(w, fn->file);
        else
            lua_pushnil(L);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_pushliteral(L, "main chunk");
        } else {
            lua_pushliteral(L, "main chunk (");
            lua_insert(L, -2);
            lua_pushliteral(L, ")");
            lua_concat(L, 3);
        }
        fn->name = anchor(w);
    } else {
        describe_other(w, fn, base, i, groups);
    }
}

/* The set of the functions to look for in package.loaded (w->set: not
 * the main chunks, whose names come from their files, nor the standard
 * library's C functions, whose names are theirs) and the definition
 * lines to read, by source (w->want). */
static void describe_prepare(W *w, int info, lua_Integer n)
{
    lua_State *L = w->L;
    lua_Integer i;
    lua_newtable(L);
    w->set = lua_gettop(L);
    w->nset = 0;
    for (i = 1; i <= n; i++) {
        lua_Integer line, last;
        lua_rawgeti(L, info, i);
        describe_one(w, lua_gettop(L), &line, &last);
        if (strcmp(lua_tostring(L, -1), "main") != 0) {
            const char *callname;
            lua_rawgeti(L, -4, 2);
            callname = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            lua_pop(L, 1);      /* (the info keeps it) */
            lua_rawgeti(L, -4, 1);
            /* (a C function of the standard library keeps its standard
             * name: package.loaded is not asked for it) */
            if (lua_type(L, -1) == LUA_TFUNCTION
                && !(lua_iscfunction(L, -1)
                     && cg_prof_std_name_of(L, lua_tocfunction(L, -1), callname) != NULL)) {
                lua_pushboolean(L, 1);
                lua_rawset(L, w->set);
                w->nset++;
            } else {
                lua_pop(L, 1);
            }
        }
        if (strcmp(lua_tostring(L, -1), "Lua") == 0) {
            lua_pushvalue(L, -3);
            if (lua_rawget(L, w->want) == LUA_TNIL) {
                lua_pop(L, 1);
                lua_newtable(L);
                lua_pushvalue(L, -4);
                lua_pushvalue(L, -2);
                lua_rawset(L, w->want);
            }
            lua_pushboolean(L, 1);
            lua_rawseti(L, -2, line);
            lua_pop(L, 1);
        }
        lua_pop(L, 4);
    }
}

/* Two prototypes of one file with one name: each gets its line
 * ("fib:12"), and those defined on one line a number ("f:3#2"). */
static void describe_dups(W *w)
{
    lua_State *L = w->L;
    size_t i, n = w->nfn;
    int count, seen;
    lua_newtable(L);
    count = lua_gettop(L);
    for (i = 0; i < n; i++) {
        Fn *fn = &w->fns[i];
        if (fn->main || is_cfile(fn->file))
            continue;
        push_key(L, fn->file, fn->name);
        lua_pushvalue(L, -1);
        lua_rawget(L, count);
        lua_pushinteger(L, lua_tointeger(L, -1) + 1);
        lua_remove(L, -2);
        lua_rawset(L, count);
    }
    lua_newtable(L);
    seen = lua_gettop(L);
    for (i = 0; i < n; i++) {
        Fn *fn = &w->fns[i];
        lua_Integer c;
        if (fn->main || is_cfile(fn->file))
            continue;
        push_key(L, fn->file, fn->name);
        lua_rawget(L, count);
        c = lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (c > 1) {
            if (!(fn->name.len >= 10 && memcmp(fn->name.s, "anonymous@", 10) == 0)) {
                lua_pushlstring(L, fn->name.s, fn->name.len);
                lua_pushfstring(L, ":%I", fn->line);
                lua_concat(L, 2);
                fn->name = anchor(w);
            }
            push_key(L, fn->file, fn->name);
            lua_pushvalue(L, -1);
            lua_rawget(L, seen);
            c = lua_tointeger(L, -1) + 1;
            lua_pop(L, 1);
            lua_pushinteger(L, c);
            lua_rawset(L, seen);
            if (c > 1) {
                lua_pushlstring(L, fn->name.s, fn->name.len);
                lua_pushfstring(L, "#%I", c);
                lua_concat(L, 2);
                fn->name = anchor(w);
            }
        }
    }
    lua_settop(L, count - 1);
}


/* describe(data): w->fns, named as the Lua writer names them. */
void cg_prof_describe(W *w)
{
    lua_State *L = w->L;
    lua_Integer i, n;
    int info, groups;
    lua_getfield(L, w->data, "info");
    info = lua_gettop(L);
    n = (lua_Integer)lua_rawlen(L, info);
    w->nfn = (size_t)n;
    w->fns = (Fn *)lua_newuserdatauv(L, (size_t)n * sizeof(Fn) + 1, 0);
    lua_rawseti(L, w->anchor, (lua_Integer)lua_rawlen(L, w->anchor) + 1);
    memset(w->fns, 0, (size_t)n * sizeof(Fn));
    describe_prepare(w, info, n);
    loaded_names(w);
    lua_newtable(L);
    groups = lua_gettop(L);
    for (i = 1; i <= n; i++) {
        Fn *fn = &w->fns[i - 1];
        int base = lua_gettop(L);
        lua_rawgeti(L, info, i);
        lua_rawgeti(L, -1, 2);
        if (lua_type(L, -1) == LUA_TSTRING)
            fn->callname = anchor(w);
        else
            lua_pop(L, 1);
        describe_one(w, base + 1, &fn->line, &fn->last);
        if (strcmp(lua_tostring(L, base + 4), "C") == 0)
            describe_c(w, fn, base);
        else
            describe_lua(w, fn, base, i, groups);
        lua_settop(L, base);
    }
    lua_pushnil(L);
    while (lua_next(L, groups)) {
        name_group(w, lua_gettop(L));
        lua_pop(L, 1);
    }
    describe_dups(w);
    lua_settop(L, info - 1);
}
