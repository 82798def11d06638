/* The profile writer (cg_write.h): a loaded profile walked in a
 * canonical order and emitted through the emitter (cg_emit.h). */
#include "cg_write.h"
#include "cg_atomic.h"
#include "cg_cursor.h"
#include "cg_names.h"
#include "cg_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct NameRank {
    CgStr s;
    int32_t i;
} NameRank;

static int cmp_str(CgStr a, CgStr b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c)
        return c;
    return a.len < b.len ? -1 : a.len > b.len;
}

static int cmp_rank(const void *x, const void *y)
{
    const NameRank *a = (const NameRank *)x, *b = (const NameRank *)y;
    int c = cmp_str(a->s, b->s);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* A name's text (a stand-in gives its real name's). */
static CgStr name_str(const CgProfile *P, int kind, int32_t i)
{
    CgStr none;
    const CgNames *t = &P->names[kind];
    none.ptr = NULL;
    none.len = 0;
    if (i < 0 || (size_t)i >= t->n)
        return none;
    if (!t->str[i].ptr && t->alias && (size_t)i < t->alias_cap &&
        t->alias[i] >= 0)
        i = t->alias[i];
    if (!t->str[i].ptr) {
        none.ptr = "";
        return none;
    }
    return t->str[i];
}

/* Per name kind: the rank of each name in byte order (equal texts, equal
 * ranks); NULL out of memory. */
static int32_t *name_ranks(const CgProfile *P, int kind)
{
    const CgNames *t = &P->names[kind];
    size_t n = t->n, i;
    NameRank *v = (NameRank *)malloc((n ? n : 1) * sizeof *v);
    int32_t *rank = (int32_t *)malloc((n ? n : 1) * sizeof *rank);
    int32_t r = 0;
    if (!v || !rank) {
        free(v);
        free(rank);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        v[i].s = name_str(P, kind, (int32_t)i);
        v[i].i = (int32_t)i;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_rank);
    for (i = 0; i < n; i++) {
        if (i && cmp_str(v[i - 1].s, v[i].s))
            r++;
        rank[v[i].i] = r;
    }
    free(v);
    return rank;
}

typedef struct FnKey {
    int32_t r[3];
    int32_t f;
} FnKey;

static int cmp_fnkey(const void *x, const void *y)
{
    const FnKey *a = (const FnKey *)x, *b = (const FnKey *)y;
    int k;
    for (k = 0; k < 3; k++)
        if (a->r[k] != b->r[k])
            return a->r[k] < b->r[k] ? -1 : 1;
    return (a->f > b->f) - (a->f < b->f);
}

typedef struct CallKey {
    int32_t r[3];
    uint32_t flags;
    uint64_t addr, line, count;
    int32_t file;
    uint32_t c;
} CallKey;

static int cmp_callkey(const void *x, const void *y)
{
    const CallKey *a = (const CallKey *)x, *b = (const CallKey *)y;
    int k;
    for (k = 0; k < 3; k++)
        if (a->r[k] != b->r[k])
            return a->r[k] < b->r[k] ? -1 : 1;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->count != b->count)
        return a->count < b->count ? -1 : 1;
    return (a->c > b->c) - (a->c < b->c);
}

typedef struct PW {
    CgWriter *w;
    const CgProfile *P;
    const CgWriteOpts *o;
    int32_t *rank[3];
    int64_t *cost;               /* stride: cursor scratch */
    int64_t *call;               /* stride: call costs */
    int64_t *col;                /* part columns */
    int64_t *sum;                /* part columns: sums of what is written */
    int overflow;
    CallKey *calls;
    size_t calls_cap;
    CgJump *jumps;               /* a function's, kept until its calls
                                    are written */
    size_t jumps_cap;
    CgJump jump[1];
    CgWriteDesc *desc;
    int64_t *pidnum;             /* per part: its process's number */
    size_t desc_cap;
    CgStr *evnames;
    size_t evnames_cap;
    int has_addr, has_line;      /* columns of the part in writing */
    CgWriteFn *fns;              /* per function: its names */
} PW;

static int32_t rank_of(const PW *pw, int kind, int32_t i)
{
    return i < 0 ? -1 : pw->rank[kind][i];
}

static CgWriteFn fn_of(const CgProfile *P, int32_t f)
{
    CgWriteFn x;
    x.obj = name_str(P, CG_OBJ, P->funcs[f].obj);
    x.file = name_str(P, CG_FILE, P->funcs[f].file);
    x.name = name_str(P, CG_FN, P->funcs[f].name);
    if (!x.name.ptr)
        x.name.ptr = "";
    x.hint = (uint32_t)f + 1;
    return x;
}

static int pos_of(const PW *pw, uint64_t *pos, uint32_t flags,
                  uint32_t has_addr, uint32_t has_line, uint64_t addr,
                  uint64_t line)
{
    int k = 0;
    if (pw->has_addr)
        pos[k++] = (flags & has_addr) ? addr : 0;
    if (pw->has_line)
        pos[k++] = (flags & has_line) ? line : 0;
    return k;
}

/* Part columns of a profile-order cost vector. */
static void to_cols(PW *pw, const CgPart *pt, const int64_t *v)
{
    int j;
    for (j = 0; j < pt->nev; j++)
        pw->col[j] = v[pt->evmap[j]];
}

static void add_sums(PW *pw, const CgPart *pt)
{
    int j;
    for (j = 0; j < pt->nev; j++)
        if (__builtin_add_overflow(pw->sum[j], pw->col[j], &pw->sum[j]))
            pw->overflow = 1;
}

/* The calls out of f in this part, sorted (into pw->calls); -1 out of
 * memory. */
static long sorted_calls(PW *pw, int32_t f, uint32_t part)
{
    const CgProfile *P = pw->P;
    const CgFunc *fn = &P->funcs[f];
    size_t n = 0;
    uint32_t c;
    for (c = fn->calls_begin; c < fn->calls_end; c++) {
        const CgCall *call = &P->calls[c];
        const CgFunc *to = &P->funcs[call->callee];
        CgCallSite site;
        CallKey *k;
        if (call->part != part || call->caller != f)
            continue;
        if (CG_GROW(pw->calls, pw->calls_cap, n + 1) != 0)
            return -1;
        k = &pw->calls[n++];
        cg_call_site(P, call, &site);
        k->r[0] = rank_of(pw, CG_OBJ, to->obj);
        k->r[1] = rank_of(pw, CG_FILE, to->file);
        k->r[2] = rank_of(pw, CG_FN, to->name);
        k->file = rank_of(pw, CG_FILE, call->file);
        k->flags = call->flags;
        k->addr = (call->flags & CG_HAS_ADDR) ? site.addr : 0;
        k->line = (call->flags & CG_HAS_LINE) ? site.line : 0;
        k->count = site.count;
        k->c = c;
    }
    if (n > 1)
        qsort(pw->calls, n, sizeof *pw->calls, cmp_callkey);
    return (long)n;
}

/* f's cost lines in this part, in file order; its jumps are kept in
 * pw->jumps (*njumps) for after its calls. */
static int write_lines(PW *pw, int32_t f, uint32_t part, size_t *njumps)
{
    const CgProfile *P = pw->P;
    const CgFunc *fn = &P->funcs[f];
    const CgPart *pt = &P->parts[part];
    CgWriter *w = pw->w;
    uint32_t b;
    *njumps = 0;
    for (b = fn->blocks_begin; b < fn->blocks_end; b++) {
        CgCursor cur;
        CgLine l;
        int got;
        int32_t last_file = -2;
        if (P->blocks[b].part != part)
            continue;
        cg_cursor_init(&cur, P, b, (size_t)b + 1, pw->cost);
        while ((got = cg_cursor_next_any(&cur, &l, pw->jump)) != 0) {
            uint64_t pos[2];
            if (got == 2) {
                if (CG_GROW(pw->jumps, pw->jumps_cap, *njumps + 1) != 0)
                    return CG_ENOMEM;
                pw->jumps[(*njumps)++] = *pw->jump;
                continue;
            }
            to_cols(pw, pt, l.cost);
            add_sums(pw, pt);
            /* only lines change the line file in this pass */
            if (l.file != last_file) {
                cg_write_fi(w, l.file >= 0 ? name_str(P, CG_FILE, l.file)
                                           : pw->fns[f].file);
                last_file = l.file;
            }
            pos_of(pw, pos, l.flags, CG_HAS_ADDR, CG_HAS_LINE, l.addr,
                   l.line);
            cg_write_line(w, pos, pw->col, (size_t)pt->nev);
        }
        if (w->status != CG_OK)
            return w->status;
    }
    return CG_OK;
}

static void write_calls(PW *pw, int32_t f, uint32_t part, size_t ncalls)
{
    const CgProfile *P = pw->P;
    const CgPart *pt = &P->parts[part];
    size_t i;
    for (i = 0; i < ncalls; i++) {
        const CgCall *call = &P->calls[pw->calls[i].c];
        CgCallSite site;
        uint64_t pos[2], tgt[2];
        cg_call_site(P, call, &site);
        cg_call_costs(P, call, pw->call);
        to_cols(pw, pt, pw->call);
        cg_write_fi(pw->w, call->file >= 0
                               ? name_str(P, CG_FILE, call->file)
                               : pw->fns[f].file);
        pos_of(pw, pos, call->flags, CG_HAS_ADDR, CG_HAS_LINE, site.addr,
               site.line);
        pos_of(pw, tgt, call->flags, CG_HAS_TADDR, CG_HAS_TLINE, site.taddr,
               site.tline);
        cg_write_call(pw->w, &pw->fns[call->callee], site.count, tgt, pos,
                      pw->col, (size_t)pt->nev);
    }
}

static void write_jumps(PW *pw, int32_t f, size_t njumps)
{
    const CgProfile *P = pw->P;
    size_t i;
    for (i = 0; i < njumps; i++) {
        const CgJump *j = &pw->jumps[i];
        uint64_t pos[2], tgt[2];
        const CgWriteFn *to = &pw->fns[j->to >= 0 ? j->to : f];
        CgStr tf = j->target_file >= 0
                       ? name_str(P, CG_FILE, j->target_file) : to->file;
        cg_write_fi(pw->w, j->file >= 0 ? name_str(P, CG_FILE, j->file)
                                        : pw->fns[f].file);
        pos_of(pw, pos, j->flags, CG_HAS_ADDR, CG_HAS_LINE, j->addr,
               j->line);
        pos_of(pw, tgt, j->flags, CG_HAS_TADDR, CG_HAS_TLINE, j->taddr,
               j->tline);
        cg_write_jump(pw->w, j->conditional, j->count, j->executed, to, tf,
                      tgt, pos);
    }
}

/* Function f's records in this part: its cost lines, then its calls, then
 * its jumps; nothing when it has none there. */
static int write_function(PW *pw, int32_t f, uint32_t part)
{
    const CgProfile *P = pw->P;
    const CgFunc *fn = &P->funcs[f];
    long ncalls = sorted_calls(pw, f, part);
    size_t njumps;
    uint32_t b;
    int any = 0, rc;
    if (ncalls < 0)
        return CG_ENOMEM;
    for (b = fn->blocks_begin; b < fn->blocks_end && !any; b++)
        any = P->blocks[b].part == part;
    if (!any && !ncalls)
        return CG_OK;
    cg_write_fn(pw->w, &pw->fns[f]);
    if ((rc = write_lines(pw, f, part, &njumps)) != CG_OK)
        return rc;
    write_calls(pw, f, part, (size_t)ncalls);
    write_jumps(pw, f, njumps);
    return pw->w->status;
}

/* Same process: both parts without a pid:, or the same pid. */
static int same_pid(const CgPart *a, const CgPart *b)
{
    int ha = (a->has & CG_PART_PID) != 0, hb = (b->has & CG_PART_PID) != 0;
    return ha == hb && (!ha || a->pid == b->pid);
}

/* Each part's process numbered 1, 2... in order of its first part: stable
 * across runs, it depends on the parts' order alone. num has nparts. */
static void pid_numbers(const CgProfile *P, int64_t *num)
{
    int64_t next = 1;
    size_t i, j;
    for (i = 0; i < P->nparts; i++) {
        for (j = 0; j < i && !same_pid(&P->parts[j], &P->parts[i]); j++)
            ;
        num[i] = j < i ? num[j] : next++;
    }
}

static int write_part(PW *pw, uint32_t part, const FnKey *order, size_t n)
{
    const CgProfile *P = pw->P;
    const CgPart *pt = &P->parts[part];
    const CgWriteOpts *o = pw->o;
    CgWritePart h;
    static const uint8_t kinds[2] = { CG_POS_INSTR, CG_POS_LINE };
    CgStr names[2];
    uint8_t pk[2];
    size_t i;
    int k;
    memset(&h, 0, sizeof h);
    if (o->pid == 1) {
        h.has_pid = (pt->has & CG_PART_PID) != 0;
        h.pid = pt->pid;
    } else if (o->pid == 2 && P->nparts > 1) {
        h.has_pid = 1;
        h.pid = pw->pidnum[part];
    }
    h.has_thread = (pt->has & CG_PART_THREAD) != 0;
    h.thread = pt->thread;
    h.has_number = 1;
    h.number = (pt->has & CG_PART_NUMBER) ? pt->number : (int64_t)part + 1;
    if (o->cmd == 2)
        h.cmd = o->cmd_text;
    else if (o->cmd == 1 && (pt->has & CG_PART_CMD))
        h.cmd = pt->cmd;
    h.ndesc = pt->desc_end - pt->desc_begin;
    if (h.ndesc && CG_GROW(pw->desc, pw->desc_cap, h.ndesc) != 0)
        return CG_ENOMEM;
    for (i = 0; i < h.ndesc; i++) {
        pw->desc[i].type = P->descs[pt->desc_begin + i].type;
        pw->desc[i].value = P->descs[pt->desc_begin + i].value;
    }
    h.desc = pw->desc;
    pw->has_addr = pw->has_line = 0;
    for (k = 0; k < pt->npos; k++) {
        pw->has_addr |= pt->poskind[k] == CG_POS_INSTR;
        pw->has_line |= pt->poskind[k] == CG_POS_LINE;
    }
    if (!pw->has_addr && !pw->has_line)
        pw->has_line = 1;
    h.npos = 0;
    if (pw->has_addr) {
        names[h.npos].ptr = "instr";
        names[h.npos].len = 5;
        pk[h.npos++] = kinds[0];
    }
    if (pw->has_line) {
        names[h.npos].ptr = "line";
        names[h.npos].len = 4;
        pk[h.npos++] = kinds[1];
    }
    h.posname = names;
    h.poskind = pk;
    if (part == 0) {
        h.event_lines = o->event_lines;
        h.nevent_lines = o->nevent_lines;
    }
    if (pt->nev && CG_GROW(pw->evnames, pw->evnames_cap,
                           (size_t)pt->nev) != 0)
        return CG_ENOMEM;
    for (k = 0; k < pt->nev; k++)
        pw->evnames[k] = P->events[pt->evmap[k]];
    h.events = pw->evnames;
    h.nev = (size_t)pt->nev;
    h.summary = pt->summary;
    for (k = 0; k < pt->nev; k++)
        pw->sum[k] = 0;
    pw->overflow = 0;
    if (cg_write_part(pw->w, &h) != CG_OK)
        return pw->w->status;
    for (i = 0; i < n; i++) {
        int rc = write_function(pw, order[i].f, part);
        if (rc != CG_OK)
            return rc;
    }
    cg_write_totals(pw->w, (!o->only && pt->totals) ? pt->totals : pw->sum);
    return pw->w->status;
}

int cg_write_profile(CgWriter *w, const CgProfile *P, const CgWriteOpts *o)
{
    PW pw;
    FnKey *order = NULL;
    size_t n = 0, i, stride = P->stride ? P->stride : 1;
    int rc = CG_ENOMEM, k;
    memset(&pw, 0, sizeof pw);
    pw.w = w;
    pw.P = P;
    pw.o = o;
    for (k = 0; k < 3; k++)
        if (!(pw.rank[k] = name_ranks(P, k)))
            goto done;
    pw.cost = (int64_t *)malloc(stride * sizeof *pw.cost);
    pw.call = (int64_t *)malloc(stride * sizeof *pw.call);
    pw.col = (int64_t *)malloc((stride + CG_MAX_EVENTS) * sizeof *pw.col);
    pw.sum = (int64_t *)malloc((stride + CG_MAX_EVENTS) * sizeof *pw.sum);
    order = (FnKey *)malloc((P->nfuncs ? P->nfuncs : 1) * sizeof *order);
    pw.fns = (CgWriteFn *)malloc((P->nfuncs ? P->nfuncs : 1) *
                                 sizeof *pw.fns);
    pw.pidnum = (int64_t *)malloc((P->nparts ? P->nparts : 1) *
                                  sizeof *pw.pidnum);
    if (!pw.cost || !pw.call || !pw.col || !pw.sum || !order || !pw.fns ||
        !pw.pidnum)
        goto done;
    pid_numbers(P, pw.pidnum);
    for (i = 0; i < P->nfuncs; i++)
        pw.fns[i] = fn_of(P, (int32_t)i);
    for (i = 0; i < P->nfuncs; i++) {
        if (o->only && !o->only[i])
            continue;
        order[n].r[0] = rank_of(&pw, CG_OBJ, P->funcs[i].obj);
        order[n].r[1] = rank_of(&pw, CG_FILE, P->funcs[i].file);
        order[n].r[2] = rank_of(&pw, CG_FN, P->funcs[i].name);
        order[n++].f = (int32_t)i;
    }
    if (n > 1)
        qsort(order, n, sizeof *order, cmp_fnkey);
    cg_write_begin(w, P->creator);
    for (i = 0; i < P->nparts; i++)
        if ((rc = write_part(&pw, (uint32_t)i, order, n)) != CG_OK)
            goto done;
    rc = cg_write_end(w);
done:
    if (rc == CG_ENOMEM && w->status == CG_OK)
        cg_writer_fail(w, CG_ENOMEM, ENOMEM);
    for (k = 0; k < 3; k++)
        free(pw.rank[k]);
    free(pw.cost);
    free(pw.call);
    free(pw.col);
    free(pw.sum);
    free(pw.calls);
    free(pw.jumps);
    free(pw.desc);
    free(pw.evnames);
    free(pw.fns);
    free(pw.pidnum);
    free(order);
    return w->status != CG_OK ? w->status : rc;
}

typedef struct To {
    CgWriter *w;
    const CgProfile *P;
    const CgWriteOpts *o;
    const char *path;
    FILE *f;
    char *msg;
    size_t size;
} To;

static int write_to(void *ud)
{
    const To *t = (const To *)ud;
    const char *path = t->path;
    CgAtomic a;
    int rc;
    if (path) {
        rc = cg_atomic_open(&a, path, t->msg, t->size);
        if (rc != CG_OK)
            return rc;
        cg_writer_init_fd(t->w, a.fd, t->o->compress);
    } else {
        cg_writer_init_file(t->w, t->f, t->o->compress);
    }
    rc = cg_write_profile(t->w, t->P, t->o);
    if (rc == CG_EIO)
        snprintf(t->msg, t->size, "%s%s%s", path ? path : "",
                 path ? ": " : "", strerror(t->w->err));
    else if (rc != CG_OK)
        snprintf(t->msg, t->size, "%s%sout of memory", path ? path : "",
                 path ? ": " : "");
    cg_writer_free(t->w);
    if (path) {
        if (rc == CG_OK)
            rc = cg_atomic_commit(&a, t->msg, t->size);
        else
            cg_atomic_abort(&a);
    }
    return rc;
}

int cg_write_profile_to(CgWriter *w, const CgProfile *P,
                        const CgWriteOpts *o, const char *path, FILE *f,
                        char *msg, size_t size)
{
    To t;
    t.w = w;
    t.P = P;
    t.o = o;
    t.path = path;
    t.f = f;
    t.msg = msg;
    t.size = size;
    return cg_xfsz_guarded(write_to, &t);
}
