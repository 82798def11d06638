/* The tree of recorded stacks (a profiler's trie, or a stack record):
 * trie nodes of the same function under the same parent merged, each
 * merged node's children in the order of the first node with a cost at
 * or below them, totals summed, and, optionally, pruned as
 * callgrind.export.stacks prunes (a node whose total is below min, or not
 * above 0, merges into its parent's self cost). What the flame graph,
 * folded text, pprof and the report draw from, made here in one pass over
 * the trie instead of a Lua table per node. No lua.h. */
#ifndef CG_STACKTREE_H
#define CG_STACKTREE_H

#include "cg_common.h"

typedef struct CgStackTree {
    /* input: n trie nodes, each after its parent (-1: a root) */
    size_t n;
    const int32_t *parent;
    const int32_t *fn;          /* the function, as merged: equal fn under
                                   one parent merge */
    const int64_t *cost;        /* its own cost */
    int prune;                  /* prune at min */
    double min;                 /* as a fraction of the total: min * total */
    /* output: the nodes kept, depth first, children in order */
    size_t nout;
    int32_t *out_parent;        /* an earlier output node, -1: a root */
    int32_t *out_node;          /* a trie node merged into it (its
                                   function's representative) */
    int64_t *out_total, *out_self;
    int64_t total, top_self;    /* all costs; the roots' pruned totals */
} CgStackTree;

/* Builds t's output (arrays malloc'd: cg_stack_tree_free). CG_OK,
 * CG_ENOMEM. */
CG_HIDDEN int cg_stack_tree(CgStackTree *t);
CG_HIDDEN void cg_stack_tree_free(CgStackTree *t);

#endif
