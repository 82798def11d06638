/* libFuzzer target for the Lua-free core: loads the input strictly and
 * leniently, walks everything the model holds (every function's lines and
 * jumps through a cursor over its blocks, every call) and checks what must
 * hold for any accepted input. A broken invariant aborts with a message.
 *
 * The cursor parses the blocks again, so "a function's self cost is the sum
 * of its lines" is where loader and cursor must agree on every byte.
 *
 * The sums the Lua layer asks for (cg_query.h) must agree with the parts'
 * sums and with each other: by part, by source file, by source line, for a
 * base event and for a derived one.
 *
 * An input that starts with gzip, zstd or xz magic bytes is decompressed
 * first (at most MAX_TEXT bytes of text), as cg_source does for a file. */
#include "cg_decompress.h"
#include "cg_mem.h"
#include "cg_load.h"
#include "cg_profile.h"
#include "cg_cursor.h"
#include "cg_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "fuzz"
#define MAX_TEXT ((size_t)16 << 20)

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_load: invariant broken: %s%s%s\n", what,
            detail ? ": " : "", detail ? detail : "");
    abort();
}

#define CHECK(cond) \
    do { if (!(cond)) broken(#cond, NULL); } while (0)

/* A name index of kind k: -1 (none) when allowed, else a resolved name. */
static void check_name(const CgProfile *P, int kind, int32_t i, int none_ok)
{
    if (i == -1 && none_ok)
        return;
    CHECK(i >= 0 && (size_t)i < P->names[kind].n);
    /* stand-ins (ptr NULL) never survive the load */
    CHECK(P->names[kind].str[i].ptr != NULL);
}

/* s lies inside one of the loaded texts */
static int within(const CgProfile *P, CgStr s)
{
    size_t i;
    for (i = 0; i < P->ntexts; i++) {
        const CgText *t = &P->texts[i];
        if (s.ptr >= t->buf && s.len <= t->len &&
            (size_t)(s.ptr - t->buf) <= t->len - s.len)
            return 1;
    }
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    const CgFunc *x = *(const CgFunc *const *)a;
    const CgFunc *y = *(const CgFunc *const *)b;
    if (x->obj != y->obj)
        return x->obj < y->obj ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_line_func(const void *a, const void *b)
{
    const CgLineFunc *x = (const CgLineFunc *)a, *y = (const CgLineFunc *)b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->func < y->func ? -1 : x->func > y->func;
}

/* The lines of one file (file_cost: what cg_file_costs gave it): each
 * line and each (line, function) once, every line with a function, every
 * function at a line listed, the lines' costs adding up to the file's. */
static void check_file_lines(const CgProfile *P, int32_t file, int ev,
                             const int64_t *coefs, int64_t file_cost,
                             int64_t *scratch)
{
    CgFileLines fl;
    uint64_t sum = 0, *lines;
    CgLineFunc *funcs;
    size_t i, k;
    int rc = cg_file_lines(P, file, ev, coefs, &fl, scratch);
    if (rc) {
        CHECK(rc == CG_ESUM || rc == CG_ENOMEM);
        CHECK(fl.nlines == 0 && fl.lines == NULL && fl.funcs == NULL);
        return;
    }
    CHECK(fl.nfuncs >= fl.nlines);
    CHECK(file_cost == 0 || fl.nlines > 0);
    lines = malloc((fl.nlines + 1) * sizeof *lines);
    funcs = malloc((fl.nfuncs + 1) * sizeof *funcs);
    CHECK(lines && funcs);
    for (i = 0; i < fl.nlines; i++) {
        sum += (uint64_t)fl.lines[i].cost;
        lines[i] = fl.lines[i].line;
    }
    if (sum != (uint64_t)file_cost)
        broken("a file's lines do not add up to its cost", NULL);
    for (i = 0; i < fl.nfuncs; i++) {
        CHECK(fl.funcs[i].func >= 0 && (size_t)fl.funcs[i].func < P->nfuncs);
        funcs[i] = fl.funcs[i];
    }
    qsort(lines, fl.nlines, sizeof *lines, cmp_u64);
    qsort(funcs, fl.nfuncs, sizeof *funcs, cmp_line_func);
    for (i = 1; i < fl.nlines; i++)
        CHECK(lines[i - 1] != lines[i]);
    /* the same set of lines, in both lists */
    for (i = k = 0; i < fl.nfuncs; i++) {
        CHECK(i == 0 || cmp_line_func(&funcs[i - 1], &funcs[i]) < 0);
        if (i > 0 && funcs[i - 1].line == funcs[i].line)
            continue;
        CHECK(k < fl.nlines && lines[k] == funcs[i].line);
        k++;
    }
    CHECK(k == fl.nlines);
    free(lines);
    free(funcs);
    cg_file_lines_free(&fl);
}

/* Event ev (or, ev < 0, coefs: a derived one) by source file: the files'
 * costs add up to want (the total, modulo 2^64), and the lines of the
 * first nfiles files (each a walk of every cost line) and of no file to
 * each file's cost. */
static void check_by_file(const CgProfile *P, int ev, const int64_t *coefs,
                          uint64_t want, int64_t *fsum, int64_t *scratch,
                          size_t nfiles)
{
    size_t nf = P->names[CG_FILE].n, i;
    uint64_t sum = 0;
    int rc = cg_file_costs(P, ev, coefs, fsum, scratch);
    if (rc) {
        CHECK(rc == CG_ESUM || (rc == CG_EVALUE && coefs));
        return;
    }
    for (i = 0; i <= nf; i++)
        sum += (uint64_t)fsum[i];
    if (sum != want)
        broken("the files' costs do not add up to the total", NULL);
    if (!nfiles)
        return;
    for (i = 0; i < nf && i < nfiles; i++)
        check_file_lines(P, (int32_t)i, ev, coefs, fsum[i], scratch);
    check_file_lines(P, -1, ev, coefs, fsum[nf], scratch);
}

/* The sums of cg_query.h against the parts' sums (sum_parts, modulo
 * 2^64). */
static void check_sums(const CgProfile *P, const uint64_t *sum_parts)
{
    size_t stride = P->stride, nf = P->names[CG_FILE].n, i, k;
    int64_t *tot = calloc(stride + 1, sizeof *tot);
    int64_t *part = calloc(stride + 1, sizeof *part);
    int64_t *coefs = calloc(stride + 1, sizeof *coefs);
    int64_t *scratch = calloc(stride + 1, sizeof *scratch);
    int64_t *fsum = calloc(nf + 1, sizeof *fsum);
    uint64_t *acc = calloc(stride + 1, sizeof *acc);
    uint64_t all = 0;
    int64_t v;
    CHECK(tot && part && coefs && scratch && fsum && acc);
    /* the loader fails a load whose totals do not fit */
    CHECK(cg_totals(P, tot) == CG_OK);
    for (i = 0; i < P->nparts; i++) {
        cg_part_totals(P, (uint32_t)i, part);
        for (k = 0; k < stride; k++)
            acc[k] += (uint64_t)part[k];
    }
    for (k = 0; k < stride; k++) {
        CHECK((uint64_t)tot[k] == sum_parts[k]);
        CHECK(acc[k] == sum_parts[k]);
        CHECK(cg_event_value(P, tot, (int)k, NULL, &v) == CG_OK &&
              v == tot[k]);
        coefs[k] = 1;
        all += (uint64_t)tot[k];
    }
    /* a derived event: the sum of every event */
    if (cg_event_value(P, tot, -1, coefs, &v) == CG_OK)
        CHECK((uint64_t)v == all);
    for (k = 0; k < stride && k < 3; k++)
        check_by_file(P, (int)k, NULL, (uint64_t)tot[k], fsum, scratch,
                      k == 0 ? 4 : 0);
    if (stride)
        check_by_file(P, -1, coefs, all, fsum, scratch, 4);
    free(tot);
    free(part);
    free(coefs);
    free(scratch);
    free(fsum);
    free(acc);
}

static void check_profile(const CgProfile *P)
{
    size_t i, k, stride = P->stride, nb = 0, nc = 0;
    uint64_t *sum_self, *sum_parts, *sum_lines;
    int64_t *cost;
    unsigned char *seen;
    const CgFunc **byk;

    CHECK(stride == P->nev);
    CHECK(P->nparts >= 1);
    CHECK(P->version == 0 || P->version == 1);
    /* past the cap only "truncated" ones (two at most) are kept */
    CHECK(P->nwarnings <= CG_MAX_WARNINGS + 2);
    for (i = 0; i < CG_NWKINDS; i++)
        CHECK(P->warnings_dropped[i] == 0 ||
              P->nwarnings >= CG_MAX_WARNINGS);
    for (i = 0; i < P->nwarnings; i++) {
        CHECK(!strncmp(P->warnings[i].text, NAME ":", sizeof NAME));
        CHECK(P->warnings[i].kind >= 0 && P->warnings[i].kind < CG_NWKINDS);
        CHECK(i < CG_MAX_WARNINGS || P->warnings[i].kind == CG_W_TRUNCATED);
    }
    for (i = 0; i < P->nev; i++) {
        CHECK(P->events[i].len > 0);
        CHECK(within(P, P->events[i]));
        for (k = 0; k < i; k++)
            CHECK(P->events[k].len != P->events[i].len ||
                  memcmp(P->events[k].ptr, P->events[i].ptr,
                         P->events[i].len));
    }
    if (P->creator.ptr)
        CHECK(within(P, P->creator));

    /* parts */
    sum_parts = calloc(stride + 1, sizeof *sum_parts);
    sum_self = calloc(stride + 1, sizeof *sum_self);
    sum_lines = calloc(stride + 1, sizeof *sum_lines);
    cost = calloc(stride + 1, sizeof *cost);
    CHECK(sum_parts && sum_self && sum_lines && cost);
    for (i = 0; i < P->nparts; i++) {
        const CgPart *pt = &P->parts[i];
        int j;
        CHECK(pt->npos >= 0 && pt->npos <= CG_MAX_POSITIONS);
        CHECK(pt->nev >= 0 && pt->nev <= CG_MAX_EVENTS);
        CHECK(pt->nev == 0 || (pt->evmap && pt->sum));
        CHECK(pt->desc_begin <= pt->desc_end && pt->desc_end <= P->ndescs);
        if (pt->has & CG_PART_CMD)
            CHECK(within(P, pt->cmd));
        for (j = 0; j < pt->nev; j++) {
            int m;
            CHECK(pt->evmap[j] < P->nev);
            for (m = 0; m < j; m++)
                CHECK(pt->evmap[m] != pt->evmap[j]);
            sum_parts[pt->evmap[j]] += (uint64_t)pt->sum[j];
        }
        CHECK(!pt->summary || pt->nev > 0);
        CHECK(!pt->totals || pt->nev > 0);
    }
    for (i = 0; i < P->ndescs; i++) {
        CHECK(within(P, P->descs[i].type));
        CHECK(within(P, P->descs[i].value));
    }

    /* functions: keys resolved and distinct, ranges contiguous */
    byk = malloc((P->nfuncs + 1) * sizeof *byk);
    CHECK(byk);
    for (i = 0; i < P->nfuncs; i++) {
        const CgFunc *f = &P->funcs[i];
        check_name(P, CG_OBJ, f->obj, 1);
        check_name(P, CG_FILE, f->file, 1);
        check_name(P, CG_FN, f->name, 0);
        CHECK(f->blocks_begin <= f->blocks_end &&
              f->blocks_end <= P->nblocks);
        CHECK(f->calls_begin <= f->calls_end && f->calls_end <= P->ncalls);
        CHECK(f->callers_begin <= f->callers_end &&
              f->callers_end <= P->ncalls);
        /* grouped: each function's range follows the one before */
        CHECK(f->blocks_begin == nb);
        CHECK(f->calls_begin == nc);
        nb = f->blocks_end;
        nc = f->calls_end;
        byk[i] = f;
    }
    CHECK(nb == P->nblocks);
    CHECK(nc == P->ncalls);
    if (P->nfuncs > 1) {
        qsort(byk, P->nfuncs, sizeof *byk, cmp_key);
        for (i = 1; i < P->nfuncs; i++)
            if (!cmp_key(&byk[i - 1], &byk[i]))
                broken("two functions with one key", NULL);
    }
    free(byk);

    /* blocks */
    for (i = 0; i < P->nblocks; i++) {
        const CgBlock *b = &P->blocks[i];
        CHECK(b->part < P->nparts && P->parts[b->part].text < P->ntexts);
        CHECK(b->start <= b->end &&
              b->end <= P->texts[P->parts[b->part].text].len);
        CHECK(b->func >= 0 && (size_t)b->func < P->nfuncs);
        CHECK(b->part < P->nparts);
        CHECK((size_t)b->base + (size_t)P->parts[b->part].npos <= P->nbases);
        CHECK(b->jfunc == -1 ||
              (b->jfunc >= 0 && (size_t)b->jfunc < P->nfuncs));
        check_name(P, CG_FILE, b->lfile, 1);
        check_name(P, CG_FILE, b->jfile, 1);
    }

    /* calls, and callers: each call once, under its callee */
    seen = calloc(P->ncalls + 1, 1);
    CHECK(seen);
    for (i = 0; i < P->nfuncs; i++) {
        const CgFunc *f = &P->funcs[i];
        for (k = f->calls_begin; k < f->calls_end; k++)
            CHECK(P->calls[k].caller == (int32_t)i);
        for (k = f->callers_begin; k < f->callers_end; k++) {
            uint32_t c = P->callers[k];
            CHECK(c < P->ncalls);
            CHECK(P->calls[c].callee == (int32_t)i);
            CHECK(!seen[c]);
            seen[c] = 1;
        }
    }
    for (i = 0; i < P->ncalls; i++) {
        const CgCall *c = &P->calls[i];
        CHECK(seen[i]);
        CHECK(c->caller >= 0 && (size_t)c->caller < P->nfuncs);
        CHECK(c->callee >= 0 && (size_t)c->callee < P->nfuncs);
        CHECK(c->part < P->nparts);
        check_name(P, CG_FILE, c->file, 1);
        /* the caller has a block: the calls= line opened one */
        CHECK(P->funcs[c->caller].blocks_begin <
              P->funcs[c->caller].blocks_end);
    }
    free(seen);

    /* lines and jumps, function by function */
    for (i = 0; i < P->nfuncs; i++) {
        const CgFunc *f = &P->funcs[i];
        const int64_t *self = P->self + i * stride;
        CgCursor c;
        CgLine l;
        CgJump j;
        memset(sum_lines, 0, (stride + 1) * sizeof *sum_lines);
        cg_cursor_init(&c, P, f->blocks_begin, f->blocks_end, cost);
        while (cg_cursor_next_line(&c, &l)) {
            CHECK(l.func == (int32_t)i);
            CHECK(l.part < P->nparts);
            CHECK(l.cost == cost);
            check_name(P, CG_FILE, l.file, 1);
            for (k = 0; k < stride; k++)
                sum_lines[k] += (uint64_t)l.cost[k];
        }
        for (k = 0; k < stride; k++) {
            if (sum_lines[k] != (uint64_t)self[k]) {
                char d[160];
                snprintf(d, sizeof d, "function %zu event %zu: self %lld, "
                         "lines sum to %lld", i, k, (long long)self[k],
                         (long long)sum_lines[k]);
                broken("self cost != sum of its lines", d);
            }
            sum_self[k] += (uint64_t)self[k];
        }
        cg_cursor_init(&c, P, f->blocks_begin, f->blocks_end, NULL);
        while (cg_cursor_next_jump(&c, &j)) {
            CHECK(j.from == (int32_t)i);
            CHECK(j.to >= 0 && (size_t)j.to < P->nfuncs);
            CHECK(j.part < P->nparts);
            CHECK(j.conditional == 0 || j.conditional == 1);
            check_name(P, CG_FILE, j.file, 1);
            check_name(P, CG_FILE, j.target_file, 1);
        }
    }
    for (k = 0; k < stride; k++)
        if (sum_self[k] != sum_parts[k])
            broken("sum of self costs != sum of the parts' sums", NULL);

    /* the whole profile in one walk gives the same totals */
    {
        CgCursor c;
        CgLine l;
        CgJump j;
        memset(sum_lines, 0, (stride + 1) * sizeof *sum_lines);
        cg_cursor_init(&c, P, 0, P->nblocks, cost);
        while (cg_cursor_next_line(&c, &l))
            for (k = 0; k < stride; k++)
                sum_lines[k] += (uint64_t)l.cost[k];
        for (k = 0; k < stride; k++)
            CHECK(sum_lines[k] == sum_parts[k]);
        cg_cursor_init(&c, P, 0, P->nblocks, NULL);
        while (cg_cursor_next_jump(&c, &j))
            CHECK(j.from >= 0 && (size_t)j.from < P->nfuncs);
    }
    check_sums(P, sum_parts);
    (void)cg_profile_bytes(P);
    free(sum_parts);
    free(sum_self);
    free(sum_lines);
    free(cost);
}

static void check_error(const CgError *err, int rc, size_t len)
{
    CHECK(rc == CG_EBAD);
    CHECK(err->status == rc);
    CHECK(!strncmp(err->msg, NAME ":", sizeof NAME));
    CHECK(memchr(err->msg, 0, sizeof err->msg) != NULL);
    /* a line of the input (1 past the last when the file ends early), or
     * 0 for what is about no one line */
    CHECK(err->line <= (uint64_t)len + 1);
}

/* A strict load that succeeds takes the same path leniently. */
static void check_same(const CgProfile *A, const CgProfile *B)
{
    size_t i;
    CHECK(A->nfuncs == B->nfuncs && A->ncalls == B->ncalls &&
          A->nblocks == B->nblocks && A->nparts == B->nparts &&
          A->nev == B->nev && A->nwarnings == B->nwarnings &&
          !memcmp(A->warnings_dropped, B->warnings_dropped,
                  sizeof A->warnings_dropped));
    CHECK(!A->nfuncs || !memcmp(A->self, B->self,
                                A->nfuncs * A->stride * sizeof *A->self));
    CHECK(A->call_bytes_len == B->call_bytes_len &&
          (!A->call_bytes_len ||
           !memcmp(A->call_bytes, B->call_bytes, A->call_bytes_len)));
    for (i = 0; i < A->nwarnings; i++)
        CHECK(!strcmp(A->warnings[i].text, B->warnings[i].text) &&
              A->warnings[i].kind == B->warnings[i].kind);
}

/* B is A to the byte: what check_same compares, and blocks, bases and
 * every part's sums. */
static void check_identical(const CgProfile *A, const CgProfile *B)
{
    size_t i;
    check_same(A, B);
    CHECK(A->nbases == B->nbases &&
          (!A->nblocks || !memcmp(A->blocks, B->blocks,
                                  A->nblocks * sizeof *A->blocks)) &&
          (!A->nbases || !memcmp(A->bases, B->bases,
                                 A->nbases * sizeof *A->bases)) &&
          (!A->ncalls || !memcmp(A->calls, B->calls,
                                 A->ncalls * sizeof *A->calls)));
    for (i = 0; i < A->nparts; i++) {
        const CgPart *a = &A->parts[i], *b = &B->parts[i];
        CHECK(a->nev == b->nev && a->npos == b->npos);
        CHECK(!a->nev || !memcmp(a->sum, b->sum, (size_t)a->nev *
                                 sizeof *a->sum));
    }
}

/* The load with a worker thread summing runs of cost lines in chunks of a
 * few bytes (cg_prescan.h) gives what the load alone gave: the same model,
 * or the same error. Every other size, the loader also shares the scan
 * (chunks the worker has not reached, as in the default); every other
 * pair of sizes, the worker never takes the vector path (cg_vec.h), which
 * it otherwise takes where the CPU has it and a chunk has 64 bytes left. */
static void load_chunked(const char *buf, size_t size, int options,
                         const CgProfile *alone, int rc_alone,
                         const CgError *err_alone)
{
    CgProfile *P = NULL;
    CgError err;
    CgLoadOpts o;
    int rc;
    memset(&o, 0, sizeof o);
    o.options = options;
    o.chunk = 16 + size % 113;
    o.share = (int)(size & 1);
    o.scalar = (int)(size >> 1 & 1);
    rc = cg_load_text(&P, buf, size, NAME, &o, &err);
    CHECK(rc == rc_alone);
    if (rc) {
        if (strcmp(err.msg, err_alone->msg)) {
            fprintf(stderr, "fuzz_load: alone: %s\nchunked: %s\n",
                    err_alone->msg, err.msg);
            abort();
        }
        return;
    }
    check_identical(alone, P);
    cg_profile_free(P);
}

static void load_both(const char *buf, size_t size)
{
    CgProfile *strict = NULL, *lenient = NULL;
    CgError err;
    int rc;

    rc = cg_load(&strict, buf, size, NAME, 0, &err);
    if (rc) {
        CHECK(strict == NULL);
        check_error(&err, rc, size);
    } else {
        CHECK(strict != NULL);
        check_profile(strict);
    }
    load_chunked(buf, size, 0, strict, rc, &err);

    rc = cg_load(&lenient, buf, size, NAME, CG_LENIENT, &err);
    load_chunked(buf, size, CG_LENIENT, lenient, rc, &err);
    if (rc) {
        CHECK(lenient == NULL);
        check_error(&err, rc, size);
        /* leniently, only a bad version: line, no events: line, or
         * functions that merge at the end into a sum past 64 bits, fail
         * the load */
        if (!strstr(err.msg, ": expected a version number") &&
            !strstr(err.msg, ": no events: line: not a callgrind") &&
            !strstr(err.msg, "is not supported (this reader knows") &&
            !strstr(err.msg, ": the sum of a function's costs does not")) {
            fprintf(stderr, "fuzz_load: lenient load failed: %s\n",
                    err.msg);
            abort();
        }
        CHECK(strict == NULL);
    } else {
        check_profile(lenient);
        if (strict)
            check_same(strict, lenient);
        else             /* what the strict load failed on is a warning */
            CHECK(lenient->nwarnings >= 1);
    }
    cg_profile_free(strict);
    cg_profile_free(lenient);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    int kind = cg_compression(buf, size);
    if (kind != CG_PLAIN) {
        char *text = NULL;
        size_t len = 0, tsize = 0;
        CgError err;
        CgReadLimit rl = { MAX_TEXT, NULL, NULL };
        int rc = cg_decompress(kind, buf, size, &rl, NAME, &text, &len,
                               &tsize, &err);
        if (rc) {
            CHECK(text == NULL);
            CHECK(rc == CG_EBAD || rc == CG_ENOMEM || rc == CG_ELIMIT);
            CHECK(rc == CG_ENOMEM || !strncmp(err.msg, NAME ": ",
                                              sizeof NAME + 1));
            return 0;
        }
        load_both(text, len);
        cg_big_free(text, tsize);
        return 0;
    }
    load_both(buf, size);
    return 0;
}
