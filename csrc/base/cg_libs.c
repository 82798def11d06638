/* The compression libraries opened at their first use (cg_libs.h). */
#define _POSIX_C_SOURCE 200809L
#include "cg_libs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#if !defined(CG_NO_ZLIB) || !defined(CG_NO_ZSTD) || !defined(CG_NO_LZMA)
/* One library: opened, its functions found (names: NULL-terminated; the
 * slots: the table's function pointers, in the same order), or why not. */
typedef struct Lib {
    const char *so, *what;
    const char *const *names;
    void **slots;
    int ok;
    char why[200];
} Lib;

static void open_lib(Lib *lib)
{
    void *h = dlopen(lib->so, RTLD_NOW | RTLD_LOCAL);
    int i;
    if (h == NULL) {
        snprintf(lib->why, sizeof lib->why, "%s (%s) could not be loaded: %s",
                 lib->what, lib->so, dlerror());
        return;
    }
    for (i = 0; lib->names[i] != NULL; i++) {
        /* POSIX: a function's address comes as a void * */
        if ((lib->slots[i] = dlsym(h, lib->names[i])) == NULL) {
            snprintf(lib->why, sizeof lib->why, "%s (%s) has no %s",
                     lib->what, lib->so, lib->names[i]);
            dlclose(h);
            return;
        }
    }
    lib->ok = 1;                 /* (kept open for the process) */
}
#endif

#ifndef CG_NO_ZLIB
static union {
    CgZlib fns;
    void *slots[sizeof(CgZlib) / sizeof(void *)];
} zl;
static const char *const zl_names[] = {
    "inflateInit2_", "inflate", "inflateReset", "inflateEnd",
    "deflateInit2_", "deflate", "deflateEnd", NULL
};
/* every table is function pointers alone, each the size of a void * */
typedef char zl_fits[sizeof(CgZlib) == 7 * sizeof(void *) ? 1 : -1];
static Lib zl_lib = { CG_ZLIB_SO, "zlib", zl_names, zl.slots, 0, "" };
static pthread_once_t zl_once = PTHREAD_ONCE_INIT;
static void zl_open(void) { open_lib(&zl_lib); }

const CgZlib *cg_zlib(const char **why)
{
    pthread_once(&zl_once, zl_open);
    *why = zl_lib.why;
    return zl_lib.ok ? &zl.fns : NULL;
}
#endif

#ifndef CG_NO_ZSTD
static union {
    CgZstd fns;
    void *slots[sizeof(CgZstd) / sizeof(void *)];
} zs;
static const char *const zs_names[] = {
    "ZSTD_createDStream", "ZSTD_decompressStream", "ZSTD_freeDStream",
    "ZSTD_isError", "ZSTD_getErrorCode", "ZSTD_getErrorName",
    "ZSTD_getFrameContentSize", NULL
};
typedef char zs_fits[sizeof(CgZstd) == 7 * sizeof(void *) ? 1 : -1];
static Lib zs_lib = { CG_ZSTD_SO, "libzstd", zs_names, zs.slots, 0, "" };
static pthread_once_t zs_once = PTHREAD_ONCE_INIT;
static void zs_open(void) { open_lib(&zs_lib); }

const CgZstd *cg_zstd(const char **why)
{
    pthread_once(&zs_once, zs_open);
    *why = zs_lib.why;
    return zs_lib.ok ? &zs.fns : NULL;
}
#endif

#ifndef CG_NO_LZMA
static union {
    CgLzma fns;
    void *slots[sizeof(CgLzma) / sizeof(void *)];
} xz;
static const char *const xz_names[] = {
    "lzma_stream_decoder", "lzma_code", "lzma_end", NULL
};
typedef char xz_fits[sizeof(CgLzma) == 3 * sizeof(void *) ? 1 : -1];
static Lib xz_lib = { CG_LZMA_SO, "liblzma", xz_names, xz.slots, 0, "" };
static pthread_once_t xz_once = PTHREAD_ONCE_INIT;
static void xz_open(void) { open_lib(&xz_lib); }

const CgLzma *cg_lzma(const char **why)
{
    pthread_once(&xz_once, xz_open);
    *why = xz_lib.why;
    return xz_lib.ok ? &xz.fns : NULL;
}
#endif

/* (ISO C wants a translation unit not empty: a build without all three) */
typedef int cg_libs_unit;
