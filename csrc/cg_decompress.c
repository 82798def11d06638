/* Compressed input: gzip (zlib), zstd (libzstd) and xz (liblzma), found by
 * their magic bytes and decompressed into one growing buffer that becomes
 * the profile's storage (no second copy of the text). A corrupt or
 * truncated stream is an error "path: gzip: reason", never a partial
 * text. */
#include "cg_decompress.h"
#include "cg_mem.h"

#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

int cg_compression(const char *p, size_t n)
{
    const unsigned char *u = (const unsigned char *)p;
    if (n >= 2 && u[0] == 0x1f && u[1] == 0x8b)
        return CG_GZIP;
    if (n >= 4 && u[0] == 0x28 && u[1] == 0xb5 && u[2] == 0x2f &&
        u[3] == 0xfd)
        return CG_ZSTD;
    if (n >= 6 && !memcmp(u, "\xfd" "7zXZ\0", 6))
        return CG_XZ;
    return CG_PLAIN;
}

static const char *const kind_name[] = { "plain", "gzip", "zstd", "xz" };

/* The output buffer: grows by doubling, up to limit (0: none). */
typedef struct Out {
    char *buf;
    size_t len, cap, limit;
} Out;

/* Room for at least one more byte; -1 out of memory or past the limit. */
static int out_room(Out *o)
{
    char *p;
    size_t cap;
    if (o->len < o->cap)
        return 0;
    if (o->cap > ((size_t)-1) / 2 || (o->limit && o->len >= o->limit))
        return -1;
    cap = o->cap ? o->cap * 2 : 1 << 16;
    if (o->limit && cap > o->limit + 1)
        cap = o->limit + 1;
    if (!(p = cg_big_resize(o->buf, o->cap, cap, CG_BIG_ANY)))
        return -1;
    o->buf = p;
    o->cap = cap;
    return 0;
}

static int bad(CgError *err, const char *path, int kind, const char *why)
{
    err->status = CG_EBAD;
    err->line = 0;
    snprintf(err->msg, sizeof err->msg, "%s: %s: %s", path, kind_name[kind],
             why);
    return CG_EBAD;
}

static int no_memory(CgError *err)
{
    err->status = CG_ENOMEM;
    snprintf(err->msg, sizeof err->msg, "not enough memory");
    return CG_ENOMEM;
}

#define TRUNCATED "unexpected end of stream (truncated?)"

/* gzip, member after member (gzip -c a b > ab writes two). out_room
 * keeps output room, so Z_BUF_ERROR means the input ran out. */
static int gunzip(const char *in, size_t n, Out *o, const char *path,
                  CgError *err)
{
    z_stream z;
    int rc = CG_OK;
    size_t left = n;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return no_memory(err);
    z.next_in = (Bytef *)(uintptr_t)in;
    for (;;) {
        uInt in_chunk = left > 0x40000000u ? 0x40000000u : (uInt)left;
        uInt out_chunk;
        int zr;
        if (out_room(o) != 0) {
            rc = no_memory(err);
            break;
        }
        out_chunk = o->cap - o->len > 0x40000000u ? 0x40000000u
                                                  : (uInt)(o->cap - o->len);
        z.avail_in = in_chunk;
        z.next_out = (Bytef *)o->buf + o->len;
        z.avail_out = out_chunk;
        zr = inflate(&z, Z_NO_FLUSH);
        o->len += out_chunk - z.avail_out;
        left -= in_chunk - z.avail_in;
        if (zr == Z_OK)
            continue;
        if (zr == Z_STREAM_END) {
            if (!left)
                break;
            if (left < 2 || (unsigned char)z.next_in[0] != 0x1f ||
                (unsigned char)z.next_in[1] != 0x8b) {
                rc = bad(err, path, CG_GZIP, "trailing garbage after the "
                         "stream");
                break;
            }
            inflateReset(&z);
            continue;
        }
        if (zr == Z_MEM_ERROR)
            rc = no_memory(err);
        else if (zr == Z_BUF_ERROR)
            rc = bad(err, path, CG_GZIP, TRUNCATED);
        else
            rc = bad(err, path, CG_GZIP, z.msg ? z.msg : "corrupt data");
        break;
    }
    inflateEnd(&z);
    return rc;
}

static int unzstd(const char *in, size_t n, Out *o, const char *path,
                  CgError *err)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    ZSTD_inBuffer ib;
    size_t r = 1;
    int rc = CG_OK;
    if (!z)
        return no_memory(err);
    ib.src = in;
    ib.size = n;
    ib.pos = 0;
    while (ib.pos < ib.size || r != 0) {
        ZSTD_outBuffer ob;
        if (out_room(o) != 0) {
            rc = no_memory(err);
            break;
        }
        ob.dst = o->buf + o->len;
        ob.size = o->cap - o->len;
        ob.pos = 0;
        r = ZSTD_decompressStream(z, &ob, &ib);
        o->len += ob.pos;
        if (ZSTD_isError(r)) {
            if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
                rc = no_memory(err);
            else
                rc = bad(err, path, CG_ZSTD, ZSTD_getErrorName(r));
            break;
        }
        /* all input used, a frame unfinished, and all output flushed */
        if (r != 0 && ib.pos == ib.size && ob.pos < ob.size) {
            rc = bad(err, path, CG_ZSTD, TRUNCATED);
            break;
        }
    }
    ZSTD_freeDStream(z);
    return rc;
}

static const char *lzma_why(lzma_ret r)
{
    switch (r) {
    case LZMA_FORMAT_ERROR:
        return "not in the xz format";
    case LZMA_OPTIONS_ERROR:
        return "unsupported compression options";
    case LZMA_DATA_ERROR:
        return "compressed data is corrupt";
    case LZMA_BUF_ERROR:
        return TRUNCATED;
    default:
        return "decompression failed";
    }
}

static int unxz(const char *in, size_t n, Out *o, const char *path,
                CgError *err)
{
    lzma_stream z = LZMA_STREAM_INIT;
    lzma_ret r;
    int rc = CG_OK;
    if (lzma_stream_decoder(&z, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
        return no_memory(err);
    z.next_in = (const uint8_t *)in;
    z.avail_in = n;
    for (;;) {
        if (out_room(o) != 0) {
            rc = no_memory(err);
            break;
        }
        z.next_out = (uint8_t *)o->buf + o->len;
        z.avail_out = o->cap - o->len;
        {
            size_t before = z.avail_out;
            r = lzma_code(&z, LZMA_FINISH);
            o->len += before - z.avail_out;
        }
        if (r == LZMA_STREAM_END)
            break;
        if (r == LZMA_MEM_ERROR) {
            rc = no_memory(err);
            break;
        }
        if (r != LZMA_OK) {
            rc = bad(err, path, CG_XZ, lzma_why(r));
            break;
        }
    }
    lzma_end(&z);
    return rc;
}

int cg_decompress(int kind, const char *in, size_t n, size_t limit,
                  const char *path, char **out, size_t *outlen,
                  size_t *outsize, CgError *err)
{
    Out o;
    int rc;
    memset(&o, 0, sizeof o);
    o.limit = limit;
    /* a first guess at the size: gzip's trailer says it (mod 2^32), a zstd
     * frame header usually does */
    if (kind == CG_GZIP && n >= 18) {
        const unsigned char *t = (const unsigned char *)in + n - 4;
        o.cap = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 |
                (size_t)t[3] << 24;
        o.cap += 1;              /* one byte spare: Z_STREAM_END is seen */
    } else if (kind == CG_ZSTD) {
        unsigned long long s = ZSTD_getFrameContentSize(in, n);
        if (s != ZSTD_CONTENTSIZE_UNKNOWN && s != ZSTD_CONTENTSIZE_ERROR &&
            s < ((size_t)-1) / 2)
            o.cap = (size_t)s + 1;
    }
    if (!o.cap || o.cap > ((size_t)1 << 40))
        o.cap = n < ((size_t)-1) / 8 ? n * 4 + 4096 : 4096;
    if (limit && o.cap > limit + 1)
        o.cap = limit + 1;
    /* a guess (a gzip trailer may say anything): nothing made resident
     * ahead, large pages where written */
    if (!(o.buf = cg_big_resize(NULL, 0, o.cap, CG_BIG_ANY)))
        return no_memory(err);
    switch (kind) {
    case CG_GZIP:
        rc = gunzip(in, n, &o, path, err);
        break;
    case CG_ZSTD:
        rc = unzstd(in, n, &o, path, err);
        break;
    default:
        rc = unxz(in, n, &o, path, err);
        break;
    }
    if (rc) {
        cg_big_free(o.buf, o.cap);
        return rc;
    }
    if (o.len + 1 < o.cap) {     /* give back the room not used */
        char *p = cg_big_resize(o.buf, o.cap, o.len + 1, o.len + 1);
        if (p) {
            o.buf = p;
            o.cap = o.len + 1;
        }
    }
    *out = o.buf;
    *outlen = o.len;
    *outsize = o.cap;
    return CG_OK;
}
