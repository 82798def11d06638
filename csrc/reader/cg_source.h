/* The bytes of a file, read into a large block (cg_mem.h), decompressed
 * when they are gzip, zstd or xz. */
#ifndef CG_SOURCE_H
#define CG_SOURCE_H

#include "cg_load.h"

typedef struct CgSource CgSource;

/* The most bytes of text one file may give by default where its size is
 * not known ahead (a stream: a pipe, a FIFO, /dev/zero), and for a
 * compressed file, which may give at most CG_MAX_RATIO times its own
 * size; opts.max_bytes sets another limit, for every file. */
#define CG_MAX_BYTES ((uint64_t)16 << 30)
#define CG_MAX_RATIO 1000

/* Opens path and gives its bytes (buf, len, valid until the source is
 * released). A regular file must keep its size while it is read; a
 * stream is read as it comes, calling o->progress(done, 0) at least every
 * CG_PROGRESS_STEP bytes and every 250 ms while it waits (a FIFO with no
 * writer waits for one); compressed bytes are decompressed
 * (cg_decompress, with o->progress). o may be NULL. CG_OK, or CG_EIO /
 * CG_ENOMEM with err->msg "path: reason", CG_ELIMIT "path: size exceeds N
 * bytes (opts.max_bytes)", CG_ECANCEL "path: load cancelled", or the
 * errors of cg_decompress.
 * defer (0: never): a plain file of defer bytes or more is read in part,
 * its first 64 KiB; len is its size when opened, and buf[0, len) fills
 * as cg_source_read reads the rest (the load's worker thread, while the
 * loader starts on what is there: cg_prescan.h). */
CG_HIDDEN int cg_source_open(const char *path, size_t defer,
                             const CgLoadOpts *o, CgSource **out,
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
