/* The collector's state, its collector steps and its allocator.
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
#include "cg_prof_collect.h"
#include "cg_prof_signal.h"
#include "cg_mem.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#define PROF_STATE "callgrind.ProfilerState"
const char cg_prof_key = 'p';          /* its address keys the registry */

Prof *cg_prof_get(lua_State *L)
{
    Prof *P;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &cg_prof_key);
    P = (Prof *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    return P;
}

/* Out of memory inside the hook or a start/stop: the state stays
 * consistent (every array grows before it is written). */
void cg_prof_oom(Prof *P, lua_State *L)
{
    P->in_hook = 0;
    luaL_error(L, "not enough memory");
}

/* ---- the collector's steps ----
 *
 * Finalizers run with hooks off, but the instruction counter keeps
 * counting, so a finalizer that ran in the middle of a Lua function would
 * be charged to the line that happened to allocate. While profiling, the
 * automatic collector is stopped and its steps are taken here, inside the
 * hook, at the pace it would have taken them itself (a step every 8 KB
 * allocated, the next cycle once as much again is allocated as is in
 * use): what finalizers run there is nobody's. A collectgarbage("restart")
 * by the profiled code gives the collector back. */

#define GC_STEP_BYTES 8192

void cg_prof_gc_take(Prof *P, lua_State *L)
{
    P->gc_ours = lua_gc(L, LUA_GCISRUNNING);
    if (P->gc_ours)
        lua_gc(L, LUA_GCSTOP);
    P->gc_last = 0;
    P->gc_next = P->gc_ours ? GC_STEP_BYTES : INT64_MAX;
}

void cg_prof_gc_give_back(Prof *P, lua_State *L)
{
    if (P->gc_ours && !lua_gc(L, LUA_GCISRUNNING))
        lua_gc(L, LUA_GCRESTART);
    P->gc_ours = 0;
}

/* With in_hook set (the finalizers' allocations are not counted). A step
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

/* ---- the state ---- */

static void reset_data(Prof *P)
{
    size_t i;
    for (i = 0; i < P->nth; i++)
        free(P->th[i].f);
    for (i = 0; i < P->nfn; i++)
        free(P->fns[i].lines);
    free(P->th);
    free(P->fns);
    free(P->edges);
    cg_big_free(P->nodes, P->capnode * sizeof *P->nodes);
    P->nodes = NULL;
    P->nnode = P->capnode = 0;
    cg_pm_free(&P->nodemap);
    cg_pm_free(&P->thmap);
    cg_pm_free(&P->fnmap);
    cg_pm_free(&P->edmap);
    cg_prof_fold_free(P);
    cg_prof_over_free(P);
    P->th = NULL;
    P->fns = NULL;
    P->edges = NULL;
    P->nth = P->capth = P->nfn = P->capfn = P->ned = P->caped = 0;
    P->cur = P->prev = P->prev2 = -1;
    P->fast = NULL;
    memset(&P->G, 0, sizeof P->G);
    for (i = 0; i < CALL_CACHE; i++)
        P->cc[i].caller = -1;
}

static int state_gc(lua_State *L)
{
    Prof *P = (Prof *)luaL_checkudata(L, 1, PROF_STATE);
    cg_prof_sig_disarm(L);      /* no handler may reach a closed state */
    if (P->running && P->direct) {
        /* the VM's frames point into what the profiler frees */
        P->vmh.direct(L, 0);
        P->vmh.hook(L, NULL, NULL);
        P->vmh.onfree(L, NULL);
    }
    cg_prof_direct_free(P);
    cg_prof_restore_alloc(P, L);
    P->running = 0;
    reset_data(P);
    return 0;
}

Prof *cg_prof_state(lua_State *L)
{
    Prof *P = cg_prof_get(L);
    if (P != NULL)
        return P;
    P = (Prof *)lua_newuserdatauv(L, sizeof *P, 1);
    memset(P, 0, sizeof *P);
    P->cur = P->prev = P->prev2 = -1;
    P->psfree = -1;
    P->l54.hc_off = -1;
    P->l54.proto_off = -1;
    P->vm_off = P->clk_off = -1;
    if (luaL_newmetatable(L, PROF_STATE)) {
        lua_pushcfunction(L, state_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &cg_prof_key);
    return P;
}


/* opts[name] as a boolean; def when it is nil or opts is not a table. */
int cg_prof_flag(lua_State *L, int idx, const char *name, int def)
{
    int v = def;
    if (lua_type(L, idx) != LUA_TTABLE)
        return def;
    lua_getfield(L, idx, name);
    if (!lua_isnil(L, -1))
        v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
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

void cg_prof_push_info(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &cg_prof_key);
    lua_getiuservalue(L, -1, 1);
    lua_remove(L, -2);
}
/* The ways a start with the options at opts counts (cg_prof_collect.h's
 * Prof fields from count_hook to direct). */
void cg_prof_modes(Prof *P, lua_State *L, int opts)
{
    P->count_hook = cg_prof_flag(L, opts, "count_hook", 0);
    P->vm = cg_prof_engine(P, L, opts);
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
void cg_prof_calibrate(Prof *P, lua_State *L, lua_Hook hook)
{
    cg_l54_probe(L, hook, &P->l54);
    P->vm_off = cg_l54_vm_clock();
    P->has_vmh = P->vm_off >= 0 && cg_l54_vm(&P->vmh);
    P->calibrated = 1;
}

/* ---- allocation counting ---- */

void *cg_prof_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    Prof *P = (Prof *)ud;
    size_t had = ptr != NULL ? osize : 0;
    if (nsize > had && !P->in_hook)
        P->alloc += (int64_t)(nsize - had);
    return P->old_f(P->old_ud, ptr, osize, nsize);
}

void cg_prof_restore_alloc(Prof *P, lua_State *L)
{
    void *ud;
    if (P->old_f != NULL && lua_getallocf(L, &ud) == cg_prof_alloc && ud == P) {
        lua_setallocf(L, P->old_f, P->old_ud);
        P->old_f = NULL;
    }
}
