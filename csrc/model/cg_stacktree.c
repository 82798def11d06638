/* The tree of recorded stacks (cg_stacktree.h). */
#include "cg_stacktree.h"

#include <stdlib.h>
#include <string.h>

typedef struct Merged {
    int32_t parent, fn, node;   /* node: the first trie node merged */
    int32_t first, next;        /* children, in key order (-1: none) */
    int64_t self, total, key;
} Merged;

typedef struct Build {
    Merged *m;
    size_t nm;
    int32_t *slot;              /* (parent, fn) -> merged + 1; 0: empty */
    size_t mask;
    int32_t *map;               /* trie node -> merged, -1: dropped */
    int64_t *key;               /* per trie node */
} Build;

/* a + b as Lua adds integers: wrapping around (a record may hold any
 * costs) */
static int64_t add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* (a, b) mixed into every bit (splitmix64's finalizer) */
static size_t hash2(int32_t a, int32_t b)
{
    uint64_t h = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
    return (size_t)(h ^ (h >> 31));
}

/* The merged node of fn under parent p, made when missing. */
static int32_t merged_of(Build *b, int32_t p, int32_t fn, int32_t node)
{
    size_t s = hash2(p, fn) & b->mask;
    while (b->slot[s]) {
        Merged *x = &b->m[b->slot[s] - 1];
        if (x->parent == p && x->fn == fn)
            return b->slot[s] - 1;
        s = (s + 1) & b->mask;
    }
    b->m[b->nm].parent = p;
    b->m[b->nm].fn = fn;
    b->m[b->nm].node = node;
    b->m[b->nm].first = b->m[b->nm].next = -1;
    b->m[b->nm].self = 0;
    b->m[b->nm].key = INT64_MAX;
    b->slot[s] = (int32_t)++b->nm;
    return (int32_t)b->nm - 1;
}

/* Merges the trie into b->m: only nodes with a cost at or below them. */
static void merge(const CgStackTree *t, Build *b)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        b->key[i] = t->cost[i] != 0 ? (int64_t)i : INT64_MAX;
    for (i = t->n; i-- > 0;) {
        int32_t p = t->parent[i];
        if (p >= 0 && b->key[i] < b->key[p])
            b->key[p] = b->key[i];
    }
    for (i = 0; i < t->n; i++) {
        int32_t p, id;
        b->map[i] = -1;
        if (b->key[i] == INT64_MAX)
            continue;
        p = t->parent[i] >= 0 ? b->map[t->parent[i]] : -1;
        id = merged_of(b, p, t->fn[i], (int32_t)i);
        b->map[i] = id;
        b->m[id].self = add(b->m[id].self, t->cost[i]);
        if (b->key[i] < b->m[id].key)
            b->m[id].key = b->key[i];
    }
}

/* Totals, and each node's children (and the roots, under *roots) linked
 * in key order. A merged node's key is a trie node's index, unique among
 * siblings (a parent may share its child's): counted out by key, they
 * come out in order. */
static int link(CgStackTree *t, Build *b, int32_t *roots)
{
    size_t i;
    uint32_t *start = calloc(t->n + 1, sizeof *start);
    int32_t *order = malloc((b->nm ? b->nm : 1) * sizeof *order);
    if (start == NULL || order == NULL) {
        free(start);
        free(order);
        return CG_ENOMEM;
    }
    for (i = 0; i < b->nm; i++)
        b->m[i].total = b->m[i].self;
    t->total = 0;
    for (i = b->nm; i-- > 0;) {
        if (b->m[i].parent >= 0)
            b->m[b->m[i].parent].total = add(b->m[b->m[i].parent].total, b->m[i].total);
        else
            t->total = add(t->total, b->m[i].total);
    }
    for (i = 0; i < b->nm; i++)
        start[b->m[i].key + 1]++;
    for (i = 0; i < t->n; i++)
        start[i + 1] += start[i];
    for (i = 0; i < b->nm; i++)
        order[start[b->m[i].key]++] = (int32_t)i;
    /* the lists kept newest first through first/next: filled from the
     * largest key down, they come out in key order */
    *roots = -1;
    for (i = b->nm; i-- > 0;) {
        int32_t id = order[i], p = b->m[id].parent;
        int32_t *head = p >= 0 ? &b->m[p].first : roots;
        b->m[id].next = *head;
        *head = id;
    }
    free(start);
    free(order);
    return CG_OK;
}

/* Depth first from the roots: kept nodes out, pruned ones into their
 * parent's self. */
static int walk(CgStackTree *t, Build *b, int32_t roots)
{
    double min = t->min * (double)t->total;
    int32_t *stack = malloc((b->nm ? b->nm : 1) * sizeof *stack);
    int32_t *outof = malloc((b->nm ? b->nm : 1) * sizeof *outof);
    size_t sp = 0, k = 0;
    int32_t cur = roots;
    if (stack == NULL || outof == NULL) {
        free(stack);
        free(outof);
        return CG_ENOMEM;
    }
    t->top_self = 0;
    /* cur: the next sibling to visit; the stack holds the parents */
    for (;;) {
        while (cur < 0 && sp > 0)
            cur = b->m[stack[--sp]].next;
        if (cur < 0)
            break;
        {
            Merged *x = &b->m[cur];
            int32_t p = x->parent;
            if (t->prune && !((double)x->total >= min && x->total > 0)) {
                if (p >= 0)
                    t->out_self[outof[p]] = add(t->out_self[outof[p]], x->total);
                else
                    t->top_self = add(t->top_self, x->total);
                cur = x->next;
                continue;
            }
            outof[cur] = (int32_t)k;
            t->out_parent[k] = p >= 0 ? outof[p] : -1;
            t->out_node[k] = x->node;
            t->out_total[k] = x->total;
            t->out_self[k] = x->self;
            k++;
            stack[sp++] = cur;
            cur = x->first;
        }
    }
    t->nout = k;
    free(stack);
    free(outof);
    return CG_OK;
}

int cg_stack_tree(CgStackTree *t)
{
    Build b;
    size_t cap = 16, n1 = t->n ? t->n : 1;
    int32_t roots;
    int rc = CG_ENOMEM;
    memset(&b, 0, sizeof b);
    t->nout = 0;
    while (cap < 2 * n1)
        cap *= 2;
    b.mask = cap - 1;
    b.m = malloc(n1 * sizeof *b.m);
    b.slot = calloc(cap, sizeof *b.slot);
    b.map = malloc(n1 * sizeof *b.map);
    b.key = malloc(n1 * sizeof *b.key);
    t->out_parent = malloc(n1 * sizeof *t->out_parent);
    t->out_node = malloc(n1 * sizeof *t->out_node);
    t->out_total = malloc(n1 * sizeof *t->out_total);
    t->out_self = malloc(n1 * sizeof *t->out_self);
    if (b.m && b.slot && b.map && b.key && t->out_parent && t->out_node
        && t->out_total && t->out_self) {
        merge(t, &b);
        rc = link(t, &b, &roots);
        if (rc == CG_OK)
            rc = walk(t, &b, roots);
    }
    free(b.m);
    free(b.slot);
    free(b.map);
    free(b.key);
    return rc;
}

void cg_stack_tree_free(CgStackTree *t)
{
    free(t->out_parent);
    free(t->out_node);
    free(t->out_total);
    free(t->out_self);
    t->out_parent = t->out_node = NULL;
    t->out_total = t->out_self = NULL;
}
