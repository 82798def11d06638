/* The Lua binding: the only file that knows Lua. Objects follow liolib's
 * pattern: a Profile userdata is created closed before any work and owns
 * the CgProfile; every handle keeps its profile alive through a user value
 * and checks that it is still open. */
#include "cg_graph.h"
#include "cg_profile.h"
#include "cg_query.h"
#include "cg_source.h"
#include "cg_prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"

#define PROFILE "callgrind.Profile"
#define FUNCTION "callgrind.Function"
#define CALL "callgrind.Call"
#define JUMP "callgrind.Jump"
#define COSTLINE "callgrind.CostLine"
#define PART "callgrind.Part"
#define CURSOR "callgrind.cursor"
#define FILELIST "callgrind.filelist"
#define FILELINES "callgrind.filelines"
/* Registry key: a table with weak keys, part table -> its profile. */
#define PART_OWNER "callgrind.part_owner"

/* Profile user values. */
enum { UV_TEXT = 1, UV_CACHE = 2 };
/* Keys of the cache table. */
#define CACHE_FUNCS "funcs"
#define CACHE_PARTS "parts"
#define CACHE_EVENTS "events"
#define CACHE_DERIVED "derived"          /* name -> coefficients */
#define CACHE_DERIVED_ORDER "derived order" /* names, as defined */
#define CACHE_TOTALS "totals"            /* userdata: nev sums */

typedef struct LProfile {
    CgProfile *P;                /* NULL once closed */
} LProfile;

typedef struct LFunc {
    int32_t index;
} LFunc;

typedef struct LCall {
    uint32_t index;
} LCall;

typedef struct LJump {
    CgJump j;
} LJump;

typedef struct LLine {
    CgLine l;
    int64_t cost[1];             /* stride values */
} LLine;

typedef struct LCursor {
    CgCursor c;
    const CgProfile *P;          /* what it walks; checked at each step */
    int64_t cost[1];
} LCursor;

/* ---- profiles ---- */

static LProfile *to_lprofile(lua_State *L, int idx)
{
    return (LProfile *)luaL_checkudata(L, idx, PROFILE);
}

static CgProfile *check_open(lua_State *L, const LProfile *lp)
{
    if (!lp->P)
        luaL_error(L, "attempt to use a closed profile");
    return lp->P;
}

static CgProfile *check_profile(lua_State *L, int idx)
{
    return check_open(L, to_lprofile(L, idx));
}

/* The profile behind the handle at idx (its user value 1). Leaves the
 * profile userdata on the stack top. */
static CgProfile *handle_profile(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, 1);
    return check_open(L, (LProfile *)lua_touserdata(L, -1));
}

/* For __tostring of a handle whose profile is closed: pushes
 * "callgrind.X (closed profile)" and returns 1, else 0. */
static int closed_tostring(lua_State *L, int idx, const char *tname)
{
    const LProfile *lp;
    lua_getiuservalue(L, idx, 1);
    lp = (const LProfile *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (lp && lp->P)
        return 0;
    lua_pushfstring(L, "%s (closed profile)", tname);
    return 1;
}

static int profile_close(lua_State *L)
{
    LProfile *lp = to_lprofile(L, 1);
    if (lp->P) {
        cg_profile_free(lp->P);
        lp->P = NULL;
    }
    return 0;
}

static void push_str(lua_State *L, CgStr s)
{
    if (s.ptr)
        lua_pushlstring(L, s.ptr, s.len);
    else
        lua_pushnil(L);
}

static void push_name(lua_State *L, const CgProfile *P, int kind, int32_t i)
{
    if (i < 0)
        lua_pushnil(L);
    else
        push_str(L, P->names[kind].str[i]);
}

/* Pushes the cache table of the profile at idx. */
static void push_cache(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, UV_CACHE);
}

/* Pushes the (one) handle of function i of the profile at pidx. */
static void push_func(lua_State *L, int pidx, int32_t i)
{
    pidx = lua_absindex(L, pidx);
    push_cache(L, pidx);
    lua_getfield(L, -1, CACHE_FUNCS);
    if (lua_rawgeti(L, -1, (lua_Integer)i + 1) == LUA_TNIL) {
        LFunc *f;
        lua_pop(L, 1);
        f = (LFunc *)lua_newuserdatauv(L, sizeof *f, 1);
        f->index = i;
        luaL_setmetatable(L, FUNCTION);
        lua_pushvalue(L, pidx);
        lua_setiuservalue(L, -2, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, (lua_Integer)i + 1);
    }
    lua_replace(L, -3);
    lua_pop(L, 1);
}

static void build_parts(lua_State *L, int pidx, const CgProfile *P);

/* Pushes part i (0-based) of the profile at pidx. */
static void push_part(lua_State *L, int pidx, uint32_t i)
{
    pidx = lua_absindex(L, pidx);
    push_cache(L, pidx);
    if (lua_getfield(L, -1, CACHE_PARTS) == LUA_TNIL) {
        lua_pop(L, 1);
        build_parts(L, pidx, ((LProfile *)lua_touserdata(L, pidx))->P);
        lua_getfield(L, -1, CACHE_PARTS);
    }
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    lua_replace(L, -3);
    lua_pop(L, 1);
}

/* ---- events and costs ---- */

/* Pushes the profile a handle at idx belongs to (or the profile itself)
 * and returns its absolute index. */
static int push_owner(lua_State *L, int idx)
{
    if (luaL_testudata(L, idx, PROFILE))
        lua_pushvalue(L, idx);
    else
        lua_getiuservalue(L, idx, 1);
    return lua_gettop(L);
}

/* The derived event named s of the profile at pidx: its coefficients over
 * the base events, or NULL. */
static const int64_t *derived_coefs(lua_State *L, int pidx, const char *s)
{
    const int64_t *c = NULL;
    push_cache(L, pidx);
    if (lua_getfield(L, -1, CACHE_DERIVED) == LUA_TTABLE &&
        lua_getfield(L, -1, s) == LUA_TUSERDATA) {
        c = (const int64_t *)lua_touserdata(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 2);               /* the userdata stays referenced */
    return c;
}

/* The event named or numbered by argument arg: a base event's index, or
 * -1 with *coefs set for a derived one (lua/callgrind/events.lua defines
 * those). pidx: the profile. */
/* Pushes the events a message lists: "Ir Dr Dw, derived: L1m CEst". */
static void push_event_list(lua_State *L, const CgProfile *P, int pidx)
{
    luaL_Buffer b;
    size_t i;
    lua_Integer k, n;
    int order;
    push_cache(L, pidx);         /* the derived names, below the buffer */
    lua_getfield(L, -1, CACHE_DERIVED_ORDER);
    lua_remove(L, -2);
    order = lua_gettop(L);
    n = lua_istable(L, order) ? (lua_Integer)lua_rawlen(L, order) : 0;
    luaL_buffinit(L, &b);
    for (i = 0; i < P->nev; i++) {
        if (i)
            luaL_addchar(&b, ' ');
        luaL_addlstring(&b, P->events[i].ptr, P->events[i].len);
    }
    if (i == 0)
        luaL_addstring(&b, "(none)");
    for (k = 1; k <= n; k++) {
        luaL_addstring(&b, k == 1 ? ", derived: " : " ");
        lua_rawgeti(L, order, k);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_remove(L, order);
}

/* Resolves the event at arg: its index (coefs NULL), or -1 with the
 * derived event's coefficients. When it is no event, pushes the reason
 * (naming the events there are) and returns -2. */
static int find_event(lua_State *L, const CgProfile *P, int pidx, int arg,
                      const int64_t **coefs)
{
    *coefs = NULL;
    if (lua_type(L, arg) == LUA_TNUMBER) {
        lua_Integer i;
        if (!lua_isinteger(L, arg)) {
            lua_pushliteral(L, "event index must be an integer");
            return -2;
        }
        i = lua_tointeger(L, arg);
        if (i < 1 || (lua_Unsigned)i > P->nev) {
            lua_pushfstring(L, "event index %I out of range 1..%I", i,
                            (lua_Integer)P->nev);
            return -2;
        }
        return (int)i - 1;
    } else if (lua_type(L, arg) == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, arg, &len);
        int i = cg_event_index(P, s, len);
        if (i >= 0)
            return i;
        if ((*coefs = derived_coefs(L, pidx, s)))
            return -1;
        lua_pushfstring(L, "unknown event '%s'; events: ", s);
    } else {
        lua_pushfstring(L, "event name or index expected, got %s; events: ",
                        luaL_typename(L, arg));
    }
    push_event_list(L, P, pidx);
    lua_concat(L, 2);
    return -2;
}

/* Resolves ev at arg (see find_event), raising an argument error when it
 * is no event. */
static int check_event(lua_State *L, const CgProfile *P, int pidx, int arg,
                       const int64_t **coefs)
{
    int ev = find_event(L, P, pidx, arg, coefs);
    if (ev == -2)
        luaL_argerror(L, arg, lua_tostring(L, -1));
    return ev;
}

/* internal.event_problem(prof, ev) -> nil when ev is an event of prof,
 * else why not (for the Lua layer's own argument errors). */
static int profile_event_problem(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    const int64_t *coefs;
    lua_settop(L, 2);
    if (find_event(L, P, 1, 2, &coefs) != -2)
        lua_pushnil(L);
    return 1;
}

/* v[ev], or the derived event's linear combination of v. */
static int64_t event_value(lua_State *L, const CgProfile *P, const int64_t *v,
                           int ev, const int64_t *coefs)
{
    int64_t sum;
    if (cg_event_value(P, v, ev, coefs, &sum))
        luaL_error(L, "a derived event's value does not fit in 64 bits");
    return sum;
}

/* ---- tables people print: costs, event names, desc entries ---- */

#define NAMES "callgrind.Names"
#define DESC "callgrind.Desc"
#define CACHE_COSTS_MT "costs mt"

/* Writes v with thousands separators into out (at least 32 bytes):
 * -1234567 -> "-1,234,567". */
static void format_commas(char *out, lua_Integer v)
{
    char digits[24];
    lua_Unsigned u = v < 0 ? 0u - (lua_Unsigned)v : (lua_Unsigned)v;
    int n = 0, i;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (v < 0)
        *out++ = '-';
    for (i = n - 1; i >= 0; i--) {
        *out++ = digits[i];
        if (i && i % 3 == 0)
            *out++ = ',';
    }
    *out = '\0';
}

/* __tostring of a cost table: "Ir 1,234  Dr 56" in the profile's event
 * order (the metatable's `events`). Each piece is pushed and added with
 * luaL_addvalue, so the stack is as the buffer expects it. */
static int costs_tostring(lua_State *L)
{
    luaL_Buffer b;
    lua_Integer i, n;
    int any = 0;
    char num[32];
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    if (luaL_getmetafield(L, 1, "events") != LUA_TTABLE)
        return luaL_argerror(L, 1, "not a cost table");
    n = (lua_Integer)lua_rawlen(L, 2);
    luaL_buffinit(L, &b);
    for (i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, i);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, 1) == LUA_TNUMBER && lua_isinteger(L, -1)) {
            format_commas(num, lua_tointeger(L, -1));
            lua_pushfstring(L, "%s%s %s", any ? "  " : "", lua_tostring(L, -2), num);
            lua_replace(L, -3);
            lua_pop(L, 1);
            luaL_addvalue(&b);
            any = 1;
        } else {
            lua_pop(L, 2);
        }
    }
    if (!any)
        luaL_addstring(&b, "(no costs)");
    luaL_pushresult(&b);
    return 1;
}

/* __tostring of a list of names: "Ir Dr Dw". */
static int names_tostring(lua_State *L)
{
    luaL_Buffer b;
    lua_Integer i, n;
    luaL_checktype(L, 1, LUA_TTABLE);
    n = (lua_Integer)lua_rawlen(L, 1);
    luaL_buffinit(L, &b);
    for (i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, ' ');
        lua_rawgeti(L, 1, i);
        luaL_addvalue(&b);
    }
    if (n == 0)
        luaL_addstring(&b, "(none)");
    luaL_pushresult(&b);
    return 1;
}

/* __tostring of a part's desc: one "type: value" a line, by type. */
static int desc_tostring(lua_State *L)
{
    luaL_Buffer b;
    lua_Integer i, j, n = 0;
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_newtable(L);             /* 2: the types, sorted by insertion */
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        for (j = n; j >= 1; j--) {   /* shift the larger ones up */
            lua_rawgeti(L, 2, j);
            if (!lua_compare(L, -2, -1, LUA_OPLT)) {
                lua_pop(L, 1);
                break;
            }
            lua_rawseti(L, 2, j + 1);
        }
        lua_pushvalue(L, -1);
        lua_rawseti(L, 2, j + 1);
        n++;
    }
    luaL_buffinit(L, &b);
    for (i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\n');
        lua_rawgeti(L, 2, i);
        lua_pushvalue(L, -1);
        lua_rawget(L, 1);
        lua_pushfstring(L, "%s: %s", lua_tostring(L, -2), lua_tostring(L, -1));
        lua_remove(L, -2);
        lua_remove(L, -2);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return 1;
}

/* Gives the table on top the profile's cost metatable (made once per
 * profile: its `events` orders the printout). */
static void set_costs_mt(lua_State *L, int pidx)
{
    pidx = lua_absindex(L, pidx);
    push_cache(L, pidx);
    if (lua_getfield(L, -1, CACHE_COSTS_MT) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 3);
        lua_pushliteral(L, "callgrind.Costs");
        lua_setfield(L, -2, "__name");
        lua_pushcfunction(L, costs_tostring);
        lua_setfield(L, -2, "__tostring");
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, CACHE_COSTS_MT);
    }
    lua_getfield(L, pidx, "events");   /* the cached events list */
    lua_setfield(L, -2, "events");
    lua_setmetatable(L, -3);
    lua_pop(L, 1);
}

/* cost(ev) -> integer (ev a base or derived event); cost() -> { base
 * event = n, ... }. pidx: the profile. */
static int push_costs(lua_State *L, const CgProfile *P, int pidx,
                      const int64_t *v, int arg)
{
    size_t i;
    if (!lua_isnoneornil(L, arg)) {
        const int64_t *coefs;
        int ev = check_event(L, P, pidx, arg, &coefs);
        lua_pushinteger(L, (lua_Integer)event_value(L, P, v, ev, coefs));
        return 1;
    }
    lua_createtable(L, 0, (int)P->nev);
    for (i = 0; i < P->nev; i++) {
        lua_pushlstring(L, P->events[i].ptr, P->events[i].len);
        lua_pushinteger(L, (lua_Integer)v[i]);
        lua_rawset(L, -3);
    }
    set_costs_mt(L, pidx);
    return 1;
}

/* prof:_define(name, { base = coefficient, ... }): registers a derived
 * event for every cost accessor. The Lua layer parses formulas. */
static int profile_define(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    size_t len;
    const char *name = luaL_checklstring(L, 2, &len);
    int64_t *c;
    luaL_checktype(L, 3, LUA_TTABLE);
    if (cg_event_index(P, name, len) >= 0)
        luaL_argerror(L, 2, "a base event cannot be redefined");
    c = (int64_t *)lua_newuserdatauv(L, (P->nev + 1) * sizeof *c, 0);
    memset(c, 0, (P->nev + 1) * sizeof *c);
    lua_pushnil(L);
    while (lua_next(L, 3)) {
        size_t klen;
        const char *k = lua_type(L, -2) == LUA_TSTRING
                            ? lua_tolstring(L, -2, &klen) : NULL;
        int i = k ? cg_event_index(P, k, klen) : -1;
        if (i < 0 || !lua_isinteger(L, -1))
            luaL_argerror(L, 3, "expected base event names mapped to "
                          "integers");
        c[i] = (int64_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    push_cache(L, 1);
    if (lua_getfield(L, -1, CACHE_DERIVED) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, CACHE_DERIVED);
    }
    lua_pushvalue(L, -3);        /* the coefficients */
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
    if (lua_getfield(L, -1, CACHE_DERIVED_ORDER) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, CACHE_DERIVED_ORDER);
    }
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    return 0;
}

/* The totals of the profile at pidx, summed once and kept in its cache:
 * prof:total(ev) is called once per event, and summing parts x events at
 * each call made that loop parts x events^2 (hours for 64 KB of inherited
 * parts with 4096 events). Leaves the userdata on the stack. */
static const int64_t *cached_totals(lua_State *L, int pidx,
                                    const CgProfile *P)
{
    int64_t *v;
    push_cache(L, pidx);
    if (lua_getfield(L, -1, CACHE_TOTALS) == LUA_TUSERDATA) {
        v = (int64_t *)lua_touserdata(L, -1);
    } else {
        lua_pop(L, 1);
        v = (int64_t *)lua_newuserdatauv(L, (P->nev + 1) * sizeof *v, 0);
        if (cg_totals(P, v))     /* the loader checked these sums */
            luaL_error(L, "%s: a total does not fit in 64 bits", P->name);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, CACHE_TOTALS);
    }
    lua_remove(L, -2);
    return v;
}

static int profile_totals(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    lua_settop(L, 2);
    return push_costs(L, P, 1, cached_totals(L, 1, P), 2);
}

static int profile_total(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    return push_costs(L, P, 1, cached_totals(L, 1, P), 2);
}

/* ---- profile fields and methods ---- */

static void push_events(lua_State *L, int pidx, const CgProfile *P)
{
    size_t i;
    push_cache(L, pidx);
    if (lua_getfield(L, -1, CACHE_EVENTS) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_createtable(L, (int)P->nev, 0);
        for (i = 0; i < P->nev; i++) {
            push_str(L, P->events[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        luaL_setmetatable(L, NAMES);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, CACHE_EVENTS);
    }
    lua_remove(L, -2);
}

static int profile_field(lua_State *L, CgProfile *P, const char *k)
{
    const CgPart *first = P->nparts ? &P->parts[0] : NULL;
    if (!strcmp(k, "name"))
        lua_pushstring(L, P->name);
    else if (!strcmp(k, "version"))
        lua_pushinteger(L, P->version);
    else if (!strcmp(k, "creator"))
        push_str(L, P->creator);
    else if (!strcmp(k, "cmd")) {
        if (first && (first->has & CG_PART_CMD))
            push_str(L, first->cmd);
        else
            lua_pushnil(L);
    } else if (!strcmp(k, "pid")) {
        if (first && (first->has & CG_PART_PID))
            lua_pushinteger(L, first->pid);
        else
            lua_pushnil(L);
    } else if (!strcmp(k, "events"))
        push_events(L, 1, P);
    else
        lua_pushnil(L);
    return 1;
}

/* __index of every handle type: methods first (Lua modules add to them),
 * then fields. Upvalue 1: the methods table; upvalue 2: the field
 * function. */
static int handle_index(lua_State *L)
{
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    lua_pop(L, 1);
    if (lua_type(L, 2) != LUA_TSTRING)
        return 0;
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 1);
    return 1;
}

static int profile_fields(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    return profile_field(L, P, lua_tostring(L, 2));
}

static int profile_tostring(lua_State *L)
{
    LProfile *lp = to_lprofile(L, 1);
    const CgProfile *P = lp->P;
    if (!P) {
        lua_pushliteral(L, "callgrind.Profile (closed)");
        return 1;
    }
    {
        luaL_Buffer b;
        size_t i;
        luaL_buffinit(L, &b);
        lua_pushfstring(L, "callgrind.Profile: %s (%I functions, %I calls, "
                        "%I part%s; events:", P->name,
                        (lua_Integer)P->nfuncs, (lua_Integer)P->ncalls,
                        (lua_Integer)P->nparts, P->nparts == 1 ? "" : "s");
        luaL_addvalue(&b);
        for (i = 0; i < P->nev && i < 12; i++) {
            luaL_addchar(&b, ' ');
            luaL_addlstring(&b, P->events[i].ptr, P->events[i].len);
        }
        if (i < P->nev)
            luaL_addstring(&b, " ...");
        if (!P->nev)
            luaL_addstring(&b, " none");
        luaL_addchar(&b, ')');
        luaL_pushresult(&b);
    }
    return 1;
}

/* prof:warnings([kind]): every warning, or those of one kind (the kinds
 * of cg_warning_kinds; "formula" ones come from the Lua layer). */
static int profile_warnings(lua_State *L)
{
    static const char *const kinds[] = {
        "truncated", "skipped", "mismatch", "unknown", "name", "formula", NULL
    };
    CgProfile *P = check_profile(L, 1);
    int kind = lua_isnoneornil(L, 2) ? -1
                                     : luaL_checkoption(L, 2, NULL, kinds);
    uint64_t dropped = 0;
    size_t i;
    lua_Integer n = 0;
    lua_createtable(L, kind < 0 ? (int)P->nwarnings + 1 : 0, 0);
    for (i = 0; i < P->nwarnings; i++) {
        if (kind >= 0 && P->warnings[i].kind != kind)
            continue;
        lua_pushstring(L, P->warnings[i].text);
        lua_rawseti(L, -2, ++n);
    }
    for (i = 0; i < CG_NWKINDS; i++)
        if (kind < 0 || (int)i == kind)
            dropped += P->warnings_dropped[i];
    if (dropped) {
        /* "N more warnings", or "N more skipped warnings" */
        lua_pushfstring(L, "%s: %I more %s%swarnings not listed", P->name,
                        (lua_Integer)dropped, kind < 0 ? "" : kinds[kind],
                        kind < 0 ? "" : " ");
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

static int profile_memory(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    lua_pushinteger(L, (lua_Integer)cg_profile_bytes(P));
    lua_pushinteger(L, (lua_Integer)P->len);
    return 2;
}

/* ---- counting iterators over functions, calls, parts ---- */

/* upvalues: profile, next index, end index */
static int functions_iter(lua_State *L)
{
    lua_Integer i = lua_tointeger(L, lua_upvalueindex(2));
    lua_Integer n = lua_tointeger(L, lua_upvalueindex(3));
    check_open(L, (LProfile *)lua_touserdata(L, lua_upvalueindex(1)));
    if (i >= n)
        return 0;
    lua_pushinteger(L, i + 1);
    lua_replace(L, lua_upvalueindex(2));
    push_func(L, lua_upvalueindex(1), (int32_t)i);
    return 1;
}

static int profile_functions(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    lua_settop(L, 1);
    lua_pushinteger(L, 0);
    lua_pushinteger(L, (lua_Integer)P->nfuncs);
    lua_pushcclosure(L, functions_iter, 3);
    return 1;
}

static void new_call(lua_State *L, int pidx, uint32_t i)
{
    LCall *c;
    pidx = lua_absindex(L, pidx);
    c = (LCall *)lua_newuserdatauv(L, sizeof *c, 1);
    c->index = i;
    luaL_setmetatable(L, CALL);
    lua_pushvalue(L, pidx);
    lua_setiuservalue(L, -2, 1);
}

/* upvalues: profile, next, end, by-callee flag */
static int calls_iter(lua_State *L)
{
    lua_Integer i = lua_tointeger(L, lua_upvalueindex(2));
    lua_Integer n = lua_tointeger(L, lua_upvalueindex(3));
    const CgProfile *P =
        check_open(L, (LProfile *)lua_touserdata(L, lua_upvalueindex(1)));
    if (i >= n)
        return 0;
    lua_pushinteger(L, i + 1);
    lua_replace(L, lua_upvalueindex(2));
    new_call(L, lua_upvalueindex(1),
             lua_toboolean(L, lua_upvalueindex(4)) ? P->callers[i]
                                                   : (uint32_t)i);
    return 1;
}

static void push_calls_iter(lua_State *L, int pidx, size_t from, size_t to,
                            int by_callee)
{
    lua_pushvalue(L, pidx);
    lua_pushinteger(L, (lua_Integer)from);
    lua_pushinteger(L, (lua_Integer)to);
    lua_pushboolean(L, by_callee);
    lua_pushcclosure(L, calls_iter, 4);
}

static int profile_calls(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    push_calls_iter(L, 1, 0, P->ncalls, 0);
    return 1;
}

static int parts_iter(lua_State *L)
{
    lua_Integer i = lua_tointeger(L, lua_upvalueindex(2));
    const CgProfile *P =
        check_open(L, (LProfile *)lua_touserdata(L, lua_upvalueindex(1)));
    if ((size_t)i >= P->nparts)
        return 0;
    lua_pushinteger(L, i + 1);
    lua_replace(L, lua_upvalueindex(2));
    push_part(L, lua_upvalueindex(1), (uint32_t)i);
    return 1;
}

static int profile_parts(lua_State *L)
{
    check_profile(L, 1);
    lua_settop(L, 1);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, parts_iter, 2);
    return 1;
}

/* ---- parts: plain tables built once ---- */

static void set_int(lua_State *L, const char *k, int has, int64_t v)
{
    if (has) {
        lua_pushinteger(L, (lua_Integer)v);
        lua_setfield(L, -2, k);
    }
}

static void set_costs(lua_State *L, const char *k, const CgProfile *P,
                      int pidx, const CgPart *pt, const int64_t *v)
{
    int j;
    if (!v)
        return;
    lua_createtable(L, 0, pt->nev);
    for (j = 0; j < pt->nev; j++) {
        push_str(L, P->events[pt->evmap[j]]);
        lua_pushinteger(L, (lua_Integer)v[j]);
        lua_rawset(L, -3);
    }
    set_costs_mt(L, pidx);
    lua_setfield(L, -2, k);
}

static void build_parts(lua_State *L, int pidx, const CgProfile *P)
{
    size_t i;
    lua_createtable(L, (int)P->nparts, 0);
    for (i = 0; i < P->nparts; i++) {
        const CgPart *pt = &P->parts[i];
        uint32_t d;
        int j;
        lua_createtable(L, 0, 10);
        luaL_setmetatable(L, PART);
        lua_pushinteger(L, (lua_Integer)i + 1);
        lua_setfield(L, -2, "index");
        lua_pushinteger(L, (pt->has & CG_PART_NUMBER) ? (lua_Integer)pt->number
                                                      : (lua_Integer)i + 1);
        lua_setfield(L, -2, "number");
        set_int(L, "pid", pt->has & CG_PART_PID, pt->pid);
        set_int(L, "thread", pt->has & CG_PART_THREAD, pt->thread);
        if (pt->has & CG_PART_CMD) {
            push_str(L, pt->cmd);
            lua_setfield(L, -2, "cmd");
        }
        lua_newtable(L);
        for (d = pt->desc_begin; d < pt->desc_end; d++) {
            const CgDesc *ds = &P->descs[d];
            push_str(L, ds->type);
            if (lua_rawget(L, -2) == LUA_TSTRING) {
                /* a type written twice: keep both values, one a line */
                lua_pushliteral(L, "\n");
                push_str(L, ds->value);
                lua_concat(L, 3);
            } else {
                lua_pop(L, 1);
                push_str(L, ds->value);
            }
            push_str(L, ds->type);
            lua_insert(L, -2);
            lua_rawset(L, -3);
        }
        luaL_setmetatable(L, DESC);
        lua_setfield(L, -2, "desc");
        lua_createtable(L, pt->nev, 0);
        for (j = 0; j < pt->nev; j++) {
            push_str(L, P->events[pt->evmap[j]]);
            lua_rawseti(L, -2, j + 1);
        }
        luaL_setmetatable(L, NAMES);
        lua_setfield(L, -2, "events");
        set_costs(L, "summary", P, pidx, pt, pt->summary);
        set_costs(L, "written_totals", P, pidx, pt, pt->totals);
        lua_pushstring(L, P->texts[pt->text].name);
        lua_setfield(L, -2, "file");
        /* part:totals() finds its profile here */
        lua_getfield(L, LUA_REGISTRYINDEX, PART_OWNER);
        lua_pushvalue(L, -2);
        lua_pushvalue(L, pidx);
        lua_rawset(L, -3);
        lua_pop(L, 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    push_cache(L, pidx);
    lua_insert(L, -2);
    lua_setfield(L, -2, CACHE_PARTS);
    lua_pop(L, 1);
}

/* The part table at arg: pushes its profile (*P the open model) and
 * returns the part's 0-based index. pidx_want > 0: the part must belong to
 * the profile at that index. */
static uint32_t check_part(lua_State *L, int arg, int pidx_want,
                           const CgProfile **P)
{
    lua_Integer i;
    luaL_checktype(L, arg, LUA_TTABLE);
    if (!lua_getmetatable(L, arg) ||
        (luaL_getmetatable(L, PART), !lua_rawequal(L, -1, -2)))
        luaL_typeerror(L, arg, PART);
    lua_pop(L, 2);
    lua_getfield(L, LUA_REGISTRYINDEX, PART_OWNER);
    lua_pushvalue(L, arg);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (pidx_want > 0 && !lua_rawequal(L, -1, pidx_want))
        luaL_argerror(L, arg, "a Part of another profile");
    *P = check_open(L, (LProfile *)luaL_checkudata(L, -1, PROFILE));
    lua_getfield(L, arg, "index");
    i = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return (uint32_t)(i - 1);
}

/* part:totals([ev]): the sums of the part's cost lines. */
static int part_totals(lua_State *L)
{
    const CgProfile *P;
    uint32_t i;
    int pidx;
    int64_t *v;
    lua_settop(L, 2);
    i = check_part(L, 1, 0, &P);
    pidx = lua_gettop(L);
    v = (int64_t *)lua_newuserdatauv(L, (P->nev + 1) * sizeof *v, 0);
    cg_part_totals(P, i, v);
    return push_costs(L, P, pidx, v, 2);
}

static int part_tostring(lua_State *L)
{
    luaL_Buffer b;
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_buffinit(L, &b);
    lua_getfield(L, 1, "number");
    lua_pushfstring(L, "callgrind.Part %I", lua_tointeger(L, -1));
    lua_remove(L, -2);
    luaL_addvalue(&b);
    if (lua_getfield(L, 1, "pid") == LUA_TNUMBER) {
        lua_pushfstring(L, ", pid %I", lua_tointeger(L, -1));
        lua_remove(L, -2);
        luaL_addvalue(&b);
    } else {
        lua_pop(L, 1);
    }
    if (lua_getfield(L, 1, "thread") == LUA_TNUMBER) {
        lua_pushfstring(L, ", thread %I", lua_tointeger(L, -1));
        lua_remove(L, -2);
        luaL_addvalue(&b);
    } else {
        lua_pop(L, 1);
    }
    luaL_pushresult(&b);
    return 1;
}

/* ---- looking a function up ---- */

static int opt_name_index(lua_State *L, const CgProfile *P, int arg, int kind,
                          int32_t *out)
{
    size_t len;
    const char *s;
    if (lua_isnoneornil(L, arg)) {
        *out = -2;               /* any */
        return 1;
    }
    s = luaL_checklstring(L, arg, &len);
    *out = cg_names_find(&P->names[kind], s, len);
    return *out >= 0;
}

static int profile_func(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    size_t len, i, found = 0;
    const char *name = luaL_checklstring(L, 2, &len);
    int32_t n = cg_names_find(&P->names[CG_FN], name, len), file, obj;
    int32_t hit = -1;
    if (n < 0 || !opt_name_index(L, P, 3, CG_FILE, &file) ||
        !opt_name_index(L, P, 4, CG_OBJ, &obj)) {
        lua_pushnil(L);
        lua_pushliteral(L, "not found");
        return 2;
    }
    for (i = 0; i < P->nfuncs; i++) {
        const CgFunc *f = &P->funcs[i];
        if (f->name == n && (file == -2 || f->file == file) &&
            (obj == -2 || f->obj == obj)) {
            if (!found++)
                hit = (int32_t)i;
        }
    }
    if (found == 1) {
        push_func(L, 1, hit);
        return 1;
    }
    lua_pushnil(L);
    if (!found) {
        lua_pushliteral(L, "not found");
        return 2;
    }
    {
        luaL_Buffer b;
        size_t shown = 0;
        luaL_buffinit(L, &b);
        lua_pushfstring(L, "ambiguous: %I functions named '%s' (", 
                        (lua_Integer)found, name);
        luaL_addvalue(&b);
        for (i = 0; i < P->nfuncs && shown < 5; i++) {
            const CgFunc *f = &P->funcs[i];
            if (f->name == n && (file == -2 || f->file == file) &&
                (obj == -2 || f->obj == obj)) {
                if (shown++)
                    luaL_addstring(&b, "; ");
                if (f->file >= 0)
                    luaL_addlstring(&b, P->names[CG_FILE].str[f->file].ptr,
                                    P->names[CG_FILE].str[f->file].len);
                else
                    luaL_addstring(&b, "no file");
                if (f->obj >= 0) {
                    luaL_addstring(&b, " in ");
                    luaL_addlstring(&b, P->names[CG_OBJ].str[f->obj].ptr,
                                    P->names[CG_OBJ].str[f->obj].len);
                }
            }
        }
        if (shown < found)
            luaL_addstring(&b, "; ...");
        luaL_addstring(&b, "): give a file or object to choose");
        luaL_pushresult(&b);
    }
    return 2;
}

/* ---- functions ---- */

static const CgFunc *check_func(lua_State *L, int idx, CgProfile **PP)
{
    LFunc *f = (LFunc *)luaL_checkudata(L, idx, FUNCTION);
    CgProfile *P = handle_profile(L, idx);
    lua_pop(L, 1);
    *PP = P;
    return &P->funcs[f->index];
}

/* fn:self([ev [, part]]): in the whole profile, or in one part. */
static int func_self(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = check_func(L, 1, &P);
    const CgProfile *PP;
    int pidx;
    uint32_t part;
    int64_t *v;
    lua_settop(L, 3);
    pidx = push_owner(L, 1);
    if (lua_isnil(L, 3))
        return push_costs(L, P, pidx,
                          P->self + (size_t)(f - P->funcs) * P->stride, 2);
    part = check_part(L, 3, pidx, &PP);
    v = (int64_t *)lua_newuserdatauv(L, 2 * (P->stride + 1) * sizeof *v, 0);
    if (cg_func_part_self(P, (int32_t)(f - P->funcs), part, v,
                          v + P->stride + 1) != 0)
        return luaL_error(L, "the sum of a function's costs in a part does "
                          "not fit in 64 bits");
    return push_costs(L, P, pidx, v, 2);
}

static int func_fields(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = check_func(L, 1, &P);
    const char *k = lua_tostring(L, 2);
    if (!strcmp(k, "name"))
        push_name(L, P, CG_FN, f->name);
    else if (!strcmp(k, "file"))
        push_name(L, P, CG_FILE, f->file);
    else if (!strcmp(k, "object"))
        push_name(L, P, CG_OBJ, f->obj);
    else if (!strcmp(k, "index"))
        lua_pushinteger(L, (lua_Integer)(f - P->funcs) + 1);
    else if (!strcmp(k, "profile"))
        lua_getiuservalue(L, 1, 1);
    else
        lua_pushnil(L);
    return 1;
}

static int func_tostring(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f;
    luaL_checkudata(L, 1, FUNCTION);
    if (closed_tostring(L, 1, FUNCTION))
        return 1;
    f = check_func(L, 1, &P);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "callgrind.Function: ");
    push_name(L, P, CG_FN, f->name);
    luaL_addvalue(&b);
    if (f->file >= 0 || f->obj >= 0) {
        luaL_addstring(&b, " (");
        if (f->file >= 0) {
            push_name(L, P, CG_FILE, f->file);
            luaL_addvalue(&b);
        }
        if (f->obj >= 0) {
            luaL_addstring(&b, f->file >= 0 ? "; " : "");
            push_name(L, P, CG_OBJ, f->obj);
            luaL_addvalue(&b);
        }
        luaL_addchar(&b, ')');
    }
    luaL_pushresult(&b);
    return 1;
}

static int func_calls(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = check_func(L, 1, &P);
    lua_getiuservalue(L, 1, 1);
    push_calls_iter(L, -1, f->calls_begin, f->calls_end, 0);
    return 1;
}

static int func_callers(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = check_func(L, 1, &P);
    lua_getiuservalue(L, 1, 1);
    push_calls_iter(L, -1, f->callers_begin, f->callers_end, 1);
    return 1;
}

/* ---- the call graph: components and inclusive sums ---- */

static const CgGraph *check_graph(lua_State *L, CgProfile *P)
{
    if (!P->graph) {
        CgGraph *g;
        int rc = cg_graph_build(P, &g);
        if (rc == CG_ENOMEM) {
            lua_pushliteral(L, "not enough memory");
            lua_error(L);
        }
        if (rc)
            luaL_error(L, "%s: an inclusive cost does not fit in 64 bits",
                       P->name);
        P->graph = g;
    }
    return (const CgGraph *)P->graph;
}

/* fn:_ab(ev) -> A, B (FORMAT.md): calls in from outside its component;
 * self plus calls out of it. lua/callgrind/graph.lua gives them meaning. */
static int func_ab(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = check_func(L, 1, &P);
    const CgGraph *g = check_graph(L, P);
    size_t i = (size_t)(f - P->funcs);
    const int64_t *coefs;
    int pidx, ev;
    lua_settop(L, 2);
    pidx = push_owner(L, 1);
    ev = check_event(L, P, pidx, 2, &coefs);
    lua_pushinteger(L, (lua_Integer)event_value(L, P, g->a + i * P->stride,
                                                ev, coefs));
    lua_pushinteger(L, (lua_Integer)event_value(L, P, g->b + i * P->stride,
                                                ev, coefs));
    return 2;
}

/* Pushes { [function index] = event value } of per-function vectors v. */
static void push_column(lua_State *L, const CgProfile *P, const int64_t *v,
                        int ev, const int64_t *coefs)
{
    size_t i;
    lua_createtable(L, (int)P->nfuncs, 0);
    for (i = 0; i < P->nfuncs; i++) {
        lua_pushinteger(L, (lua_Integer)event_value(L, P, v + i * P->stride,
                                                    ev, coefs));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* prof:_ab_all(ev) -> { A by function index }, { B by function index } */
static int profile_ab_all(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    const CgGraph *g = check_graph(L, P);
    const int64_t *coefs;
    int ev = check_event(L, P, 1, 2, &coefs);
    push_column(L, P, g->a, ev, coefs);
    push_column(L, P, g->b, ev, coefs);
    return 2;
}

/* prof:_components() -> { component by function index }, { cyclic by
 * component }; components are numbered from 1 in reverse topological
 * order (callees before callers). */
static int profile_components(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    const CgGraph *g = check_graph(L, P);
    size_t i;
    lua_createtable(L, (int)P->nfuncs, 0);
    for (i = 0; i < P->nfuncs; i++) {
        lua_pushinteger(L, (lua_Integer)g->comp[i] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_createtable(L, (int)g->ncomp, 0);
    for (i = 0; i < g->ncomp; i++) {
        lua_pushboolean(L, g->cyclic[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 2;
}

/* prof:_self_all(ev) -> { self cost by function index } */
static int profile_self_all(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    const int64_t *coefs;
    int ev = check_event(L, P, 1, 2, &coefs);
    push_column(L, P, P->self, ev, coefs);
    return 1;
}

/* prof:_function(i) -> the handle of function i (1-based) */
static int profile_function(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    lua_Integer i = luaL_checkinteger(L, 2);
    luaL_argcheck(L, i >= 1 && (lua_Unsigned)i <= P->nfuncs, 2,
                  "function index out of range");
    push_func(L, 1, (int32_t)(i - 1));
    return 1;
}

/* prof:_event_defs() -> { { name=, formula=, long_name=, line= }, ... }
 * as the file's event: lines wrote them. */
static int profile_event_defs(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    size_t i;
    lua_createtable(L, (int)P->nevent_defs, 0);
    for (i = 0; i < P->nevent_defs; i++) {
        const CgEventDef *d = &P->event_defs[i];
        lua_createtable(L, 0, 4);
        push_str(L, d->name);
        lua_setfield(L, -2, "name");
        push_str(L, d->formula);
        lua_setfield(L, -2, "formula");
        push_str(L, d->long_name);
        lua_setfield(L, -2, "long_name");
        lua_pushinteger(L, (lua_Integer)d->line);
        lua_setfield(L, -2, "line");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* Raises the error of a sum's status rc (cg_query.h); what names the
 * sum: "a file's cost". */
static void sum_error(lua_State *L, int rc, const char *what)
{
    if (rc == CG_ENOMEM) {
        lua_pushliteral(L, "not enough memory");
        lua_error(L);
    }
    if (rc == CG_EVALUE)
        luaL_error(L, "a derived event's value does not fit in 64 bits");
    luaL_error(L, "%s does not fit in 64 bits", what);
}

/* prof:_file_costs(ev) -> { [source file] = self cost } (fi=/fe= aware;
 * lines with no file under the key false) */
static int profile_file_costs(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    const int64_t *coefs;
    int ev = check_event(L, P, 1, 2, &coefs);
    int64_t *sum;
    size_t nf = P->names[CG_FILE].n, i;
    int rc;
    sum = (int64_t *)lua_newuserdatauv(L, (nf + 1 + P->stride + 1) *
                                       sizeof *sum, 0);
    rc = cg_file_costs(P, ev, coefs, sum, sum + nf + 1);
    if (rc)
        sum_error(L, rc, "a file's cost");
    lua_newtable(L);
    for (i = 0; i <= nf; i++) {
        if (!sum[i] && (i == nf || !P->names[CG_FILE].str[i].ptr))
            continue;
        if (i == nf)
            lua_pushboolean(L, 0);
        else
            push_str(L, P->names[CG_FILE].str[i]);
        lua_pushinteger(L, (lua_Integer)sum[i]);
        lua_rawset(L, -3);
    }
    return 1;
}

static int filelines_gc(lua_State *L)
{
    cg_file_lines_free((CgFileLines *)luaL_checkudata(L, 1, FILELINES));
    return 0;
}

/* prof:_annotate(file, ev) -> { [line] = cost }, { [line] = { fn index
 * = true } } for the cost lines whose source file is `file` */
static int profile_annotate(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    size_t len, i;
    const char *file = luaL_checklstring(L, 2, &len);
    int32_t fi = cg_names_find(&P->names[CG_FILE], file, len);
    const int64_t *coefs;
    int ev = check_event(L, P, 1, 3, &coefs);
    CgFileLines *fl;
    int64_t *scratch;
    int rc;
    lua_settop(L, 3);
    fl = (CgFileLines *)lua_newuserdatauv(L, sizeof *fl, 0);   /* 4 */
    memset(fl, 0, sizeof *fl);
    luaL_setmetatable(L, FILELINES);   /* frees the sums, even on error */
    lua_newtable(L);             /* 5: costs */
    lua_newtable(L);             /* 6: functions */
    if (fi < 0)
        return 2;
    scratch = (int64_t *)lua_newuserdatauv(L, (P->stride + 1) *
                                           sizeof *scratch, 0);
    rc = cg_file_lines(P, fi, ev, coefs, fl, scratch);
    if (rc)
        sum_error(L, rc, "a line's cost");
    lua_pop(L, 1);
    for (i = 0; i < fl->nlines; i++) {
        lua_pushinteger(L, (lua_Integer)fl->lines[i].cost);
        lua_rawseti(L, 5, (lua_Integer)fl->lines[i].line);
    }
    for (i = 0; i < fl->nfuncs; i++) {
        lua_Integer ln = (lua_Integer)fl->funcs[i].line;
        if (lua_rawgeti(L, 6, ln) == LUA_TNIL) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_rawseti(L, 6, ln);
        }
        lua_pushboolean(L, 1);
        lua_rawseti(L, -2, (lua_Integer)fl->funcs[i].func + 1);
        lua_pop(L, 1);
    }
    cg_file_lines_free(fl);
    return 2;
}

/* ---- cost lines and jumps: cursors over blocks ---- */

/* upvalues: profile, cursor */
static int lines_iter(lua_State *L)
{
    LProfile *lp = (LProfile *)lua_touserdata(L, lua_upvalueindex(1));
    LCursor *c = (LCursor *)lua_touserdata(L, lua_upvalueindex(2));
    const CgProfile *P = check_open(L, lp);
    CgLine l;
    LLine *h;
    if (c->P != P)
        return luaL_error(L, "attempt to use a closed profile");
    if (!cg_cursor_next_line(&c->c, &l))
        return 0;
    h = (LLine *)lua_newuserdatauv(L, sizeof *h + P->stride * sizeof(int64_t),
                                   1);
    h->l = l;
    memcpy(h->cost, l.cost, P->stride * sizeof(int64_t));
    h->l.cost = h->cost;
    luaL_setmetatable(L, COSTLINE);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int jumps_iter(lua_State *L)
{
    LProfile *lp = (LProfile *)lua_touserdata(L, lua_upvalueindex(1));
    LCursor *c = (LCursor *)lua_touserdata(L, lua_upvalueindex(2));
    const CgProfile *P = check_open(L, lp);
    LJump *h;
    CgJump j;
    if (c->P != P)
        return luaL_error(L, "attempt to use a closed profile");
    if (!cg_cursor_next_jump(&c->c, &j))
        return 0;
    h = (LJump *)lua_newuserdatauv(L, sizeof *h, 1);
    h->j = j;
    luaL_setmetatable(L, JUMP);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static void push_cursor_iter(lua_State *L, int pidx, const CgProfile *P,
                             size_t first, size_t last, lua_CFunction f)
{
    LCursor *c;
    pidx = lua_absindex(L, pidx);
    lua_pushvalue(L, pidx);
    c = (LCursor *)lua_newuserdatauv(L, sizeof *c + P->stride *
                                     sizeof(int64_t), 0);
    luaL_setmetatable(L, CURSOR);
    c->P = P;
    cg_cursor_init(&c->c, P, first, last, c->cost);
    lua_pushcclosure(L, f, 2);
}

/* The light iterator (lsqlite3's urows beside rows): plain values per cost
 * line, no userdata. The events asked are kept in the cursor userdata as
 * base indices, or (-1) with the derived event's coefficients copied. */
typedef struct ULines {
    CgCursor c;
    const CgProfile *P;
    int n;                       /* events asked */
    int *ev;                     /* n: base index or -1 */
    int64_t *coefs;              /* n * stride: derived coefficients */
    int64_t *cost;               /* stride: the cursor's line costs */
} ULines;

static int ulines_iter(lua_State *L)
{
    LProfile *lp = (LProfile *)lua_touserdata(L, lua_upvalueindex(1));
    ULines *u = (ULines *)lua_touserdata(L, lua_upvalueindex(2));
    const CgProfile *P = check_open(L, lp);
    CgLine l;
    int i;
    if (u->P != P)
        return luaL_error(L, "attempt to use a closed profile");
    if (!cg_cursor_next_line(&u->c, &l))
        return 0;
    luaL_checkstack(L, u->n + 3, "too many events");
    lua_pushinteger(L, (lua_Integer)l.func + 1);
    if (l.flags & CG_HAS_LINE)
        lua_pushinteger(L, (lua_Integer)l.line);
    else
        lua_pushnil(L);
    if (l.flags & CG_HAS_ADDR)
        lua_pushinteger(L, (lua_Integer)l.addr);
    else
        lua_pushnil(L);
    for (i = 0; i < u->n; i++) {
        int ev = u->ev[i];
        lua_pushinteger(L, (lua_Integer)(ev >= 0 ? l.cost[ev] :
                        event_value(L, P, l.cost, -1,
                                    u->coefs + (size_t)i * P->stride)));
    }
    return 3 + u->n;
}

/* Pushes the ulines iterator over blocks [first, last) of the profile at
 * pidx, for the events given as arguments from arg on (all base events
 * when none). */
static void push_ulines(lua_State *L, int pidx, const CgProfile *P,
                        int arg, size_t first, size_t last)
{
    int top = lua_gettop(L), n = top >= arg ? top - arg + 1 : (int)P->nev;
    size_t stride = P->stride ? P->stride : 1, sz;
    ULines *u;
    int i;
    pidx = lua_absindex(L, pidx);
    sz = sizeof *u + (size_t)n * sizeof(int) + (size_t)n * stride *
         sizeof(int64_t) + stride * sizeof(int64_t) + 2 * sizeof(int64_t);
    lua_pushvalue(L, pidx);
    u = (ULines *)lua_newuserdatauv(L, sz, 0);
    luaL_setmetatable(L, CURSOR);
    u->P = P;
    u->n = n;
    u->coefs = (int64_t *)(void *)(u + 1);
    u->cost = u->coefs + (size_t)n * stride;
    u->ev = (int *)(void *)(u->cost + stride + 1);
    for (i = 0; i < n; i++) {
        if (top >= arg) {
            const int64_t *coefs;
            u->ev[i] = check_event(L, P, pidx, arg + i, &coefs);
            if (coefs)
                memcpy(u->coefs + (size_t)i * stride, coefs,
                       P->nev * sizeof *coefs);
        } else {
            u->ev[i] = i;
        }
    }
    cg_cursor_init(&u->c, P, first, last, u->cost);
    lua_pushcclosure(L, ulines_iter, 2);
}

/* prof:ulines([ev, ...]) */
static int profile_ulines(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    push_ulines(L, 1, P, 2, 0, P->nblocks);
    return 1;
}

/* fn:ulines([ev, ...]) */
static int func_ulines(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = check_func(L, 1, &P);
    push_owner(L, 1);
    lua_insert(L, 2);            /* the profile at 2, the events after it */
    push_ulines(L, 2, P, 3, f->blocks_begin, f->blocks_end);
    return 1;
}

static int profile_lines(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    push_cursor_iter(L, 1, P, 0, P->nblocks, lines_iter);
    return 1;
}

static int profile_jumps(lua_State *L)
{
    CgProfile *P = check_profile(L, 1);
    push_cursor_iter(L, 1, P, 0, P->nblocks, jumps_iter);
    return 1;
}

static int func_lines(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = check_func(L, 1, &P);
    lua_getiuservalue(L, 1, 1);
    push_cursor_iter(L, -1, P, f->blocks_begin, f->blocks_end, lines_iter);
    return 1;
}

static int func_jumps(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = check_func(L, 1, &P);
    lua_getiuservalue(L, 1, 1);
    push_cursor_iter(L, -1, P, f->blocks_begin, f->blocks_end, jumps_iter);
    return 1;
}

/* Pushes a position value, or nil when the file had no such column. */
static void push_pos(lua_State *L, uint32_t flags, uint32_t bit, uint64_t v)
{
    if (flags & bit)
        lua_pushinteger(L, (lua_Integer)v);
    else
        lua_pushnil(L);
}

static int line_fields(lua_State *L)
{
    LLine *h = (LLine *)luaL_checkudata(L, 1, COSTLINE);
    const char *k = lua_tostring(L, 2);
    CgProfile *P = handle_profile(L, 1);
    int pidx = lua_gettop(L);
    if (!strcmp(k, "fn"))
        push_func(L, pidx, h->l.func);
    else if (!strcmp(k, "file"))
        push_name(L, P, CG_FILE, h->l.file);
    else if (!strcmp(k, "line"))
        push_pos(L, h->l.flags, CG_HAS_LINE, h->l.line);
    else if (!strcmp(k, "addr"))
        push_pos(L, h->l.flags, CG_HAS_ADDR, h->l.addr);
    else if (!strcmp(k, "part"))
        push_part(L, pidx, h->l.part);
    else if (!strcmp(k, "profile"))
        lua_pushvalue(L, pidx);
    else
        lua_pushnil(L);
    return 1;
}

static int line_cost(lua_State *L)
{
    LLine *h = (LLine *)luaL_checkudata(L, 1, COSTLINE);
    CgProfile *P;
    lua_settop(L, 2);
    P = handle_profile(L, 1);
    return push_costs(L, P, 3, h->cost, 2);
}

/* "file:line" or "0xaddr" or what there is of both. */
static void add_where(lua_State *L, luaL_Buffer *b, const CgProfile *P,
                      int32_t file, uint32_t flags, uint32_t has_addr,
                      uint32_t has_line, uint64_t addr, uint64_t line)
{
    if (file >= 0)
        luaL_addlstring(b, P->names[CG_FILE].str[file].ptr,
                        P->names[CG_FILE].str[file].len);
    else
        luaL_addstring(b, "?");
    if (flags & has_line) {
        lua_pushfstring(L, ":%I", (lua_Integer)line);
        luaL_addvalue(b);
    }
    if (flags & has_addr) {
        char buf[32];
        snprintf(buf, sizeof buf, " 0x%llx", (unsigned long long)addr);
        luaL_addstring(b, buf);
    }
}

static int line_tostring(lua_State *L)
{
    LLine *h = (LLine *)luaL_checkudata(L, 1, COSTLINE);
    CgProfile *P;
    if (closed_tostring(L, 1, COSTLINE))
        return 1;
    P = handle_profile(L, 1);
    luaL_Buffer b;
    size_t i;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "callgrind.CostLine: ");
    push_name(L, P, CG_FN, P->funcs[h->l.func].name);
    luaL_addvalue(&b);
    luaL_addstring(&b, " at ");
    add_where(L, &b, P, h->l.file, h->l.flags, CG_HAS_ADDR, CG_HAS_LINE,
              h->l.addr, h->l.line);
    for (i = 0; i < P->nev && i < 12; i++) {
        luaL_addchar(&b, ' ');
        luaL_addlstring(&b, P->events[i].ptr, P->events[i].len);
        lua_pushfstring(L, "=%I", (lua_Integer)h->cost[i]);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return 1;
}

/* ---- calls ---- */

static const CgCall *check_call(lua_State *L, int idx, CgProfile **PP)
{
    LCall *c = (LCall *)luaL_checkudata(L, idx, CALL);
    CgProfile *P = handle_profile(L, idx);
    lua_pop(L, 1);
    *PP = P;
    return &P->calls[c->index];
}

static int call_fields(lua_State *L)
{
    CgProfile *P;
    const CgCall *c = check_call(L, 1, &P);
    const char *k = lua_tostring(L, 2);
    CgCallSite site;
    int pidx;
    cg_call_site(P, c, &site);
    lua_getiuservalue(L, 1, 1);
    pidx = lua_gettop(L);
    if (!strcmp(k, "caller"))
        push_func(L, pidx, c->caller);
    else if (!strcmp(k, "callee"))
        push_func(L, pidx, c->callee);
    else if (!strcmp(k, "count"))
        lua_pushinteger(L, (lua_Integer)site.count);
    else if (!strcmp(k, "file"))
        push_name(L, P, CG_FILE, c->file);
    else if (!strcmp(k, "line"))
        push_pos(L, c->flags, CG_HAS_LINE, site.line);
    else if (!strcmp(k, "addr"))
        push_pos(L, c->flags, CG_HAS_ADDR, site.addr);
    else if (!strcmp(k, "target_line"))
        push_pos(L, c->flags, CG_HAS_TLINE, site.tline);
    else if (!strcmp(k, "target_addr"))
        push_pos(L, c->flags, CG_HAS_TADDR, site.taddr);
    else if (!strcmp(k, "part"))
        push_part(L, pidx, c->part);
    else if (!strcmp(k, "index"))
        lua_pushinteger(L, (lua_Integer)(c - P->calls) + 1);
    else if (!strcmp(k, "profile"))
        lua_pushvalue(L, pidx);
    else
        lua_pushnil(L);
    return 1;
}

/* A call's costs, decoded into a userdata pushed on the stack. */
static const int64_t *push_call_costs(lua_State *L, const CgProfile *P,
                                      const CgCall *c)
{
    int64_t *v = (int64_t *)lua_newuserdatauv(L, (P->stride + 1) *
                                              sizeof *v, 0);
    cg_call_costs(P, c, v);
    return v;
}

static int call_cost(lua_State *L)
{
    CgProfile *P;
    const CgCall *c = check_call(L, 1, &P);
    int pidx;
    lua_settop(L, 2);
    pidx = push_owner(L, 1);
    return push_costs(L, P, pidx, push_call_costs(L, P, c), 2);
}

static int call_tostring(lua_State *L)
{
    CgProfile *P;
    const CgCall *c;
    CgCallSite site;
    luaL_checkudata(L, 1, CALL);
    if (closed_tostring(L, 1, CALL))
        return 1;
    c = check_call(L, 1, &P);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "callgrind.Call: ");
    push_name(L, P, CG_FN, P->funcs[c->caller].name);
    luaL_addvalue(&b);
    luaL_addstring(&b, " -> ");
    push_name(L, P, CG_FN, P->funcs[c->callee].name);
    luaL_addvalue(&b);
    cg_call_site(P, c, &site);
    lua_pushfstring(L, " (%I call%s at ", (lua_Integer)site.count,
                    site.count == 1 ? "" : "s");
    luaL_addvalue(&b);
    add_where(L, &b, P, c->file, c->flags, CG_HAS_ADDR, CG_HAS_LINE,
              site.addr, site.line);
    if (P->nev) {
        luaL_addstring(&b, "; ");
        luaL_addlstring(&b, P->events[0].ptr, P->events[0].len);
        const int64_t *v = push_call_costs(L, P, c);
        lua_pushfstring(L, " %I inclusive", (lua_Integer)v[0]);
        lua_remove(L, -2);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    return 1;
}

static int call_eq(lua_State *L)
{
    LCall *a = (LCall *)luaL_checkudata(L, 1, CALL);
    LCall *b = (LCall *)luaL_checkudata(L, 2, CALL);
    int same;
    lua_getiuservalue(L, 1, 1);
    lua_getiuservalue(L, 2, 1);
    same = lua_rawequal(L, -1, -2) && a->index == b->index;
    lua_pushboolean(L, same);
    return 1;
}

/* ---- jumps ---- */

static int jump_fields(lua_State *L)
{
    LJump *h = (LJump *)luaL_checkudata(L, 1, JUMP);
    const CgJump *j = &h->j;
    const char *k = lua_tostring(L, 2);
    CgProfile *P = handle_profile(L, 1);
    int pidx = lua_gettop(L);
    if (!strcmp(k, "from"))
        push_func(L, pidx, j->from);
    else if (!strcmp(k, "to"))
        push_func(L, pidx, j->to);
    else if (!strcmp(k, "file"))
        push_name(L, P, CG_FILE, j->file);
    else if (!strcmp(k, "target_file"))
        push_name(L, P, CG_FILE, j->target_file);
    else if (!strcmp(k, "line"))
        push_pos(L, j->flags, CG_HAS_LINE, j->line);
    else if (!strcmp(k, "addr"))
        push_pos(L, j->flags, CG_HAS_ADDR, j->addr);
    else if (!strcmp(k, "target_line"))
        push_pos(L, j->flags, CG_HAS_TLINE, j->tline);
    else if (!strcmp(k, "target_addr"))
        push_pos(L, j->flags, CG_HAS_TADDR, j->taddr);
    else if (!strcmp(k, "conditional"))
        lua_pushboolean(L, j->conditional);
    else if (!strcmp(k, "count"))
        lua_pushinteger(L, (lua_Integer)j->count);
    else if (!strcmp(k, "executed"))
        lua_pushinteger(L, (lua_Integer)j->executed);
    else if (!strcmp(k, "part"))
        push_part(L, pidx, j->part);
    else if (!strcmp(k, "profile"))
        lua_pushvalue(L, pidx);
    else
        lua_pushnil(L);
    return 1;
}

static int jump_tostring(lua_State *L)
{
    LJump *h = (LJump *)luaL_checkudata(L, 1, JUMP);
    const CgJump *j = &h->j;
    CgProfile *P;
    if (closed_tostring(L, 1, JUMP))
        return 1;
    P = handle_profile(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "callgrind.Jump: ");
    add_where(L, &b, P, j->file, j->flags, CG_HAS_ADDR, CG_HAS_LINE, j->addr,
              j->line);
    luaL_addstring(&b, " -> ");
    add_where(L, &b, P, j->target_file, j->flags, CG_HAS_TADDR, CG_HAS_TLINE,
              j->taddr, j->tline);
    if (j->conditional)
        lua_pushfstring(L, " (conditional, taken %I of %I)",
                        (lua_Integer)j->count, (lua_Integer)j->executed);
    else
        lua_pushfstring(L, " (%I times)", (lua_Integer)j->count);
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    return 1;
}

/* ---- loading ---- */

/* The options table at arg: lenient, and progress, a function left at
 * *progress_idx (0 when none). */
static int check_load_options(lua_State *L, int arg, int *progress_idx)
{
    int options = 0;
    *progress_idx = 0;
    if (lua_isnoneornil(L, arg))
        return 0;
    luaL_checktype(L, arg, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, arg)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                                      : NULL;
        if (k && !strcmp(k, "lenient")) {
            if (lua_toboolean(L, -1))
                options |= CG_LENIENT;
        } else if (k && !strcmp(k, "progress")) {
            if (!lua_isfunction(L, -1))
                luaL_argerror(L, arg, "option 'progress' must be a function");
        } else {
            lua_pushvalue(L, -2);
            luaL_argerror(L, arg, lua_pushfstring(L, "unknown option '%s'",
                          luaL_tolstring(L, -1, NULL)));
        }
        lua_pop(L, 1);
    }
    if (lua_getfield(L, arg, "progress") == LUA_TFUNCTION)
        *progress_idx = lua_gettop(L);
    else
        lua_pop(L, 1);
    return options;
}

/* Pushes a new closed profile with its cache table. */
static LProfile *new_profile(lua_State *L)
{
    LProfile *lp = (LProfile *)lua_newuserdatauv(L, sizeof *lp, 2);
    lp->P = NULL;
    luaL_setmetatable(L, PROFILE);
    lua_createtable(L, 0, 3);
    lua_newtable(L);
    lua_setfield(L, -2, CACHE_FUNCS);
    lua_setiuservalue(L, -2, UV_CACHE);
    return lp;
}

static int load_result(lua_State *L, LProfile *lp, int rc, CgProfile *P,
                       const CgError *err)
{
    if (rc == CG_ENOMEM) {
        /* the message Lua's own memory errors carry: no "file:line: " */
        lua_pushliteral(L, "not enough memory");
        return lua_error(L);
    }
    if (rc) {
        lua_pushnil(L);
        lua_pushstring(L, err->msg);
        return 2;
    }
    lp->P = P;
    return 1;
}

/* The progress callback: calls the Lua function in a protected call (a
 * Lua error must not unwind through the loader, which holds memory). An
 * error is kept on the stack and cancels the load. */
typedef struct Progress {
    lua_State *L;
    int fn;                      /* stack index of the function */
    int raised;                  /* its error is on the stack top */
} Progress;

static int progress_cb(void *ud, uint64_t done, uint64_t total)
{
    Progress *pr = (Progress *)ud;
    lua_State *L = pr->L;
    int cancel;
    if (!lua_checkstack(L, 4)) {
        lua_pushliteral(L, "not enough memory");
        pr->raised = 1;
        return 1;
    }
    lua_pushvalue(L, pr->fn);
    lua_pushinteger(L, (lua_Integer)done);
    lua_pushinteger(L, (lua_Integer)total);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
        pr->raised = 1;
        return 1;
    }
    cancel = lua_isboolean(L, -1) && !lua_toboolean(L, -1);
    lua_pop(L, 1);
    return cancel;
}

/* Calls the function at stack index fn (0: none) while loading. */
static void set_progress(lua_State *L, CgLoadOpts *o, Progress *pr, int fn)
{
    pr->L = L;
    pr->fn = fn;
    pr->raised = 0;
    if (fn) {
        o->progress = progress_cb;
        o->ud = pr;
    }
}

/* callgrind.load(path or { path, ... } [, opts]) */
static int l_load(lua_State *L)
{
    int options, fn, rc;
    size_t n, i;
    const char **paths;
    LProfile *lp;
    CgProfile *P;
    CgError err;
    CgLoadOpts o;
    Progress pr;
    if (lua_type(L, 1) == LUA_TTABLE) {
        n = (size_t)lua_rawlen(L, 1);
        luaL_argcheck(L, n > 0, 1, "empty list of paths");
    } else {
        luaL_checkstring(L, 1);
        n = 1;
    }
    options = check_load_options(L, 2, &fn);
    /* the array lives on the stack: an error cannot leak it; the strings
     * stay in the argument table */
    paths = (const char **)lua_newuserdatauv(L, n * sizeof *paths, 0);
    if (lua_type(L, 1) == LUA_TTABLE) {
        for (i = 0; i < n; i++) {
            if (lua_rawgeti(L, 1, (lua_Integer)i + 1) != LUA_TSTRING)
                luaL_argerror(L, 1, lua_pushfstring(L, "path #%I is not a "
                              "string", (lua_Integer)i + 1));
            paths[i] = lua_tostring(L, -1);
            lua_pop(L, 1);
        }
    } else {
        paths[0] = lua_tostring(L, 1);
    }
    lp = new_profile(L);
    memset(&o, 0, sizeof o);
    o.options = options;
    set_progress(L, &o, &pr, fn);
    rc = cg_load_files(&P, paths, n, &o, &err);
    if (fn && pr.raised)
        return lua_error(L);     /* everything is freed already */
    return load_result(L, lp, rc, P, &err);
}

static int filelist_gc(lua_State *L)
{
    cg_file_list_free((CgFileList *)luaL_checkudata(L, 1, FILELIST));
    return 0;
}

/* callgrind.files(path) -> { path, ... } or nil, "dir: reason" */
static int l_files(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    CgFileList *l = (CgFileList *)lua_newuserdatauv(L, sizeof *l, 0);
    CgError err;
    size_t i;
    memset(l, 0, sizeof *l);
    luaL_setmetatable(L, FILELIST);   /* frees the list, even on error */
    if (cg_run_files(path, l, &err) != CG_OK) {
        if (err.status == CG_ENOMEM)
            return luaL_error(L, "not enough memory");
        lua_pushnil(L);
        lua_pushstring(L, err.msg);
        return 2;
    }
    lua_createtable(L, (int)l->n, 0);
    for (i = 0; i < l->n; i++) {
        lua_pushstring(L, l->paths[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    cg_file_list_free(l);
    return 1;
}

static int l_parse(lua_State *L)
{
    size_t len;
    const char *text = luaL_checklstring(L, 1, &len);
    const char *name = "(string)";
    int opt_arg = 3, rc, fn;
    LProfile *lp;
    CgProfile *P;
    CgError err;
    CgLoadOpts o;
    Progress pr;
    if (lua_type(L, 2) == LUA_TTABLE)
        opt_arg = 2;
    else
        name = luaL_optstring(L, 2, name);
    memset(&o, 0, sizeof o);
    o.options = check_load_options(L, opt_arg, &fn);
    lp = new_profile(L);
    /* the profile's storage is the string itself: keep it alive */
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, UV_TEXT);
    set_progress(L, &o, &pr, fn);
    rc = cg_load_text(&P, text, len, name, &o, &err);
    if (fn && pr.raised)
        return lua_error(L);     /* everything is freed already */
    return load_result(L, lp, rc, P, &err);
}

/* ---- registration ---- */

static const luaL_Reg profile_methods[] = {
    {"close", profile_close},
    {"totals", profile_totals},
    {"total", profile_total},
    {"warnings", profile_warnings},
    {"functions", profile_functions},
    {"calls", profile_calls},
    {"jumps", profile_jumps},
    {"lines", profile_lines},
    {"ulines", profile_ulines},
    {"parts", profile_parts},
    {"func", profile_func},
    {"memory", profile_memory},
    {NULL, NULL}
};

/* The Lua layer's helpers: plain functions of the module's `internal`
 * table, each taking the object first, so no public object carries them. */
static const luaL_Reg internal_funcs[] = {
    {"define", profile_define},
    {"ab_all", profile_ab_all},
    {"components", profile_components},
    {"self_all", profile_self_all},
    {"function_at", profile_function},
    {"event_defs", profile_event_defs},
    {"file_costs", profile_file_costs},
    {"annotate", profile_annotate},
    {"ab", func_ab},
    {"event_problem", profile_event_problem},
    {NULL, NULL}
};

static const luaL_Reg function_methods[] = {
    {"self", func_self},
    {"lines", func_lines},
    {"ulines", func_ulines},
    {"calls", func_calls},
    {"callers", func_callers},
    {"jumps", func_jumps},
    {NULL, NULL}
};

static const luaL_Reg call_methods[] = {
    {"cost", call_cost},
    {NULL, NULL}
};

static const luaL_Reg line_methods[] = {
    {"cost", line_cost},
    {NULL, NULL}
};

static const luaL_Reg no_methods[] = {
    {NULL, NULL}
};

static const luaL_Reg part_methods[] = {
    {"totals", part_totals},
    {NULL, NULL}
};

/* Makes metatable tname whose __index looks in a methods table (stored in
 * the module's `methods` table under short) and then calls fields. */
static void new_type(lua_State *L, const char *tname, const char *short_name,
                     const luaL_Reg *methods, lua_CFunction fields,
                     lua_CFunction tostring, int methods_idx)
{
    luaL_newmetatable(L, tname);
    luaL_newlib(L, no_methods);
    luaL_setfuncs(L, methods, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, methods_idx, short_name);
    if (fields) {
        lua_pushcfunction(L, fields);
        lua_pushcclosure(L, handle_index, 2);
    }
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, tname);
    lua_setfield(L, -2, "__name");
}

static const luaL_Reg module_funcs[] = {
    {"load", l_load},
    {"files", l_files},
    {"parse", l_parse},
    {NULL, NULL}
};

int luaopen_callgrind_core(lua_State *L);

__attribute__((visibility("default"))) int luaopen_callgrind_core(
    lua_State *L)
{
    int methods;
    luaL_newlib(L, module_funcs);
    cg_prof_register(L);
    lua_newtable(L);
    methods = lua_gettop(L);

    new_type(L, PROFILE, "Profile", profile_methods, profile_fields,
             profile_tostring, methods);
    lua_pushcfunction(L, profile_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, profile_close);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);

    new_type(L, FUNCTION, "Function", function_methods, func_fields,
             func_tostring, methods);
    lua_pop(L, 1);
    new_type(L, CALL, "Call", call_methods, call_fields, call_tostring,
             methods);
    lua_pushcfunction(L, call_eq);
    lua_setfield(L, -2, "__eq");
    lua_pop(L, 1);
    new_type(L, JUMP, "Jump", no_methods, jump_fields, jump_tostring,
             methods);
    lua_pop(L, 1);
    new_type(L, COSTLINE, "CostLine", line_methods, line_fields,
             line_tostring, methods);
    lua_pop(L, 1);
    /* parts are tables: their fields are raw, methods behind __index */
    new_type(L, PART, "Part", part_methods, NULL, part_tostring, methods);
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_pushvalue(L, -1);
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, PART_OWNER);
    luaL_newmetatable(L, FILELIST);
    lua_pushcfunction(L, filelist_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, FILELINES);
    lua_pushcfunction(L, filelines_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, CURSOR);
    lua_pop(L, 1);
    luaL_newmetatable(L, NAMES);
    lua_pushcfunction(L, names_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    luaL_newmetatable(L, DESC);
    lua_pushcfunction(L, desc_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    lua_setfield(L, -2, "methods");
    luaL_newlib(L, internal_funcs);
    lua_setfield(L, -2, "internal");
    return 1;
}
