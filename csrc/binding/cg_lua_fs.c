/* File-system helpers the Lua layer cannot write in Lua: an advisory lock
 * held through a userdata (flock(2) on a lock file), and an append of one
 * line with one write(2) on an O_APPEND descriptor, so lines of several
 * processes never interleave. */
#define _DEFAULT_SOURCE
#include "cg_lua_fs.h"
#include "cg_profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK "callgrind.lock"

typedef struct LLock {
    int fd; /* -1 once released */
} LLock;

/* Releases the lock (idempotent): __gc, __close and :release(). */
static int lock_release(lua_State *L)
{
    LLock *lk = (LLock *)luaL_checkudata(L, 1, LOCK);
    if (lk->fd >= 0) {
        close(lk->fd); /* closing the descriptor drops the flock */
        lk->fd = -1;
    }
    return 0;
}

/* lock(path): a held exclusive lock on path (a directory, or a file
 * created if needed), or nil, "path: reason", "io". Waits for the lock.
 * The userdata exists before the descriptor, so an error in between leaks
 * nothing. */
int cgl_fs_lock(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    LLock *lk = (LLock *)lua_newuserdatauv(L, sizeof *lk, 0);
    lk->fd = -1;
    if (luaL_newmetatable(L, LOCK)) {
        lua_pushcfunction(L, lock_release);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, lock_release);
        lua_setfield(L, -2, "__close");
        lua_newtable(L);
        lua_pushcfunction(L, lock_release);
        lua_setfield(L, -2, "release");
        lua_setfield(L, -2, "__index");
    }
    lua_setmetatable(L, -2);
    lk->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (lk->fd < 0 && errno == ENOENT)
        lk->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lk->fd < 0)
        goto fail;
    while (flock(lk->fd, LOCK_EX) != 0) {
        if (errno != EINTR)
            goto fail;
    }
    return 1;
fail:
    {
        int e = errno;
        if (lk->fd >= 0) {
            close(lk->fd);
            lk->fd = -1;
        }
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(e));
        lua_pushliteral(L, "io");
        return 3;
    }
}

/* append(path, text): true, or nil, "path: reason", "io". One write(2)
 * with O_APPEND: the text lands whole after every earlier append (a short
 * write, which a regular file gives only on a full disk, is an error). */
int cgl_fs_append(lua_State *L)
{
    size_t n;
    const char *path = luaL_checkstring(L, 1);
    const char *s = luaL_checklstring(L, 2, &n);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    struct stat st;
    ssize_t w;
    int e;
    if (fd < 0)
        goto fail;
    /* whole or not at all: under an exclusive lock (appenders in other
     * processes wait), a write that stops short (a full disk) is cut back
     * to where the file ended, so no half line is ever left */
    while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
        ;
    if (fstat(fd, &st) != 0) {
        e = errno;
        close(fd);
        errno = e;
        goto fail;
    }
    do
        w = write(fd, s, n);
    while (w < 0 && errno == EINTR);
    e = errno;
    if (w != (ssize_t)n && S_ISREG(st.st_mode))
        (void)ftruncate(fd, st.st_size);
    close(fd);
    if (w == (ssize_t)n) {
        lua_pushboolean(L, 1);
        return 1;
    }
    errno = w < 0 ? e : ENOSPC;
fail:
    e = errno;
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(e));
    lua_pushliteral(L, "io");
    return 3;
}

/* internal.digest_line(text): the end line of a written file whose body
 * is text ("# end digest=fnv1a64:" and the FNV-1a of text, cg_profile.h),
 * for a body changed after the writer (a baseline's paths made relative). */
int cgl_fs_digest_line(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    char line[sizeof CG_WRITTEN_DIGEST + 18];
    snprintf(line, sizeof line, "%s%016llx\n", CG_WRITTEN_DIGEST,
             (unsigned long long)cg_fnv1a(CG_FNV_OFFSET, s, n));
    lua_pushstring(L, line);
    return 1;
}
