/* The emitter (cg_emit.h): callgrind-format text into memory, a file
 * descriptor or a stdio stream. */
#include "cg_emit.h"
#include "cg_names.h"
#include "cg_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- output ---- */

static void writer_init(CgWriter *w, int out, int compress)
{
    memset(w, 0, sizeof *w);
    w->digest = CG_FNV_OFFSET;
    w->out = out;
    w->fd = -1;
    w->compress = compress != 0;
}

void cg_writer_init_mem(CgWriter *w, int compress)
{
    writer_init(w, CG_WOUT_MEM, compress);
}

void cg_writer_init_fd(CgWriter *w, int fd, int compress)
{
    writer_init(w, CG_WOUT_FD, compress);
    w->fd = fd;
}

void cg_writer_init_file(CgWriter *w, FILE *f, int compress)
{
    writer_init(w, CG_WOUT_FILE, compress);
    w->file = f;
}

static void fail(CgWriter *w, int status, int err)
{
    if (w->status == CG_OK) {
        w->status = status;
        w->err = err;
    }
}

/* Sends the buffer out (file targets). */
static int drain(CgWriter *w)
{
    size_t off = 0;
    if (w->status != CG_OK || w->out == CG_WOUT_MEM)
        return w->status;
    if (!w->no_digest)
        w->digest = cg_fnv1a(w->digest, w->buf, w->len);
    if (w->out == CG_WOUT_FILE) {
        if (w->len && fwrite(w->buf, 1, w->len, w->file) != w->len)
            fail(w, CG_EIO, errno ? errno : EIO);
        else
            w->written += w->len;
        w->len = 0;
        return w->status;
    }
    while (off < w->len) {
        ssize_t n = write(w->fd, w->buf + off, w->len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fail(w, CG_EIO, errno);
            break;
        }
        off += (size_t)n;
        w->written += (uint64_t)n;
    }
    w->len = 0;
    return w->status;
}

int cg_writer_flush(CgWriter *w)
{
    drain(w);
    if (w->status == CG_OK && w->out == CG_WOUT_FILE && fflush(w->file))
        fail(w, CG_EIO, errno ? errno : EIO);
    return w->status;
}

void cg_writer_fail(CgWriter *w, int status, int err)
{
    fail(w, status, err);
}

const char *cg_writer_data(const CgWriter *w, size_t *len)
{
    *len = w->len;
    return w->buf;
}

static void ids_free(CgWriteIds *t)
{
    free(t->hash);
    free(t->id);
    free(t->key);
    free(t->part);
    free(t->keys);
    memset(t, 0, sizeof *t);
}

void cg_writer_free(CgWriter *w)
{
    int k;
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
    for (k = 0; k < 3; k++)
        ids_free(&w->ids[k]);
    free(w->kbuf);
    w->kbuf = NULL;
    w->kcap = 0;
    free(w->hint_id);
    free(w->hint_part);
    w->hint_id = w->hint_part = NULL;
    w->hint_cap = 0;
}

/* Room for n more bytes at w->buf + w->len; NULL after an error. */
static char *reserve(CgWriter *w, size_t n)
{
    if (w->status != CG_OK)
        return NULL;
    if (w->cap - w->len >= n)
        return w->buf + w->len;
    if (w->out != CG_WOUT_MEM && w->len) {
        if (drain(w) != CG_OK)
            return NULL;
        if (w->cap >= n)
            return w->buf;
    }
    {
        size_t cap = w->cap ? w->cap : (w->out == CG_WOUT_MEM ? 65536
                                                             : CG_WRITE_BUF);
        char *nb;
        while (cap - w->len < n) {
            if (cap > ((size_t)-1) / 2) {
                fail(w, CG_ENOMEM, ENOMEM);
                return NULL;
            }
            cap *= 2;
        }
        nb = (char *)realloc(w->buf, cap);
        if (!nb) {
            fail(w, CG_ENOMEM, ENOMEM);
            return NULL;
        }
        w->buf = nb;
        w->cap = cap;
    }
    return w->buf + w->len;
}

static void put(CgWriter *w, const char *s, size_t n)
{
    char *p = n ? reserve(w, n) : NULL;
    if (p) {
        memcpy(p, s, n);
        w->len += n;
    }
}

#define PUTS(w, lit) put((w), (lit), sizeof(lit) - 1)

int cg_write_raw(CgWriter *w, const char *s, size_t len)
{
    put(w, s, len);
    return w->status;
}

/* ---- numbers ---- */

static const char digits2[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "68697071727374757677787980818283848586878889909192939495969798"
    "99";

/* Room each number may take. */
#define NUM_MAX 22

static int ndigits(uint64_t v)
{
    int n = 1;
    if (v >= 10000000000000000ull) {
        n += 16;
        v /= 10000000000000000ull;
    }
    if (v >= 100000000) {
        n += 8;
        v /= 100000000;
    }
    if (v >= 10000) {
        n += 4;
        v /= 10000;
    }
    if (v >= 100) {
        n += 2;
        v /= 100;
    }
    return n + (v >= 10);
}

static char *put_u64(char *p, uint64_t v)
{
    int n;
    char *e;
    if (v < 10) {
        *p = (char)('0' + v);
        return p + 1;
    }
    if (v < 100) {
        p[0] = digits2[2 * v];
        p[1] = digits2[2 * v + 1];
        return p + 2;
    }
    n = ndigits(v);
    e = p + n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        e -= 2;
        e[0] = digits2[2 * r];
        e[1] = digits2[2 * r + 1];
    }
    if (v >= 10) {
        e -= 2;
        e[0] = digits2[2 * v];
        e[1] = digits2[2 * v + 1];
    } else {
        *--e = (char)('0' + v);
    }
    return p + n;
}

static char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

static char *put_hex(char *p, uint64_t v)
{
    static const char hx[] = "0123456789abcdef";
    char tmp[16];
    int n = 0;
    *p++ = '0';
    *p++ = 'x';
    do {
        tmp[n++] = hx[v & 15];
        v >>= 4;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* ---- names ---- */

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Two or more "(N)" joined by '\'' (a reader resolves it as ids). */
static int composite_like(CgStr s)
{
    return cg_names_is_composite(s.ptr, s.ptr + s.len);
}

static int needs_escape(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static char *put_esc(char *p, unsigned char c)
{
    static const char hx[] = "0123456789abcdef";
    *p++ = '\\';
    *p++ = 'x';
    *p++ = hx[c >> 4];
    *p++ = hx[c & 15];
    return p;
}

/* Writes s made safe (cg_emit.h, "Names made safe"). */
static void put_safe(CgWriter *w, CgStr s)
{
    size_t i;
    int plain = s.len == 0 || (!is_blank(s.ptr[0]) &&
                               !is_blank(s.ptr[s.len - 1]));
    char *p;
    for (i = 0; plain && i < s.len; i++)
        if (needs_escape((unsigned char)s.ptr[i]))
            plain = 0;
    if (plain && s.len && s.ptr[0] == '(' && composite_like(s))
        plain = 0;
    if (plain) {
        put(w, s.ptr, s.len);
        return;
    }
    if (s.len > ((size_t)-1) / 4 - 8 || !(p = reserve(w, 4 * s.len + 8)))
        return;
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (needs_escape(c) || ((i == 0 || i == s.len - 1) && c == ' ') ||
            (i == 0 && c == '(' && composite_like(s)))
            p = put_esc(p, c);
        else
            *p++ = (char)c;
    }
    w->len = (size_t)(p - w->buf);
}

/* ---- compression ids ---- */

static uint64_t hash_key(const char *k, size_t n)
{
    return cg_hash_bytes(k, n) | 1;      /* never 0 */
}

static int ids_grow(CgWriteIds *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256, i;
    uint64_t *h = (uint64_t *)calloc(cap, sizeof *h);
    uint32_t *id = (uint32_t *)calloc(cap, sizeof *id);
    uint32_t *key = (uint32_t *)calloc(cap, sizeof *key);
    uint32_t *part = (uint32_t *)calloc(cap, sizeof *part);
    if (!h || !id || !key || !part) {
        free(h);
        free(id);
        free(key);
        free(part);
        return -1;
    }
    for (i = 0; i < t->cap; i++) {
        size_t j;
        if (!t->id[i])
            continue;
        j = (size_t)t->hash[i] & (cap - 1);
        while (id[j])
            j = (j + 1) & (cap - 1);
        h[j] = t->hash[i];
        id[j] = t->id[i];
        key[j] = t->key[i];
        part[j] = t->part[i];
    }
    free(t->hash);
    free(t->id);
    free(t->key);
    free(t->part);
    t->hash = h;
    t->id = id;
    t->key = key;
    t->part = part;
    t->cap = cap;
    return 0;
}

/* The id of key k (0 when absent); *slot is where it is or would go. */
static uint32_t ids_find(const CgWriteIds *t, const char *k, size_t n,
                         uint64_t h, size_t *slot)
{
    size_t j;
    if (!t->cap) {
        *slot = 0;
        return 0;
    }
    j = (size_t)h & (t->cap - 1);
    while (t->id[j]) {
        if (t->hash[j] == h) {
            const char *kk = t->keys + t->key[j];
            uint32_t kn;
            memcpy(&kn, kk, sizeof kn);
            if (kn == n && !memcmp(kk + sizeof kn, k, n)) {
                *slot = j;
                return t->id[j];
            }
        }
        j = (j + 1) & (t->cap - 1);
    }
    *slot = j;
    return 0;
}

/* Adds key k with id, defined in part; -1 out of memory. */
static int ids_add(CgWriteIds *t, const char *k, size_t n, uint64_t h,
                   uint32_t id, uint32_t part)
{
    size_t slot;
    uint32_t kn = (uint32_t)n;
    if (n > 0xfffffff0u || t->keys_len > 0xfffffff0u - n - sizeof kn)
        return -1;
    if ((t->n + 1) * 4 > t->cap * 3 && ids_grow(t) != 0)
        return -1;
    if (t->keys_len + n + sizeof kn > t->keys_cap) {
        size_t cap = t->keys_cap ? t->keys_cap : 4096;
        char *nk;
        while (cap < t->keys_len + n + sizeof kn)
            cap *= 2;
        if (!(nk = (char *)realloc(t->keys, cap)))
            return -1;
        t->keys = nk;
        t->keys_cap = cap;
    }
    ids_find(t, k, n, h, &slot);
    t->hash[slot] = h;
    t->id[slot] = id;
    t->part[slot] = part;
    t->key[slot] = (uint32_t)t->keys_len;
    memcpy(t->keys + t->keys_len, &kn, sizeof kn);
    memcpy(t->keys + t->keys_len + sizeof kn, k, n);
    t->keys_len += n + sizeof kn;
    t->n++;
    return 0;
}

/* The key of a function: each of object, file, name as a presence byte,
 * then a length and the bytes. In w->kbuf; NULL out of memory. */
static const char *fn_key(CgWriter *w, const CgWriteFn *f, size_t *n)
{
    const CgStr *s[3];
    size_t need = 3 * (1 + sizeof(uint32_t)), i, at = 0;
    s[0] = &f->obj;
    s[1] = &f->file;
    s[2] = &f->name;
    for (i = 0; i < 3; i++)
        need += s[i]->ptr ? s[i]->len : 0;
    if (need > w->kcap) {
        size_t cap = w->kcap ? w->kcap : 256;
        char *nb;
        while (cap < need)
            cap *= 2;
        if (!(nb = (char *)realloc(w->kbuf, cap))) {
            fail(w, CG_ENOMEM, ENOMEM);
            return NULL;
        }
        w->kbuf = nb;
        w->kcap = cap;
    }
    for (i = 0; i < 3; i++) {
        uint32_t len = s[i]->ptr ? (uint32_t)s[i]->len : 0;
        w->kbuf[at++] = s[i]->ptr ? 1 : 0;
        memcpy(w->kbuf + at, &len, sizeof len);
        at += sizeof len;
        if (len) {
            memcpy(w->kbuf + at, s[i]->ptr, len);
            at += len;
        }
    }
    *n = at;
    return w->kbuf;
}

/* "key=" and the name: "(N)" when it has an id in this part, "(N) name"
 * when it gets one, the name alone when not compressing. key names the
 * id (a name, or a function's fn_key). */
static uint32_t name_line(CgWriter *w, const char *eq, size_t eqlen,
                          int kind, CgStr name, const char *key, size_t klen)
{
    CgWriteIds *t = &w->ids[kind];
    uint64_t h;
    uint32_t id;
    size_t slot;
    char *p;
    put(w, eq, eqlen);
    if (name.len == 0 || (!w->compress && !cg_names_id_at(name.ptr,
                                                 name.ptr + name.len))) {
        put_safe(w, name);
        PUTS(w, "\n");
        return 0;
    }
    h = hash_key(key, klen);
    id = ids_find(t, key, klen, h, &slot);
    if (!(p = reserve(w, NUM_MAX + 3)))
        return 0;
    *p++ = '(';
    if (id && t->part[slot] == (uint32_t)w->parts) {
        p = put_u64(p, id);
        *p++ = ')';
        *p++ = '\n';
        w->len = (size_t)(p - w->buf);
        return id;
    }
    if (id) {
        t->part[slot] = (uint32_t)w->parts;      /* defined again */
    } else {
        id = ++w->next_id[kind];
        if (ids_add(t, key, klen, h, id, (uint32_t)w->parts) != 0) {
            fail(w, CG_ENOMEM, ENOMEM);
            return 0;
        }
    }
    p = put_u64(p, id);
    *p++ = ')';
    *p++ = ' ';
    w->len = (size_t)(p - w->buf);
    put_safe(w, name);
    PUTS(w, "\n");
    return id;
}

static void str_line(CgWriter *w, const char *eq, size_t eqlen, int kind,
                     CgStr s)
{
    (void)name_line(w, eq, eqlen, kind, s, s.ptr ? s.ptr : "", s.len);
}

#define STR_LINE(w, lit, kind, s) str_line((w), (lit), sizeof(lit) - 1, \
                                           (kind), (s))

static void fn_line(CgWriter *w, const char *eq, size_t eqlen,
                    const CgWriteFn *f)
{
    size_t n, h = f->hint;
    const char *k;
    uint32_t id;
    char *p;
    if (h && h < w->hint_cap && w->hint_id[h] &&
        w->hint_part[h] == (uint32_t)w->parts) {
        /* an id this part has defined: "(N)" */
        if (!(p = reserve(w, eqlen + NUM_MAX + 3)))
            return;
        memcpy(p, eq, eqlen);
        p += eqlen;
        *p++ = '(';
        p = put_u64(p, w->hint_id[h]);
        *p++ = ')';
        *p++ = '\n';
        w->len = (size_t)(p - w->buf);
        return;
    }
    if (!(k = fn_key(w, f, &n)))
        return;
    id = name_line(w, eq, eqlen, CG_FN, f->name, k, n);
    if (!h || !id || w->status != CG_OK)
        return;
    if (h >= w->hint_cap) {
        size_t cap = w->hint_cap ? w->hint_cap : 1024;
        uint32_t *a, *b;
        while (cap <= h)
            cap *= 2;
        a = (uint32_t *)realloc(w->hint_id, cap * sizeof *a);
        if (a)
            w->hint_id = a;
        b = (uint32_t *)realloc(w->hint_part, cap * sizeof *b);
        if (b)
            w->hint_part = b;
        if (!a || !b) {
            fail(w, CG_ENOMEM, ENOMEM);
            return;
        }
        memset(a + w->hint_cap, 0, (cap - w->hint_cap) * sizeof *a);
        memset(b + w->hint_cap, 0, (cap - w->hint_cap) * sizeof *b);
        w->hint_cap = cap;
    }
    w->hint_id[h] = id;
    w->hint_part[h] = (uint32_t)w->parts;
}

static int str_eq(CgStr a, CgStr b)
{
    if (!a.ptr || !b.ptr)
        return !a.ptr && !b.ptr;
    return a.len == b.len && (a.ptr == b.ptr || !memcmp(a.ptr, b.ptr, a.len));
}

static int fn_eq(const CgWriteFn *a, const CgWriteFn *b)
{
    return str_eq(a->name, b->name) && str_eq(a->file, b->file) &&
           str_eq(a->obj, b->obj);
}

/* ---- header and parts ---- */

int cg_write_begin(CgWriter *w, CgStr creator)
{
    PUTS(w, CG_WRITTEN_HEAD "version: 1\n");
    if (creator.ptr) {
        PUTS(w, "creator: ");
        put_safe(w, creator);
        PUTS(w, "\n");
    }
    return w->status;
}

static void int_line(CgWriter *w, const char *key, size_t klen, int64_t v)
{
    char *p = reserve(w, klen + NUM_MAX + 1);
    if (!p)
        return;
    memcpy(p, key, klen);
    p = put_i64(p + klen, v);
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
}

static void cost_list(CgWriter *w, const int64_t *v, size_t n, int trim)
{
    size_t i, last = n;
    char *p;
    if (trim) {
        while (last > 1 && v[last - 1] == 0)
            last--;
    }
    if (!(p = reserve(w, last * NUM_MAX + 1)))
        return;
    for (i = 0; i < last; i++) {
        *p++ = ' ';
        p = put_i64(p, v[i]);
    }
    w->len = (size_t)(p - w->buf);
}

int cg_write_part(CgWriter *w, const CgWritePart *pt)
{
    size_t i;
    int k;
    if (w->parts++)
        PUTS(w, "\n");
    if (pt->has_pid)
        int_line(w, "pid: ", 5, pt->pid);
    if (pt->cmd.ptr) {
        PUTS(w, "cmd: ");
        put_safe(w, pt->cmd);
        PUTS(w, "\n");
    }
    if (pt->has_number)
        int_line(w, "part: ", 6, pt->number);
    if (pt->has_thread)
        int_line(w, "thread: ", 8, pt->thread);
    for (i = 0; i < pt->ndesc; i++) {
        PUTS(w, "desc: ");
        put_safe(w, pt->desc[i].type);
        PUTS(w, ": ");
        put_safe(w, pt->desc[i].value);
        PUTS(w, "\n");
    }
    w->npos = pt->npos < 0 ? 0 : pt->npos > CG_MAX_POSITIONS
                                     ? CG_MAX_POSITIONS : pt->npos;
    PUTS(w, "positions:");
    for (k = 0; k < w->npos; k++) {
        PUTS(w, " ");
        put(w, pt->posname[k].ptr, pt->posname[k].len);
        w->hex[k] = pt->poskind[k] == CG_POS_INSTR ||
                    pt->poskind[k] == CG_POS_BB;
        w->base[k] = 0;
    }
    PUTS(w, "\n");
    for (i = 0; i < pt->nevent_lines; i++) {
        const CgWriteEvent *e = &pt->event_lines[i];
        PUTS(w, "event: ");
        put(w, e->name.ptr, e->name.len);
        if (e->formula.ptr) {
            PUTS(w, " = ");
            put_safe(w, e->formula);
        }
        if (e->long_name.ptr) {
            PUTS(w, " : ");
            put_safe(w, e->long_name);
        }
        PUTS(w, "\n");
    }
    w->nev = pt->nev;
    if (pt->nev) {
        PUTS(w, "events:");
        for (i = 0; i < pt->nev; i++) {
            PUTS(w, " ");
            put(w, pt->events[i].ptr, pt->events[i].len);
        }
        PUTS(w, "\n");
        if (pt->summary) {
            PUTS(w, "summary:");
            cost_list(w, pt->summary, pt->nev, 0);
            PUTS(w, "\n");
        }
    }
    PUTS(w, "\n");
    w->have_base = 0;
    w->has_ob = w->has_fl = w->has_fn = 0;
    memset(&w->lfile, 0, sizeof w->lfile);
    w->in_part = 1;
    return w->status;
}

int cg_write_totals(CgWriter *w, const int64_t *totals)
{
    if (totals && w->nev) {
        PUTS(w, "totals:");
        cost_list(w, totals, w->nev, 0);
        PUTS(w, "\n");
    }
    w->in_part = 0;
    return w->status;
}

int cg_write_end(CgWriter *w)
{
    char line[sizeof CG_WRITTEN_DIGEST + 18];
    /* the digest of every byte before the end line: sent out already, or
     * still in memory */
    uint64_t h = w->out == CG_WOUT_MEM ? cg_fnv1a(CG_FNV_OFFSET, w->buf, w->len)
                                       : cg_fnv1a(w->digest, w->buf, w->len);
    snprintf(line, sizeof line, "%s%016llx\n", CG_WRITTEN_DIGEST, (unsigned long long)h);
    put(w, line, strlen(line));
    return cg_writer_flush(w);
}

/* ---- records ---- */

int cg_write_fn(CgWriter *w, const CgWriteFn *f)
{
    if (f->obj.ptr && (!w->has_ob || !str_eq(f->obj, w->ob))) {
        STR_LINE(w, "ob=", CG_OBJ, f->obj);
        w->ob = f->obj;
        w->has_ob = 1;
    }
    /* fl= again after an fi=: callgrind_annotate and this library's
     * reader keep the fi= file until the next fl= */
    if (f->file.ptr && (!w->has_fl || !str_eq(f->file, w->fl) ||
                        !str_eq(w->lfile, w->fl))) {
        STR_LINE(w, "fl=", CG_FILE, f->file);
        w->fl = f->file;
        w->has_fl = 1;
    }
    fn_line(w, "fn=", 3, f);
    w->cur = *f;
    w->has_fn = 1;
    w->lfile = w->fl;
    return w->status;
}

int cg_write_fi(CgWriter *w, CgStr file)
{
    if (!file.ptr || str_eq(file, w->lfile))
        return w->status;
    if (str_eq(file, w->fl))
        STR_LINE(w, "fe=", CG_FILE, file);
    else
        STR_LINE(w, "fi=", CG_FILE, file);
    w->lfile = file;
    return w->status;
}

/* The positions, relative to the previous line of the part when
 * compressing; they become the base. */
static char *put_pos(CgWriter *w, char *p, const uint64_t *pos)
{
    int k;
    for (k = 0; k < w->npos; k++) {
        uint64_t v = pos ? pos[k] : 0, b = w->base[k];
        if (k)
            *p++ = ' ';
        if (w->compress && w->have_base) {
            if (v == b) {
                *p++ = '*';
                continue;
            }
            if (v > b && v - b < ((uint64_t)1 << 32)) {
                *p++ = '+';
                p = put_u64(p, v - b);
                w->base[k] = v;
                continue;
            }
            if (v < b && b - v < ((uint64_t)1 << 32)) {
                *p++ = '-';
                p = put_u64(p, b - v);
                w->base[k] = v;
                continue;
            }
        }
        p = w->hex[k] ? put_hex(p, v) : put_u64(p, v);
        w->base[k] = v;
    }
    w->have_base = 1;
    return p;
}

/* Positions written absolute, each after a blank (sep) or the first
 * without one: a call's target, and a call's or a jump's site. They move
 * nothing here, but a site would move the base of a reader that reads
 * KCachegrind's way, so the next cost line is written absolute too
 * (docs/format.md, "Calls and jumps": both readings then agree). */
static char *put_abs(CgWriter *w, char *p, const uint64_t *pos, int sep)
{
    int k;
    for (k = 0; k < w->npos; k++) {
        uint64_t v = pos ? pos[k] : 0;
        if (sep || k)
            *p++ = ' ';
        p = w->hex[k] ? put_hex(p, v) : put_u64(p, v);
    }
    return p;
}

/* A cost line (site: a call's, at absolute positions that leave the
 * base, else a regular one). */
static int put_line(CgWriter *w, const uint64_t *pos, const int64_t *cost,
                    size_t ncost, int site)
{
    size_t i, last = ncost;
    char *p;
    while (last > 1 && cost[last - 1] == 0)
        last--;
    if (!(p = reserve(w, (size_t)w->npos * NUM_MAX + last * NUM_MAX + 2)))
        return w->status;
    if (site) {
        p = put_abs(w, p, pos, 0);
        w->have_base = 0;
    } else {
        p = put_pos(w, p, pos);
    }
    for (i = 0; i < last; i++) {
        *p++ = ' ';
        p = put_i64(p, cost[i]);
    }
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
    return w->status;
}

int cg_write_line(CgWriter *w, const uint64_t *pos, const int64_t *cost,
                  size_t ncost)
{
    return put_line(w, pos, cost, ncost, 0);
}

int cg_write_call(CgWriter *w, const CgWriteFn *callee, uint64_t count,
                  const uint64_t *target, const uint64_t *pos,
                  const int64_t *cost, size_t ncost)
{
    char *p;
    if (callee->obj.ptr && (!w->has_ob || !str_eq(callee->obj, w->ob)))
        STR_LINE(w, "cob=", CG_OBJ, callee->obj);
    if (callee->file.ptr)
        STR_LINE(w, "cfi=", CG_FILE, callee->file);
    fn_line(w, "cfn=", 4, callee);
    if (!(p = reserve(w, 7 + NUM_MAX + (size_t)w->npos * (NUM_MAX + 1) + 1)))
        return w->status;
    memcpy(p, "calls=", 6);
    p = put_u64(p + 6, count);
    p = put_abs(w, p, target, 1);
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
    return put_line(w, pos, cost, ncost, 1);
}

int cg_write_jump(CgWriter *w, int conditional, uint64_t count,
                  uint64_t executed, const CgWriteFn *to, CgStr target_file,
                  const uint64_t *target, const uint64_t *pos)
{
    char *p;
    if (target_file.ptr && !str_eq(target_file, w->lfile))
        STR_LINE(w, "jfi=", CG_FILE, target_file);
    if (to && !(w->has_fn && fn_eq(to, &w->cur)))
        fn_line(w, "jfn=", 4, to);
    if (!(p = reserve(w, 6 + 2 * NUM_MAX + 2 +
                      (size_t)w->npos * (2 * NUM_MAX + 2) + 2)))
        return w->status;
    if (conditional) {
        memcpy(p, "jcnd=", 5);
        p = put_u64(p + 5, count);
        *p++ = '/';
        p = put_u64(p, executed);
    } else {
        memcpy(p, "jump=", 5);
        p = put_u64(p + 5, count);
    }
    p = put_abs(w, p, target, 1);
    *p++ = '\n';
    p = put_abs(w, p, pos, 0);
    w->have_base = 0;
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
    return w->status;
}
