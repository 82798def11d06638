#include "cg_names.h"

#include <stdlib.h>
#include <string.h>

/* Eight bytes a step, each word mixed in by a multiply: names are hashed
 * at every definition, and C++ names run long. Only the tables' order
 * depends on it, never a result. */
uint64_t cg_hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
        s += 8;
        len -= 8;
    }
    if (len) {
        uint64_t w = 0;
        memcpy(&w, s, len);
        h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    }
    return h ^ (h >> 29);
}

static int names_rehash(CgNames *t, size_t ncap)
{
    uint32_t *h = cg_zalloc(ncap, sizeof *h);
    size_t i;
    if (!h)
        return -1;
    for (i = 0; i < t->n; i++) {
        size_t j;
        if (!t->str[i].ptr)
            continue;            /* a stand-in is not looked up by name */
        j = (size_t)cg_hash_bytes(t->str[i].ptr, t->str[i].len) &
            (ncap - 1);
        while (h[j])
            j = (j + 1) & (ncap - 1);
        h[j] = (uint32_t)i + 1;
    }
    free(t->hash);
    t->hash = h;
    t->hcap = ncap;
    return 0;
}

/* The slot of s (hash h) in t's hash: its entry, or the empty slot where
 * it would go. */
static size_t name_slot(const CgNames *t, const char *s, size_t len,
                        uint64_t h)
{
    size_t j = (size_t)h & (t->hcap - 1);
    while (t->hash[j]) {
        const CgStr *c = &t->str[t->hash[j] - 1];
        if (c->len == len && (len == 0 || memcmp(c->ptr, s, len) == 0))
            break;
        j = (j + 1) & (t->hcap - 1);
    }
    return j;
}

int32_t cg_names_find(const CgNames *t, const char *s, size_t len)
{
    size_t j;
    if (!t->hcap)
        return -1;
    j = name_slot(t, s, len, cg_hash_bytes(s, len));
    return (int32_t)t->hash[j] - 1;
}

int32_t cg_names_intern(CgNames *t, const char *s, size_t len)
{
    uint64_t h = cg_hash_bytes(s, len);
    size_t j = 0;                /* s's slot: found, or where it goes */
    if (t->hcap && t->hash[j = name_slot(t, s, len, h)])
        return (int32_t)(t->hash[j] - 1);
    if (t->n >= 0x7ffffffe)
        return -1;
    /* at most 3/4 full: linear probing stays short, and the table of a
     * big profile's 17,000 functions takes 128 KiB, not 256 */
    if ((t->n + 1) * 4 > t->hcap * 3) {
        if (names_rehash(t, t->hcap ? t->hcap * 2 : 64) != 0)
            return -1;
        j = name_slot(t, s, len, h);
    }
    if (CG_GROW(t->str, t->cap, t->n + 1) != 0)
        return -1;
    t->str[t->n].ptr = s;
    t->str[t->n].len = len;
    t->hash[j] = (uint32_t)t->n + 1;
    return (int32_t)t->n++;
}

static size_t id_slot(const CgNames *t, uint64_t id)
{
    size_t j = (size_t)((id * 0x9E3779B97F4A7C15ULL) >> 32) & (t->nids - 1);
    while (t->ids[j] && t->ids[j] >> 32 != id)
        j = (j + 1) & (t->nids - 1);
    return j;
}

/* Doubles the id table (every slot in it was set since the last reset:
 * the set list is rebuilt). */
static int grow_ids(CgNames *t)
{
    size_t ncap = t->nids ? t->nids * 2 : 64, i, k = 0;
    uint64_t *old = t->ids;
    size_t ocap = t->nids;
    uint64_t *p = cg_zalloc(ncap, sizeof *p);
    if (!p || CG_GROW(t->set, t->set_cap, ncap / 4 * 3) != 0) {
        free(p);
        return -1;
    }
    t->ids = p;
    t->nids = ncap;
    for (i = 0; i < ocap; i++) {
        if (old[i]) {
            size_t j = id_slot(t, old[i] >> 32);
            p[j] = old[i];
            t->set[k++] = (uint32_t)j;
        }
    }
    t->nset = k;
    free(old);
    return 0;
}

int cg_names_set_id(CgNames *t, uint64_t id, int32_t index, int32_t *old)
{
    size_t j;
    /* id <= CG_MAX_ID: it fits the upper half of a slot. At most 3/4
     * full, as the names' table: at 1/2, the 17,000 function ids of a big
     * profile took 512 KiB, and the load's peak memory with them */
    if ((t->nset + 1) * 4 > t->nids * 3 && grow_ids(t) != 0)
        return -1;
    j = id_slot(t, id);
    *old = t->ids[j] ? (int32_t)(uint32_t)t->ids[j] - 1 : -1;
    if (!t->ids[j])
        t->set[t->nset++] = (uint32_t)j;
    t->ids[j] = id << 32 | ((uint64_t)(uint32_t)index + 1);
    return 0;
}

int32_t cg_names_get_id(const CgNames *t, uint64_t id)
{
    size_t j;
    if (!t->nids || id > 0xffffffffu)
        return -1;
    j = id_slot(t, id);
    return t->ids[j] ? (int32_t)(uint32_t)t->ids[j] - 1 : -1;
}

void cg_names_free_ids(CgNames *t)
{
    free(t->ids);
    free(t->set);
    t->ids = NULL;
    t->set = NULL;
    t->nids = t->nset = t->set_cap = 0;
}

void cg_names_reset_ids(CgNames *t)
{
    size_t k;
    /* Only the slots set since the last reset: a table grown large must
     * not be cleared whole at each of thousands of separators. */
    for (k = 0; k < t->nset; k++)
        t->ids[t->set[k]] = 0;
    t->nset = 0;
}

int32_t cg_names_placeholder(CgNames *t, uint64_t id, uint64_t line)
{
    int32_t old;
    size_t k, from = t->alias_cap;
    if (t->n >= 0x7ffffffe || CG_GROW(t->str, t->cap, t->n + 1) != 0 ||
        CG_GROW(t->alias, t->alias_cap, t->n + 1) != 0 ||
        CG_GROW(t->stand_id, t->stand_id_cap, t->n + 1) != 0)
        return -1;
    for (k = from; k < t->alias_cap; k++)
        t->alias[k] = -1;
    if (cg_names_set_id(t, id, (int32_t)t->n, &old) != 0)
        return -1;
    t->str[t->n].ptr = NULL;
    t->str[t->n].len = (size_t)line;
    t->stand_id[t->n] = (uint32_t)id;    /* id <= CG_MAX_ID */
    return (int32_t)t->n++;
}

void cg_names_free(CgNames *t)
{
    free(t->alias);
    free(t->stand_id);
    free(t->set);
    free(t->str);
    free(t->hash);
    free(t->ids);
    memset(t, 0, sizeof *t);
}

static size_t key_hash(CgFuncKey k)
{
    uint64_t h = (uint64_t)(uint32_t)k.name * 0x9E3779B97F4A7C15ULL;
    h ^= ((uint64_t)(uint32_t)k.file + 0x632BE59BD9B4E019ULL) *
         0xC2B2AE3D27D4EB4FULL;
    h ^= ((uint64_t)(uint32_t)k.obj + 0x165667B19E3779F9ULL) *
         0x27D4EB2F165667C5ULL;
    return (size_t)(h ^ (h >> 29));
}

static const CgFuncKey *key_at(const void *keys, size_t stride, uint32_t i)
{
    return (const CgFuncKey *)(const void *)((const char *)keys +
                                             (size_t)i * stride);
}

int32_t cg_ftab_find(const CgFuncTab *t, const void *keys, size_t stride,
                     CgFuncKey key)
{
    size_t j;
    if (!t->cap)
        return -1;
    j = key_hash(key) & (t->cap - 1);
    while (t->slot[j]) {
        const CgFuncKey *k = key_at(keys, stride, t->slot[j] - 1);
        if (k->name == key.name && k->file == key.file && k->obj == key.obj)
            return (int32_t)(t->slot[j] - 1);
        j = (j + 1) & (t->cap - 1);
    }
    return -1;
}

int cg_ftab_add(CgFuncTab *t, const void *keys, size_t stride, CgFuncKey key,
                uint32_t index)
{
    size_t j;
    if ((t->n + 1) * 4 > t->cap * 3) {      /* as names_rehash */
        size_t ncap = t->cap ? t->cap * 2 : 256, i;
        uint32_t *s = cg_zalloc(ncap, sizeof *s);
        if (!s)
            return -1;
        for (i = 0; i < t->cap; i++) {
            if (t->slot[i]) {
                size_t m = key_hash(*key_at(keys, stride, t->slot[i] - 1)) &
                           (ncap - 1);
                while (s[m])
                    m = (m + 1) & (ncap - 1);
                s[m] = t->slot[i];
            }
        }
        free(t->slot);
        t->slot = s;
        t->cap = ncap;
    }
    j = key_hash(key) & (t->cap - 1);
    while (t->slot[j])
        j = (j + 1) & (t->cap - 1);
    t->slot[j] = index + 1;
    t->n++;
    return 0;
}

void cg_ftab_free(CgFuncTab *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}

const char *cg_names_id_at(const char *s, const char *e)
{
    const char *p = s + 1;
    if (s >= e || *s != '(')
        return NULL;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    if (p == s + 1 || p >= e || *p != ')')
        return NULL;
    return p + 1;
}

int cg_names_is_composite(const char *s, const char *e)
{
    int parts = 0;
    for (;;) {
        const char *q = cg_names_id_at(s, e);
        if (!q)
            return 0;
        parts++;
        if (q == e)
            return parts >= 2;
        if (*q != '\'')
            return 0;
        s = q + 1;
    }
}
