/* A record per definition, and the functions freed folded into theirs.
 *
 * A function's record (FnCost) is its definition's: its source, line
 * defined and last line defined, its parameters and upvalues, and the
 * name its first call gave it (a C function: its C function). Every
 * prototype of one definition (a chunk loaded again, a file required
 * twice) shares it, alive or freed, so memory grows with the distinct
 * functions, not with the functions ever made: nothing keeps a Lua
 * function alive while profiling.
 *
 * A function value seen has a slot (PSlot) keyed by its prototype (a C
 * function: the C function), found by fnmap; the key's record is the
 * slot's. A prototype freed must leave its slot before another takes its
 * address:
 *
 * - the counting interpreter tells (cg_prof_freed, from the VM's
 *   luaF_freeproto): the prototype's pc counts go to its record's lines,
 *   its slot goes; the VM forgets the call sites that may name it
 *   (ldo.c's luaD_cgfreed);
 * - the hook engine holds each slot's first closure in a weak table
 *   (S.w, by slot): the collector clears the entry of a dead closure in
 *   the atomic phase of a cycle, before it frees its prototype, and the
 *   hook engine steps the collector itself (cg_prof_gc_step), so after a
 *   step whose cycle passed its atomic phase (a canary table in S.w is
 *   gone; no copy of it is left on a thread's stack, where a Lua frame's
 *   registers, marked up to its top, would keep it: unstack) the
 *   cleared entries' slots are marked gone before any Lua code
 *   runs again; so does the return of collectgarbage. A gone slot keeps
 *   its key: another closure of its prototype may live, and its next
 *   call finds the slot again, with the same record, and holds the slot
 *   (a record found again by its definition could be another, its first
 *   call giving no name or another: an error handler called first by a
 *   Lua function's error, then by error's); a function of another
 *   definition at its key frees it. Past GONE_MAX gone slots they are all
 *   freed (their prototypes, or most, freed), but those of the records
 *   with a frame on a thread's stack: a function running, or suspended
 *   in a coroutine, lives (its slot freed, a call of it from C while it
 *   runs, a handler's from error's, would make another record of it,
 *   and the recursion would go unseen: one record's frames are not the
 *   other's). Where the collector runs on
 *   its own (the profiled code restarted it), the table stops being
 *   weak: functions stay alive as before.
 *
 * The call cache (P->cc) and the generic for's lines (P->tfor_pc) are
 * keyed by prototypes' addresses: they are forgotten when a slot leaves.
 *
 * Strings (sources) are kept once each in a pool (S.s), by a hash. */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof_fold.h"
#include "cg_prof_records.h"
#include "cg_prof_signal.h"
#include "cg_mem.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

/* ---- the state's tables ---- */

/* Pushes S[name] (S: the state's user value), made when missing (weak:
 * weak values). */
static void push_sub(lua_State *L, const char *name, int weak)
{
    cg_prof_push_info(L);
    if (lua_getfield(L, -1, name) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        if (weak) {
            lua_createtable(L, 0, 1);
            lua_pushliteral(L, "v");
            lua_setfield(L, -2, "__mode");
            lua_setmetatable(L, -2);
        }
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, name);
    }
    lua_remove(L, -2);
}

/* ---- the string pool ---- */

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    return h;
}

/* The pool's map (an IMap): its strings are in the pool's table (S.s,
 * index k + 1), at index t of L's stack. */
typedef struct PoolKey {
    lua_State *L;
    int t;
    const char *s;              /* the string looked for, n bytes */
    size_t n;
} PoolKey;

static int pool_same(const void *ud, int32_t k, const void *key)
{
    const PoolKey *p = (const PoolKey *)key;
    size_t len;
    const char *t;
    int same;
    (void)ud;
    lua_rawgeti(p->L, p->t, k + 1);
    t = lua_tolstring(p->L, -1, &len);
    same = t != NULL && len == p->n && memcmp(t, p->s, p->n) == 0;
    lua_pop(p->L, 1);
    return same;
}

static uint64_t pool_rehash(const void *ud, int32_t k)
{
    const PoolKey *p = (const PoolKey *)ud;
    size_t len;
    const char *t;
    uint64_t h;
    lua_rawgeti(p->L, p->t, k + 1);
    t = lua_tolstring(p->L, -1, &len);
    h = hash_bytes(t, len);
    lua_pop(p->L, 1);
    return h;
}

/* The index in the pool of the string s (n bytes), added when new. */
static int32_t pool_index(Prof *P, lua_State *L, const char *s, size_t n)
{
    uint64_t h = hash_bytes(s, n);
    PoolKey key;
    int32_t k;
    push_sub(L, "s", 0);
    key.L = L;
    key.t = lua_gettop(L);
    key.s = s;
    key.n = n;
    k = cg_im_get(&P->strmap, h, pool_same, NULL, &key);
    if (k >= 0) {
        lua_pop(L, 1);
        return k;
    }
    k = P->nstr;
    lua_pushlstring(L, s, n);
    lua_rawseti(L, -2, k + 1);
    if (cg_im_put(&P->strmap, h, k, pool_rehash, &key) != 0)
        cg_prof_oom(P, L);
    lua_pop(L, 1);
    P->nstr++;
    return k;
}

/* ---- slots ---- */

static int32_t slot_new(Prof *P, lua_State *L, uint64_t k1, uint64_t k2,
                        int32_t fn)
{
    int32_t s = P->psfree;
    if (s >= 0) {
        P->psfree = P->ps[s].next;
    } else {
        if (CG_GROW(P->ps, P->capps, P->nps + 1) != 0)
            cg_prof_oom(P, L);
        s = (int32_t)P->nps++;
    }
    if (cg_pm_put(&P->fnmap, k1, k2, s) != 0) {
        P->ps[s].fn = -1;
        P->ps[s].next = P->psfree;
        P->psfree = s;
        cg_prof_oom(P, L);
    }
    memset(&P->ps[s], 0, sizeof P->ps[s]);
    P->ps[s].k1 = k1;
    P->ps[s].k2 = k2;
    P->ps[s].fn = fn;
    P->ps[s].next = -1;
    return s;
}

/* Slot s leaves: its key is free for another function. */
static void slot_free(Prof *P, int32_t s)
{
    cg_pm_del(&P->fnmap, P->ps[s].k1, P->ps[s].k2);
    P->ps[s].fn = -1;
    P->ps[s].count = NULL;
    P->ps[s].next = P->psfree;
    P->psfree = s;
    P->cc_stale = 1;
}

void cg_prof_cc_reset(Prof *P)
{
    size_t i;
    for (i = 0; i < CALL_CACHE; i++)
        P->cc[i].caller = -1;
    memset(P->tfor_pc, 0, sizeof P->tfor_pc);
    P->cc_stale = 0;
}

void cg_prof_fold_free(Prof *P)
{
    free(P->ps);
    P->ps = NULL;
    P->nps = P->capps = 0;
    P->psfree = -1;
    P->nstr = 0;
    cg_im_free(&P->defmap);
    cg_im_free(&P->strmap);
}

/* ---- records ---- */

/* A Lua definition's key (defmap: an IMap, the key in the record): its
 * source and the name its first sight gave it in the string pool, its
 * lines and its signature (functions defined on one line). */
typedef struct DefKey {
    int32_t src, nm, defined, last;
    uint8_t nparams, nups, vararg;
} DefKey;

static uint64_t def_hash(const DefKey *k)
{
    uint64_t d1 = (uint64_t)(uint32_t)k->src
                  | (uint64_t)(uint32_t)(k->nm + 1) << 32;
    uint64_t d2 = ((uint64_t)(uint32_t)k->defined << 32)
                  | (uint32_t)k->last;
    uint64_t sig = (uint64_t)k->nparams | (uint64_t)k->nups << 8
                   | (uint64_t)k->vararg << 16;
    return cg_im_hash(cg_im_hash(d1, d2), sig);
}

static void def_key(const FnCost *c, DefKey *k)
{
    k->src = c->src;
    k->nm = c->nm;
    k->defined = c->defined;
    k->last = c->last;
    k->nparams = c->nparams;
    k->nups = c->nups;
    k->vararg = c->vararg;
}

static int def_same(const void *ud, int32_t id, const void *key)
{
    const FnCost *c = &((const Prof *)ud)->fns[id];
    const DefKey *k = (const DefKey *)key;
    return c->src == k->src && c->nm == k->nm && c->defined == k->defined
           && c->last == k->last && c->nparams == k->nparams
           && c->nups == k->nups && c->vararg == k->vararg;
}

static uint64_t def_rehash(const void *ud, int32_t id)
{
    DefKey k;
    def_key(&((const Prof *)ud)->fns[id], &k);
    return def_hash(&k);
}

/* The record of a function value seen first (ar's "S" and "u" filled,
 * the value on top of the stack): a Lua function's is its definition's
 * (source, lines, signature, and the name its first call gives it), made
 * when new; a C function's is new (its key, the C function, is seen
 * first: C functions keep their slots). The value gets a slot keyed
 * (k1, k2). */
static int32_t define(Prof *P, lua_State *L, lua_Debug *ar, uint64_t k1,
                      uint64_t k2, const char *name)
{
    int is_c = ar->what[0] == 'C';
    int32_t id = -1, s;
    DefKey dk;
    uint64_t h = 0;
    memset(&dk, 0, sizeof dk);
    if (!is_c) {
        dk.src = pool_index(P, L, ar->source, strlen(ar->source));
        dk.nm = name != NULL ? pool_index(P, L, name, strlen(name)) : -1;
        dk.defined = ar->linedefined;
        dk.last = ar->lastlinedefined;
        dk.nparams = ar->nparams;
        dk.nups = ar->nups;
        dk.vararg = ar->isvararg != 0;
        h = def_hash(&dk);
        id = cg_im_get(&P->defmap, h, def_same, P, &dk);
    }
    if (id < 0) {
        if (P->nfn >= (size_t)INT32_MAX
            || cg_prof_grow((void **)&P->fns, &P->capfn, P->nfn + 1,
                            sizeof *P->fns) != 0
            || (!is_c && cg_im_put(&P->defmap, h, (int32_t)P->nfn,
                                   def_rehash, P) != 0))
            cg_prof_oom(P, L);
        id = (int32_t)P->nfn++;
        memset(&P->fns[id], 0, sizeof P->fns[id]);
        P->fns[id].nm = is_c ? -1 : dk.nm;
        P->fns[id].nparams = ar->nparams;
        P->fns[id].nups = ar->nups;
        P->fns[id].vararg = ar->isvararg != 0;
        P->fns[id].np = -2;     /* no node yet */
        P->fns[id].defined = is_c ? 0 : ar->linedefined;
        P->fns[id].last = is_c ? 0 : ar->lastlinedefined;
        P->fns[id].src = is_c ? -1 : dk.src;
        P->fns[id].what = ar->what[0];
        if (is_c) {
            lua_CFunction f = lua_tocfunction(L, -1);
            P->fns[id].co_close = f == P->co_close && f != NULL ? 1
                                  : f == P->gc_fn && f != NULL ? 2 : 0;
            push_sub(L, "c", 0);   /* S.c[id + 1]: the C function */
            lua_pushvalue(L, -2);
            lua_rawseti(L, -2, id + 1);
            lua_pop(L, 1);
        }
    }
    s = slot_new(P, L, k1, k2, id);
    if (!is_c) {
        /* S.w[s + 1]: the closure, weakly */
        push_sub(L, "w", P->weak || P->direct);
        lua_pushvalue(L, -2);
        lua_rawseti(L, -2, s + 1);
        lua_pop(L, 1);
    }
    if (P->direct && !is_c && k2 == 0) {
        PSlot *q = &P->ps[s];
        q->count = P->vmh.counts(L, (const void *)(uintptr_t)k1, &q->ncount);
        memset(q->count, 0, (size_t)q->ncount * sizeof *q->count);
    }
    return id;
}

/* ---- functions seen ---- */

/* The key lua_getinfo gives; the function is left on the stack. */
static uint64_t slow_key(const Prof *P, lua_State *L, lua_Debug *ar,
                         uint64_t *k2)
{
    lua_getinfo(L, "f", ar);
    if (lua_iscfunction(L, -1)) {
        *k2 = UINT64_MAX;
        return (uint64_t)(uintptr_t)lua_tocfunction(L, -1);
    }
    if (P->l54.proto_off >= 0) {
        *k2 = 0;
        return (uint64_t)(uintptr_t)cg_l54_proto(&P->l54,
                                                 lua_topointer(L, -1));
    }
    lua_getinfo(L, "S", ar);
    *k2 = ((uint64_t)(uint32_t)ar->linedefined << 32)
          | (uint32_t)ar->lastlinedefined;
    return (uint64_t)(uintptr_t)ar->source;
}

/* S[id + 1] = the name the calling instruction gives the function
 * (asked once, at its first call that is not a tail call). */
void cg_prof_name_from_call(Prof *P, lua_State *L, lua_Debug *ar, int32_t id)
{
    P->fns[id].asked = 1;
    lua_getinfo(L, "n", ar);
    if (ar->name == NULL)
        return;
    cg_prof_push_info(L);
    lua_pushstring(L, ar->name);
    lua_rawseti(L, -2, id + 1);
    lua_pop(L, 1);
}

/* Gone slot s (its closure collected) seen again, the function on top
 * of L: another closure of its prototype, of the same definition, holds
 * the slot again (1); a function of another definition at its key frees
 * it (0). */
static int slot_back(Prof *P, lua_State *L, lua_Debug *ar, int32_t s)
{
    const FnCost *c = &P->fns[P->ps[s].fn];
    lua_getinfo(L, "Su", ar);
    P->ps[s].gone = 0;
    if (c->what == 'C' || c->defined != ar->linedefined
        || c->last != ar->lastlinedefined || c->nparams != ar->nparams
        || c->nups != ar->nups || c->vararg != (ar->isvararg != 0)
        || c->src != pool_index(P, L, ar->source, strlen(ar->source))) {
        slot_free(P, s);
        return 0;
    }
    push_sub(L, "w", P->weak || P->direct);
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, s + 1);
    lua_pop(L, 1);
    return 1;
}

/* The function of ar: its slot's record, the slot made on first sight
 * (cg_prof_fold.c: the record is its definition's; nothing keeps it
 * alive). Leaves ar's "S" fields filled in only on first sight. */
int32_t cg_prof_resolve(Prof *P, lua_State *L, lua_Debug *ar, int with_name)
{
    uint64_t k1, k2;
    int32_t id;
    k1 = slow_key(P, L, ar, &k2);
    id = cg_pm_get(&P->fnmap, k1, k2);
    if (id >= 0 && P->ps[id].gone && !slot_back(P, L, ar, id))
        id = -1;
    if (id >= 0) {
        id = P->ps[id].fn;
        if (P->fns[id].defined == 0 && P->fns[id].what != 'C')
            cg_prof_sig_rearm();    /* a main chunk: see below */
        if (with_name && !P->fns[id].asked)
            cg_prof_name_from_call(P, L, ar, id);
        lua_pop(L, 1);
        return id;
    }
    lua_getinfo(L, with_name ? "Snu" : "Su", ar);
    id = define(P, L, ar, k1, k2, with_name ? ar->name : NULL);
    /* a main chunk is called from C or from the root, never from the
     * call cache: lua.c's docall set its SIGINT handler before calling
     * it, and ours goes back in place */
    if (ar->what[0] == 'm')
        cg_prof_sig_rearm();
    if (with_name && !P->fns[id].asked)
        cg_prof_name_from_call(P, L, ar, id);
    lua_pop(L, 1);
    return id;
}

/* The counts of n pcs of proto into the lines of record fn. */
static void fold_proto(Prof *P, lua_State *L, int32_t fn, const void *proto,
                       const lua_Unsigned *count, int n, int *lines)
{
    int pc;
    if (P->lines && lines != NULL
        && (P->vmh.lines == NULL || !P->vmh.lines(proto, lines)))
        for (pc = 0; pc < n; pc++)
            lines[pc] = P->vmh.line(proto, NULL, pc);
    for (pc = 0; pc < n; pc++)
        if (count[pc] != 0)
            cg_prof_line_slot(P, L, fn, P->lines ? lines[pc]
                                                 : P->fns[fn].defined)
                [EV_INSTR] += (int64_t)count[pc];
}

void cg_prof_fold_counts(Prof *P, lua_State *L)
{
    size_t i, most = 0;
    int *lines = NULL;
    for (i = 0; P->lines && i < P->nps; i++)
        if (P->ps[i].fn >= 0 && P->ps[i].count != NULL
            && (size_t)P->ps[i].ncount > most)
            most = (size_t)P->ps[i].ncount;
    /* a userdata: collected, not leaked, when a line's record raises */
    if (most > 0)
        lines = (int *)lua_newuserdatauv(L, most * sizeof *lines, 0);
    for (i = 0; i < P->nps; i++) {
        PSlot *q = &P->ps[i];
        if (q->fn < 0 || q->count == NULL)
            continue;
        fold_proto(P, L, q->fn, (const void *)(uintptr_t)q->k1, q->count,
                   q->ncount, lines);
        q->count = NULL;
    }
    if (most > 0)
        lua_pop(L, 1);
}

void cg_prof_freed(Prof *P, lua_State *L, const void *proto,
                   const lua_Unsigned *counts, int n)
{
    int32_t s = cg_pm_get(&P->fnmap, (uint64_t)(uintptr_t)proto, 0);
    int small[256], *lines = small;
    if (s < 0)
        return;
    if (P->ps[s].count == counts && counts != NULL) {
        /* no Lua here (the collector runs): the lines' room in C */
        if (P->lines && n > 256)
            lines = (int *)malloc((size_t)n * sizeof *lines);
        if (lines != NULL)
            fold_proto(P, L, P->ps[s].fn, proto, counts, n, lines);
        if (lines != small)
            free(lines);
    }
    slot_free(P, s);
}

/* ---- the hook engine's weak slots ---- */

/* Gone slots at most (cg_prof_weak_check): past them all are freed. */
#define GONE_MAX 256

/* The slot just above L's top (where the canary was, the value popped)
 * set to nil: no copy of the canary stays there for a Lua frame made
 * later over it to keep alive (the collector marks a frame's registers,
 * stale ones too, up to its top). */
static void unstack(lua_State *L)
{
    lua_pushnil(L);
    lua_pop(L, 1);
}

/* Sets (on 1) or clears the mark of the records with a frame on a
 * thread's stack, running or suspended (the roots too). */
static void mark_stacked(Prof *P, unsigned on)
{
    size_t i, k;
    for (i = 0; i < P->nth; i++)
        for (k = 0; P->th[i].L != NULL && k < P->th[i].n; k++)
            if (P->th[i].f[k].fn >= 0)
                P->fns[P->th[i].f[k].fn].stacked = on;
}

void cg_prof_weak_check(Prof *P, lua_State *L)
{
    size_t s, ngone = 0;
    int gone = 0, canary;
    if (P->direct || P->nps == 0)
        return;
    push_sub(L, "w", P->weak);
    canary = lua_getfield(L, -1, "canary");
    lua_pop(L, 1);
    unstack(L);
    if (canary == LUA_TNIL) {
        /* an atomic phase since the canary: the dead closures' entries
         * are cleared; their prototypes may be freed, or live on in
         * other closures: their slots are gone, keeping their keys */
        for (s = 0; s < P->nps; s++)
            if (P->ps[s].fn >= 0 && P->fns[P->ps[s].fn].what != 'C') {
                if (!P->ps[s].gone) {
                    lua_rawgeti(L, -1, (lua_Integer)s + 1);
                    if (lua_isnil(L, -1)) {
                        P->ps[s].gone = 1;
                        gone = 1;
                    }
                    lua_pop(L, 1);
                }
                ngone += P->ps[s].gone != 0;
            }
        if (ngone > GONE_MAX) {
            /* a function with a frame on a stack lives: its slot stays
             * (freed, its next call, by another name or none, would make
             * another record of it, whose frames the recursion test of
             * the first one's would not count) */
            mark_stacked(P, 1);
            for (s = 0; s < P->nps; s++)
                if (P->ps[s].fn >= 0 && P->ps[s].gone
                    && !P->fns[P->ps[s].fn].stacked) {
                    P->ps[s].gone = 0;
                    slot_free(P, (int32_t)s);
                }
            mark_stacked(P, 0);
        }
        lua_newtable(L);
        lua_setfield(L, -2, "canary");
        unstack(L);
    }
    if (P->weak && lua_gc(L, LUA_GCISRUNNING)) {
        /* the collector runs on its own now: the functions stay */
        P->weak = 0;
        lua_pushnil(L);
        lua_setmetatable(L, -2);
    }
    lua_pop(L, 1);
    if (gone)
        cg_prof_cc_reset(P);
}

/* ---- the collector's steps ---- */

/* A step of the collector the hook engine took (cg_prof_base.c: why),
 * with in_hook set (the finalizers' allocations are not counted). A step
 * does work in proportion to what was allocated since the last one, as
 * the collector's own steps do. */
void cg_prof_gc_step(Prof *P, lua_State *L)
{
    int64_t kb = (P->alloc - P->gc_last + 1023) / 1024;
    if (lua_gc(L, LUA_GCISRUNNING)) {
        P->gc_ours = 0;         /* the profiled code restarted it */
        P->gc_next = INT64_MAX;
        return;
    }
    P->gc_last = P->alloc;
    if (lua_gc(L, LUA_GCSTEP, (int)(kb < INT_MAX ? kb : INT_MAX)))
        P->gc_last = P->alloc + (int64_t)lua_gc(L, LUA_GCCOUNT) * 1024;
    P->gc_next = P->gc_last + GC_STEP_BYTES;
    cg_prof_weak_check(P, L);   /* before any Lua code runs again */
}

/* ---- accounting ---- */

static size_t map_bytes(const Map *m)
{
    return m->cap * sizeof *m->s;
}

static size_t imap_bytes(const IMap *m)
{
    return m->cap * sizeof *m->s;
}

size_t cg_prof_fold_bytes(const Prof *P)
{
    size_t b = P->capfn * sizeof *P->fns + P->caped * sizeof *P->edges
               + P->capnode * sizeof *P->nodes + P->capnkid * sizeof *P->nkid
               + P->capnself * sizeof *P->nself + P->capps * sizeof *P->ps
               + P->capth * sizeof *P->th
               + P->capplus * 2 * sizeof *P->eplus, i;
    for (i = 0; i < P->nfn; i++)
        b += cg_prof_lines_room(P->fns[i].n) * (size_t)P->cw
             * sizeof(int64_t);
    for (i = 0; i < P->nth; i++)
        b += P->th[i].cap * sizeof(Frame);
    b += map_bytes(&P->fnmap) + imap_bytes(&P->defmap)
         + imap_bytes(&P->strmap) + imap_bytes(&P->edmap)
         + map_bytes(&P->nodemap)
         + map_bytes(&P->thmap) + map_bytes(&P->overmap)
         + P->capover * sizeof *P->over;
    return b;
}

/* ---- data.info ---- */

void cg_prof_push_fninfo(Prof *P, lua_State *L)
{
    size_t i;
    int info, S, w, c, s;
    cg_prof_push_info(L);
    S = lua_gettop(L);
    push_sub(L, "w", 0);
    w = lua_gettop(L);
    push_sub(L, "c", 0);
    c = lua_gettop(L);
    push_sub(L, "s", 0);
    s = lua_gettop(L);
    lua_createtable(L, (int)P->nfn, 0);
    info = lua_gettop(L);
    for (i = 0; i < P->nfn; i++) {
        const FnCost *f = &P->fns[i];
        lua_createtable(L, 2, 0);
        if (f->what == 'C') {
            lua_rawgeti(L, c, (lua_Integer)i + 1);
        } else {
            lua_createtable(L, 4, 0);
            lua_rawgeti(L, s, f->src + 1);
            lua_rawseti(L, -2, 1);
            lua_pushinteger(L, f->defined);
            lua_rawseti(L, -2, 2);
            lua_pushinteger(L, f->last);
            lua_rawseti(L, -2, 3);
            lua_pushstring(L, f->what == 'm' ? "main" : "Lua");
            lua_rawseti(L, -2, 4);
        }
        lua_rawseti(L, -2, 1);
        lua_rawgeti(L, S, (lua_Integer)i + 1);
        lua_rawseti(L, -2, 2);
        lua_rawseti(L, info, (lua_Integer)i + 1);
    }
    /* a live closure of a record (its slot's) stands for it: the names
     * of loaded modules' functions are found by value */
    for (i = 0; i < P->nps; i++)
        if (P->ps[i].fn >= 0 && P->fns[P->ps[i].fn].what != 'C') {
            lua_rawgeti(L, w, (lua_Integer)i + 1);
            if (lua_isfunction(L, -1)) {
                lua_rawgeti(L, info, P->ps[i].fn + 1);
                lua_rawgeti(L, -1, 1);
                if (lua_istable(L, -1)) {
                    lua_pop(L, 1);
                    lua_pushvalue(L, -2);
                    lua_rawseti(L, -2, 1);
                } else {
                    lua_pop(L, 1);
                }
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
    lua_replace(L, S);
    lua_settop(L, S);
}
