/* The binding of the pictures and exports: gzip compression of a string
 * (lua/callgrind/pprof.lua), the calls of a function summed per callee and
 * the estimated call tree (lua/callgrind/stacks.lua). */
#include "cg_lua_visuals.h"
#include "cg_lua_handle.h"
#include "cg_lua_cost.h"
#include "cg_lua_func.h"
#include "cg_deflate.h"
#include "cg_stacks.h"

#include <stdlib.h>
#include <string.h>

/* internal.gzip(s) -> the gzip-compressed string, or nil and a message in
 * a build without zlib; raises when zlib fails. The
 * output buffer is a userdata, so an error leaks nothing; zlib's own state
 * lives only inside cg_gzip, which calls no Lua. */
int cgl_gzip(lua_State *L)
{
    size_t n, len = 0;
    const char *s = luaL_checklstring(L, 1, &n);
    size_t cap = cg_gzip_bound(n);
    unsigned char *buf = lua_newuserdatauv(L, cap, 0);
    int rc = cg_gzip((const unsigned char *)s, n, buf, cap, &len);
    if (rc == -2) {
        lua_pushnil(L);
        lua_pushstring(L, "gzip needs a build with zlib");
        return 2;
    }
    if (rc != 0)
        return luaL_error(L, "gzip: zlib failed (out of memory)");
    lua_pushlstring(L, (const char *)buf, len);
    return 1;
}

/* A callee and the summed cost of the calls to it. */
typedef struct CallSum {
    int64_t callee, cost;
} CallSum;

static int by_callee(const void *x, const void *y)
{
    int64_t a = ((const CallSum *)x)->callee, b = ((const CallSum *)y)->callee;
    return (a > b) - (a < b);
}

/* internal.call_costs(fn, ev) -> { callee index }, { cost }: fn's outgoing
 * calls summed per callee (callees in index order) for the event, without
 * a Call handle per call: the stacks estimate reads the calls of thousands
 * of functions per event. The scratch arrays are userdata (an error leaks
 * nothing). */
int cgl_func_call_costs(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    const int64_t *coefs;
    int pidx, ev;
    uint32_t i, n, m;
    int64_t *scratch;
    CallSum *sums;
    lua_settop(L, 2);
    pidx = cgl_push_owner(L, 1);
    ev = cgl_check_event(L, P, pidx, 2, &coefs);
    n = f->calls_end - f->calls_begin;
    scratch = lua_newuserdatauv(L, (P->stride ? P->stride : 1) * sizeof(int64_t), 0);
    sums = lua_newuserdatauv(L, (n ? n : 1) * sizeof(CallSum), 0);
    for (i = 0; i < n; i++) {
        const CgCall *c = &P->calls[f->calls_begin + i];
        cg_call_costs(P, c, scratch);
        sums[i].callee = c->callee;
        sums[i].cost = cgl_event_value(L, P, scratch, ev, coefs);
    }
    qsort(sums, n, sizeof *sums, by_callee);
    for (i = 0, m = 0; i < n; i++) {
        if (m > 0 && sums[m - 1].callee == sums[i].callee) {
            /* a sum past int64 is clamped: the estimate only compares */
            if (sums[i].cost > 0 && sums[m - 1].cost > INT64_MAX - sums[i].cost)
                sums[m - 1].cost = INT64_MAX;
            else
                sums[m - 1].cost += sums[i].cost;
        } else {
            sums[m++] = sums[i];
        }
    }
    lua_createtable(L, (int)m, 0);
    lua_createtable(L, (int)m, 0);
    for (i = 0; i < m; i++) {
        lua_pushinteger(L, (lua_Integer)sums[i].callee + 1);
        lua_rawseti(L, -3, (lua_Integer)i + 1);
        lua_pushinteger(L, (lua_Integer)sums[i].cost);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 2;
}

/* The frames of an estimate live in a userdata whose __gc frees them, so
 * that an error while they are copied to Lua leaks nothing. */
#define STACKS_BOX "callgrind.stacks_box"

static int stacks_box_gc(lua_State *L)
{
    cg_stacks_free((CgStacks *)luaL_checkudata(L, 1, STACKS_BOX));
    return 0;
}

/* internal.estimate(prof, ev, { root function index }, { root budget }, min)
 * -> { parent frame (0: a root) }, { function index }, { total }, { self }:
 * the frames of the estimated call tree (cg_stacks.h), children after
 * their parent, in order. */
int cgl_profile_estimate(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const int64_t *coefs;
    int ev = cgl_check_event(L, P, 1, 2, &coefs);
    lua_Integer n, i, min = luaL_checkinteger(L, 5);
    int32_t *funcs;
    int64_t *budgets;
    CgStacks *s;
    int rc;
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_checktype(L, 4, LUA_TTABLE);
    n = (lua_Integer)lua_rawlen(L, 3);
    funcs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *funcs, 0);
    budgets = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *budgets, 0);
    for (i = 0; i < n; i++) {
        lua_Integer f, b;
        lua_rawgeti(L, 3, i + 1);
        f = lua_tointeger(L, -1);
        lua_rawgeti(L, 4, i + 1);
        b = lua_tointeger(L, -1);
        lua_pop(L, 2);
        luaL_argcheck(L, f >= 1 && (size_t)f <= P->nfuncs, 3, "function index out of range");
        funcs[i] = (int32_t)(f - 1);
        budgets[i] = (int64_t)b;
    }
    s = lua_newuserdatauv(L, sizeof *s, 0);
    memset(s, 0, sizeof *s);
    if (luaL_newmetatable(L, STACKS_BOX)) {
        lua_pushcfunction(L, stacks_box_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    rc = cg_stacks_estimate(P, ev, coefs, funcs, budgets, (size_t)n, (int64_t)min, s);
    if (rc == CG_ENOMEM)
        return luaL_error(L, "estimate: out of memory");
    if (rc != CG_OK)
        return luaL_error(L, "estimate: a derived event's value does not fit in 64 bits");
    lua_createtable(L, (int)s->n, 0);
    lua_createtable(L, (int)s->n, 0);
    lua_createtable(L, (int)s->n, 0);
    lua_createtable(L, (int)s->n, 0);
    for (i = 0; i < (lua_Integer)s->n; i++) {
        const CgFrame *f = &s->frames[i];
        lua_pushinteger(L, (lua_Integer)f->parent + 1);
        lua_rawseti(L, -5, i + 1);
        lua_pushinteger(L, (lua_Integer)f->func + 1);
        lua_rawseti(L, -4, i + 1);
        lua_pushinteger(L, (lua_Integer)f->total);
        lua_rawseti(L, -3, i + 1);
        lua_pushinteger(L, (lua_Integer)f->self);
        lua_rawseti(L, -2, i + 1);
    }
    cg_stacks_free(s);
    return 4;
}
