/* The profiler's hash maps (cg_prof_map.c): keyed by two 64-bit words
 * (Map), or holding only record indexes whose keys are in the records
 * (IMap).
 * Layer 1 of profiler/ (spec/layout_c_spec.lua), beside the Lua 5.4
 * shortcuts and the signals: it uses nothing of the profiler. */
#ifndef CG_PROF_MAP_H
#define CG_PROF_MAP_H

#include "cg_common.h"

/* Open addressing (linear probing, backward-shift deletion). */
typedef struct Slot {
    uint64_t k1, k2;
    int32_t val;                /* -1: empty */
} Slot;

typedef struct Map {
    Slot *s;
    size_t cap, n;              /* cap: 0 or a power of 2 */
} Map;

/* The value of (k1, k2), or -1; add a key known to be absent (-1 out of
 * memory); remove; free. */
CG_HIDDEN int32_t cg_pm_get(const Map *m, uint64_t k1, uint64_t k2);
CG_HIDDEN int cg_pm_put(Map *m, uint64_t k1, uint64_t k2, int32_t val);
CG_HIDDEN void cg_pm_del(Map *m, uint64_t k1, uint64_t k2);
CG_HIDDEN void cg_pm_free(Map *m);

/* A map of record indexes (IMap): open addressing of int32 values (-1:
 * empty), 4 bytes a slot where a Map's are 24; the key is in the record
 * the value indexes, so the caller gives a key's hash (cg_im_hash) and
 * compares a record's key with the one looked for (same), and at growth
 * the hash of a record's key (hash). No deletion: the records stay. */
typedef struct IMap {
    int32_t *s;
    size_t cap, n;              /* cap: 0 or a power of 2 */
} IMap;

typedef int (*cg_im_same)(const void *ud, int32_t val, const void *key);
typedef uint64_t (*cg_im_rehash)(const void *ud, int32_t val);

/* The hash of a key of two 64-bit words (a Map's). */
CG_HIDDEN uint64_t cg_im_hash(uint64_t k1, uint64_t k2);
/* The value whose record has key (hash h), or -1. */
CG_HIDDEN int32_t cg_im_get(const IMap *m, uint64_t h, cg_im_same same,
                            const void *ud, const void *key);
/* Adds val (its key known absent, of hash h); -1 out of memory (the map
 * unchanged). */
CG_HIDDEN int cg_im_put(IMap *m, uint64_t h, int32_t val, cg_im_rehash hash,
                        const void *ud);
CG_HIDDEN void cg_im_free(IMap *m);

#endif
