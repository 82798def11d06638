/* The reader's face: a profile loaded from bytes or from files
 * (cg_load.c), and the options of a load. What it builds is the model of
 * cg_profile.h. */
#ifndef CG_LOAD_H
#define CG_LOAD_H

#include "cg_profile.h"

/* Load options. */
/* CG_MOVING_BASE: the position on the cost line after calls= (and the
 * source line after jump=/jcnd=) becomes the base of the next relative
 * position, as KCachegrind's loader reads it; without it, only a regular
 * cost line does, as valgrind's writer (callgrind/dump.c) writes. */
enum { CG_LENIENT = 1, CG_MOVING_BASE = 2 };

/* Called while loading with the bytes done and the total (of all files);
 * returning non-zero cancels the load (CG_ECANCEL). */
typedef int (*CgProgress)(void *ud, uint64_t done, uint64_t total);

/* How often the progress callback is called, at least: every this many
 * bytes of input. */
#define CG_PROGRESS_STEP ((uint64_t)16 << 20)
/* How often the loader says how far it has read (CgProfile.done). */
#define CG_DONE_STEP ((uint64_t)1 << 20)

typedef struct CgLoadOpts {
    int options;                 /* CG_LENIENT, CG_MOVING_BASE */
    CgProgress progress;         /* NULL: none */
    void *ud;
    int threads;                 /* 1: one thread; 0 or more: a second
                                    one scans ahead (cg_prescan.h) in
                                    texts of CG_PRESCAN_MIN bytes or more */
    size_t chunk;                /* 0: CG_CHUNK; else the worker's chunk
                                    size, used from two chunks on, and
                                    the loader always waits for it
                                    (tests) */
    int share;                   /* with chunk: the loader shares the
                                    scan as by default, taking chunks
                                    the worker has not reached (the
                                    fuzzer) */
    int scalar;                  /* never the vector paths of cg_vec.h
                                    (the fuzzer, timing) */
    uint64_t max_bytes;          /* the most bytes of text a file may
                                    give (0: the default, CG_MAX_BYTES
                                    and cg_source.h) */
} CgLoadOpts;

/* Loads a profile from buf[0..len). The bytes must stay valid and unchanged
 * until cg_profile_free; the profile does not own them.
 * On failure returns non-zero, fills err, and *out is NULL. */
CG_HIDDEN int cg_load(CgProfile **out, const char *buf, size_t len,
                      const char *name, int options, CgError *err);
/* The same with progress. */
CG_HIDDEN int cg_load_text(CgProfile **out, const char *buf, size_t len,
                           const char *name, const CgLoadOpts *opts,
                           CgError *err);

/* Loads files as one profile: each file's parts in the order given,
 * functions merged by (object, file, name), compression ids per file.
 * Each file is read or decompressed once; its bytes are the
 * storage. */
CG_HIDDEN int cg_load_files(CgProfile **out, const char *const *paths,
                            size_t n, const CgLoadOpts *opts, CgError *err);

/* One file: cg_load_files of one path. */
CG_HIDDEN int cg_load_file(CgProfile **out, const char *path, int options,
                           CgError *err);

/* Can loads in this process read cost lines with the vector paths
 * (cg_vec.h)? The CPU has them, valgrind does not hide them,
 * CALLGRIND_NO_VECTOR does not turn them off. */
CG_HIDDEN int cg_load_vector_paths(void);

#endif
