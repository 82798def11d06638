/* The stack record's writer and the folded text of a tree of stacks
 * (cg_stackrec.h). */
#include "cg_stackrec.h"
#include "cg_profile.h"

#include <string.h>

/* Writes v in decimal at the end of buf (room for 21 bytes before end);
 * returns where it starts. */
static char *decimal(char *end, int64_t v)
{
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    if (v < 0)
        *--end = '-';
    return end;
}

static void put_str(CgWriter *w, const char *s)
{
    cg_write_raw(w, s, strlen(s));
}

static void put_dec(CgWriter *w, int64_t v)
{
    char buf[24], *p = decimal(buf + sizeof buf, v);
    cg_write_raw(w, p, (size_t)(buf + sizeof buf - p));
}

/* The head: version, profile, events, functions. */
static void rec_head(CgWriter *w, const CgRecOut *R)
{
    size_t i;
    put_str(w, CG_REC_HEAD);
    put_str(w, "profile: fnv1a64:");
    cg_write_raw(w, R->profile, 16);
    put_str(w, "\nevents:");
    for (i = 0; i < R->nev; i++) {
        cg_write_raw(w, " ", 1);
        cg_write_raw(w, R->events[i].ptr, R->events[i].len);
    }
    put_str(w, "\nfunctions: ");
    put_dec(w, (int64_t)R->nfn);
    cg_write_raw(w, "\n", 1);
    for (i = 0; i < R->nfn; i++) {
        cg_write_raw(w, R->files[i].ptr, R->files[i].len);
        cg_write_raw(w, "\t", 1);
        cg_write_raw(w, R->names[i].ptr, R->names[i].len);
        cg_write_raw(w, "\n", 1);
    }
    put_str(w, "nodes: ");
    put_dec(w, (int64_t)R->n);
    cg_write_raw(w, "\n", 1);
}

static const char two_digits[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "68697071727374757677787980818283848586878889909192939495969798"
    "99";

/* u in decimal at p, n digits (n >= 1); returns its end. */
static char *digits_at(char *p, uint64_t u, int n)
{
    char *end = p + n;
    p = end;
    while (u >= 100) {
        unsigned d = (unsigned)(u % 100) * 2;
        u /= 100;
        *--p = two_digits[d + 1];
        *--p = two_digits[d];
    }
    if (u >= 10) {
        unsigned d = (unsigned)u * 2;
        *--p = two_digits[d + 1];
        *--p = two_digits[d];
    } else {
        *--p = (char)('0' + u);
    }
    return end;
}

/* v in decimal at p (up to 20 digits and a sign); returns its end. Most
 * of a record's numbers are below 100 (a parent's distance, a cost of
 * 0): those without the count of digits. */
static char *decimal_at(char *p, int64_t v)
{
    uint64_t u, t;
    int n;
    if (v >= 0 && v < 10) {
        *p = (char)('0' + v);
        return p + 1;
    }
    if (v >= 10 && v < 100) {
        p[0] = two_digits[2 * v];
        p[1] = two_digits[2 * v + 1];
        return p + 2;
    }
    u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    if (v < 0)
        *p++ = '-';
    if (u < 10000)
        return digits_at(p, u, u < 10 ? 1 : u < 100 ? 2 : u < 1000 ? 3 : 4);
    for (t = u / 10000, n = 5; t >= 10; t /= 10)
        n++;
    return digits_at(p, u, n);
}

/* REC_BATCH nodes at a time, their costs (CG_REC_MAX_EV each at most) */
#define REC_BATCH 64
#define REC_COSTS (REC_BATCH * CG_REC_MAX_EV)

/* nodes [from, from + n) of R: their parents, functions and costs (nev
 * each), from R's callback or its arrays */
static void rec_nodes(const CgRecOut *R, size_t from, size_t n,
                      int32_t *parent, int32_t *fn, int64_t *cost)
{
    if (R->nodes != NULL) {
        R->nodes(R->node_ud, from, n, parent, fn, cost);
        return;
    }
    memcpy(parent, R->parent + from, n * sizeof *parent);
    memcpy(fn, R->fn + from, n * sizeof *fn);
    memcpy(cost, R->cost + from * R->nev, n * R->nev * sizeof *cost);
}

void cg_rec_fill(CgWriter *w, void *ud)
{
    const CgRecOut *R = (const CgRecOut *)ud;
    size_t i, e, b, nb;
    int32_t up[REC_BATCH], fn[REC_BATCH];
    int64_t cost[REC_COSTS];
    /* one line a node: its distance back to its parent (its own number
     * for a root: nodes count from 1, "no node" is 0), its function (from
     * 1), its costs; lines gathered in chunk, sent a chunk at a time */
    char chunk[8192], *p = chunk;
    size_t line_max = 22 * (2 + R->nev) + 2;   /* < chunk */
    if (R->nev < 1 || R->nev > CG_REC_MAX_EV) {
        cg_writer_fail(w, CG_ELIMIT, 0);
        return;
    }
    rec_head(w, R);
    for (i = 0; i < R->n; i += nb) {
        nb = R->n - i < REC_BATCH ? R->n - i : REC_BATCH;
        rec_nodes(R, i, nb, up, fn, cost);
        for (b = 0; b < nb; b++) {
            const int64_t *c = cost + b * R->nev;
            if ((size_t)(chunk + sizeof chunk - p) < line_max) {
                cg_write_raw(w, chunk, (size_t)(p - chunk));
                p = chunk;
            }
            p = decimal_at(p, (int64_t)(i + b) - up[b]);
            *p++ = ' ';
            p = decimal_at(p, (int64_t)fn[b] + 1);
            for (e = 0; e < R->nev; e++) {
                *p++ = ' ';
                p = decimal_at(p, c[e]);
            }
            *p++ = '\n';
        }
    }
    cg_write_raw(w, chunk, (size_t)(p - chunk));
    cg_write_end(w);
}

uint64_t cg_fold_size(CgFoldOut *F, uint64_t *longest)
{
    uint64_t size = 0;
    size_t i;
    *longest = 0;
    for (i = 0; i < F->n; i++) {
        int32_t p = F->parent[i];
        int64_t c = F->cost[i * F->stride + F->col];
        uint64_t v;
        F->len[i] = (p >= 0 ? F->len[p] + 1 : 0) + F->names[F->fn[i]].len;
        F->depth[i] = p >= 0 ? F->depth[p] + 1 : 1;
        if (F->len[i] > *longest)
            *longest = F->len[i];
        if (c == 0)
            continue;
        /* the path, a space, the first digit, the newline */
        size += F->len[i] + 3 + (c < 0);
        v = c < 0 ? 0 - (uint64_t)c : (uint64_t)c;
        for (; v >= 10; v /= 10)
            size++;
    }
    return size;
}

/* The path of node i written into F->path, knowing that it holds the
 * path of node prev (-1: none): only the frames below their nearest
 * common node are written again, found by walking up from both (nodes
 * are made in call order: a node and the one of the line before are
 * mostly near each other in the tree, however deep). */
static void fold_path(CgFoldOut *F, int32_t i, int32_t prev)
{
    size_t fresh = 0;
    int32_t x = i, a = prev;
    while (x >= 0 && (a < 0 || F->depth[x] > F->depth[a])) {
        F->chain[fresh++] = x;
        x = F->parent[x];
    }
    while (a >= 0 && (x < 0 || F->depth[a] > F->depth[x]))
        a = F->parent[a];
    while (x != a) {
        F->chain[fresh++] = x;
        x = F->parent[x];
        a = F->parent[a];
    }
    while (fresh > 0) {
        int32_t y = F->chain[--fresh];
        const CgStr *name = &F->names[F->fn[y]];
        char *at = F->path + F->len[y] - name->len;
        if (F->depth[y] > 1)
            at[-1] = ';';
        memcpy(at, name->ptr, name->len);
    }
}

void cg_fold_fill(CgWriter *w, void *ud)
{
    CgFoldOut *F = (CgFoldOut *)ud;
    size_t i;
    int32_t prev = -1;
    w->no_digest = 1;
    for (i = 0; i < F->n; i++) {
        int64_t c = F->cost[i * F->stride + F->col];
        char num[24], *p = num + sizeof num;
        if (c == 0)
            continue;
        fold_path(F, (int32_t)i, prev);
        prev = (int32_t)i;
        cg_write_raw(w, F->path, (size_t)F->len[i]);
        *--p = '\n';
        p = decimal(p, c);
        *--p = ' ';
        cg_write_raw(w, p, (size_t)(num + sizeof num - p));
    }
}
