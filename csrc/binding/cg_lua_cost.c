/* Events and costs: an event argument (a base event's name or index, or
 * a derived event's name) resolved, derived events registered, cost
 * vectors turned into numbers or cost tables, and the tables people print
 * (costs, event names, desc entries). The arithmetic is cg_query.c's. */
#include "cg_lua_cost.h"
#include "cg_lua_handle.h"
#include "cg_query.h"

#include <string.h>

/* The derived event named s of the profile at pidx: its coefficients over
 * the base events, or NULL. */
static const int64_t *derived_coefs(lua_State *L, int pidx, const char *s)
{
    const int64_t *c = NULL;
    cgl_push_state(L, pidx);
    if (lua_getfield(L, -1, STATE_DERIVED) == LUA_TTABLE &&
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
    cgl_push_state(L, pidx);         /* the derived names, below the buffer */
    lua_getfield(L, -1, STATE_DERIVED_ORDER);
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
int cgl_find_event(lua_State *L, const CgProfile *P, int pidx, int arg,
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

/* Resolves ev at arg (see cgl_find_event), raising an argument error when it
 * is no event. */
int cgl_check_event(lua_State *L, const CgProfile *P, int pidx, int arg,
                    const int64_t **coefs)
{
    int ev = cgl_find_event(L, P, pidx, arg, coefs);
    if (ev == -2)
        luaL_argerror(L, arg, lua_tostring(L, -1));
    return ev;
}

/* internal.event_problem(prof, ev) -> nil when ev is an event of prof,
 * else why not (for the Lua layer's own argument errors). */
int cgl_profile_event_problem(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const int64_t *coefs;
    lua_settop(L, 2);
    if (cgl_find_event(L, P, 1, 2, &coefs) != -2)
        lua_pushnil(L);
    return 1;
}

/* v[ev], or the derived event's linear combination of v. */
int64_t cgl_event_value(lua_State *L, const CgProfile *P, const int64_t *v,
                        int ev, const int64_t *coefs)
{
    int64_t sum;
    if (cg_event_value(P, v, ev, coefs, &sum))
        luaL_error(L, "a derived event's value does not fit in 64 bits");
    return sum;
}

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
int cgl_names_tostring(lua_State *L)
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
int cgl_desc_tostring(lua_State *L)
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
void cgl_set_costs_mt(lua_State *L, int pidx)
{
    pidx = lua_absindex(L, pidx);
    cgl_push_state(L, pidx);
    if (lua_getfield(L, -1, STATE_COSTS_MT) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 3);
        lua_pushliteral(L, "callgrind.Costs");
        lua_setfield(L, -2, "__name");
        lua_pushcfunction(L, costs_tostring);
        lua_setfield(L, -2, "__tostring");
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, STATE_COSTS_MT);
    }
    lua_getfield(L, pidx, "events");   /* the cached events list */
    lua_setfield(L, -2, "events");
    lua_setmetatable(L, -3);
    lua_pop(L, 1);
}

/* cost(ev) -> integer (ev a base or derived event); cost() -> { base
 * event = n, ... }. pidx: the profile. */
int cgl_push_costs(lua_State *L, const CgProfile *P, int pidx,
                   const int64_t *v, int arg)
{
    size_t i;
    if (!lua_isnoneornil(L, arg)) {
        const int64_t *coefs;
        int ev = cgl_check_event(L, P, pidx, arg, &coefs);
        lua_pushinteger(L, (lua_Integer)cgl_event_value(L, P, v, ev, coefs));
        return 1;
    }
    lua_createtable(L, 0, (int)P->nev);
    for (i = 0; i < P->nev; i++) {
        lua_pushlstring(L, P->events[i].ptr, P->events[i].len);
        lua_pushinteger(L, (lua_Integer)v[i]);
        lua_rawset(L, -3);
    }
    cgl_set_costs_mt(L, pidx);
    return 1;
}

/* internal.define(prof, name, { base = coefficient, ... }): registers a derived
 * event for every cost accessor. The Lua layer parses formulas. */
int cgl_profile_define(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
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
    cgl_push_state(L, 1);
    if (lua_getfield(L, -1, STATE_DERIVED) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, STATE_DERIVED);
    }
    lua_pushvalue(L, -3);        /* the coefficients */
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
    if (lua_getfield(L, -1, STATE_DERIVED_ORDER) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, STATE_DERIVED_ORDER);
    }
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    return 0;
}

/* The totals of the profile at pidx, summed once and kept in its state table:
 * prof:total(ev) is called once per event, and summing parts x events at
 * each call made that loop parts x events^2 (hours for 64 KB of inherited
 * parts with 4096 events). Leaves the userdata on the stack. */
static const int64_t *cached_totals(lua_State *L, int pidx,
                                    const CgProfile *P)
{
    int64_t *v;
    cgl_push_state(L, pidx);
    if (lua_getfield(L, -1, STATE_TOTALS) == LUA_TUSERDATA) {
        v = (int64_t *)lua_touserdata(L, -1);
    } else {
        lua_pop(L, 1);
        v = (int64_t *)lua_newuserdatauv(L, (P->nev + 1) * sizeof *v, 0);
        if (cg_totals(P, v))     /* the loader checked these sums */
            luaL_error(L, "%s: a total does not fit in 64 bits", P->name);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, STATE_TOTALS);
    }
    lua_remove(L, -2);
    return v;
}

int cgl_profile_totals(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    lua_settop(L, 2);
    return cgl_push_costs(L, P, 1, cached_totals(L, 1, P), 2);
}

int cgl_profile_total(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    return cgl_push_costs(L, P, 1, cached_totals(L, 1, P), 2);
}

void cgl_push_events(lua_State *L, int pidx, const CgProfile *P)
{
    size_t i;
    cgl_push_state(L, pidx);
    if (lua_getfield(L, -1, STATE_EVENTS) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_createtable(L, (int)P->nev, 0);
        for (i = 0; i < P->nev; i++) {
            cgl_push_str(L, P->events[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        luaL_setmetatable(L, NAMES);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, STATE_EVENTS);
    }
    lua_remove(L, -2);
}

/* internal.event_defs(prof) -> { { name=, formula=, long_name=, line= }, ... }
 * as the file's event: lines wrote them. */
int cgl_profile_event_defs(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    size_t i;
    lua_createtable(L, (int)P->nevent_defs, 0);
    for (i = 0; i < P->nevent_defs; i++) {
        const CgEventDef *d = &P->event_defs[i];
        lua_createtable(L, 0, 4);
        cgl_push_str(L, d->name);
        lua_setfield(L, -2, "name");
        cgl_push_str(L, d->formula);
        lua_setfield(L, -2, "formula");
        cgl_push_str(L, d->long_name);
        lua_setfield(L, -2, "long_name");
        lua_pushinteger(L, (lua_Integer)d->line);
        lua_setfield(L, -2, "line");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}
