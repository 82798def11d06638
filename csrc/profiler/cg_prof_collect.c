/* The hook engine: a debug hook with a shadow stack per thread
 * that counts Lua VM instructions (and optionally time and allocated bytes)
 * per function, per source line, per call site and (opts.stacks) per
 * distinct call stack. Portable: it reads Lua's private structures only
 * through cg_prof_lua54.h, whose probes turn each shortcut off where it
 * does not hold.
 *
 * How it counts and attributes: cg_prof_collect.h.
 *
 * The functions it sees are cg_prof_fold.c's, the records it charges
 * (edges, lines, stack nodes) cg_prof_records.c's; cg_prof_state.c starts
 * and stops it. */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof_collect.h"
#include "cg_prof_fold.h"
#include "cg_prof_records.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lauxlib.h"
#include "lualib.h"

/* ---- small helpers ---- */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The hook's way to its state: while profiling, the state's allocator is
 * ours (it counts bytes) and its user data is the state; once stopped it is
 * not, and a thread that still has the hook removes it. */
static Prof *running_prof(lua_State *L)
{
    return (Prof *)cg_l54_alloc_ud(L, cg_prof_alloc);
}

static void cost_add(Cost *a, const Cost *b)
{
    int i;
    for (i = 0; i < NEV; i++)
        a->v[i] += b->v[i];
}

/* ---- the instruction counter ---- */

static int32_t read_hookcount(const Prof *P, const lua_State *L)
{
    int32_t h;
    memcpy(&h, (const char *)L + P->clk_off, sizeof h);
    return h;
}

/* Instructions thread T ran since the last take; `keep` of them are left
 * for the next take (the new line's first instruction). */
static int64_t take_instr(const Prof *P, Thread *T, int keep)
{
    int64_t d;
    if (P->count_hook) {
        d = T->counted - T->lastc;
        T->lastc = T->counted - keep;
    } else {
        int32_t h = read_hookcount(P, T->L);
        d = (int64_t)(uint32_t)((uint32_t)T->last - (uint32_t)h);
        T->last = (int32_t)((uint32_t)h + (uint32_t)keep);
    }
    return d - keep;
}

/* ---- threads and frames ---- */

static Frame *top(Thread *T)
{
    return T->top;
}

static Cost thread_clock(const Prof *P, const Thread *T)
{
    Cost c;
    int i;
    for (i = 0; i < NEV; i++)
        c.v[i] = (T->suspended ? T->susp_at.v[i] : P->G.v[i]) - T->susp.v[i];
    return c;
}

/* Charges a cost to the function and line on top of T (nothing for the
 * root: what runs outside every observed call is not in the profile).
 * Instructions counted while a C function is on top ran with hooks off:
 * finalizers the collector called from it (collectgarbage, an allocation
 * in the C function); a count hook does not see them either, and they are
 * left out. */
static void charge(Prof *P, lua_State *L, Thread *T, Cost *d)
{
    Frame *f = top(T);
    if (f->fn < 0)
        return;
    if (P->fns[f->fn].what == 'C')
        d->v[EV_INSTR] = 0;
    if ((d->v[0] | d->v[1] | d->v[2]) == 0)
        return;
    cg_prof_line_add(P, cg_prof_line_slot(P, L, f->fn, f->line), d);
    if (f->node >= 0)
        cost_add(&P->nself[f->node], d);
    cost_add(&P->G, d);
}

/* A call's inclusive cost goes to its edge only when no other frame of
 * the callee is active (in this thread or the ones that resumed it):
 * the outer call of a recursion already holds the inner ones, so an
 * edge's cost never exceeds the total, and recursion (tail calls
 * included) never counts a cost twice. */
static void pop(Prof *P, Thread *T)
{
    Frame *f = top(T);
    if (f->ci != NULL && f->fn >= 0)
        P->fns[f->fn].active--;
    if (f->edge >= 0) {
        Edge *e = &P->edges[f->edge];
        e->count++;
        if (P->fns[f->fn].active == 0) {
            Cost now = thread_clock(P, T);
            int i;
            for (i = 0; i < NEV; i++)
                now.v[i] -= f->start.v[i];
            e->incl += now.v[EV_INSTR];
            if (P->eplus != NULL)
                cg_prof_edge_plus(P, f->edge, &now);
        }
    }
    T->n--;
    T->top--;
}

/* Pops the frames above the topmost one whose CallInfo is ci (they never
 * returned: an error unwound them). Returns 0 when no frame has ci. */
static int sync(Prof *P, Thread *T, const void *ci)
{
    size_t k = T->n;
    while (k > 1 && T->f[k - 1].ci != ci)
        k--;
    if (k <= 1)
        return 0;
    while (T->n > k)
        pop(P, T);
    return 1;
}

static void close_all(Prof *P, Thread *T)
{
    while (T->n > 1)
        pop(P, T);
}

static void push(Prof *P, lua_State *L, Thread *T, const void *ci,
                 int32_t fn, int32_t line, int32_t edge)
{
    Frame *f;
    if (T->n >= T->cap && CG_GROW(T->f, T->cap, T->n + 1) != 0)
        cg_prof_oom(P, L);
    f = T->top = &T->f[T->n++];
    f->ci = ci;
    f->fn = fn;
    f->line = line;
    f->edge = edge;
    f->tail = 0;
    f->lua = fn >= 0 && P->fns[fn].what != 'C';
    if (T->n == 1 || !P->stacks) {
        f->node = T->n == 1 ? -1 : f[-1].node;
    } else {
        /* fn's last node, when called from the same stack again (a loop,
         * or a caller that calls it between others) */
        FnCost *c = &P->fns[fn];
        if (c->np != f[-1].node) {
            c->np = f[-1].node;
            c->nn = cg_prof_node_of(P, L, f[-1].node, fn);
        }
        f->node = c->nn;
    }
    if (ci != NULL && fn >= 0)
        P->fns[fn].active++;
    f->start = thread_clock(P, T);
}

static int32_t thread_index(Prof *P, lua_State *L)
{
    return cg_pm_get(&P->thmap, (uint64_t)(uintptr_t)L, 0);
}

/* A record for a thread seen for the first time, L (running): its counter
 * starts now. */
static Thread *add_thread(Prof *P, lua_State *L, int32_t root_fn)
{
    size_t i;
    Thread *T;
    for (i = 0; i < P->nth && P->th[i].L != NULL; i++)
        ;
    if (i == P->nth) {
        if (CG_GROW(P->th, P->capth, P->nth + 1) != 0)
            cg_prof_oom(P, L);
        memset(&P->th[P->nth++], 0, sizeof *P->th);
    }
    if (cg_pm_put(&P->thmap, (uint64_t)(uintptr_t)L, 0, (int32_t)i) != 0)
        cg_prof_oom(P, L);
    T = &P->th[i];
    cg_prof_anchor(L, L, 1);
    T->L = L;
    T->n = 0;
    T->counted = T->lastc = 0;
    T->last = P->count_hook ? 0 : read_hookcount(P, L);
    memset(&T->susp, 0, sizeof T->susp);
    T->suspended = 0;
    T->fresh = 0;
    T->resumer = -1;
    push(P, L, T, NULL, root_fn, 0, -1);
    T->f[0].node = P->from_node;
    return T;
}

static void drop_thread(Prof *P, lua_State *L, Thread *T)
{
    cg_prof_anchor(L, T->L, 0);
    cg_pm_del(&P->thmap, (uint64_t)(uintptr_t)T->L, 0);
    T->L = NULL;
    T->n = 0;
    T->top = NULL;
    if (P->cur == (int32_t)(T - P->th)) {
        P->cur = -1;
        P->fast = NULL;
    }
}

/* The thread that ran until now is left: suspended if it yielded, dropped
 * (its frames closed) if an error killed it. A coroutine.wrap function
 * whose coroutine an error killed resets that coroutine before it raises
 * the error again (lua_resetthread: status LUA_OK, no CallInfo left), and
 * so does coroutine.close: a thread with no frame at all is dead too (a
 * thread that resumed another, LUA_OK as well, has the resume's). */
/* A coroutine's body returned (T current, no frame left): it is dead, and
 * its record goes. A closed coroutine runs each of its __close methods so
 * (coroutine.close, a coroutine.wrap function whose coroutine an error
 * killed): the next one is called by its closer too (T's root). */
static void body_done(Prof *P, lua_State *L, Thread *T)
{
    P->dead_from = T->resumer;
    P->from_fn = T->f[0].fn;
    P->from_node = T->f[0].node;
    drop_thread(P, L, T);
}

/* coroutine.close returns in L (ar): the frames of the coroutine it
 * closed close now, when a __close method of it did not close them
 * already (the coroutine is dead, its record goes). A suspended one's
 * close as at stop, at the clock of its yield. */
static void closed(Prof *P, lua_State *L, lua_Debug *ar)
{
    lua_State *co;
    int32_t i;
    if (lua_getlocal(L, ar, 1) == NULL)
        return;
    co = lua_tothread(L, -1);
    lua_pop(L, 1);
    if (co == NULL || co == L || (i = thread_index(P, co)) < 0)
        return;
    if (lua_status(co) != LUA_OK || lua_getstack(co, 0, ar))
        return;                 /* not dead (ar is free: L's hook ends) */
    if (P->th[i].suspended)
        cg_prof_activity(P, &P->th[i], 1);
    close_all(P, &P->th[i]);
    drop_thread(P, L, &P->th[i]);
}

static void leave(Prof *P, lua_State *L, Thread *T)
{
    int st = lua_status(T->L);
    lua_Debug ar;
    if (st == LUA_YIELD) {
        T->suspended = 1;
        T->susp_at = P->G;
        cg_prof_activity(P, T, -1);
    } else if (st != LUA_OK || !lua_getstack(T->L, 0, &ar)) {
        close_all(P, T);
        drop_thread(P, L, T);
    }
}

/* The threads an error went through from a dead coroutine (record r,
 * the resumer of the one left) to L, the thread that runs now: each
 * resumed the one before it and died of the same error (a coroutine.wrap
 * function raises it again in its own thread), with no event of theirs
 * on the way. Their frames close now, not at stop. */
static void leave_dead(Prof *P, int32_t r, lua_State *L)
{
    size_t k;
    for (k = 0; k < P->nth && r >= 0 && (size_t)r < P->nth; k++) {
        Thread *R = &P->th[r];
        lua_Debug ar;
        int st;
        if (R->L == NULL || R->L == L || R->suspended)
            return;
        st = lua_status(R->L);
        if (st == LUA_YIELD || (st == LUA_OK && lua_getstack(R->L, 0, &ar)))
            return;             /* alive */
        r = R->resumer;
        close_all(P, R);
        drop_thread(P, L, R);
    }
}

/* The instructions thread T ran since the last event go to its top
 * function and line: take_instr and charge for Instr alone (P->simple),
 * with no Cost on the way. L is the running thread (errors are raised
 * there). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void charge_instr(Prof *P, lua_State *L, Thread *T, int keep)
{
    int32_t h = read_hookcount(P, T->L);
    int64_t d = (int64_t)(uint32_t)((uint32_t)T->last - (uint32_t)h) - keep;
    const Frame *f = top(T);
    T->last = (int32_t)((uint32_t)h + (uint32_t)keep);
    /* a C function on top ran none */
    if (d != 0 && f->fn >= 0 && P->fns[f->fn].what != 'C') {
        FnCost *c = &P->fns[f->fn];
        size_t i = (size_t)((int64_t)f->line - c->lo);
        if (f->line >= c->lo && i < c->n)
            c->lines[i] += d;   /* P->simple: Instr alone, cw 1 */
        else
            cg_prof_line_slot(P, L, f->fn, f->line)[EV_INSTR] += d;
        if (f->node >= 0)
            P->nself[f->node].v[EV_INSTR] += d;
        P->G.v[EV_INSTR] += d;
    }
}

/* Charges what T ran since the last event to its top: Instr, and with
 * `others` the Time and Alloc since the hook last left. L is the running
 * thread (errors are raised there). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void charge_since(Prof *P, lua_State *L, Thread *T,
                                int64_t now, int keep, int others)
{
    Cost d;
    if (P->simple) {
        charge_instr(P, L, T, keep);
        return;
    }
    memset(&d, 0, sizeof d);
    if (others && P->ev[EV_TIME])
        d.v[EV_TIME] = now - P->t_out;
    if (others && P->ev[EV_ALLOC])
        d.v[EV_ALLOC] = P->alloc - P->alloc_last;
    d.v[EV_INSTR] = take_instr(P, T, keep);
    charge(P, L, T, &d);
}

/* Whether record i is the thread L's. */
static int thread_is(const Prof *P, int32_t i, const lua_State *L)
{
    return i >= 0 && (size_t)i < P->nth && P->th[i].L == L;
}

/* Charges what ran since the last event and returns the record of L,
 * switching threads when L is not the current one. The threads that ran
 * before are tried before the thread map (a generator and its consumer
 * take turns; a pipeline of two, three threads). */
static Thread *enter(Prof *P, lua_State *L, int64_t now, int keep)
{
    Thread *T = P->cur >= 0 ? &P->th[P->cur] : NULL;
    int32_t i, from, dead = P->dead_from;
    if (T != NULL && T->L == L) {
        charge_since(P, L, T, now, keep, 1);
        return T;
    }
    if (T != NULL) {
        int32_t r = T->resumer;
        P->from_fn = -1;
        P->from_node = -1;
        charge_since(P, L, T, now, 0, 1);
        P->from_fn = top(T)->fn;
        P->from_node = top(T)->node;
        leave(P, L, T);
        if (T->L == NULL)
            leave_dead(P, r, L);
    } else if (P->dead_from >= 0) {
        /* the last thread's body returned (a __close its reset ran): the
         * threads an error took from its closer on close now too */
        leave_dead(P, P->dead_from, L);
    }
    P->dead_from = -1;
    from = P->cur;
    /* no thread current: the last one's body returned (a __close of a
     * closed coroutine), its resumer runs on (the closer: the resumer of
     * a second __close's record, which the error raised again may kill) */
    if (from < 0 && dead >= 0 && (size_t)dead < P->nth && P->th[dead].L != NULL)
        from = dead;
    i = thread_is(P, P->prev, L) ? P->prev
        : thread_is(P, P->prev2, L) ? P->prev2 : thread_index(P, L);
    if (i != P->prev)
        P->prev2 = P->prev;
    P->prev = P->cur;
    T = i >= 0 ? &P->th[i] : add_thread(P, L, P->from_fn);
    if (i < 0) {
        T->fresh = 1;
        T->resumer = from;
    }
    P->cur = (int32_t)(T - P->th);
    if (T->suspended) {
        T->resumer = from;
        int k;
        for (k = 0; k < NEV; k++)
            T->susp.v[k] += P->G.v[k] - T->susp_at.v[k];
        T->suspended = 0;
        cg_prof_activity(P, T, 1);
        cg_prof_rebase(P, L, T, P->from_node);
    }
    charge_since(P, L, T, now, keep, 0);
    return T;
}

/* The call cache's entry for a call from caller's function and line to
 * the function of key. */
static CallSeen *call_slot(Prof *P, const Frame *caller, uint64_t key)
{
    return cg_prof_call_slot(P, caller->fn, caller->line, key);
}

static void on_call(Prof *P, lua_State *L, Thread *T, lua_Debug *ar)
{
    int32_t fn, edge;
    int named;
    uint64_t key = 0;
    int32_t line;
    Frame *caller;
    CallSeen *e;
    if (ar->event == LUA_HOOKTAILCALL) {
        sync(P, T, ar->i_ci);
        if (top(T)->ci == ar->i_ci)
            top(T)->tail = 1;
    } else {
        lua_Debug up;
        if (lua_getstack(L, 1, &up)) {
            if (top(T)->ci != up.i_ci)
                sync(P, T, up.i_ci);
            if (top(T)->ci == up.i_ci)
                cg_prof_tfor_line(P, L, top(T), &up);
        } else if (T->n > 1) {
            /* the bottom of a coroutine where a dead one had frames: a
             * __close method its closer runs (coroutine.close, or a
             * coroutine.wrap function whose coroutine an error killed,
             * with no event in between: the one that resumed it last) */
            const Frame *c = NULL;
            if (T->resumer >= 0 && (size_t)T->resumer < P->nth
                && P->th[T->resumer].L != NULL && &P->th[T->resumer] != T)
                c = top(&P->th[T->resumer]);
            close_all(P, T);
            T->f[0].fn = c != NULL ? c->fn : P->from_fn;
            T->f[0].lua = 0;
            T->f[0].node = c != NULL ? c->node : P->from_node;
            T->fresh = 1;
        }
    }
    caller = top(T);
    named = ar->event != LUA_HOOKTAILCALL;
    line = caller->line;
    e = caller->fn >= 0 && P->l54.ci_ok
                && cg_l54_ci_key(&P->l54, ar->i_ci, &key)
            ? call_slot(P, caller, key) : NULL;
    if (e != NULL && e->caller == caller->fn && e->line == line
        && e->key == key) {
        fn = e->fn;
        edge = e->edge;
        if (named && !P->fns[fn].asked)
            cg_prof_name_from_call(P, L, ar, fn);
    } else {
        fn = cg_prof_resolve(P, L, ar, named);
        caller = top(T);
        edge = caller->fn < 0 ? -1
                              : cg_prof_edge_id(P, L, caller->fn, caller->line, fn);
        if (e != NULL) {
            e->key = key;
            e->caller = caller->fn;
            e->line = line;
            e->fn = fn;
            e->edge = edge;
        }
    }
    caller = top(T);
    if (!named && caller->ci == ar->i_ci && caller->fn == fn) {
        /* a function tail-calling itself: one frame for the whole loop
         * (its edge counts the call; the cost stays in the frame) */
        if (edge >= 0)
            P->edges[edge].count++;
        caller->line = P->fns[fn].defined;
        return;
    }
    push(P, L, T, ar->i_ci, fn, P->fns[fn].defined, edge);
}

static void on_return(Prof *P, Thread *T, const lua_Debug *ar)
{
    const void *ci = ar->i_ci;
    if (top(T)->ci != ci && !sync(P, T, ci))
        return;                 /* a frame older than the profile */
    pop(P, T);
    while (T->n > 1 && top(T)->tail && top(T)->ci == ci)
        pop(P, T);
    if (T->fresh && T->n == 1)
        body_done(P, T->L, T);     /* a coroutine's body returned: it is dead */
}

/* The fast paths of the common case (P->simple, T current): calls and
 * returns that need no lookup, no allocation and no Lua API call. Each
 * returns 0, having changed nothing, when the general path must take the
 * event. */

/* The call cache's entry for the call of ci from the frame on top of T,
 * or NULL when it holds another call. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const CallSeen *seen_callee(Prof *P, const Frame *caller,
                                          const void *ci)
{
    const CallSeen *e;
    uint64_t key;
    if (!cg_l54_ci_key(&P->l54, ci, &key))
        return NULL;
    e = call_slot(P, caller, key);
    return e->key == key && e->caller == caller->fn
                   && e->line == caller->line ? e : NULL;
}

/* push() for Instr only: the frame of ci for the callee of e, unless its
 * name is still to be asked (named) or, with stacks, its node under the
 * caller's is still to be made (or the caller has none). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int fast_push(Prof *P, Thread *T, Frame *caller,
                            const void *ci, const CallSeen *e, int named)
{
    Frame *f;
    FnCost *d = &P->fns[e->fn];
    if (named && !d->asked)
        return 0;
    if (P->stacks && d->np != caller->node) {
        int32_t fn = e->fn, id;
        if (caller->node < 0)
            return 0;
        id = cg_prof_kid_cached(P, caller->node, fn);
        if (id < 0) {
            id = cg_prof_find_kid(P, caller->node, fn);
            if (id < 0)
                return 0;
            cg_prof_kid_remember(P, caller->node, fn, id);
        }
        d->np = caller->node;
        d->nn = id;
    }
    f = T->top = caller + 1;
    T->n++;
    f->ci = ci;
    f->fn = e->fn;
    f->line = d->defined;
    f->edge = e->edge;
    f->node = P->stacks ? d->nn : caller->node;
    f->tail = 0;
    f->lua = d->what != 'C';
    d->active++;
    /* not memset: it can become a slow `rep stos` here */
    f->start.v[EV_TIME] = f->start.v[EV_ALLOC] = 0;
    f->start.v[EV_INSTR] = P->G.v[EV_INSTR] - T->susp.v[EV_INSTR];
    return 1;
}

/* on_call of a call: its caller on top of T. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int fast_call(Prof *P, Thread *T, const void *ci)
{
    Frame *caller = top(T);
    const CallSeen *e;
    const void *pc;
    if (!P->l54.prev_ok || caller->fn < 0 || T->n >= T->cap
        || caller->ci != cg_l54_ci_prev(ci))
        return 0;
    if ((pc = cg_prof_tfor_pc(P, caller)) != NULL) {
        /* a generic for's call: its line (tfor_line) */
        size_t k = cg_prof_tfor_slot(pc);
        if (P->tfor_pc[k] != pc)
            return 0;
        caller->line = P->tfor_line[k];
    }
    e = seen_callee(P, caller, ci);
    return e != NULL && fast_push(P, T, caller, ci, e, 1);
}

/* on_call of a tail call: the frame it replaces on top of T (same ci). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int fast_tail(Prof *P, Thread *T, const void *ci)
{
    Frame *caller = top(T);
    const CallSeen *e;
    if (caller->fn < 0 || T->n >= T->cap || caller->ci != ci)
        return 0;
    e = seen_callee(P, caller, ci);
    if (e == NULL)
        return 0;
    if (e->fn == caller->fn) {
        /* a function tail-calling itself: as on_call */
        if (e->edge >= 0)
            P->edges[e->edge].count++;
        caller->line = P->fns[e->fn].defined;
        return 1;
    }
    if (!fast_push(P, T, caller, ci, e, 0))
        return 0;
    caller->tail = 1;
    return 1;
}

/* pop() for Instr only, of a frame with a CallInfo. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void pop_instr(Prof *P, Thread *T)
{
    const Frame *f = top(T);
    FnCost *c = &P->fns[f->fn];
    c->active--;
    if (f->edge >= 0) {
        Edge *e = &P->edges[f->edge];
        e->count++;
        if (c->active == 0)
            e->incl += P->G.v[EV_INSTR] - T->susp.v[EV_INSTR]
                       - f->start.v[EV_INSTR];
    }
    T->n--;
    T->top--;
}

/* on_return: the frame of ci on top of T (frames of ci under it that
 * tail calls replaced leave with it). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int fast_return(Prof *P, Thread *T, const void *ci)
{
    if (ci == NULL || top(T)->ci != ci || top(T)->fn < 0
        || P->fns[top(T)->fn].co_close)
        return 0;
    do
        pop_instr(P, T);
    while (top(T)->tail && top(T)->ci == ci && top(T)->fn >= 0);
    if (T->fresh && T->n == 1)
        body_done(P, T->L, T);     /* a coroutine's body returned: it is dead */
    return 1;
}

/* The hook counter counts only where a count hook is set (Lua 5.4.7
 * decrements it for a count hook alone; 5.4.4 under a line hook too), and
 * the counting interpreter's clock under a debug hook only where a line or
 * count hook is: a count hook this rare keeps both counting at no cost,
 * with lines or without */
#define COUNT_BASE INT32_MAX

/* The hook's general path: every event the fast paths of prof_hook do
 * not take. T is non-NULL when hook_calls or hook_events already charged
 * the instructions to it (the common case, P->simple and T current). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void hook_general(lua_State *L, lua_Debug *ar, Thread *T)
{
    Prof *P = running_prof(L);
    int64_t now = 0;
    int keep;
    if (P == NULL || !P->running) {
        lua_sethook(L, NULL, 0, 0);
        return;
    }
    if (P->in_hook)
        return;
    if (ar->event == LUA_HOOKCOUNT && !P->count_hook) {
        /* the counter of L ran down to 0 and started again from its
         * base (every 2^31 - 1 instructions; not the VM's clock) */
        int32_t i = P->vm ? -1 : thread_index(P, L);
        if (i >= 0)
            P->th[i].last = (int32_t)((uint32_t)P->th[i].last
                                      + (uint32_t)COUNT_BASE);
        return;
    }
    if (ar->event == LUA_HOOKCOUNT && P->cur >= 0 && P->th[P->cur].L == L) {
        P->th[P->cur].counted++;
        return;
    }
    keep = ar->event == LUA_HOOKLINE;
    if (T != NULL) {
        cg_prof_hook_in(P);         /* charged by prof_hook */
    } else {
        cg_prof_hook_in(P);
        if (P->ev[EV_TIME])
            now = now_ns();
        T = enter(P, L, now, ar->event == LUA_HOOKCOUNT ? 0 : keep);
        if (ar->event == LUA_HOOKCOUNT)
            T->counted++;
    }
    switch (ar->event) {
    case LUA_HOOKLINE:
        if (top(T)->ci != ar->i_ci)
            sync(P, T, ar->i_ci);
        if (top(T)->ci == ar->i_ci)
            top(T)->line = ar->currentline;
        break;
    case LUA_HOOKCALL:
    case LUA_HOOKTAILCALL:
        on_call(P, L, T, ar);
        break;
    case LUA_HOOKRET:
        if (top(T)->ci == ar->i_ci && top(T)->fn >= 0
            && P->fns[top(T)->fn].co_close)   /* or collectgarbage */
            P->fns[top(T)->fn].co_close == 1 ? closed(P, L, ar)
                                             : cg_prof_weak_check(P, L);
        on_return(P, T, ar);
        break;
    default:
        break;
    }
    if (P->gc_ours && P->alloc >= P->gc_next)
        cg_prof_gc_step(P, L);
    /* what our own work ran (finalizers of a collection) is not counted
     * (the counting interpreter runs hooks off its clock) */
    if (P->cur >= 0 && P->th[P->cur].L == L && !P->count_hook && !P->vm)
        P->th[P->cur].last = (int32_t)((uint32_t)read_hookcount(P, L)
                                       + (uint32_t)keep);
    P->alloc_last = P->alloc;
    cg_prof_hook_out(P);
    if (P->ev[EV_TIME])
        P->t_out = now_ns();
}

/* The common case's events prof_hook leaves (a thread switch, a step
 * due, a line not known); T: the thread last run. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void hook_events(lua_State *L, lua_Debug *ar, Prof *P, Thread *T)
{
    Frame *f;
    if (T->L == L) {
        charge_instr(P, L, T, ar->event == LUA_HOOKLINE);
    } else {
        /* another thread runs: a resume or a yield */
        cg_prof_hook_in(P);
        T = enter(P, L, 0, ar->event == LUA_HOOKLINE);
        cg_prof_hook_out(P);
    }
    if (P->alloc < P->gc_next) {
        switch (ar->event) {
        case LUA_HOOKLINE:
            f = top(T);
            if (f->ci == ar->i_ci) {
                f->line = ar->currentline;
                return;
            }
            break;
        case LUA_HOOKCALL:
            if (fast_call(P, T, ar->i_ci))
                return;
            break;
        case LUA_HOOKTAILCALL:
            if (fast_tail(P, T, ar->i_ci))
                return;
            break;
        case LUA_HOOKRET:
            if (fast_return(P, T, ar->i_ci))
                return;
            break;
        default:
            break;
        }
    }
    hook_general(L, ar, T);
}

/* The hook's body, P the running state or NULL: the common case (Instr
 * only, no collector step due) in hook_events, the rest in hook_general. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void hook_body(lua_State *L, lua_Debug *ar, Prof *P)
{
    if (P == NULL || !P->simple || !P->running || P->in_hook || P->cur < 0
        || ar->event == LUA_HOOKCOUNT)
        hook_general(L, ar, NULL);
    else
        hook_events(L, ar, P, &P->th[P->cur]);
}

/* prof_hook's events but the commonest (a new line of the function on top
 * of the thread that ran last). A thread's hook left from an earlier run
 * while the VM's hook runs this one leaves. P is the state or NULL; with
 * `find`, still to be found. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void hook_slow(lua_State *L, lua_Debug *ar, Prof *P, int find)
{
    if (find)
        P = running_prof(L);
    if (P != NULL && P->running && P->direct) {
        lua_sethook(L, NULL, 0, 0);
        return;
    }
    hook_body(L, ar, P);
}

/* prof_hook's calls and returns of T, the current thread, running L
 * (hook_events where no VM hook, thread switch or collector step is). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void hook_calls(lua_State *L, lua_Debug *ar, Prof *P, Thread *T)
{
    charge_instr(P, L, T, 0);
    if ((ar->event == LUA_HOOKCALL && fast_call(P, T, ar->i_ci))
        || (ar->event == LUA_HOOKTAILCALL && fast_tail(P, T, ar->i_ci))
        || (ar->event == LUA_HOOKRET && fast_return(P, T, ar->i_ci)))
        return;
    hook_general(L, ar, T);
}

/* The debug hook (engine hook, or vm with time or alloc, or where the
 * interpreter's own hook cannot serve: cg_prof_state.c's modes). Its commonest
 * event, a new line of the function on top of the thread that ran last,
 * is taken here when its count goes to a line known (charge_instr's work,
 * inline): a function this small, with no call but the tail call of
 * hook_slow, needs no stack frame. */
static void prof_hook(lua_State *L, lua_Debug *ar)
{
    Prof *P;
    Thread *T;
    Frame *f;
    FnCost *c;
    int32_t h;
    int64_t d;
    if (!cg_l54_g_ok) {
        hook_slow(L, ar, NULL, 1);
        return;
    }
    P = (Prof *)cg_l54_alloc_ud_g(L, cg_prof_alloc);
    if (P == NULL || (T = P->fast) == NULL || T->L != L
        || P->alloc >= P->gc_next || ar->event == LUA_HOOKCOUNT)
        goto slow;
    if (ar->event != LUA_HOOKLINE) {
        hook_calls(L, ar, P, T);
        return;
    }
    if ((f = top(T))->ci != ar->i_ci)
        goto slow;
    h = read_hookcount(P, L);
    d = (int64_t)(uint32_t)((uint32_t)T->last - (uint32_t)h) - 1;
    if (d != 0 && f->fn >= 0 && (c = &P->fns[f->fn])->what != 'C') {
        size_t i = (size_t)((int64_t)f->line - c->lo);
        if (f->line < c->lo || i >= c->n)
            goto slow;
        c->lines[i] += d;       /* P->simple: Instr alone, cw 1 */
        if (f->node >= 0)
            P->nself[f->node].v[EV_INSTR] += d;
        P->G.v[EV_INSTR] += d;
    }
    T->last = (int32_t)((uint32_t)h + 1u);
    f->line = ar->currentline;
    return;
slow:
    hook_slow(L, ar, P, 0);
}

/* Pushes the initial shadow stack: the frames from `level` down to the
 * bottom of the thread, as callers of one another. */
static void initial_stack(Prof *P, lua_State *L, Thread *T, int level)
{
    int n = 0, i;
    lua_Debug ar;
    while (lua_getstack(L, level + n, &ar))
        n++;
    for (i = n - 1; i >= 0; i--) {
        int32_t fn, caller = top(T)->fn;
        lua_getstack(L, level + i, &ar);
        lua_getinfo(L, "l", &ar);
        fn = cg_prof_resolve(P, L, &ar, 0);
        /* at function level every cost and call is at the line defined */
        push(P, L, T, ar.i_ci, fn,
             !P->lines ? P->fns[fn].defined
                       : ar.currentline < 0 ? 0 : ar.currentline,
             caller < 0 ? -1 : cg_prof_edge_id(P, L, caller, top(T)->line, fn));
    }
}

lua_Hook cg_prof_collect_hook(void)
{
    return prof_hook;
}

void cg_prof_collect_begin(Prof *P, lua_State *L, int level)
{
    Thread *T;
    if (!P->direct && lua_gethook(L) != NULL && lua_gethook(L) != prof_hook)
        luaL_error(L, "a debug hook is already set (debug.sethook); the "
                      "profiler does not chain hooks: remove it first");
    cg_prof_hook_in(P);   /* a collection's finalizers must not reach the hook */
    P->cw = P->ev[EV_TIME] || P->ev[EV_ALLOC] ? NEV : 1;   /* no records yet */
    P->from_fn = -1;
    P->from_node = -1;
    memset(P->tfor_pc, 0, sizeof P->tfor_pc);
    if (P->co_close == NULL) {
        /* coroutine.close (closed()): the library's own, not a global */
        lua_pushcfunction(L, luaopen_coroutine);
        lua_call(L, 0, 1);
        lua_getfield(L, -1, "close");
        P->co_close = lua_tocfunction(L, -1);
        lua_pop(L, 2);
    }   /* collectgarbage: cg_prof_weak_check at its return */
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_getfield(L, -1, "collectgarbage");
    P->gc_fn = lua_tocfunction(L, -1);
    lua_pop(L, 2);
    T = add_thread(P, L, -1);
    P->cur = 0;
    P->dead_from = -1;
    if (level > 0 && !P->direct)
        initial_stack(P, L, T, level);
    cg_prof_hook_out(P);
    if (!P->direct) {   /* the hooks find the state in the allocator's */
        P->old_f = lua_getallocf(L, &P->old_ud);
        lua_setallocf(L, cg_prof_alloc, P);
    }
}

void cg_prof_collect_clock(Prof *P, lua_State *L)
{
    Thread *T = &P->th[P->cur];
    /* the counting interpreter's clock runs without a count hook */
    if (!P->direct)
        lua_sethook(L, prof_hook,
                    LUA_MASKCALL | LUA_MASKRET | (P->lines ? LUA_MASKLINE : 0)
                        | LUA_MASKCOUNT,
                    P->count_hook ? 1 : COUNT_BASE);
    T->last = P->count_hook ? 0 : read_hookcount(P, L);
    T->counted = T->lastc = 0;
    P->alloc = P->alloc_last = 0;
    if (P->direct) {
        /* the counting interpreter runs finalizers off its clock */
        P->gc_ours = 0;
        P->gc_next = INT64_MAX;
    } else {
        cg_prof_gc_take(P, L);
    }
    P->running = 1;
    cg_prof_fast_update(P);
    P->t_out = now_ns();
}

int cg_prof_collect_stop(Prof *P, lua_State *L)
{
    Thread *T;
    lua_Debug ar;
    size_t i;
    int ours = lua_gethook(L) == prof_hook;
    cg_prof_hook_in(P);
    T = enter(P, L, now_ns(), 0);
    if (lua_getstack(L, 0, &ar) && top(T)->ci == ar.i_ci && T->n > 1)
        T->top = &T->f[--T->n - 1];
    for (i = 0; i < P->nth; i++)
        if (P->th[i].L != NULL) {
            if (P->th[i].suspended)
                cg_prof_activity(P, &P->th[i], 1);
            close_all(P, &P->th[i]);
            cg_prof_anchor(L, P->th[i].L, 0);
        }
    cg_prof_gc_give_back(P, L);
    if (ours)
        lua_sethook(L, NULL, 0, 0);
    cg_prof_restore_alloc(P, L);
    P->running = 0;
    cg_prof_hook_out(P);
    return ours;
}
