#define _POSIX_C_SOURCE 200809L
#include "cg_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct CgSource {
    char *data;
    size_t len;
    int mapped;
};

/* Reads a stream that cannot be mapped (a pipe, /dev/stdin). */
static int read_all(int fd, CgSource *s)
{
    size_t cap = 1 << 16;
    char *p = malloc(cap);
    if (!p)
        return 0;
    for (;;) {
        ssize_t n;
        if (s->len == cap) {
            char *q = cap > ((size_t)-1) / 2 ? NULL : realloc(p, cap * 2);
            if (!q) {
                free(p);
                return 0;
            }
            p = q;
            cap *= 2;
        }
        n = read(fd, p + s->len, cap - s->len);
        if (n < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            free(p);
            return e;
        }
        if (n == 0)
            break;
        s->len += (size_t)n;
    }
    s->data = p;
    return -1;
}

CgSource *cg_source_open(const char *path, const char **buf, size_t *len,
                         int *errnum)
{
    struct stat st;
    CgSource *s;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *errnum = errno;
        return NULL;
    }
    if (fstat(fd, &st) != 0) {
        *errnum = errno;
        close(fd);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        *errnum = EISDIR;
        close(fd);
        return NULL;
    }
    if (!(s = calloc(1, sizeof *s))) {
        *errnum = 0;
        close(fd);
        return NULL;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uintmax_t)st.st_size <= (uintmax_t)(size_t)-1) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
                       0);
        if (m != MAP_FAILED) {
            s->data = m;
            s->len = (size_t)st.st_size;
            s->mapped = 1;
            (void)posix_madvise(m, s->len, POSIX_MADV_SEQUENTIAL);
        }
    }
    if (!s->mapped) {
        int rc = read_all(fd, s);
        if (rc >= 0) {
            *errnum = rc;
            free(s);
            close(fd);
            return NULL;
        }
    }
    close(fd);
    *buf = s->data ? s->data : "";
    *len = s->len;
    return s;
}

void cg_source_release(void *src)
{
    CgSource *s = src;
    if (!s)
        return;
    if (s->mapped)
        munmap(s->data, s->len);
    else
        free(s->data);
    free(s);
}
