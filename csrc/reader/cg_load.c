/* The loader's entry points: a profile loaded from bytes or files
 * (cg_load.h), each text's start and end, and the loader's messages. The
 * lines are read by cg_load_lines.c; every handler checks its whole line
 * before it changes any state, so a line skipped in lenient mode leaves no
 * trace. */
#include "cg_loader.h"
#include "cg_graph.h"
#include "cg_model.h"
#include "cg_source.h"
#include "cg_vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ---- */

/* Writes s quoted for a message: at most 60 bytes, non-printables as
 * \xHH. */
void cg_ld_quote(char *out, size_t outsz, const char *s, size_t len)
{
    size_t o = 0, i;
    static const char hex[] = "0123456789abcdef";
    int cut = len > 60;
    if (cut)
        len = 60;
    out[o++] = '\'';
    for (i = 0; i < len && o + 8 < outsz; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 32 && c < 127 && c != '\\') {
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    if (cut && o + 4 < outsz) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o++] = '\'';
    out[o] = 0;
}

static int vfail(CgLoader *L, uint64_t line, const char *fmt, va_list ap)
{
    CgError *err = L->err;
    int n;
    err->status = CG_EBAD;
    err->line = line;
    n = snprintf(err->msg, sizeof err->msg, "%s:%llu: ", L->name,
                 (unsigned long long)line);
    if (n < 0 || (size_t)n >= sizeof err->msg)
        n = 0;
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
    return CG_EBAD;
}

int cg_ld_fail(CgLoader *L, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = vfail(L, L->lineno, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_at(CgLoader *L, uint64_t line, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = vfail(L, line, fmt, ap);
    va_end(ap);
    return rc;
}

int cg_ld_nomem(CgLoader *L)
{
    cg_error_nomem(L->err);
    L->err->line = L->lineno;
    return CG_ENOMEM;
}

int cg_ld_add_warning_text(CgLoader *L, int kind, const char *text)
{
    return cg_model_warn_text(L->P, kind, text) ? cg_ld_nomem(L) : CG_OK;
}

/* A warning of a kind (CG_W_*) about line `line`, same shape as an
 * error. */
int cg_ld_warn_at(CgLoader *L, int kind, uint64_t line, const char *fmt, ...)
{
    CgError tmp, *keep = L->err;
    va_list ap;
    L->err = &tmp;
    va_start(ap, fmt);
    vfail(L, line, fmt, ap);
    va_end(ap);
    L->err = keep;
    return cg_ld_add_warning_text(L, kind, tmp.msg);
}

int cg_ld_lex_fail(CgLoader *L, int why, const char *tok, const char *e,
                   const char *what)
{
    char q[300];
    const char *te = cg_token_end(tok, e);
    if (te == tok && why == CG_LEX_BADNUM)
        return cg_ld_fail(L, "expected a number for %s, found nothing", what);
    cg_ld_quote(q, sizeof q, tok, (size_t)(te - tok));
    switch (why) {
    case CG_LEX_OVERFLOW:
        return cg_ld_fail(L, "%s %s does not fit in 64 bits", what, q);
    case CG_LEX_BELOW:
        return cg_ld_fail(L, "%s %s goes below 0", what, q);
    case CG_LEX_RELCOST:
        return cg_ld_fail(L, "%s is %s: costs cannot be relative, only "
                          "positions", what, q);
    default:
        return cg_ld_fail(L, "expected a number for %s, found %s", what, q);
    }
}

/* ---- each text's start and end ---- */

/* A callgrind file whose last part has no totals: was cut short: warn at
 * its last non-blank line, quoting it. */
static int cut_short(CgLoader *L, const char *why)
{
    const char *buf = L->buf, *e = buf + L->len, *s;
    uint64_t line = L->lineno;
    char q[300];
    /* lineno counts a last line without '\n' too; step back over blank
     * lines (each '\n' ends one) */
    while (e > buf && (e[-1] == '\n' || e[-1] == '\r' || cg_is_blank(e[-1]))) {
        if (e[-1] == '\n' && e != buf + L->len)
            line--;
        e--;
    }
    s = e;
    while (s > buf && s[-1] != '\n')
        s--;
    cg_ld_quote(q, sizeof q, s, (size_t)(e - s));
    return cg_ld_warn_at(L, CG_W_TRUNCATED, line, "the file ends without %s: "
                         "cut short after %s", why, q);
}

/* Does the text end with CG_WRITTEN_END (its newline may be cut)? */
static int ends_written(const char *buf, size_t len)
{
    size_t n = sizeof CG_WRITTEN_END - 1;
    if (len && buf[len - 1] != '\n')
        n--;
    return len >= n + 1 && buf[len - n - 1] == '\n' &&
           !memcmp(buf + len - n, CG_WRITTEN_END, n);
}

/* The end line with a digest (CG_WRITTEN_DIGEST, 16 hex digits, a
 * newline, which may be cut: it ends the file) that ends the text: where
 * it starts (*at) and the digest, or 0 when the text does not end so. */
static int ends_digest(const char *buf, size_t len, size_t *at, uint64_t *d)
{
    size_t nl = len && buf[len - 1] == '\n';
    size_t n = sizeof CG_WRITTEN_DIGEST - 1 + 16 + nl, i;
    const char *p;
    uint64_t v = 0;
    if (len < n + 1 || buf[len - n - 1] != '\n' ||
        memcmp(buf + len - n, CG_WRITTEN_DIGEST, sizeof CG_WRITTEN_DIGEST - 1))
        return 0;
    p = buf + len - nl - 16;
    for (i = 0; i < 16; i++) {
        int c = (unsigned char)p[i];
        int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (x < 0)
            return 0;
        v = v << 4 | (uint64_t)x;
    }
    *at = len - n;
    *d = v;
    return 1;
}

/* A written file's end: "# end" with the digest of every byte before it,
 * checked; "# end" alone in a file of the head before 0.2.0. Returns CG_OK
 * or a failure status. */
static int check_written_end(CgLoader *L)
{
    size_t at;
    uint64_t want;
    int digest = ends_digest(L->buf, L->len, &at, &want);
    if (L->written == 2 && !digest)
        return cut_short(L, "its last line '# end digest=...' (its writer ends every file with it)");
    /* a digest line ends the file: checked even when the head was changed */
    if (digest) {
        if (cg_fnv1a(CG_FNV_OFFSET, L->buf, at) != want)
            return cg_ld_warn_at(L, CG_W_CHANGED, L->lineno,
                                 "the file was changed after it was written: "
                                 "its digest (last line) does not match its "
                                 "content");
        return CG_OK;
    }
    if (L->written == 1 && !ends_written(L->buf, L->len))
        return cut_short(L, "its last line '# end' (its writer ends every "
                         "file with it)");
    return CG_OK;
}

/* The end of one file: a call or jump waiting for its line, no events:
 * line, a callgrind file cut short. */
static int end_text(CgLoader *L)
{
    const char *end = L->buf + L->len;
    int rc;
    cg_ld_close_block(L, end);
    if (L->call_pending || L->jump_pending) {
        int call = L->call_pending;
        uint64_t at = call ? L->call_line : L->jump_line;
        if (!L->lenient)
            return fail_at(L, at, "%s at end of file, with no %s line after "
                           "it", call ? "calls=" : "jump",
                           call ? "cost" : "source");
        L->call_pending = L->jump_pending = 0;
        rc = cg_ld_warn_at(L, CG_W_SKIPPED, at, "%s skipped: the file ends "
                           "before its %s line", call ? "calls=" : "jump",
                           call ? "cost" : "source");
        if (rc)
            return rc;
    } else if (L->skip_cost) {
        L->skip_cost = 0;
    } else if (L->cfn >= 0 || L->cfi >= 0 || L->cob >= 0) {
        rc = cg_ld_warn_at(L, CG_W_TRUNCATED, L->lineno, "the file ends after "
                           "a call's target with no calls= line (truncated?)");
        if (rc)
            return rc;
    }
    if (!L->file_events) {
        L->err->status = CG_EBAD;
        L->err->line = 0;
        snprintf(L->err->msg, sizeof L->err->msg, "%s: no events: line: not "
                 "a callgrind profile", L->name);
        return CG_EBAD;
    }
    if ((L->callgrind || L->written) && !L->P->parts[L->part].totals)
        rc = cut_short(L, L->callgrind ? "totals: (callgrind ends every "
                       "part with one)" : "totals: (its writer ends every "
                       "part with one)");
    else
        rc = check_written_end(L);
    /* the file's last part ends with it: its warnings name this file */
    return rc ? rc : cg_ld_end_part(L);
}

/* The start of file i: a part of its own, compression ids of its own, no
 * names in force. */
static int begin_text(CgLoader *L, uint32_t i)
{
    const CgText *t = &L->P->texts[i];
    int k;
    L->text = i;
    L->buf = t->buf;
    L->len = t->len;
    L->name = t->name;
    L->lineno = 0;
    L->line = t->buf;
    L->file_events = 0;
    L->callgrind = 0;
    L->written = t->len >= sizeof CG_WRITTEN_HEAD - 1 &&
                 !memcmp(t->buf, CG_WRITTEN_HEAD, sizeof CG_WRITTEN_HEAD - 1)
                     ? 2
                 : t->len >= sizeof CG_WRITTEN_HEAD_V1 - 1 &&
                         !memcmp(t->buf, CG_WRITTEN_HEAD_V1, sizeof CG_WRITTEN_HEAD_V1 - 1)
                     ? 1 : 0;
    /* this library's own files of 0.1.0 wrote a call's site relative
     * to the line before it and moved the base with it; those since
     * read the same either way (docs/format.md, "Calls and jumps") */
    L->moving_base = (L->opts->options & CG_MOVING_BASE) || L->written;
    L->skip_cost = 0;
    if (!L->P->nparts || L->touched) {
        int rc = cg_ld_new_part(L, 0);
        if (rc)
            return rc;
    }
    /* the ids of the file before end here */
    if (i && cg_model_name_orphans(L->P, L->P->texts[i - 1].name) != CG_OK)
        return cg_ld_nomem(L);
    L->P->parts[L->part].text = i;
    L->P->parts[L->part].moving_base = L->moving_base;
    for (k = 0; k < CG_NKINDS; k++)
        cg_names_reset_ids(&L->P->names[k]);
    L->ob = L->fl = L->lfile = L->rfile = -1;
    L->cob = L->cfi = L->cfn = -1;
    L->fi_pending = L->fi_site = 0;
    cg_ld_end_function(L);
    return CG_OK;
}

int cg_ld_cancelled(CgLoader *L)
{
    L->err->status = CG_ECANCEL;
    L->err->line = 0;
    snprintf(L->err->msg, sizeof L->err->msg, "%s: load cancelled", L->name);
    return CG_ECANCEL;
}

/* ---- what callgrind never writes ---- */

/* The line of byte `at` of text t (1-based). */
static uint64_t line_at(const CgText *t, size_t at)
{
    const char *p = t->buf, *e = t->buf + (at < t->len ? at : t->len);
    uint64_t n = 1;
    while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

/* What a part may cost in all, per profile event: its cost lines, or
 * its summary: where that is higher (callgrind's summary: may count a
 * few more, and a call into a function that never returns, _Exit, can
 * cost that much). Summed over the parts into total[]. */
static void bounds(const CgProfile *P, int64_t *part_bound, int64_t *total)
{
    size_t i;
    int j;
    for (i = 0; i < P->stride; i++)
        total[i] = 0;
    for (i = 0; i < P->nparts; i++) {
        const CgPart *pt = &P->parts[i];
        for (j = 0; j < pt->nev; j++) {
            int64_t v = pt->sum[j];
            if (pt->summary && pt->summary[j] > v)
                v = pt->summary[j];
            part_bound[i * P->stride + pt->evmap[j]] = v;
            total[pt->evmap[j]] += v;
        }
    }
}

/* The line of the cost line of a calls= line of function f in part
 * `part` whose cost of profile event k is above `bound` (the one call
 * line that breaks the rule, when one does alone), or 0. Positions are
 * read against a base in the middle of the range: only the costs count
 * here. */
static uint64_t call_line_above(const CgProfile *P, size_t f, uint32_t part,
                                size_t k, int64_t bound)
{
    const CgFunc *fn = &P->funcs[f];
    const CgPart *pt = &P->parts[part];
    uint64_t base[CG_MAX_POSITIONS], pos[CG_MAX_POSITIONS];
    int64_t cost[CG_MAX_EVENTS];
    uint32_t b;
    int j, col = -1;
    for (j = 0; j < pt->nev; j++)
        if (pt->evmap[j] == k)
            col = j;
    for (j = 0; j < CG_MAX_POSITIONS; j++)
        base[j] = (uint64_t)1 << 62;
    for (b = fn->blocks_begin; col >= 0 && b < fn->blocks_end; b++) {
        const CgBlock *blk = &P->blocks[b];
        const CgText *t = &P->texts[pt->text];
        const char *p = t->buf + blk->start, *end = t->buf + blk->end;
        int after_calls = 0;
        uint64_t line = 0;
        if (blk->part != part)
            continue;
        while (p < end) {
            CgRec r;
            cg_scan_line(p, end, &r);
            line++;
            if (after_calls && r.kind == CG_K_COST) {
                CgScanFail fail;
                int n = 0;
                if (cg_scan_costs(r.s, r.e, pt->npos, base, pos, cost,
                                  pt->nev, &n, &fail) == CG_SCAN_OK &&
                    col < n && cost[col] > bound)
                    return line_at(t, blk->start) + line - 1;
            }
            after_calls = r.kind == CG_K_CALLS;
            p = r.next;
        }
    }
    return 0;
}

/* A CG_W_CALLS warning at `line` of function f's file, or (0) at the
 * function's first line. */
static int calls_warning(CgLoader *L, size_t f, uint64_t line,
                         const char *fmt, ...)
{
    const CgProfile *P = L->P;
    const CgFunc *fn = &P->funcs[f];
    const CgBlock *blk;
    const CgText *t;
    CgError tmp;
    va_list ap;
    int n;
    if (fn->blocks_begin >= fn->blocks_end)
        return CG_OK;            /* none of its own lines: a callee only */
    blk = &P->blocks[fn->blocks_begin];
    t = &P->texts[P->parts[blk->part].text];
    n = snprintf(tmp.msg, sizeof tmp.msg, "%s:%llu: ", t->name,
                 (unsigned long long)(line ? line
                                           : line_at(t, blk->start)));
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof tmp.msg)
        vsnprintf(tmp.msg + n, sizeof tmp.msg - (size_t)n, fmt, ap);
    va_end(ap);
    return cg_ld_add_warning_text(L, CG_W_CALLS, tmp.msg);
}

/* In a profile with callgrind's files: a call (between functions outside
 * one cycle) that costs more than its part, or a function whose self cost
 * and calls out of its cycle (B, the lower bound of its inclusive cost,
 * cg_graph.h) come to more than the whole profile. callgrind measures a
 * call's cost on the real stack, and at a dump it books a running call's
 * cost so far to the part dumped, so neither happens in a file it wrote;
 * a calls= cost changed by hand does it. Calls inside a cycle are left
 * out: their summed costs count nested calls again (A'2 -> B'2 49 times
 * costs 24 times the total in qt-creator's recursiveCycle.out). One
 * warning of each, at the function's first line. */
static int check_calls(CgLoader *L)
{
    CgProfile *P = L->P;
    int64_t total[CG_MAX_EVENTS], cost[CG_MAX_EVENTS], *part_bound;
    const CgGraph *g;
    size_t f, i, k;
    int rc = CG_OK;
    if (P->stride > CG_MAX_EVENTS || !P->nparts)
        return CG_OK;
    if (!(g = cg_graph_get(P, &rc)))
        return rc == CG_ENOMEM ? cg_ld_nomem(L) : CG_OK;
    if (!(part_bound = calloc(P->nparts * P->stride, sizeof *part_bound)))
        return cg_ld_nomem(L);
    bounds(P, part_bound, total);
    for (i = 0; i < P->ncalls && !rc; i++) {
        const CgCall *c = &P->calls[i];
        if (g->comp[c->caller] == g->comp[c->callee])
            continue;
        cg_call_costs(P, c, cost);
        for (k = 0; k < P->nev; k++) {
            const CgStr *ev = &P->events[k];
            const CgStr *callee = &P->names[CG_FN].str[P->funcs[c->callee].name];
            const CgStr *caller = &P->names[CG_FN].str[P->funcs[c->caller].name];
            int64_t bound = part_bound[(size_t)c->part * P->stride + k];
            if (cost[k] <= bound || bound < 0)
                continue;
            rc = calls_warning(L, (size_t)c->caller,
                               call_line_above(P, (size_t)c->caller, c->part,
                                               k, bound),
                               "calls from '%.*s' to '%.*s' "
                               "cost %lld %.*s, more than their part in all "
                               "(%lld): callgrind never writes that, a calls= "
                               "cost was changed",
                               (int)(caller->len > 60 ? 60 : caller->len),
                               caller->ptr,
                               (int)(callee->len > 60 ? 60 : callee->len),
                               callee->ptr, (long long)cost[k],
                               (int)(ev->len > 40 ? 40 : ev->len), ev->ptr,
                               (long long)bound);
            i = P->ncalls;
            break;
        }
    }
    for (f = 0; f < P->nfuncs && !rc; f++) {
        for (k = 0; k < P->nev; k++) {
            int64_t b = g->b[f * P->stride + k];
            const CgStr *ev = &P->events[k];
            if (b <= total[k] || total[k] < 0)
                continue;
            const CgStr *name = &P->names[CG_FN].str[P->funcs[f].name];
            rc = calls_warning(L, f, 0, "'%.*s' costs %lld %.*s with its "
                               "calls out, more than the whole profile "
                               "(%lld): callgrind never writes that, a "
                               "calls= cost was changed",
                               (int)(name->len > 60 ? 60 : name->len),
                               name->ptr, (long long)b,
                               (int)(ev->len > 40 ? 40 : ev->len), ev->ptr,
                               (long long)total[k]);
            f = P->nfuncs;
            break;
        }
    }
    free(part_bound);
    return rc;
}

/* ---- the entry points ---- */

/* Loads every text of P; frees P on failure. */
static int run(CgProfile **out, CgProfile *P, const CgLoadOpts *opts,
               CgError *err)
{
    CgLoader *L = calloc(1, sizeof *L);
    uint32_t i;
    int rc = CG_OK;
    if (!L) {
        cg_profile_free(P);
        return cg_error_nomem(err);
    }
    L->P = P;
    L->err = err;
    L->opts = opts;
    L->lenient = (opts->options & CG_LENIENT) != 0;
    L->vec = !opts->scalar && cg_vec_usable();
    L->unspecified = -1;
    for (i = 0; !rc && i < P->ntexts; i++) {
        rc = begin_text(L, i);
        if (!rc)
            rc = cg_ld_read_text(L);
        if (!rc)
            rc = end_text(L);
        L->before += P->texts[i].len;
    }
    if (!rc)
        rc = cg_ld_end_part(L);
    if (!rc && cg_model_name_orphans(P, L->name) != CG_OK)
        rc = cg_ld_nomem(L);
    for (i = 0; i < CG_NKINDS; i++)
        cg_names_free_ids(&P->names[i]);    /* ids are per file */
    if (!rc)
        rc = cg_model_finish(P, err);
    if (!rc && L->any_callgrind)
        rc = check_calls(L);
    if (!rc && opts->progress && opts->progress(opts->ud, P->len, P->len))
        rc = cg_ld_cancelled(L);
    if (rc == CG_ENOMEM)
        cg_ld_nomem(L);
    cg_names_free(&L->evnames);
    free(L->last_func);
    free(L);
    if (rc) {
        cg_profile_free(P);
        return rc;
    }
    if (!P->version)
        P->version = 2;          /* none written: version 1 */
    P->version -= 1;
    *out = P;
    return CG_OK;
}

int cg_load_text(CgProfile **out, const char *buf, size_t len,
                 const char *name, const CgLoadOpts *opts, CgError *err)
{
    CgProfile *P;
    *out = NULL;
    memset(err, 0, sizeof *err);
    if (opts->max_bytes && len > opts->max_bytes) {   /* as cg_source.c */
        err->status = CG_ELIMIT;
        snprintf(err->msg, sizeof err->msg, "%s: size exceeds %llu bytes "
                 "(opts.max_bytes)", name,
                 (unsigned long long)opts->max_bytes);
        return CG_ELIMIT;
    }
    P = cg_model_new(name);
    if (!P || cg_model_add_text(P, buf, len, NULL, NULL, name) != 0) {
        cg_profile_free(P);
        return cg_error_nomem(err);
    }
    return run(out, P, opts, err);
}

int cg_load(CgProfile **out, const char *buf, size_t len, const char *name,
            int options, CgError *err)
{
    CgLoadOpts opts;
    memset(&opts, 0, sizeof opts);
    opts.options = options;
    return cg_load_text(out, buf, len, name, &opts, err);
}

int cg_load_files(CgProfile **out, const char *const *paths, size_t n,
                  const CgLoadOpts *opts, CgError *err)
{
    CgProfile *P;
    size_t i;
    /* a file read with two threads is read in part, and the rest by the
     * load's worker thread while the loader starts (read_text) */
    size_t defer = cg_ld_two_threads_from(opts);
    *out = NULL;
    memset(err, 0, sizeof *err);
    if (!(P = cg_model_new(n ? paths[0] : "(no file)")))
        return cg_error_nomem(err);
    for (i = 0; i < n; i++) {
        const char *buf;
        size_t len;
        CgSource *src;
        int rc = cg_source_open(paths[i], defer, opts, &src, &buf, &len,
                                err);
        if (rc) {
            cg_profile_free(P);
            return rc;
        }
        if (cg_model_add_text(P, buf, len, src, cg_source_release,
                              paths[i]) != 0) {
            cg_source_release(src);
            cg_profile_free(P);
            return cg_error_nomem(err);
        }
    }
    return run(out, P, opts, err);
}

int cg_load_file(CgProfile **out, const char *path, int options,
                 CgError *err)
{
    CgLoadOpts opts;
    memset(&opts, 0, sizeof opts);
    opts.options = options;
    return cg_load_files(out, &path, 1, &opts, err);
}

int cg_load_vector_paths(void)
{
    return cg_vec_usable();
}
