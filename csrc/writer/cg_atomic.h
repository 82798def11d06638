/* Atomic files: a temporary in the target's directory, fsync'd and
 * renamed into place; removed on any failure. A write whose size is known
 * reserves the temporary's disk blocks first. A target that is not a
 * regular file (a character device such as /dev/null, a FIFO, a terminal,
 * /dev/stdout: symlinks followed) is written in place instead, never
 * replaced; a link to a regular file replaces the file it names, not the
 * link; a directory is an error. Lua sees them as
 * core.write_file_atomic(path, text) (csrc/binding/cg_lua_write.c);
 * prof:write and the profiler's folded stacks write through them. No
 * lua.h. */
#ifndef CG_ATOMIC_H
#define CG_ATOMIC_H

#include "cg_emit.h"

typedef struct CgAtomic {
    int fd;                      /* of the temporary; -1 when none */
    int unnamed;                 /* an O_TMPFILE, named at commit */
    char *tmp;                   /* its path: DIR/.NAME.tmp.PID.N (NULL
                                    while unnamed) */
    size_t tmp_len;
    char *path;                  /* the target (a link resolved) */
    int inplace;                 /* fd is the target itself: no rename */
} CgAtomic;

/* Creates the temporary (mode 0666 less the umask, or the target's mode
 * when it exists): unnamed (O_TMPFILE) where the system has it, so a
 * killed writer leaves nothing; else DIR/.NAME.tmp.PID.N, which a killed
 * writer leaves behind under that recognisable name. Returns CG_OK, or
 * CG_EIO or CG_ENOMEM with msg filled ("path: reason"). */
CG_HIDDEN int cg_atomic_open(CgAtomic *a, const char *path, char *msg,
                             size_t msgsize);
/* fsync, close, rename over the target (then fsync the directory). On
 * failure removes the temporary, fills msg and returns CG_EIO. Frees a. */
CG_HIDDEN int cg_atomic_commit(CgAtomic *a, char *msg, size_t msgsize);
/* Closes and removes the temporary; frees a. Safe on a closed one. */
CG_HIDDEN void cg_atomic_abort(CgAtomic *a);

/* A file-size limit (ulimit -f) raises SIGXFSZ, whose default action
 * kills the process, temporary file and all: while run(ud) runs, a write
 * past the limit fails with EFBIG instead (when nobody handles the
 * signal). Returns what run returns. */
CG_HIDDEN int cg_xfsz_guarded(int (*run)(void *ud), void *ud);

/* The whole of buf to path through cg_atomic_*, under the SIGXFSZ guard.
 * CG_OK, or CG_EIO or CG_ENOMEM with msg filled ("path: reason"). */
CG_HIDDEN int cg_write_file_atomic(const char *path, const char *buf,
                                   size_t len, char *msg, size_t msgsize);

/* What fill(w, ud) emits into an fd writer (flushed after fill) to path
 * through cg_atomic_*, under the SIGXFSZ guard; results as
 * cg_write_file_atomic. len: the bytes fill will emit, when known (their
 * disk blocks are reserved first), else 0. fill must not raise a Lua
 * error (the caller's fill makes no Lua call that can fail): the
 * temporary would stay. */
CG_HIDDEN int cg_write_atomic_with(const char *path,
                                   void (*fill)(CgWriter *w, void *ud),
                                   void *ud, size_t len, char *msg,
                                   size_t msgsize);

#endif
