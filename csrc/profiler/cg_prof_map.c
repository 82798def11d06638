/* The collector's hash maps: open addressing with linear probing, keyed
 * by two 64-bit words with backward-shift deletion (Map), or holding
 * record indexes alone (IMap; cg_prof_map.h). */
#include "cg_prof_map.h"

#include <stdlib.h>

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15u ^ (b + 0x632be59bd9b4e019u);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 29;
    return x;
}

int32_t cg_pm_get(const Map *m, uint64_t k1, uint64_t k2)
{
    size_t i;
    if (m->cap == 0)
        return -1;
    for (i = mix(k1, k2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const Slot *s = &m->s[i];
        if (s->val < 0)
            return -1;
        if (s->k1 == k1 && s->k2 == k2)
            return s->val;
    }
}

static void map_insert(Map *m, uint64_t k1, uint64_t k2, int32_t val)
{
    size_t i = mix(k1, k2) & (m->cap - 1);
    while (m->s[i].val >= 0)
        i = (i + 1) & (m->cap - 1);
    m->s[i].k1 = k1;
    m->s[i].k2 = k2;
    m->s[i].val = val;
    m->n++;
}

/* Adds a key known to be absent. Returns -1 out of memory. A map is at
 * most 3/4 full (a record map holds a key per function or call: a load
 * of 1/2 took 48 to 96 bytes each). */
int cg_pm_put(Map *m, uint64_t k1, uint64_t k2, int32_t val)
{
    if ((m->n + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap ? m->cap * 2 : 64, i;
        Slot *old = m->s, *s = malloc(cap * sizeof *s);
        size_t oldcap = m->cap;
        if (s == NULL)
            return -1;
        for (i = 0; i < cap; i++)
            s[i].val = -1;
        m->s = s;
        m->cap = cap;
        m->n = 0;
        for (i = 0; i < oldcap; i++)
            if (old[i].val >= 0)
                map_insert(m, old[i].k1, old[i].k2, old[i].val);
        free(old);
    }
    map_insert(m, k1, k2, val);
    return 0;
}

void cg_pm_del(Map *m, uint64_t k1, uint64_t k2)
{
    size_t mask = m->cap - 1, i, j;
    if (m->cap == 0)
        return;
    for (i = mix(k1, k2) & mask;; i = (i + 1) & mask) {
        if (m->s[i].val < 0)
            return;
        if (m->s[i].k1 == k1 && m->s[i].k2 == k2)
            break;
    }
    m->s[i].val = -1;
    m->n--;
    /* shift back the entries after the hole that probed past it */
    for (j = (i + 1) & mask; m->s[j].val >= 0; j = (j + 1) & mask) {
        size_t home = mix(m->s[j].k1, m->s[j].k2) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->s[i] = m->s[j];
            m->s[j].val = -1;
            i = j;
        }
    }
}

void cg_pm_free(Map *m)
{
    free(m->s);
    m->s = NULL;
    m->cap = m->n = 0;
}

/* ---- maps of record indexes ---- */

uint64_t cg_im_hash(uint64_t k1, uint64_t k2)
{
    return mix(k1, k2);
}

int32_t cg_im_get(const IMap *m, uint64_t h, cg_im_same same,
                  const void *ud, const void *key)
{
    size_t i, mask = m->cap - 1;
    if (m->cap == 0)
        return -1;
    for (i = h & mask; m->s[i] >= 0; i = (i + 1) & mask)
        if (same(ud, m->s[i], key))
            return m->s[i];
    return -1;
}

static void imap_insert(IMap *m, uint64_t h, int32_t val)
{
    size_t i, mask = m->cap - 1;
    for (i = h & mask; m->s[i] >= 0; i = (i + 1) & mask)
        ;
    m->s[i] = val;
    m->n++;
}

/* At most 3/4 full, as a Map: at 4 bytes a slot, 5 to 11 bytes a
 * record. */
int cg_im_put(IMap *m, uint64_t h, int32_t val, cg_im_rehash hash,
              const void *ud)
{
    if ((m->n + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap ? m->cap * 2 : 64, i, oldcap = m->cap;
        int32_t *old = m->s, *s = malloc(cap * sizeof *s);
        if (s == NULL)
            return -1;
        for (i = 0; i < cap; i++)
            s[i] = -1;
        m->s = s;
        m->cap = cap;
        m->n = 0;
        for (i = 0; i < oldcap; i++)
            if (old[i] >= 0)
                imap_insert(m, hash(ud, old[i]), old[i]);
        free(old);
    }
    imap_insert(m, h, val);
    return 0;
}

void cg_im_free(IMap *m)
{
    free(m->s);
    m->s = NULL;
    m->cap = m->n = 0;
}
