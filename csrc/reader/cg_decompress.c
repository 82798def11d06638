/* Compressed input: gzip (zlib), zstd (libzstd) and xz (liblzma), found by
 * their magic bytes and decompressed into one growing buffer that becomes
 * the profile's storage (no second copy of the text). A corrupt or
 * truncated stream is an error "path: gzip: reason", never a partial
 * text.
 *
 * The three libraries are opened when the first file of their format
 * turns up (dlopen), not with the module: a process that reads no
 * compressed file does not load them, about 1 ms of every start. */
#define _POSIX_C_SOURCE 200809L
#include "cg_decompress.h"
#include "cg_mem.h"

#include <dlfcn.h>
#include <lzma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/* ---- the libraries, opened on first use ---- */

static struct {
    int (*inflateInit2_)(z_streamp, int, const char *, int);
    int (*inflate)(z_streamp, int);
    int (*inflateReset)(z_streamp);
    int (*inflateEnd)(z_streamp);
} zlib;

static struct {
    ZSTD_DStream *(*ZSTD_createDStream)(void);
    size_t (*ZSTD_decompressStream)(ZSTD_DStream *, ZSTD_outBuffer *,
                                    ZSTD_inBuffer *);
    size_t (*ZSTD_freeDStream)(ZSTD_DStream *);
    unsigned (*ZSTD_isError)(size_t);
    ZSTD_ErrorCode (*ZSTD_getErrorCode)(size_t);
    const char *(*ZSTD_getErrorName)(size_t);
    unsigned long long (*ZSTD_getFrameContentSize)(const void *, size_t);
} zstd;

static struct {
    lzma_ret (*lzma_stream_decoder)(lzma_stream *, uint64_t, uint32_t);
    lzma_ret (*lzma_code)(lzma_stream *, lzma_action);
    void (*lzma_end)(lzma_stream *);
} xz;

/* What opening a library gave: "" when it is usable, else why not. */
static char lib_error[4][200];
static pthread_once_t lib_once[4] = {
    PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
    PTHREAD_ONCE_INIT
};

/* Keeps dlerror()'s reason as the library of kind's; -1. */
static int lib_failed(int kind)
{
    const char *why = dlerror();
    snprintf(lib_error[kind], sizeof lib_error[kind], "%s",
             why ? why : "unknown error");
    return -1;
}

/* Points *fp (a function pointer of size bytes) at h's symbol name; -1
 * and the reason in lib_error[kind] when h has none. */
static int sym(int kind, void *h, const char *name, void *fp, size_t size)
{
    void *p = dlsym(h, name);
    if (!p)
        return lib_failed(kind);
    memcpy(fp, &p, size);        /* POSIX: a function's address as void * */
    return 0;
}

#define SYM(kind, h, api, f) sym((kind), (h), #f, &(api).f, sizeof (api).f)

/* Opens the library of kind; -1 with lib_error[kind] set when it cannot
 * be loaded or lacks a function. */
static int open_lib(int kind, const char *soname)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    int rc;
    if (!h)
        return lib_failed(kind);
    switch (kind) {
    case CG_GZIP:
        rc = SYM(kind, h, zlib, inflateInit2_) ||
             SYM(kind, h, zlib, inflate) ||
             SYM(kind, h, zlib, inflateReset) ||
             SYM(kind, h, zlib, inflateEnd);
        break;
    case CG_ZSTD:
        rc = SYM(kind, h, zstd, ZSTD_createDStream) ||
             SYM(kind, h, zstd, ZSTD_decompressStream) ||
             SYM(kind, h, zstd, ZSTD_freeDStream) ||
             SYM(kind, h, zstd, ZSTD_isError) ||
             SYM(kind, h, zstd, ZSTD_getErrorCode) ||
             SYM(kind, h, zstd, ZSTD_getErrorName) ||
             SYM(kind, h, zstd, ZSTD_getFrameContentSize);
        break;
    default:
        rc = SYM(kind, h, xz, lzma_stream_decoder) ||
             SYM(kind, h, xz, lzma_code) ||
             SYM(kind, h, xz, lzma_end);
        break;
    }
    if (rc) {
        dlclose(h);              /* (its functions are never called) */
        return -1;
    }
    return 0;                    /* open for the process's life */
}

static void open_zlib(void)
{
    open_lib(CG_GZIP, "libz.so.1");
}

static void open_zstd(void)
{
    open_lib(CG_ZSTD, "libzstd.so.1");
}

static void open_xz(void)
{
    open_lib(CG_XZ, "liblzma.so.5");
}

/* The library of kind, opened once (whichever thread asks first): NULL
 * when it is usable, else why not. */
static const char *need_lib(int kind)
{
    static void (*const opener[4])(void) = { NULL, open_zlib, open_zstd,
                                             open_xz };
    pthread_once(&lib_once[kind], opener[kind]);
    return lib_error[kind][0] ? lib_error[kind] : NULL;
}

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
    if (zlib.inflateInit2_(&z, 16 + MAX_WBITS, ZLIB_VERSION,
                           (int)sizeof z) != Z_OK)
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
        zr = zlib.inflate(&z, Z_NO_FLUSH);
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
            zlib.inflateReset(&z);
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
    zlib.inflateEnd(&z);
    return rc;
}

static int unzstd(const char *in, size_t n, Out *o, const char *path,
                  CgError *err)
{
    ZSTD_DStream *z = zstd.ZSTD_createDStream();
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
        r = zstd.ZSTD_decompressStream(z, &ob, &ib);
        o->len += ob.pos;
        if (zstd.ZSTD_isError(r)) {
            if (zstd.ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
                rc = no_memory(err);
            else
                rc = bad(err, path, CG_ZSTD, zstd.ZSTD_getErrorName(r));
            break;
        }
        /* all input used, a frame unfinished, and all output flushed */
        if (r != 0 && ib.pos == ib.size && ob.pos < ob.size) {
            rc = bad(err, path, CG_ZSTD, TRUNCATED);
            break;
        }
    }
    zstd.ZSTD_freeDStream(z);
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
    if (xz.lzma_stream_decoder(&z, UINT64_MAX, LZMA_CONCATENATED) !=
        LZMA_OK)
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
            r = xz.lzma_code(&z, LZMA_FINISH);
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
    xz.lzma_end(&z);
    return rc;
}

int cg_decompress(int kind, const char *in, size_t n, size_t limit,
                  const char *path, char **out, size_t *outlen,
                  size_t *outsize, CgError *err)
{
    Out o;
    int rc;
    const char *why = need_lib(kind);
    if (why) {
        char msg[240];
        snprintf(msg, sizeof msg, "cannot load the library (%s)", why);
        return bad(err, path, kind, msg);
    }
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
        unsigned long long s = zstd.ZSTD_getFrameContentSize(in, n);
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
