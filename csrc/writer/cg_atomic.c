/* Atomic files (cg_atomic.h): temporaries renamed into place, and whole
 * files written through them under the SIGXFSZ guard. */
#define _GNU_SOURCE             /* O_TMPFILE, linkat, sigaction, fallocate */
#include "cg_atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void msg_errno(char *msg, size_t size, const char *path, int e)
{
    snprintf(msg, size, "%s: %s", path, strerror(e));
}

/* The temporary's name: DIR/.NAME.tmp.PID.N, the first N free. With
 * create, creates it (O_EXCL); else only names a free one. */
static int tmp_name(CgAtomic *a, size_t tlen, int create)
{
    const char *slash = strrchr(a->path, '/');
    size_t dlen = slash ? (size_t)(slash - a->path) + 1 : 0;
    unsigned n;
    int fd = -1;
    for (n = 0; n < 10000; n++) {
        struct stat st;
        snprintf(a->tmp, tlen, "%.*s.%s.tmp.%ld.%u", (int)dlen, a->path,
                 a->path + dlen, (long)getpid(), n);
        if (!create) {
            if (lstat(a->tmp, &st) != 0 && errno == ENOENT)
                return 0;
            continue;
        }
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* The temporary for path: unnamed (O_TMPFILE) in the target's directory
 * where the system has it, so a writer killed before the end leaves
 * nothing behind (it gets a name at commit, linkat through /proc, so only
 * where /proc is there); else DIR/.NAME.tmp.PID.N. The fd, or -1. */
static int open_temporary(CgAtomic *a, const char *path, const char *slash,
                          size_t tlen)
{
    int fd = -1;
#ifdef O_TMPFILE
    if (access("/proc/self/fd", X_OK) == 0) {
        if (slash) {
            size_t dl = (size_t)(slash - path) + 1;
            memcpy(a->tmp, path, dl);
            a->tmp[dl] = '\0';
        } else {
            strcpy(a->tmp, ".");
        }
        fd = open(a->tmp, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        a->unnamed = fd >= 0;
    }
#else
    (void)slash;
#endif
    if (fd < 0)
        fd = tmp_name(a, tlen, 1);
    return fd;
}

/* A target that exists and is not a regular file, after following links:
 * opened for writing in place (a->inplace), or a directory refused.
 * Returns 1 when it dealt with the target (a->fd open, or msg filled and
 * *rc the error), 0 for a regular file or none. */
static int open_special(CgAtomic *a, const char *path, const struct stat *st,
                        char *msg, size_t size, int *rc)
{
    if (S_ISREG(st->st_mode))
        return 0;
    *rc = CG_OK;
    if (S_ISDIR(st->st_mode)) {
        msg_errno(msg, size, path, EISDIR);
        *rc = CG_EIO;
        return 1;
    }
    a->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (a->fd < 0) {
        msg_errno(msg, size, path, errno);
        *rc = CG_EIO;
        return 1;
    }
    a->inplace = 1;
    return 1;
}

int cg_atomic_open(CgAtomic *a, const char *path, char *msg, size_t size)
{
    const char *slash;
    size_t tlen;
    struct stat st, lst;
    int have = stat(path, &st) == 0, rc;
    char *real = NULL;
    a->fd = -1;
    a->unnamed = 0;
    a->inplace = 0;
    a->tmp = a->path = NULL;
    if (have && open_special(a, path, &st, msg, size, &rc)) {
        if (rc == CG_OK && !(a->path = (char *)malloc(strlen(path) + 1))) {
            cg_atomic_abort(a);
            snprintf(msg, size, "%s: out of memory", path);
            return CG_ENOMEM;
        }
        if (rc == CG_OK)
            strcpy(a->path, path);
        return rc;
    }
    /* a link to a regular file: replace the file, keep the link */
    if (have && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
        path = real = realpath(path, NULL);
    if (!path) {
        msg_errno(msg, size, "(link)", errno);
        return CG_EIO;
    }
    slash = strrchr(path, '/');
    tlen = strlen(path) + 64;
    have = have && S_ISREG(st.st_mode);
    a->tmp = (char *)malloc(tlen);
    a->path = (char *)malloc(strlen(path) + 1);
    if (!a->tmp || !a->path) {
        free(a->tmp);
        free(a->path);
        a->tmp = a->path = NULL;
        snprintf(msg, size, "%s: out of memory", path);
        free(real);
        return CG_ENOMEM;
    }
    strcpy(a->path, path);
    free(real);
    path = a->path;
    slash = strrchr(path, '/');
    a->tmp_len = tlen;
    if (!*(slash ? slash + 1 : path)) {
        msg_errno(msg, size, path, EISDIR);
        free(a->tmp);
        a->tmp = NULL;
        cg_atomic_abort(a);
        return CG_EIO;
    }
    a->fd = open_temporary(a, path, slash, tlen);
    if (a->fd < 0) {
        msg_errno(msg, size, path, errno);
        free(a->tmp);
        a->tmp = NULL;
        cg_atomic_abort(a);
        return CG_EIO;
    }
    if (a->unnamed) {
        free(a->tmp);
        a->tmp = NULL;
    }
    if (have)
        (void)fchmod(a->fd, st.st_mode & 07777);
    return CG_OK;
}

void cg_atomic_abort(CgAtomic *a)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    if (a->tmp)
        unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    a->tmp = a->path = NULL;
}

int cg_atomic_commit(CgAtomic *a, char *msg, size_t size)
{
    int e = 0, dfd;
    char *dir;
    const char *slash;
    if (a->inplace) {
        /* a device, FIFO or terminal: written as it went; only the close
         * can still fail */
        if (close(a->fd) != 0)
            e = errno;
        a->fd = -1;
        if (e) {
            msg_errno(msg, size, a->path, e);
            cg_atomic_abort(a);
            return CG_EIO;
        }
        cg_atomic_abort(a);
        return CG_OK;
    }
    if (fsync(a->fd) != 0 && errno != EINVAL)
        e = errno;
    if (!e && a->unnamed) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->fd);
        if (!(a->tmp = (char *)malloc(a->tmp_len)))
            e = ENOMEM;
        else if (tmp_name(a, a->tmp_len, 0) != 0)
            e = errno;
        else if (linkat(AT_FDCWD, proc, AT_FDCWD, a->tmp,
                        AT_SYMLINK_FOLLOW) != 0)
            e = errno;
        if (e) {
            free(a->tmp);
            a->tmp = NULL;
        }
    }
    if (close(a->fd) != 0 && !e)
        e = errno;
    a->fd = -1;
    if (!e && rename(a->tmp, a->path) != 0)
        e = errno;
    if (e) {
        msg_errno(msg, size, a->path, e);
        cg_atomic_abort(a);
        return CG_EIO;
    }
    /* the rename itself survives a crash once the directory is synced */
    slash = strrchr(a->path, '/');
    dir = slash ? a->path : NULL;
    if (dir) {
        char keep = slash[1];
        a->path[slash - a->path + 1] = '\0';
        dfd = open(a->path, O_RDONLY | O_CLOEXEC);
        a->path[slash - a->path + 1] = keep;
    } else {
        dfd = open(".", O_RDONLY | O_CLOEXEC);
    }
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    free(a->tmp);
    a->tmp = NULL;
    cg_atomic_abort(a);
    return CG_OK;
}

/* ---- the SIGXFSZ guard ---- */

int cg_xfsz_guarded(int (*run)(void *ud), void *ud)
{
    struct sigaction old, ign;
    int set = 0, rc;
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
        memset(&ign, 0, sizeof ign);
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        set = sigaction(SIGXFSZ, &ign, NULL) == 0;
    }
    rc = run(ud);
    if (set)
        sigaction(SIGXFSZ, &old, NULL);
    return rc;
}

/* ---- whole files ---- */

/* The whole of buf[0..len) to fd; 0, or the errno of the failed write. */
static int write_all(int fd, const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, buf + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        off += (size_t)n;
    }
    return 0;
}

/* The least size worth reserving: more than one writer buffer. */
#define RESERVE_MIN CG_WRITE_BUF

/* Reserves the disk blocks of len bytes the temporary is about to get,
 * before they are written: ext4 then allocates them in one go instead
 * of page by page as they arrive, and writing an 18 MB file took about
 * a fifth less cpu (bench/README.md). Only a hint: it fails quietly (no
 * fallocate on that file system, no room: the writes say so), and the
 * file's size stays what the writes make it (FALLOC_FL_KEEP_SIZE). */
static void reserve(const CgAtomic *a, size_t len)
{
#if defined(__linux__) && defined(FALLOC_FL_KEEP_SIZE)
    if (!a->inplace && len >= RESERVE_MIN)
        (void)fallocate(a->fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)len);
#else
    (void)a;
    (void)len;
#endif
}

typedef struct Whole {
    const char *path;
    const char *buf;             /* the bytes, or NULL: fill emits them */
    size_t len;                  /* their number (with fill: the number
                                    it will emit, or 0: not known) */
    void (*fill)(CgWriter *w, void *ud);
    void *ud;
    char *msg;
    size_t size;
} Whole;

static int write_whole(void *ud)
{
    Whole *o = (Whole *)ud;
    CgAtomic a;
    CgWriter w;
    int rc = cg_atomic_open(&a, o->path, o->msg, o->size), e;
    if (rc != CG_OK)
        return rc;
    reserve(&a, o->len);
    if (o->buf) {
        /* large pieces straight from buf: no copy */
        if ((e = write_all(a.fd, o->buf, o->len)) != 0) {
            msg_errno(o->msg, o->size, o->path, e);
            cg_atomic_abort(&a);
            return CG_EIO;
        }
        return cg_atomic_commit(&a, o->msg, o->size);
    }
    cg_writer_init_fd(&w, a.fd, 0);
    o->fill(&w, o->ud);
    rc = cg_writer_flush(&w);
    if (rc != CG_OK) {
        /* as a write of buf says it */
        snprintf(o->msg, o->size, "%s: %s", o->path,
                 rc == CG_EIO ? strerror(w.err) : "out of memory");
        cg_atomic_abort(&a);
    } else {
        rc = cg_atomic_commit(&a, o->msg, o->size);
    }
    cg_writer_free(&w);
    return rc;
}

int cg_write_file_atomic(const char *path, const char *buf, size_t len,
                         char *msg, size_t size)
{
    Whole o;
    memset(&o, 0, sizeof o);
    o.path = path;
    o.buf = buf;
    o.len = len;
    o.msg = msg;
    o.size = size;
    return cg_xfsz_guarded(write_whole, &o);
}

int cg_write_atomic_with(const char *path,
                         void (*fill)(CgWriter *w, void *ud), void *ud,
                         size_t len, char *msg, size_t size)
{
    Whole o;
    memset(&o, 0, sizeof o);
    o.path = path;
    o.len = len;
    o.fill = fill;
    o.ud = ud;
    o.msg = msg;
    o.size = size;
    return cg_xfsz_guarded(write_whole, &o);
}
