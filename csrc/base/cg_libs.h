/* The compression libraries (zlib, libzstd, liblzma), opened at their
 * first use (dlopen) rather than linked: mapping and relocating the three
 * was most of what loading the core cost a process (1.4 ms of cpu and
 * 320,000 instructions of a Lua script's start-up under -lcallgrind.start,
 * which reads and writes no compressed file). Each is opened once per
 * process (thread-safe); the functions the reader and the writer call are
 * reached through the tables below. A build without one (CG_NO_ZLIB ...)
 * has no table for it. */
#ifndef CG_LIBS_H
#define CG_LIBS_H

#ifndef CG_NO_ZLIB
#include <zlib.h>
#ifndef CG_ZLIB_SO
#define CG_ZLIB_SO "libz.so.1"
#endif
typedef struct CgZlib {
    int (*inflateInit2_)(z_streamp, int, const char *, int);
    int (*inflate)(z_streamp, int);
    int (*inflateReset)(z_streamp);
    int (*inflateEnd)(z_streamp);
    int (*deflateInit2_)(z_streamp, int, int, int, int, int, const char *,
                         int);
    int (*deflate)(z_streamp, int);
    int (*deflateEnd)(z_streamp);
} CgZlib;
/* zlib's functions, or NULL and *why set ("zlib (libz.so.1) could not be
 * loaded: reason") */
const CgZlib *cg_zlib(const char **why);
#endif

#ifndef CG_NO_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#ifndef CG_ZSTD_SO
#define CG_ZSTD_SO "libzstd.so.1"
#endif
typedef struct CgZstd {
    ZSTD_DStream *(*createDStream)(void);
    size_t (*decompressStream)(ZSTD_DStream *, ZSTD_outBuffer *,
                               ZSTD_inBuffer *);
    size_t (*freeDStream)(ZSTD_DStream *);
    unsigned (*isError)(size_t);
    ZSTD_ErrorCode (*getErrorCode)(size_t);
    const char *(*getErrorName)(size_t);
    unsigned long long (*getFrameContentSize)(const void *, size_t);
} CgZstd;
const CgZstd *cg_zstd(const char **why);
#endif

#ifndef CG_NO_LZMA
#include <lzma.h>
#ifndef CG_LZMA_SO
#define CG_LZMA_SO "liblzma.so.5"
#endif
typedef struct CgLzma {
    lzma_ret (*stream_decoder)(lzma_stream *, uint64_t, uint32_t);
    lzma_ret (*code)(lzma_stream *, lzma_action);
    void (*end)(lzma_stream *);
} CgLzma;
const CgLzma *cg_lzma(const char **why);
#endif

#endif
