/* Folded stacks into a trie of frames, merged as the lines come
 * (cg_folded.h). */
#include "cg_folded.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COUNT ((size_t)0x7fffffff)

void cg_folded_free(CgFolded *f)
{
    free(f->nodes);
    free(f->slots);
    free(f->arena);
    free(f->off);
    free(f->len);
    free(f->nslot);
    free(f->tmp);
    free(f->seen);
    memset(f, 0, sizeof *f);
}

/* A 64-bit hash of bytes, eight at a time. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
        s += 8;
        n -= 8;
    }
    if (n > 0) {
        uint64_t w = 0;
        memcpy(&w, s, n);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    }
    h ^= h >> 29;
    h *= 0x94d049bb133111ebu;
    return h ^ (h >> 32);
}

static uint64_t hash_pair(int32_t parent, int32_t name)
{
    uint64_t h = ((uint64_t)(uint32_t)parent << 32) | (uint32_t)name;
    h *= 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
}

/* Doubles the name hash (or makes its first 1,024 slots). */
static int grow_names_hash(CgFolded *f)
{
    size_t n = f->nnslots ? f->nnslots * 2 : 1024, k;
    int32_t *t = calloc(n, sizeof *t);
    if (!t)
        return CG_ENOMEM;
    for (k = 0; k < f->nnames; k++) {
        size_t i = (size_t)hash_bytes(f->arena + f->off[k], f->len[k]) & (n - 1);
        while (t[i])
            i = (i + 1) & (n - 1);
        t[i] = (int32_t)k + 1;
    }
    free(f->nslot);
    f->nslot = t;
    f->nnslots = n;
    return CG_OK;
}

/* The number of name s[0, n), made when new; -1 and *rc on failure. */
static int32_t intern(CgFolded *f, const char *s, size_t n, int *rc)
{
    uint64_t h = hash_bytes(s, n);
    size_t i;
    int32_t k;
    if ((f->nnames + 1) * 2 > f->nnslots && (*rc = grow_names_hash(f)) != CG_OK)
        return -1;
    for (i = (size_t)h & (f->nnslots - 1); f->nslot[i]; i = (i + 1) & (f->nnslots - 1)) {
        k = f->nslot[i] - 1;
        if (f->len[k] == n && memcmp(f->arena + f->off[k], s, n) == 0)
            return k;
    }
    if (f->nnames >= MAX_COUNT || n > 0xffffffffu) {
        *rc = CG_ELIMIT;
        return -1;
    }
    if (CG_GROW(f->arena, f->arena_cap, f->arena_len + n + 1) ||
        CG_GROW(f->off, f->names_cap, f->nnames + 1) ||
        CG_GROW(f->len, f->len_cap, f->nnames + 1)) {
        *rc = CG_ENOMEM;
        return -1;
    }
    memcpy(f->arena + f->arena_len, s, n);
    k = (int32_t)f->nnames++;
    f->off[k] = f->arena_len;
    f->len[k] = (uint32_t)n;
    f->arena_len += n;
    f->nslot[i] = k + 1;
    return k;
}

/* Doubles the node hash (or makes its first 1,024 slots). */
static int grow_nodes_hash(CgFolded *f)
{
    size_t n = f->nslots ? f->nslots * 2 : 1024, k;
    CgFoldedSlot *t = calloc(n, sizeof *t);
    if (!t)
        return CG_ENOMEM;
    for (k = 0; k < f->nslots; k++) {
        size_t i;
        if (!f->slots[k].node)
            continue;
        for (i = (size_t)hash_pair(f->slots[k].parent, f->slots[k].name) & (n - 1); t[i].node;
             i = (i + 1) & (n - 1)) {
        }
        t[i] = f->slots[k];
    }
    free(f->slots);
    f->slots = t;
    f->nslots = n;
    return CG_OK;
}

/* The node of name under parent (-1: a root), made when new. */
static int32_t child(CgFolded *f, int32_t parent, int32_t name, int *rc)
{
    size_t i;
    int32_t k;
    CgFoldedNode *nd;
    if ((f->n + 1) * 2 > f->nslots && (*rc = grow_nodes_hash(f)) != CG_OK)
        return -1;
    for (i = (size_t)hash_pair(parent, name) & (f->nslots - 1); f->slots[i].node;
         i = (i + 1) & (f->nslots - 1)) {
        if (f->slots[i].parent == parent && f->slots[i].name == name)
            return f->slots[i].node - 1;
    }
    if (f->n >= MAX_COUNT) {
        *rc = CG_ELIMIT;
        return -1;
    }
    if (CG_GROW(f->nodes, f->cap, f->n + 1)) {
        *rc = CG_ENOMEM;
        return -1;
    }
    k = (int32_t)f->n++;
    nd = &f->nodes[k];
    nd->parent = parent;
    nd->first = nd->last = nd->next = -1;
    nd->name = name;
    nd->depth = parent < 0 ? 1 : f->nodes[parent].depth + 1;
    nd->self = nd->total = 0;
    if (parent >= 0) {
        CgFoldedNode *up = &f->nodes[parent];
        if (up->last >= 0)
            f->nodes[up->last].next = k;
        else
            up->first = k;
        up->last = k;
    } else {
        if (f->root_last > 0)
            f->nodes[f->root_last - 1].next = k;
        f->root_last = k + 1;
    }
    f->slots[i].parent = parent;
    f->slots[i].name = name;
    f->slots[i].node = k + 1;
    return k;
}

/* The name of frame s[0, n) unescaped: `\\`, `\;`, `\n`, `\r`; another
 * backslash is kept with what follows it. */
static int32_t frame_name(CgFolded *f, const char *s, size_t n, int esc, int *rc)
{
    size_t j, m = 0;
    if (!esc)
        return intern(f, s, n, rc);
    if (CG_GROW(f->tmp, f->tmp_cap, n + 1)) {
        *rc = CG_ENOMEM;
        return -1;
    }
    for (j = 0; j < n; j++) {
        char c = s[j];
        if (c == '\\' && j + 1 < n) {
            char x = s[++j];
            if (x == 'n')
                c = '\n';
            else if (x == 'r')
                c = '\r';
            else if (x == '\\' || x == ';')
                c = x;
            else
                f->tmp[m++] = '\\', c = x;
        }
        f->tmp[m++] = c;
    }
    return intern(f, f->tmp, m, rc);
}

/* Is node the trie's node of frames s[0, n) (no backslash in them)?
 * Checked from the leaf up, a frame at a time. */
static int same_path(const CgFolded *f, int32_t node, const char *s, size_t n)
{
    size_t e = n;
    while (node >= 0) {
        const CgFoldedNode *nd = &f->nodes[node];
        size_t st = e, len;
        while (st > 0 && s[st - 1] != ';')
            st--;
        len = e - st;
        if (f->len[nd->name] != len || memcmp(f->arena + f->off[nd->name], s + st, len) != 0)
            return 0;
        node = nd->parent;
        if (st == 0)
            return node < 0;
        e = st - 1;
    }
    return 0;
}

/* Doubles the table of lines seen (or makes its first 1,024 slots). */
static int grow_seen(CgFolded *f)
{
    size_t n = f->seen_slots ? f->seen_slots * 2 : 1024, k, i;
    CgFoldedLine *t = malloc(n * sizeof *t);
    if (!t)
        return CG_ENOMEM;
    for (i = 0; i < n; i++)
        t[i].node = -1;
    for (k = 0; k < f->seen_slots; k++) {
        if (f->seen[k].node < 0)
            continue;
        for (i = (size_t)f->seen[k].hash & (n - 1); t[i].node >= 0; i = (i + 1) & (n - 1)) {
        }
        t[i] = f->seen[k];
    }
    free(f->seen);
    f->seen = t;
    f->seen_slots = n;
    return CG_OK;
}

/* The node of a line's frames s[0, n) when seen before, else -1 and
 * *slot where to keep it once found. */
static int32_t seen_node(CgFolded *f, const char *s, size_t n, uint64_t h, size_t *slot)
{
    size_t i;
    for (i = (size_t)h & (f->seen_slots - 1); f->seen[i].node >= 0; i = (i + 1) & (f->seen_slots - 1)) {
        const CgFoldedLine *l = &f->seen[i];
        if (l->hash == h && l->len == n && same_path(f, l->node, s, n))
            return l->node;
    }
    *slot = i;
    return -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static int bad(CgFolded *f, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!is_space(s[i]))
            break;
    if (i == n)
        return CG_OK;               /* a blank line */
    f->bad_line = f->lines;
    f->bad_len = n < sizeof f->bad_text ? n : sizeof f->bad_text;
    memcpy(f->bad_text, s, f->bad_len);
    return CG_EBAD;
}

int cg_folded_line(CgFolded *f, const char *s, size_t n)
{
    size_t e = n, q, d, b, p, i;
    int64_t count = 0;
    int32_t node = -1, name;
    int rc = CG_OK, plain;
    uint64_t h = 0;
    size_t slot = 0;
    f->lines++;
    if (n > f->max_line)
        f->max_line = n;
    if (e > 0 && s[e - 1] == '\r')
        e--;
    for (q = e; q > 0 && (s[q - 1] == ' ' || s[q - 1] == '\t'); q--) {
    }
    for (d = q; d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9'; d--) {
    }
    for (b = d; b > 0 && (s[b - 1] == ' ' || s[b - 1] == '\t'); b--) {
    }
    if (d == q || b == d || b == 0)
        return bad(f, s, e);
    for (i = d; i < q; i++) {
        int v = s[i] - '0';
        if (count > (INT64_MAX - v) / 10)
            return bad(f, s, e);
        count = count * 10 + v;
    }
    if (count > INT64_MAX - f->total)
        return bad(f, s, e);
    plain = b <= 0xffffffffu && memchr(s, '\\', b) == NULL;
    if (plain) {
        if ((f->nseen + 1) * 2 > f->seen_slots && (rc = grow_seen(f)) != CG_OK)
            return rc;
        h = hash_bytes(s, b);
        node = seen_node(f, s, b, h, &slot);
        if (node >= 0)
            goto found;
    }
    for (p = 0;; p = i + 1) {
        int esc = 0;
        for (i = p; i < b && s[i] != ';'; i++) {
            if (s[i] == '\\') {
                esc = 1;
                i++;
            }
        }
        if (i > b)
            i = b;
        name = frame_name(f, s + p, i - p, esc, &rc);
        if (name < 0 || (node = child(f, node, name, &rc)) < 0)
            return rc;
        if (i >= b)
            break;
    }
    if (plain) {
        f->seen[slot].hash = h;
        f->seen[slot].node = node;
        f->seen[slot].len = (uint32_t)b;
        f->nseen++;
    }
found:
    f->nodes[node].self += count;
    f->total += count;
    return CG_OK;
}

int cg_folded_read_buffer(CgFolded *f, const char *buf, size_t len)
{
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t e = nl ? (size_t)(nl - buf) : len;
        int rc = cg_folded_line(f, buf + pos, e - pos);
        if (rc != CG_OK)
            return rc;
        pos = e + 1;
    }
    return CG_OK;
}

#define PIECE ((size_t)1 << 20)

int cg_folded_read_file(CgFolded *f, const char *path)
{
    size_t cap = PIECE, have = 0, start = 0;
    char *buf;
    int fd = open(path, O_RDONLY), rc = CG_OK, saved;
    if (fd < 0)
        return CG_EIO;
    buf = malloc(cap);
    if (!buf) {
        close(fd);
        return CG_ENOMEM;
    }
    for (;;) {
        ssize_t got;
        const char *nl;
        if (have == cap) {
            /* a line longer than the buffer: hold it whole */
            char *nb = start == 0 ? realloc(buf, cap * 2) : buf;
            if (!nb) {
                rc = CG_ENOMEM;
                break;
            }
            if (start == 0)
                buf = nb, cap *= 2;
            else
                memmove(buf, buf + start, have - start), have -= start, start = 0;
        }
        got = read(fd, buf + have, cap - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = CG_EIO;
            break;
        }
        if (got == 0) {
            if (have > start)
                rc = cg_folded_line(f, buf + start, have - start);
            break;
        }
        have += (size_t)got;
        while ((nl = memchr(buf + start, '\n', have - start)) != NULL) {
            size_t e = (size_t)(nl - buf);
            if ((rc = cg_folded_line(f, buf + start, e - start)) != CG_OK)
                break;
            start = e + 1;
        }
        if (rc != CG_OK)
            break;
        if (start == have)
            start = have = 0;
    }
    saved = errno;
    free(buf);
    close(fd);
    errno = saved;
    return rc;
}

void cg_folded_prune(CgFolded *f, int64_t min, int32_t *order, size_t *nkept,
                     int64_t *top_self)
{
    size_t k, i;
    int32_t cur = f->n > 0 ? 0 : -1;
    CgFoldedNode *nodes = f->nodes;
    for (i = 0; i < f->n; i++)
        nodes[i].total = nodes[i].self;
    for (i = f->n; i-- > 0;)
        if (nodes[i].parent >= 0)
            nodes[nodes[i].parent].total += nodes[i].total;
    *top_self = 0;
    k = 0;
    /* node 0 is the first root; the roots are siblings (next) */
    while (cur >= 0) {
        CgFoldedNode *nd = &nodes[cur];
        if (nd->total >= min && nd->total > 0) {
            order[k++] = cur;
            if (nd->first >= 0) {
                cur = nd->first;
                continue;
            }
        } else if (nd->parent >= 0) {
            nodes[nd->parent].self += nd->total;
        } else {
            *top_self += nd->total;
        }
        while (cur >= 0 && nodes[cur].next < 0)
            cur = nodes[cur].parent;
        if (cur >= 0)
            cur = nodes[cur].next;
    }
    *nkept = k;
}
