/* The call graph's strongly connected components, and per function the two
 * sums inclusive cost is made of (docs/format.md, "Inclusive cost"):
 *   A(f) = calls into f from outside its component,
 *   B(f) = self(f) + calls from f to outside its component.
 * Computed once, on first use, without recursion. */
#ifndef CG_GRAPH_H
#define CG_GRAPH_H

#include "cg_profile.h"

typedef struct CgGraph {
    uint32_t *comp;              /* function -> component (0-based) */
    uint32_t ncomp;
    uint8_t *cyclic;             /* component -> more than one function, or
                                    a function that calls itself */
    int64_t *a, *b;              /* nfuncs * stride each */
} CgGraph;

/* The profile's graph, built on the first call and kept with the profile
 * (which frees it through the callback this sets): NULL and *rc set
 * (CG_ENOMEM, or CG_EBAD when a sum does not fit in 64 bits) when it
 * cannot be built. */
CG_HIDDEN const CgGraph *cg_graph_get(CgProfile *P, int *rc);

#endif
