/* Atomic files (cg_atomic.h): temporaries renamed into place, and whole
 * files written through them under the SIGXFSZ guard. */
#define _GNU_SOURCE             /* O_TMPFILE, linkat, sigaction, fallocate */
#include "cg_atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/random.h>
#endif

static void msg_errno(char *msg, size_t size, const char *path, int e)
{
    snprintf(msg, size, "%s: %s", path, strerror(e));
}

/* 64 bits no other process can guess: getrandom(2), else the clock, the
 * pid and a counter mixed (splitmix64). A name made of them is only ever
 * created with O_EXCL (or linked, which never follows a link either), so
 * a guess costs another try, never a followed link. */
static uint64_t unguessable(void)
{
    static uint64_t count;
    uint64_t r = 0;
    struct timespec ts;
#ifdef __linux__
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
#endif
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
        ((uint64_t)getpid() << 48) ^ (++count * 0x9e3779b97f4a7c15ULL);
    r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ULL;
    r = (r ^ (r >> 27)) * 0x94d049bb133111ebULL;
    return r ^ (r >> 31);
}

/* Names a temporary of try n: DIR/.NAME.tmp.XXXXXXXXXXXXXXXX (16 hex
 * digits, unguessable; n is mixed in, so that tries differ even when the
 * random source repeats itself). */
static void tmp_name(CgAtomic *a, size_t tlen, unsigned n)
{
    const char *slash = strrchr(a->path, '/');
    size_t dlen = slash ? (size_t)(slash - a->path) + 1 : 0;
    uint64_t r = unguessable() ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL);
    snprintf(a->tmp, tlen, "%.*s.%s.tmp.%016llx", (int)dlen, a->path,
             a->path + dlen, (unsigned long long)r);
}

#define TMP_TRIES 100

/* Creates a named temporary (O_EXCL: a link or FIFO planted under its
 * name is never opened, only skipped). The fd, or -1 (errno). */
static int tmp_create(CgAtomic *a, size_t tlen)
{
    unsigned n;
    for (n = 0; n < TMP_TRIES; n++) {
        int fd;
        tmp_name(a, tlen, n);
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                  0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* The temporary for path: unnamed (O_TMPFILE) in the target's directory
 * where the system has it, so a writer killed before the end leaves
 * nothing behind (it gets a name at commit, linkat through /proc, so only
 * where /proc is there); else DIR/.NAME.tmp.XXXXXXXXXXXXXXXX. The fd, or
 * -1. */
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
        fd = tmp_create(a, tlen);
    return fd;
}

/* Opens a target that is not a regular file, for writing in place,
 * without blocking: a FIFO no process reads (open gives ENXIO) is tried
 * again every 10 ms for CG_FIFO_WAIT_MS, then given up with ENXIO. The fd
 * is made blocking again once open (a slow reader slows the writer). */
static int open_inplace(const char *path, const struct stat *st)
{
    int waited = 0, fd, fl;
    for (;;) {
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0 || errno != ENXIO || !S_ISFIFO(st->st_mode) ||
            waited >= CG_FIFO_WAIT_MS)
            break;
        {
            struct timespec ts = { 0, 10 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
        waited += 10;
    }
    if (fd >= 0 && (fl = fcntl(fd, F_GETFL)) >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
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
    a->fd = open_inplace(path, st);
    if (a->fd < 0 && errno == ENXIO && S_ISFIFO(st->st_mode)) {
        snprintf(msg, size, "%s: a FIFO that no process reads (waited %d s "
                 "for a reader)", path, CG_FIFO_WAIT_MS / 1000);
        *rc = CG_EIO;
        return 1;
    }
    if (a->fd < 0) {
        msg_errno(msg, size, path, errno);
        *rc = CG_EIO;
        return 1;
    }
    a->inplace = 1;
    return 1;
}

/* What path names once its links are followed, for a target that is no
 * special file: a link to a regular file, its real path (the file is
 * replaced, the link kept); a dangling link, the name it points to,
 * followed link by link (up to 40), so that the file is made there and
 * the link kept; else path itself. malloc'd, or NULL with errno. */
static char *target_of(const char *path, int exists)
{
    char *p, buf[4096];
    int hops;
    struct stat lst;
    if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode))
        return strdup(path);
    if (exists)
        return realpath(path, NULL);
    p = strdup(path);
    for (hops = 0; p && lstat(p, &lst) == 0 && S_ISLNK(lst.st_mode); hops++) {
        ssize_t n = readlink(p, buf, sizeof buf - 1);
        const char *slash = strrchr(p, '/');
        size_t dlen = slash && buf[0] != '/' ? (size_t)(slash - p) + 1 : 0;
        char *next;
        if (n < 0 || hops == 40 || n == (ssize_t)sizeof buf - 1) {
            int e = n < 0 ? errno : hops == 40 ? ELOOP : ENAMETOOLONG;
            free(p);
            errno = e;
            return NULL;
        }
        buf[n] = '\0';
        next = (char *)malloc(dlen + (size_t)n + 1);
        if (next) {
            memcpy(next, p, dlen);
            memcpy(next + dlen, buf, (size_t)n + 1);
        }
        free(p);
        p = next;
    }
    if (!p)
        errno = ENOMEM;
    return p;
}

/* The named-temporary part of cg_atomic_open: a->path set (owned). */
static int open_regular(CgAtomic *a, const struct stat *st, int have,
                        char *msg, size_t size)
{
    const char *path = a->path, *slash = strrchr(path, '/');
    size_t tlen = strlen(path) + 64;
    a->tmp_len = tlen;
    if (!*(slash ? slash + 1 : path)) {
        msg_errno(msg, size, path, EISDIR);
        cg_atomic_abort(a);
        return CG_EIO;
    }
    if (!(a->tmp = (char *)malloc(tlen))) {
        snprintf(msg, size, "%s: out of memory", path);
        cg_atomic_abort(a);
        return CG_ENOMEM;
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
        (void)fchmod(a->fd, st->st_mode & 07777);
    return CG_OK;
}

int cg_atomic_open(CgAtomic *a, const char *path, char *msg, size_t size)
{
    struct stat st;
    int have = stat(path, &st) == 0, rc;
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
    if (!(a->path = target_of(path, have))) {
        msg_errno(msg, size, path, errno);
        return errno == ENOMEM ? CG_ENOMEM : CG_EIO;
    }
    return open_regular(a, &st, have, msg, size);
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

/* Gives an unnamed temporary its name, DIR/.NAME.tmp.XXXXXXXXXXXXXXXX:
 * linkat never follows or replaces what is there (a planted link or FIFO
 * makes it try another name). 0, or an errno. */
static int name_unnamed(CgAtomic *a)
{
    char proc[64];
    unsigned n;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->fd);
    if (!(a->tmp = (char *)malloc(a->tmp_len)))
        return ENOMEM;
    for (n = 0; n < TMP_TRIES; n++) {
        tmp_name(a, a->tmp_len, n);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, a->tmp, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    n = errno;
    free(a->tmp);
    a->tmp = NULL;
    return (int)n;
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
    if (!e && a->unnamed)
        e = name_unnamed(a);
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

/* Sets sig to SIG_IGN when it has its default action (which kills);
 * returns 1 when it did (restore with *old). */
static int ignore_default(int sig, struct sigaction *old)
{
    struct sigaction ign;
    if (sigaction(sig, NULL, old) != 0 || old->sa_handler != SIG_DFL)
        return 0;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    return sigaction(sig, &ign, NULL) == 0;
}

int cg_xfsz_guarded(int (*run)(void *ud), void *ud)
{
    struct sigaction old_xfsz, old_pipe;
    int set_xfsz = ignore_default(SIGXFSZ, &old_xfsz);
    int set_pipe = ignore_default(SIGPIPE, &old_pipe);
    int rc = run(ud);
    if (set_pipe)
        sigaction(SIGPIPE, &old_pipe, NULL);
    if (set_xfsz)
        sigaction(SIGXFSZ, &old_xfsz, NULL);
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

/* The least size worth reserving (1 MiB). */
#define RESERVE_MIN ((size_t)1 << 20)

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

/* ---- a child's output ---- */

/* An unnamed file in the system's temporary directory holding len bytes
 * of buf (or none), rewound: tmpfile(3) removes its name at once (and
 * opens it O_EXCL under an unguessable one), so nothing is left to
 * follow or to clean up. NULL with errno. */
static FILE *unnamed_file(const char *buf, size_t len)
{
    FILE *f = tmpfile();
    if (!f)
        return NULL;
    if ((len && fwrite(buf, 1, len, f) != len) || fflush(f) != 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        int e = errno;
        fclose(f);
        errno = e ? e : EIO;
        return NULL;
    }
    return f;
}

/* In the child, after fork: stdin, stdout, stderr set, the signals the
 * guard ignores given back their default action, killed when the parent
 * dies (Linux), then argv run; on failure its errno goes to report. */
static void child_exec(char *const argv[], int in, int out, int err,
                       int report, pid_t parent)
{
    sigset_t none;
    int e;
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
#ifdef __linux__
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
#else
    (void)parent;
#endif
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        e = errno;
    else {
        execvp(argv[0], argv);
        e = errno;
    }
    while (write(report, &e, sizeof e) < 0 && errno == EINTR)
        ;
    _exit(127);
}

/* Waits for pid (through EINTR: a signal the process handles does not
 * leave the child behind). Its wait status, or -1. */
static int reap_child(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return st;
}

typedef struct Child {
    const char *path;
    char *const *argv;
    const char *input;
    size_t inlen;
    int *how;
    char *err;                   /* the child's stderr, up to errsize - 1 */
    size_t errsize;
    char *msg;
    size_t size;
} Child;

/* Reads what the child wrote on stderr (its first bytes) into o->err. */
static void read_stderr(Child *o, FILE *ef)
{
    size_t n = 0;
    if (o->errsize == 0)
        return;
    if (fseek(ef, 0, SEEK_SET) == 0)
        n = fread(o->err, 1, o->errsize - 1, ef);
    o->err[n] = '\0';
}

/* Forks and runs the child, its stdout the temporary's fd; the exec
 * error the child reports through a close-on-exec pipe (0: it ran).
 * The wait status, or -1 with *exec_err or errno set. */
static int run_child(Child *o, int out, FILE *in, FILE *ef, int *exec_err)
{
    int pfd[2], st;
    pid_t pid, parent = getpid();
    ssize_t n;
    *exec_err = 0;
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return -1;
    pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        errno = e;
        return -1;
    }
    if (pid == 0)
        child_exec(o->argv, fileno(in), out, fileno(ef), pfd[1], parent);
    close(pfd[1]);
    do
        n = read(pfd[0], exec_err, sizeof *exec_err);
    while (n < 0 && errno == EINTR);
    close(pfd[0]);
    if (n != (ssize_t)sizeof *exec_err)
        *exec_err = 0;
    st = reap_child(pid);
    if (*exec_err)
        return -1;
    return st;
}

/* The child's failure in o->msg: how it ended. */
static int child_failed(Child *o, int st)
{
    *o->how = CG_CHILD_FAILED;
    if (WIFSIGNALED(st))
        snprintf(o->msg, o->size, "%s: killed by signal %d", o->argv[0],
                 WTERMSIG(st));
    else
        snprintf(o->msg, o->size, "%s: exit status %d", o->argv[0],
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return CG_EIO;
}

static int write_child(void *ud)
{
    Child *o = (Child *)ud;
    CgAtomic a;
    FILE *in, *ef = NULL;
    int rc, st, exec_err;
    *o->how = CG_CHILD_IO;
    if (o->errsize)
        o->err[0] = '\0';
    if (!(in = unnamed_file(o->input, o->inlen)) ||
        !(ef = unnamed_file(NULL, 0))) {
        msg_errno(o->msg, o->size, "tmpfile", errno);
        if (in)
            fclose(in);
        return CG_EIO;
    }
    rc = cg_atomic_open(&a, o->path, o->msg, o->size);
    if (rc == CG_OK) {
        st = run_child(o, a.fd, in, ef, &exec_err);
        read_stderr(o, ef);
        if (st < 0 && exec_err) {
            *o->how = CG_CHILD_EXEC;
            msg_errno(o->msg, o->size, o->argv[0], exec_err);
            rc = CG_EIO;
        } else if (st < 0) {
            msg_errno(o->msg, o->size, o->argv[0], errno);
            rc = CG_EIO;
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            rc = child_failed(o, st);
        }
        if (rc != CG_OK) {
            cg_atomic_abort(&a);
        } else {
            *o->how = CG_CHILD_IO;
            rc = cg_atomic_commit(&a, o->msg, o->size);
            if (rc == CG_OK)
                *o->how = CG_CHILD_OK;
        }
    }
    fclose(in);
    fclose(ef);
    return rc;
}

int cg_write_from_child(const char *path, char *const argv[],
                        const char *input, size_t inlen, int *how,
                        char *err, size_t errsize, char *msg, size_t size)
{
    Child o;
    o.path = path;
    o.argv = argv;
    o.input = input;
    o.inlen = inlen;
    o.how = how;
    o.err = err;
    o.errsize = errsize;
    o.msg = msg;
    o.size = size;
    return cg_xfsz_guarded(write_child, &o);
}
