/* The bytes of a file, read into a large block (cg_mem.h), decompressed
 * when they are gzip, zstd or xz. */
#ifndef CG_SOURCE_H
#define CG_SOURCE_H

#include "cg_profile.h"

typedef struct CgSource CgSource;

/* Opens path and gives its bytes (buf, len, valid until the source is
 * released). CG_OK, or CG_EIO / CG_ENOMEM with err->msg "path: reason",
 * or the errors of cg_decompress.
 * defer (0: never): a plain file of defer bytes or more is read in part,
 * its first 64 KiB; len is its size when opened, and buf[0, len) fills
 * as cg_source_read reads the rest (the load's worker thread, while the
 * loader starts on what is there: cg_prescan.h). */
CG_HIDDEN int cg_source_open(const char *path, size_t defer, CgSource **out,
                             const char **buf, size_t *len, CgError *err);
/* The bytes of buf read so far: len when it is whole. */
CG_HIDDEN size_t cg_source_have(const CgSource *s);
/* Reads up to piece more bytes (piece > 0) of a source read in part. 1:
 * there is more to read; 0: the text is whole (the file ended at its
 * size when opened); -1: a read error, or the file changed size, with
 * err filled ("path: reason"). One thread at a time. */
CG_HIDDEN int cg_source_read(CgSource *s, size_t piece, CgError *err);
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
