/* Compressed input, found by magic bytes (gzip, zstd, xz). */
#ifndef CG_DECOMPRESS_H
#define CG_DECOMPRESS_H

#include "cg_profile.h"

enum { CG_PLAIN = 0, CG_GZIP = 1, CG_ZSTD = 2, CG_XZ = 3 };

/* The compression of the bytes p[0..n), by their magic bytes. */
CG_HIDDEN int cg_compression(const char *p, size_t n);

/* Decompresses in[0..n) (kind from cg_compression, not CG_PLAIN) into a
 * new large block (cg_mem.h) of *outsize bytes holding *outlen bytes of
 * text (*out; the caller frees it with cg_big_free). limit: the most
 * bytes of text wanted (0: no limit; the fuzzers set one). CG_OK, or
 * CG_EBAD with err->msg "path: gzip: reason", or CG_ENOMEM. */
CG_HIDDEN int cg_decompress(int kind, const char *in, size_t n, size_t limit,
                            const char *path, char **out, size_t *outlen,
                            size_t *outsize, CgError *err);

#endif
