/* What fresh memory costs on this machine: MB mebibytes of a new anonymous
   mapping written once, a byte every 4 KiB, first in 4 KiB pages
   (MADV_NOHUGEPAGE), then in 2 MiB pages (MADV_HUGEPAGE), ROUNDS times.
   Prints the cpu time of each pass and its cost per 4 KiB. The stack
   trie's chunks and the writers' buffers are sized after it
   (bench/README.md, "2026-12-06, night").
   Usage: page_cost [MB [ROUNDS]]   (10 and 3 by default) */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define LARGE ((size_t)2 << 20)

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* one pass: ms of cpu to fault n bytes in, large pages or not */
static double pass(size_t n, int large)
{
    char *m = mmap(NULL, n + LARGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
    double t0, t1;
    size_t i;
    if (m == MAP_FAILED) {
        perror("page_cost: mmap");
        exit(1);
    }
    p = (char *)(((uintptr_t)m + LARGE - 1) & ~(uintptr_t)(LARGE - 1));
    (void)madvise(p, n, large ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    t0 = cpu_now();
    for (i = 0; i < n; i += 4096)
        p[i] = 1;
    t1 = cpu_now();
    munmap(m, n + LARGE);
    return (t1 - t0) * 1e3;
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 10;
    int rounds = argc > 2 ? atoi(argv[2]) : 3, r, large;
    size_t n = mb << 20;
    if (mb == 0 || rounds <= 0) {
        fputs("usage: page_cost [MB [ROUNDS]]\n", stderr);
        return 2;
    }
    for (r = 0; r < rounds; r++)
        for (large = 0; large <= 1; large++) {
            double ms = pass(n, large);
            printf("%zu MiB in %s pages: %.3f ms, %.2f us a 4 KiB page\n", mb,
                   large ? "2 MiB" : "4 KiB", ms, ms * 1e3 / (double)(n / 4096));
        }
    return 0;
}
