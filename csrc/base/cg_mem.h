/* The large arrays of a load: the text, the functions, their self
 * costs, the calls and their numbers, the blocks. Below CG_BIG_MIN bytes
 * such an array is on the heap. From it on it lies in a range of address
 * space reserved for it (eight times its size, 64 MiB at least; its size
 * alone where the address space is limited), so it grows in place,
 * without a copy; and the 2 MiB stretches of it that it is expected to
 * fill are in 2 MiB pages (MADV_HUGEPAGE), where the kernel has them.
 * Such a block grows by steps of 64 KiB (CG_BIG_STEP), each made
 * resident in one call (MADV_POPULATE_WRITE) as far as the array is
 * expected to reach, rather than a fault at a time. Builds with
 * AddressSanitizer, and systems but Linux, keep them on the heap.
 *
 * Why: on the machines we measure on, the first touch of a 4 KiB page
 * costs about 10 microseconds (a fault that the hypervisor sees; 4.4 when
 * made resident ahead), that of a 2 MiB page about 120 (0.25 a 4 KiB
 * page's worth). A load of a 27 MB profile builds 8 MB of arrays: 2,000
 * faults on the loader's thread.
 * Only stretches expected to be filled get large pages (and a last one
 * that leaves no more than 1/32 of the array unused), since a large page
 * counts whole in the resident size however little of it is used. An
 * array that leaves the heap expected to stay under 2 MiB, and passes
 * 1 MiB expected to fill them after all, moves to a new block whose
 * first 2 MiB take a large page.
 *
 * Such an array is known by its pointer and its size in bytes: resize and
 * free take the size it has, so every owner keeps it (a capacity times
 * the element size). */
#ifndef CG_MEM_H
#define CG_MEM_H

#include "cg_common.h"

#define CG_BIG_MIN ((size_t)64 << 10)
#define CG_BIG_STEP ((size_t)64 << 10)
/* expect: unknown, take large pages throughout */
#define CG_BIG_ANY ((size_t)-1)

/* A block of size bytes (size > 0) holding the first min(old, size) bytes
 * of p (a block of old bytes, or NULL when old is 0); NULL out of memory,
 * p then unchanged. expect: the bytes it is expected to hold in the end
 * (a hint: the 2 MiB stretches below it take large pages). */
CG_HIDDEN void *cg_big_resize(void *p, size_t old, size_t size,
                              size_t expect);
/* A block of size bytes (size > 0) to be filled from its start, its
 * pages not made resident ahead: they fault where they are first
 * written, on the thread that writes (a text read by the load's second
 * thread: cg_source.h). Large pages as for expect = size. NULL out of
 * memory. */
CG_HIDDEN void *cg_big_new(size_t size);
/* A block of size bytes (size > 0), zeroed, that never grows or moves:
 * from CG_BIG_MIN bytes on its pages are made resident at once, in 2 MiB
 * pages for its whole 2 MiB stretches (a block of CG_BIG_PAGE_FIT bytes
 * takes exactly one); below, on the heap. NULL out of memory. Freed by
 * cg_big_free with the same size. */
CG_HIDDEN void *cg_big_zalloc(size_t size);
/* The bytes a block holds in exactly one 2 MiB page (its header takes 64) */
#define CG_BIG_PAGE_FIT (((size_t)2 << 20) - 64)
/* Frees a block of size bytes (NULL or 0: nothing). */
CG_HIDDEN void cg_big_free(void *p, size_t size);
/* cg_grow for such an array (its size is *cap * elem), expected to hold
 * `expect` elements in the end. */
CG_HIDDEN int cg_big_grow(void **arr, size_t *cap, size_t need, size_t elem,
                          size_t expect);

/* expect is evaluated only when the array must grow (it may cost a
 * division, and most calls find room) */
#define CG_BIG_GROW(arr, cap, need, expect)                                \
    ((need) <= (cap) ? 0                                                   \
                     : cg_big_grow((void **)&(arr), &(cap), (need),        \
                                   sizeof *(arr), (expect)))

/* A fixed array: one that grows in place and never moves (the counting
 * interpreter keeps offsets into the profiler's stacks, which it adds to
 * the array's address). It is a reservation of address space of up to
 * max bytes (cap: what was had), of which the first size bytes are
 * readable, writable and zeroed. Builds with AddressSanitizer, and
 * systems but Linux, have 64 MiB at most, on the heap. */
typedef struct CgFixed {
    char *base;                 /* the array */
    size_t size, cap;           /* usable, reserved (from base) */
    char *map;                  /* the reservation, of span bytes */
    size_t span;
} CgFixed;
/* Reserves the array (empty): 0, or -1 when no reservation was had. */
CG_HIDDEN int cg_fixed_init(CgFixed *a, size_t max);
/* Makes its first need bytes usable: 0, or -1 (past cap, or no memory);
 * resident at once (in 2 MiB pages past its first 64 KiB), or where they
 * are first touched (an array mostly read as zeros, if at all). */
CG_HIDDEN int cg_fixed_grow(CgFixed *a, size_t need, int resident);
/* Frees it (an array never made, zeroed: nothing). */
CG_HIDDEN void cg_fixed_free(CgFixed *a);

#endif
