/* The callgrind writer (cg_write.h): the emitter, the canonical profile
 * writer and atomic files. */
#define _GNU_SOURCE             /* O_TMPFILE */
#include "cg_write.h"
#include "cg_names.h"
#include "cg_profile.h"
#include "cg_cursor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- output ---- */

static void writer_init(CgWriter *w, int out, int compress)
{
    memset(w, 0, sizeof *w);
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

int cg_writer_status(const CgWriter *w)
{
    return w->status;
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

/* Writes s made safe (cg_write.h, "Names made safe"). */
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

#define NAME_LINE(w, lit, kind, name, key, klen) \
    name_line((w), (lit), sizeof(lit) - 1, (kind), (name), (key), (klen))

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
    PUTS(w, CG_WRITTEN_END);
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

/* Target positions: always absolute; they move nothing. */
static char *put_target(const CgWriter *w, char *p, const uint64_t *pos)
{
    int k;
    for (k = 0; k < w->npos; k++) {
        uint64_t v = pos ? pos[k] : 0;
        *p++ = ' ';
        p = w->hex[k] ? put_hex(p, v) : put_u64(p, v);
    }
    return p;
}

int cg_write_line(CgWriter *w, const uint64_t *pos, const int64_t *cost,
                  size_t ncost)
{
    size_t i, last = ncost;
    char *p;
    while (last > 1 && cost[last - 1] == 0)
        last--;
    if (!(p = reserve(w, (size_t)w->npos * NUM_MAX + last * NUM_MAX + 2)))
        return w->status;
    p = put_pos(w, p, pos);
    for (i = 0; i < last; i++) {
        *p++ = ' ';
        p = put_i64(p, cost[i]);
    }
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
    return w->status;
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
    p = put_target(w, p, target);
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
    return cg_write_line(w, pos, cost, ncost);
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
    p = put_target(w, p, target);
    *p++ = '\n';
    p = put_pos(w, p, pos);
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
    return w->status;
}

/* ---- the profile writer ---- */

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
    h.has_pid = o->pid && (pt->has & CG_PART_PID);
    h.pid = pt->pid;
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
    if (!pw.cost || !pw.call || !pw.col || !pw.sum || !order || !pw.fns)
        goto done;
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
        fail(w, CG_ENOMEM, ENOMEM);
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
    free(order);
    return w->status != CG_OK ? w->status : rc;
}

/* ---- atomic files ---- */

static void msg_errno(char *msg, size_t size, const char *path, int e)
{
    snprintf(msg, size, "%s: %s", path, strerror(e));
}

/* The temporary's name: DIR/.NAME.tmp.PID.N, the first N free. With
 * create, creates it (O_EXCL); else only names a free one. */
static int tmp_name(CgAtomic *a, size_t tlen, int create)
{
    const char *slash = strrchr(a->path, '/');
    size_t dlen = slash ? (size_t)(slash - a->path) + 1 : 0;
    unsigned n;
    int fd = -1;
    for (n = 0; n < 10000; n++) {
        struct stat st;
        snprintf(a->tmp, tlen, "%.*s.%s.tmp.%ld.%u", (int)dlen, a->path,
                 a->path + dlen, (long)getpid(), n);
        if (!create) {
            if (lstat(a->tmp, &st) != 0 && errno == ENOENT)
                return 0;
            continue;
        }
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

int cg_atomic_open(CgAtomic *a, const char *path, char *msg, size_t size)
{
    const char *slash = strrchr(path, '/');
    size_t tlen = strlen(path) + 64;
    struct stat st;
    int have = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    a->fd = -1;
    a->unnamed = 0;
    a->tmp = (char *)malloc(tlen);
    a->path = (char *)malloc(strlen(path) + 1);
    if (!a->tmp || !a->path) {
        free(a->tmp);
        free(a->path);
        a->tmp = a->path = NULL;
        snprintf(msg, size, "%s: out of memory", path);
        return CG_ENOMEM;
    }
    strcpy(a->path, path);
    a->tmp_len = tlen;
    if (!*(slash ? slash + 1 : path)) {
        msg_errno(msg, size, path, EISDIR);
        free(a->tmp);
        a->tmp = NULL;
        cg_atomic_abort(a);
        return CG_EIO;
    }
#ifdef O_TMPFILE
    /* An unnamed file in the target's directory: a writer killed before
     * the end leaves nothing behind. It gets a name at commit (linkat
     * through /proc), so only where /proc is there. */
    if (access("/proc/self/fd", X_OK) == 0) {
        if (slash) {
            size_t dl = (size_t)(slash - path) + 1;
            memcpy(a->tmp, path, dl);
            a->tmp[dl] = '\0';
        } else {
            strcpy(a->tmp, ".");
        }
        a->fd = open(a->tmp, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        a->unnamed = a->fd >= 0;
    }
#endif
    if (a->fd < 0)
        a->fd = tmp_name(a, tlen, 1);
    if (a->fd < 0) {
        msg_errno(msg, size, path, errno);
        free(a->tmp);
        a->tmp = NULL;
        cg_atomic_abort(a);
        return CG_EIO;
    }
    if (a->unnamed) {
        free(a->tmp);
        a->tmp = NULL;
    }
    if (have)
        (void)fchmod(a->fd, st.st_mode & 07777);
    return CG_OK;
}

void cg_atomic_abort(CgAtomic *a)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    if (a->tmp)
        unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    a->tmp = a->path = NULL;
}

int cg_atomic_commit(CgAtomic *a, char *msg, size_t size)
{
    int e = 0, dfd;
    char *dir;
    const char *slash;
    if (fsync(a->fd) != 0 && errno != EINVAL)
        e = errno;
    if (!e && a->unnamed) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->fd);
        if (!(a->tmp = (char *)malloc(a->tmp_len)))
            e = ENOMEM;
        else if (tmp_name(a, a->tmp_len, 0) != 0)
            e = errno;
        else if (linkat(AT_FDCWD, proc, AT_FDCWD, a->tmp,
                        AT_SYMLINK_FOLLOW) != 0)
            e = errno;
        if (e) {
            free(a->tmp);
            a->tmp = NULL;
        }
    }
    if (close(a->fd) != 0 && !e)
        e = errno;
    a->fd = -1;
    if (!e && rename(a->tmp, a->path) != 0)
        e = errno;
    if (e) {
        msg_errno(msg, size, a->path, e);
        cg_atomic_abort(a);
        return CG_EIO;
    }
    /* the rename itself survives a crash once the directory is synced */
    slash = strrchr(a->path, '/');
    dir = slash ? a->path : NULL;
    if (dir) {
        char keep = slash[1];
        a->path[slash - a->path + 1] = '\0';
        dfd = open(a->path, O_RDONLY | O_CLOEXEC);
        a->path[slash - a->path + 1] = keep;
    } else {
        dfd = open(".", O_RDONLY | O_CLOEXEC);
    }
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    free(a->tmp);
    a->tmp = NULL;
    cg_atomic_abort(a);
    return CG_OK;
}

int cg_write_file_atomic(const char *path, const char *buf, size_t len,
                         char *msg, size_t size)
{
    CgAtomic a;
    CgWriter w;
    int rc = cg_atomic_open(&a, path, msg, size);
    if (rc != CG_OK)
        return rc;
    cg_writer_init_fd(&w, a.fd, 0);
    /* large pieces straight from buf: no copy */
    w.buf = (char *)(uintptr_t)buf;
    w.len = w.cap = len;
    rc = drain(&w);
    w.buf = NULL;
    if (rc != CG_OK) {
        msg_errno(msg, size, path, w.err);
        cg_atomic_abort(&a);
        return CG_EIO;
    }
    return cg_atomic_commit(&a, msg, size);
}
