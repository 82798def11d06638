/* The model: creation, event columns, grouping after the load, freeing. */
#include "cg_model.h"
#include "cg_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

CgProfile *cg_model_new(const char *name)
{
    CgProfile *P = calloc(1, sizeof *P);
    if (!P)
        return NULL;
    if (!(P->name = copy_string(name))) {
        free(P);
        return NULL;
    }
    return P;
}

int cg_model_add_text(CgProfile *P, const char *buf, size_t len, void *src,
                      void (*release)(void *src), const char *name)
{
    CgText *t;
    char *nm;
    if (P->ntexts >= 0xffffffffu ||
        CG_GROW(P->texts, P->texts_cap, P->ntexts + 1) != 0 ||
        !(nm = copy_string(name)))
        return -1;
    t = &P->texts[P->ntexts++];
    t->buf = buf;
    t->len = len;
    t->src = src;
    t->release = release;
    t->name = nm;
    P->len += len;
    return 0;
}

/* The bytes of the self costs: cap rows of stride (at least one value,
 * as they were allocated). */
static size_t self_bytes(size_t cap, size_t stride)
{
    return cap * (stride ? stride : 1) * sizeof(int64_t);
}

/* Copies rows of old stride into a new array of cap rows of new stride,
 * zeroing the new columns (rows past `rows` are set when their function
 * is made). */
static int64_t *restride(const int64_t *old, size_t rows, size_t cap,
                         size_t from, size_t to)
{
    int64_t *p;
    size_t r;
    if (!cap)
        return NULL;
    if (cap > ((size_t)-1) / sizeof *p / (to ? to : 1))
        return NULL;
    p = cg_big_resize(NULL, 0, self_bytes(cap, to), self_bytes(rows, to));
    if (!p)
        return NULL;
    for (r = 0; r < rows; r++) {
        memcpy(p + r * to, old + r * from,
               (from < to ? from : to) * sizeof *p);
        if (to > from)
            memset(p + r * to + from, 0, (to - from) * sizeof *p);
    }
    return p;
}

static int set_stride(CgProfile *P, size_t stride)
{
    int64_t *s = NULL;
    if (P->self_cap && !(s = restride(P->self, P->nfuncs, P->self_cap,
                                      P->stride, stride)))
        return -1;
    cg_big_free(P->self, self_bytes(P->self_cap, P->stride));
    P->self = s;
    P->stride = stride;
    return 0;
}

size_t cg_model_expect(const CgProfile *P, size_t n)
{
    double e;
    if (!P->done || P->done >= P->len)
        return n;
    e = (double)n * (double)P->len / (double)P->done;
    return e < (double)(CG_BIG_ANY / 2) ? (size_t)e : CG_BIG_ANY / 2;
}

int cg_model_reserve_self(CgProfile *P, size_t n)
{
    if (n <= P->self_cap)
        return 0;
    return cg_big_grow((void **)&P->self, &P->self_cap, n,
                       self_bytes(1, P->stride), cg_model_expect(P, n));
}

static uint8_t *put_varint(uint8_t *w, uint64_t u)
{
    while (u >= 0x80) {
        *w++ = (uint8_t)(u | 0x80);
        u >>= 7;
    }
    *w++ = (uint8_t)u;
    return w;
}

/* A call's numbers as varints: count, the positions its flags name, the
 * number of costs, then the costs zigzagged. Call costs are few next to
 * cost lines but wide (one per event): most are small or zero, so this
 * takes a byte or two per number where a struct field took 8. */
int cg_model_add_call(CgProfile *P, const CgCall *c, const CgCallSite *site,
                      const int64_t *v, size_t n)
{
    uint8_t *w;
    size_t i;
    while (n && !v[n - 1])
        n--;                     /* trailing zeros: implied */
    /* at most 10 bytes per value: 5 numbers, the cost count, the costs */
    if (P->ncalls >= 0xffffffffu ||
        n > (((size_t)-1) - P->call_bytes_len) / 10 - 6 ||
        CG_BIG_GROW(P->calls, P->calls_cap, P->ncalls + 1,
                    cg_model_expect(P, P->ncalls + 1)) != 0 ||
        CG_BIG_GROW(P->call_bytes, P->call_bytes_cap,
                    P->call_bytes_len + 10 * (n + 6),
                    cg_model_expect(P, P->call_bytes_len)) != 0)
        return -1;
    P->calls[P->ncalls] = *c;
    P->calls[P->ncalls++].site = P->call_bytes_len;
    w = put_varint(P->call_bytes + P->call_bytes_len, site->count);
    if (c->flags & CG_HAS_ADDR)
        w = put_varint(w, site->addr);
    if (c->flags & CG_HAS_LINE)
        w = put_varint(w, site->line);
    if (c->flags & CG_HAS_TADDR)
        w = put_varint(w, site->taddr);
    if (c->flags & CG_HAS_TLINE)
        w = put_varint(w, site->tline);
    w = put_varint(w, (uint64_t)n);
    for (i = 0; i < n; i++)
        w = put_varint(w, ((uint64_t)v[i] << 1) ^
                          (uint64_t)-(int64_t)((uint64_t)v[i] >> 63));
    P->call_bytes_len = (size_t)(w - P->call_bytes);
    return 0;
}

static uint64_t get_varint(const uint8_t **p)
{
    uint64_t v = 0;
    int shift = 0;
    const uint8_t *q = *p;
    while (*q & 0x80) {
        v |= (uint64_t)(*q++ & 0x7f) << shift;
        shift += 7;
    }
    v |= (uint64_t)*q++ << shift;
    *p = q;
    return v;
}

/* Reads the count and positions of c; returns where its costs start. */
static const uint8_t *read_site(const CgProfile *P, const CgCall *c,
                                CgCallSite *out)
{
    const uint8_t *p = P->call_bytes + c->site;
    out->count = get_varint(&p);
    out->addr = c->flags & CG_HAS_ADDR ? get_varint(&p) : 0;
    out->line = c->flags & CG_HAS_LINE ? get_varint(&p) : 0;
    out->taddr = c->flags & CG_HAS_TADDR ? get_varint(&p) : 0;
    out->tline = c->flags & CG_HAS_TLINE ? get_varint(&p) : 0;
    return p;
}

void cg_call_site(const CgProfile *P, const CgCall *c, CgCallSite *out)
{
    read_site(P, c, out);
}

void cg_call_costs(const CgProfile *P, const CgCall *c, int64_t *out)
{
    CgCallSite site;
    const uint8_t *p = read_site(P, c, &site);
    size_t n = (size_t)get_varint(&p), i;
    for (i = 0; i < n; i++) {
        uint64_t u = get_varint(&p);
        out[i] = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    }
    for (; i < P->stride; i++)
        out[i] = 0;
}

int cg_model_add_event(CgProfile *P, const char *s, size_t len)
{
    if (CG_GROW(P->events, P->events_cap, P->nev + 1) != 0)
        return -1;
    /* exact while there are no cost rows (the events: lines of the header:
     * no restride at the end); doubling once rows must be copied */
    if (P->nev + 1 > P->stride &&
        set_stride(P, !P->nfuncs && !P->ncalls ? P->nev + 1 :
                      P->stride ? P->stride * 2 : 4) != 0)
        return -1;
    P->events[P->nev].ptr = s;
    P->events[P->nev].len = len;
    P->nev++;
    return 0;
}

int cg_error_nomem(CgError *err)
{
    err->status = CG_ENOMEM;
    err->line = 0;
    snprintf(err->msg, sizeof err->msg, "not enough memory");
    return CG_ENOMEM;
}

int cg_event_index(const CgProfile *P, const char *name, size_t len)
{
    size_t i;
    for (i = 0; i < P->nev; i++)
        if (P->events[i].len == len && !memcmp(P->events[i].ptr, name, len))
            return (int)i;
    return -1;
}

static int model_fail(const CgProfile *P, CgError *err, uint64_t line,
                      const char *msg)
{
    memset(err, 0, sizeof *err);
    err->status = CG_EBAD;
    err->line = line;
    if (line)
        snprintf(err->msg, sizeof err->msg, "%s:%llu: %s", P->name,
                 (unsigned long long)line, msg);
    else
        snprintf(err->msg, sizeof err->msg, "%s: %s", P->name, msg);
    return CG_EBAD;
}

/* Rebuilds the key table from the functions' keys. */
static int rebuild_ftab(CgProfile *P)
{
    size_t i;
    cg_ftab_free(&P->ftab);
    for (i = 0; i < P->nfuncs; i++) {
        CgFuncKey k;
        k.obj = P->funcs[i].obj;
        k.file = P->funcs[i].file;
        k.name = P->funcs[i].name;
        if (cg_ftab_add(&P->ftab, P->funcs, sizeof *P->funcs, k,
                        (uint32_t)i) != 0)
            return -1;
    }
    return 0;
}

/* Merges functions: target[i] == i keeps function i, any other value names
 * the kept function it joins (self costs add up). Then compacts. */
static int merge_functions(CgProfile *P, const int32_t *target, CgError *err)
{
    size_t n = P->nfuncs, i, kept = 0, k;
    int32_t *newidx = malloc((n ? n : 1) * sizeof *newidx);
    if (!newidx)
        return CG_ENOMEM;
    for (i = 0; i < n; i++)
        if (target[i] == (int32_t)i)
            newidx[i] = (int32_t)kept++;
    for (i = 0; i < n; i++) {
        int64_t *to, *from;
        if (target[i] == (int32_t)i)
            continue;
        to = P->self + (size_t)target[i] * P->stride;
        from = P->self + i * P->stride;
        for (k = 0; k < P->nev; k++) {
            if (__builtin_add_overflow(to[k], from[k], &to[k])) {
                free(newidx);
                return model_fail(P, err, 0, "the sum of a function's costs "
                                  "does not fit in 64 bits");
            }
        }
        P->funcs[target[i]].flags |= P->funcs[i].flags;
        newidx[i] = newidx[target[i]];
    }
    for (i = 0; i < n; i++) {
        if (target[i] == (int32_t)i && (size_t)newidx[i] != i) {
            P->funcs[newidx[i]] = P->funcs[i];
            memcpy(P->self + (size_t)newidx[i] * P->stride,
                   P->self + i * P->stride, P->stride * sizeof *P->self);
        }
    }
    P->nfuncs = kept;
    for (i = 0; i < P->ncalls; i++) {
        P->calls[i].caller = newidx[P->calls[i].caller];
        P->calls[i].callee = newidx[P->calls[i].callee];
    }
    for (i = 0; i < P->nblocks; i++) {
        P->blocks[i].func = newidx[P->blocks[i].func];
        if (P->blocks[i].jfunc >= 0)
            P->blocks[i].jfunc = newidx[P->blocks[i].jfunc];
    }
    free(newidx);
    return rebuild_ftab(P) ? CG_ENOMEM : CG_OK;
}

static int32_t real_name(const CgNames *t, int32_t i)
{
    return i >= 0 && !t->str[i].ptr ? t->alias[i] : i;
}

/* Ids used and never defined keep the name "(N)", with a warning (in
 * file `name`) at the line that first used them. */
int cg_model_name_orphans(CgProfile *P, const char *name)
{
    static const char *const what[] = { "object", "file", "function" };
    size_t i;
    int k;
    for (k = 0; k < CG_NKINDS; k++) {
        const CgNames *t = &P->names[k];
        size_t n = t->n;
        for (i = 0; i < n; i++) {
            char msg[1024];
            /* from the stand-in, not the id table: a separator may have
             * reset that */
            unsigned long long id;
            char *nm;
            int32_t real;
            if (t->str[i].ptr || t->alias[i] >= 0)
                continue;
            id = t->stand_id[i];
            snprintf(msg, sizeof msg, "%s:%llu: %s id (%llu) is used but "
                     "never defined", name,
                     (unsigned long long)t->str[i].len, what[k], id);
            /* Only a name is lost (callgrind 0.10 omits some): keep "(N)"
             * as the name and say so. */
            if (cg_model_warn_text(P, CG_W_NAME, msg) != 0 ||
                CG_GROW(P->arena, P->arena_cap, P->narena + 1) != 0 ||
                !(nm = malloc(32)))
                return CG_ENOMEM;
            P->arena[P->narena++] = nm;
            P->arena_bytes += 32;
            snprintf(nm, 32, "(%llu)", id);
            real = cg_names_intern(&P->names[k], nm, strlen(nm));
            if (real < 0)
                return CG_ENOMEM;
            P->names[k].alias[i] = real;
        }
    }
    return CG_OK;
}

/* Ids used before their definition (callgrind 0.10 writes those) were
 * stand-ins; give every key its real name (cg_model_name_orphans named
 * those never defined), then merge functions whose keys became equal. */
static int resolve_forward(CgProfile *P, CgError *err)
{
    size_t i;
    int k, any = 0;
    int32_t *target;
    if (cg_model_name_orphans(P, P->name) != CG_OK)
        return CG_ENOMEM;
    for (k = 0; k < CG_NKINDS; k++) {
        const CgNames *t = &P->names[k];
        any |= t->alias != NULL;
    }
    if (!any)
        return CG_OK;
    for (i = 0; i < P->nfuncs; i++) {
        CgFunc *f = &P->funcs[i];
        f->obj = real_name(&P->names[CG_OBJ], f->obj);
        f->file = real_name(&P->names[CG_FILE], f->file);
        f->name = real_name(&P->names[CG_FN], f->name);
    }
    for (i = 0; i < P->ncalls; i++)
        P->calls[i].file = real_name(&P->names[CG_FILE], P->calls[i].file);
    for (i = 0; i < P->nblocks; i++) {
        P->blocks[i].lfile = real_name(&P->names[CG_FILE],
                                       P->blocks[i].lfile);
        P->blocks[i].jfile = real_name(&P->names[CG_FILE],
                                       P->blocks[i].jfile);
    }
    if (rebuild_ftab(P) != 0)
        return CG_ENOMEM;
    if (!(target = malloc((P->nfuncs ? P->nfuncs : 1) * sizeof *target)))
        return CG_ENOMEM;
    for (i = 0; i < P->nfuncs; i++) {
        CgFuncKey key;
        key.obj = P->funcs[i].obj;
        key.file = P->funcs[i].file;
        key.name = P->funcs[i].name;
        target[i] = cg_ftab_find(&P->ftab, P->funcs, sizeof *P->funcs, key);
    }
    {
        int rc = merge_functions(P, target, err);
        free(target);
        return rc;
    }
}

/* Functions named only by a cfn= with no cfi=/cfl= (Xdebug bug #489) get
 * the key (object, caller's file, name) and no body. Where exactly one
 * function of that object and name has a body, the call meant it: map the
 * stand-in onto it. */
static int merge_implicit(CgProfile *P, CgError *err)
{
    size_t i, n = P->nfuncs;
    CgFuncKey *keys;
    int32_t *target, *unique;
    CgFuncTab tab;
    int any = 0, rc = CG_ENOMEM;
    for (i = 0; i < n; i++)
        if ((P->funcs[i].flags & (CG_FN_IMPLICIT | CG_FN_BODY)) ==
            CG_FN_IMPLICIT)
            any = 1;
    if (!any)
        return CG_OK;
    memset(&tab, 0, sizeof tab);
    keys = malloc(n * sizeof *keys);
    target = malloc(n * sizeof *target);
    unique = malloc(n * sizeof *unique);
    if (!keys || !target || !unique)
        goto out;
    /* (object, name) -> the one function with a body, or -2 if several */
    for (i = 0; i < n; i++) {
        int32_t f;
        keys[i].obj = P->funcs[i].obj;
        keys[i].file = 0;
        keys[i].name = P->funcs[i].name;
        unique[i] = -1;
        if (!(P->funcs[i].flags & CG_FN_BODY))
            continue;
        f = cg_ftab_find(&tab, keys, sizeof *keys, keys[i]);
        if (f < 0) {
            if (cg_ftab_add(&tab, keys, sizeof *keys, keys[i],
                            (uint32_t)i) != 0)
                goto out;
            unique[i] = (int32_t)i;
        } else {
            unique[f] = -2;
        }
    }
    for (i = 0; i < n; i++) {
        int32_t f = -1;
        if ((P->funcs[i].flags & (CG_FN_IMPLICIT | CG_FN_BODY)) ==
            CG_FN_IMPLICIT)
            f = cg_ftab_find(&tab, keys, sizeof *keys, keys[i]);
        target[i] = f >= 0 && unique[f] == f ? f : (int32_t)i;
    }
    rc = merge_functions(P, target, err);
out:
    cg_ftab_free(&tab);
    free(keys);
    free(target);
    free(unique);
    return rc;
}

/* Stable counting sort of n rows by their int32_t key in [0, nkeys): the
 * key of row i is at (char *)key + i * stride. Writes the order into perm
 * and each key's range into begin/end. */
static void group(size_t n, size_t nkeys, const int32_t *key, size_t stride,
                  uint32_t *perm, uint32_t *begin, uint32_t *end)
{
    const char *k0 = (const char *)key;
    size_t i;
#define KEY(i) (*(const int32_t *)(const void *)(k0 + (i) * stride))
    for (i = 0; i < nkeys; i++)
        begin[i] = 0;
    for (i = 0; i < n; i++)
        begin[KEY(i)]++;
    {
        uint32_t sum = 0;
        for (i = 0; i < nkeys; i++) {
            uint32_t c = begin[i];
            begin[i] = sum;
            end[i] = sum;
            sum += c;
        }
    }
    for (i = 0; i < n; i++)
        perm[end[KEY(i)]++] = (uint32_t)i;
#undef KEY
}

/* Puts rows of `size` bytes in the order perm gives (row i becomes row
 * perm[i]) in place, following the permutation's cycles; perm is
 * destroyed. tmp has room for one row. No second copy of the array. */
static void permute(void *rows, size_t n, size_t size, uint32_t *perm,
                    void *tmp)
{
    char *a = rows;
    size_t i;
    if (!size)
        return;
    for (i = 0; i < n; i++) {
        size_t j = i;
        if (perm[i] == i)
            continue;
        memcpy(tmp, a + i * size, size);
        for (;;) {
            size_t k = perm[j];
            perm[j] = (uint32_t)j;
            if (k == i) {
                memcpy(a + j * size, tmp, size);
                break;
            }
            memcpy(a + j * size, a + k * size, size);
            j = k;
        }
    }
}

/* Gives back the room a large array (cg_mem.h) has beyond n rows (it may
 * fail: the larger array is then kept). */
static void *shrink(void *p, size_t n, size_t size, size_t *cap)
{
    void *q;
    if (!p || *cap <= n || !n)
        return p;
    if ((q = cg_big_resize(p, *cap * size, n * size, n * size)) == NULL)
        return p;
    *cap = n;
    return q;
}

/* The bytes of an array of n indices (at least one): a large array
 * (cg_mem.h), like the callers index. */
static size_t index_bytes(size_t n)
{
    return (n ? n : 1) * sizeof(uint32_t);
}

/* n indices, their pages resident at once. */
static uint32_t *new_index(size_t n)
{
    return cg_big_resize(NULL, 0, index_bytes(n), index_bytes(n));
}

static int group_all(CgProfile *P)
{
    size_t nf = P->nfuncs, i, big = P->nblocks;
    uint32_t *perm, *b, *e;
    void *tmp;
    int rc = -1;
    if (P->ncalls > big)
        big = P->ncalls;
    perm = new_index(big);
    b = new_index(nf);
    e = new_index(nf);
    tmp = malloc(sizeof(CgCall) + sizeof(CgBlock));
    P->callers = new_index(P->ncalls);
    if (!perm || !b || !e || !tmp || !P->callers)
        goto out;

    /* blocks by function */
    group(P->nblocks, nf, P->blocks ? &P->blocks->func : NULL,
          sizeof *P->blocks, perm, b, e);
    permute(P->blocks, P->nblocks, sizeof *P->blocks, perm, tmp);
    P->blocks = shrink(P->blocks, P->nblocks, sizeof *P->blocks,
                       &P->blocks_cap);
    for (i = 0; i < nf; i++) {
        P->funcs[i].blocks_begin = b[i];
        P->funcs[i].blocks_end = e[i];
    }

    /* calls by caller, in place (their numbers stay where they are) */
    group(P->ncalls, nf, P->calls ? &P->calls->caller : NULL,
          sizeof *P->calls, perm, b, e);
    permute(P->calls, P->ncalls, sizeof *P->calls, perm, tmp);
    P->calls = shrink(P->calls, P->ncalls, sizeof *P->calls, &P->calls_cap);
    P->call_bytes = shrink(P->call_bytes, P->call_bytes_len, 1,
                           &P->call_bytes_cap);
    P->self = shrink(P->self, P->nfuncs, self_bytes(1, P->stride),
                     &P->self_cap);
    for (i = 0; i < nf; i++) {
        P->funcs[i].calls_begin = b[i];
        P->funcs[i].calls_end = e[i];
    }

    /* an index of calls by callee */
    group(P->ncalls, nf, P->calls ? &P->calls->callee : NULL,
          sizeof *P->calls, P->callers, b, e);
    for (i = 0; i < nf; i++) {
        P->funcs[i].callers_begin = b[i];
        P->funcs[i].callers_end = e[i];
    }
    rc = 0;
out:
    cg_big_free(perm, index_bytes(big));
    cg_big_free(b, index_bytes(nf));
    cg_big_free(e, index_bytes(nf));
    free(tmp);
    return rc;
}

const char *const cg_warning_kinds[CG_NWKINDS] = {
    "truncated", "skipped", "mismatch", "unknown", "name", "lost", "changed",
    "calls"
};

int cg_model_warn_text(CgProfile *P, int kind, const char *text)
{
    char *w;
    size_t n = strlen(text) + 1;
    if (P->nwarnings >= CG_MAX_WARNINGS && kind != CG_W_TRUNCATED) {
        P->warnings_dropped[kind]++;
        return 0;
    }
    if (CG_GROW(P->warnings, P->warnings_cap, P->nwarnings + 1) != 0 ||
        !(w = malloc(n)))
        return -1;
    memcpy(w, text, n);
    P->warnings[P->nwarnings].text = w;
    P->warnings[P->nwarnings++].kind = kind;
    return 0;
}

/* The functions grouped by name, in function order within a name (a
 * counting sort): cg_func_lookup finds a name's functions without a scan. */
static int index_names(CgProfile *P)
{
    size_t nn = P->names[CG_FN].n, i;
    uint32_t *start = calloc(nn + 1, sizeof *start);
    uint32_t *by = malloc((P->nfuncs ? P->nfuncs : 1) * sizeof *by);
    if (!start || !by) {
        free(start);
        free(by);
        return -1;
    }
    for (i = 0; i < P->nfuncs; i++)
        start[P->funcs[i].name + 1]++;
    for (i = 0; i < nn; i++)
        start[i + 1] += start[i];
    for (i = 0; i < P->nfuncs; i++)
        by[start[P->funcs[i].name]++] = (uint32_t)i;
    /* start[n] is now the end of name n: shift back by one name */
    for (i = nn; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    free(P->by_name);
    free(P->by_name_start);
    P->by_name = by;
    P->by_name_start = start;
    return 0;
}

int cg_model_finish(CgProfile *P, CgError *err)
{
    int rc = resolve_forward(P, err);
    if (!rc)
        rc = merge_implicit(P, err);
    if (rc)
        return rc;
    /* cost vectors as long as the event list, no longer */
    if (P->stride != P->nev) {
        size_t nf = P->nfuncs;
        int64_t *s = NULL;
        if (nf && P->nev && !(s = restride(P->self, nf, nf, P->stride,
                                           P->nev)))
            return CG_ENOMEM;
        cg_big_free(P->self, self_bytes(P->self_cap, P->stride));
        P->self = s;
        P->self_cap = s ? nf : 0;
        P->stride = P->nev;
    }
    if (group_all(P) != 0 || index_names(P) != 0)
        return CG_ENOMEM;
    return CG_OK;
}

size_t cg_func_lookup(const CgProfile *P, int32_t name, int32_t file,
                      int32_t obj, uint32_t *out, size_t max)
{
    size_t found = 0;
    uint32_t k, end;
    if (name < 0 || (size_t)name >= P->names[CG_FN].n || !P->by_name_start)
        return 0;
    if (file != -2 && obj != -2) {
        CgFuncKey key;
        int32_t f;
        key.obj = obj;
        key.file = file;
        key.name = name;
        f = cg_ftab_find(&P->ftab, P->funcs, sizeof *P->funcs, key);
        if (f < 0)
            return 0;
        if (max)
            out[0] = (uint32_t)f;
        return 1;
    }
    end = P->by_name_start[name + 1];
    for (k = P->by_name_start[name]; k < end; k++) {
        const CgFunc *f = &P->funcs[P->by_name[k]];
        if ((file == -2 || f->file == file) && (obj == -2 || f->obj == obj)) {
            if (found < max)
                out[found] = P->by_name[k];
            found++;
        }
    }
    return found;
}

/* Everything the model holds besides the texts: arrays at their capacity,
 * made-up names, warnings, the call graph once built. */
size_t cg_profile_bytes(const CgProfile *P)
{
    size_t n = sizeof *P, k, i;
    n += P->events_cap * sizeof *P->events;
    n += P->event_defs_cap * sizeof *P->event_defs;
    for (k = 0; k < CG_NKINDS; k++)
        n += P->names[k].cap * sizeof(CgStr) +
             P->names[k].hcap * sizeof(uint32_t) +
             P->names[k].nids * sizeof(uint64_t) +
             P->names[k].alias_cap * sizeof(int32_t) +
             P->names[k].stand_id_cap * sizeof(uint32_t) +
             P->names[k].set_cap * sizeof(uint32_t);
    n += P->arena_cap * sizeof *P->arena + P->arena_bytes;
    n += P->warnings_cap * sizeof *P->warnings;
    for (i = 0; i < P->nwarnings; i++)
        n += strlen(P->warnings[i].text) + 1;
    n += P->texts_cap * sizeof *P->texts + strlen(P->name) + 1;
    for (i = 0; i < P->ntexts; i++)
        n += strlen(P->texts[i].name) + 1;
    n += P->graph_bytes;
    if (P->by_name_start)
        n += (P->nfuncs + P->names[CG_FN].n + 1) * sizeof(uint32_t);
    n += P->ftab.cap * sizeof(uint32_t);
    n += P->funcs_cap * sizeof *P->funcs;
    n += P->self_cap * P->stride * sizeof *P->self;
    n += P->calls_cap * sizeof *P->calls;
    n += P->call_bytes_cap;
    n += P->ncalls * sizeof *P->callers;
    n += P->blocks_cap * sizeof *P->blocks;
    n += P->bases_cap * sizeof *P->bases;
    n += P->parts_cap * sizeof *P->parts;
    for (i = 0; i < P->nparts; i++)
        n += (size_t)P->parts[i].nev * (sizeof(uint32_t) + 3 * sizeof(int64_t));
    n += P->descs_cap * sizeof *P->descs;
    return n;
}

void cg_profile_free(CgProfile *P)
{
    size_t i;
    int k;
    if (!P)
        return;
    free(P->name);
    free(P->events);
    free(P->event_defs);
    for (k = 0; k < CG_NKINDS; k++)
        cg_names_free(&P->names[k]);
    cg_ftab_free(&P->ftab);
    cg_big_free(P->funcs, P->funcs_cap * sizeof *P->funcs);
    cg_big_free(P->self, self_bytes(P->self_cap, P->stride));
    cg_big_free(P->calls, P->calls_cap * sizeof *P->calls);
    cg_big_free(P->call_bytes, P->call_bytes_cap);
    cg_big_free(P->callers, index_bytes(P->ncalls));
    cg_big_free(P->blocks, P->blocks_cap * sizeof *P->blocks);
    cg_big_free(P->bases, P->bases_cap * sizeof *P->bases);
    for (i = 0; i < P->nparts; i++) {
        free(P->parts[i].evmap);
        free(P->parts[i].sum);
        free(P->parts[i].summary);
        free(P->parts[i].totals);
    }
    free(P->parts);
    free(P->descs);
    for (i = 0; i < P->nwarnings; i++)
        free(P->warnings[i].text);
    free(P->warnings);
    for (i = 0; i < P->narena; i++)
        free(P->arena[i]);
    free(P->arena);
    if (P->graph)
        P->graph_free(P->graph);
    free(P->by_name);
    free(P->by_name_start);
    for (i = 0; i < P->ntexts; i++) {
        if (P->texts[i].src)
            P->texts[i].release(P->texts[i].src);
        free(P->texts[i].name);
    }
    free(P->texts);
    free(P);
}
