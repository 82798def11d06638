/* The profiler's hash maps (cg_prof_map.c), keyed by two 64-bit words.
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

#endif
