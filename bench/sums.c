/* The sums the Lua layer asks for, timed without Lua: loads FILE with the
 * core (cg_load_file), then times the totals, the costs by source file of
 * event 1 (one walk of every cost line) and the costs by line of the
 * costliest file (another walk). Prints one line:
 *   sums: load S s; totals S s; by file S s (N files); by line S s (N lines)
 * Built by bench/run.sh with the Lua-free core (csrc/ but binding/ and
 * profiler/). */
#define _POSIX_C_SOURCE 200809L
#include "cg_profile.h"
#include "cg_query.h"
#include "cg_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char *what, int rc)
{
    fprintf(stderr, "sums: %s failed (status %d)\n", what, rc);
    exit(1);
}

int main(int argc, char **argv)
{
    CgProfile *P;
    CgError err;
    CgFileLines fl;
    int64_t *tot, *sum, *scratch;
    size_t nf, i, best = 0;
    double t0, t1, t2, t3, t4;
    int rc;
    if (argc == 2 && !strcmp(argv[1], "--vector")) {
        printf("vector paths (AVX-512 VBMI2, csrc/reader/cg_vec.h): %s\n",
               cg_load_vector_paths() ? "used"
                               : "not used (not on this CPU, or "
                                 "CALLGRIND_NO_VECTOR is set): byte by "
                                 "byte");
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: sums FILE | sums --vector\n");
        return 2;
    }
    t0 = now();
    if (cg_load_file(&P, argv[1], 0, &err) != CG_OK) {
        fprintf(stderr, "sums: %s\n", err.msg);
        return 1;
    }
    t1 = now();
    nf = P->names[CG_FILE].n;
    tot = calloc(P->nev + 1, sizeof *tot);
    sum = calloc(nf + 1, sizeof *sum);
    scratch = calloc(P->stride + 1, sizeof *scratch);
    if (!tot || !sum || !scratch)
        fail("calloc", CG_ENOMEM);
    if ((rc = cg_totals(P, tot)) != CG_OK)
        fail("cg_totals", rc);
    t2 = now();
    if (P->nev && (rc = cg_file_costs(P, 0, NULL, sum, scratch)) != CG_OK)
        fail("cg_file_costs", rc);
    t3 = now();
    for (i = 1; i < nf; i++)
        if (sum[i] > sum[best])
            best = i;
    memset(&fl, 0, sizeof fl);
    if (P->nev && nf &&
        (rc = cg_file_lines(P, (int32_t)best, 0, NULL, &fl, scratch)) != CG_OK)
        fail("cg_file_lines", rc);
    t4 = now();
    printf("sums: load %.3f s; totals %.6f s; by file %.3f s (%zu files); "
           "by line %.3f s (%zu lines)\n", t1 - t0, t2 - t1, t3 - t2, nf,
           t4 - t3, fl.nlines);
    cg_file_lines_free(&fl);
    free(tot);
    free(sum);
    free(scratch);
    cg_profile_free(P);
    return 0;
}
