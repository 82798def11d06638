/* Sums over a loaded profile (cg_query.h). Every sum is checked: a value
 * past 64 bits is a status, never a wrapped number. */
#include "cg_query.h"
#include "cg_cursor.h"

#include <stdlib.h>
#include <string.h>

int cg_totals(const CgProfile *P, int64_t *out)
{
    size_t i;
    int j;
    for (i = 0; i < P->nev; i++)
        out[i] = 0;
    for (i = 0; i < P->nparts; i++)
        for (j = 0; j < P->parts[i].nev; j++)
            if (__builtin_add_overflow(out[P->parts[i].evmap[j]],
                                       P->parts[i].sum[j],
                                       &out[P->parts[i].evmap[j]]))
                return CG_ESUM;
    return CG_OK;
}

void cg_part_totals(const CgProfile *P, uint32_t part, int64_t *out)
{
    const CgPart *pt = &P->parts[part];
    int j;
    memset(out, 0, P->nev * sizeof *out);
    for (j = 0; j < pt->nev; j++)
        out[pt->evmap[j]] = pt->sum[j];
}

int cg_event_value(const CgProfile *P, const int64_t *v, int ev,
                   const int64_t *coefs, int64_t *out)
{
    int64_t sum = 0, t;
    size_t i;
    if (!coefs) {
        *out = v[ev];
        return CG_OK;
    }
    for (i = 0; i < P->nev; i++) {
        if (!coefs[i])
            continue;
        if (__builtin_mul_overflow(coefs[i], v[i], &t) ||
            __builtin_add_overflow(sum, t, &sum))
            return CG_EVALUE;
    }
    *out = sum;
    return CG_OK;
}

int cg_file_costs(const CgProfile *P, int ev, const int64_t *coefs,
                  int64_t *sum, int64_t *scratch)
{
    size_t nf = P->names[CG_FILE].n;
    CgCursor c;
    CgLine l;
    memset(sum, 0, (nf + 1) * sizeof *sum);
    cg_cursor_init(&c, P, 0, P->nblocks, scratch);
    while (cg_cursor_next_line(&c, &l)) {
        int64_t *slot = &sum[l.file >= 0 ? (size_t)l.file : nf];
        int64_t v;
        if (cg_event_value(P, l.cost, ev, coefs, &v))
            return CG_EVALUE;
        if (__builtin_add_overflow(*slot, v, slot))
            return CG_ESUM;
    }
    return CG_OK;
}

/* ---- cost by source line: two small hashes over the arrays ---- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static uint64_t line_hash(uint64_t line, int32_t func)
{
    return mix(line ^ ((uint64_t)(uint32_t)func << 40 | (uint32_t)func));
}

/* Room in *slot (*cap slots) for one more than the n entries it holds,
 * at most 3/4 full; when there is none, the slots are made again, larger,
 * from the entries (fl's lines, or its funcs). -1 out of memory. */
static int reserve_slots(uint32_t **slot, size_t *cap, size_t n,
                         const CgFileLines *fl, int funcs)
{
    size_t ncap = *cap ? *cap : 64, i;
    uint32_t *s;
    if (n + 1 >= UINT32_MAX)
        return -1;
    if ((n + 1) * 4 < *cap * 3)
        return 0;
    while ((n + 1) * 4 >= ncap * 3)
        ncap *= 2;
    s = (uint32_t *)cg_zalloc(ncap, sizeof *s);
    if (!s)
        return -1;
    for (i = 0; i < n; i++) {
        uint64_t h = funcs ? line_hash(fl->funcs[i].line, fl->funcs[i].func)
                           : line_hash(fl->lines[i].line, -1);
        size_t k = (size_t)h & (ncap - 1);
        while (s[k])
            k = (k + 1) & (ncap - 1);
        s[k] = (uint32_t)i + 1;
    }
    free(*slot);
    *slot = s;
    *cap = ncap;
    return 0;
}

/* The slot of (line, func) among fl's lines (funcs 0, func -1) or its
 * (line, function) pairs (funcs 1), with room made for one more entry:
 * *k, which holds the entry's index + 1, or 0 when it is not there yet.
 * -1 out of memory. */
static int find_slot(CgFileLines *fl, int funcs, uint64_t line, int32_t func,
                     size_t *k)
{
    uint32_t **slot = funcs ? &fl->fslot : &fl->lslot;
    size_t *cap = funcs ? &fl->fcap : &fl->lcap, i;
    if (reserve_slots(slot, cap, funcs ? fl->nfuncs : fl->nlines, fl, funcs))
        return -1;
    for (i = (size_t)line_hash(line, func) & (*cap - 1); (*slot)[i];
         i = (i + 1) & (*cap - 1)) {
        uint32_t e = (*slot)[i] - 1;
        if (funcs ? fl->funcs[e].line == line && fl->funcs[e].func == func
                  : fl->lines[e].line == line)
            break;
    }
    *k = i;
    return 0;
}

/* Adds v to line's sum (a new entry when first seen). */
static int add_line(CgFileLines *fl, uint64_t line, int64_t v)
{
    size_t k;
    CgLineSum *s;
    if (find_slot(fl, 0, line, -1, &k))
        return CG_ENOMEM;
    if (fl->lslot[k]) {
        s = &fl->lines[fl->lslot[k] - 1];
        return __builtin_add_overflow(s->cost, v, &s->cost) ? CG_ESUM : CG_OK;
    }
    if (CG_GROW(fl->lines, fl->lines_cap, fl->nlines + 1))
        return CG_ENOMEM;
    s = &fl->lines[fl->nlines];
    s->line = line;
    s->cost = v;
    fl->lslot[k] = (uint32_t)++fl->nlines;
    return CG_OK;
}

/* Records (line, func) once. */
static int add_func(CgFileLines *fl, uint64_t line, int32_t func)
{
    size_t k;
    if (find_slot(fl, 1, line, func, &k))
        return CG_ENOMEM;
    if (fl->fslot[k])
        return CG_OK;
    if (CG_GROW(fl->funcs, fl->funcs_cap, fl->nfuncs + 1))
        return CG_ENOMEM;
    fl->funcs[fl->nfuncs].line = line;
    fl->funcs[fl->nfuncs].func = func;
    fl->fslot[k] = (uint32_t)++fl->nfuncs;
    return CG_OK;
}

int cg_file_lines(const CgProfile *P, int32_t file, int ev,
                  const int64_t *coefs, CgFileLines *out, int64_t *scratch)
{
    CgCursor c;
    CgLine l;
    int rc = CG_OK;
    memset(out, 0, sizeof *out);
    cg_cursor_init(&c, P, 0, P->nblocks, scratch);
    while (rc == CG_OK && cg_cursor_next_line(&c, &l)) {
        uint64_t line = (l.flags & CG_HAS_LINE) ? l.line : 0;
        int64_t v;
        if (l.file != file)
            continue;
        rc = cg_event_value(P, l.cost, ev, coefs, &v);
        if (rc == CG_OK)
            rc = add_line(out, line, v);
        if (rc == CG_OK)
            rc = add_func(out, line, l.func);
    }
    if (rc != CG_OK)
        cg_file_lines_free(out);
    return rc;
}

void cg_file_lines_free(CgFileLines *fl)
{
    free(fl->lines);
    free(fl->funcs);
    free(fl->lslot);
    free(fl->fslot);
    memset(fl, 0, sizeof *fl);
}
