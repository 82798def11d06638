/* gzip compression with zlib (opened at the first use, csrc/base/cg_libs.c;
 * a build with NO_ZLIB=1 has none, and cg_gzs_new says so), streamed. */
#include "cg_deflate.h"

#include <stdlib.h>

#ifndef CG_NO_ZLIB
#include <limits.h>
#include "cg_libs.h"
#endif

#ifdef CG_NO_ZLIB
CgGzStream *cg_gzs_new(int *why)
{
    *why = -2;
    return NULL;
}
int cg_gzs_add(CgGzStream *z, const unsigned char *in, size_t n)
{
    (void)z; (void)in; (void)n;
    return -1;
}
int cg_gzs_finish(CgGzStream *z, const unsigned char **out, size_t *outlen)
{
    (void)z;
    *out = NULL;
    *outlen = 0;
    return -1;
}
void cg_gzs_free(CgGzStream *z)
{
    (void)z;
}
#else
struct CgGzStream {
    const CgZlib *zl;
    z_stream z;
    unsigned char *buf;
    size_t len, cap;
    int broken;
};

CgGzStream *cg_gzs_new(int *why)
{
    CgGzStream *g;
    const char *reason;
    const CgZlib *zl = cg_zlib(&reason);
    *why = -3;
    if (zl == NULL)
        return NULL;
    *why = -1;
    if (!(g = calloc(1, sizeof *g)))
        return NULL;
    g->zl = zl;
    if (zl->deflateInit2_(&g->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                          (int)sizeof g->z) != Z_OK) {
        free(g);
        return NULL;
    }
    return g;
}

/* Runs deflate over the input set in g->z with flush until it needs more
 * input (or, with Z_FINISH, until the end), growing the buffer. */
static int pump(CgGzStream *g, int flush)
{
    for (;;) {
        int rc;
        size_t room;
        if (g->cap - g->len < 65536) {
            size_t cap = g->cap ? g->cap * 2 : 262144;
            unsigned char *b = realloc(g->buf, cap);
            if (!b)
                return -1;
            g->buf = b;
            g->cap = cap;
        }
        room = g->cap - g->len;
        if (room > UINT_MAX)
            room = UINT_MAX;
        g->z.next_out = g->buf + g->len;
        g->z.avail_out = (uInt)room;
        rc = g->zl->deflate(&g->z, flush);
        g->len += room - g->z.avail_out;
        if (rc == Z_STREAM_END)
            return 0;
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return -1;
        if (flush != Z_FINISH && g->z.avail_in == 0 && g->z.avail_out != 0)
            return 0;
    }
}

int cg_gzs_add(CgGzStream *g, const unsigned char *in, size_t n)
{
    if (g->broken)
        return -1;
    while (n > 0) {
        uInt step = n > UINT_MAX ? UINT_MAX : (uInt)n;
        g->z.next_in = (Bytef *)(uintptr_t)in;   /* zlib reads, never writes */
        g->z.avail_in = step;
        if (pump(g, Z_NO_FLUSH) != 0) {
            g->broken = 1;
            return -1;
        }
        in += step;
        n -= step;
    }
    return 0;
}

int cg_gzs_finish(CgGzStream *g, const unsigned char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (g->broken)
        return -1;
    g->z.next_in = Z_NULL;
    g->z.avail_in = 0;
    if (pump(g, Z_FINISH) != 0) {
        g->broken = 1;
        return -1;
    }
    *out = g->buf;
    *outlen = g->len;
    return 0;
}

void cg_gzs_free(CgGzStream *g)
{
    if (!g)
        return;
    g->zl->deflateEnd(&g->z);
    free(g->buf);
    free(g);
}
#endif
