/* The profiler's data: the collector's state (Prof) and its records, the
 * two inline caches of the hook's fast paths, and what every file above
 * uses of the state (cg_prof_base.c): finding it, running out of memory,
 * the info table, the options, the allocator and the collector handed
 * over while profiling. Layer 2 of profiler/ (spec/layout_c_spec.lua):
 * it uses the maps and the Lua 5.4 shortcuts only. Private to profiler/
 * and the binding's stack functions. */
#ifndef CG_PROF_BASE_H
#define CG_PROF_BASE_H

#include "cg_mem.h"
#include "cg_prof_lua54.h"
#include "cg_prof_map.h"

#include "lua.h"

enum { EV_INSTR, EV_TIME, EV_ALLOC, NEV };

typedef struct Cost {
    int64_t v[NEV];
} Cost;

/* A line's cost and an edge's are sized to the events collected
 * (Prof.cw): Instr alone (a run's default) takes one int64_t, v[0] of a
 * Cost; with Time or Alloc a line takes NEV, and an edge's other two are
 * apart (Prof.eplus). */

/* A function's record: one per definition (cg_prof_fold.c), shared by
 * every prototype of it, alive or freed. 48 bytes (a pointer of 8). */
typedef struct FnCost {
    int32_t defined;            /* line defined (0: main chunk, C) */
    int32_t last;               /* last line defined */
    int32_t src;                /* its source in the string pool, -1: C */
    int32_t active;             /* its frames in the running threads */
    int32_t np, nn;             /* stacks: its node nn under node np */
    int32_t lo;                 /* line of lines[0] */
    char what;                  /* 'L', 'm' (main chunk), 'C' (a C
                                   function: runs no VM instruction) */
    uint8_t nparams, nups;      /* its definition's, with the lines */
    unsigned co_close : 2;      /* 1: coroutine.close, 2: collectgarbage */
    unsigned asked : 1;         /* its call-site name was asked for */
    unsigned vararg : 1;        /* its definition's */
    unsigned over : 1;          /* it has lines apart (Prof.over) */
    unsigned stacked : 1;       /* a frame of it is on a thread's stack
                                   (set only in cg_prof_weak_check) */
    int32_t nm;                 /* the name its first sight gave it, in
                                   the string pool (-1: none): with src,
                                   defined, last and the signature, its
                                   definition's key (defmap) */
    uint32_t n;                 /* lines (n from lo), their room
                                   cg_prof_lines_room(n); a line far from
                                   them is apart (Prof.over) */
    int64_t *lines;             /* Prof.cw int64_t a line: line lo + i at
                                   lines[i * cw] */
} FnCost;

/* A line of a function far from its span of lines (a main chunk's
 * statements between the functions it defines): apart, in Prof.over,
 * until it is charged often (cg_prof_records.c). fn -1: moved. */
typedef struct OverLine {
    int32_t fn, line, hits;
    Cost c;
} OverLine;

/* A function value seen (a prototype, a C function), by its key: its
 * record, and (P->direct) the VM's per-pc counts of its prototype.
 * fn -1: a free slot (next: the next free one). gone: the hook engine's
 * closure of it was collected, its prototype may live (cg_prof_fold.c). */
typedef struct PSlot {
    uint64_t k1, k2;
    int32_t fn, next;
    lua_Unsigned *count;
    int32_t ncount, gone;
} PSlot;

/* The call cache: a call site (caller, line, callee key) seen before ->
 * its callee and edge, without lua_getinfo or a hash map (a loop or a
 * recursion calls the same functions from the same lines again).
 * Direct-mapped; a miss takes the general way, which fills the entry. */
#define CALL_CACHE_BITS 12
#define CALL_CACHE (1 << CALL_CACHE_BITS)   /* entries */

typedef struct CallSeen {
    uint64_t key;               /* the callee's key (cg_l54_ci_key) */
    int32_t caller;             /* -1: an empty entry */
    int32_t line;               /* the caller's line */
    int32_t fn, edge;
} CallSeen;

#define TFOR_CACHE 16             /* generic for calls' lines (Prof) */

typedef struct Edge {
    int32_t caller, line, callee;
    int64_t count;
    int64_t incl;               /* inclusive Instr; Time and Alloc apart
                                   (Prof.eplus) */
} Edge;

typedef struct Frame {
    const void *ci;             /* the interpreter's CallInfo */
    int32_t fn, line, edge;     /* fn -1: the root; edge -1: none */
    int32_t node;               /* its stack (opts.stacks), else -1 */
    int16_t tail;               /* replaced by a tail call (same ci above) */
    int16_t lua;                /* a Lua function's (not C, not the root) */
    Cost start;                 /* thread clock at the call */
    int64_t pad;                /* 64 bytes: a frame's address is a shift */
} Frame;

typedef struct Thread {
    lua_State *L;               /* NULL: a free record */
    Frame *f;                   /* f[0] is the root */
    size_t n, cap;
    int32_t last;               /* hook counter at the last event */
    int64_t counted, lastc;     /* count-hook mode */
    Cost susp, susp_at;         /* time suspended; clock when it yielded */
    int suspended, fresh;       /* fresh: started while profiling */
    Frame *top;                 /* &f[n - 1], kept with n (the hook reads
                                   it at every event) */
    int32_t resumer;            /* the record of the thread that resumed
                                   it last, or -1 */
    int32_t pad;                /* 128 bytes: a record's address is a shift */
} Thread;

/* A node of the stack trie: one per distinct call stack (parent, fn). A
 * call finds its node under the caller's node by the callee's one-entry
 * cache (FnCost np, nn), else among the caller node's last children
 * (NodeKids: most recent first; a parser's function calls a few others
 * in turn, each also called from elsewhere), else by walking the caller
 * node's children (first, next) while it has at most KID_WALK of them,
 * else by the hash map nodemap, which holds the children of the nodes
 * with more, and the outermost nodes. Nodes are only added, never moved
 * to another index. A node is three parallel arrays, so that the
 * counting interpreter's run (P->direct), whose VM keeps its own caches
 * and costs, holds only the links: Node (20 bytes) always; NodeKids
 * (the hook engine's cache, 32 bytes) only under the hook engine; the
 * node's own cost (Prof.nself) under the hook engine, and made at stop
 * from the VM's nodes on the counting interpreter. */
#define NKID 4
#define KID_WALK 8
typedef struct Node {
    int32_t parent, fn;         /* parent -1: outermost */
    int32_t first, next;        /* its newest child, its next older
                                   sibling (-1: none) */
    int32_t nkids;              /* its children */
} Node;

typedef struct NodeKids {
    int32_t kid_fn[NKID];       /* -1: none */
    int32_t kid[NKID];
} NodeKids;

typedef struct Prof {
    int running, count_hook, calibrated;
    CgL54 l54;                  /* the Lua 5.4 shortcuts found */
    int vm_off;                 /* the counting interpreter's clock, or -1 */
    int vm;                     /* this run counts with it (engine "vm") */
    int clk_off;                /* the clock read: vm_off or l54.hc_off */
    CgVm vmh;                   /* the counting interpreter's ways in */
    int has_vmh;                /* all of them found */
    int simple;                 /* Instr only, counted from lua_State */
    int direct;                 /* this run has the VM's hook, not a
                                   debug hook (engine vm, Instr only): the
                                   VM keeps the calls and stacks, its
                                   per-pc counts give the lines
                                   (cg_prof_direct.c) */
    int ev[NEV];                /* events collected */
    Cost G;                     /* global clock: everything charged */
    int64_t t_out, alloc, alloc_last;
    int in_hook;
    Thread *fast;               /* th[cur] while prof_hook's fast paths
                                   may run (simple, running, not direct,
                                   not in_hook, cur >= 0), else NULL: one
                                   test instead of five at every event */
    lua_Alloc old_f;
    void *old_ud;
    Thread *th;
    size_t nth, capth;
    int32_t cur, from_fn, from_node;
    int32_t prev, prev2;        /* the threads that ran before cur, or -1 */
    int32_t dead_from;          /* the resumer of the last coroutine whose
                                   body returned (cur is -1 then): it may
                                   have died since, with no event (a wrap
                                   function's __close run at its reset,
                                   the error raised again), or -1 */
    Map thmap;
    int stacks;                 /* opts.stacks: a trie of call stacks */
    int lines;                  /* opts.lines: a line hook (default) */
    Node *nodes;
    size_t nnode, capnode;
    NodeKids *nkid;             /* the hook engine's: NULL when direct */
    size_t capnkid;
    Cost *nself;                /* each node's own cost (direct: made at
                                   stop, NULL before) */
    size_t capnself;
    Map nodemap;
    int gc_ours;                /* the collector is stepped from the hook */
    int64_t gc_next;            /* at this P->alloc */
    int64_t gc_last;            /* P->alloc its debt counts from */
    FnCost *fns;
    size_t nfn, capfn;
    Map fnmap;                  /* key of a function value -> its slot */
    IMap defmap;                /* a Lua definition -> its record
                                   (cg_prof_fold.c) */
    OverLine *over;             /* the lines apart, */
    size_t nover, capover;
    Map overmap;                /* by (fn, line) */
    IMap strmap;                /* the string pool's strings, by hash */
    int32_t nstr;
    PSlot *ps;                  /* the function values seen */
    size_t nps, capps;
    int32_t psfree;             /* the first free slot, -1: none */
    int weak;                   /* the hook engine holds Lua functions
                                   weakly (its collector steps) */
    int cc_stale;               /* a function freed: the call cache goes */
    int cc_clean;               /* the call cache is empty (all zero or
                                 * reset) since no start made entries */
    lua_CFunction gc_fn;        /* collectgarbage, or NULL */
    Edge *edges;
    size_t ned, caped;
    int cw;                     /* the int64_t of a line's cost: 1 (Instr
                                   alone) or NEV (set at start) */
    int64_t *eplus;             /* cw NEV: the edges' inclusive Time and
                                   Alloc, 2 an edge; else NULL */
    size_t capplus;
    IMap edmap;                 /* (caller, line, callee) -> its edge */
    struct VmCall **vcall;      /* direct: the calls of the edges, and */
    struct VmFn **vfn;          /* the functions' running frames */
    size_t nvcall, nvfn;
    CgFixed vnode;              /* direct: the stacks' costs (the VM's
                                   nodes: it adds their offsets to its
                                   address, which never moves), */
    CgFixed vkids;              /* their tables of children (table 0: */
    size_t nkids;               /* none), tables made */
    struct VmCall **vnone;      /* direct: the calls of frames without a */
    size_t nvnone, nnone;       /* caller, of the functions in nonemap */
    Map nonemap;
    CallSeen cc[CALL_CACHE];    /* the call cache */
    /* the lines of generic for calls seen (cg_prof_collect.c's
     * tfor_line): a TFORCALL's saved pc -> its line */
    const void *tfor_pc[TFOR_CACHE];
    int32_t tfor_line[TFOR_CACHE];
    lua_CFunction co_close;     /* coroutine.close, or NULL */
} Prof;

/* The collector's state, or NULL before the first start. */
CG_HIDDEN Prof *cg_prof_get(lua_State *L);
/* The registry key of the state (its address). */
CG_HIDDEN extern const char cg_prof_key;
/* Out of memory inside the hook or a start/stop: raises; the state stays
 * consistent (every array grows before it is written). */
CG_HIDDEN void cg_prof_oom(Prof *P, lua_State *L);
/* Pushes the info table: info[fn + 1] = { the function, the name its
 * call site gives it }. */
CG_HIDDEN void cg_prof_push_info(lua_State *L);
/* Thread th kept alive (keep 1: th is L, the running thread) or let go
 * (0), in the info table: see cg_prof_base.c. */
CG_HIDDEN void cg_prof_anchor(lua_State *L, lua_State *th, int keep);
/* opts[name] at idx as a boolean; def when nil or not a table. */
CG_HIDDEN int cg_prof_flag(lua_State *L, int idx, const char *name, int def);
/* The automatic collector taken while profiling with the debug hook, and
 * given back; the hook steps it itself (cg_prof_collect.c), a step every
 * GC_STEP_BYTES allocated (see cg_prof_base.c). */
#define GC_STEP_BYTES 8192
CG_HIDDEN void cg_prof_gc_take(Prof *P, lua_State *L);
CG_HIDDEN void cg_prof_gc_give_back(Prof *P, lua_State *L);
/* The allocator while profiling (its user data is the state: how the
 * hook finds it), and putting the old one back. */
CG_HIDDEN void *cg_prof_alloc(void *ud, void *ptr, size_t osize,
                              size_t nsize);
CG_HIDDEN void cg_prof_restore_alloc(Prof *P, lua_State *L);

/* P->fast as P's fields say now. */
static inline void cg_prof_fast_update(Prof *P)
{
    P->fast = P->simple && P->running && !P->direct && !P->in_hook
                      && P->cur >= 0 ? &P->th[P->cur] : NULL;
}

/* in_hook set (our own work: no fast path) and cleared. */
static inline void cg_prof_hook_in(Prof *P)
{
    P->in_hook = 1;
    P->fast = NULL;
}

static inline void cg_prof_hook_out(Prof *P)
{
    P->in_hook = 0;
    cg_prof_fast_update(P);
}

/* A generic for's call of its iterator (Lua 5.4's OP_TFORCALL) has the
 * line of that instruction, as lua_getinfo says it; but the first one is
 * entered from OP_TFORPREP without an instruction fetch, and no line
 * event gave it (a header over several lines: the last line run is the
 * `do`'s). The saved pc of the Lua frame f is just past the call made now
 * (cg_prof_lua54.h, shortcut 4b): the TFORCALL's pc, else NULL. */
static inline const void *cg_prof_tfor_pc(const Prof *P, const Frame *f)
{
    if (!f->lua || !P->lines || !P->l54.prev_ok || f->ci == NULL)
        return NULL;
    return cg_l54_tfor_pc(f->ci, P->has_vmh ? P->vmh.savedpc_off : -1);
}

/* The cache of those lines: its slot for pc */
static inline size_t cg_prof_tfor_slot(const void *pc)
{
    return ((size_t)(uintptr_t)pc >> 2) & (TFOR_CACHE - 1);
}

/* The call cache's entry for a call from function caller at line to the
 * function of key: one multiply (Fibonacci hashing) of the three mixed
 * (a key is a pointer). */
static inline CallSeen *cg_prof_call_slot(Prof *P, int32_t caller,
                                          int32_t line, uint64_t key)
{
    uint32_t h = ((uint32_t)(key >> 3) ^ (uint32_t)line
                  ^ (uint32_t)caller << 11) * 0x9e3779b1u;
    return &P->cc[h >> (32 - CALL_CACHE_BITS)];
}

/* The trie's cache of a node's last children, on the hook's fast path. */
/* fn's node under node parent when it is among parent's last children
 * (it moves to the front), else -1. */
#if defined(__GNUC__)
__attribute__((always_inline))  /* on the hook's fast path */
#endif
static inline int32_t cg_prof_kid_cached(Prof *P, int32_t parent, int32_t fn)
{
    NodeKids *n = &P->nkid[parent];
    int k;
    if (n->kid_fn[0] == fn)     /* the newest already (a recursion, a loop) */
        return n->kid[0];
    for (k = 1; k < NKID; k++)
        if (n->kid_fn[k] == fn) {
            int32_t id = n->kid[k];
            for (; k > 0; k--) {
                n->kid_fn[k] = n->kid_fn[k - 1];
                n->kid[k] = n->kid[k - 1];
            }
            n->kid_fn[0] = fn;
            n->kid[0] = id;
            return id;
        }
    return -1;
}

/* id (fn's node under parent) becomes the newest of parent's last
 * children; the oldest leaves. */
static inline void cg_prof_kid_remember(Prof *P, int32_t parent, int32_t fn, int32_t id)
{
    NodeKids *n = &P->nkid[parent];
    int k;
    for (k = NKID - 1; k > 0; k--) {
        n->kid_fn[k] = n->kid_fn[k - 1];
        n->kid[k] = n->kid[k - 1];
    }
    n->kid_fn[0] = fn;
    n->kid[0] = id;
}

#endif
