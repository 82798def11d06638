/* A small workload for `make demo`: hashing, sorting and a recursive
 * function, so the profile has a call graph worth looking at. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NWORDS 20000
#define NBUCKETS 4096

struct entry {
    char word[16];
    int count;
    struct entry *next;
};

static struct entry *table[NBUCKETS];

static unsigned hash(const char *s)
{
    unsigned h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h % NBUCKETS;
}

static void add_word(const char *w)
{
    unsigned h = hash(w);
    struct entry *e;
    for (e = table[h]; e; e = e->next)
        if (strcmp(e->word, w) == 0) {
            e->count++;
            return;
        }
    e = calloc(1, sizeof *e);
    strncpy(e->word, w, sizeof e->word - 1);
    e->count = 1;
    e->next = table[h];
    table[h] = e;
}

static int by_count(const void *a, const void *b)
{
    const struct entry *x = *(const struct entry *const *)a;
    const struct entry *y = *(const struct entry *const *)b;
    return y->count - x->count;
}

static long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
    static struct entry *all[NWORDS];
    char w[16];
    unsigned seed = 12345;
    int i, n = 0;
    for (i = 0; i < NWORDS; i++) {
        seed = seed * 1103515245u + 12345u;
        snprintf(w, sizeof w, "w%u", (seed >> 16) % 3000);
        add_word(w);
    }
    for (i = 0; i < NBUCKETS; i++) {
        struct entry *e;
        for (e = table[i]; e; e = e->next)
            all[n++] = e;
    }
    qsort(all, (size_t)n, sizeof *all, by_count);
    printf("%d distinct words; most frequent %s (%d); fib(20) = %ld\n", n,
           all[0]->word, all[0]->count, fib(20));
    return 0;
}
