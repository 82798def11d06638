/* The counting interpreter keeping the calls itself (P->direct: engine vm,
 * Instr alone, stacks or not). The VM's per-pc counts give the lines; a
 * call's record here (VmCall, one per edge) is what the VM counts at
 * calls and returns, without calling the profiler:
 *
 * - each frame (CallInfo) holds the call that made it and the clock at
 *   that call, and a frame's return adds 1 to its call, and the clock's
 *   advance when no other frame of the callee runs (VmFn.active:
 *   recursion counts once, as the hook engine's pop());
 * - a prototype keeps, per pc, the callee and the call of its last call
 *   there: a call from a Lua frame with a call, to the same function
 *   again, joins it in the VM (csrc/vm/: ldo.h's cgenter), and so does a
 *   tail call (cgtail: the frame it replaces pends in the thread until
 *   their CallInfo leaves; a function tail-calling itself keeps its one
 *   frame, as the hook engine's);
 * - every other call reaches the hook here (direct_call): a first call
 *   from a site, a call from C or from a frame older than the profile.
 *
 * The VM's clock is the thread's; when a coroutine yields or ends, what
 * it ran is added to its resumer's, and its frames leave the running ones
 * while it is suspended, so a resume costs what ran until the yield and
 * the numbers are the hook engine's. An error's unwinding, a coroutine
 * killed, closed or collected, and stop make frames leave too, in the VM.
 *
 * With stacks each frame also holds its node (VmNode, one per Node of the
 * trie), and the VM charges what ran since the thread's last call or
 * return to the node on top at each of them; a new frame's node is one of
 * its caller node's newest children, which the node holds, or in the
 * node's table of older ones (VmKids, the VM's CgKids), else here
 * (direct_kid: cg_prof_node_of). A coroutine's frames move under the node
 * of each new resumer (the VM's luaD_cgbase), as the hook engine's
 * cg_prof_rebase. The calls and the functions' counters are in chunks
 * that never move, the nodes and their tables in fixed arrays (cg_mem.h):
 * the VM points into them, or adds its offsets to their addresses. */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof_direct.h"
#include "cg_prof_fold.h"
#include "cg_prof_records.h"
#include "cg_mem.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* a call: the VM's CgCall (lstate.h of the patch) first; its key is
 * its callee's in the nodes' children (fn + 1: 0 is none) */
typedef struct VmCall {
    lua_Unsigned calls, incl;
    lua_Integer *active;        /* its callee's VmFn.active */
    uint32_t key;
    int32_t fn, edge;           /* its callee; its edge, -1: none */
} VmCall;

typedef struct VmFn {
    lua_Integer active;         /* its frames running */
} VmFn;

/* a stack (P->stacks): the VM's CgNode, 32 bytes, two to a cache line:
 * its newest children (their callees' keys, their nodes' offsets in
 * bytes in P->vnode: 4 GiB, VM_NODES_MAX nodes, at most), three, or two
 * and in its last place its table of older ones (key VM_TAB, kid the
 * table's index in P->vkids; table 0 is no one's, the VM filling the
 * others), and its instructions. Its index (its Node's) is where it is
 * in P->vnode. */
#define VM_KIN 3
#define VM_KIDS 16
#define VM_TAB 0xffffffffu
typedef struct VmKids {
    struct {
        uint32_t key, kid;      /* kid: an offset, as in a node */
    } e[VM_KIDS];
} VmKids;

typedef struct VmNode {
    uint32_t key[VM_KIN];
    uint32_t kid[VM_KIN];
    lua_Unsigned self;          /* instructions run on top of it */
} VmNode;

/* The fixed arrays of nodes and tables: 2^27 nodes (4 GiB of address
 * space), 2^24 tables (2 GiB); where the address space is limited, less
 * (cg_fixed_init) */
#define VM_NODES_MAX ((size_t)1 << 27)
#define VM_KIDS_MAX ((size_t)1 << 24)

/* A chunked array (the calls, the functions' counters), in heap chunks
 * of REC entries that never move: every profiled process zeroes a first
 * chunk of three of them. */
#define REC_BITS 5
#define REC (1 << REC_BITS)

/* entry i's chunk, its place there in *at */
static size_t chunk_of(size_t i, size_t *at)
{
    *at = i & (REC - 1);
    return i >> REC_BITS;
}

/* entry i of the chunked array chunks (n chunks), or NULL: not made */
static void *chunk_at(void **chunks, size_t n, size_t i, size_t size)
{
    size_t at, c = chunk_of(i, &at);
    return c < n && chunks[c] != NULL ? (char *)chunks[c] + at * size : NULL;
}

/* entry i of the chunked array *chunks (n chunks), made zeroed */
static void *chunk_entry(Prof *P, lua_State *L, void ***chunks, size_t *n,
                         size_t i, size_t size)
{
    size_t at, c = chunk_of(i, &at);
    if (c >= *n) {
        void **grown = (void **)realloc(*chunks, (c + 1) * sizeof *grown);
        if (grown == NULL)
            cg_prof_oom(P, L);
        memset(grown + *n, 0, (c + 1 - *n) * sizeof *grown);
        *chunks = grown;
        *n = c + 1;
    }
    if ((*chunks)[c] == NULL
        && ((*chunks)[c] = calloc(REC, size)) == NULL)
        cg_prof_oom(P, L);
    return (char *)(*chunks)[c] + at * size;
}

/* frees the n chunks of *chunks */
static void chunks_free(void ***chunks, size_t *n)
{
    size_t c;
    for (c = 0; c < *n; c++)
        free((*chunks)[c]);
    free(*chunks);
    *chunks = NULL;
    *n = 0;
}

static VmFn *vm_fn(Prof *P, lua_State *L, int32_t fn)
{
    return (VmFn *)chunk_entry(P, L, (void ***)&P->vfn, &P->nvfn,
                               (size_t)fn, sizeof(VmFn));
}

/* The call of fn's frames without a caller (few functions have one: a
 * thread's bottom, the frames at the start), by nonemap. */
static VmCall *vm_none(Prof *P, lua_State *L, int32_t fn)
{
    int32_t i = cg_pm_get(&P->nonemap, (uint64_t)(uint32_t)fn, 0);
    VmCall *c;
    if (i < 0) {
        i = (int32_t)P->nnone;
        if (cg_pm_put(&P->nonemap, (uint64_t)(uint32_t)fn, 0, i) != 0)
            cg_prof_oom(P, L);
        P->nnone++;
    }
    c = (VmCall *)chunk_entry(P, L, (void ***)&P->vnone, &P->nvnone,
                              (size_t)i, sizeof(VmCall));
    if (c->active == NULL) {
        c->active = &vm_fn(P, L, fn)->active;
        c->fn = fn;
        c->key = (uint32_t)fn + 1;
        c->edge = -1;
    }
    return c;
}

static VmCall *vm_call(Prof *P, lua_State *L, int32_t edge)
{
    VmCall *c = (VmCall *)chunk_entry(P, L, (void ***)&P->vcall, &P->nvcall,
                                      (size_t)edge, sizeof(VmCall));
    if (c->active == NULL) {
        c->fn = P->edges[edge].callee;
        c->key = (uint32_t)c->fn + 1;
        c->edge = edge;
        c->active = &vm_fn(P, L, c->fn)->active;
    }
    return c;
}

/* node p's index */
static int32_t vm_node_id(const Prof *P, const VmNode *p)
{
    return (int32_t)(p - (const VmNode *)P->vnode.base);
}

/* The VM's way to a stack's child (csrc/vm/: luaD_cgkid, which keeps
 * it in parent's places or table): the node of the stack parent (NULL:
 * none) extended by call's callee, made zeroed. */
static void *direct_kid(void *ud, lua_State *L, void *parent, void *call)
{
    Prof *P = (Prof *)ud;
    VmNode *p = (VmNode *)parent;
    int32_t up = p != NULL ? vm_node_id(P, p) : -1, id,
            fn = ((const VmCall *)call)->fn;
    /* a node with fewer children than the VM keeps (VM_KIN - 1 in the
     * node and VM_KIDS in its table: luaD_cgkid loses none of so few) has
     * not this one: the VM would have found it */
    if (up >= 0 && fn >= 0 && P->nodes[up].nkids < VM_KIN - 1 + VM_KIDS)
        id = cg_prof_node_new(P, L, up, fn);
    else
        id = cg_prof_node_of(P, L, up, fn);
    if ((size_t)id >= VM_NODES_MAX
        || cg_fixed_grow(&P->vnode, ((size_t)id + 1) * sizeof(VmNode), 1)
               != 0)
        cg_prof_oom(P, L);
    return (VmNode *)P->vnode.base + id;
}

/* The VM's way to a new table of a node's children: its index. */
static unsigned int direct_tab(void *ud, lua_State *L)
{
    Prof *P = (Prof *)ud;
    if (P->nkids >= VM_KIDS_MAX
        || cg_fixed_grow(&P->vkids, (P->nkids + 1) * sizeof(VmKids), 1) != 0)
        cg_prof_oom(P, L);
    return (unsigned int)P->nkids++;
}

static VmCall *call_of(const Prof *P, const void *ci, lua_Unsigned *start)
{
    return (VmCall *)P->vmh.call_of(ci, start);
}

/* The call of the nearest frame from ci down that has one (that frame in
 * *at, the clock at its call in *start), or NULL. */
static VmCall *call_below(const Prof *P, const void *ci, const void **at,
                          lua_Unsigned *start)
{
    VmCall *k = NULL;
    while (ci != NULL && (k = call_of(P, ci, start)) == NULL)
        ci = cg_l54_ci_prev(ci);
    *at = ci;
    return k;
}

/* The caller of a call made where no frame of the thread has a call: the
 * thread's root, the function on top of its resumer when first needed
 * (the hook engine's: a coroutine runs under the resume that runs it),
 * or none (-1). */
static int32_t root_of(Prof *P, lua_State *L)
{
    int32_t root;
    lua_State *from;
    lua_Debug ar;
    memcpy(&root, (const char *)L + P->vmh.root_off, sizeof root);
    if (root != -2)
        return root;
    root = -1;                  /* meanwhile: two threads resumed each other */
    memcpy((char *)L + P->vmh.root_off, &root, sizeof root);
    memcpy(&from, (const char *)L + P->vmh.from_off, sizeof from);
    if (from != NULL && from != L && lua_getstack(from, 0, &ar)) {
        const void *at;
        lua_Unsigned start;
        VmCall *k = call_below(P, ar.i_ci, &at, &start);
        root = k != NULL ? k->fn : root_of(P, from);
    }
    memcpy((char *)L + P->vmh.root_off, &root, sizeof root);
    return root;
}

/* The line of frame ci's call: its saved pc's in its prototype, or the
 * tail call's in the prototype it left. */
static int32_t call_line(const Prof *P, const lua_State *L, int32_t fn,
                         const void *ci, int tailpc)
{
    const void *pc, *proto;
    uint64_t key;
    if (P->fns[fn].what == 'C' || !P->lines)
        return P->fns[fn].defined;
    if (tailpc) {
        memcpy(&pc, (const char *)L + P->vmh.tailpc_off, sizeof pc);
        memcpy(&proto, (const char *)L + P->vmh.tailp_off, sizeof proto);
    } else {
        memcpy(&pc, (const char *)ci + P->vmh.savedpc_off, sizeof pc);
        if (!cg_l54_ci_key(&P->l54, ci, &key))
            return P->fns[fn].defined;
        proto = (const void *)(uintptr_t)key;
    }
    return P->vmh.line(proto, pc, 0);
}

/* The call cache (P->cc) of the calls the VM leaves to the hook (from C,
 * from a site that calls several functions in turn): caller, line and
 * callee's key -> its function and edge, without lua_getinfo. */
static CallSeen *call_entry(Prof *P, const void *ci, int32_t caller,
                            int32_t line, uint64_t *key)
{
    if (caller < 0 || !P->l54.ci_ok || !cg_l54_ci_key(&P->l54, ci, key))
        return NULL;
    return cg_prof_call_slot(P, caller, line, *key);
}

static int seen_call(Prof *P, lua_State *L, lua_Debug *ar, int32_t caller,
                     int32_t line, int32_t *fn, int32_t *edge)
{
    uint64_t key;
    const CallSeen *e = call_entry(P, ar->i_ci, caller, line, &key);
    if (e == NULL || e->caller != caller || e->line != line
        || e->key != key)
        return 0;
    *fn = e->fn;
    *edge = e->edge;
    if (ar->event != LUA_HOOKTAILCALL && !P->fns[*fn].asked)
        cg_prof_name_from_call(P, L, ar, *fn);
    return 1;
}

static void remember_call(Prof *P, const void *ci, int32_t caller,
                          int32_t line, int32_t fn, int32_t edge)
{
    uint64_t key;
    CallSeen *e = call_entry(P, ci, caller, line, &key);
    if (e != NULL) {
        e->caller = caller;
        e->line = line;
        e->key = key;
        e->fn = fn;
        e->edge = edge;
    }
}

/* The call of the new frame ar->i_ci: its caller is the nearest frame
 * with a call below it (a tail call's: the frame it replaces), else the
 * thread's root. */
static void direct_call(Prof *P, lua_State *L, lua_Debug *ar)
{
    const void *ci = ar->i_ci, *cc = NULL;
    int tail = ar->event == LUA_HOOKTAILCALL, how = 0;
    lua_Unsigned start = 0;
    VmCall *k = NULL, *call;
    int32_t caller = -1, line = 0, fn, edge;
    if (P->cc_stale)            /* a prototype was freed: its address too */
        cg_prof_cc_reset(P);
    if (tail) {
        cc = ci;
        k = call_of(P, ci, &start);
    }
    if (k == NULL)
        k = call_below(P, cg_l54_ci_prev(ci), &cc, &start);
    if (k != NULL) {
        caller = k->fn;
        line = call_line(P, L, caller, cc, tail && cc == ci);
    } else {
        caller = root_of(P, L);
    }
    if (!seen_call(P, L, ar, caller, line, &fn, &edge)) {
        fn = cg_prof_resolve(P, L, ar, !tail);
        edge = caller < 0 ? -1 : cg_prof_edge_id(P, L, caller, line, fn);
        remember_call(P, ci, caller, line, fn, edge);
    }
    if (tail && cc == ci && k != NULL) {
        if (k->fn == fn) {
            /* a function tail-calling itself keeps its one frame; its
             * site keeps the call for the next time */
            if (edge >= 0) {
                vm_call(P, L, edge)->calls++;
                P->vmh.frame(L, (void *)(uintptr_t)ci, vm_call(P, L, edge), 3);
            }
            return;
        }
        how = 2;
    } else if (!tail && k != NULL && cc == cg_l54_ci_prev(ci)) {
        how = 1;
    }
    call = edge >= 0 ? vm_call(P, L, edge) : vm_none(P, L, fn);
    P->vmh.frame(L, (void *)(uintptr_t)ci, call, how);
}

/* The VM's way to the profiler's data (the same in every state): the hook
 * finds its state there, the allocator left alone */
static void *(*vm_ud)(lua_State *L);

static Prof *running(lua_State *L)
{
    Prof *P = vm_ud != NULL ? (Prof *)vm_ud(L) : NULL;
    return P != NULL && P->running && P->direct ? P : NULL;
}

/* The VM frees a prototype with counts (before it frees them). */
static void direct_freed(lua_State *L, const void *proto,
                         lua_Unsigned *counts, int n)
{
    Prof *P = running(L);
    if (P != NULL)
        cg_prof_freed(P, L, proto, counts, n);
}

/* The VM's hook: the calls it does not keep itself. */
static void direct_hook(lua_State *L, lua_Debug *ar)
{
    Prof *P = running(L);
    if (P == NULL || P->in_hook)
        return;
    if (ar->event == LUA_HOOKCALL || ar->event == LUA_HOOKTAILCALL) {
        P->in_hook = 1;
        direct_call(P, L, ar);
        P->in_hook = 0;
    }
}

void cg_prof_direct_start(Prof *P, lua_State *L, int level)
{
    int n = 0, i;
    int32_t caller = -1, line = 0, root = -1;
    lua_Debug ar;
    vm_ud = P->vmh.ud;
    if (P->stacks
        && ((P->vnode.map == NULL
             && cg_fixed_init(&P->vnode, VM_NODES_MAX * sizeof(VmNode)) != 0)
            || (P->vkids.map == NULL
                && (cg_fixed_init(&P->vkids, VM_KIDS_MAX * sizeof(VmKids))
                        != 0
                    || cg_fixed_grow(&P->vkids, sizeof(VmKids), 1) != 0)))) {
        cg_prof_direct_free(P);
        cg_prof_oom(P, L);
    }
    if (P->nkids == 0)
        P->nkids = 1;           /* table 0: no one's */
    if (P->vmh.stacks != NULL)
        P->vmh.stacks(L, P->stacks ? direct_kid : NULL, direct_tab, P,
                      P->vnode.base, P->vkids.base);
    P->vmh.direct(L, 1);
    memcpy((char *)L + P->vmh.root_off, &root, sizeof root);
    while (level > 0 && lua_getstack(L, level + n, &ar))
        n++;
    for (i = n - 1; i >= 0; i--) {
        int32_t fn, edge;
        lua_getstack(L, level + i, &ar);
        lua_getinfo(L, "l", &ar);
        fn = cg_prof_resolve(P, L, &ar, 0);
        edge = caller < 0 ? -1 : cg_prof_edge_id(P, L, caller, line, fn);
        P->vmh.frame(L, ar.i_ci,
                     edge >= 0 ? vm_call(P, L, edge) : vm_none(P, L, fn), 0);
        caller = fn;
        line = !P->lines ? P->fns[fn].defined
                         : ar.currentline < 0 ? 0 : ar.currentline;
    }
    P->vmh.hook(L, direct_hook, P);
    P->vmh.onfree(L, direct_freed);
}

int cg_prof_direct_fits(const CgVm *v)
{
    return v->node_size == (int)sizeof(VmNode)
           && v->kidtab_size == (int)sizeof(VmKids);
}

static size_t chunks_bytes(void *const *chunks, size_t n, size_t size)
{
    size_t c, b = n * sizeof *chunks;
    for (c = 0; c < n; c++)
        if (chunks[c] != NULL)
            b += REC * size;
    return b;
}

size_t cg_prof_direct_bytes(const Prof *P)
{
    return chunks_bytes((void *const *)P->vcall, P->nvcall, sizeof(VmCall))
           + chunks_bytes((void *const *)P->vfn, P->nvfn, sizeof(VmFn))
           + P->vnode.size + P->vkids.size
           + chunks_bytes((void *const *)P->vnone, P->nvnone, sizeof(VmCall))
           + P->nonemap.cap * sizeof(Slot);
}

/* What only the running VM needs: its calls, its functions' running
 * frames, its nodes' tables of children (the nodes that stay keep their
 * indices in them, which no one reads after stop: only their costs are). */
static void free_run(Prof *P)
{
    cg_fixed_free(&P->vkids);
    P->nkids = 0;
    chunks_free((void ***)&P->vcall, &P->nvcall);
    chunks_free((void ***)&P->vfn, &P->nvfn);
    chunks_free((void ***)&P->vnone, &P->nvnone);
    cg_pm_free(&P->nonemap);
    P->nnone = 0;
}

void cg_prof_direct_free(Prof *P)
{
    free_run(P);
    cg_fixed_free(&P->vnode);
}

int64_t cg_prof_direct_self(const Prof *P, size_t i)
{
    return (i + 1) * sizeof(VmNode) <= P->vnode.size
               ? (int64_t)((const VmNode *)P->vnode.base)[i].self
               : 0;
}

void cg_prof_direct_selves(const Prof *P, size_t from, size_t n,
                           int64_t *out, size_t stride)
{
    size_t i;
    for (i = 0; i < n; i++)
        out[i * stride] = cg_prof_direct_self(P, from + i);
}

void cg_prof_direct_stop(Prof *P, lua_State *L)
{
    lua_Debug ar;
    size_t i;
    /* the frame of the C function stopping leaves uncounted */
    P->vmh.close(L, lua_getstack(L, 0, &ar) ? ar.i_ci : NULL);
    for (i = 0; i < P->ned; i++) {
        const VmCall *c = (const VmCall *)chunk_at((void **)P->vcall,
                                                   P->nvcall, i,
                                                   sizeof(VmCall));
        if (c == NULL)
            continue;
        P->edges[i].count += (int64_t)c->calls;
        P->edges[i].incl += (int64_t)c->incl;
    }
    /* the counts before the VM stops telling of the prototypes it frees:
     * folding them allocates (a collection may free one meanwhile) */
    cg_prof_fold_counts(P, L);
    P->vmh.direct(L, 0);
    P->vmh.hook(L, NULL, NULL);
    P->vmh.onfree(L, NULL);
    free_run(P);
    P->running = 0;
    P->in_hook = 0;
}
