/* Compressed input, found by magic bytes (gzip, zstd, xz). */
#ifndef CG_DECOMPRESS_H
#define CG_DECOMPRESS_H

#include "cg_load.h"

enum { CG_PLAIN = 0, CG_GZIP = 1, CG_ZSTD = 2, CG_XZ = 3 };

/* The compression of the bytes p[0..n), by their magic bytes. */
CG_HIDDEN int cg_compression(const char *p, size_t n);

/* How a text is read: the most bytes it may have, and progress. */
typedef struct CgReadLimit {
    size_t limit;                /* the most bytes of text (0: none) */
    CgProgress progress;         /* NULL: none; called at least every
                                    CG_PROGRESS_STEP bytes of text */
    void *ud;
} CgReadLimit;

/* Decompresses in[0..n) (kind from cg_compression, not CG_PLAIN) into a
 * new large block (cg_mem.h) of *outsize bytes holding *outlen bytes of
 * text (*out; the caller frees it with cg_big_free). rl (NULL: no limit,
 * no progress): past rl->limit bytes of text, CG_ELIMIT "path:
 * decompressed size exceeds N bytes (opts.max_bytes)"; rl->progress is
 * called with the compressed bytes taken and n, and cancels (CG_ECANCEL
 * "path: load cancelled"). CG_OK, or CG_EBAD with err->msg "path: gzip:
 * reason" (or "path: gzip input needs a build with zlib" when the module
 * was built without it: make NO_ZLIB=1), or CG_ENOMEM. */
CG_HIDDEN int cg_decompress(int kind, const char *in, size_t n,
                            const CgReadLimit *rl, const char *path,
                            char **out, size_t *outlen, size_t *outsize,
                            CgError *err);

#endif
