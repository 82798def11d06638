/* libFuzzer target for the stack record's reader (cg_stackrec_read.h).
 * The input is read twice: as it is (its own end line and digest), and
 * as the body of a record, with the right end line appended (so that the
 * fuzzer reaches past the digest). A record read is checked: every parent
 * before its node, every function one of the record's; written again
 * (cg_stackrec.h) it reads back to the same record; its tree
 * (cg_stacktree.h) adds up (kept selves and pruned costs to the total);
 * its folded text is as long as cg_fold_size says. A difference aborts. */
#include "cg_stackrec.h"
#include "cg_stackrec_read.h"
#include "cg_stacktree.h"
#include "cg_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const CgRec *a, const CgRec *b)
{
    size_t i;
    if (a->n != b->n || a->nfn != b->nfn || a->nev != b->nev || strcmp(a->profile, b->profile))
        abort();
    for (i = 0; i < a->n; i++)
        if (a->parent[i] != b->parent[i] || a->fn[i] != b->fn[i])
            abort();
    if (a->n && memcmp(a->cost, b->cost, a->n * a->nev * sizeof *a->cost))
        abort();
    for (i = 0; i < a->nfn; i++)
        if (a->names[i].len != b->names[i].len || memcmp(a->names[i].ptr, b->names[i].ptr, a->names[i].len))
            abort();
}

/* The tree of the first event, pruned at a tenth: it adds up. */
static void tree(const CgRec *r)
{
    CgStackTree t;
    int64_t *cost = malloc((r->n + 1) * sizeof *cost), sum = 0;
    size_t i;
    if (cost == NULL)
        abort();
    for (i = 0; i < r->n; i++)
        cost[i] = r->cost[i * r->nev];
    memset(&t, 0, sizeof t);
    t.n = r->n;
    t.parent = r->parent;
    t.fn = r->fn;
    t.cost = cost;
    t.prune = 1;
    t.min = 0.1;
    if (cg_stack_tree(&t) != CG_OK)
        abort();
    sum = t.top_self;
    for (i = 0; i < t.nout; i++) {
        if (t.out_parent[i] >= (int32_t)i)
            abort();
        sum = (int64_t)((uint64_t)sum + (uint64_t)t.out_self[i]);
    }
    if (sum != t.total) {
        fprintf(stderr, "fuzz_stackrec: kept selves and pruned costs %lld, total %lld\n",
                (long long)sum, (long long)t.total);
        abort();
    }
    cg_stack_tree_free(&t);
    free(cost);
}

static void check(const CgRec *r)
{
    size_t i;
    CgWriter w;
    CgRecOut o;
    CgRec back;
    const char *text;
    size_t len;
    for (i = 0; i < r->n; i++)
        if (r->parent[i] >= (int32_t)i || r->parent[i] < -1 || r->fn[i] < 0 || (size_t)r->fn[i] >= r->nfn)
            abort();
    memset(&o, 0, sizeof o);
    o.profile = r->profile;
    o.nev = r->nev;
    o.events = r->events;
    o.nfn = r->nfn;
    o.files = r->files;
    o.names = r->names;
    o.n = r->n;
    o.parent = r->parent;
    o.fn = r->fn;
    o.cost = r->cost;
    cg_writer_init_mem(&w, 0);
    cg_rec_fill(&w, &o);
    text = cg_writer_data(&w, &len);
    if (w.status != CG_OK || cg_rec_parse(&back, text, len, "again") != CG_OK) {
        fprintf(stderr, "fuzz_stackrec: written again, not read: %s\n", back.msg);
        abort();
    }
    same(r, &back);
    cg_rec_free(&back);
    cg_writer_free(&w);
    tree(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    CgRec r;
    char *buf = malloc(size + 64);
    char line[sizeof CG_WRITTEN_DIGEST + 18];
    int n;
    if (buf == NULL)
        abort();
    if (cg_rec_parse(&r, (const char *)data, size, "input") == CG_OK)
        check(&r);
    cg_rec_free(&r);
    memcpy(buf, data, size);
    n = snprintf(line, sizeof line, "%s%016llx\n", CG_WRITTEN_DIGEST,
                 (unsigned long long)cg_fnv1a(CG_FNV_OFFSET, (const char *)data, size));
    memcpy(buf + size, line, (size_t)n);
    if (cg_rec_parse(&r, buf, size + (size_t)n, "input") == CG_OK)
        check(&r);
    cg_rec_free(&r);
    free(buf);
    return 0;
}
