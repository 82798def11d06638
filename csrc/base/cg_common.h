/* Shared types, limits and helpers of the Lua-free core. */
#ifndef CG_COMMON_H
#define CG_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Every cross-file symbol of the core is hidden; only luaopen_callgrind_core
 * is exported from the module. */
#if defined(__GNUC__) || defined(__clang__)
#define CG_HIDDEN __attribute__((visibility("hidden")))
#else
#define CG_HIDDEN
#endif

/* Status codes of the core. */
enum {
    CG_OK = 0,
    CG_EBAD = 1,           /* the input is not a valid file: kind "format" */
    CG_ENOMEM = 2,         /* malloc failed: raised as Lua's memory error */
    CG_EIO = 3,            /* a system call failed: kind "io" */
    CG_ECANCEL = 4,        /* the progress callback said stop: "cancelled" */
    CG_ETRUNC = 5,         /* the input ends too early: "truncated" */
    CG_ELIMIT = 6          /* the input would take more than a set limit
                              of memory (opts.max_bytes, the bound of
                              made-up names): returned as kind "memory"
                              (CG_ENOMEM is raised) */
};

/* Documented limits (README, "Limits"). Exceeding one is a load error with
 * the file name and line, never an allocation storm. */
#define CG_MAX_EVENTS 4096          /* event columns in one part */
#define CG_MAX_POSITIONS 8          /* subposition columns */
#define CG_MAX_ID 16777215          /* largest (N) compression id */
#define CG_MAX_NAME 1048576         /* bytes in one name */
#define CG_MAX_FUNCS 0x7fffffff     /* distinct functions (int32 indices) */
#define CG_REC_MAX_EV 64            /* events in a stack record (its writer's
                                       batches hold 64 nodes' costs) */

/* Position column kinds. */
enum { CG_POS_INSTR = 0, CG_POS_BB = 1, CG_POS_LINE = 2, CG_POS_OTHER = 3 };

/* Name kinds: one id table each (docs/format.md, "Names"). */
enum { CG_OBJ = 0, CG_FILE = 1, CG_FN = 2, CG_NKINDS = 3 };

/* A run of bytes: into the loaded buffer or the profile's own arena. */
typedef struct CgStr {
    const char *ptr;
    size_t len;
} CgStr;

/* Grows *arr (of elements of size elem) so that it holds at least need
 * elements; *cap is updated. Returns 0 on success, -1 out of memory. */
CG_HIDDEN int cg_grow(void **arr, size_t *cap, size_t need, size_t elem);

#define CG_GROW(arr, cap, need) \
    cg_grow((void **)&(arr), &(cap), (need), sizeof *(arr))

/* n zeroed elements of size elem, for a hash table; NULL out of memory.
 * Unlike calloc, it writes the zeros: a fresh page calloc leaves unwritten
 * is the kernel's shared zero page once a lookup reads it, and the first
 * insert there is then a copy-on-write fault that stops the other thread
 * of a load to flush its TLB (3% of a load's time, measured). */
CG_HIDDEN void *cg_zalloc(size_t n, size_t elem);

#endif
