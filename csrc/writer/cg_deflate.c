/* gzip compression with zlib (linked: -lz; a build with NO_ZLIB=1 has
 * none, and cg_gzip says so). */
#include "cg_deflate.h"

#ifndef CG_NO_ZLIB
#include <limits.h>
#include <zlib.h>
#endif

size_t cg_gzip_bound(size_t n)
{
    /* zlib's conservative deflateBound (any settings), plus the gzip
     * header and trailer (18 bytes) and slack */
    return n + ((n + 7) >> 3) + ((n + 63) >> 6) + 5 + 18 + 64;
}

#ifdef CG_NO_ZLIB
int cg_gzip(const unsigned char *in, size_t n, unsigned char *out, size_t cap, size_t *outlen)
{
    (void)in; (void)n; (void)out; (void)cap;
    *outlen = 0;
    return -2;
}
#else
int cg_gzip(const unsigned char *in, size_t n, unsigned char *out, size_t cap, size_t *outlen)
{
    z_stream z;
    int rc;
    z.zalloc = Z_NULL;
    z.zfree = Z_NULL;
    z.opaque = Z_NULL;
    /* windowBits 15 + 16: a gzip header and trailer around the stream */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    /* the input is fed in pieces that fit zlib's uInt counters */
    z.next_out = out;
    z.avail_out = 0;
    rc = Z_OK;
    {
        size_t in_left = n, out_left = cap;
        z.next_in = (Bytef *)(uintptr_t)in;   /* zlib reads, never writes */
        while (rc == Z_OK) {
            uInt step_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
            uInt step_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
            z.avail_in = step_in;
            z.avail_out = step_out;
            rc = deflate(&z, in_left == step_in ? Z_FINISH : Z_NO_FLUSH);
            in_left -= step_in - z.avail_in;
            out_left -= step_out - z.avail_out;
            if (rc == Z_OK && z.avail_out == 0 && out_left == 0)
                break;                          /* out of room: cannot be */
        }
        *outlen = cap - out_left;
    }
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}
#endif
