/* Whether this CPU may run the vector paths of cg_vec.h. */
#include "cg_vec.h"

#include <stdlib.h>
#include <string.h>

int cg_vec_usable(void)
{
#ifdef CG_VEC
    /* -1: not checked yet; loads in several threads may check at once
     * and store the same answer */
    static int usable = -1;
    int u = __atomic_load_n(&usable, __ATOMIC_RELAXED);
    if (u < 0) {
        const char *off = getenv("CALLGRIND_NO_VECTOR");
        __builtin_cpu_init();
        u = !(off && *off && strcmp(off, "0")) &&
            __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vbmi") &&
            __builtin_cpu_supports("avx512vbmi2") &&
            __builtin_cpu_supports("bmi2") &&
            __builtin_cpu_supports("popcnt");
        __atomic_store_n(&usable, u, __ATOMIC_RELAXED);
    }
    return u;
#else
    return 0;
#endif
}
