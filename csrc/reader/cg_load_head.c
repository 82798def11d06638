/* The loader's header lines and parts: version:, creator:, event:,
 * summary:, totals:, and the lines of one part (part:, pid:, thread:,
 * cmd:, desc:, positions:, events:), each checked whole before it changes
 * anything. */
#include "cg_loader.h"
#include "cg_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parts ---- */

static int check_sums(CgLoader *L, const CgPart *pt, const int64_t *written,
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
    return cg_ld_warn_at(L, kind, line, "%s does not match the cost lines: "
                         "%s%s", what, buf, bad > 4 ? ", ..." : "");
}

int cg_ld_end_part(CgLoader *L)
{
    const CgPart *pt = &L->P->parts[L->part];
    int rc;
    /* once: at the end of its file (end_text), or when a part follows */
    if (L->part_ended)
        return CG_OK;
    L->part_ended = 1;
    /* totals: is the sum of the part's cost lines by definition (summary:
     * may count more): lines lost or added */
    rc = check_sums(L, pt, pt->totals, pt->totals_line, "totals:",
                    CG_W_LOST);
    if (!rc)
        rc = check_sums(L, pt, pt->summary, pt->summary_line, "summary:",
                        CG_W_MISMATCH);
    return rc;
}

/* Starts a part. inherit: copy positions, events, pid, thread and cmd of
 * the previous part (a new dump of the same run). */
int cg_ld_new_part(CgLoader *L, int inherit)
{
    CgProfile *P = L->P;
    CgPart *pt, *prev;
    int k;
    if (P->nparts) {
        const CgPart *old = &P->parts[L->part];
        int rc = cg_ld_end_part(L);
        if (rc)
            return rc;
        /* cannot overflow: cost_line checked done + sum */
        for (k = 0; k < old->nev; k++) {
            L->done[old->evmap[k]] += old->sum[k];
            L->any_done |= old->sum[k] != 0;
        }
    }
    if (P->nparts >= CG_MAX_PARTS)
        return cg_ld_fail(L, "more than %d parts", CG_MAX_PARTS);
    if (CG_GROW(P->parts, P->parts_cap, P->nparts + 1) != 0)
        return cg_ld_nomem(L);
    pt = &P->parts[P->nparts];
    memset(pt, 0, sizeof *pt);
    pt->npos = 1;
    pt->poskind[0] = CG_POS_LINE;
    pt->posname[0].ptr = "line";
    pt->posname[0].len = 4;
    pt->line = L->lineno;
    pt->text = L->text;
    pt->moving_base = L->moving_base;
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
                return cg_ld_nomem(L);
            }
            memcpy(pt->evmap, prev->evmap,
                   (size_t)prev->nev * sizeof *pt->evmap);
            pt->nev = prev->nev;
        }
    }
    L->part = P->nparts++;
    L->part_ended = 0;
    L->touched = L->body = 0;
    L->events_line = L->positions_line = 0;
    for (k = 0; k < CG_MAX_POSITIONS; k++)
        L->base[k] = 0;
    return CG_OK;
}

/* A header line that opens a new part when it follows body lines. */
static int part_header(CgLoader *L)
{
    int rc = CG_OK;
    if (L->body) {
        cg_ld_close_block(L, L->line);
        rc = cg_ld_new_part(L, 1);
    }
    L->touched = 1;
    return rc;
}

/* ---- header lines ---- */

static int read_int(CgLoader *L, const char *s, const char *e, int64_t *out,
                    const char *what)
{
    uint64_t v;
    int why = 0;
    const char *q;
    s = cg_skip_blanks(s, e);
    if (s == e)
        return cg_ld_fail(L, "expected a number for %s, found nothing", what);
    q = cg_scan_u64(s, e, &v, &why);
    if (q && cg_skip_blanks(q, e) != e) {
        /* quote all of it: the first token alone is a good number */
        char qq[300];
        while (cg_is_blank(e[-1]))
            e--;
        cg_ld_quote(qq, sizeof qq, s, (size_t)(e - s));
        return cg_ld_fail(L, "expected a number for %s, found %s", what, qq);
    }
    if (!q || v > (uint64_t)INT64_MAX) {
        if (q)
            why = CG_LEX_OVERFLOW;
        return cg_ld_lex_fail(L, why, s, e, what);
    }
    *out = (int64_t)v;
    return CG_OK;
}

static int hdr_version(CgLoader *L, const char *s, const char *e)
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
        cg_ld_quote(qq, sizeof qq, p, (size_t)(e - p));
        L->fatal = 1;
        return cg_ld_fail(L, "expected a version number, found %s", qq);
    }
    if (major > 1) {
        L->fatal = 1;
        return cg_ld_fail(L, "version %.*s is not supported (this reader "
                          "knows versions 0 and 1)",
                          (int)(cg_token_end(p, e) - p), p);
    }
    if (!L->P->version)
        L->P->version = (int)major + 1;  /* stored +1: 0 means unset */
    return CG_OK;
}

static int hdr_positions(CgLoader *L, const char *s, const char *e)
{
    CgPart *pt;
    uint8_t kind[CG_MAX_POSITIONS];
    CgStr name[CG_MAX_POSITIONS];
    int n = 0, k, rc;
    /* After body lines this line starts a new part (part_header below),
     * where it is the first positions:. */
    if (L->positions_line && !L->body)
        return cg_ld_fail(L, "positions: given twice in one part (first at "
                          "line %llu)", (unsigned long long)L->positions_line);
    for (s = cg_skip_blanks(s, e); s < e; s = cg_skip_blanks(s, e)) {
        const char *q = cg_token_end(s, e);
        size_t len = (size_t)(q - s);
        if (n == CG_MAX_POSITIONS)
            return cg_ld_fail(L, "positions: lists more than %d columns",
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
                return cg_ld_fail(L, "positions: lists '%.*s' twice", (int)len,
                                  s);
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

/* Checks that the events: line s..e lists no event twice, and counts in
 * *fresh the events the profile does not have yet. Lookups are hashed:
 * many parts with long events: lines must not take quadratic time. */
static int events_once(CgLoader *L, const char *s, const char *e,
                       size_t *fresh)
{
    CgNames seen;                /* this line's names: one written twice */
    const char *p;
    int rc = CG_OK;
    memset(&seen, 0, sizeof seen);
    for (p = cg_skip_blanks(s, e); p < e && !rc; p = cg_skip_blanks(p, e)) {
        const char *q = cg_token_end(p, e);
        size_t len = (size_t)(q - p);
        if (cg_names_find(&seen, p, len) >= 0)
            rc = cg_ld_fail(L, "events: lists '%.*s' twice",
                            (int)(len > 60 ? 60 : len), p);
        else if (cg_names_intern(&seen, p, len) < 0)
            rc = cg_ld_nomem(L);
        else if (cg_names_find(&L->evnames, p, len) < 0)
            (*fresh)++;
        p = q;
    }
    cg_names_free(&seen);
    return rc;
}

static int hdr_events(CgLoader *L, const char *s, const char *e)
{
    CgProfile *P = L->P;
    CgPart *pt;
    uint32_t *map;
    int64_t *sum;
    int n = 0, rc;
    size_t fresh = 0;
    const char *p;
    /* After body lines this line starts a new part (part_header below),
     * where it is the first events:. */
    if (L->events_line && !L->body)
        return cg_ld_fail(L, "events: given twice in one part (first at line "
                          "%llu)", (unsigned long long)L->events_line);
    for (p = cg_skip_blanks(s, e); p < e; p = cg_skip_blanks(p, e)) {
        p = cg_token_end(p, e);
        if (++n > CG_MAX_EVENTS)
            return cg_ld_fail(L, "events: lists more than %d events",
                              CG_MAX_EVENTS);
    }
    if (!n)
        return cg_ld_fail(L, "events: lists no event");
    /* The whole line is checked before anything changes (lenient mode
     * skips it without a trace). */
    if ((rc = events_once(L, s, e, &fresh)) != 0)
        return rc;
    /* Cost vectors are dense (functions x events): the union of all parts'
     * events has the same limit as one line. */
    if (P->nev + fresh > CG_MAX_EVENTS)
        return cg_ld_fail(L, "events: brings the profile to more than %d "
                          "distinct events", CG_MAX_EVENTS);
    if ((rc = part_header(L)) != 0)
        return rc;
    pt = &P->parts[L->part];
    map = malloc((size_t)n * sizeof *map);
    sum = calloc((size_t)n, sizeof *sum);
    if (!map || !sum) {
        free(map);
        free(sum);
        return cg_ld_nomem(L);
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
                return cg_ld_nomem(L);
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

static int hdr_event(CgLoader *L, const char *s, const char *e)
{
    CgProfile *P = L->P;
    CgEventDef d;
    const char *p = cg_skip_blanks(s, e), *q = p, *f;
    memset(&d, 0, sizeof d);
    while (q < e && !cg_is_blank(*q) && *q != '=' && *q != ':')
        q++;
    if (q == p)
        return cg_ld_fail(L, "event: line names no event");
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
            return cg_ld_fail(L, "event: %.*s has '=' but no formula",
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
        cg_ld_quote(qq, sizeof qq, q, (size_t)(e - q));
        return cg_ld_fail(L, "expected '=' or ':' after the event name, found "
                          "%s", qq);
    }
    if (CG_GROW(P->event_defs, P->event_defs_cap, P->nevent_defs + 1) != 0)
        return cg_ld_nomem(L);
    P->event_defs[P->nevent_defs++] = d;
    return CG_OK;
}

static int hdr_costs(CgLoader *L, const char *s, const char *e, int totals)
{
    CgPart *pt = &L->P->parts[L->part];
    const char *what = totals ? "totals:" : "summary:";
    int64_t **slot = totals ? &pt->totals : &pt->summary;
    int n = 0, why = 0;
    int64_t *v;
    if (!pt->nev)
        return cg_ld_fail(L, "%s before any events: line", what);
    for (s = cg_skip_blanks(s, e); s < e; s = cg_skip_blanks(s, e)) {
        const char *q;
        if (n == pt->nev) {
            int extra = 0;
            for (; s < e; s = cg_skip_blanks(s, e), extra++)
                s = cg_token_end(s, e);
            return cg_ld_fail(L, "%s has %d values but events: lists %d", what,
                              n + extra, pt->nev);
        }
        q = cg_scan_cost(s, e, &L->cost[n], &why);
        if (!q)
            return cg_ld_lex_fail(L, why, s, e, what);
        n++;
        s = q;
    }
    if (*slot) {
        int rc = cg_ld_warn_at(L, CG_W_SKIPPED, L->lineno, "%s given twice in "
                               "one part; the later one is kept", what);
        if (rc)
            return rc;
        v = *slot;
    } else if (!(v = malloc((size_t)pt->nev * sizeof *v))) {
        return cg_ld_nomem(L);
    }
    memcpy(v, L->cost, (size_t)n * sizeof *v);
    memset(v + n, 0, (size_t)(pt->nev - n) * sizeof *v);
    *slot = v;
    if (totals) {
        /* totals: ends a part, even one without body lines (callgrind
         * --combine-dumps writes a thread's empty last dump so) */
        pt->totals_line = L->lineno;
        L->touched = L->body = 1;
    } else {
        pt->summary_line = L->lineno;
    }
    return CG_OK;
}

static int hdr_desc(CgLoader *L, const char *s, const char *e)
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
        return cg_ld_nomem(L);
    P->descs[P->ndescs++] = d;
    P->parts[L->part].desc_end = (uint32_t)P->ndescs;
    return CG_OK;
}

/* Header lines that belong to one part: part:, pid:, thread:, cmd:,
 * desc:, positions:, events:. */
static int part_line(CgLoader *L, const CgRec *r)
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

static int creator_line(CgLoader *L, const CgRec *r)
{
    const char *v = cg_skip_blanks(r->val, r->e);
    if (!L->P->creator.ptr) {
        L->P->creator.ptr = v;
        L->P->creator.len = (size_t)(r->e - v);
    }
    if (r->e - v >= 9 && !memcmp(v, "callgrind", 9))
        L->callgrind = L->any_callgrind = 1;
    return CG_OK;
}

int cg_ld_header_line(CgLoader *L, const CgRec *r)
{
    switch (r->kind) {
    case CG_K_VERSION:
        return hdr_version(L, r->val, r->e);
    case CG_K_CREATOR:
        return creator_line(L, r);
    case CG_K_EVENT:
        return hdr_event(L, r->val, r->e);
    case CG_K_SUMMARY:
    case CG_K_TOTALS:
        cg_ld_close_block(L, L->line);
        return hdr_costs(L, r->val, r->e, r->kind == CG_K_TOTALS);
    default:
        return part_line(L, r);
    }
}
