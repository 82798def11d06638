/* The loader: one pass over the bytes, line by line, building the model of
 * cg_profile.h. Every handler checks its whole line before it changes any
 * state, so a line skipped in lenient mode leaves no trace. */
#include "cg_load.h"
#include "cg_mem.h"
#include "cg_model.h"
#include "cg_prescan.h"
#include "cg_scan.h"
#include "cg_source.h"
#include "cg_vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNSPECIFIED "<unspecified>"

typedef struct Loader {
    CgProfile *P;
    CgError *err;
    const CgLoadOpts *opts;
    int lenient;
    int vec;                     /* cost lines of CG_VEC_MIN_EVENTS or
                                    more may take the vector path */
    int fatal;                   /* the error may not be skipped */
    uint64_t lineno;
    const char *line;            /* start of the current line */

    uint32_t text;               /* the file being read: P->texts */
    const char *buf;             /* its bytes */
    size_t len;
    const char *name;            /* its name, for messages */
    int file_events;             /* an events: line in this file */
    uint64_t before;             /* bytes of the files before this one */
    const char *mark;            /* where report() is next due: the
                                    first of these two */
    const char *report_at;       /* where progress is next reported */

    size_t part;                 /* index of the current part */
    int touched;                 /* any header or body line in the part */
    int body;                    /* body lines seen in the part */
    uint64_t events_line, positions_line;
    uint64_t base[CG_MAX_POSITIONS];

    int32_t ob, fl, lfile;       /* names in force */
    int32_t fn_obj, fn_file, fn_name;   /* key of the current fn= */
    int32_t func;                /* its function, -1 until it has content */
    int fi_pending;              /* fi=/fe= since the last content line */

    int32_t cob, cfi, cfn;       /* call target being named */
    int call_pending;
    uint64_t call_line;
    CgCall call;
    CgCallSite site;
    int skip_cost;               /* lenient: drop the cost line of a bad
                                    calls=/jump= line */
    uint64_t skip_line;

    int32_t jfile, jfn_name, jfunc;
    int jump_pending;
    uint64_t jump_line;

    int block_open;
    int callgrind;               /* creator: callgrind..., which ends every
                                    part with totals: ("# callgrind format"
                                    alone is no sign: the format's own
                                    examples start so and have none) */
    int written;                 /* starts with CG_WRITTEN_HEAD: every part
                                    ends with totals:, the file with
                                    CG_WRITTEN_END */
    int32_t unspecified;
    int32_t *last_func;          /* function name index -> the function
                                    last found with it, or -1: most names
                                    have one function, found without the
                                    key table */
    size_t last_func_cap;
    CgNames evnames;             /* P->events hashed, same indices */
    int64_t cost[CG_MAX_EVENTS];
    int64_t row[CG_MAX_EVENTS];  /* a call's costs in profile event order;
                                    a cost line's new part sums */
    int64_t self_row[CG_MAX_EVENTS]; /* a cost line's new self costs */
    int any_done;                /* done[] has a non-zero sum */
    int64_t done[CG_MAX_EVENTS]; /* per profile event: the sum of the parts
                                    before this one (prof:totals() adds
                                    parts in order: no prefix may
                                    overflow) */
    uint64_t made;               /* bytes of composite names built, kept
                                    or not (CG_MADE_RATIO) */
} Loader;

/* ---- messages ---- */

/* Writes s quoted for a message: at most 60 bytes, non-printables as
 * \xHH. */
static void quote(char *out, size_t outsz, const char *s, size_t len)
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

static int vfail(Loader *L, uint64_t line, const char *fmt, va_list ap)
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

static int fail(Loader *L, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = vfail(L, L->lineno, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_at(Loader *L, uint64_t line, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = vfail(L, line, fmt, ap);
    va_end(ap);
    return rc;
}

static int nomem(Loader *L)
{
    cg_error_nomem(L->err);
    L->err->line = L->lineno;
    return CG_ENOMEM;
}

static int add_warning_text(Loader *L, int kind, const char *text)
{
    return cg_model_warn_text(L->P, kind, text) ? nomem(L) : CG_OK;
}

/* A warning of a kind (CG_W_*) about line `line`, same shape as an
 * error. */
static int warn_at(Loader *L, int kind, uint64_t line, const char *fmt, ...)
{
    CgError tmp, *keep = L->err;
    va_list ap;
    L->err = &tmp;
    va_start(ap, fmt);
    vfail(L, line, fmt, ap);
    va_end(ap);
    L->err = keep;
    return add_warning_text(L, kind, tmp.msg);
}

static int lex_fail(Loader *L, int why, const char *tok, const char *e,
                    const char *what)
{
    char q[300];
    const char *te = cg_token_end(tok, e);
    if (te == tok && why == CG_LEX_BADNUM)
        return fail(L, "expected a number for %s, found nothing", what);
    quote(q, sizeof q, tok, (size_t)(te - tok));
    switch (why) {
    case CG_LEX_OVERFLOW:
        return fail(L, "%s %s does not fit in 64 bits", what, q);
    case CG_LEX_BELOW:
        return fail(L, "%s %s goes below 0", what, q);
    case CG_LEX_RELCOST:
        return fail(L, "%s is %s: costs cannot be relative, only positions",
                    what, q);
    default:
        return fail(L, "expected a number for %s, found %s", what, q);
    }
}

/* ---- names ---- */

static int32_t intern(Loader *L, int kind, const char *s, size_t len)
{
    return cg_names_intern(&L->P->names[kind], s, len);
}

static const char *kind_key(int kind)
{
    return kind == CG_OBJ ? "ob" : kind == CG_FILE ? "fl" : "fn";
}

/* Scans "(N)" at s; returns the end past ')' or NULL when s is not one. */
static const char *scan_id(const char *s, const char *e, uint64_t *id,
                           int *big)
{
    uint64_t v = 0;
    const char *p = s + 1;
    *big = 0;
    if (s >= e || *s != '(' || p >= e || *p < '0' || *p > '9')
        return NULL;
    while (p < e && *p >= '0' && *p <= '9') {
        if (v > CG_MAX_ID)
            *big = 1;
        else
            v = v * 10 + (uint64_t)(*p - '0');
        p++;
    }
    if (p >= e || *p != ')')
        return NULL;
    if (v > CG_MAX_ID)
        *big = 1;
    *id = v;
    return p + 1;
}

/* Is s..e made of two or more "(N)" joined by '\'' (--compress-mangled)? */
static int is_composite(const char *s, const char *e)
{
    return cg_names_is_composite(s, e);
}

/* The bytes of composite names a load may build: CG_MADE_RATIO times the
 * bytes of its input, plus CG_MADE_MIN. */
#define CG_MADE_RATIO 16
#define CG_MADE_MIN (16 << 20)

/* Resolves a composite name into a new string in the arena. */
static int composite(Loader *L, int kind, const char *s, const char *e,
                     int32_t *out)
{
    CgProfile *P = L->P;
    const CgNames *t = &P->names[kind];
    size_t len = 0;
    const char *p;
    char *buf = NULL, *w = NULL;
    uint64_t id;
    int big, pass;
    for (pass = 0; pass < 2; pass++) {
        p = s;
        w = pass ? buf : NULL;
        for (;;) {
            const char *q = scan_id(p, e, &id, &big);
            int32_t idx = big ? -1 : cg_names_get_id(t, id);
            if (big)
                return fail(L, "id %.*s is above the limit %d", (int)(q - p),
                            p, CG_MAX_ID);
            if (idx < 0 || !t->str[idx].ptr) {
                char qq[300];
                quote(qq, sizeof qq, p, (size_t)(q - p));
                return fail(L, "%s=%s used before it is defined",
                            kind_key(kind), qq);
            }
            if (pass) {
                memcpy(w, t->str[idx].ptr, t->str[idx].len);
                w += t->str[idx].len;
                if (q < e)
                    *w++ = '\'';
            } else {
                len += t->str[idx].len + 1;
            }
            if (q == e)
                break;
            p = q + 1;
        }
        if (!pass) {
            uint64_t bound = (uint64_t)P->len * CG_MADE_RATIO + CG_MADE_MIN;
            if (len > CG_MAX_NAME)
                return fail(L, "name longer than %d bytes", CG_MAX_NAME);
            /* names built of names can double at each line: bounded, the
             * memory and the time they take stay linear in the input */
            if ((L->made += len) > bound) {
                fail(L, "names made up of compressed ids (%s=(1)'(2)) "
                     "exceed %llu bytes (%d times the input, plus %d MiB)",
                     kind_key(kind), (unsigned long long)bound,
                     CG_MADE_RATIO, CG_MADE_MIN >> 20);
                L->err->status = CG_ELIMIT;
                L->fatal = 1;
                return CG_ELIMIT;
            }
            if (CG_GROW(P->arena, P->arena_cap, P->narena + 1) != 0 ||
                !(buf = malloc(len)))
                return nomem(L);
            P->arena[P->narena++] = buf;
            P->arena_bytes += len;
        }
    }
    /* A composite written again (no (N) to name it) keeps its first copy:
     * the arena grows with distinct names, not with their occurrences. */
    if ((*out = cg_names_find(t, buf, (size_t)(w - buf))) >= 0) {
        P->arena_bytes -= len;
        free(P->arena[--P->narena]);
        return CG_OK;
    }
    *out = intern(L, kind, buf, (size_t)(w - buf));
    return *out < 0 ? nomem(L) : CG_OK;
}

/* Reads the value of a name line: "(N) name", "(N)", a composite or a plain
 * name. The key is only for messages. */
static int read_name(Loader *L, int kind, const char *key, const char *s,
                     const char *e, int32_t *out)
{
    CgNames *t = &L->P->names[kind];
    uint64_t id;
    int big;
    const char *q;
    s = cg_skip_blanks(s, e);
    while (e > s && cg_is_blank(e[-1]))
        e--;
    if ((size_t)(e - s) > CG_MAX_NAME)
        return fail(L, "name longer than %d bytes", CG_MAX_NAME);
    q = scan_id(s, e, &id, &big);
    if (q && (q == e || *q != '\'')) {
        const char *nm = cg_skip_blanks(q, e);
        int32_t idx, old;
        if (big)
            return fail(L, "id %.*s is above the limit %d", (int)(q - s), s,
                        CG_MAX_ID);
        if (nm == e) {
            idx = cg_names_get_id(t, id);
            /* a forward reference: resolved by its definition later */
            if (idx < 0 && (idx = cg_names_placeholder(t, id,
                                                       L->lineno)) < 0)
                return nomem(L);
            *out = idx;
            return CG_OK;
        }
        if (is_composite(nm, e)) {
            int rc = composite(L, kind, nm, e, &idx);
            if (rc)
                return rc;
        } else {
            idx = intern(L, kind, nm, (size_t)(e - nm));
            if (idx < 0)
                return nomem(L);
        }
        if (cg_names_set_id(t, id, idx, &old) != 0)
            return nomem(L);
        if (old >= 0 && !t->str[old].ptr) {
            if (t->alias[old] < 0) {
                t->alias[old] = idx;     /* the forward reference's name */
                old = -1;
            } else {
                old = t->alias[old];
            }
        }
        if (old >= 0 && old != idx) {
            int rc = warn_at(L, CG_W_NAME, L->lineno,
                             "%s=(%llu) redefined from '%.*s' to '%.*s'", key,
                             (unsigned long long)id, (int)t->str[old].len,
                             t->str[old].ptr, (int)t->str[idx].len,
                             t->str[idx].ptr);
            if (rc)
                return rc;
        }
        *out = idx;
        return CG_OK;
    }
    if (q && is_composite(s, e))
        return composite(L, kind, s, e, out);
    *out = intern(L, kind, s, (size_t)(e - s));
    return *out < 0 ? nomem(L) : CG_OK;
}

/* ---- functions ---- */

static int get_func(Loader *L, int32_t obj, int32_t file, int32_t name,
                    uint32_t flags, int32_t *out)
{
    CgProfile *P = L->P;
    CgFuncKey key;
    int32_t f = (size_t)name < L->last_func_cap ? L->last_func[name] : -1;
    key.obj = obj;
    key.file = file;
    key.name = name;
    if (f < 0 || P->funcs[f].obj != obj || P->funcs[f].file != file) {
        size_t cap = L->last_func_cap;
        f = cg_ftab_find(&P->ftab, P->funcs, sizeof *P->funcs, key);
        if ((size_t)name >= cap) {
            if (CG_GROW(L->last_func, L->last_func_cap, (size_t)name + 1))
                return nomem(L);
            memset(L->last_func + cap, 0xff,
                   (L->last_func_cap - cap) * sizeof *L->last_func);
        }
    }
    if (f < 0) {
        CgFunc *fn;
        if (P->nfuncs >= CG_MAX_FUNCS)
            return fail(L, "more than %d functions", CG_MAX_FUNCS);
        if (CG_BIG_GROW(P->funcs, P->funcs_cap, P->nfuncs + 1,
                        cg_model_expect(P, P->nfuncs + 1)) != 0 ||
            cg_model_reserve_self(P, P->nfuncs + 1) != 0)
            return nomem(L);
        fn = &P->funcs[P->nfuncs];
        memset(fn, 0, sizeof *fn);
        fn->obj = obj;
        fn->file = file;
        fn->name = name;
        if (cg_ftab_add(&P->ftab, P->funcs, sizeof *P->funcs, key,
                        (uint32_t)P->nfuncs) != 0)
            return nomem(L);
        memset(P->self + P->nfuncs * P->stride, 0,
               P->stride * sizeof *P->self);
        f = (int32_t)P->nfuncs++;
        fn->flags = flags;
    } else if (flags & CG_FN_BODY) {
        P->funcs[f].flags |= CG_FN_BODY;
    } else if (!(flags & CG_FN_IMPLICIT)) {
        P->funcs[f].flags &= ~(uint32_t)CG_FN_IMPLICIT;
    }
    L->last_func[name] = f;
    *out = f;
    return CG_OK;
}

/* The function that the current line's costs belong to. */
static int current_func(Loader *L)
{
    int32_t name = L->fn_name;
    if (L->func >= 0)
        return CG_OK;
    if (name < 0) {
        if (L->unspecified < 0) {
            L->unspecified = intern(L, CG_FN, UNSPECIFIED,
                                    sizeof UNSPECIFIED - 1);
            if (L->unspecified < 0)
                return nomem(L);
        }
        name = L->unspecified;
    }
    return get_func(L, L->fn_obj, L->fn_file, name, CG_FN_BODY, &L->func);
}

/* ---- blocks ---- */

static void close_block(Loader *L, const char *at)
{
    if (L->block_open) {
        L->P->blocks[L->P->nblocks - 1].end = (size_t)(at - L->buf);
        L->block_open = 0;
    }
}

static int open_block(Loader *L)
{
    CgProfile *P = L->P;
    const CgPart *pt = &P->parts[L->part];
    CgBlock *b;
    int k;
    if (L->block_open)
        return CG_OK;
    if (L->jfn_name >= 0 && L->jfunc < 0) {
        int rc = get_func(L, L->ob, L->jfile >= 0 ? L->jfile : L->lfile,
                          L->jfn_name, 0, &L->jfunc);
        if (rc)
            return rc;
    }
    if (P->nblocks >= 0xffffffffu ||
        CG_BIG_GROW(P->blocks, P->blocks_cap, P->nblocks + 1,
                    cg_model_expect(P, P->nblocks + 1)) != 0 ||
        CG_BIG_GROW(P->bases, P->bases_cap, P->nbases + (size_t)pt->npos,
                    cg_model_expect(P, P->nbases + (size_t)pt->npos)) != 0)
        return nomem(L);
    b = &P->blocks[P->nblocks++];
    b->start = (size_t)(L->line - L->buf);
    b->end = b->start;
    b->func = L->func;
    b->lfile = L->lfile;
    b->jfile = L->jfile;
    b->jfunc = L->jfunc;
    b->part = (uint32_t)L->part;
    b->base = (uint32_t)P->nbases;
    for (k = 0; k < pt->npos; k++)
        P->bases[P->nbases++] = L->base[k];
    L->block_open = 1;
    return CG_OK;
}

/* ---- parts ---- */

static int check_sums(Loader *L, const CgPart *pt, const int64_t *written,
                      uint64_t line, const char *what, int kind)
{
    const CgProfile *P = L->P;
    char buf[400];
    size_t o = 0;
    int j, bad = 0;
    if (!written)
        return CG_OK;
    buf[0] = 0;
    for (j = 0; j < pt->nev; j++) {
        if (written[j] != pt->sum[j]) {
            const CgStr *ev = &P->events[pt->evmap[j]];
            int n;
            if (bad++ >= 4)
                continue;
            n = snprintf(buf + o, sizeof buf - o, "%s%.*s %lld written, %lld "
                         "summed", o ? ", " : "", (int)(ev->len > 40 ? 40 :
                         ev->len), ev->ptr, (long long)written[j],
                         (long long)pt->sum[j]);
            if (n > 0 && (size_t)n < sizeof buf - o)
                o += (size_t)n;
        }
    }
    if (!bad)
        return CG_OK;
    return warn_at(L, kind, line, "%s does not match the cost "
                   "lines: %s%s", what, buf, bad > 4 ? ", ..." : "");
}

static int end_part(Loader *L)
{
    const CgPart *pt = &L->P->parts[L->part];
    /* totals: is the sum of the part's cost lines by definition (summary:
     * may count more): lines lost or added */
    int rc = check_sums(L, pt, pt->totals, pt->totals_line, "totals:",
                        CG_W_LOST);
    if (!rc)
        rc = check_sums(L, pt, pt->summary, pt->summary_line, "summary:",
                        CG_W_MISMATCH);
    return rc;
}

/* Starts a part. inherit: copy positions, events, pid, thread and cmd of
 * the previous part (a new dump of the same run). */
static int new_part(Loader *L, int inherit)
{
    CgProfile *P = L->P;
    CgPart *pt, *prev;
    int k;
    if (P->nparts) {
        const CgPart *old = &P->parts[L->part];
        int rc = end_part(L);
        if (rc)
            return rc;
        /* cannot overflow: cost_line checked done + sum */
        for (k = 0; k < old->nev; k++) {
            L->done[old->evmap[k]] += old->sum[k];
            L->any_done |= old->sum[k] != 0;
        }
    }
    if (P->nparts >= CG_MAX_PARTS)
        return fail(L, "more than %d parts", CG_MAX_PARTS);
    if (CG_GROW(P->parts, P->parts_cap, P->nparts + 1) != 0)
        return nomem(L);
    pt = &P->parts[P->nparts];
    memset(pt, 0, sizeof *pt);
    pt->npos = 1;
    pt->poskind[0] = CG_POS_LINE;
    pt->posname[0].ptr = "line";
    pt->posname[0].len = 4;
    pt->line = L->lineno;
    pt->text = L->text;
    pt->desc_begin = pt->desc_end = (uint32_t)P->ndescs;
    prev = P->nparts ? &P->parts[P->nparts - 1] : NULL;
    if (prev && inherit) {
        pt->has = prev->has & (CG_PART_PID | CG_PART_THREAD | CG_PART_CMD);
        pt->pid = prev->pid;
        pt->thread = prev->thread;
        pt->cmd = prev->cmd;
        pt->npos = prev->npos;
        memcpy(pt->poskind, prev->poskind, sizeof pt->poskind);
        memcpy(pt->posname, prev->posname, sizeof pt->posname);
        if (prev->nev) {
            pt->evmap = malloc((size_t)prev->nev * sizeof *pt->evmap);
            pt->sum = calloc((size_t)prev->nev, sizeof *pt->sum);
            if (!pt->evmap || !pt->sum) {
                free(pt->evmap);
                free(pt->sum);
                return nomem(L);
            }
            memcpy(pt->evmap, prev->evmap,
                   (size_t)prev->nev * sizeof *pt->evmap);
            pt->nev = prev->nev;
        }
    }
    L->part = P->nparts++;
    L->touched = L->body = 0;
    L->events_line = L->positions_line = 0;
    for (k = 0; k < CG_MAX_POSITIONS; k++)
        L->base[k] = 0;
    return CG_OK;
}

/* A header line that opens a new part when it follows body lines. */
static int part_header(Loader *L)
{
    int rc = CG_OK;
    if (L->body) {
        close_block(L, L->line);
        rc = new_part(L, 1);
    }
    L->touched = 1;
    return rc;
}

/* ---- header lines ---- */

static int read_int(Loader *L, const char *s, const char *e, int64_t *out,
                    const char *what)
{
    uint64_t v;
    int why = 0;
    const char *q;
    s = cg_skip_blanks(s, e);
    if (s == e)
        return fail(L, "expected a number for %s, found nothing", what);
    q = cg_scan_u64(s, e, &v, &why);
    if (q && cg_skip_blanks(q, e) != e) {
        /* quote all of it: the first token alone is a good number */
        char qq[300];
        while (cg_is_blank(e[-1]))
            e--;
        quote(qq, sizeof qq, s, (size_t)(e - s));
        return fail(L, "expected a number for %s, found %s", what, qq);
    }
    if (!q || v > (uint64_t)INT64_MAX) {
        if (q)
            why = CG_LEX_OVERFLOW;
        return lex_fail(L, why, s, e, what);
    }
    *out = (int64_t)v;
    return CG_OK;
}

static int hdr_version(Loader *L, const char *s, const char *e)
{
    uint64_t major = 0;
    const char *p = cg_skip_blanks(s, e), *q = p;
    while (q < e && *q >= '0' && *q <= '9') {
        if (major < 1000000)
            major = major * 10 + (uint64_t)(*q - '0');
        q++;
    }
    if (q == p || (q < e && *q != '.' && !cg_is_blank(*q))) {
        char qq[300];
        quote(qq, sizeof qq, p, (size_t)(e - p));
        L->fatal = 1;
        return fail(L, "expected a version number, found %s", qq);
    }
    if (major > 1) {
        L->fatal = 1;
        return fail(L, "version %.*s is not supported (this reader knows "
                    "versions 0 and 1)", (int)(cg_token_end(p, e) - p), p);
    }
    if (!L->P->version)
        L->P->version = (int)major + 1;  /* stored +1: 0 means unset */
    return CG_OK;
}

static int hdr_positions(Loader *L, const char *s, const char *e)
{
    CgPart *pt;
    uint8_t kind[CG_MAX_POSITIONS];
    CgStr name[CG_MAX_POSITIONS];
    int n = 0, k, rc;
    /* After body lines this line starts a new part (part_header below),
     * where it is the first positions:. */
    if (L->positions_line && !L->body)
        return fail(L, "positions: given twice in one part (first at line "
                    "%llu)", (unsigned long long)L->positions_line);
    for (s = cg_skip_blanks(s, e); s < e; s = cg_skip_blanks(s, e)) {
        const char *q = cg_token_end(s, e);
        size_t len = (size_t)(q - s);
        if (n == CG_MAX_POSITIONS)
            return fail(L, "positions: lists more than %d columns",
                        CG_MAX_POSITIONS);
        if ((len == 5 && !memcmp(s, "instr", 5)) ||
            (len == 4 && !memcmp(s, "addr", 4)))
            kind[n] = CG_POS_INSTR;
        else if (len == 2 && !memcmp(s, "bb", 2))
            kind[n] = CG_POS_BB;
        else if (len == 4 && !memcmp(s, "line", 4))
            kind[n] = CG_POS_LINE;
        else
            kind[n] = CG_POS_OTHER;
        name[n].ptr = s;
        name[n].len = len;
        for (k = 0; k < n; k++)
            if (kind[n] != CG_POS_OTHER && kind[k] == kind[n])
                return fail(L, "positions: lists '%.*s' twice", (int)len, s);
        n++;
        s = q;
    }
    /* Only a good line may start a part: a skipped one (lenient) must not
     * reset the relative positions' base. */
    if ((rc = part_header(L)) != 0)
        return rc;
    pt = &L->P->parts[L->part];
    pt->npos = n;
    memcpy(pt->poskind, kind, (size_t)n);
    memcpy(pt->posname, name, (size_t)n * sizeof *name);
    L->positions_line = L->lineno;
    return CG_OK;
}

static int hdr_events(Loader *L, const char *s, const char *e)
{
    CgProfile *P = L->P;
    CgPart *pt;
    CgNames seen;                /* this line's names: one written twice */
    uint32_t *map;
    int64_t *sum;
    int n = 0, rc = CG_OK;
    size_t fresh = 0;
    const char *p;
    /* After body lines this line starts a new part (part_header below),
     * where it is the first events:. */
    if (L->events_line && !L->body)
        return fail(L, "events: given twice in one part (first at line "
                    "%llu)", (unsigned long long)L->events_line);
    for (p = cg_skip_blanks(s, e); p < e; p = cg_skip_blanks(p, e)) {
        p = cg_token_end(p, e);
        if (++n > CG_MAX_EVENTS)
            return fail(L, "events: lists more than %d events",
                        CG_MAX_EVENTS);
    }
    if (!n)
        return fail(L, "events: lists no event");
    /* The whole line is checked before anything changes (lenient mode
     * skips it without a trace). Lookups are hashed: many parts with long
     * events: lines must not take quadratic time. */
    memset(&seen, 0, sizeof seen);
    for (p = cg_skip_blanks(s, e); p < e && !rc; p = cg_skip_blanks(p, e)) {
        const char *q = cg_token_end(p, e);
        size_t len = (size_t)(q - p);
        if (cg_names_find(&seen, p, len) >= 0)
            rc = fail(L, "events: lists '%.*s' twice",
                      (int)(len > 60 ? 60 : len), p);
        else if (cg_names_intern(&seen, p, len) < 0)
            rc = nomem(L);
        else if (cg_names_find(&L->evnames, p, len) < 0)
            fresh++;
        p = q;
    }
    cg_names_free(&seen);
    if (rc)
        return rc;
    /* Cost vectors are dense (functions x events): the union of all parts'
     * events has the same limit as one line. */
    if (P->nev + fresh > CG_MAX_EVENTS)
        return fail(L, "events: brings the profile to more than %d distinct "
                    "events", CG_MAX_EVENTS);
    if ((rc = part_header(L)) != 0)
        return rc;
    pt = &P->parts[L->part];
    map = malloc((size_t)n * sizeof *map);
    sum = calloc((size_t)n, sizeof *sum);
    if (!map || !sum) {
        free(map);
        free(sum);
        return nomem(L);
    }
    n = 0;
    for (p = cg_skip_blanks(s, e); p < e; p = cg_skip_blanks(p, e)) {
        const char *q = cg_token_end(p, e);
        int32_t idx = cg_names_find(&L->evnames, p, (size_t)(q - p));
        if (idx < 0) {
            /* evnames and P->events grow together: same indices */
            if (cg_model_add_event(P, p, (size_t)(q - p)) != 0 ||
                (idx = cg_names_intern(&L->evnames, p,
                                       (size_t)(q - p))) < 0) {
                free(map);
                free(sum);
                return nomem(L);
            }
        }
        map[n++] = (uint32_t)idx;
        p = q;
    }
    free(pt->evmap);
    free(pt->sum);
    pt->evmap = map;
    pt->sum = sum;
    pt->nev = n;
    L->file_events = 1;
    /* summary:/totals: of an inherited event list no longer apply. */
    free(pt->summary);
    free(pt->totals);
    pt->summary = pt->totals = NULL;
    L->events_line = L->lineno;
    return CG_OK;
}

static int hdr_event(Loader *L, const char *s, const char *e)
{
    CgProfile *P = L->P;
    CgEventDef d;
    const char *p = cg_skip_blanks(s, e), *q = p, *f;
    memset(&d, 0, sizeof d);
    while (q < e && !cg_is_blank(*q) && *q != '=' && *q != ':')
        q++;
    if (q == p)
        return fail(L, "event: line names no event");
    d.name.ptr = p;
    d.name.len = (size_t)(q - p);
    d.line = L->lineno;
    q = cg_skip_blanks(q, e);
    if (q < e && *q == '=') {
        f = cg_skip_blanks(q + 1, e);
        q = f;
        while (q < e && *q != ':')
            q++;
        d.formula.ptr = f;
        d.formula.len = (size_t)(q - f);
        while (d.formula.len && cg_is_blank(f[d.formula.len - 1]))
            d.formula.len--;
        if (!d.formula.len)
            return fail(L, "event: %.*s has '=' but no formula",
                        (int)d.name.len, d.name.ptr);
    }
    if (q < e && *q == ':') {
        const char *ln = cg_skip_blanks(q + 1, e), *le = e;
        while (le > ln && cg_is_blank(le[-1]))
            le--;
        d.long_name.ptr = ln;
        d.long_name.len = (size_t)(le - ln);
    } else if (q < e) {
        char qq[300];
        quote(qq, sizeof qq, q, (size_t)(e - q));
        return fail(L, "expected '=' or ':' after the event name, found %s",
                    qq);
    }
    if (CG_GROW(P->event_defs, P->event_defs_cap, P->nevent_defs + 1) != 0)
        return nomem(L);
    P->event_defs[P->nevent_defs++] = d;
    return CG_OK;
}

static int hdr_costs(Loader *L, const char *s, const char *e, int totals)
{
    CgPart *pt = &L->P->parts[L->part];
    const char *what = totals ? "totals:" : "summary:";
    int64_t **slot = totals ? &pt->totals : &pt->summary;
    int n = 0, why = 0;
    int64_t *v;
    if (!pt->nev)
        return fail(L, "%s before any events: line", what);
    for (s = cg_skip_blanks(s, e); s < e; s = cg_skip_blanks(s, e)) {
        const char *q;
        if (n == pt->nev) {
            int extra = 0;
            for (; s < e; s = cg_skip_blanks(s, e), extra++)
                s = cg_token_end(s, e);
            return fail(L, "%s has %d values but events: lists %d", what,
                        n + extra, pt->nev);
        }
        q = cg_scan_cost(s, e, &L->cost[n], &why);
        if (!q)
            return lex_fail(L, why, s, e, what);
        n++;
        s = q;
    }
    if (*slot) {
        int rc = warn_at(L, CG_W_SKIPPED, L->lineno, "%s given twice in one "
                         "part; the later one is kept", what);
        if (rc)
            return rc;
        v = *slot;
    } else if (!(v = malloc((size_t)pt->nev * sizeof *v))) {
        return nomem(L);
    }
    memcpy(v, L->cost, (size_t)n * sizeof *v);
    memset(v + n, 0, (size_t)(pt->nev - n) * sizeof *v);
    *slot = v;
    if (totals)
        pt->totals_line = L->lineno;
    else
        pt->summary_line = L->lineno;
    return CG_OK;
}

static int hdr_desc(Loader *L, const char *s, const char *e)
{
    CgProfile *P = L->P;
    CgDesc d;
    const char *p = cg_skip_blanks(s, e), *c = p, *te;
    while (c < e && *c != ':')
        c++;
    te = c;
    while (te > p && cg_is_blank(te[-1]))
        te--;
    d.type.ptr = p;
    d.type.len = (size_t)(te - p);
    d.value.ptr = c < e ? cg_skip_blanks(c + 1, e) : e;
    d.value.len = (size_t)(e - d.value.ptr);
    if (CG_GROW(P->descs, P->descs_cap, P->ndescs + 1) != 0)
        return nomem(L);
    P->descs[P->ndescs++] = d;
    P->parts[L->part].desc_end = (uint32_t)P->ndescs;
    return CG_OK;
}

/* ---- body lines ---- */

/* Scans the positions and costs of a cost line into pos[] and L->cost[];
 * *ncost receives how many costs were written. */
static int scan_cost_line(Loader *L, const char *s, const char *e,
                          uint64_t *pos, int *ncost)
{
    const CgPart *pt = &L->P->parts[L->part];
    CgScanFail f;
    char what[80];
    switch (cg_scan_costs(s, e, pt->npos, L->base, pos, L->cost, pt->nev,
                          ncost, &f)) {
    case CG_SCAN_OK:
        return CG_OK;
    case CG_SCAN_FEWPOS:
        return fail(L, "cost line has %d position%s but positions: lists %d",
                    f.col, f.col == 1 ? "" : "s", pt->npos);
    case CG_SCAN_POS:
        snprintf(what, sizeof what, "position '%.*s'",
                 (int)(pt->posname[f.col].len > 40 ? 40 :
                       pt->posname[f.col].len),
                 pt->posname[f.col].ptr ? pt->posname[f.col].ptr : "line");
        return lex_fail(L, f.why, f.at, e, what);
    case CG_SCAN_MANY:
        if (!pt->nev)
            return fail(L, "cost line before any events: line");
        return fail(L, "cost line has %d costs but events: lists %d", f.col,
                    pt->nev);
    default:
        snprintf(what, sizeof what, "cost %d", f.col + 1);
        return lex_fail(L, f.why, f.at, e, what);
    }
}

/* Adds v[0..n) (part columns) to the current part's sums and to self (a
 * function's self costs), every sum checked before any changes. Returns
 * -1, or the profile event whose sum does not fit in 64 bits (nothing
 * changed then). */
static int add_self(Loader *L, int64_t *self, const int64_t *v, int n)
{
    CgPart *pt = &L->P->parts[L->part];
    int j;
    /* the new sums kept in L->row (part) and L->self_row (self) until
     * all are known to fit */
    for (j = 0; j < n; j++) {
        uint32_t ev = pt->evmap[j];
        int64_t t;
        if (__builtin_add_overflow(pt->sum[j], v[j], &L->row[j]) ||
            (L->any_done &&
             __builtin_add_overflow(L->done[ev], L->row[j], &t)) ||
            __builtin_add_overflow(self[ev], v[j], &L->self_row[j]))
            return (int)ev;
    }
    for (j = 0; j < n; j++) {
        pt->sum[j] = L->row[j];
        self[pt->evmap[j]] = L->self_row[j];
    }
    return -1;
}

/* A scanned cost line: positions pos[], costs L->cost[0..ncost). */
static int cost_record(Loader *L, const uint64_t *pos, int ncost,
                       int skipping)
{
    CgProfile *P = L->P;
    CgPart *pt = &P->parts[L->part];
    int j, rc;
    if (skipping)
        return fail(L, "skipped with the bad line %llu before it",
                    (unsigned long long)L->skip_line);
    if (L->jump_pending) {
        if (ncost)
            return fail(L, "the source line of jump= at line %llu has "
                        "costs", (unsigned long long)L->jump_line);
        L->jump_pending = 0;
    } else if (L->call_pending) {
        CgCall *c = &L->call;
        int32_t k;
        int top = 0;
        for (k = 0; k < pt->npos; k++) {
            if (pt->poskind[k] == CG_POS_INSTR) {
                L->site.addr = pos[k];
                c->flags |= CG_HAS_ADDR;
            } else if (pt->poskind[k] == CG_POS_LINE) {
                L->site.line = pos[k];
                c->flags |= CG_HAS_LINE;
            }
        }
        /* in profile event order; the columns after the last one set
         * are zeros the encoding leaves out */
        for (j = 0; j < ncost; j++)
            if (pt->evmap[j] + 1 > (uint32_t)top)
                top = (int)pt->evmap[j] + 1;
        for (j = 0; j < top; j++)
            L->row[j] = 0;
        for (j = 0; j < ncost; j++)
            L->row[pt->evmap[j]] = L->cost[j];
        if (cg_model_add_call(P, c, &L->site, L->row, (size_t)top) != 0)
            return nomem(L);
        L->call_pending = 0;
    } else {
        int ev;
        if ((rc = current_func(L)) != 0 || (rc = open_block(L)) != 0)
            return rc;
        ev = add_self(L, P->self + (size_t)L->func * P->stride, L->cost,
                      ncost);
        if (ev >= 0)
            return fail(L, "the sum of %.*s costs does not fit in 64 "
                        "bits", (int)P->events[ev].len, P->events[ev].ptr);
    }
    memcpy(L->base, pos, (size_t)pt->npos * sizeof *pos);
    L->fi_pending = 0;
    return CG_OK;
}

static int cost_line(Loader *L, const char *s, const char *e)
{
    uint64_t pos[CG_MAX_POSITIONS];
    int ncost = 0, rc, skipping = L->skip_cost;
    L->touched = L->body = 1;
    L->skip_cost = 0;
    if (!L->P->parts[L->part].nev && !L->jump_pending)
        return fail(L, "cost line before any events: line");
    rc = scan_cost_line(L, s, e, pos, &ncost);
    if (rc)
        return rc;
    return cost_record(L, pos, ncost, skipping);
}

/* Scans the target subpositions of calls=/jump=/jcnd=. */
static int scan_target(Loader *L, const char *s, const char *e,
                       uint64_t *taddr, uint64_t *tline, uint32_t *flags)
{
    const CgPart *pt = &L->P->parts[L->part];
    int why = 0;
    const char *at = s;
    if (!cg_scan_target(s, e, pt->npos, pt->poskind, L->base, taddr, tline,
                        flags, CG_HAS_TADDR, CG_HAS_TLINE, &why, &at))
        return lex_fail(L, why, at, e, "target position");
    return CG_OK;
}

static int calls_line(Loader *L, const char *s, const char *e)
{
    CgCallSite site;
    int32_t callee;
    uint32_t flags = 0;
    int why = 0, rc;
    const char *q;
    int32_t cob = L->cob, cfi = L->cfi, cfn = L->cfn;
    L->touched = L->body = 1;
    L->skip_cost = 1;            /* until this line is known good */
    L->skip_line = L->lineno;
    L->cob = L->cfi = L->cfn = -1;   /* they name this call only */
    if (cfn < 0)
        return fail(L, "calls= without a cfn= line before it");
    s = cg_skip_blanks(s, e);
    memset(&site, 0, sizeof site);
    if (!(q = cg_scan_u64(s, e, &site.count, &why)))
        return lex_fail(L, why, s, e, "the call count");
    if ((rc = scan_target(L, q, e, &site.taddr, &site.tline, &flags)) != 0)
        return rc;
    L->skip_cost = 0;
    if ((rc = current_func(L)) != 0)
        return rc;
    rc = get_func(L, cob >= 0 ? cob : L->ob, cfi >= 0 ? cfi : L->lfile, cfn,
                  cfi >= 0 ? 0 : CG_FN_IMPLICIT, &callee);
    if (rc || (rc = open_block(L)) != 0)
        return rc;
    /* field by field: a struct built in place and copied whole was read
     * back across the narrower stores of its bit-fields, a stall */
    L->call.caller = L->func;
    L->call.callee = callee;
    L->call.file = L->lfile;
    L->call.part = (uint32_t)L->part;
    L->call.flags = flags & 15u;
    L->call.site = 0;
    L->site = site;
    L->call_pending = 1;
    L->call_line = L->lineno;
    L->fi_pending = 0;
    return CG_OK;
}

static int jump_line(Loader *L, const char *s, const char *e, int cond)
{
    uint64_t followed, executed, taddr = 0, tline = 0;
    uint32_t flags = 0;
    int why = 0, rc, second;
    const char *q, *at;
    L->touched = L->body = 1;
    L->skip_cost = 1;
    L->skip_line = L->lineno;
    if (!(q = cg_scan_jump_counts(s, e, cond, &followed, &executed, &why,
                                  &at, &second)))
        return lex_fail(L, why, at, e, second ? "the second jcnd= count"
                                              : "the jump count");
    if ((rc = scan_target(L, q, e, &taddr, &tline, &flags)) != 0)
        return rc;
    L->skip_cost = 0;
    if ((rc = current_func(L)) != 0 || (rc = open_block(L)) != 0)
        return rc;
    L->jump_pending = 1;
    L->jump_line = L->lineno;
    L->jfile = L->jfn_name = L->jfunc = -1;
    L->fi_pending = 0;
    return CG_OK;
}

/* Forgets the function in force (after ob=, fl=, a new part). */
static void end_function(Loader *L)
{
    L->cob = L->cfi = L->cfn = -1;
    L->func = -1;
    L->fn_name = -1;
    L->fn_obj = L->ob;
    L->fn_file = L->fl;
    L->jfile = L->jfn_name = L->jfunc = -1;
}

/* A name line (r->def->names says which kind of name). frfn= only
 * defines its id (FORMAT.md, "Calls and jumps"). */
static int name_line(Loader *L, const CgRec *r)
{
    int32_t idx;
    int rc = read_name(L, r->def->names, r->def->key, r->val, r->e, &idx);
    if (rc || r->kind == CG_K_FRFN)
        return rc;
    L->touched = L->body = 1;
    switch (r->kind) {
    case CG_K_OB:
        close_block(L, L->line);
        L->ob = idx;
        end_function(L);
        break;
    case CG_K_FL:
        close_block(L, L->line);
        L->fl = L->lfile = idx;
        L->fi_pending = 0;
        end_function(L);
        break;
    case CG_K_FI:
    case CG_K_FE:
        close_block(L, L->line);
        L->lfile = idx;
        L->fi_pending = 1;
        break;
    case CG_K_FN:
        close_block(L, L->line);
        /* lsprofcalltree names a function's file with fi= before fn=. */
        if (L->fi_pending)
            L->fl = L->lfile;
        end_function(L);
        L->fn_name = idx;
        L->lfile = L->fl;
        L->fi_pending = 0;
        break;
    case CG_K_COB:
        L->cob = idx;
        break;
    case CG_K_CFI:
    case CG_K_CFL:
        L->cfi = idx;
        break;
    case CG_K_CFN:
        L->cfn = idx;
        break;
    case CG_K_JFI:
        close_block(L, L->line);
        L->jfile = idx;
        L->jfunc = -1;
        break;
    default:                     /* jfn= */
        close_block(L, L->line);
        L->jfn_name = idx;
        L->jfunc = -1;
        break;
    }
    return CG_OK;
}

/* ---- dispatch ---- */

static int unknown_line(Loader *L, const char *s, const char *e)
{
    char q[300];
    quote(q, sizeof q, s, (size_t)(e - s));
    return fail(L, "expected a cost, name or header line, found %s", q);
}

/* A call or jump still waits for its line when this line comes. */
static int missing_follow_line(Loader *L, const char *s, const char *e)
{
    char q[300];
    int call = L->call_pending;
    uint64_t at = call ? L->call_line : L->jump_line;
    quote(q, sizeof q, s, (size_t)(e - s));
    if (!L->lenient)
        return fail(L, "expected the %s line of the %s at line %llu, found "
                    "%s", call ? "cost" : "source", call ? "calls=" : "jump",
                    (unsigned long long)at, q);
    L->call_pending = L->jump_pending = 0;
    close_block(L, L->line);
    return warn_at(L, CG_W_SKIPPED, at, "%s skipped: the line after it is "
                   "not its %s line", call ? "calls=" : "jump",
                   call ? "cost" : "source");
}

/* Header lines that belong to one part: part:, pid:, thread:, cmd:,
 * desc:, positions:, events:. */
static int part_line(Loader *L, const CgRec *r)
{
    const char *v = r->val, *e = r->e;
    CgPart *pt;
    int64_t n = 0;
    int rc;
    if ((r->kind == CG_K_PART || r->kind == CG_K_PID ||
         r->kind == CG_K_THREAD) &&
        (rc = read_int(L, v, e, &n, r->kind == CG_K_PART ? "part:" :
                       r->kind == CG_K_PID ? "pid:" : "thread:")) != 0)
        return rc;
    if (r->kind == CG_K_POSITIONS)
        return hdr_positions(L, v, e);
    if (r->kind == CG_K_EVENTS)
        return hdr_events(L, v, e);
    if ((rc = part_header(L)) != 0)
        return rc;
    pt = &L->P->parts[L->part];
    switch (r->kind) {
    case CG_K_PART:
        pt->number = n;
        pt->has |= CG_PART_NUMBER;
        return CG_OK;
    case CG_K_PID:
        pt->pid = n;
        pt->has |= CG_PART_PID;
        return CG_OK;
    case CG_K_THREAD:
        pt->thread = n;
        pt->has |= CG_PART_THREAD;
        return CG_OK;
    case CG_K_CMD:
        pt->cmd.ptr = cg_skip_blanks(v, e);
        pt->cmd.len = (size_t)(e - pt->cmd.ptr);
        pt->has |= CG_PART_CMD;
        return CG_OK;
    default:
        return hdr_desc(L, v, e);
    }
}

static int creator_line(Loader *L, const CgRec *r)
{
    const char *v = cg_skip_blanks(r->val, r->e);
    if (!L->P->creator.ptr) {
        L->P->creator.ptr = v;
        L->P->creator.len = (size_t)(r->e - v);
    }
    if (r->e - v >= 9 && !memcmp(v, "callgrind", 9))
        L->callgrind = 1;
    return CG_OK;
}

static int keyed_line(Loader *L, const CgRec *r)
{
    if (r->def->names >= 0)
        return name_line(L, r);
    switch (r->kind) {
    case CG_K_CALLS:
        return calls_line(L, r->val, r->e);
    case CG_K_JUMP:
    case CG_K_JCND:
        return jump_line(L, r->val, r->e, r->kind == CG_K_JCND);
    case CG_K_UNKNOWN_EQ:
    case CG_K_UNKNOWN_COLON: {
        char q[300];
        quote(q, sizeof q, r->key, (size_t)(r->e - r->key));
        close_block(L, L->line);
        return warn_at(L, CG_W_UNKNOWN, L->lineno, "unknown line %s skipped",
                       q);
    }
    case CG_K_VERSION:
        return hdr_version(L, r->val, r->e);
    case CG_K_CREATOR:
        return creator_line(L, r);
    case CG_K_EVENT:
        return hdr_event(L, r->val, r->e);
    case CG_K_SUMMARY:
    case CG_K_TOTALS:
        close_block(L, L->line);
        return hdr_costs(L, r->val, r->e, r->kind == CG_K_TOTALS);
    default:
        return part_line(L, r);
    }
}

static int separator(Loader *L)
{
    int k;
    close_block(L, L->line);
    if (L->touched) {
        int rc = new_part(L, 0);
        if (rc)
            return rc;
    }
    L->touched = 1;
    for (k = 0; k < CG_NKINDS; k++)
        cg_names_reset_ids(&L->P->names[k]);
    L->ob = L->fl = L->lfile = -1;
    L->cob = L->cfi = L->cfn = -1;
    L->fi_pending = 0;
    end_function(L);
    return CG_OK;
}

static int do_line(Loader *L, const CgRec *r)
{
    switch (r->kind) {
    case CG_K_BLANK:
        return CG_OK;
    case CG_K_COST:
        return cost_line(L, r->s, r->e);
    default:
        break;
    }
    L->skip_cost = 0;
    if (L->call_pending || L->jump_pending) {
        int rc = missing_follow_line(L, r->s, r->e);
        if (rc)
            return rc;
    }
    switch (r->kind) {
    case CG_K_SEPARATOR:
        return separator(L);
    case CG_K_OTHER:
        return unknown_line(L, r->s, r->e);
    default:
        return keyed_line(L, r);
    }
}

/* After a line failed in lenient mode: forget what it left half done. */
static int skip_line(Loader *L)
{
    close_block(L, L->line);
    if (L->call_pending && L->call_line != L->lineno) {
        /* the failed line was the call's cost line */
        L->call_pending = 0;
    }
    if (L->jump_pending && L->jump_line != L->lineno)
        L->jump_pending = 0;
    return add_warning_text(L, CG_W_SKIPPED, L->err->msg);
}

/* A callgrind file whose last part has no totals: was cut short: warn at
 * its last non-blank line, quoting it. */
static int cut_short(Loader *L, const char *why)
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
    quote(q, sizeof q, s, (size_t)(e - s));
    return warn_at(L, CG_W_TRUNCATED, line, "the file ends without %s: cut "
                   "short after %s", why, q);
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

/* The end of one file: a call or jump waiting for its line, no events:
 * line, a callgrind file cut short. */
static int end_text(Loader *L)
{
    const char *end = L->buf + L->len;
    int rc;
    close_block(L, end);
    if (L->call_pending || L->jump_pending) {
        int call = L->call_pending;
        uint64_t at = call ? L->call_line : L->jump_line;
        if (!L->lenient)
            return fail_at(L, at, "%s at end of file, with no %s line after "
                           "it", call ? "calls=" : "jump",
                           call ? "cost" : "source");
        L->call_pending = L->jump_pending = 0;
        rc = warn_at(L, CG_W_SKIPPED, at, "%s skipped: the file ends before "
                     "its %s line", call ? "calls=" : "jump",
                     call ? "cost" : "source");
        if (rc)
            return rc;
    } else if (L->skip_cost) {
        L->skip_cost = 0;
    } else if (L->cfn >= 0 || L->cfi >= 0 || L->cob >= 0) {
        rc = warn_at(L, CG_W_TRUNCATED, L->lineno, "the file ends after a "
                     "call's target with no calls= line (truncated?)");
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
        return cut_short(L, L->callgrind ? "totals: (callgrind ends every "
                         "part with one)" : "totals: (its writer ends every "
                         "part with one)");
    if (L->written && !ends_written(L->buf, L->len))
        return cut_short(L, "its last line '# end' (its writer ends every "
                         "file with it)");
    return CG_OK;
}

/* The start of file i: a part of its own, compression ids of its own, no
 * names in force. */
static int begin_text(Loader *L, uint32_t i)
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
                 !memcmp(t->buf, CG_WRITTEN_HEAD, sizeof CG_WRITTEN_HEAD - 1);
    L->skip_cost = 0;
    if (!L->P->nparts || L->touched) {
        int rc = new_part(L, 0);
        if (rc)
            return rc;
    }
    /* the ids of the file before end here */
    if (i && cg_model_name_orphans(L->P, L->P->texts[i - 1].name) != CG_OK)
        return nomem(L);
    L->P->parts[L->part].text = i;
    for (k = 0; k < CG_NKINDS; k++)
        cg_names_reset_ids(&L->P->names[k]);
    L->ob = L->fl = L->lfile = -1;
    L->cob = L->cfi = L->cfn = -1;
    L->fi_pending = 0;
    end_function(L);
    return CG_OK;
}

static int cancelled(Loader *L)
{
    L->err->status = CG_ECANCEL;
    L->err->line = 0;
    snprintf(L->err->msg, sizeof L->err->msg, "%s: load cancelled", L->name);
    return CG_ECANCEL;
}

/* Where report() is next due after `at`: CG_DONE_STEP on, or sooner where
 * progress is due. */
static void set_mark(Loader *L, const char *at)
{
    L->mark = at + CG_DONE_STEP;
    if (L->opts->progress && L->mark > L->report_at)
        L->mark = L->report_at;
}

/* Says how far the load has read, at `at` of the current file (for
 * cg_model_expect), and reports progress there when lines up to `end`
 * reach where it is due; sets where the next report is due. CG_ECANCEL
 * when the callback cancels the load. */
static int report(Loader *L, const char *at, const char *end)
{
    uint64_t done = L->before + (uint64_t)(at - L->buf);
    int rc = CG_OK;
    L->P->done = done;
    if (L->opts->progress && end >= L->report_at) {
        L->report_at = at + CG_PROGRESS_STEP;
        if (L->opts->progress(L->opts->ud, done, L->P->len))
            rc = cancelled(L);
    }
    set_mark(L, at);
    return rc;
}

#ifdef CG_VEC
/* cg_vec_costs_fast, compiled for the vector path (read_lines is not) */
CG_VEC_TARGET static const char *vec_costs(const char *p, int npos,
                                           const uint64_t *base,
                                           uint64_t *pos, int64_t *cost,
                                           int max, int *ncost)
{
    return cg_vec_costs_fast(p, npos, base, pos, cost, max, ncost);
}
#endif

/* Reads the lines p..end of the current file; reports progress every
 * CG_PROGRESS_STEP bytes. */
static int read_lines(Loader *L, const char *p, const char *end)
{
    int rc = CG_OK;
    while (!rc && p < end) {
        CgRec r;
        const CgPart *pt = &L->P->parts[L->part];
        if (pt->nev && cg_is_cost_start(*p)) {
            /* the common cost line, scanned up to its '\n' in one go */
            uint64_t pos[CG_MAX_POSITIONS];
            int ncost, skipping = L->skip_cost;
            const char *next = NULL;
#ifdef CG_VEC
            /* 64 bytes to read: from the text, past `end` if need be (a
             * range the worker left between runs is often shorter) */
            if (L->vec && pt->nev >= CG_VEC_MIN_EVENTS &&
                L->buf + L->len - p >= 64)
                next = vec_costs(p, pt->npos, L->base, pos, L->cost, pt->nev,
                                 &ncost);
            if (next && next <= end)     /* (ranges end at a line's end) */
                L->P->vec_lines++;
            else
#endif
                next = cg_scan_costs_fast(p, end, pt->npos, L->base, pos,
                                          L->cost, pt->nev, &ncost);
            if (next) {
                L->lineno++;
                L->line = p;
                L->touched = L->body = 1;
                L->skip_cost = 0;
                rc = cost_record(L, pos, ncost, skipping);
                if (rc == CG_EBAD && L->lenient && !L->fatal)
                    rc = skip_line(L);
                p = next;
                goto progress;
            }
        }
        cg_scan_line(p, end, &r);
        L->lineno++;
        L->line = p;
        rc = do_line(L, &r);
        if (rc == CG_EBAD && L->lenient && !L->fatal)
            rc = skip_line(L);
        p = r.next;
    progress:
        if (p >= L->mark && !rc)
            rc = report(L, p, p);
    }
    return rc;
}

/* Takes a run of plain cost lines, and jumps with their source lines,
 * summed by the worker (cg_prescan.h): what cost_record and jump_line do
 * for each of its lines, at once. Whatever the run's lines could do
 * otherwise (another layout, a position or jump target out of range, a
 * sum that does not fit, an error) it leaves to read_lines, before any
 * change. */
static int take_run(Loader *L, const CgSeg *g)
{
    CgProfile *P = L->P;
    const CgPart *pt = &P->parts[L->part];
    uint64_t base[CG_MAX_POSITIONS], lineno = L->lineno;
    const char *line = L->line;
    int k, rc;
    if (g->npos != pt->npos || g->nev != pt->nev || L->skip_cost ||
        L->call_pending || L->jump_pending)
        return read_lines(L, g->start, g->end);
    for (k = 0; k < g->npos; k++) {
        const CgRunPos *q = &g->pos[k];
        /* the steps before any line wrote it outright stay in range */
        if ((q->lo < 0 && L->base[k] < (uint64_t)-q->lo) ||
            (q->hi > 0 && L->base[k] > UINT64_MAX - (uint64_t)q->hi))
            return read_lines(L, g->start, g->end);
        /* else a signed step, mod 2^64 */
        base[k] = q->absolute ? q->v : L->base[k] + q->v;
    }
    /* the run's first line is the current one while its function and
     * block are found, as in cost_record */
    L->lineno++;
    L->line = g->start;
    if ((rc = current_func(L)) != 0 || (rc = open_block(L)) != 0) {
        if (rc == CG_ENOMEM)
            return rc;
        goto lines;
    }
    /* costs >= 0: the sums grow line by line, so the last fitting means
     * every one on the way did */
    if (add_self(L, P->self + (size_t)L->func * P->stride, g->sums,
                 g->ncost) >= 0)
        goto lines;
    memcpy(L->base, base, (size_t)g->npos * sizeof *base);
    if (g->jumps)                /* as jump_line leaves them */
        L->jfile = L->jfn_name = L->jfunc = -1;
    L->lineno = lineno + g->nlines;
    P->run_lines += g->nlines;
    P->vec_lines += g->vlines;
    L->touched = L->body = 1;
    L->fi_pending = 0;
    return CG_OK;
lines:
    L->lineno = lineno;
    L->line = line;
    return read_lines(L, g->start, g->end);
}

/* The size from which a text is read with two threads (cg_prescan.h):
 * 0 for none. */
static size_t two_threads_from(const CgLoadOpts *o)
{
    return o->threads == 1 ? 0 : o->chunk ? 1 : CG_PRESCAN_MIN;
}

/* The current file's text read in part (cg_source.h): its rest, read
 * here. */
static int read_rest(Loader *L, CgSource *src)
{
    int r;
    while ((r = cg_source_read(src, (size_t)-1, L->err)) > 0)
        ;
    return r ? CG_EIO : CG_OK;
}

/* Reads the current file: alone, or with a worker thread summing runs of
 * cost lines ahead (cg_prescan.h) in big files. The worker reads first
 * what is still to be read of the file. */
static int read_text(Loader *L)
{
    const CgLoadOpts *o = L->opts;
    CgSource *src = L->P->texts[L->text].src;
    CgPrescan *s = NULL;
    const char *start, *end;
    size_t i, from = two_threads_from(o);
    int rc = CG_OK, got;
    L->report_at = L->buf + CG_PROGRESS_STEP;
    set_mark(L, L->buf);
    if (src && cg_source_have(src) == L->len)
        src = NULL;              /* whole */
    if (from && L->len >= from)
        s = cg_prescan_start(L->buf, L->len, o->chunk,
                             !o->chunk || o->share, L->vec, src);
    if (!s) {
        if (src && (rc = read_rest(L, src)) != 0)
            return rc;
        return read_lines(L, L->buf, L->buf + L->len);
    }
    /* chunk 0 is the loader's */
    if ((got = cg_prescan_chunk(s, 0, &start, &end, L->err)) > 0)
        rc = read_lines(L, start, end);
    for (i = 1; got > 0 && !rc; i++) {
        const CgPart *pt = &L->P->parts[L->part];
        const CgChunk *c;
        size_t k;
        if ((got = cg_prescan_chunk(s, i, &start, &end, L->err)) <= 0)
            break;
        c = cg_prescan_wait(s, i, pt->npos, pt->nev);
        /* the lines before each run, the run, ..., the lines after the
         * last (a run in doubt is read with the lines around it) */
        for (k = 0; c && !rc && k < c->nsegs; k++) {
            const CgSeg *g = &c->segs[k];
            if (g->kind != CG_SEG_RUN)
                continue;
            if (start < g->start && (rc = read_lines(L, start, g->start)))
                break;
            /* a run crossing the mark: the report where it starts, so
             * no more than CG_PROGRESS_STEP goes by unreported */
            if (g->end > L->mark)
                rc = report(L, g->start, g->end);
            if (!rc)
                rc = take_run(L, g);
            start = g->end;
        }
        if (!rc && start < end)
            rc = read_lines(L, start, end);
        cg_prescan_done(s, i);
    }
    L->P->chunks += i;
    L->P->read_ahead += src != NULL;
    cg_prescan_stop(s);
    return !rc && got < 0 ? CG_EIO : rc;
}

/* Loads every text of P; frees P on failure. */
static int run(CgProfile **out, CgProfile *P, const CgLoadOpts *opts,
               CgError *err)
{
    Loader *L = calloc(1, sizeof *L);
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
            rc = read_text(L);
        if (!rc)
            rc = end_text(L);
        L->before += P->texts[i].len;
    }
    if (!rc)
        rc = end_part(L);
    if (!rc && cg_model_name_orphans(P, L->name) != CG_OK)
        rc = nomem(L);
    for (i = 0; i < CG_NKINDS; i++)
        cg_names_free_ids(&P->names[i]);    /* ids are per file */
    if (!rc)
        rc = cg_model_finish(P, err);
    if (!rc && opts->progress && opts->progress(opts->ud, P->len, P->len))
        rc = cancelled(L);
    if (rc == CG_ENOMEM)
        nomem(L);
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
    size_t defer = two_threads_from(opts);
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
