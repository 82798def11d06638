/* Atomic files: a temporary in the target's directory, fsync'd and
 * renamed into place; removed on any failure. A write whose size is known
 * reserves the temporary's disk blocks first. A target that is not a
 * regular file (a character device such as /dev/null, a FIFO, a terminal,
 * /dev/stdout: symlinks followed) is written in place instead, never
 * replaced; a FIFO no process reads is waited for CG_FIFO_WAIT_MS, then
 * refused. A link to a regular file replaces the file it names, not the
 * link; a dangling link makes the file it names, and stays a link; a
 * directory is an error. The temporary is unnamed (O_TMPFILE) until the
 * commit, or else created O_EXCL under an unguessable name: nothing
 * planted under a temporary's name is ever followed or opened. Lua sees
 * them as core.write_file_atomic(path, text) and
 * internal.write_from_command (csrc/binding/cg_lua_write.c); every file
 * the library writes goes through them. No lua.h. */
#ifndef CG_ATOMIC_H
#define CG_ATOMIC_H

#include "cg_emit.h"

typedef struct CgAtomic {
    int fd;                      /* of the temporary; -1 when none */
    int unnamed;                 /* an O_TMPFILE, named at commit */
    char *tmp;                   /* its path: DIR/.NAME.tmp.X (X 16
                                    random hex digits; NULL while
                                    unnamed) */
    size_t tmp_len;
    char *path;                  /* the target (a link resolved) */
    int inplace;                 /* fd is the target itself: no rename */
} CgAtomic;

/* How long a write to a FIFO waits for a process to open its other end
 * (3 s), trying every 10 ms, before it fails ("a FIFO that no process
 * reads"): a blocking open would wait for ever. */
#define CG_FIFO_WAIT_MS 3000

/* Creates the temporary (mode 0666 less the umask, or the target's mode
 * when it exists): unnamed (O_TMPFILE) where the system has it, so a
 * killed writer leaves nothing; else DIR/.NAME.tmp.X, created with
 * O_EXCL (X: 16 random hex digits, tried again on a name taken), which a
 * killed writer leaves behind under that recognisable name. Returns
 * CG_OK, or CG_EIO or CG_ENOMEM with msg filled ("path: reason"). */
CG_HIDDEN int cg_atomic_open(CgAtomic *a, const char *path, char *msg,
                             size_t msgsize);
/* fsync, close, rename over the target (then fsync the directory). On
 * failure removes the temporary, fills msg and returns CG_EIO. Frees a. */
CG_HIDDEN int cg_atomic_commit(CgAtomic *a, char *msg, size_t msgsize);
/* Closes and removes the temporary; frees a. Safe on a closed one. */
CG_HIDDEN void cg_atomic_abort(CgAtomic *a);

/* A file-size limit (ulimit -f) raises SIGXFSZ, whose default action
 * kills the process, temporary file and all, and so does SIGPIPE on a
 * FIFO whose reader has gone: while run(ud) runs, such a write fails
 * with EFBIG or EPIPE instead (when nobody handles the signal). Returns
 * what run returns. */
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

/* How cg_write_from_child failed: the target (CG_CHILD_IO), running the
 * command (CG_CHILD_EXEC: msg "CMD: reason", errno's text), or the
 * command itself (CG_CHILD_FAILED: msg "CMD: exit status N" or "CMD:
 * killed by signal N", err its stderr). */
enum { CG_CHILD_OK, CG_CHILD_IO, CG_CHILD_EXEC, CG_CHILD_FAILED };

/* Runs argv (argv[0] looked up in PATH) with input on its stdin and its
 * stdout into path through cg_atomic_* (the temporary itself, or the
 * special file written in place), under the guard; committed only when
 * it exits with status 0, else the temporary is removed. Its stdin and
 * stderr are unnamed files (tmpfile: no name to follow or leave); the
 * first errsize - 1 bytes of its stderr go to err. The parent waits for
 * it; on Linux the child is killed when the parent dies (a killed writer
 * leaves no process and, its temporary unnamed, no file). CG_OK, or
 * CG_EIO / CG_ENOMEM with msg filled and *how saying what failed. */
CG_HIDDEN int cg_write_from_child(const char *path, char *const argv[],
                                  const char *input, size_t inlen, int *how,
                                  char *err, size_t errsize, char *msg,
                                  size_t msgsize);

#endif
