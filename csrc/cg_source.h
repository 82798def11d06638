/* The bytes of a file, read into a large block (cg_mem.h), decompressed
 * when they are gzip, zstd or xz. */
#ifndef CG_SOURCE_H
#define CG_SOURCE_H

#include "cg_profile.h"

typedef struct CgSource CgSource;

/* Opens path and gives its bytes (buf, len, valid until the source is
 * released). CG_OK, or CG_EIO / CG_ENOMEM with err->msg "path: reason",
 * or the errors of cg_decompress. */
CG_HIDDEN int cg_source_open(const char *path, CgSource **out,
                             const char **buf, size_t *len, CgError *err);
/* A list of paths, owned by the list. */
typedef struct CgFileList {
    char **paths;
    size_t n;
} CgFileList;

/* The files one valgrind run wrote for path: path itself, path.N (dumps)
 * and path-NN (threads), path.N-NN: numbered dumps in order, then the last
 * dump; in each, the threads in order. Empty files and files with no
 * events: line in their first 64 KiB are left out. out must be zeroed;
 * CG_OK or CG_EIO / CG_ENOMEM with err filled (out is then empty). */
CG_HIDDEN int cg_run_files(const char *path, CgFileList *out, CgError *err);
CG_HIDDEN void cg_file_list_free(CgFileList *l);

/* Releases it; NULL is fine. */
CG_HIDDEN void cg_source_release(void *src);

#endif
