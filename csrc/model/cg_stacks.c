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

/* A function's callees: all of them by function index (for the path's
 * look-ups), and those of at least min by cost, largest first. */
typedef struct Callees {
    Callee *all, *big;
    uint32_t nall, nbig;
    int64_t sum;
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
    cl->done = 1;
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

/* The cost of fn's calls to g (0 when none): a binary search. */
static int64_t cost_to(const Callees *cl, int32_t g)
{
    uint32_t lo = 0, hi = cl->nall;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cl->all[mid].func < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cl->nall && cl->all[lo].func == g ? cl->all[lo].cost : 0;
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

/* Makes the children of frame k (path[0..depth) holds the functions on the
 * path, k's own included). */
static int children(const CgProfile *P, CgStacks *s, size_t k, const int32_t *path, size_t depth,
                    const uint8_t *on_path, Callees *cl, int64_t min)
{
    int64_t budget = s->frames[k].total, sum = cl->sum, assigned = 0;
    double scale;
    uint32_t i;
    size_t d;
    (void)P;
    if (sum <= 0 || cl->nbig == 0)
        return CG_OK;
    if (cl->nall < depth) {
        for (i = 0; i < cl->nall; i++)
            if (on_path[cl->all[i].func])
                sum -= cl->all[i].cost;
    } else {
        for (d = 0; d < depth; d++)
            sum -= cost_to(cl, path[d]);
    }
    if (sum <= 0)
        return CG_OK;
    scale = sum > budget ? (double)budget / (double)sum : 1.0;
    for (i = 0; i < cl->nbig; i++) {
        int64_t c = cl->big[i].cost;
        if (scale != 1.0)
            c = (int64_t)((double)c * scale);   /* >= 0: truncation is floor */
        if (c <= 0 || c < min)
            break;                      /* the rest are smaller */
        if (on_path[cl->big[i].func])
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
                       size_t nroots, int64_t min, CgStacks *out)
{
    Callees *cls = calloc(P->nfuncs ? P->nfuncs : 1, sizeof *cls);
    uint8_t *on_path = calloc(P->nfuncs ? P->nfuncs : 1, 1);
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
            on_path[fi] = 1;
            depth++;
            if (!cls[fi].done && (rc = fill(P, fi, ev, coefs, min, scratch, &cls[fi])) != CG_OK)
                break;
            d.next[depth - 1] = out->n;
            if ((rc = children(P, out, k, d.path, depth, on_path, &cls[fi], min)) != CG_OK)
                break;
            d.end[depth - 1] = out->n;
            /* the next frame to enter: a child not yet entered, else go up */
            while (depth > 0 && d.next[depth - 1] == d.end[depth - 1]) {
                on_path[d.path[depth - 1]] = 0;
                depth--;
            }
            if (depth == 0)
                break;
            d.next[depth - 1]++;
        }
        for (i = 0; i < depth; i++)
            on_path[d.path[i]] = 0;
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
