#include "cg_graph.h"

#include <stdlib.h>
#include <string.h>

/* Tarjan's algorithm with an explicit stack of (function, next call). */
static int components(const CgProfile *P, CgGraph *g)
{
    size_t n = P->nfuncs, top = 0, sp = 0, v0;
    uint32_t counter = 0;
    uint32_t *index = malloc((n ? n : 1) * sizeof *index);
    uint32_t *low = malloc((n ? n : 1) * sizeof *low);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    uint32_t *cs_v = malloc((n ? n : 1) * sizeof *cs_v);
    uint32_t *cs_e = malloc((n ? n : 1) * sizeof *cs_e);
    uint8_t *on = calloc(n ? n : 1, 1);
    int rc = CG_ENOMEM;
    if (!index || !low || !stack || !cs_v || !cs_e || !on)
        goto out;
    for (v0 = 0; v0 < n; v0++)
        index[v0] = UINT32_MAX;
    for (v0 = 0; v0 < n; v0++) {
        if (index[v0] != UINT32_MAX)
            continue;
        index[v0] = low[v0] = counter++;
        stack[sp++] = (uint32_t)v0;
        on[v0] = 1;
        cs_v[top] = (uint32_t)v0;
        cs_e[top++] = P->funcs[v0].calls_begin;
        while (top) {
            uint32_t v = cs_v[top - 1];
            if (cs_e[top - 1] < P->funcs[v].calls_end) {
                uint32_t w = (uint32_t)P->calls[cs_e[top - 1]++].callee;
                if (index[w] == UINT32_MAX) {
                    index[w] = low[w] = counter++;
                    stack[sp++] = w;
                    on[w] = 1;
                    cs_v[top] = w;
                    cs_e[top++] = P->funcs[w].calls_begin;
                } else if (on[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            top--;
            if (low[v] == index[v]) {
                uint32_t w, size = 0;
                do {
                    w = stack[--sp];
                    on[w] = 0;
                    g->comp[w] = g->ncomp;
                    size++;
                } while (w != v);
                g->cyclic[g->ncomp++] = size > 1;
            }
            if (top && low[v] < low[cs_v[top - 1]])
                low[cs_v[top - 1]] = low[v];
        }
    }
    rc = CG_OK;
out:
    free(index);
    free(low);
    free(stack);
    free(cs_v);
    free(cs_e);
    free(on);
    return rc;
}

static void graph_free(CgGraph *g)
{
    if (!g)
        return;
    free(g->comp);
    free(g->cyclic);
    free(g->a);
    free(g->b);
    free(g);
}

/* Builds it; CG_OK, CG_ENOMEM, or CG_EBAD when a sum does not fit in 64
 * bits. */
static int graph_build(const CgProfile *P, CgGraph **out)
{
    size_t n = P->nfuncs, st = P->stride, i, k;
    CgGraph *g = calloc(1, sizeof *g);
    int64_t *cost = malloc((st ? st : 1) * sizeof *cost);
    int rc = CG_ENOMEM;
    *out = NULL;
    if (!g || !cost) {
        free(g);
        free(cost);
        return CG_ENOMEM;
    }
    g->comp = malloc((n ? n : 1) * sizeof *g->comp);
    g->cyclic = calloc(n ? n : 1, 1);
    g->a = calloc((n ? n : 1) * (st ? st : 1), sizeof *g->a);
    g->b = malloc((n ? n : 1) * (st ? st : 1) * sizeof *g->b);
    if (!g->comp || !g->cyclic || !g->a || !g->b)
        goto fail;
    if ((rc = components(P, g)) != CG_OK)
        goto fail;
    if (n && st)
        memcpy(g->b, P->self, n * st * sizeof *g->b);
    rc = CG_EBAD;
    for (i = 0; i < P->ncalls; i++) {
        const CgCall *c = &P->calls[i];
        uint32_t from = g->comp[c->caller], to = g->comp[c->callee];
        if (c->caller == c->callee)
            g->cyclic[from] = 1;
        if (from == to)
            continue;            /* inside a cycle: counted once, outside */
        cg_call_costs(P, c, cost);
        for (k = 0; k < st; k++) {
            int64_t *a = &g->a[(size_t)c->callee * st + k];
            int64_t *b = &g->b[(size_t)c->caller * st + k];
            if (__builtin_add_overflow(*a, cost[k], a) ||
                __builtin_add_overflow(*b, cost[k], b))
                goto fail;
        }
    }
    free(cost);
    *out = g;
    return CG_OK;
fail:
    free(cost);
    graph_free(g);
    return rc;
}

const CgGraph *cg_graph_get(CgProfile *P, int *rc)
{
    CgGraph *g;
    *rc = CG_OK;
    if (P->graph)
        return P->graph;
    if ((*rc = graph_build(P, &g)) != CG_OK)
        return NULL;
    P->graph = g;
    P->graph_free = graph_free;
    P->graph_bytes = sizeof *g + P->nfuncs * (sizeof *g->comp +
                                              2 * P->stride * sizeof *g->a) +
                     g->ncomp * sizeof *g->cyclic;
    return g;
}
