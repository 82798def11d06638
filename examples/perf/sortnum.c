/* The program examples/perf/perf_spec.lua measures: it makes N
 * pseudo-random numbers, sorts them and prints a checksum. Built with
 * -DSLOW, sort_numbers does about 10% more work (one extra pass), which the
 * spec must catch. */
#include <stdio.h>
#include <stdlib.h>

/* noinline: the functions the spec names must exist in the binary */
#define NOINLINE __attribute__((noinline))

NOINLINE static void fill_numbers(unsigned *v, int n)
{
    unsigned x = 12345u;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        v[i] = (x >> 8) % 100000u;
    }
}

NOINLINE static void sift(unsigned *v, int start, int end)
{
    int root = start;
    while (2 * root + 1 <= end) {
        int child = 2 * root + 1;
        if (child + 1 <= end && v[child] < v[child + 1])
            child++;
        if (v[root] >= v[child])
            return;
        unsigned t = v[root];
        v[root] = v[child];
        v[child] = t;
        root = child;
    }
}

/* Heap sort: the function the budget is on. */
NOINLINE void sort_numbers(unsigned *v, int n)
{
    for (int start = (n - 2) / 2; start >= 0; start--)
        sift(v, start, n - 1);
    for (int end = n - 1; end > 0; end--) {
        unsigned t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift(v, 0, end - 1);
    }
#ifdef SLOW
    /* the regression: a needless check that the result is sorted, four times */
    for (int pass = 0; pass < 4; pass++)
        for (int i = 1; i < n; i++)
            if (v[i - 1] > v[i])
                abort();
#endif
}

NOINLINE static unsigned long checksum(const unsigned *v, int n)
{
    unsigned long s = 0;
    for (int i = 0; i < n; i++)
        s = s * 31u + v[i];
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    unsigned *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return 1;
    fill_numbers(v, n);
    sort_numbers(v, n);
    printf("%lu\n", checksum(v, n));
    free(v);
    return 0;
}
