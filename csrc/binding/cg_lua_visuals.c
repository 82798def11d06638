/* The binding of the pictures and exports: gzip compression of a string
 * (lua/callgrind/pprof.lua) and the estimated call tree
 * (lua/callgrind/stacks.lua). */
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

/* The frames of an estimate live in a userdata whose __gc frees them, so
 * that an error while they are copied to Lua leaks nothing. */
#define STACKS_BOX "callgrind.stacks_box"

static int stacks_box_gc(lua_State *L)
{
    cg_stacks_free((CgStacks *)luaL_checkudata(L, 1, STACKS_BOX));
    return 0;
}

/* internal.estimate(prof, ev, { root function index }, { root budget }, min, rmin)
 * -> { parent frame (0: a root) }, { function index }, { total }, { self }:
 * the frames of the estimated call tree (cg_stacks.h), children after
 * their parent, in order. */
int cgl_profile_estimate(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const int64_t *coefs;
    int ev = cgl_check_event(L, P, 1, 2, &coefs);
    lua_Integer n, i, min = luaL_checkinteger(L, 5), rmin = luaL_checkinteger(L, 6);
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
    rc = cg_stacks_estimate(P, ev, coefs, funcs, budgets, (size_t)n, (int64_t)min, (int64_t)rmin, s);
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
