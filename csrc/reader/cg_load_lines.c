/* The loader's lines: the read loop over a text (alone, or taking the
 * runs the worker thread summed, cg_prescan.h), the dispatch of every
 * line, and the body lines (cost lines, calls=, jump=, name lines) that
 * build functions, blocks and calls. The hot path, in one translation
 * unit. */
#include "cg_loader.h"
#include "cg_mem.h"
#include "cg_model.h"
#include "cg_source.h"
#include "cg_vec.h"

#include <stdio.h>
#include <string.h>

#define UNSPECIFIED "<unspecified>"

/* ---- functions ---- */

static int get_func(CgLoader *L, int32_t obj, int32_t file, int32_t name,
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
                return cg_ld_nomem(L);
            memset(L->last_func + cap, 0xff,
                   (L->last_func_cap - cap) * sizeof *L->last_func);
        }
    }
    if (f < 0) {
        CgFunc *fn;
        if (P->nfuncs >= CG_MAX_FUNCS)
            return cg_ld_fail(L, "more than %d functions", CG_MAX_FUNCS);
        if (CG_BIG_GROW(P->funcs, P->funcs_cap, P->nfuncs + 1,
                        cg_model_expect(P, P->nfuncs + 1)) != 0 ||
            cg_model_reserve_self(P, P->nfuncs + 1) != 0)
            return cg_ld_nomem(L);
        fn = &P->funcs[P->nfuncs];
        memset(fn, 0, sizeof *fn);
        fn->obj = obj;
        fn->file = file;
        fn->name = name;
        if (cg_ftab_add(&P->ftab, P->funcs, sizeof *P->funcs, key,
                        (uint32_t)P->nfuncs) != 0)
            return cg_ld_nomem(L);
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
static int current_func(CgLoader *L)
{
    int32_t name = L->fn_name;
    if (L->func >= 0)
        return CG_OK;
    if (name < 0) {
        if (L->unspecified < 0) {
            L->unspecified = cg_ld_intern(L, CG_FN, UNSPECIFIED,
                                          sizeof UNSPECIFIED - 1);
            if (L->unspecified < 0)
                return cg_ld_nomem(L);
        }
        name = L->unspecified;
    }
    return get_func(L, L->fn_obj, L->fn_file, name, CG_FN_BODY, &L->func);
}

/* ---- blocks ---- */

static int open_block(CgLoader *L)
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
        return cg_ld_nomem(L);
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

/* ---- body lines ---- */

/* Reads the value of a name line: "(N) name", "(N)", a composite or a plain
 * name. The key is only for messages. */
static int read_name(CgLoader *L, int kind, const char *key, const char *s,
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
        return cg_ld_fail(L, "name longer than %d bytes", CG_MAX_NAME);
    q = cg_ld_scan_id(s, e, &id, &big);
    if (q && (q == e || *q != '\'')) {
        const char *nm = cg_skip_blanks(q, e);
        int32_t idx, old;
        if (big)
            return cg_ld_fail(L, "id %.*s is above the limit %d", (int)(q - s),
                              s, CG_MAX_ID);
        if (nm == e) {
            idx = cg_names_get_id(t, id);
            /* a forward reference: resolved by its definition later */
            if (idx < 0 && (idx = cg_names_placeholder(t, id,
                                                       L->lineno)) < 0)
                return cg_ld_nomem(L);
            *out = idx;
            return CG_OK;
        }
        if (cg_names_is_composite(nm, e)) {
            int rc = cg_ld_composite(L, kind, nm, e, &idx);
            if (rc)
                return rc;
        } else {
            idx = cg_ld_intern(L, kind, nm, (size_t)(e - nm));
            if (idx < 0)
                return cg_ld_nomem(L);
        }
        if (cg_names_set_id(t, id, idx, &old) != 0)
            return cg_ld_nomem(L);
        if (old >= 0 && !t->str[old].ptr) {
            if (t->alias[old] < 0) {
                t->alias[old] = idx;     /* the forward reference's name */
                old = -1;
            } else {
                old = t->alias[old];
            }
        }
        if (old >= 0 && old != idx) {
            int rc = cg_ld_warn_at(L, CG_W_NAME, L->lineno, "%s=(%llu) "
                                   "redefined from '%.*s' to '%.*s'", key,
                                   (unsigned long long)id,
                                   (int)t->str[old].len, t->str[old].ptr,
                                   (int)t->str[idx].len, t->str[idx].ptr);
            if (rc)
                return rc;
        }
        *out = idx;
        return CG_OK;
    }
    if (q && cg_names_is_composite(s, e))
        return cg_ld_composite(L, kind, s, e, out);
    *out = cg_ld_intern(L, kind, s, (size_t)(e - s));
    return *out < 0 ? cg_ld_nomem(L) : CG_OK;
}

/* Scans the positions and costs of a cost line into pos[] and L->cost[];
 * *ncost receives how many costs were written. */
static int scan_cost_line(CgLoader *L, const char *s, const char *e,
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
        return cg_ld_fail(L, "cost line has %d position%s but positions: "
                          "lists %d", f.col, f.col == 1 ? "" : "s", pt->npos);
    case CG_SCAN_POS:
        snprintf(what, sizeof what, "position '%.*s'",
                 (int)(pt->posname[f.col].len > 40 ? 40 :
                       pt->posname[f.col].len),
                 pt->posname[f.col].ptr ? pt->posname[f.col].ptr : "line");
        return cg_ld_lex_fail(L, f.why, f.at, e, what);
    case CG_SCAN_MANY:
        if (!pt->nev)
            return cg_ld_fail(L, "cost line before any events: line");
        return cg_ld_fail(L, "cost line has %d costs but events: lists %d",
                          f.col, pt->nev);
    default:
        snprintf(what, sizeof what, "cost %d", f.col + 1);
        return cg_ld_lex_fail(L, f.why, f.at, e, what);
    }
}

/* Adds v[0..n) (part columns) to the current part's sums and to self (a
 * function's self costs), every sum checked before any changes. Returns
 * -1, or the profile event whose sum does not fit in 64 bits (nothing
 * changed then). */
static int add_self(CgLoader *L, int64_t *self, const int64_t *v, int n)
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

/* The file of a regular cost line. valgrind's writer keeps the file of
 * the last regular cost line as part of its base (callgrind/dump.c:
 * fprint_apos prints fi=/fe= against it and leaves it; only
 * fprint_fcost moves it): a regular cost line with no fi=/fe= since the
 * last position line is in that file, even where an fi=/fe= was written
 * for a call's or a jump's site since (docs/format.md, "Calls and
 * jumps"). Under the moving rule a file holds until the next fi=/fe=. */
static void regular_file(CgLoader *L)
{
    if (!L->moving_base && !L->fi_site && L->lfile != L->rfile &&
        L->rfile >= 0) {
        cg_ld_close_block(L, L->line);
        L->lfile = L->rfile;
    }
}

/* A scanned cost line: positions pos[], costs L->cost[0..ncost). */
static int cost_record(CgLoader *L, const uint64_t *pos, int ncost,
                       int skipping)
{
    CgProfile *P = L->P;
    CgPart *pt = &P->parts[L->part];
    int j, rc, regular = !L->jump_pending && !L->call_pending;
    if (skipping)
        return cg_ld_fail(L, "skipped with the bad line %llu before it",
                          (unsigned long long)L->skip_line);
    if (L->jump_pending) {
        if (ncost)
            return cg_ld_fail(L, "the source line of jump= at line %llu has "
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
            return cg_ld_nomem(L);
        L->call_pending = 0;
    } else {
        int ev;
        regular_file(L);
        if ((rc = current_func(L)) != 0 || (rc = open_block(L)) != 0)
            return rc;
        ev = add_self(L, P->self + (size_t)L->func * P->stride, L->cost,
                      ncost);
        if (ev >= 0)
            return cg_ld_fail(L, "the sum of %.*s costs does not fit in 64 "
                              "bits", (int)P->events[ev].len,
                              P->events[ev].ptr);
    }
    /* valgrind's writer (callgrind/dump.c, fprint_jcc) writes a call's
     * and a jump's positions relative to the last regular cost line and
     * leaves that base where it was (docs/format.md, "Calls and jumps") */
    if (regular || L->moving_base)
        memcpy(L->base, pos, (size_t)pt->npos * sizeof *pos);
    if (regular)
        L->rfile = L->lfile;
    L->fi_pending = L->fi_site = 0;
    return CG_OK;
}

static int cost_line(CgLoader *L, const char *s, const char *e)
{
    uint64_t pos[CG_MAX_POSITIONS];
    int ncost = 0, rc, skipping = L->skip_cost;
    L->touched = L->body = 1;
    L->skip_cost = 0;
    if (!L->P->parts[L->part].nev && !L->jump_pending)
        return cg_ld_fail(L, "cost line before any events: line");
    rc = scan_cost_line(L, s, e, pos, &ncost);
    if (rc)
        return rc;
    return cost_record(L, pos, ncost, skipping);
}

/* Scans the target subpositions of calls=/jump=/jcnd=. */
static int scan_target(CgLoader *L, const char *s, const char *e,
                       uint64_t *taddr, uint64_t *tline, uint32_t *flags)
{
    const CgPart *pt = &L->P->parts[L->part];
    int why = 0;
    const char *at = s;
    if (!cg_scan_target(s, e, pt->npos, pt->poskind, L->base, taddr, tline,
                        flags, CG_HAS_TADDR, CG_HAS_TLINE, &why, &at))
        return cg_ld_lex_fail(L, why, at, e, "target position");
    return CG_OK;
}

static int calls_line(CgLoader *L, const char *s, const char *e)
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
        return cg_ld_fail(L, "calls= without a cfn= line before it");
    s = cg_skip_blanks(s, e);
    memset(&site, 0, sizeof site);
    if (!(q = cg_scan_u64(s, e, &site.count, &why)))
        return cg_ld_lex_fail(L, why, s, e, "the call count");
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

static int jump_line(CgLoader *L, const char *s, const char *e, int cond)
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
        return cg_ld_lex_fail(L, why, at, e, second ? "the second jcnd= "
                              "count" : "the jump count");
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

/* A name line (r->def->names says which kind of name). frfn= only
 * defines its id (docs/format.md, "Calls and jumps"). */
static int name_line(CgLoader *L, const CgRec *r)
{
    int32_t idx;
    int rc = read_name(L, r->def->names, r->def->key, r->val, r->e, &idx);
    if (rc || r->kind == CG_K_FRFN)
        return rc;
    L->touched = L->body = 1;
    switch (r->kind) {
    case CG_K_OB:
        cg_ld_close_block(L, L->line);
        L->ob = idx;
        cg_ld_end_function(L);
        break;
    case CG_K_FL:
        cg_ld_close_block(L, L->line);
        L->fl = L->lfile = L->rfile = idx;
        L->fi_pending = L->fi_site = 0;
        cg_ld_end_function(L);
        break;
    case CG_K_FI:
    case CG_K_FE:
        cg_ld_close_block(L, L->line);
        L->lfile = idx;
        L->fi_pending = L->fi_site = 1;
        break;
    case CG_K_FN:
        cg_ld_close_block(L, L->line);
        /* lsprofcalltree names a function's file with fi= before fn=. */
        if (L->fi_pending)
            L->fl = L->lfile;
        cg_ld_end_function(L);
        L->fn_name = idx;
        L->lfile = L->rfile = L->fl;
        L->fi_pending = L->fi_site = 0;
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
        cg_ld_close_block(L, L->line);
        L->jfile = idx;
        L->jfunc = -1;
        break;
    default:                     /* jfn= */
        cg_ld_close_block(L, L->line);
        L->jfn_name = idx;
        L->jfunc = -1;
        break;
    }
    return CG_OK;
}

/* ---- dispatch ---- */

static int unknown_line(CgLoader *L, const char *s, const char *e)
{
    char q[300];
    cg_ld_quote(q, sizeof q, s, (size_t)(e - s));
    return cg_ld_fail(L, "expected a cost, name or header line, found %s", q);
}

/* A call or jump still waits for its line when this line comes. */
static int missing_follow_line(CgLoader *L, const char *s, const char *e)
{
    char q[300];
    int call = L->call_pending;
    uint64_t at = call ? L->call_line : L->jump_line;
    cg_ld_quote(q, sizeof q, s, (size_t)(e - s));
    if (!L->lenient)
        return cg_ld_fail(L, "expected the %s line of the %s at line %llu, "
                          "found %s", call ? "cost" : "source",
                          call ? "calls=" : "jump", (unsigned long long)at, q);
    L->call_pending = L->jump_pending = 0;
    cg_ld_close_block(L, L->line);
    return cg_ld_warn_at(L, CG_W_SKIPPED, at, "%s skipped: the line after it "
                         "is not its %s line", call ? "calls=" : "jump",
                         call ? "cost" : "source");
}

static int keyed_line(CgLoader *L, const CgRec *r)
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
        cg_ld_quote(q, sizeof q, r->key, (size_t)(r->e - r->key));
        cg_ld_close_block(L, L->line);
        return cg_ld_warn_at(L, CG_W_UNKNOWN, L->lineno, "unknown line %s "
                             "skipped", q);
    }
    default:
        return cg_ld_header_line(L, r);
    }
}

static int separator(CgLoader *L)
{
    int k;
    cg_ld_close_block(L, L->line);
    if (L->touched) {
        int rc = cg_ld_new_part(L, 0);
        if (rc)
            return rc;
    }
    L->touched = 1;
    for (k = 0; k < CG_NKINDS; k++)
        cg_names_reset_ids(&L->P->names[k]);
    L->ob = L->fl = L->lfile = L->rfile = -1;
    L->cob = L->cfi = L->cfn = -1;
    L->fi_pending = L->fi_site = 0;
    cg_ld_end_function(L);
    return CG_OK;
}

static int do_line(CgLoader *L, const CgRec *r)
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
static int skip_line(CgLoader *L)
{
    cg_ld_close_block(L, L->line);
    if (L->call_pending && L->call_line != L->lineno) {
        /* the failed line was the call's cost line */
        L->call_pending = 0;
    }
    if (L->jump_pending && L->jump_line != L->lineno)
        L->jump_pending = 0;
    return cg_ld_add_warning_text(L, CG_W_SKIPPED, L->err->msg);
}

/* ---- reading ---- */

/* Where report() is next due after `at`: CG_DONE_STEP on, or sooner where
 * progress is due. */
static void set_mark(CgLoader *L, const char *at)
{
    L->mark = at + CG_DONE_STEP;
    if (L->opts->progress && L->mark > L->report_at)
        L->mark = L->report_at;
}

/* Says how far the load has read, at `at` of the current file (for
 * cg_model_expect), and reports progress there when lines up to `end`
 * reach where it is due; sets where the next report is due. CG_ECANCEL
 * when the callback cancels the load. */
static int report(CgLoader *L, const char *at, const char *end)
{
    uint64_t done = L->before + (uint64_t)(at - L->buf);
    int rc = CG_OK;
    L->P->done = done;
    if (L->opts->progress && end >= L->report_at) {
        L->report_at = at + CG_PROGRESS_STEP;
        if (L->opts->progress(L->opts->ud, done, L->P->len))
            rc = cg_ld_cancelled(L);
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
static int read_lines(CgLoader *L, const char *p, const char *end)
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
static int take_run(CgLoader *L, const CgSeg *g)
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
    /* the run's first line is the current one while its file, function
     * and block are found, as in cost_record */
    L->lineno++;
    L->line = g->start;
    regular_file(L);
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
    L->rfile = L->lfile;
    L->fi_pending = L->fi_site = 0;
    return CG_OK;
lines:
    L->lineno = lineno;
    L->line = line;
    return read_lines(L, g->start, g->end);
}

/* The current file's text read in part (cg_source.h): its rest, read
 * here. */
static int read_rest(CgLoader *L, CgSource *src)
{
    int r;
    while ((r = cg_source_read(src, (size_t)-1, L->err)) > 0)
        ;
    return r ? CG_EIO : CG_OK;
}

/* Reads the current file: alone, or with a worker thread summing runs of
 * cost lines ahead (cg_prescan.h) in big files. The worker reads first
 * what is still to be read of the file. */
int cg_ld_read_text(CgLoader *L)
{
    const CgLoadOpts *o = L->opts;
    CgSource *src = L->P->texts[L->text].src;
    CgPrescan *s = NULL;
    const char *start, *end;
    size_t i, from = cg_ld_two_threads_from(o);
    int rc = CG_OK, got;
    L->report_at = L->buf + CG_PROGRESS_STEP;
    set_mark(L, L->buf);
    if (src && cg_source_have(src) == L->len)
        src = NULL;              /* whole */
    if (from && L->len >= from)
        s = cg_prescan_start(L->buf, L->len, o->chunk,
                             !o->chunk || o->share, L->vec,
                             L->moving_base, src);
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
