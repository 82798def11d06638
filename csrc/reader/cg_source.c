#define _POSIX_C_SOURCE 200809L
#include "cg_source.h"
#include "cg_decompress.h"
#include "cg_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

struct CgSource {
    char *data;
    size_t len;
    size_t size;                 /* of the block data (cg_mem.h) */
    /* a text read in part (cg_source_open's defer): */
    int fd;                      /* open while there is more, else -1 */
    size_t have;                 /* bytes read so far */
    char *path;                  /* for messages */
};

/* read(2), again when a signal interrupts it: the count read (0 at the
 * end), or -1 with errno. */
static ssize_t read_retry(int fd, char *buf, size_t n)
{
    for (;;) {
        ssize_t r = read(fd, buf, n);
        if (r >= 0 || errno != EINTR)
            return r;
    }
}

static void release_bytes(CgSource *s)
{
    cg_big_free(s->data, s->size);
    s->data = NULL;
}

/* Fails with "path: why" (CG_EIO). */
static int io_fail(CgError *err, const char *path, const char *why)
{
    err->status = CG_EIO;
    err->line = 0;
    snprintf(err->msg, sizeof err->msg, "%s: %s", path, why);
    return CG_EIO;
}

static int io_error(CgError *err, const char *path, int errnum)
{
    return io_fail(err, path, strerror(errnum));
}


static int changed_size(CgError *err, const char *path, size_t size)
{
    char why[96];
    snprintf(why, sizeof why, "the file changed size while it was read "
             "(%zu bytes when opened)", size);
    return io_fail(err, path, why);
}

static int too_big(CgError *err, const char *path, size_t limit)
{
    err->status = CG_ELIMIT;
    err->line = 0;
    snprintf(err->msg, sizeof err->msg, "%s: size exceeds %zu bytes "
             "(opts.max_bytes)", path, limit);
    return CG_ELIMIT;
}

static int cancel(CgError *err, const char *path)
{
    err->status = CG_ECANCEL;
    err->line = 0;
    snprintf(err->msg, sizeof err->msg, "%s: load cancelled", path);
    return CG_ECANCEL;
}

/* How long a read of a stream waits for bytes between two calls of
 * progress (none: as long as it takes). */
#define WAIT_MS 250

/* A stream's turn in read_all: progress(done, 0) every CG_PROGRESS_STEP
 * bytes read, then a wait in poll(2) for bytes, with progress every
 * WAIT_MS while it waits; the callback may cancel. 1: bytes to read; 0:
 * none yet (wait again); -1: failed, with *rc set and err filled. */
static int stream_ready(int fd, const CgLoadOpts *o, size_t done,
                        size_t *report_at, const char *path, CgError *err,
                        int *rc)
{
    CgProgress progress = o ? o->progress : NULL;
    struct pollfd pf;
    int r;
    if (progress && done >= *report_at) {
        *report_at = done + (size_t)CG_PROGRESS_STEP;
        if (progress(o->ud, done, 0)) {
            *rc = cancel(err, path);
            return -1;
        }
    }
    /* (a FIFO with no writer yet: poll waits for one; a read would find
     * its end at once) */
    pf.fd = fd;
    pf.events = POLLIN;
    pf.revents = 0;
    r = poll(&pf, 1, progress ? WAIT_MS : -1);
    if (r < 0 && errno != EINTR) {
        *rc = io_error(err, path, errno);
        return -1;
    }
    if (r <= 0) {
        if (r == 0 && progress(o->ud, done, 0)) {
            *rc = cancel(err, path);
            return -1;
        }
        return 0;
    }
    return 1;
}

/* Reads fd to its end into a large block (cg_mem.h). A regular file of
 * size bytes (size >= 0) in one go, into size + 1 bytes (room to see its
 * end): it must end at that size, neither before (cut short by another
 * process) nor after (written on), or the load fails "path: the file
 * changed size while it was read". A stream (size < 0: a pipe, a FIFO, a
 * character device, opened O_NONBLOCK) as it comes, in blocks doubled
 * while they are full, up to limit bytes (past it CG_ELIMIT), waiting in
 * poll(2) for bytes: progress(done, 0) is called every CG_PROGRESS_STEP
 * bytes and every WAIT_MS while it waits, and cancels.
 * Read rather than mapped: the text then lies in 2 MiB pages where the
 * kernel has them, where the page cache's are 4 KiB, and a file cut short
 * by another process after it was read changes nothing (mapped, the bytes
 * cut off would raise SIGBUS). CG_OK, or an error with err filled. */
static int read_all(int fd, off_t size, size_t limit, const CgLoadOpts *o,
                    const char *path, CgSource *s, CgError *err)
{
    size_t cap = size >= 0 ? (size_t)size + 1 : (size_t)1 << 16;
    size_t report_at = (size_t)CG_PROGRESS_STEP;
    char *p = cg_big_resize(NULL, 0, cap, size >= 0 ? cap : CG_BIG_ANY), *q;
    int rc = CG_OK;
    if (!p)
        return cg_error_nomem(err);
    for (;;) {
        ssize_t n;
        size_t want;
        if (s->len == cap) {
            size_t ncap = cap > ((size_t)-1) / 2 ? 0 : cap * 2;
            if (size >= 0) {
                rc = changed_size(err, path, (size_t)size);  /* grown */
                break;
            }
            if (s->len > limit) {
                rc = too_big(err, path, limit);
                break;
            }
            if (ncap > limit + 1)
                ncap = limit + 1;
            if (!ncap || !(q = cg_big_resize(p, cap, ncap, CG_BIG_ANY))) {
                rc = cg_error_nomem(err);
                break;
            }
            p = q;
            cap = ncap;
        }
        want = cap - s->len;
        if (size < 0) {
            int ready = stream_ready(fd, o, s->len, &report_at, path, err,
                                     &rc);
            if (ready < 0)
                break;
            if (want > (size_t)CG_PROGRESS_STEP)
                want = (size_t)CG_PROGRESS_STEP;
            if (!ready)
                continue;
        }
        n = read_retry(fd, p + s->len, want);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && size < 0)
            continue;
        if (n < 0) {
            rc = io_error(err, path, errno);
            break;
        }
        if (n == 0)
            break;
        s->len += (size_t)n;
    }
    if (!rc && size >= 0 && s->len != (size_t)size)
        rc = changed_size(err, path, (size_t)size);   /* cut short */
    if (!rc && size < 0 && s->len > limit)
        rc = too_big(err, path, limit);
    if (rc) {
        cg_big_free(p, cap);
        s->len = 0;
        return rc;
    }
    s->data = p;
    s->size = cap;
    return CG_OK;
}

/* The first bytes of a deferred text, read at once: enough to tell a
 * compressed file by its magic bytes. */
#define DEFER_HEAD ((size_t)64 << 10)

/* Opens the plain file of n bytes (defer or more) on fd for a read in
 * parts: its first DEFER_HEAD bytes now, the rest by cg_source_read. A
 * block of n + 1 bytes (one to see the end), not made resident ahead:
 * its pages fault where they are read, on the thread that reads. 1 when
 * it is not to be deferred (a compressed file), 0 done, else as
 * read_all. */
static int open_deferred(int fd, size_t n, const char *path, CgSource *s)
{
    ssize_t r;
    if (!(s->data = cg_big_new(n + 1)) || !(s->path = strdup(path))) {
        cg_big_free(s->data, n + 1);
        s->data = NULL;
        return -1;
    }
    s->size = n + 1;
    s->len = n;
    s->fd = fd;
    while (s->have < DEFER_HEAD &&
           (r = read_retry(fd, s->data + s->have, DEFER_HEAD - s->have)))
        if (r < 0 || (s->have += (size_t)r) > n)
            break;
    if (s->have == DEFER_HEAD && cg_compression(s->data, s->have) == CG_PLAIN)
        return 0;
    /* compressed, cut short or grown, or a read error: read as a whole */
    s->fd = -1;
    free(s->path);
    s->path = NULL;
    release_bytes(s);
    s->have = s->len = s->size = 0;
    return lseek(fd, 0, SEEK_SET) == 0 ? 1 : errno;
}

int cg_source_read(CgSource *s, size_t piece, CgError *err)
{
    ssize_t r;
    if (s->fd < 0)
        return 0;
    if (piece > s->len - s->have)
        piece = s->len - s->have;
    /* past the size, one byte: the read must find the end there */
    r = read_retry(s->fd, s->data + s->have, piece ? piece : 1);
    if (r > 0 && piece) {
        s->have += (size_t)r;
        return 1;
    }
    if (r == 0 && !piece) {
        close(s->fd);
        s->fd = -1;
        return 0;
    }
    if (r < 0)
        io_error(err, s->path, errno);
    else
        changed_size(err, s->path, s->len);
    return -1;
}

size_t cg_source_have(const CgSource *s)
{
    return s->fd < 0 ? s->len : s->have;
}

/* The most bytes of text a compressed file of n bytes may give by
 * default: CG_MAX_BYTES, or 1,000 times n, whichever is smaller. */
static size_t default_limit(size_t n)
{
    uint64_t max = CG_MAX_BYTES;
    if (n < max / CG_MAX_RATIO)
        max = (uint64_t)n * CG_MAX_RATIO;
    return max < (uint64_t)((size_t)-1) / 2 ? (size_t)max
                                             : ((size_t)-1) / 2;
}

/* Opens path for cg_source_open. O_NONBLOCK: a FIFO with no writer is
 * opened at once, where open(2) would wait for one (with no progress, no
 * cancel); read_all waits in poll(2) instead. A regular file is made
 * blocking again, and *size set to its size (a file of size 0 may be one
 * of /proc's, whose size says nothing: -1, read as a stream, as any other
 * file). A plain file of more than limit bytes (0: none) fails here. CG_OK
 * with *fdp open, or an error with err filled. */
static int open_input(const char *path, size_t limit, int *fdp, off_t *size,
                      CgError *err)
{
    struct stat st;
    int fd;
    if ((fd = open(path, O_RDONLY | O_NONBLOCK)) < 0)
        return io_error(err, path, errno);
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return io_error(err, path, e);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return io_error(err, path, EISDIR);
    }
    if (S_ISREG(st.st_mode)) {
        int fl = fcntl(fd, F_GETFL);
        if (fl == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
            int e = errno;
            close(fd);
            return io_error(err, path, e);
        }
        if ((uintmax_t)st.st_size >= (uintmax_t)((size_t)-1) / 2) {
            close(fd);
            return io_error(err, path, EFBIG);
        }
        *size = st.st_size ? st.st_size : -1;
        if (limit && *size > 0 && (size_t)*size > limit) {
            /* the text would pass it, unless it is compressed (then the
             * decompressed text counts) */
            char magic[8];
            ssize_t r = pread(fd, magic, sizeof magic, 0);
            if (r >= 0 && cg_compression(magic, (size_t)r) == CG_PLAIN) {
                close(fd);
                return too_big(err, path, limit);
            }
        }
    }
    *fdp = fd;
    return CG_OK;
}

/* The bytes s read become the text: as they are when plain (at most
 * limit of them, 0: any), else decompressed, which replaces them as the
 * storage (within max, else default_limit). CG_OK, or an error with err
 * filled and s's bytes released. */
static int to_text(CgSource *s, uint64_t max, size_t limit,
                   const CgLoadOpts *o, const char *path, CgError *err)
{
    int kind = cg_compression(s->data, s->len), rc;
    char *text;
    size_t tlen, tsize;
    CgReadLimit rl;
    if (kind == CG_PLAIN) {
        if (limit && s->len > limit) {
            release_bytes(s);
            return too_big(err, path, limit);
        }
        return CG_OK;
    }
    rl.limit = max ? limit : default_limit(s->len);
    rl.progress = o ? o->progress : NULL;
    rl.ud = o ? o->ud : NULL;
    rc = cg_decompress(kind, s->data, s->len, &rl, path, &text, &tlen,
                       &tsize, err);
    release_bytes(s);
    if (rc)
        return rc;
    s->data = text;
    s->len = tlen;
    s->size = tsize;
    return CG_OK;
}

int cg_source_open(const char *path, size_t defer, const CgLoadOpts *o,
                   CgSource **out, const char **buf, size_t *len,
                   CgError *err)
{
    CgSource *s;
    off_t size = -1;
    /* opts.max_bytes, else none for a plain file (its size is known),
     * CG_MAX_BYTES for a stream, default_limit for compressed bytes */
    uint64_t max = o && o->max_bytes ? o->max_bytes : 0;
    size_t limit = max > (uint64_t)((size_t)-1) / 2 ? ((size_t)-1) / 2
                                                   : (size_t)max;
    int rc, fd;
    *out = NULL;
    if ((rc = open_input(path, limit, &fd, &size, err)) != CG_OK)
        return rc;
    if (size < 0 && !limit) {
        limit = CG_MAX_BYTES < (uint64_t)((size_t)-1) / 2
                    ? (size_t)CG_MAX_BYTES : ((size_t)-1) / 2;
    }
    if (!(s = calloc(1, sizeof *s))) {
        close(fd);
        return cg_error_nomem(err);
    }
    s->fd = -1;
#ifdef POSIX_FADV_SEQUENTIAL
    if (size >= 0)
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    if (defer && size >= 0 && (size_t)size >= defer &&
        (size_t)size > DEFER_HEAD) {
        rc = open_deferred(fd, (size_t)size, path, s);
        if (!rc) {
            *buf = s->data;
            *len = s->len;
            *out = s;
            return CG_OK;
        }
        if (rc != 1) {
            close(fd);
            free(s);
            return rc > 0 ? io_error(err, path, rc) : cg_error_nomem(err);
        }
    }
    rc = read_all(fd, size, limit, o, path, s, err);
    close(fd);
    if (!rc)
        rc = to_text(s, max, limit, o, path, err);
    if (rc) {
        free(s);
        return rc;
    }
    *buf = s->data;
    *len = s->len;
    *out = s;
    return CG_OK;
}

void cg_source_release(void *src)
{
    CgSource *s = src;
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->path);
    release_bytes(s);
    free(s);
}

/* ---- the files one valgrind run wrote ---- */

/* Reads the number after the separator sep at *p (sep, then digits, at
 * most 2^32 - 1) into *out and moves *p past it; 1 when there is none
 * (nothing read), 0 when sep is there but no number fits. */
static int run_number(const char **p, char sep, uint64_t *out)
{
    const char *s = *p;
    uint64_t v;
    if (*s != sep)
        return 1;
    s++;
    if (*s < '0' || *s > '9')
        return 0;
    for (v = 0; *s >= '0' && *s <= '9'; s++)
        if ((v = v * 10 + (uint64_t)(*s - '0')) > 0xffffffffu)
            return 0;
    *out = v;
    *p = s;
    return 1;
}

/* NAME[.DUMP][-THREAD] after the base name: *dump is 0 for none (the last
 * dump, sorted after the numbered ones), *thread 0 for none. 0 when rest
 * is not of that form. */
static int run_suffix(const char *rest, uint64_t *dump, uint64_t *thread)
{
    *dump = *thread = 0;
    return run_number(&rest, '.', dump) && run_number(&rest, '-', thread) &&
           *rest == 0;
}

/* Does the file at path have an events: line in its first 64 KiB? (The
 * base file of a --separate-threads=yes run is empty or holds a header
 * only.) Compressed files are taken as they are. */
static int has_events(const char *path)
{
    char buf[1 << 16];
    size_t n, i;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n >= 2 && (((unsigned char)buf[0] == 0x1f &&
                    (unsigned char)buf[1] == 0x8b) ||
                   ((unsigned char)buf[0] == 0x28 &&
                    (unsigned char)buf[1] == 0xb5) ||
                   ((unsigned char)buf[0] == 0xfd && buf[1] == '7')))
        return 1;
    for (i = 0; i + 7 <= n; i++)
        if ((i == 0 || buf[i - 1] == '\n') && !memcmp(buf + i, "events:", 7))
            return 1;
    return 0;
}

typedef struct RunFile {
    char *path;
    uint64_t dump, thread;
} RunFile;

static int run_file_cmp(const void *a, const void *b)
{
    const RunFile *x = a, *y = b;
    /* numbered dumps first, in order, then the last (unnumbered) one */
    uint64_t dx = x->dump ? x->dump : UINT64_MAX;
    uint64_t dy = y->dump ? y->dump : UINT64_MAX;
    if (dx != dy)
        return dx < dy ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return 0;
}

void cg_file_list_free(CgFileList *l)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    l->paths = NULL;
    l->n = 0;
}

int cg_run_files(const char *path, CgFileList *out, CgError *err)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base), cap = 0, i;
    char *dir;
    DIR *d;
    struct dirent *e;
    RunFile *files = NULL;
    int rc = CG_OK;
    memset(err, 0, sizeof *err);
    if (!(dir = malloc(dlen + 2)))
        return cg_error_nomem(err);
    if (slash) {
        memcpy(dir, path, dlen);
        dir[dlen] = 0;
        if (!dlen)
            strcpy(dir, "/");
    } else {
        strcpy(dir, ".");
    }
    if (!(d = opendir(dir))) {
        rc = io_error(err, dir, errno);
        free(dir);
        return rc;
    }
    while (!rc && (e = readdir(d))) {
        uint64_t dump, thread;
        size_t nlen = strlen(e->d_name);
        char *full;
        struct stat st;
        if (nlen < blen || memcmp(e->d_name, base, blen) != 0 ||
            !run_suffix(e->d_name + blen, &dump, &thread))
            continue;
        if (!(full = malloc(dlen + 1 + nlen + 1))) {
            rc = cg_error_nomem(err);
            break;
        }
        if (slash) {
            memcpy(full, path, dlen + 1);
            memcpy(full + dlen + 1, e->d_name, nlen + 1);
        } else {
            memcpy(full, e->d_name, nlen + 1);
        }
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode) || !st.st_size ||
            !has_events(full)) {
            free(full);
            continue;
        }
        if (CG_GROW(files, cap, out->n + 1) != 0) {
            free(full);
            rc = cg_error_nomem(err);
            break;
        }
        files[out->n].path = full;
        files[out->n].dump = dump;
        files[out->n++].thread = thread;
    }
    closedir(d);
    free(dir);
    if (!rc && out->n) {
        qsort(files, out->n, sizeof *files, run_file_cmp);
        if (!(out->paths = malloc(out->n * sizeof *out->paths)))
            rc = cg_error_nomem(err);
    }
    for (i = 0; i < out->n; i++) {
        if (rc)
            free(files[i].path);
        else
            out->paths[i] = files[i].path;
    }
    if (rc)
        out->n = 0;
    free(files);
    return rc;
}
