/* Compressed input: gzip (zlib), zstd (libzstd) and xz (liblzma), found by
 * their magic bytes and decompressed into one growing buffer that becomes
 * the profile's storage (no second copy of the text). A corrupt or
 * truncated stream is an error "path: gzip: reason", never a partial
 * text; a text past the limit (opts.max_bytes) stops there, so a small
 * file that expands without end (a "bomb") takes bounded memory.
 *
 * The libraries are opened at the first file of their format
 * (csrc/base/cg_libs.c: a process that reads none never maps them); one
 * that cannot be opened is an error "path: zstd: libzstd (libzstd.so.1)
 * could not be loaded: reason". A build without one (make NO_ZLIB=1,
 * NO_ZSTD=1, NO_LZMA=1: CG_NO_ZLIB ...) refuses files of its format,
 * naming the library. */
#define _POSIX_C_SOURCE 200809L
#include "cg_decompress.h"
#include "cg_mem.h"
#include "cg_libs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The output buffer: grows by doubling, up to limit + 1 bytes (one more
 * than allowed: the byte that says the text is too long). */
typedef struct Out {
    char *buf;
    size_t len, cap, limit;      /* limit 0: none */
    size_t n;                    /* compressed bytes */
    size_t report_at;            /* len at which progress is next due */
    const CgReadLimit *rl;
    const char *path;
    CgError *err;
} Out;

#if !defined(CG_NO_ZLIB) || !defined(CG_NO_ZSTD) || !defined(CG_NO_LZMA)
#define CG_SOME_LIB 1            /* (else the helpers below go unused) */
#endif

#ifdef CG_SOME_LIB
static int bad(CgError *err, const char *path, int kind, const char *why)
{
    err->status = CG_EBAD;
    err->line = 0;
    snprintf(err->msg, sizeof err->msg, "%s: %s: %s", path, kind_name[kind],
             why);
    return CG_EBAD;
}

#endif


static int too_long(const Out *o)
{
    o->err->status = CG_ELIMIT;
    o->err->line = 0;
    snprintf(o->err->msg, sizeof o->err->msg, "%s: decompressed size "
             "exceeds %zu bytes (opts.max_bytes)", o->path, o->limit);
    return CG_ELIMIT;
}

#ifdef CG_SOME_LIB
/* Room for at least one more byte: CG_OK, CG_ELIMIT past the limit,
 * CG_ENOMEM. */
static int out_room(Out *o)
{
    char *p;
    size_t cap;
    if (o->limit && o->len > o->limit)
        return too_long(o);
    if (o->len < o->cap)
        return CG_OK;
    if (o->cap > ((size_t)-1) / 2)
        return cg_error_nomem(o->err);
    cap = o->cap ? o->cap * 2 : 1 << 16;
    if (o->limit && cap > o->limit + 1)
        cap = o->limit + 1;
    if (!(p = cg_big_resize(o->buf, o->cap, cap, CG_BIG_ANY)))
        return cg_error_nomem(o->err);
    o->buf = p;
    o->cap = cap;
    return CG_OK;
}

/* The output room for one call of the library: at most CG_PROGRESS_STEP
 * bytes, so progress is called that often (and zlib's unsigned int
 * counts hold it). */
static size_t window(const Out *o)
{
    size_t w = o->cap - o->len;
    if (w > (size_t)CG_PROGRESS_STEP)
        w = (size_t)CG_PROGRESS_STEP;
    return w;
}

/* Reports progress (taken: compressed bytes used so far) when due; CG_OK
 * or CG_ECANCEL. */
static int tick(Out *o, size_t taken)
{
    if (!o->rl || !o->rl->progress || o->len < o->report_at)
        return CG_OK;
    o->report_at = o->len + (size_t)CG_PROGRESS_STEP;
    if (o->rl->progress(o->rl->ud, taken, o->n)) {
        o->err->status = CG_ECANCEL;
        o->err->line = 0;
        snprintf(o->err->msg, sizeof o->err->msg, "%s: load cancelled",
                 o->path);
        return CG_ECANCEL;
    }
    return CG_OK;
}

#endif

#define TRUNCATED "unexpected end of stream (truncated?)"

#ifndef CG_NO_ZLIB
/* gzip, member after member (gzip -c a b > ab writes two). out_room
 * keeps output room, so Z_BUF_ERROR means the input ran out. */
static int gunzip(const char *in, size_t n, Out *o)
{
    z_stream z;
    int rc = CG_OK;
    size_t left = n;
    const char *why;
    const CgZlib *zl = cg_zlib(&why);
    if (zl == NULL)
        return bad(o->err, o->path, CG_GZIP, why);
    memset(&z, 0, sizeof z);
    if (zl->inflateInit2_(&z, 16 + MAX_WBITS, ZLIB_VERSION, (int)sizeof z) != Z_OK)
        return cg_error_nomem(o->err);
    z.next_in = (Bytef *)(uintptr_t)in;
    for (;;) {
        uInt in_chunk = left > 0x40000000u ? 0x40000000u : (uInt)left;
        uInt out_chunk;
        int zr;
        if ((rc = out_room(o)) != CG_OK || (rc = tick(o, n - left)) != 0)
            break;
        out_chunk = (uInt)window(o);
        z.avail_in = in_chunk;
        z.next_out = (Bytef *)o->buf + o->len;
        z.avail_out = out_chunk;
        zr = zl->inflate(&z, Z_NO_FLUSH);
        o->len += out_chunk - z.avail_out;
        left -= in_chunk - z.avail_in;
        if (zr == Z_OK)
            continue;
        if (zr == Z_STREAM_END) {
            if (!left)
                break;
            if (left < 2 || (unsigned char)z.next_in[0] != 0x1f ||
                (unsigned char)z.next_in[1] != 0x8b) {
                rc = bad(o->err, o->path, CG_GZIP, "trailing garbage after "
                         "the stream");
                break;
            }
            zl->inflateReset(&z);
            continue;
        }
        if (zr == Z_MEM_ERROR)
            rc = cg_error_nomem(o->err);
        else if (zr == Z_BUF_ERROR)
            rc = bad(o->err, o->path, CG_GZIP, TRUNCATED);
        else
            rc = bad(o->err, o->path, CG_GZIP, z.msg ? z.msg
                                                     : "corrupt data");
        break;
    }
    zl->inflateEnd(&z);
    return rc;
}
#endif

#ifndef CG_NO_ZSTD
static int unzstd(const char *in, size_t n, Out *o, const CgZstd *zs)
{
    ZSTD_DStream *z = zs->createDStream();
    ZSTD_inBuffer ib;
    size_t r = 1;
    int rc = CG_OK;
    if (!z)
        return cg_error_nomem(o->err);
    ib.src = in;
    ib.size = n;
    ib.pos = 0;
    while (ib.pos < ib.size || r != 0) {
        ZSTD_outBuffer ob;
        if ((rc = out_room(o)) != CG_OK || (rc = tick(o, ib.pos)) != 0)
            break;
        ob.dst = o->buf + o->len;
        ob.size = window(o);
        ob.pos = 0;
        r = zs->decompressStream(z, &ob, &ib);
        o->len += ob.pos;
        if (zs->isError(r)) {
            if (zs->getErrorCode(r) == ZSTD_error_memory_allocation)
                rc = cg_error_nomem(o->err);
            else
                rc = bad(o->err, o->path, CG_ZSTD, zs->getErrorName(r));
            break;
        }
        /* all input used, a frame unfinished, and all output flushed */
        if (r != 0 && ib.pos == ib.size && ob.pos < ob.size) {
            rc = bad(o->err, o->path, CG_ZSTD, TRUNCATED);
            break;
        }
    }
    zs->freeDStream(z);
    return rc;
}
#endif

#ifndef CG_NO_LZMA
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

static int unxz(const char *in, size_t n, Out *o)
{
    lzma_stream z = LZMA_STREAM_INIT;
    lzma_ret r;
    int rc = CG_OK;
    const char *why;
    const CgLzma *xz = cg_lzma(&why);
    if (xz == NULL)
        return bad(o->err, o->path, CG_XZ, why);
    if (xz->stream_decoder(&z, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
        return cg_error_nomem(o->err);
    z.next_in = (const uint8_t *)in;
    z.avail_in = n;
    for (;;) {
        size_t before;
        if ((rc = out_room(o)) != CG_OK ||
            (rc = tick(o, n - z.avail_in)) != 0)
            break;
        z.next_out = (uint8_t *)o->buf + o->len;
        z.avail_out = before = window(o);
        r = xz->code(&z, LZMA_FINISH);
        o->len += before - z.avail_out;
        if (r == LZMA_STREAM_END)
            break;
        if (r == LZMA_MEM_ERROR) {
            rc = cg_error_nomem(o->err);
            break;
        }
        if (r != LZMA_OK) {
            rc = bad(o->err, o->path, CG_XZ, lzma_why(r));
            break;
        }
    }
    xz->end(&z);
    return rc;
}
#endif

/* CG_EBAD "path: zstd input needs a build with libzstd" for a format
 * this build was made without; CG_OK when it has it. */
static int missing(int kind, const char *path, CgError *err)
{
    static const char *const lib[] = { "", "zlib", "libzstd", "liblzma" };
    static const int built[] = {
        1,
#ifdef CG_NO_ZLIB
        0,
#else
        1,
#endif
#ifdef CG_NO_ZSTD
        0,
#else
        1,
#endif
#ifdef CG_NO_LZMA
        0,
#else
        1,
#endif
    };
    if (built[kind])
        return CG_OK;
    err->status = CG_EBAD;
    err->line = 0;
    snprintf(err->msg, sizeof err->msg, "%s: %s input needs a build with %s",
             path, kind_name[kind], lib[kind]);
    return CG_EBAD;
}

/* A first guess at the decompressed size (0: none): gzip's trailer says
 * it (mod 2^32), a zstd frame header usually does. */
#ifndef CG_NO_ZSTD
static size_t size_guess(int kind, const char *in, size_t n, const CgZstd *zs)
#else
static size_t size_guess(int kind, const char *in, size_t n)
#endif
{
    if (kind == CG_GZIP && n >= 18) {
        const unsigned char *t = (const unsigned char *)in + n - 4;
        /* one byte spare: Z_STREAM_END is seen */
        return ((size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 |
                (size_t)t[3] << 24) + 1;
    }
#ifndef CG_NO_ZSTD
    if (kind == CG_ZSTD) {
        unsigned long long s = zs->getFrameContentSize(in, n);
        if (s != ZSTD_CONTENTSIZE_UNKNOWN && s != ZSTD_CONTENTSIZE_ERROR &&
            s < ((size_t)-1) / 2)
            return (size_t)s + 1;
    }
#endif
    return 0;
}

int cg_decompress(int kind, const char *in, size_t n, const CgReadLimit *rl,
                  const char *path, char **out, size_t *outlen,
                  size_t *outsize, CgError *err)
{
    Out o;
    int rc;
#ifndef CG_NO_ZSTD
    const CgZstd *zs = NULL;
    const char *why;
#endif
    if ((rc = missing(kind, path, err)) != CG_OK)
        return rc;
#ifndef CG_NO_ZSTD
    if (kind == CG_ZSTD && (zs = cg_zstd(&why)) == NULL)
        return bad(err, path, CG_ZSTD, why);
#endif
    memset(&o, 0, sizeof o);
    o.limit = rl ? rl->limit : 0;
    o.n = n;
    o.rl = rl;
    o.path = path;
    o.err = err;
    o.report_at = (size_t)CG_PROGRESS_STEP;
#ifndef CG_NO_ZSTD
    o.cap = size_guess(kind, in, n, zs);
#else
    o.cap = size_guess(kind, in, n);
#endif
    if (!o.cap || o.cap > ((size_t)1 << 40))
        o.cap = n < ((size_t)-1) / 8 ? n * 4 + 4096 : 4096;
    if (o.limit && o.cap > o.limit + 1)
        o.cap = o.limit + 1;
    /* a guess (a gzip trailer may say anything): nothing made resident
     * ahead, large pages where written */
    if (!(o.buf = cg_big_resize(NULL, 0, o.cap, CG_BIG_ANY)))
        return cg_error_nomem(err);
    switch (kind) {
#ifndef CG_NO_ZLIB
    case CG_GZIP:
        rc = gunzip(in, n, &o);
        break;
#endif
#ifndef CG_NO_ZSTD
    case CG_ZSTD:
        rc = unzstd(in, n, &o, zs);
        break;
#endif
#ifndef CG_NO_LZMA
    case CG_XZ:
        rc = unxz(in, n, &o);
        break;
#endif
    default:
        rc = cg_error_nomem(err);     /* (missing() has said no) */
        break;
    }
    if (!rc && o.limit && o.len > o.limit)
        rc = too_long(&o);
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
