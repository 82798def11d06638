/* gzip compression of a buffer (zlib's deflate), for the pprof writer:
 * profile.proto files are gzip-compressed. Lua-free. */
#ifndef CG_DEFLATE_H
#define CG_DEFLATE_H

#include "cg_common.h"

/* The most bytes cg_gzip can write for n input bytes. */
CG_HIDDEN size_t cg_gzip_bound(size_t n);

/* Compresses in[0..n) as one gzip member into out (room for cap bytes,
 * at least cg_gzip_bound(n)); sets *outlen. Returns 0, -1 when zlib
 * fails (out of memory), or -2 in a build without zlib (NO_ZLIB=1). Holds
 * no memory after it returns. */
CG_HIDDEN int cg_gzip(const unsigned char *in, size_t n, unsigned char *out, size_t cap, size_t *outlen);

#endif
