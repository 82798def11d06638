/* The collector's records: functions, call edges, lines and the trie of
 * call stacks, each found again by a hash map (cg_prof_map.c).
 *
 * Functions. One per definition (cg_prof_fold.c); a function value is
 * found by its key (its prototype, a C function pointer), read from the
 * CallInfo (cg_l54_ci_key) where the probe found that to agree with
 * lua_getinfo; else lua_getinfo("f") gives it. */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof_records.h"
#include "cg_mem.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

/* ---- lines ----
 *
 * A function's lines are an array from its first line with a cost to its
 * last (the hook's fast paths index it). A line more than LINE_GAP lines
 * from that span is kept apart (Prof.over, found by overmap) rather than
 * growing the span over the lines between: a module's main chunk runs a
 * statement between each of the functions it defines (Penlight's tests:
 * 8,528 lines with a cost in spans of 29,560). The hook engine charges a
 * line apart on its slow path: one charged more than LINE_HOT times joins
 * the span (with the lines apart it then covers). */
#define LINE_GAP 16
#define LINE_HOT 64

static int cost_any(const Cost *c)
{
    return (c->v[0] | c->v[1] | c->v[2]) != 0;
}

/* The bytes of a line's cost. */
static size_t line_size(const Prof *P)
{
    return (size_t)P->cw * sizeof(int64_t);
}

void cg_prof_line_add(const Prof *P, int64_t *c, const Cost *d)
{
    int e;
    for (e = 0; e < P->cw; e++)
        c[e] += d->v[e];
}

size_t cg_prof_lines_room(size_t n)
{
    size_t step = 1;
    if (n <= 8)
        return n;
    while ((n >> 2) >= step * 2)
        step *= 2;
    return (n + step - 1) & ~(step - 1);
}

/* c's lines made room for need of them (cg_prof_lines_room: exactly up
 * to 8, most functions keep one or a few lines, then by an eighth to a
 * fourth: the room keeps no field of its own). */
static void lines_room(Prof *P, lua_State *L, FnCost *c, size_t need)
{
    size_t cap = cg_prof_lines_room(need);
    int64_t *p;
    if (cap <= cg_prof_lines_room(c->n))
        return;
    if (cap > UINT32_MAX
        || (p = (int64_t *)realloc(c->lines, cap * line_size(P))) == NULL)
        cg_prof_oom(P, L);
    c->lines = p;
}

/* fn's span grown to hold line. */
static void span_take(Prof *P, lua_State *L, FnCost *c, int32_t line)
{
    if (c->n == 0) {
        c->lo = line;
    } else if (line < c->lo) {
        size_t shift = (size_t)(c->lo - line);
        lines_room(P, L, c, c->n + shift);
        memmove(c->lines + shift * (size_t)P->cw, c->lines,
                c->n * line_size(P));
        memset(c->lines, 0, shift * line_size(P));
        c->n += (uint32_t)shift;
        c->lo = line;
    }
    if ((size_t)(line - c->lo) >= c->n) {
        size_t need = (size_t)(line - c->lo) + 1;
        lines_room(P, L, c, need);
        memset(c->lines + c->n * (size_t)P->cw, 0,
               (need - c->n) * line_size(P));
        c->n = (uint32_t)need;
    }
}

static uint64_t over_key(int32_t fn, int32_t line)
{
    return (uint64_t)(uint32_t)fn << 32 | (uint32_t)line;
}

/* fn's lines apart that its span covers now move into it. */
static void over_into_span(Prof *P, FnCost *c, int32_t fn)
{
    size_t x;
    int left = 0, e;
    for (x = 0; x < P->nover; x++) {
        OverLine *o = &P->over[x];
        if (o->fn != fn)
            continue;
        if (o->line >= c->lo && (uint32_t)(o->line - c->lo) < c->n) {
            for (e = 0; e < P->cw; e++)   /* the others: 0 */
                c->lines[(size_t)(o->line - c->lo) * (size_t)P->cw + e]
                    += o->c.v[e];
            cg_pm_del(&P->overmap, over_key(fn, o->line), 0);
            o->fn = -1;
        } else {
            left = 1;
        }
    }
    c->over = left != 0;
}

int64_t *cg_prof_line_slot(Prof *P, lua_State *L, int32_t fn, int32_t line)
{
    FnCost *c = &P->fns[fn];
    if (line < 0)
        line = 0;
    if (c->n > 0 && line >= c->lo && (uint32_t)(line - c->lo) < c->n)
        return &c->lines[(size_t)(line - c->lo) * (size_t)P->cw];
    if (c->n > 0 && (line < c->lo ? (int64_t)c->lo - line
                                  : (int64_t)line - c->lo - c->n + 1)
                        > LINE_GAP) {
        int32_t x = c->over ? cg_pm_get(&P->overmap, over_key(fn, line), 0)
                            : -1;
        if (x < 0) {
            if (P->nover >= (size_t)INT32_MAX
                || cg_prof_grow((void **)&P->over, &P->capover,
                                P->nover + 1, sizeof *P->over) != 0
                || cg_pm_put(&P->overmap, over_key(fn, line), 0,
                             (int32_t)P->nover) != 0)
                cg_prof_oom(P, L);
            x = (int32_t)P->nover++;
            memset(&P->over[x], 0, sizeof P->over[x]);
            P->over[x].fn = fn;
            P->over[x].line = line;
            c->over = 1;
        }
        if (P->direct || ++P->over[x].hits <= LINE_HOT)
            return P->over[x].c.v;
    }
    span_take(P, L, c, line);
    if (c->over)
        over_into_span(P, c, fn);
    return &c->lines[(size_t)(line - c->lo) * (size_t)P->cw];
}

static int over_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int cg_prof_fn_lines(const Prof *P, int32_t fn,
                     void (*each)(void *ud, int32_t line, const Cost *c),
                     void *ud)
{
    const FnCost *c = &P->fns[fn];
    int32_t *apart = NULL;      /* line, index pairs, by line */
    size_t n = 0, x, j = 0, k = 0;
    if (c->over) {
        for (x = 0; x < P->nover; x++)
            n += P->over[x].fn == fn;
        if (n > 0
            && (apart = (int32_t *)malloc(n * 2 * sizeof *apart)) == NULL)
            return -1;
        for (x = 0, n = 0; x < P->nover; x++)
            if (P->over[x].fn == fn) {
                apart[2 * n] = P->over[x].line;
                apart[2 * n++ + 1] = (int32_t)x;
            }
        qsort(apart, n, 2 * sizeof *apart, over_cmp);
    }
    while (j < c->n || k < n) {
        int32_t dl = j < c->n ? c->lo + (int32_t)j : INT32_MAX;
        if (k < n && apart[2 * k] < dl) {
            const Cost *o = &P->over[apart[2 * k + 1]].c;
            if (cost_any(o))
                each(ud, apart[2 * k], o);
            k++;
        } else {
            Cost l;
            memset(&l, 0, sizeof l);
            memcpy(l.v, c->lines + j * (size_t)P->cw, line_size(P));
            if (cost_any(&l))
                each(ud, dl, &l);
            j++;
        }
    }
    free(apart);
    return 0;
}

Cost cg_prof_edge_incl(const Prof *P, int32_t id)
{
    Cost c;
    memset(&c, 0, sizeof c);
    c.v[EV_INSTR] = P->edges[id].incl;
    if (P->eplus != NULL) {
        c.v[EV_TIME] = P->eplus[2 * (size_t)id];
        c.v[EV_ALLOC] = P->eplus[2 * (size_t)id + 1];
    }
    return c;
}

void cg_prof_edge_plus(Prof *P, int32_t id, const Cost *d)
{
    P->eplus[2 * (size_t)id] += d->v[EV_TIME];
    P->eplus[2 * (size_t)id + 1] += d->v[EV_ALLOC];
}

void cg_prof_over_free(Prof *P)
{
    free(P->over);
    P->over = NULL;
    P->nover = P->capover = 0;
    cg_pm_free(&P->overmap);
}

int cg_prof_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t ncap = *cap < 8 ? 8 : *cap + *cap / 2;
    void *p;
    if (need <= *cap)
        return 0;
    if (ncap < need)
        ncap = need;
    if (ncap > (size_t)-1 / elem || (p = realloc(*arr, ncap * elem)) == NULL)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* Puts node id, fn's under parent, into nodemap. */
static void node_index(Prof *P, lua_State *L, int32_t parent, int32_t fn,
                       int32_t id)
{
    if (cg_pm_put(&P->nodemap, (uint64_t)(uint32_t)(parent + 1),
                (uint32_t)fn, id) != 0)
        cg_prof_oom(P, L);
}

/* fn's node under parent from its children (-1: none yet). */
int32_t cg_prof_find_kid(Prof *P, int32_t parent, int32_t fn)
{
    int32_t x;
    if (parent < 0 || P->nodes[parent].nkids > KID_WALK)
        return cg_pm_get(&P->nodemap, (uint64_t)(uint32_t)(parent + 1),
                       (uint32_t)fn);
    for (x = P->nodes[parent].first; x >= 0; x = P->nodes[x].next)
        if (P->nodes[x].fn == fn)
            return x;
    return -1;
}

/* A new node for fn under parent: its index. Out of memory, nothing
 * changed but entries in nodemap that are right (children of a parent
 * still walked, which a later try puts again: the same values). */
static int32_t new_node(Prof *P, lua_State *L, int32_t parent, int32_t fn)
{
    int32_t id = (int32_t)P->nnode, x;
    Node *n;
    if (P->nnode >= (size_t)INT32_MAX
        || CG_BIG_GROW(P->nodes, P->capnode, P->nnode + 1, CG_BIG_ANY) != 0
        || (!P->direct
            && (CG_BIG_GROW(P->nkid, P->capnkid, P->nnode + 1, CG_BIG_ANY)
                    != 0
                || CG_BIG_GROW(P->nself, P->capnself, P->nnode + 1,
                               CG_BIG_ANY) != 0)))
        cg_prof_oom(P, L);
    if (parent >= 0 && P->nodes[parent].nkids == KID_WALK)
        /* one more is too many to walk: its children go into the map */
        for (x = P->nodes[parent].first; x >= 0; x = P->nodes[x].next)
            node_index(P, L, parent, P->nodes[x].fn, x);
    if (parent < 0 || P->nodes[parent].nkids >= KID_WALK)
        node_index(P, L, parent, fn, id);
    n = &P->nodes[id];
    n->parent = parent;
    n->fn = fn;
    n->first = n->next = -1;
    n->nkids = 0;
    if (parent >= 0) {
        Node *up = &P->nodes[parent];
        n->next = up->first;
        up->first = id;
        up->nkids++;
    }
    if (!P->direct) {
        int k;
        for (k = 0; k < NKID; k++)
            P->nkid[id].kid_fn[k] = P->nkid[id].kid[k] = -1;
        memset(&P->nself[id], 0, sizeof P->nself[id]);
    }
    P->nnode++;
    return id;
}

int32_t cg_prof_node_new(Prof *P, lua_State *L, int32_t parent, int32_t fn)
{
    return new_node(P, L, parent, fn);
}

/* The node of the stack `parent` extended by fn (-1 without stacks). */
int32_t cg_prof_node_of(Prof *P, lua_State *L, int32_t parent, int32_t fn)
{
    int32_t id;
    if (!P->stacks || fn < 0)
        return parent;
    /* the counting interpreter caches a node's children itself */
    if (!P->direct && parent >= 0
        && (id = cg_prof_kid_cached(P, parent, fn)) >= 0)
        return id;
    id = cg_prof_find_kid(P, parent, fn);
    if (id < 0)
        id = new_node(P, L, parent, fn);
    if (!P->direct && parent >= 0)
        cg_prof_kid_remember(P, parent, fn, id);
    return id;
}

/* The edges' map (an IMap: the key is the edge's caller, line, callee). */
static uint64_t edge_hash(int32_t caller, int32_t line, int32_t callee)
{
    return cg_im_hash(((uint64_t)(uint32_t)caller << 32) | (uint32_t)callee,
                      (uint32_t)line);
}

static int edge_same(const void *ud, int32_t id, const void *key)
{
    const Edge *e = &((const Prof *)ud)->edges[id];
    const int32_t *k = (const int32_t *)key;
    return e->caller == k[0] && e->line == k[1] && e->callee == k[2];
}

static uint64_t edge_rehash(const void *ud, int32_t id)
{
    const Edge *e = &((const Prof *)ud)->edges[id];
    return edge_hash(e->caller, e->line, e->callee);
}

int32_t cg_prof_edge_id(Prof *P, lua_State *L, int32_t caller, int32_t line,
                       int32_t callee)
{
    int32_t key[3], id;
    uint64_t h;
    Edge *e;
    key[0] = caller;
    key[1] = line < 0 ? 0 : line;
    key[2] = callee;
    h = edge_hash(key[0], key[1], key[2]);
    id = cg_im_get(&P->edmap, h, edge_same, P, key);
    if (id >= 0)
        return id;
    if (P->ned >= (size_t)INT32_MAX
        || cg_prof_grow((void **)&P->edges, &P->caped, P->ned + 1,
                        sizeof *P->edges) != 0
        || (P->cw > 1
            && cg_prof_grow((void **)&P->eplus, &P->capplus, P->ned + 1,
                            2 * sizeof *P->eplus) != 0)
        || cg_im_put(&P->edmap, h, (int32_t)P->ned, edge_rehash, P) != 0)
        cg_prof_oom(P, L);
    id = (int32_t)P->ned++;
    e = &P->edges[id];
    memset(e, 0, sizeof *e);
    if (P->cw > 1)
        P->eplus[2 * (size_t)id] = P->eplus[2 * (size_t)id + 1] = 0;
    e->caller = key[0];
    e->line = key[1];
    e->callee = key[2];
    return id;
}

/* ---- a yield and a resume (slow paths of the hook's thread switch) ---- */

/* T's frames leave (delta -1: it yielded) or join (+1: resumed) the
 * running threads. */
void cg_prof_activity(Prof *P, Thread *T, int delta)
{
    size_t i;
    for (i = 1; i < T->n; i++)
        if (T->f[i].ci != NULL && T->f[i].fn >= 0)
            P->fns[T->f[i].fn].active += delta;
}

/* A suspended coroutine resumed from another stack: its frames' nodes
 * move under the resume that runs it now. */
void cg_prof_rebase(Prof *P, lua_State *L, Thread *T, int32_t base)
{
    size_t i;
    if (!P->stacks || T->f[0].node == base)
        return;
    T->f[0].node = base;
    for (i = 1; i < T->n; i++)
        T->f[i].node = cg_prof_node_of(P, L, T->f[i - 1].node, T->f[i].fn);
}

/* ---- a generic for's calls ---- */

/* The line of the call the Lua frame f at level 1 of L makes now, when
 * it is a generic for's (cached, else lua_getinfo's), goes to f. */
void cg_prof_tfor_line(Prof *P, lua_State *L, Frame *f, lua_Debug *up)
{
    const void *pc = cg_prof_tfor_pc(P, f);
    size_t k;
    if (pc == NULL)
        return;
    k = cg_prof_tfor_slot(pc);
    if (P->tfor_pc[k] != pc) {
        lua_getinfo(L, "l", up);
        if (up->currentline < 0)
            return;
        P->tfor_pc[k] = pc;
        P->tfor_line[k] = up->currentline;
    }
    f->line = P->tfor_line[k];
}

