/* gzip compression of a buffer (zlib's deflate), for the pprof writer:
 * profile.proto files are gzip-compressed. Lua-free. */
#ifndef CG_DEFLATE_H
#define CG_DEFLATE_H

#include "cg_common.h"

/* A gzip stream: input added in pieces, the compressed bytes kept in a
 * buffer that grows as they come (a profile's samples can be hundreds of
 * megabytes before compression and a few after: no piece is kept). */
typedef struct CgGzStream CgGzStream;

/* A new stream, or NULL: out of memory (*why -1), a build without zlib
 * (*why -2), or zlib could not be opened (*why -3: cg_zlib says why). */
CG_HIDDEN CgGzStream *cg_gzs_new(int *why);
/* Adds in[0..n); 0, or -1 (out of memory: the stream is then unusable). */
CG_HIDDEN int cg_gzs_add(CgGzStream *z, const unsigned char *in, size_t n);
/* Ends the stream; *out and *outlen are its bytes, valid until
 * cg_gzs_free. 0, or -1 (out of memory). */
CG_HIDDEN int cg_gzs_finish(CgGzStream *z, const unsigned char **out, size_t *outlen);
/* Frees the stream (NULL: nothing). */
CG_HIDDEN void cg_gzs_free(CgGzStream *z);

#endif
