/* Large arrays (cg_mem.h). */
#define _DEFAULT_SOURCE          /* MAP_ANONYMOUS, MAP_NORESERVE, madvise */
#include "cg_mem.h"

#include <stdlib.h>
#include <string.h>

/* AddressSanitizer sees into heap blocks only: its builds keep the large
 * arrays there, where it checks every access to them and its allocator's
 * limits apply (spec/limits_spec.lua caps one allocation). */
#if defined(__SANITIZE_ADDRESS__)
#define CG_MEM_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CG_MEM_HEAP 1
#endif
#endif

#if defined(__linux__) && !defined(CG_MEM_HEAP)
#include <sys/mman.h>
#include <unistd.h>

#define BIG_STEPS 1              /* blocks grow in place: by steps */
#define LARGE_PAGE ((size_t)2 << 20)
/* a block's header (64 bytes: what cg_mem.h's CG_BIG_PAGE_FIT leaves of
 * a 2 MiB page): the size of its reservation, whether its first 2 MiB
 * are marked for a large page; the array follows */
#define HEAD (LARGE_PAGE - CG_BIG_PAGE_FIT)
#define HEAD_LARGE0 sizeof(size_t)   /* (the flag's offset) */
#define MIN_RESERVE ((size_t)64 << 20)

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) & ~(to - 1);
}

/* The bytes of a block's reservation readable and writable when it holds
 * size bytes: the header and those, in whole 2 MiB stretches (a large page
 * needs one whole, in one mapping). */
static size_t rw_len(size_t size)
{
    return round_up(HEAD + size, LARGE_PAGE);
}

/* Where the large pages of a block expected to end at `end` (its header
 * included) stop: at the last 2 MiB boundary below it, or past it when
 * the stretch it cuts leaves no more than 1/32 of the block unused (a
 * file's text: its last stretch, by far the most of it filled, took 470
 * small pages in a 27 MB file). */
static size_t large_end(size_t end)
{
    size_t up = round_up(end, LARGE_PAGE);
    return up - end <= end / 32 ? up : end & ~(LARGE_PAGE - 1);
}

/* Marks the 2 MiB stretches of the reservation at base from `from` (up
 * to a boundary) to large_end(to) for large pages; returns where they
 * end (0: there are none). */
static size_t advise(char *base, size_t from, size_t to)
{
#ifdef MADV_HUGEPAGE
    from = round_up(from, LARGE_PAGE);
    to = large_end(to);
    if (to > from)
        (void)madvise(base + from, to - from, MADV_HUGEPAGE); /* a hint */
    return to;
#else
    (void)base;
    (void)from;
    (void)to;
    return 0;
#endif
}

static size_t page_size(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pg : 4096;
}

/* Makes the pages of [from, to) of the block at base resident now, in
 * one call, where each would otherwise fault at its first touch (a fault
 * costs twice the page's share of the call, measured; see cg_mem.h); as
 * far as the block holding size bytes is expected to fill them only (an
 * unknown end: none). */
static void populate(char *base, size_t from, size_t size, size_t expect)
{
#ifdef MADV_POPULATE_WRITE
    size_t to = HEAD + (size < expect ? size : expect);
    if (expect == CG_BIG_ANY)
        return;
    from = round_up(from, page_size());
    to = round_up(to, page_size());
    if (to > from)
        (void)madvise(base + from, to - from, MADV_POPULATE_WRITE);
#else
    (void)base;
    (void)from;
    (void)size;
    (void)expect;
#endif
}

/* Where a block of rw readable bytes is expected to end. */
static size_t expected_end(size_t expect, size_t rw)
{
    return expect >= rw - HEAD ? rw : HEAD + expect;
}

/* r bytes of address space (and 2 MiB more, to start on a boundary), or
 * NULL. */
static char *reserve(size_t r)
{
    char *m = mmap(NULL, r + LARGE_PAGE, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

/* A new block of size bytes: a reservation starting on a 2 MiB boundary,
 * of which the first rw_len(size) bytes are readable and writable. With
 * room, the reservation is eight times the size (64 MiB at least), to
 * grow into; where the address space is limited (ulimit -v) and that is
 * not to be had, and without room, it is the size alone. */
static void *map_block(size_t size, size_t expect, int resident, int room)
{
    size_t r, span, rw;
    char *m, *b;
    if (size > ((size_t)1 << 44))     /* 16 TiB: more than any machine */
        return NULL;
    rw = rw_len(size);
    if (room) {
        r = 8 * (HEAD + size);
        r = round_up(r < MIN_RESERVE ? MIN_RESERVE : r, LARGE_PAGE);
    } else {
        r = rw;
    }
    if (!(m = reserve(r)) && (r == rw || !(m = reserve(r = rw))))
        return NULL;
    span = r + LARGE_PAGE;
    b = m + (round_up((size_t)(uintptr_t)m, LARGE_PAGE) - (size_t)(uintptr_t)m);
    if (b > m)
        munmap(m, (size_t)(b - m));
    munmap(b + r, (size_t)(m + span - (b + r)));
    if (mprotect(b, rw, PROT_READ | PROT_WRITE) != 0) {
        munmap(b, r);
        return NULL;
    }
    b[HEAD_LARGE0] = advise(b, 0, expected_end(expect, rw)) >= LARGE_PAGE;
    if (resident)
        populate(b, 0, size, expect);
    memcpy(b, &r, sizeof r);
    return b + HEAD;
}

static size_t reserved(const void *p)
{
    size_t r;
    memcpy(&r, (const char *)p - HEAD, sizeof r);
    return r;
}

/* The block p of old bytes moved to a new one of size bytes (more), or
 * NULL out of memory (p then unchanged). */
static void *move_block(void *p, size_t old, size_t size, size_t expect)
{
    void *q = map_block(size, expect, 1, 1);
    if (q) {
        memcpy(q, p, old);
        munmap((char *)p - HEAD, reserved(p));
    }
    return q;
}

/* A block of old bytes made to hold size bytes (both CG_BIG_MIN or
 * more): in place while its reservation holds it, else moved to a new
 * one. */
static void *resize_block(void *p, size_t old, size_t size, size_t expect)
{
    char *b = (char *)p - HEAD;
    size_t r = reserved(p), a = rw_len(old), n;
    void *q;
    if (size > r - HEAD)
        return move_block(p, old, size, expect);
    n = rw_len(size);
    /* A block made small, its first 2 MiB in small pages as expected
     * then, that grows past 1 MiB now expected to fill them: moved to a
     * new one (a copy of 1 MiB) whose first 2 MiB take a large page. The
     * calls of a 27 MB profile are 3 MB, but only 0.4 MB were expected
     * when they left the heap. (At 1 MiB, not before: expectations made
     * early are rough, and too high for arrays that grow fast at first,
     * such as the functions.) */
    if (!b[HEAD_LARGE0] && HEAD + old < LARGE_PAGE / 2 &&
        HEAD + size >= LARGE_PAGE / 2 &&
        large_end(expected_end(expect, n)) >= LARGE_PAGE &&
        (q = move_block(p, old, size, expect)) != NULL)
        return q;
    if (size > old) {
        if (n > a && mprotect(b + a, n - a, PROT_READ | PROT_WRITE) != 0)
            return NULL;
        advise(b, HEAD + old, expected_end(expect, n));
        populate(b, HEAD + old, size, expect);
    } else {
        /* the pages past the end go back (a large one is split) */
        size_t end = round_up(HEAD + size, page_size());
        if (a > end)
            (void)madvise(b + end, a - end, MADV_DONTNEED);
        if (a > n)
            (void)mprotect(b + n, a - n, PROT_NONE);
    }
    return p;
}

void *cg_big_resize(void *p, size_t old, size_t size, size_t expect)
{
    int was = old >= CG_BIG_MIN, big = size >= CG_BIG_MIN;
    void *q;
    if (!was && !big)
        return realloc(p, size);
    if (was && big)
        return resize_block(p, old, size, expect);
    /* from the heap to a block or back */
    if (!(q = big ? map_block(size, expect, 1, 1) : malloc(size)))
        return NULL;
    if (p)
        memcpy(q, p, old < size ? old : size);
    cg_big_free(p, old);
    return q;
}

void *cg_big_new(size_t size)
{
    return size >= CG_BIG_MIN ? map_block(size, size, 0, 1) : malloc(size);
}

/* (a fresh mapping is zeroed) */
void *cg_big_zalloc(size_t size)
{
    return size >= CG_BIG_MIN ? map_block(size, size, 1, 0) : calloc(1, size);
}

void cg_big_free(void *p, size_t size)
{
    if (!p)
        return;
    if (size >= CG_BIG_MIN)
        munmap((char *)p - HEAD, reserved(p));
    else
        free(p);
}

/* A fixed array (cg_mem.h): its first FIXED_SMALL bytes in small pages,
 * just below a 2 MiB boundary, the rest in whole 2 MiB stretches from
 * there, each made resident in one call when the array reaches it (a
 * profile's stacks: luacheck over Penlight's source makes 8 MB of nodes;
 * a short run's fit in the small pages), or, not resident, where they
 * are first touched. Its reservation halves where the address space is
 * limited (ulimit -v), down to 64 MiB. */
#define FIXED_SMALL ((size_t)64 << 10)

int cg_fixed_init(CgFixed *a, size_t max)
{
    size_t r = round_up(max < MIN_RESERVE ? MIN_RESERVE : max, LARGE_PAGE);
    char *m, *b;
    memset(a, 0, sizeof *a);
    while ((m = reserve(r)) == NULL) {
        if (r <= MIN_RESERVE)
            return -1;
        r /= 2;
    }
    /* the span is r + 2 MiB: the first boundary at FIXED_SMALL or more
     * past m leaves r - FIXED_SMALL at least */
    b = m + (round_up((size_t)(uintptr_t)m + FIXED_SMALL, LARGE_PAGE)
             - FIXED_SMALL - (size_t)(uintptr_t)m);
    a->base = b;
    a->map = m;
    a->span = r + LARGE_PAGE;
    a->cap = (size_t)(m + a->span - b);
    return 0;
}

int cg_fixed_grow(CgFixed *a, size_t need, int resident)
{
    size_t to;
    if (need <= a->size)
        return 0;
    if (need > a->cap)
        return -1;
    to = need <= FIXED_SMALL
             ? FIXED_SMALL
             : FIXED_SMALL + round_up(need - FIXED_SMALL, LARGE_PAGE);
    if (to > a->cap)
        to = a->cap;
    if (mprotect(a->base + a->size, to - a->size, PROT_READ | PROT_WRITE)
        != 0)
        return -1;
#ifdef MADV_HUGEPAGE
    if (resident && to > FIXED_SMALL) {
        size_t from = a->size > FIXED_SMALL ? a->size : FIXED_SMALL;
        (void)madvise(a->base + from, to - from, MADV_HUGEPAGE);
    }
#endif
#ifdef MADV_POPULATE_WRITE
    if (resident)
        (void)madvise(a->base + a->size, to - a->size, MADV_POPULATE_WRITE);
#endif
    a->size = to;
    return 0;
}

void cg_fixed_free(CgFixed *a)
{
    if (a->map != NULL)
        munmap(a->map, a->span);
    memset(a, 0, sizeof *a);
}

#else                            /* elsewhere: the heap alone */

#define BIG_STEPS 0              /* realloc copies: by doubling */

void *cg_big_resize(void *p, size_t old, size_t size, size_t expect)
{
    (void)old;
    (void)expect;
    return realloc(p, size);
}

void *cg_big_new(size_t size)
{
    return malloc(size);
}

void *cg_big_zalloc(size_t size)
{
    return calloc(1, size);
}

void cg_big_free(void *p, size_t size)
{
    (void)size;
    free(p);
}

/* A fixed array on the heap: FIXED_HEAP bytes at most, zeroed at once
 * (calloc's large blocks are fresh mappings) */
#define FIXED_HEAP ((size_t)64 << 20)

int cg_fixed_init(CgFixed *a, size_t max)
{
    memset(a, 0, sizeof *a);
    a->cap = max < FIXED_HEAP ? max : FIXED_HEAP;
    if ((a->base = (char *)calloc(1, a->cap)) == NULL)
        return -1;
    a->map = a->base;
    a->size = a->cap;
    return 0;
}

int cg_fixed_grow(CgFixed *a, size_t need, int resident)
{
    (void)resident;
    return need <= a->cap ? 0 : -1;
}

void cg_fixed_free(CgFixed *a)
{
    free(a->map);
    memset(a, 0, sizeof *a);
}

#endif

/* The capacity that holds need elements of elem bytes, doubling from
 * cap (8 at first); 0 when it would not fit in a size_t. */
static size_t next_cap(size_t cap, size_t need, size_t elem)
{
    size_t ncap = cap ? cap : 8;
    while (ncap < need) {
        if (ncap > ((size_t)-1) / 2 / elem)
            return 0;
        ncap *= 2;
    }
    return ncap;
}

int cg_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;
    if (need <= *cap)
        return 0;
    if (!(ncap = next_cap(*cap, need, elem)) ||
        !(p = realloc(*arr, ncap * elem)))
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

int cg_big_grow(void **arr, size_t *cap, size_t need, size_t elem,
                size_t expect)
{
    size_t ncap;
    void *p;
    if (need <= *cap)
        return 0;
    expect = expect > CG_BIG_ANY / elem ? CG_BIG_ANY : expect * elem;
    if (!(ncap = next_cap(*cap, need, elem)))
        return -1;
    /* a block grows by steps: its reservation takes them without a copy,
     * each step's pages are made resident at once, and no more than one
     * step is left unused */
    if (BIG_STEPS && ncap * elem >= CG_BIG_MIN) {
        size_t bytes;
        if (need > ((size_t)-1 - CG_BIG_STEP) / elem)
            return -1;
        bytes = (need * elem + CG_BIG_STEP - 1) / CG_BIG_STEP * CG_BIG_STEP;
        if (bytes < CG_BIG_MIN)
            bytes = CG_BIG_MIN;
        ncap = (bytes + elem - 1) / elem;
    }
    if (!(p = cg_big_resize(*arr, *cap * elem, ncap * elem, expect)))
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

void *cg_zalloc(size_t n, size_t elem)
{
    size_t bytes;
    void *p;
    if (elem && n > ((size_t)-1) / elem)
        return NULL;
    bytes = n * elem;
    p = malloc(bytes > 0 ? bytes : 1);
    if (p)
        memset(p, 0, bytes);
    return p;
}
