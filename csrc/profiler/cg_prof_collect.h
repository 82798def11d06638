/* The Lua profiler's collector: its state and data, the operations its
 * Lua face (cg_prof.c) calls, and what its files share. Private to
 * profiler/. The hook and everything it calls on its fast paths stay in
 * cg_prof_collect.c, one translation unit (their speed depends on it, and
 * on the two inline functions here); what it calls only on a slow path
 * (a first sight, a miss, growth, start and stop) is apart: the records
 * (cg_prof_records.c), the state (cg_prof_state.c), the maps
 * (cg_prof_map.c).
 *
 * Counting. The fast way reads the interpreter's own per-instruction hook
 * counter (cg_l54_hookcount) at each call, return and line event: the
 * exact number of instructions since the last event, with no hook call
 * per instruction (lines = false sets a count hook of 2^31 - 1 instead of
 * the line hook, to keep the counter counting). Where the counter cannot
 * be found, or when asked (opts.count_hook), a count hook with count 1
 * counts the same instructions one hook call at a time. On the counting
 * interpreter (engine vm, Instr only: P->direct) the VM itself keeps the
 * calls, stacks and per-pc counts, with debug.sethook left to the user
 * (cg_prof_direct.c); with time or alloc the debug hook reads its clock.
 *
 * Finalizers run with hooks off while the counter keeps counting: the
 * automatic collector is stopped while profiling and stepped from the
 * hook (cg_prof_gc_step), where what finalizers run is nobody's; what a collection
 * inside a C function (collectgarbage) runs is counted while that C
 * function is on top, and C functions are charged no instructions. A count
 * hook sees neither: the two ways agree.
 *
 * Attribution. At each event the instructions since the last one go to the
 * function, line and stack node on top of the thread's shadow stack; at a
 * line event the counter already includes the new line's first
 * instruction, so one is kept for it. A call pushes a frame; its return
 * adds 1 to the call site's count, and the clock's advance to its
 * inclusive cost when no other frame of the callee is active (recursion is
 * counted once, so no call costs more than the total). Frames are matched
 * to the interpreter's CallInfo (ar->i_ci): frames that an error unwound
 * are popped at the next event of a frame below them; a tail call keeps
 * the replaced frame under the callee (same CallInfo) and both pop at the
 * callee's return, except a function tail-calling itself, which keeps its
 * one frame. Each coroutine has its own stack and clock; a clock stops
 * while its coroutine is suspended, so resume costs what ran until the
 * yield, and a resumed coroutine's stack nodes move under the resume. */
#ifndef CG_PROF_COLLECT_H
#define CG_PROF_COLLECT_H

#include "cg_prof_lua54.h"

#include "lua.h"

enum { EV_INSTR, EV_TIME, EV_ALLOC, NEV };

typedef struct Cost {
    int64_t v[NEV];
} Cost;

/* Open addressing (linear probing, backward-shift deletion). */
typedef struct Slot {
    uint64_t k1, k2;
    int32_t val;                /* -1: empty */
} Slot;

typedef struct Map {
    Slot *s;
    size_t cap, n;              /* cap: 0 or a power of 2 */
} Map;

/* A function's record: one per definition (cg_prof_fold.c), shared by
 * every prototype of it, alive or freed. */
typedef struct FnCost {
    int32_t defined;            /* line defined (0: main chunk, C) */
    int32_t last;               /* last line defined */
    int32_t src;                /* its source in the string pool, -1: C */
    int32_t active;             /* its frames in the running threads */
    int32_t np, nn;             /* stacks: its node nn under node np */
    int32_t lo;                 /* line of lines[0] */
    uint8_t asked;              /* its call-site name was asked for */
    uint8_t is_c;               /* a C function: runs no VM instruction */
    uint8_t co_close;           /* 1: coroutine.close, 2: collectgarbage */
    char what;                  /* 'L', 'm' (main chunk), 'C' */
    uint8_t nparams, nups, vararg;  /* its definition's, with the lines */
    uint8_t over;               /* it has lines apart (Prof.over) */
    int32_t same;               /* the next record of its definition's key
                                   (another signature), -1: none */
    uint32_t n, cap;            /* lines (n from lo), their room; a line
                                   far from them is apart (Prof.over) */
    Cost *lines;
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
 * fn -1: a free slot (next: the next free one). */
typedef struct PSlot {
    uint64_t k1, k2;
    int32_t fn, next;
    lua_Unsigned *count;
    int32_t ncount;
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
    Cost incl;
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
 * (kid_fn, kid: most recent first; a parser's function calls a few others
 * in turn, each also called from elsewhere), else by walking the caller
 * node's children (first, next) while it has at most KID_WALK of them,
 * else by the hash map nodemap, which holds the children of the nodes
 * with more, and the outermost nodes. Nodes are only added, never moved
 * to another index. */
#define NKID 4
#define KID_WALK 8
typedef struct Node {
    int32_t parent, fn;         /* parent -1: outermost */
    Cost self;
    int32_t kid_fn[NKID];       /* -1: none */
    int32_t kid[NKID];
    int32_t first, next;        /* its newest child, its next older
                                   sibling (-1: none) */
    int32_t nkids;              /* its children */
} Node;

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
    Map thmap;
    int stacks;                 /* opts.stacks: a trie of call stacks */
    int lines;                  /* opts.lines: a line hook (default) */
    Node *nodes;
    size_t nnode, capnode;
    Map nodemap;
    int gc_ours;                /* the collector is stepped from the hook */
    int64_t gc_next;            /* at this P->alloc */
    int64_t gc_last;            /* P->alloc its debt counts from */
    FnCost *fns;
    size_t nfn, capfn;
    Map fnmap;                  /* key of a function value -> its slot */
    Map defmap;                 /* definition -> its record (cg_prof_fold.c) */
    OverLine *over;             /* the lines apart, */
    size_t nover, capover;
    Map overmap;                /* by (fn, line) */
    Map strmap;                 /* the string pool's strings, by hash */
    int32_t nstr;
    PSlot *ps;                  /* the function values seen */
    size_t nps, capps;
    int32_t psfree;             /* the first free slot, -1: none */
    int weak;                   /* the hook engine holds Lua functions
                                   weakly (its collector steps) */
    int cc_stale;               /* a function freed: the call cache goes */
    lua_CFunction gc_fn;        /* collectgarbage, or NULL */
    Edge *edges;
    size_t ned, caped;
    Map edmap;
    struct VmCall **vcall;      /* direct: the calls of the edges, and */
    struct VmFn **vfn;          /* the functions' running frames, */
    struct VmNode **vnode;      /* the stacks' costs, in chunks (the VM */
    size_t nvcall, nvfn, nvnode;  /* points into them) */
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

/* Whether a start with the options at idx counts with the counting
 * interpreter's clock (opts.engine; cg_prof.c): 1, or 0 for the hook. */
CG_HIDDEN int cg_prof_engine(const Prof *P, lua_State *L, int idx);
/* The collector's state, or NULL before the first start. */
CG_HIDDEN Prof *cg_prof_get(lua_State *L);
/* The collector's state, made (kept in the registry for the life of the
 * Lua state, freed by its __gc) when there is none. */
CG_HIDDEN Prof *cg_prof_state(lua_State *L);
/* Whether a start with the options at idx would take calls and returns
 * from the counting interpreter's own hook, leaving debug.sethook to the
 * user (engine vm, Instr only). Raises on a bad engine. */
CG_HIDDEN int cg_prof_own_hook(lua_State *L, int idx);
/* Starts profiling (opts: the index of the options table, or of a
 * non-table: the defaults); level 0 starts with an empty stack, level n
 * with the frames from level n down. Raises when running, or when another
 * hook is set. */
CG_HIDDEN void cg_prof_start(lua_State *L, int opts, int level);
/* Stops: charges what ran since the last event, drops the frame of the C
 * function stopping (level 0) when it is on the stack, closes every open
 * frame, removes the hook. Returns 0 when the hook was replaced. */
CG_HIDDEN int cg_prof_stop(lua_State *L);
/* Forgets the collected data (and the functions' info table). */
CG_HIDDEN void cg_prof_drop(lua_State *L);
/* Pushes the info table: info[fn + 1] = { the function, the name its
 * call site gives it }. */
CG_HIDDEN void cg_prof_push_info(lua_State *L);

/* ---- shared by the collector's files ---- */

/* The registry key of the state (its address). */
CG_HIDDEN extern const char cg_prof_key;

/* cg_prof_map.c: the value of (k1, k2), or -1; add a key known to be
 * absent (-1 out of memory); remove; free. */
CG_HIDDEN int32_t cg_pm_get(const Map *m, uint64_t k1, uint64_t k2);
CG_HIDDEN int cg_pm_put(Map *m, uint64_t k1, uint64_t k2, int32_t val);
CG_HIDDEN void cg_pm_del(Map *m, uint64_t k1, uint64_t k2);
CG_HIDDEN void cg_pm_free(Map *m);

/* cg_prof_state.c */
/* Out of memory inside the hook or a start/stop: raises; the state stays
 * consistent (every array grows before it is written). */
CG_HIDDEN void cg_prof_oom(Prof *P, lua_State *L);
/* Runs the probes of the Lua 5.4 shortcuts, once. */
CG_HIDDEN void cg_prof_calibrate(Prof *P, lua_State *L, lua_Hook hook);
/* The ways a start with the options at opts counts: Prof's modes. */
CG_HIDDEN void cg_prof_modes(Prof *P, lua_State *L, int opts);
/* opts[name] at idx as a boolean; def when nil or not a table. */
CG_HIDDEN int cg_prof_flag(lua_State *L, int idx, const char *name, int def);
/* The collector's steps while profiling (see cg_prof_state.c). */
CG_HIDDEN void cg_prof_gc_take(Prof *P, lua_State *L);
CG_HIDDEN void cg_prof_gc_give_back(Prof *P, lua_State *L);
CG_HIDDEN void cg_prof_gc_step(Prof *P, lua_State *L);

/* cg_prof_fold.c: a record per definition, and the functions freed
 * folded into theirs. */
/* P->direct: the VM's per-pc counts into the lines of their functions. */
CG_HIDDEN void cg_prof_fold_counts(Prof *P, lua_State *L);
/* The record of a function value seen first (ar's "S" and "u" filled,
 * the value on top of the stack): its definition's (source, lines,
 * signature, and the name its first call gives it), made when new; the
 * value gets a slot keyed (k1, k2). */
CG_HIDDEN int32_t cg_prof_define(Prof *P, lua_State *L, lua_Debug *ar,
                                 uint64_t k1, uint64_t k2, const char *name);
/* The hook engine, after a collector's step or collectgarbage: the
 * values it holds weakly that were collected leave their slots. */
CG_HIDDEN void cg_prof_weak_check(Prof *P, lua_State *L);
/* The VM frees a prototype (P->direct): its counts are folded. */
CG_HIDDEN void cg_prof_freed(Prof *P, lua_State *L, const void *proto,
                             const lua_Unsigned *counts, int n);
/* Pushes data.info: per record { the function or a description of it
 * ({ source, linedefined, lastlinedefined, what }: a Lua function no
 * longer alive), its call-site name }. */
CG_HIDDEN void cg_prof_push_fninfo(Prof *P, lua_State *L);
/* Frees the slots, the pool's map and the definitions. */
CG_HIDDEN void cg_prof_fold_free(Prof *P);
/* The call cache and the generic for's lines, forgotten. */
CG_HIDDEN void cg_prof_cc_reset(Prof *P);
/* The bytes the collector's records hold outside the Lua heap (its
 * arrays and maps, their capacities; the VM's calls and nodes). */
CG_HIDDEN size_t cg_prof_bytes(const Prof *P);
/* cg_prof_direct.c: the bytes of the VM's calls, functions and nodes. */
CG_HIDDEN size_t cg_prof_direct_bytes(const Prof *P);
/* The allocator while profiling (its user data is the state: how the
 * hook finds it), and putting the old one back. */
CG_HIDDEN void *cg_prof_alloc(void *ud, void *ptr, size_t osize,
                              size_t nsize);
CG_HIDDEN void cg_prof_restore_alloc(Prof *P, lua_State *L);

/* cg_prof_direct.c: the counting interpreter keeping the calls itself
 * (P->direct). Start: its frames from level down join calls, its hook is
 * set; stop: every frame leaves, the calls go to their edges and the
 * counts to their lines, the profiler stops; free: what it kept (stop
 * does; also a state collected while running). */
CG_HIDDEN void cg_prof_direct_start(Prof *P, lua_State *L, int level);
CG_HIDDEN void cg_prof_direct_stop(Prof *P, lua_State *L);
CG_HIDDEN void cg_prof_direct_free(Prof *P);
/* 1 when the VM's nodes and their tables of children have the sizes of
 * the ones here (callgrind_vm_node_size, callgrind_vm_kidtab_size):
 * stacks are the VM's only then. */
CG_HIDDEN int cg_prof_direct_fits(const CgVm *v);

/* cg_prof_records.c */
/* cg_grow by half again (records: one per function, per call site). */
CG_HIDDEN int cg_prof_grow(void **arr, size_t *cap, size_t need,
                           size_t elem);
/* The cost of fn's line (made, zeroed, when new). */
CG_HIDDEN Cost *cg_prof_line_slot(Prof *P, lua_State *L, int32_t fn,
                                  int32_t line);
/* Calls each(ud, line, cost) for each line of fn with a cost, in
 * order of line. Returns -1 out of memory (nothing called). */
CG_HIDDEN int cg_prof_fn_lines(const Prof *P, int32_t fn,
                               void (*each)(void *ud, int32_t line,
                                            const Cost *c), void *ud);
/* Frees the lines apart. */
CG_HIDDEN void cg_prof_over_free(Prof *P);
/* T's frames leave (delta -1: it yielded) or join (+1: resumed) the
 * running threads. */
CG_HIDDEN void cg_prof_activity(Prof *P, Thread *T, int delta);
/* A suspended coroutine resumed from another stack: its frames' nodes
 * move under the resume (node base) that runs it now. */
CG_HIDDEN void cg_prof_rebase(Prof *P, lua_State *L, Thread *T,
                              int32_t base);
/* fn's node under parent from its children (-1: none yet). */
CG_HIDDEN int32_t cg_prof_find_kid(Prof *P, int32_t parent, int32_t fn);
/* The node of the stack `parent` extended by fn (-1 without stacks). */
CG_HIDDEN int32_t cg_prof_node_of(Prof *P, lua_State *L, int32_t parent,
                                  int32_t fn);
/* info[id + 1][2] = the name the calling instruction gives the function. */
CG_HIDDEN void cg_prof_name_from_call(Prof *P, lua_State *L, lua_Debug *ar,
                                      int32_t id);
/* The function of ar, registered on first sight. */
CG_HIDDEN int32_t cg_prof_resolve(Prof *P, lua_State *L, lua_Debug *ar,
                                  int with_name);
/* The edge from caller's line to callee (made when new). */
CG_HIDDEN int32_t cg_prof_edge_id(Prof *P, lua_State *L, int32_t caller,
                                  int32_t line, int32_t callee);

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
    Node *n = &P->nodes[parent];
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
    Node *n = &P->nodes[parent];
    int k;
    for (k = NKID - 1; k > 0; k--) {
        n->kid_fn[k] = n->kid_fn[k - 1];
        n->kid[k] = n->kid[k - 1];
    }
    n->kid_fn[0] = fn;
    n->kid[0] = id;
}

#endif
