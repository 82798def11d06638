/* The estimated call tree (cg_stacks.h). */
#include "cg_stacks.h"
#include "cg_query.h"

#include <stdlib.h>
#include <string.h>

/* A callee of a function and the summed cost of the calls to it. */
typedef struct Callee {
    int32_t func;
    int64_t cost;
} Callee;

/* A function's callees: all of them by function index, and those of at
 * least min by cost, largest first; what a frame of it shares out: its
 * self cost and the cost of its calls (positive parts), summed in out. */
typedef struct Callees {
    Callee *all, *big;
    uint32_t nall, nbig;
    int64_t sum, out;
    int done;
} Callees;

static int by_func(const void *x, const void *y)
{
    int32_t a = ((const Callee *)x)->func, b = ((const Callee *)y)->func;
    return (a > b) - (a < b);
}

static int by_cost(const void *x, const void *y)
{
    const Callee *a = x, *b = y;
    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    return (a->func > b->func) - (a->func < b->func);
}

static int64_t add_clamped(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int fill(const CgProfile *P, int32_t fi, int ev, const int64_t *coefs, int64_t min,
                int64_t *scratch, Callees *cl)
{
    const CgFunc *f = &P->funcs[fi];
    uint32_t n = f->calls_end - f->calls_begin, i, m = 0, nb = 0;
    int64_t self;
    cl->done = 1;
    if (cg_event_value(P, P->self + (size_t)fi * P->stride, ev, coefs, &self) != CG_OK)
        return CG_EVALUE;
    cl->out = self > 0 ? self : 0;
    if (n == 0)
        return CG_OK;
    cl->all = malloc(n * sizeof *cl->all);
    if (!cl->all)
        return CG_ENOMEM;
    for (i = 0; i < n; i++) {
        const CgCall *c = &P->calls[f->calls_begin + i];
        int64_t v;
        cg_call_costs(P, c, scratch);
        if (cg_event_value(P, scratch, ev, coefs, &v) != CG_OK)
            return CG_EVALUE;
        cl->all[i].func = c->callee;
        cl->all[i].cost = v;
    }
    qsort(cl->all, n, sizeof *cl->all, by_func);
    for (i = 0; i < n; i++) {
        if (m > 0 && cl->all[m - 1].func == cl->all[i].func)
            cl->all[m - 1].cost = add_clamped(cl->all[m - 1].cost, cl->all[i].cost);
        else
            cl->all[m++] = cl->all[i];
    }
    cl->nall = m;
    for (i = 0; i < m; i++) {
        cl->sum = add_clamped(cl->sum, cl->all[i].cost);
        if (cl->all[i].cost > 0)
            cl->out = add_clamped(cl->out, cl->all[i].cost);
        if (cl->all[i].cost > 0 && cl->all[i].cost >= min)
            nb++;
    }
    if (nb) {
        cl->big = malloc(nb * sizeof *cl->big);
        if (!cl->big)
            return CG_ENOMEM;
        for (i = 0, nb = 0; i < m; i++)
            if (cl->all[i].cost > 0 && cl->all[i].cost >= min)
                cl->big[nb++] = cl->all[i];
        qsort(cl->big, nb, sizeof *cl->big, by_cost);
    }
    cl->nbig = nb;
    return CG_OK;
}

static int push(CgStacks *s, int32_t parent, int32_t func, int64_t total)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        CgFrame *f = realloc(s->frames, cap * sizeof *f);
        if (!f)
            return CG_ENOMEM;
        s->frames = f;
        s->cap = cap;
    }
    s->frames[s->n].parent = parent;
    s->frames[s->n].func = func;
    s->frames[s->n].total = total;
    s->frames[s->n].self = total;
    s->n++;
    return CG_OK;
}

/* Makes the children of frame k: its budget is shared between its own
 * line and its callees in proportion to the function's self cost and the
 * cost of its calls to each (cl->out their sum). A callee already
 * CG_STACKS_MAX_REPEAT times on the path (repeats[]), or already on it
 * with a share below rmin, or whose share is below min, is not made: its share stays on the frame, and the correction
 * of lua/callgrind/export/stacks.lua moves it where it belongs. */
static int children(CgStacks *s, size_t k, const uint16_t *repeats, const Callees *cl, int64_t min,
                    int64_t rmin)
{
    int64_t budget = s->frames[k].total, assigned = 0;
    double scale;
    uint32_t i;
    if (budget <= 0 || cl->out <= 0 || cl->nbig == 0)
        return CG_OK;
    scale = (double)budget / (double)cl->out;
    for (i = 0; i < cl->nbig; i++) {
        int64_t c = (int64_t)((double)cl->big[i].cost * scale);   /* >= 0: truncation is floor */
        if (c <= 0 || c < min)
            break;                      /* the rest are smaller */
        if (repeats[cl->big[i].func] > 0 && (repeats[cl->big[i].func] >= CG_STACKS_MAX_REPEAT || c < rmin))
            continue;
        if (c > budget - assigned)
            c = budget - assigned;
        if (c > 0) {
            int rc = push(s, (int32_t)k, cl->big[i].func, c);
            if (rc != CG_OK)
                return rc;
            assigned += c;
        }
    }
    s->frames[k].self = budget - assigned;
    return CG_OK;
}

/* The depth-first walk of cg_stacks_estimate, by depth: the frame, its
 * next child to enter, the end of its children, its function. */
typedef struct Dfs {
    size_t *stack, *next, *end;
    int32_t *path;
    size_t cap;
} Dfs;

/* Room for twice the depths; CG_OK or CG_ENOMEM (d then freed by its
 * owner). */
static int dfs_grow(Dfs *d)
{
    size_t ncap = d->cap ? d->cap * 2 : 64;
    size_t *a = realloc(d->stack, ncap * sizeof *a);
    int32_t *p;
    if (!a)
        return CG_ENOMEM;
    d->stack = a;
    a = realloc(d->next, ncap * sizeof *a);
    if (!a)
        return CG_ENOMEM;
    d->next = a;
    a = realloc(d->end, ncap * sizeof *a);
    if (!a)
        return CG_ENOMEM;
    d->end = a;
    p = realloc(d->path, ncap * sizeof *p);
    if (!p)
        return CG_ENOMEM;
    d->path = p;
    d->cap = ncap;
    return CG_OK;
}

int cg_stacks_estimate(const CgProfile *P, int ev, const int64_t *coefs,
                       const int32_t *root_func, const int64_t *root_budget,
                       size_t nroots, int64_t min, int64_t rmin, CgStacks *out)
{
    Callees *cls = calloc(P->nfuncs ? P->nfuncs : 1, sizeof *cls);
    uint16_t *on_path = calloc(P->nfuncs ? P->nfuncs : 1, sizeof *on_path);
    int64_t *scratch = malloc((P->stride ? P->stride : 1) * sizeof *scratch);
    Dfs d;
    size_t r, i;
    int rc = CG_OK;
    memset(&d, 0, sizeof d);
    if (!cls || !on_path || !scratch) {
        rc = CG_ENOMEM;
        goto done;
    }
    for (r = 0; r < nroots && rc == CG_OK; r++) {
        size_t depth;
        size_t first;
        rc = push(out, -1, root_func[r], root_budget[r]);
        if (rc != CG_OK || root_budget[r] < min)
            continue;
        depth = 0;
        first = out->n - 1;
        /* enter the root */
        for (;;) {
            size_t k;
            int32_t fi;
            if (depth == d.cap && (rc = dfs_grow(&d)) != CG_OK)
                break;
            k = depth == 0 ? first : d.next[depth - 1] - 1;
            fi = out->frames[k].func;
            d.stack[depth] = k;
            d.path[depth] = fi;
            on_path[fi]++;
            depth++;
            if (!cls[fi].done && (rc = fill(P, fi, ev, coefs, min, scratch, &cls[fi])) != CG_OK)
                break;
            d.next[depth - 1] = out->n;
            if ((rc = children(out, k, on_path, &cls[fi], min, rmin)) != CG_OK)
                break;
            d.end[depth - 1] = out->n;
            /* the next frame to enter: a child not yet entered, else go up */
            while (depth > 0 && d.next[depth - 1] == d.end[depth - 1]) {
                on_path[d.path[depth - 1]]--;
                depth--;
            }
            if (depth == 0)
                break;
            d.next[depth - 1]++;
        }
        for (i = 0; i < depth; i++)
            on_path[d.path[i]]--;
    }
done:
    if (cls) {
        for (i = 0; i < P->nfuncs; i++) {
            free(cls[i].all);
            free(cls[i].big);
        }
    }
    free(cls);
    free(on_path);
    free(scratch);
    free(d.stack);
    free(d.next);
    free(d.end);
    free(d.path);
    return rc;
}

void cg_stacks_free(CgStacks *s)
{
    free(s->frames);
    s->frames = NULL;
    s->n = s->cap = 0;
}

int cg_stacks_in_calls(const CgProfile *P, int ev, const int64_t *coefs, CgInCalls *out)
{
    size_t nf = P->nfuncs, i, n = 0;
    uint32_t *fill_at;
    int64_t *scratch;
    int rc = CG_OK;
    out->start = calloc(nf + 1, sizeof *out->start);
    fill_at = calloc(nf + 1, sizeof *fill_at);
    scratch = malloc((P->stride ? P->stride : 1) * sizeof *scratch);
    out->caller = malloc((P->ncalls ? P->ncalls : 1) * sizeof *out->caller);
    out->cost = malloc((P->ncalls ? P->ncalls : 1) * sizeof *out->cost);
    if (!out->start || !fill_at || !scratch || !out->caller || !out->cost) {
        rc = CG_ENOMEM;
        goto done;
    }
    /* a counting sort by callee: callers come in index order */
    for (i = 0; i < nf; i++) {
        uint32_t c;
        for (c = P->funcs[i].calls_begin; c < P->funcs[i].calls_end; c++)
            out->start[P->calls[c].callee + 1]++;
    }
    for (i = 0; i < nf; i++)
        out->start[i + 1] += out->start[i];
    memcpy(fill_at, out->start, (nf + 1) * sizeof *fill_at);
    for (i = 0; i < nf; i++) {
        uint32_t c;
        for (c = P->funcs[i].calls_begin; c < P->funcs[i].calls_end; c++) {
            const CgCall *call = &P->calls[c];
            int64_t v;
            uint32_t at = fill_at[call->callee]++;
            cg_call_costs(P, call, scratch);
            if (cg_event_value(P, scratch, ev, coefs, &v) != CG_OK) {
                rc = CG_EVALUE;
                goto done;
            }
            out->caller[at] = (int32_t)i;
            out->cost[at] = v;
        }
    }
    /* one entry per caller: its calls' costs summed */
    for (i = 0; i < nf; i++) {
        uint32_t c, from = out->start[i], to = out->start[i + 1];
        out->start[i] = (uint32_t)n;
        for (c = from; c < to; c++) {
            if (n > out->start[i] && out->caller[n - 1] == out->caller[c]) {
                out->cost[n - 1] = add_clamped(out->cost[n - 1], out->cost[c]);
            } else {
                out->caller[n] = out->caller[c];
                out->cost[n] = out->cost[c];
                n++;
            }
        }
    }
    out->start[nf] = (uint32_t)n;
    out->n = n;
    out->nfuncs = nf;
done:
    free(fill_at);
    free(scratch);
    return rc;
}

void cg_in_calls_free(CgInCalls *c)
{
    free(c->start);
    free(c->caller);
    free(c->cost);
    memset(c, 0, sizeof *c);
}
