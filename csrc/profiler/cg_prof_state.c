/* The collector's state over its life: made, dropped, freed by its __gc;
 * the modes a start's options give, the engine it chooses, and the start
 * and stop of that engine (the hook engine, cg_prof_collect.c, and the
 * counting engine, cg_prof_direct.c, below).
 *
 * Memory: the state is one userdata kept in the registry for the life of
 * the Lua state; its arrays are malloc'd, owned by it and freed by its
 * __gc. While profiling, the state's allocator is a wrapper whose user data
 * is the state: that is how the hook finds it, and how a thread that still
 * has the hook after stop (threads inherit hooks) knows to remove it. A
 * stack node costs 80 bytes; the children of a node with more than 8, and
 * the outermost nodes, also take 2 to 4 hash slots of 24 bytes each (a
 * load of at most 1/2). */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof_state.h"
#include "cg_prof_collect.h"
#include "cg_prof_direct.h"
#include "cg_prof_fold.h"
#include "cg_prof_records.h"
#include "cg_prof_signal.h"
#include "cg_mem.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#define PROF_STATE "callgrind.ProfilerState"

/* ---- the state ---- */

static void reset_data(Prof *P)
{
    size_t i;
    cg_prof_direct_free(P);
    for (i = 0; i < P->nth; i++)
        free(P->th[i].f);
    for (i = 0; i < P->nfn; i++)
        free(P->fns[i].lines);
    free(P->th);
    free(P->fns);
    free(P->edges);
    free(P->eplus);
    cg_big_free(P->nodes, P->capnode * sizeof *P->nodes);
    cg_big_free(P->nkid, P->capnkid * sizeof *P->nkid);
    cg_big_free(P->nself, P->capnself * sizeof *P->nself);
    P->nodes = NULL;
    P->nkid = NULL;
    P->nself = NULL;
    P->nnode = P->capnode = P->capnkid = P->capnself = 0;
    cg_pm_free(&P->nodemap);
    cg_pm_free(&P->thmap);
    cg_pm_free(&P->fnmap);
    cg_im_free(&P->edmap);
    cg_prof_fold_free(P);
    cg_prof_over_free(P);
    P->th = NULL;
    P->fns = NULL;
    P->edges = NULL;
    P->eplus = NULL;
    P->capplus = 0;
    P->nth = P->capth = P->nfn = P->capfn = P->ned = P->caped = 0;
    P->cur = P->prev = P->prev2 = P->dead_from = -1;
    P->fast = NULL;
    memset(&P->G, 0, sizeof P->G);
}

/* Empties the call cache when a run may have filled it: at a start, not
 * at every drop (a stop's drop before the process ends would clear 96
 * KiB in vain; a new state's pages are zero, and a zero entry is empty:
 * no callee's key is 0). */
static void clean_call_cache(Prof *P)
{
    size_t i;
    if (P->cc_clean)
        return;
    for (i = 0; i < CALL_CACHE; i++)
        P->cc[i].caller = -1;
    P->cc_clean = 1;
}

static int state_gc(lua_State *L)
{
    Prof **box = (Prof **)luaL_checkudata(L, 1, PROF_STATE);
    Prof *P = *box;
    if (P == NULL)
        return 0;
    cg_prof_sig_disarm(L);      /* no handler may reach a closed state */
    if (P->running && P->direct) {
        /* the VM's frames point into what the profiler frees */
        P->vmh.direct(L, 0);
        P->vmh.hook(L, NULL, NULL);
        P->vmh.onfree(L, NULL);
    }
    cg_prof_restore_alloc(P, L);
    P->running = 0;
    reset_data(P);              /* the counting engine's records too */
    *box = NULL;
    cg_big_free(P, sizeof *P);
    return 0;
}

void cg_prof_node_cost(const Prof *P, size_t i, Cost *c)
{
    if (P->nself != NULL) {
        *c = P->nself[i];
        return;
    }
    memset(c, 0, sizeof *c);
    c->v[EV_INSTR] = cg_prof_direct_self(P, i);
}

void cg_prof_node_costs(const Prof *P, size_t from, size_t n, int64_t *cost,
                        size_t nev)
{
    size_t i, e, k;
    memset(cost, 0, n * nev * sizeof *cost);
    if (P->nself == NULL) {
        /* the counting interpreter's: Instr alone, its column */
        for (e = 0, k = 0; e != EV_INSTR; e++)
            k += P->ev[e] != 0;
        if (P->ev[EV_INSTR] && k < nev)
            cg_prof_direct_selves(P, from, n, cost + k, nev);
        return;
    }
    for (i = 0; i < n; i++) {
        const Cost *c = &P->nself[from + i];
        for (e = 0, k = 0; e < NEV && k < nev; e++)
            if (P->ev[e])
                cost[i * nev + k++] = c->v[e];
    }
}

Prof *cg_prof_state(lua_State *L)
{
    Prof **box;
    Prof *P = cg_prof_get(L);
    if (P != NULL)
        return P;
    /* the state in zeroed pages (cg_mem.h: 97 KiB, most of it the call
     * cache, whose all-zero entries are empty: no key is 0), not cleared
     * by hand; the userdata holds its address */
    box = (Prof **)lua_newuserdatauv(L, sizeof *box, 1);
    *box = NULL;
    if (luaL_newmetatable(L, PROF_STATE)) {
        lua_pushcfunction(L, state_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    if ((P = (Prof *)cg_big_zalloc(sizeof *P)) == NULL)
        luaL_error(L, "not enough memory for the profiler's state");
    *box = P;
    P->cc_clean = 1;
    P->cur = P->prev = P->prev2 = P->dead_from = -1;
    P->psfree = -1;
    P->l54.hc_off = -1;
    P->l54.proto_off = -1;
    P->vm_off = P->clk_off = -1;
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &cg_prof_key);
    return P;
}


void cg_prof_drop(lua_State *L)
{
    Prof *P = cg_prof_get(L);
    reset_data(P);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &cg_prof_key);
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);
    lua_pop(L, 1);
}

/* opts.engine: "vm" (the counting interpreter's clock; its default
 * there), "hook" (the debug hook's counter), nil. */
static int engine(const Prof *P, lua_State *L, int idx)
{
    const char *e = NULL;
    int vm;
    if (lua_istable(L, idx)) {
        lua_getfield(L, idx, "engine");
        e = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    if (e != NULL && strcmp(e, "vm") != 0 && strcmp(e, "hook") != 0)
        luaL_error(L, "engine: \"vm\" or \"hook\", not \"%s\"", e);
    vm = P->vm_off >= 0 && !P->count_hook && (e == NULL || !strcmp(e, "vm"));
    if (e != NULL && !strcmp(e, "vm") && !vm)
        luaL_error(L, "engine \"vm\": %s", P->count_hook
                   ? "count_hook = true counts with the hook"
                   : "not the counting interpreter (make vm: build/bin/callgrind-lua5.4)");
    return vm;
}

/* The ways a start with the options at opts counts (cg_prof_base.h's
 * Prof fields from count_hook to direct). */
static void modes(Prof *P, lua_State *L, int opts)
{
    P->count_hook = cg_prof_flag(L, opts, "count_hook", 0);
    P->vm = engine(P, L, opts);
    P->count_hook = P->count_hook || (!P->vm && P->l54.hc_off < 0);
    P->clk_off = P->vm ? P->vm_off : P->l54.hc_off;
    P->lines = cg_prof_flag(L, opts, "lines", 1);
    P->stacks = cg_prof_flag(L, opts, "stacks", 0);
    P->ev[EV_INSTR] = 1;
    P->ev[EV_TIME] = cg_prof_flag(L, opts, "time", 0);
    P->ev[EV_ALLOC] = cg_prof_flag(L, opts, "alloc", 0);
    P->simple = !P->count_hook && !P->ev[EV_TIME] && !P->ev[EV_ALLOC];
    /* Instr alone on the counting interpreter: the VM keeps the calls and
     * stacks (cg_prof_direct.c), its counts give the lines, debug.sethook
     * stays the user's. An interpreter of another build (without the VM's
     * stacks, or with other tables) takes the debug hook and the VM's
     * clock, as time and alloc do. */
    P->direct = P->vm && P->simple && P->has_vmh && P->l54.proto_off >= 0
                && P->vmh.direct != NULL && P->l54.prev_ok
                && (!P->stacks || (P->vmh.stacks != NULL
                                   && cg_prof_direct_fits(&P->vmh)));
    /* the hook engine steps the collector: it holds functions weakly */
    P->weak = !P->direct && lua_gc(L, LUA_GCISRUNNING);
}

/* Runs the probes of the Lua 5.4 shortcuts, once. */
static void calibrate(Prof *P, lua_State *L)
{
    cg_l54_probe(L, cg_prof_collect_hook(), &P->l54);
    P->vm_off = cg_l54_vm_clock();
    P->has_vmh = P->vm_off >= 0 && cg_l54_vm(&P->vmh);
    P->calibrated = 1;
}

/* ---- the chosen engine started and stopped ---- */

int cg_prof_own_hook(lua_State *L, int opts)
{
    Prof *P = cg_prof_state(L);
    if (!P->calibrated)
        calibrate(P, L);
    if (P->running)
        return P->direct;
    modes(P, L, opts);
    return P->direct;
}

void cg_prof_start(lua_State *L, int opts, int level)
{
    Prof *P = cg_prof_state(L);
    if (P->running)
        luaL_error(L, "the profiler is already running");
    if (!P->calibrated)
        calibrate(P, L);
    cg_prof_drop(L);
    clean_call_cache(P);
    modes(P, L, opts);
    P->cc_clean = 0;            /* (the run may make entries) */
    cg_prof_collect_begin(P, L, level);
    if (P->direct)
        cg_prof_direct_start(P, L, level);
    cg_prof_collect_clock(P, L);
}

int cg_prof_stop(lua_State *L)
{
    Prof *P = cg_prof_get(L);
    if (!P->direct)
        return cg_prof_collect_stop(P, L);
    cg_prof_hook_in(P);
    cg_prof_direct_stop(P, L);
    return 1;
}

size_t cg_prof_bytes(const Prof *P)
{
    return cg_prof_fold_bytes(P) + cg_prof_direct_bytes(P);
}
