/* The stack record's Lua face (cg_lua_stacks.h): written from the
 * profiler's trie (csrc/writer/cg_stackrec.h), read back
 * (csrc/reader/cg_stackrec_read.h) as the flat array of the profiler's
 * data.stacks, or straight into folded text; and the folded text of
 * collected stacks (core.prof_write_folded), beside the record. */
#define _POSIX_C_SOURCE 200809L
#include "cg_lua_stacks.h"
#include "cg_lua_handle.h"
#include "cg_atomic.h"
#include "cg_stackrec.h"
#include "cg_stackrec_read.h"
#include "cg_prof_state.h"
#include "cg_stacktree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scratch for n items of size bytes that lives as long as a userdata on
 * the stack. */
static void *scratch(lua_State *L, size_t n, size_t size)
{
    if (n > ((size_t)-1 - 1) / (size ? size : 1))
        luaL_error(L, "too many stacks");
    return lua_newuserdatauv(L, n * size + 1, 0);
}

/* The strings of the array at idx (n of them) into out; each one checked
 * to have no tab, newline or carriage return (the record's separators). */
static void strings(lua_State *L, int idx, size_t n, CgStr *out,
                    const char *what)
{
    size_t i;
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "stack record: %s[%d] is not a string", what, (int)i + 1);
        out[i].ptr = lua_tolstring(L, -1, &out[i].len);
        if (strpbrk(out[i].ptr, "\t\n\r") != NULL || strlen(out[i].ptr) != out[i].len)
            luaL_error(L, "stack record: %s[%d] has a tab, a line break or a NUL", what, (int)i + 1);
        lua_pop(L, 1);          /* still in its table */
    }
}

/* What an atomic write returned, as core.write_file_atomic gives it: true,
 * or nil, the message and its kind ("memory" or "io"). */
static int written(lua_State *L, int rc, const char *msg)
{
    if (rc != CG_OK) {
        lua_pushnil(L);
        lua_pushstring(L, msg);
        lua_pushstring(L, rc == CG_ENOMEM ? "memory" : "io");
        return 3;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* The stacks argument at 2 of a write: data.stacks (a table: NULL), or
 * the number of nodes still in the collector's state (the profiler's
 * live stacks: the state, checked to hold them still). */
static const Prof *collected_stacks(lua_State *L)
{
    const Prof *P;
    if (lua_type(L, 2) != LUA_TNUMBER) {
        luaL_checktype(L, 2, LUA_TTABLE);
        return NULL;
    }
    P = cg_prof_get(L);
    luaL_argcheck(L, P != NULL && !P->running && P->stacks
                         && lua_tointeger(L, 2) == (lua_Integer)P->nnode,
                  2, "the collected stacks are gone");
    return P;
}

/* The collector's nodes, read where they are while the record is
 * written (cg_rec_fill): their costs in the events it collected. */
typedef struct ProfNodes {
    const Prof *P;
    size_t nev;
} ProfNodes;

static void prof_nodes(void *ud, size_t from, size_t n, int32_t *parent,
                       int32_t *fn, int64_t *cost)
{
    const ProfNodes *pn = (const ProfNodes *)ud;
    const Node *x = &pn->P->nodes[from];
    size_t i;
    for (i = 0; i < n; i++) {
        parent[i] = x[i].parent;
        fn[i] = x[i].fn;
    }
    cg_prof_node_costs(pn->P, from, n, cost, pn->nev);
}

/* The nodes into R: the collector's (pn->P, not NULL: read in place,
 * checked here) or the data.stacks table at 2 (copied). */
static void record_nodes(lua_State *L, ProfNodes *pn, CgRecOut *R)
{
    size_t i, e, nev = R->nev, width = 2 + nev;
    const Prof *P = pn->P;
    int32_t *ints;
    int64_t *cost;
    R->n = P != NULL ? P->nnode : lua_rawlen(L, 2) / width;
    if (R->n > (size_t)INT32_MAX)
        luaL_error(L, "stack record: too many nodes");
    if (P != NULL) {
        for (i = 0; i < R->n; i++) {
            const Node *x = &P->nodes[i];
            if (x->parent < -1 || x->parent >= (int32_t)i || x->fn < 0
                || (size_t)x->fn >= R->nfn)
                luaL_error(L, "stack record: node %d is not parent (an earlier node or none), function", (int)i + 1);
        }
        pn->nev = nev;
        R->nodes = prof_nodes;
        R->node_ud = pn;
        return;
    }
    ints = scratch(L, R->n, 2 * sizeof *ints);
    cost = scratch(L, R->n * nev, sizeof *cost);
    for (i = 0; i < R->n; i++) {
        lua_Integer base = (lua_Integer)(i * width);
        int64_t p, f;
        int okp, okf;
        lua_rawgeti(L, 2, base + 1);
        lua_rawgeti(L, 2, base + 2);
        p = (int64_t)lua_tointegerx(L, -2, &okp) - 1;
        f = (int64_t)lua_tointegerx(L, -1, &okf) - 1;
        lua_pop(L, 2);
        if (!okp || !okf)
            p = f = -2;
        for (e = 0; e < nev; e++) {
            lua_rawgeti(L, 2, base + 3 + (lua_Integer)e);
            cost[i * nev + e] = (int64_t)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
        if (p < -1 || p >= (int64_t)i || f < 0 || (uint64_t)f >= R->nfn)
            luaL_error(L, "stack record: node %d is not parent (an earlier node or none), function", (int)i + 1);
        ints[i] = (int32_t)p;
        ints[R->n + i] = (int32_t)f;
    }
    R->parent = ints;
    R->fn = ints + R->n;
    R->cost = cost;
}

/* internal.write_stack_record(path, stacks, events, files, names, digest)
 * -> true, or nil, "path: reason", kind ("io", "memory"): the record of
 * the collected stacks to path, whole or not at all (the atomic writer).
 * stacks: data.stacks (parent, function, a cost per event, a node after
 * another), or the number of nodes still in the collector's state (the
 * profiler's live stacks); events, files and names: arrays of strings
 * (files[f], names[f]: function f, made safe as the profile's); digest:
 * the 16 hex digits of the profile's end line. */
int cgl_write_stack_record(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t dlen;
    const char *digest = luaL_checklstring(L, 6, &dlen);
    ProfNodes pn;
    CgRecOut R;
    CgStr *strs;
    char msg[1024];
    int rc;
    memset(&R, 0, sizeof R);
    luaL_argcheck(L, strlen(path) == lua_rawlen(L, 1), 1, "path contains a NUL byte");
    pn.P = collected_stacks(L);
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_checktype(L, 4, LUA_TTABLE);
    luaL_checktype(L, 5, LUA_TTABLE);
    luaL_argcheck(L, dlen == 16 && strspn(digest, "0123456789abcdef") == 16, 6,
                  "not 16 hex digits");
    R.profile = digest;
    R.nev = lua_rawlen(L, 3);
    R.nfn = lua_rawlen(L, 4);
    luaL_argcheck(L, R.nev >= 1 && R.nev <= CG_REC_MAX_EV, 3, "1 to 64 events");
    luaL_argcheck(L, lua_rawlen(L, 5) == R.nfn, 5, "as many names as files");
    if (R.nfn > (size_t)INT32_MAX)
        return luaL_error(L, "stack record: too many functions");
    strs = scratch(L, R.nev + 2 * R.nfn, sizeof *strs);
    strings(L, 3, R.nev, strs, "events");
    strings(L, 4, R.nfn, strs + R.nev, "files");
    strings(L, 5, R.nfn, strs + R.nev + R.nfn, "names");
    R.events = strs;
    R.files = strs + R.nev;
    R.names = strs + R.nev + R.nfn;
    record_nodes(L, &pn, &R);
    /* no Lua call until the file is written */
    rc = cg_write_atomic_with(path, cg_rec_fill, &R, 0, msg, sizeof msg);
    return written(L, rc, msg);
}

/* ---- the folded text of collected stacks ---- */

/* The parent, function and first cost of n nodes into ints[0..n),
 * ints[n..2n) and costs: the collector's nodes when P is not NULL, else
 * the data.stacks table at 2 (`width` integers a node). Raises on a node
 * that is not one of n, nfn names. */
static void read_nodes(lua_State *L, const Prof *P, size_t n, size_t nfn,
                       lua_Integer width, int32_t *ints, int64_t *costs)
{
    size_t i;
    for (i = 0; P != NULL && i < n; i++) {
        const Node *x = &P->nodes[i];
        Cost self;
        if (x->parent >= (int32_t)i || x->fn < 0 || (size_t)x->fn >= nfn)
            luaL_error(L, "stacks: node %d has no function name", (int)i + 1);
        ints[i] = x->parent;
        ints[n + i] = x->fn;
        cg_prof_node_cost(P, i, &self);
        costs[i] = self.v[EV_INSTR];
    }
    for (i = 0; P == NULL && i < n; i++) {
        lua_Integer base = (lua_Integer)i * width, p, f, c;
        int okp, okf, okc;
        lua_rawgeti(L, 2, base + 1);
        lua_rawgeti(L, 2, base + 2);
        lua_rawgeti(L, 2, base + 3);
        p = lua_tointegerx(L, -3, &okp);
        f = lua_tointegerx(L, -2, &okf);
        c = lua_tointegerx(L, -1, &okc);
        lua_pop(L, 3);
        if (!okp || !okf || !okc || p < 0 || p > (lua_Integer)i || f < 1
            || f > (lua_Integer)nfn)
            luaL_error(L, "stacks: node %d is not parent (an earlier node "
                       "or 0), function, cost", (int)i + 1);
        ints[i] = (int32_t)p - 1;
        ints[n + i] = (int32_t)f - 1;
        costs[i] = (int64_t)c;
    }
}

/* core.prof_write_folded(path, stacks, width, names [, max]) -> true, or nil,
 * "path: reason", kind (as core.write_file_atomic): writes the folded
 * stacks of collected data to path, whole or not at all (the core's
 * atomic write). stacks is data.stacks, `width` integers per node (parent
 * index, 0: none, which comes before it; function index; its costs), or
 * (until_exit's data, live_stacks) the number of nodes still in the
 * state, read there;
 * names[fn] the function's name as a folded frame (escaped by the
 * caller). One line `name;name;...;name cost` (the first cost) per node
 * whose first cost is not 0, in node order: what until_exit writes beside
 * the profile with stacks = true. Past max bytes (default 256 MiB) it
 * writes nothing: nil, "path: the folded stacks would take N bytes, over
 * max_bytes (M) ...", "memory" (the size added up first, one pass). */
int cgl_prof_write_folded(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Integer width = luaL_checkinteger(L, 3);
    lua_Integer max = luaL_optinteger(L, 5, (lua_Integer)256 << 20);
    size_t n, nfn, i;
    CgFoldOut F;
    int32_t *ints;
    int64_t *costs;
    CgStr *names;
    const Prof *P = NULL;
    char msg[1024];
    int rc;
    uint64_t size;
    luaL_argcheck(L, strlen(path) == lua_rawlen(L, 1), 1,
                  "path contains a NUL byte");
    P = collected_stacks(L);
    luaL_argcheck(L, width >= 3, 3, "a node has at least 3 integers");
    luaL_checktype(L, 4, LUA_TTABLE);
    n = P != NULL ? P->nnode : lua_rawlen(L, 2) / (size_t)width;
    nfn = lua_rawlen(L, 4);
    if (n > (size_t)INT32_MAX || nfn > (size_t)INT32_MAX)
        return luaL_error(L, "too many stacks");
    /* scratch the collector frees: parent, fn, chain and depth, then
     * costs */
    ints = (int32_t *)scratch(L, n, 4 * sizeof *ints);
    costs = (int64_t *)scratch(L, n, sizeof *costs);
    names = (CgStr *)scratch(L, nfn, sizeof *names);
    for (i = 0; i < nfn; i++) {
        lua_rawgeti(L, 4, (lua_Integer)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "names[%d] is not a string", (int)i + 1);
        names[i].ptr = lua_tolstring(L, -1, &names[i].len);
        lua_pop(L, 1);          /* still in the table at 4 */
    }
    read_nodes(L, P, n, nfn, width, ints, costs);
    F.n = n;
    F.parent = ints;
    F.fn = ints + n;
    F.chain = ints + 2 * n;
    F.depth = ints + 3 * n;
    F.cost = costs;
    F.stride = 1, F.col = 0;    /* the first cost: Instr */
    F.names = names;
    {
        uint64_t longest = 0;
        F.len = (uint64_t *)scratch(L, n, sizeof *F.len);
        size = cg_fold_size(&F, &longest);
        if (max >= 0 && size > (uint64_t)max) {
            lua_pushnil(L);
            lua_pushfstring(L, "%s: the folded stacks would take %I bytes, over max_bytes (%I): "
                            "fold the recursion with prof:folded{ collapse_recursion = true }",
                            path, (lua_Integer)size, max);
            lua_pushliteral(L, "memory");
            return 3;
        }
        if (longest >= SIZE_MAX)
            return luaL_error(L, "too many stacks");
        F.path = (char *)scratch(L, (size_t)longest, 1);
    }
    /* no Lua call until the file is written */
    rc = cg_write_atomic_with(path, cg_fold_fill, &F,
                              size <= SIZE_MAX ? (size_t)size : 0, msg,
                              sizeof msg);
    return written(L, rc, msg);
}

/* ---- reading ---- */

#define REC_BOX "callgrind.stack_record"

typedef struct RecBox {
    CgRec rec;
    char *buf;
} RecBox;

static int rec_box_gc(lua_State *L)
{
    RecBox *b = (RecBox *)lua_touserdata(L, 1);
    cg_rec_free(&b->rec);
    free(b->buf);
    b->buf = NULL;
    return 0;
}

/* The whole file at path into a malloc'd buffer; NULL with errno. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (f == NULL)
        return NULL;
    for (;;) {
        size_t got;
        if (n == cap) {
            char *nb;
            cap = cap ? cap * 2 : 1 << 16;
            nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno ? errno : EIO;
        free(buf);
        fclose(f);
        errno = e;
        return NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Reads the record at path (arg 1) into a box on the stack; on failure
 * pushes nil, "path: reason" (or "PATH:LINE: reason"), kind and returns
 * 0. */
static RecBox *read_box(lua_State *L, const char *path)
{
    RecBox *b = lua_newuserdatauv(L, sizeof *b, 0);
    size_t len = 0;
    int rc;
    memset(b, 0, sizeof *b);
    if (luaL_newmetatable(L, REC_BOX)) {
        lua_pushcfunction(L, rec_box_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    b->buf = slurp(path, &len);
    if (b->buf == NULL) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        lua_pushliteral(L, "io");
        return NULL;
    }
    rc = cg_rec_parse(&b->rec, b->buf, len, path);
    if (rc == CG_ENOMEM)
        luaL_error(L, "%s: out of memory", path);
    if (rc != CG_OK) {
        lua_pushnil(L);
        lua_pushstring(L, b->rec.msg);
        lua_pushliteral(L, "format");
        return NULL;
    }
    return b;
}

static void push_strs(lua_State *L, const CgStr *s, size_t n)
{
    size_t i;
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_pushlstring(L, s[i].ptr, s[i].len);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* internal.read_stack_record(path) -> { profile = "16 hex digits",
 * events = {...}, files = {...}, names = {...}, stacks = { parent,
 * function, a cost per event, a node after another } (parent 0: none;
 * the profiler's data.stacks) }, or nil, "PATH[:LINE]: reason", kind
 * ("io": unreadable; "format": not a whole record). */
int cgl_read_stack_record(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    RecBox *b = read_box(L, path);
    const CgRec *r;
    size_t i, e;
    lua_Integer k = 0;
    if (b == NULL)
        return 3;
    r = &b->rec;
    lua_createtable(L, 0, 5);
    lua_pushstring(L, r->profile);
    lua_setfield(L, -2, "profile");
    push_strs(L, r->events, r->nev);
    lua_setfield(L, -2, "events");
    push_strs(L, r->files, r->nfn);
    lua_setfield(L, -2, "files");
    push_strs(L, r->names, r->nfn);
    lua_setfield(L, -2, "names");
    lua_createtable(L, (int)(r->n * (2 + r->nev) > (size_t)INT32_MAX ? 0 : r->n * (2 + r->nev)), 0);
    for (i = 0; i < r->n; i++) {
        lua_pushinteger(L, (lua_Integer)r->parent[i] + 1);
        lua_rawseti(L, -2, ++k);
        lua_pushinteger(L, (lua_Integer)r->fn[i] + 1);
        lua_rawseti(L, -2, ++k);
        for (e = 0; e < r->nev; e++) {
            lua_pushinteger(L, (lua_Integer)r->cost[i * r->nev + e]);
            lua_rawseti(L, -2, ++k);
        }
    }
    lua_setfield(L, -2, "stacks");
    return 1;
}

/* A name as a folded frame: `\`, `;`, newline, carriage return escaped
 * (util.fold_escape's rule) into out (room for 2 * len); its length. */
static size_t fold_escape(const char *s, size_t len, char *out)
{
    size_t i, n = 0;
    for (i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\\' || c == ';' || c == '\n' || c == '\r') {
            out[n++] = '\\';
            c = c == '\n' ? 'n' : c == '\r' ? 'r' : c;
        }
        out[n++] = c;
    }
    return n;
}

/* The folded names of r's functions, in scratch on the stack. */
static CgStr *folded_names(lua_State *L, const CgRec *r)
{
    CgStr *names = scratch(L, r->nfn, sizeof *names);
    size_t i, total = 0;
    char *arena;
    for (i = 0; i < r->nfn; i++)
        total += 2 * r->names[i].len;
    arena = scratch(L, total, 1);
    for (i = 0; i < r->nfn; i++) {
        names[i].ptr = arena;
        names[i].len = fold_escape(r->names[i].ptr, r->names[i].len, arena);
        arena += names[i].len;
    }
    return names;
}

/* internal.stack_record_folded(path, event [, out [, max]]) -> the
 * folded text of the record at path in event (a column from 1, or a
 * name), or, out given, true once written to out (the atomic writer);
 * nil, "path: reason", kind on failure ("io", "format", "memory": over
 * max bytes, default 256 MiB, with the size in the message). One line a
 * node whose cost is not 0, in node order: the folded file the profiler
 * writes with CALLGRIND_STACKS=folded, byte for byte. */
int cgl_stack_record_folded(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    const char *out = luaL_optstring(L, 3, NULL);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)256 << 20);
    RecBox *b = read_box(L, path);
    const CgRec *r;
    CgFoldOut F;
    uint64_t size, longest;
    char msg[1024];
    size_t col = 0;
    int rc;
    if (b == NULL)
        return 3;
    r = &b->rec;
    if (lua_type(L, 2) == LUA_TSTRING) {
        size_t len;
        const char *ev = lua_tolstring(L, 2, &len);
        for (col = 0; col < r->nev; col++)
            if (r->events[col].len == len && !memcmp(r->events[col].ptr, ev, len))
                break;
    } else {
        lua_Integer i = luaL_checkinteger(L, 2);
        col = i >= 1 && (size_t)i <= r->nev ? (size_t)i - 1 : r->nev;
    }
    if (col >= r->nev)
        return luaL_error(L, "%s: no event %s in the record", path, luaL_tolstring(L, 2, NULL));
    memset(&F, 0, sizeof F);
    F.n = r->n;
    F.parent = r->parent;
    F.fn = r->fn;
    F.cost = r->cost;
    F.stride = r->nev;
    F.col = col;
    F.names = folded_names(L, r);
    F.chain = scratch(L, r->n, 2 * sizeof *F.chain);
    F.depth = F.chain + r->n;
    F.len = scratch(L, r->n, sizeof *F.len);
    size = cg_fold_size(&F, &longest);
    if (max >= 0 && size > (uint64_t)max) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: the folded stacks would take %I bytes, over max_bytes (%I)",
                        path, (lua_Integer)size, max);
        lua_pushliteral(L, "memory");
        return 3;
    }
    F.path = scratch(L, (size_t)longest, 1);
    if (out != NULL) {
        rc = cg_write_atomic_with(out, cg_fold_fill, &F, (size_t)size, msg, sizeof msg);
        return written(L, rc, msg);
    }
    {
        CgWriter w;
        const char *text;
        size_t len;
        cg_writer_init_mem(&w, 0);
        cg_fold_fill(&w, &F);
        rc = cg_writer_flush(&w);
        text = cg_writer_data(&w, &len);
        if (rc == CG_OK)
            lua_pushlstring(L, text, len);
        cg_writer_free(&w);
        if (rc != CG_OK)
            return luaL_error(L, "%s: out of memory", path);
        return 1;
    }
}

/* internal.profile_digest(prof) -> the 16 hex digits of the digest in
 * the end line of the profile's first file ("# end digest=fnv1a64:..."),
 * or nil when it has none: the identity a stack record names. */
int cgl_profile_digest(lua_State *L)
{
    const CgProfile *P = cgl_check_profile(L, 1);
    const char *buf;
    size_t len, n = sizeof CG_WRITTEN_DIGEST - 1 + 16;
    if (P->ntexts == 0)
        return 0;
    buf = P->texts[0].buf;
    len = P->texts[0].len;
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    if (len < n + 1 || buf[len - n - 1] != '\n'
        || memcmp(buf + len - n, CG_WRITTEN_DIGEST, sizeof CG_WRITTEN_DIGEST - 1))
        return 0;
    lua_pushlstring(L, buf + len - 16, 16);
    return 1;
}

/* ---- the tree ---- */

static void push_ints32(lua_State *L, const int32_t *v, size_t n, int plus)
{
    size_t i;
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)v[i] + plus);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static void push_ints64(lua_State *L, const int64_t *v, size_t n)
{
    size_t i;
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)v[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* internal.stack_tree(stacks, width, col, key [, threshold]) -> parent,
 * node, total, self, top_self, all: the tree of recorded stacks
 * (cg_stacktree.h). stacks: parent (0: none), function, costs..., width
 * integers a node (the profiler's data.stacks, or a record's); col: the
 * cost's column (1: the first cost); key[f]: the merge key of function f
 * (equal keys under one parent merge); threshold: prune below that
 * fraction of the total. Out: arrays over the nodes kept, depth first:
 * parent (an earlier one, 0: a root), node (a trie node merged into it),
 * total, self; then the roots' pruned cost and the total. */
int cgl_stack_tree(lua_State *L)
{
    lua_Integer width = luaL_checkinteger(L, 2), col = luaL_checkinteger(L, 3);
    size_t n, nkey, i;
    int32_t *ints;
    int64_t *cost;
    CgStackTree t;
    int rc;
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 4, LUA_TTABLE);
    luaL_argcheck(L, width >= 3 && width < 100, 2, "3 to 99 integers a node");
    luaL_argcheck(L, col >= 1 && col <= width - 2, 3, "not a cost column");
    memset(&t, 0, sizeof t);
    t.prune = !lua_isnoneornil(L, 5);
    t.min = t.prune ? luaL_checknumber(L, 5) : 0;
    n = lua_rawlen(L, 1) / (size_t)width;
    nkey = lua_rawlen(L, 4);
    if (n > (size_t)INT32_MAX)
        return luaL_error(L, "stack tree: too many nodes");
    ints = scratch(L, n, 2 * sizeof *ints);
    cost = scratch(L, n, sizeof *cost);
    for (i = 0; i < n; i++) {
        lua_Integer base = (lua_Integer)i * width, p, f, k;
        lua_rawgeti(L, 1, base + 1);
        lua_rawgeti(L, 1, base + 2);
        lua_rawgeti(L, 1, base + 2 + col);
        p = lua_tointeger(L, -3);
        f = lua_tointeger(L, -2);
        cost[i] = (int64_t)lua_tointeger(L, -1);
        lua_pop(L, 3);
        if (p < 0 || p > (lua_Integer)i || f < 1 || (size_t)f > nkey)
            return luaL_error(L, "stack tree: node %d is not parent (an earlier node or 0), function", (int)i + 1);
        lua_rawgeti(L, 4, f);
        k = lua_tointeger(L, -1);
        lua_pop(L, 1);
        ints[i] = (int32_t)p - 1;
        ints[n + i] = (int32_t)(k >= INT32_MIN && k <= INT32_MAX ? k : -1);
    }
    t.n = n;
    t.parent = ints;
    t.fn = ints + n;
    t.cost = cost;
    rc = cg_stack_tree(&t);
    if (rc != CG_OK) {
        cg_stack_tree_free(&t);
        return luaL_error(L, "stack tree: out of memory");
    }
    push_ints32(L, t.out_parent, t.nout, 1);
    push_ints32(L, t.out_node, t.nout, 1);
    push_ints64(L, t.out_total, t.nout);
    push_ints64(L, t.out_self, t.nout);
    lua_pushinteger(L, (lua_Integer)t.top_self);
    lua_pushinteger(L, (lua_Integer)t.total);
    cg_stack_tree_free(&t);
    return 6;
}
