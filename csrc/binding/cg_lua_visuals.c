/* The binding of the pictures and exports: gzip compression, streamed
 * (lua/callgrind/pprof.lua) and the estimated call tree
 * (lua/callgrind/stacks.lua). */
#include "cg_lua_visuals.h"
#include "cg_lua_handle.h"
#include "cg_lua_cost.h"
#include "cg_lua_func.h"
#include "cg_deflate.h"
#include "cg_libs.h"
#include "cg_stacks.h"
#include "cg_folded.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

/* internal.gzip_stream() -> a function gz: gz(piece) compresses a piece,
 * gz() returns the whole gzip member (and the stream is done), or nil and a
 * message in a build without zlib. The stream lives in the function's
 * upvalue, a userdata whose __gc frees it, so an error in between leaks
 * nothing. */
#define GZS_BOX "callgrind.gzip_stream"

static int gzs_gc(lua_State *L)
{
    CgGzStream **box = (CgGzStream **)luaL_checkudata(L, 1, GZS_BOX);
    cg_gzs_free(*box);
    *box = NULL;
    return 0;
}

static int gzs_feed(lua_State *L)
{
    CgGzStream **box = (CgGzStream **)lua_touserdata(L, lua_upvalueindex(1));
    const unsigned char *out;
    size_t n, len;
    if (!*box)
        return luaL_error(L, "gzip stream: already finished");
    if (!lua_isnoneornil(L, 1)) {
        const char *s = luaL_checklstring(L, 1, &n);
        if (cg_gzs_add(*box, (const unsigned char *)s, n) != 0)
            return luaL_error(L, "gzip: zlib failed (out of memory)");
        return 0;
    }
    if (cg_gzs_finish(*box, &out, &len) != 0)
        return luaL_error(L, "gzip: zlib failed (out of memory)");
    lua_pushlstring(L, (const char *)out, len);
    cg_gzs_free(*box);
    *box = NULL;
    return 1;
}

int cgl_gzip_stream(lua_State *L)
{
    int why = 0;
    CgGzStream **box = (CgGzStream **)lua_newuserdatauv(L, sizeof *box, 0);
    *box = NULL;
    if (luaL_newmetatable(L, GZS_BOX)) {
        lua_pushcfunction(L, gzs_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    if (!(*box = cg_gzs_new(&why))) {
        if (why == -2) {
            lua_pushnil(L);
            lua_pushstring(L, "gzip needs a build with zlib");
            return 2;
        }
#ifndef CG_NO_ZLIB
        if (why == -3) {
            const char *reason;
            cg_zlib(&reason);
            lua_pushnil(L);
            lua_pushfstring(L, "gzip: %s", reason);
            return 2;
        }
#endif
        return luaL_error(L, "gzip: zlib failed (out of memory)");
    }
    lua_pushcclosure(L, gzs_feed, 1);
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

/* The calls into each function live in a userdata whose __gc frees them
 * while they are copied to Lua. */
#define IN_CALLS_BOX "callgrind.in_calls_box"
static int in_calls_box_gc(lua_State *L)
{
    cg_in_calls_free((CgInCalls *)luaL_checkudata(L, 1, IN_CALLS_BOX));
    return 0;
}

/* internal.in_calls(prof, ev) -> box, { E by function index }: the calls
 * into each function by caller (cg_stacks.h), kept in box for
 * internal.best_caller, and E(f), the cost of the calls into f from
 * other functions than f. */
int cgl_profile_in_calls(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const int64_t *coefs;
    int ev = cgl_check_event(L, P, 1, 2, &coefs);
    CgInCalls *c = lua_newuserdatauv(L, sizeof *c, 0);
    size_t i;
    int rc;
    memset(c, 0, sizeof *c);
    if (luaL_newmetatable(L, IN_CALLS_BOX)) {
        lua_pushcfunction(L, in_calls_box_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    rc = cg_stacks_in_calls(P, ev, coefs, c);
    if (rc == CG_ENOMEM)
        return luaL_error(L, "in_calls: out of memory");
    if (rc != CG_OK)
        return luaL_error(L, "in_calls: a derived event's value does not fit in 64 bits");
    lua_createtable(L, (int)P->nfuncs, 0);
    for (i = 0; i < P->nfuncs; i++) {
        uint32_t k;
        int64_t e = 0;
        for (k = c->start[i]; k < c->start[i + 1]; k++)
            if ((size_t)c->caller[k] != i)
                e += c->cost[k];
        lua_pushinteger(L, (lua_Integer)e);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 2;
}

/* internal.best_caller(box, f, has) -> the index of f's costliest caller
 * (its calls to f summed; the first of equals in index order) other than
 * f for which has[index] is not nil, or nil. */
int cgl_best_caller(lua_State *L)
{
    const CgInCalls *c = luaL_checkudata(L, 1, IN_CALLS_BOX);
    lua_Integer f = luaL_checkinteger(L, 2);
    uint32_t k;
    int32_t best = -1;
    int64_t best_cost = 0;
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_argcheck(L, c->start && f >= 1 && (lua_Integer)(c->nfuncs) >= f, 2, "function index out of range");
    for (k = c->start[f - 1]; k < c->start[f]; k++) {
        int32_t g = c->caller[k];
        if ((lua_Integer)g + 1 == f || (best >= 0 && c->cost[k] <= best_cost))
            continue;
        if (lua_rawgeti(L, 3, (lua_Integer)g + 1) != LUA_TNIL) {
            best = g;
            best_cost = c->cost[k];
        }
        lua_pop(L, 1);
    }
    if (best < 0)
        return 0;
    lua_pushinteger(L, (lua_Integer)best + 1);
    return 1;
}

/* A trie of folded stacks lives in a userdata whose __gc frees it, so
 * that an error while it is copied to Lua leaks nothing. */
#define FOLDED_BOX "callgrind.folded_box"

static int folded_box_gc(lua_State *L)
{
    cg_folded_free((CgFolded *)luaL_checkudata(L, 1, FOLDED_BOX));
    return 0;
}

/* The kept nodes of f (pruned at threshold * total) as the table
 * folded_tree returns. */
static void push_folded(lua_State *L, CgFolded *f, double threshold, int all)
{
    double m = threshold * (double)f->total;
    int64_t min = m <= 0 ? 0 : m >= 9.2e18 ? INT64_MAX : (int64_t)m;
    int32_t *order, *remap;
    size_t nkept = 0, i, nnames = 0;
    int64_t top_self = 0;
    if ((double)min < m)
        min++;                          /* the ceiling: total >= m */
    order = lua_newuserdatauv(L, (f->n ? f->n : 1) * sizeof *order, 0);
    remap = lua_newuserdatauv(L, (f->nnames ? f->nnames : 1) * sizeof *remap, 0);
    for (i = 0; i < f->nnames; i++)
        remap[i] = 0;
    cg_folded_prune(f, min, order, &nkept, &top_self);
    lua_createtable(L, 0, 12);
    lua_pushinteger(L, (lua_Integer)f->total);
    lua_setfield(L, -2, "total");
    lua_pushinteger(L, (lua_Integer)top_self);
    lua_setfield(L, -2, "top_self");
    lua_pushinteger(L, (lua_Integer)f->n);
    lua_setfield(L, -2, "nodes");
    lua_pushinteger(L, (lua_Integer)f->nnames);
    lua_setfield(L, -2, "distinct");
    lua_pushinteger(L, (lua_Integer)f->lines);
    lua_setfield(L, -2, "lines");
    lua_pushinteger(L, (lua_Integer)f->max_line);
    lua_setfield(L, -2, "max_line");
    lua_createtable(L, (int)nkept, 0);      /* parent (0: a root) */
    lua_createtable(L, (int)nkept, 0);      /* name */
    lua_createtable(L, (int)nkept, 0);      /* total */
    lua_createtable(L, (int)nkept, 0);      /* self */
    lua_createtable(L, 0, 0);               /* names */
    for (i = 0; i < nkept; i++) {
        const CgFoldedNode *nd = &f->nodes[order[i]];
        /* a kept node's position, found by its parent: depth-first order
         * numbers kept in the order array's own slots are not at hand, so
         * the node's depth field holds it from here on */
        lua_Integer up = nd->parent < 0 ? 0 : f->nodes[nd->parent].depth;
        lua_pushinteger(L, up);
        lua_rawseti(L, -6, (lua_Integer)i + 1);
        if (!remap[nd->name]) {
            remap[nd->name] = (int32_t)++nnames;
            lua_pushlstring(L, f->arena + f->off[nd->name], f->len[nd->name]);
            lua_rawseti(L, -2, (lua_Integer)nnames);
        }
        lua_pushinteger(L, remap[nd->name]);
        lua_rawseti(L, -5, (lua_Integer)i + 1);
        lua_pushinteger(L, (lua_Integer)nd->total);
        lua_rawseti(L, -4, (lua_Integer)i + 1);
        lua_pushinteger(L, (lua_Integer)nd->self);
        lua_rawseti(L, -3, (lua_Integer)i + 1);
        f->nodes[order[i]].depth = (int32_t)(i + 1);
    }
    lua_setfield(L, -6, "names");
    lua_setfield(L, -5, "self");
    lua_setfield(L, -4, "total_of");
    lua_setfield(L, -3, "name");
    lua_setfield(L, -2, "parent");
    if (all) {
        lua_createtable(L, (int)f->nnames, 0);
        for (i = 0; i < f->nnames; i++) {
            lua_pushlstring(L, f->arena + f->off[i], f->len[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "all_names");
    }
}

/* internal.folded_tree(path_or_text, threshold, is_text, all_names) -> a table:
 * total, top_self (the pruned roots' cost), nodes, distinct (names),
 * lines, max_line (the trie's counters), and the kept frames, children
 * after their parent in order: parent (0: a root), name (into names),
 * total_of, self; or nil, "bad", line number, the line's first bytes; or
 * nil, "io", the system's message. Raises out of memory. all_names:
 * all_names too, every distinct name. */
int cgl_folded_tree(lua_State *L)
{
    size_t len;
    const char *src = luaL_checklstring(L, 1, &len);
    double threshold = luaL_checknumber(L, 2);
    int is_text = lua_toboolean(L, 3), rc;
    CgFolded *f = lua_newuserdatauv(L, sizeof *f, 0);
    memset(f, 0, sizeof *f);
    if (luaL_newmetatable(L, FOLDED_BOX)) {
        lua_pushcfunction(L, folded_box_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    rc = is_text ? cg_folded_read_buffer(f, src, len) : cg_folded_read_file(f, src);
    if (rc == CG_EIO) {
        lua_pushnil(L);
        lua_pushliteral(L, "io");
        lua_pushstring(L, strerror(errno));
        return 3;
    }
    if (rc == CG_EBAD) {
        lua_pushnil(L);
        lua_pushliteral(L, "bad");
        lua_pushinteger(L, (lua_Integer)f->bad_line);
        lua_pushlstring(L, f->bad_text, f->bad_len);
        return 4;
    }
    if (rc == CG_ELIMIT)
        return luaL_error(L, "folded stacks: more than 2^31 - 1 distinct stacks or names");
    if (rc != CG_OK)
        return luaL_error(L, "folded stacks: out of memory");
    push_folded(L, f, threshold, lua_toboolean(L, 4));
    cg_folded_free(f);
    return 1;
}

/* Appends s[0, n) to b with & < > " as XML entities. */
static void add_xml(luaL_Buffer *b, const char *s, size_t n)
{
    size_t i, from = 0;
    for (i = 0; i < n; i++) {
        const char *e = s[i] == '&' ? "&amp;" : s[i] == '<' ? "&lt;" : s[i] == '>' ? "&gt;"
                      : s[i] == '"' ? "&quot;" : NULL;
        if (e) {
            luaL_addlstring(b, s + from, i - from);
            luaL_addstring(b, e);
            from = i + 1;
        }
    }
    luaL_addlstring(b, s + from, n - from);
}

/* A frame's label as flame.lua's fit: "" below 3 characters of room,
 * the name when it fits, else its first room - 2 characters and "..". */
static void add_label(luaL_Buffer *b, const char *s, size_t n, double w)
{
    double room = floor((w - 6) / 7);
    size_t chars = 0, i, cut = 0;
    if (room < 3)
        return;
    for (i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            chars++;
    if ((double)chars <= room) {
        add_xml(b, s, n);
        return;
    }
    for (i = 0, chars = 0; i < n; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80 && ++chars == (size_t)room - 1) {
            cut = i;
            break;
        }
    }
    add_xml(b, s, cut);
    luaL_addstring(b, "..");
}

/* v grouped by three digits with commas (v >= 0). */
static void add_commas(luaL_Buffer *b, int64_t v)
{
    char d[32];
    int n = snprintf(d, sizeof d, "%lld", (long long)v), i;
    for (i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            luaL_addchar(b, ',');
        luaL_addchar(b, d[i]);
    }
}

/* internal.flame_frames(names, fills, parent, name, total_of, scale,
 * height, total, xev) -> the SVG text of the frames below the top, as
 * flame.lua's svg() writes them (the same bytes): frames in depth-first
 * order (parent 0: a root), names printable, fills per name, xev the
 * event's name made XML. */
int cgl_flame_frames(lua_State *L)
{
    lua_Integer n, k, height = luaL_checkinteger(L, 7), grand = luaL_checkinteger(L, 8);
    double scale = luaL_checknumber(L, 6);
    size_t xevlen;
    const char *xev = luaL_checklstring(L, 9, &xevlen);
    int32_t *depth;
    double *xs;
    luaL_Buffer b;
    int i;
    for (i = 1; i <= 5; i++)
        luaL_checktype(L, i, LUA_TTABLE);
    n = (lua_Integer)lua_rawlen(L, 3);
    depth = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *depth, 0);
    xs = lua_newuserdatauv(L, (size_t)(n + 3) * sizeof *xs, 0);
    xs[1] = 0;
    luaL_buffinit(L, &b);
    for (k = 1; k <= n; k++) {
        lua_Integer p = (lua_rawgeti(L, 3, k), lua_tointeger(L, -1));
        lua_Integer nm = (lua_rawgeti(L, 4, k), lua_tointeger(L, -1));
        lua_Integer tot = (lua_rawgeti(L, 5, k), lua_tointeger(L, -1));
        size_t len, flen;
        const char *name, *fill;
        char num[160];
        int d;
        double x, w;
        lua_pop(L, 3);
        if (p < 0 || p >= k)
            return luaL_error(L, "flame_frames: frame %d's parent is not before it", (int)k);
        d = depth[k] = p == 0 ? 1 : depth[p] + 1;
        lua_rawgeti(L, 1, nm);
        lua_rawgeti(L, 2, nm);
        /* the strings stay in the tables: popped before the buffer grows */
        name = lua_tolstring(L, -2, &len);
        fill = lua_tolstring(L, -1, &flen);
        lua_pop(L, 2);
        if (!name || !fill)
            return luaL_error(L, "flame_frames: frame %d has no name or fill", (int)k);
        x = xs[d];
        w = (double)tot * scale;
        luaL_addstring(&b, "<g class=\"f\"><title>");
        add_xml(&b, name, len);
        luaL_addchar(&b, '\n');
        add_commas(&b, tot);
        luaL_addchar(&b, ' ');
        luaL_addlstring(&b, xev, xevlen);
        if (grand == 0) {
            luaL_addstring(&b, " (0%)");
        } else {
            snprintf(num, sizeof num, " (%.2f%%)", (double)(lua_Integer)((lua_Unsigned)tot * 100u) / (double)grand);
            luaL_addstring(&b, num);
        }
        snprintf(num, sizeof num, "</title><rect x=\"%.2f\" y=\"%lld\" width=\"%.2f\" height=\"%d\" fill=\"", x,
                 (long long)(height - 24 - (lua_Integer)(d + 1) * 16), w, 15);
        luaL_addstring(&b, num);
        luaL_addlstring(&b, fill, flen);
        snprintf(num, sizeof num, "\"/><text x=\"%.2f\" y=\"%lld\">", x + 3,
                 (long long)(height - 24 - (lua_Integer)(d + 1) * 16 + 12));
        luaL_addstring(&b, num);
        add_label(&b, name, len, w);
        luaL_addstring(&b, "</text></g>\n");
        xs[d + 1] = x;
        xs[d] = x + w;
    }
    luaL_pushresult(&b);
    return 1;
}
