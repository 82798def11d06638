/* The estimated call tree of one event (lua/callgrind/export/stacks.lua
 * says how it is made, and docs/design.md): from given roots and their
 * budgets, each frame's budget is shared between its own line and its
 * callees in proportion to the function's self cost and the inclusive
 * cost of its calls to each; a function is entered again (recursion) up
 * to CG_STACKS_MAX_REPEAT times on one stack, with a budget of at least
 * rmin; a child below min is not
 * made (its cost stays with the frame). Lua-free. */
#ifndef CG_STACKS_H
#define CG_STACKS_H

#include "cg_profile.h"

/* A frame: its parent (-1 for a root), function, budget (total) and what
 * stays on it (self). Children follow their parent's creation, in order,
 * contiguous. */
typedef struct CgFrame {
    int32_t parent, func;
    int64_t total, self;
} CgFrame;

/* The most times one function appears on one estimated stack. */
#define CG_STACKS_MAX_REPEAT 16

typedef struct CgStacks {
    CgFrame *frames;
    size_t n, cap;
} CgStacks;

/* Builds the frames of the roots (functions and budgets; a root below min
 * is a frame without children; a function already on the path is entered
 * again only with a budget of at least rmin) for event (ev, coefs) into out, which starts
 * empty (zeroed). CG_OK, CG_ENOMEM, or CG_EVALUE when a derived event's
 * value does not fit. On failure out may hold frames: free them anyway. */
CG_HIDDEN int cg_stacks_estimate(const CgProfile *P, int ev, const int64_t *coefs,
                                 const int32_t *root_func, const int64_t *root_budget,
                                 size_t nroots, int64_t min, int64_t rmin, CgStacks *out);
CG_HIDDEN void cg_stacks_free(CgStacks *s);

/* The calls into each function, by caller: callee f's callers are
 * caller[start[f] .. start[f + 1]), in caller index order, each with the
 * summed cost of its calls to f in cost[] (the estimate's roots and its
 * correction look them up). */
typedef struct CgInCalls {
    uint32_t *start;
    int32_t *caller;
    int64_t *cost;
    size_t n, nfuncs;
} CgInCalls;

/* Fills out (zeroed) for event (ev, coefs): CG_OK, CG_ENOMEM or
 * CG_EVALUE; on failure free it anyway. */
CG_HIDDEN int cg_stacks_in_calls(const CgProfile *P, int ev, const int64_t *coefs, CgInCalls *out);
CG_HIDDEN void cg_in_calls_free(CgInCalls *c);

#endif
