/* The second core's share of a load: a worker thread scans the chunks of a
 * text ahead of the loader and sums the runs of plain cost lines it finds
 * (with the jump=/jcnd= lines among them and their source lines, whose
 * targets only bound the positions' range), so the loader, which must go
 * through the lines in order, takes a run's sums and end positions in one
 * step instead of scanning its lines. The loader scans a chunk itself
 * when the worker has not started it, or, while the worker is still on
 * the chunk it needs, the chunk after the worker's.
 *
 * The worker knows nothing of the loader's state. It scans with the
 * layout (positions and events columns) it last saw written, and records
 * relative positions as they are written; the loader checks the layout
 * and the positions' range against its own state when it takes a run, and
 * reads the run's lines itself when anything differs or is in doubt. So a
 * run changes speed, never a number or a message.
 *
 * What the worker writes, the loader reads from the other core's cache:
 * the less of it, the better (a run's segment is 48 bytes). Reading calls
 * too (cfn=, calls= and the cost line into numbers) was tried: a little
 * faster on a quiet host, 7% slower on a busy one, and 1 MB more memory. */
#ifndef CG_PRESCAN_H
#define CG_PRESCAN_H

#include "cg_profile.h"
#include "cg_source.h"

#include <stddef.h>

/* Default chunk size, and the smallest text worth a thread. */
#define CG_CHUNK ((size_t)128 << 10)
#define CG_PRESCAN_MIN ((size_t)4 << 20)
/* The largest: the loader reports progress at least every 16 MB, and a
 * run is taken at once (CG_PROGRESS_STEP of cg_load.h). */
#define CG_MAX_CHUNK ((size_t)8 << 20)

/* A segment of a chunk: a run, or lines the loader reads itself (a run
 * found in doubt). The lines between segments, and before the first and
 * after the last, are the loader's too: they are not stored. */
enum { CG_SEG_LINES = 0, CG_SEG_RUN = 1 };

/* One position column of a run, composed over its lines. */
typedef struct CgRunPos {
    int absolute;                /* some line wrote it outright: v is it */
    uint64_t v;                  /* absolute: the value at the end;
                                    otherwise the sum of the steps, as
                                    int64_t */
    int64_t lo, hi;              /* not absolute: the lowest and highest
                                    sum of steps, a jump's target's
                                    included, before any line wrote it
                                    outright (the base must keep them in
                                    0..UINT64_MAX) */
} CgRunPos;

typedef struct CgSeg {
    const char *start, *end;     /* its lines */
    const int64_t *sums;         /* per column, all costs >= 0 */
    const CgRunPos *pos;         /* npos of them */
    uint32_t nlines;             /* (a chunk has at most CG_MAX_CHUNK
                                    bytes) */
    uint32_t vlines;             /* lines among them the vector paths
                                    read */
    uint16_t npos, nev;          /* the layout the worker scanned with */
    uint16_t ncost;              /* widest line: sums[0..ncost) */
    uint8_t kind;                /* CG_SEG_* */
    uint8_t jumps;               /* any jump=/jcnd= lines among them
                                    (each with its source line)? */
} CgSeg;

typedef struct CgChunk {
    const CgSeg *segs;
    size_t nsegs;
} CgChunk;

typedef struct CgPrescan CgPrescan;

/* Starts a worker over buf[0..len) in chunks of about `chunk` bytes
 * (0: CG_CHUNK), ending at line ends. steal: the work is shared
 * (cg_prescan_wait); else the loader always waits for the worker (the
 * specs' mode: every chunk but the first is the worker's, and every run
 * is taken, even where threads take turns, as under valgrind). vec: cost
 * lines may be read with the vector paths (cg_vec.h; the caller checked
 * cg_vec_usable). src: the source of a text read in part (cg_source.h),
 * whose rest the worker reads first, in pieces of eight chunks (the
 * loader starts on the first chunks meanwhile, and takes them itself in
 * stealing mode), or NULL: buf is whole. moving: a jump's source line
 * moves the base of relative positions (CG_MOVING_BASE), else only a
 * cost line does.
 * NULL when it is not worth it (fewer than two chunks) or not possible
 * (memory, threads): the caller then reads the text alone. */
CG_HIDDEN CgPrescan *cg_prescan_start(const char *buf, size_t len,
                                      size_t chunk, int steal, int vec,
                                      int moving, CgSource *src);
/* The byte range of chunk i (0, 1, ... in turn), once it is known and
 * read: 1; 0 when the text has fewer chunks; -1 when reading it failed,
 * with *err filled ("path: reason"). */
CG_HIDDEN int cg_prescan_chunk(CgPrescan *s, size_t i, const char **start,
                               const char **end, CgError *err);
/* Chunk i's segments (i >= 1, in order), waiting while the worker scans
 * it. In stealing mode the loader scans chunks itself, guessing their
 * layout is npos, nev (its own now): chunk i when the worker has not
 * started it (the worker goes on with the next ones), and while it waits,
 * the chunk after the worker's. NULL: read it alone (out of memory). Valid
 * until cg_prescan_done(s, i). */
CG_HIDDEN const CgChunk *cg_prescan_wait(CgPrescan *s, size_t i, int npos,
                                         int nev);
/* Chunk i is used: its room goes to a later chunk. */
CG_HIDDEN void cg_prescan_done(CgPrescan *s, size_t i);
/* Stops the worker (at any point) and frees everything. */
CG_HIDDEN void cg_prescan_stop(CgPrescan *s);

#endif
