/* The stack record (docs/format.md, "The stack record"): a Lua profile's
 * tree of call stacks, each distinct node once (its parent, its function,
 * its own cost per event), written beside the profile as FILE.stacks;
 * and the folded text (`frame;frame;frame cost` lines) of such a tree, in
 * node order. Both are writer fills (cg_write_atomic_with, or a memory
 * writer). No lua.h. */
#ifndef CG_STACKREC_H
#define CG_STACKREC_H

#include "cg_emit.h"

/* The first line of every record, and its version. */
#define CG_REC_HEAD "# callgrind.lua stack record 1\n"
#define CG_REC_VERSION 1

/* A tree to write: n nodes, each after its parent (parent[i] < i, -1: a
 * root); fn[i] indexes files/names (nfn of them); cost[i * nev + e] its
 * own cost in event e. Or, nodes not NULL, nodes(node_ud, from, n, ...)
 * gives the parents, functions and nev costs of n nodes at a time instead
 * of the three arrays (the profiler's nodes where they are, not copied). profile: the 16 hex
 * digits of the digest of the profile's file (its end line) the record
 * belongs to. */
typedef struct CgRecOut {
    const char *profile;
    size_t nev;
    const CgStr *events;
    size_t nfn;
    const CgStr *files, *names;   /* no tab, newline nor carriage return */
    size_t n;
    const int32_t *parent, *fn;
    const int64_t *cost;
    /* or nodes [from, from + n) from a callback (n <= 64): parent[k],
     * fn[k] and cost[k * nev + e] of node from + k */
    void (*nodes)(void *ud, size_t from, size_t n, int32_t *parent,
                  int32_t *fn, int64_t *cost);
    void *node_ud;
} CgRecOut;

/* Writes the record of ud (a CgRecOut, 1 to CG_REC_MAX_EV events: else the
 * writer fails, CG_ELIMIT), its end line and digest too. */
CG_HIDDEN void cg_rec_fill(CgWriter *w, void *ud);

/* The folded text of a tree: one line `name;...;name cost` per node whose
 * cost in column col is not 0, in node order, the frames from the
 * outermost, the cost as Lua's tostring writes an integer. names[fn] is
 * the frame of a function (escaped already). Scratch: chain, depth (n
 * each), len (n), path (the longest path's bytes + 1, after
 * cg_fold_size). */
typedef struct CgFoldOut {
    size_t n;
    const int32_t *parent, *fn;
    const int64_t *cost;
    size_t stride, col;           /* cost[i * stride + col] */
    const CgStr *names;
    int32_t *chain, *depth;
    uint64_t *len;
    char *path;
} CgFoldOut;

/* The bytes cg_fold_fill writes (one pass: fills len and depth), and the
 * longest path's in *longest. */
CG_HIDDEN uint64_t cg_fold_size(CgFoldOut *F, uint64_t *longest);
/* Writes the folded text of ud (a CgFoldOut, cg_fold_size done). No end
 * line, no digest: folded text is other tools' format. */
CG_HIDDEN void cg_fold_fill(CgWriter *w, void *ud);

#endif
