/* Keeping a command's processes together (Linux): supervise(code,
 * timeout, kill_after [, dir [, file]]) runs `/bin/sh -c code` under a supervisor process
 * that is a child subreaper (PR_SET_CHILD_SUBREAPER), so every descendant
 * of the command, including one that calls setsid() or double-forks,
 * stays below it. The supervisor times the command out (SIGTERM to every
 * descendant, SIGKILL kill_after seconds later), lists the descendants
 * still running once the command has ended, ends them the same way, and
 * reports through a pipe:
 *
 *   status N        the command's exit status, 128 + signal when killed
 *   timeout 0|1     the timeout ran out
 *   killed 0|1      after a timeout, a process needed SIGKILL
 *   left PID NAME   one line per process left running
 *
 * The supervisor dies with its caller: when the process that started it
 * is gone (killed, SIGKILL included), it ends every descendant the same
 * way (SIGTERM, SIGKILL a second later), removes the run's temporary
 * directory and reserved name (supervise's 4th and 5th arguments, when
 * given) and exits. It checks its parent every 10 ms, and once before it
 * starts the command (the caller may be gone already).
 *
 * Elsewhere it returns nil, "unsupported" and the caller runs the command
 * its own way. */
#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 700
#include "cg_lua_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <dirent.h>
#include <ftw.h>
#include <sys/prctl.h>

typedef struct Proc {
    pid_t pid, ppid;
    char state;
    char mark;
    char name[32];
} Proc;

typedef struct Procs {
    Proc *p;
    size_t n, cap;
} Procs;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* One /proc/PID/stat: "pid (name) state ppid ..."; the name may hold ')'. */
static int read_stat(const char *pid, Proc *out)
{
    char path[64], buf[512];
    FILE *f;
    size_t n;
    char *lp, *rp;
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    lp = strchr(buf, '(');
    rp = strrchr(buf, ')');
    if (!lp || !rp || rp < lp)
        return 0;
    out->pid = (pid_t)atol(buf);
    n = (size_t)(rp - lp - 1);
    if (n >= sizeof out->name)
        n = sizeof out->name - 1;
    memcpy(out->name, lp + 1, n);
    out->name[n] = '\0';
    if (sscanf(rp + 1, " %c %d", &out->state, &out->ppid) != 2)
        return 0;
    out->mark = 0;
    return 1;
}

/* Every process of /proc, its descendants of root marked. */
static void scan(Procs *ps, pid_t root)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int more = 1;
    ps->n = 0;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (ps->n == ps->cap) {
            size_t cap = ps->cap ? ps->cap * 2 : 256;
            Proc *p = (Proc *)realloc(ps->p, cap * sizeof *p);
            if (!p)
                break;
            ps->p = p;
            ps->cap = cap;
        }
        if (read_stat(e->d_name, &ps->p[ps->n]))
            ps->n++;
    }
    if (d)
        closedir(d);
    while (more) { /* a process is marked when its parent is root or marked */
        size_t i, j;
        more = 0;
        for (i = 0; i < ps->n; i++) {
            Proc *c = &ps->p[i];
            if (c->mark)
                continue;
            if (c->ppid == root)
                c->mark = more = 1;
            for (j = 0; !c->mark && j < ps->n; j++)
                if (ps->p[j].mark && ps->p[j].pid == c->ppid)
                    c->mark = more = 1;
        }
    }
}

/* Sends sig to every descendant of the caller (sig 0: none); the number
 * of them not yet exited (zombies are not counted). */
static size_t signal_all(Procs *ps, int sig)
{
    size_t i, live = 0;
    scan(ps, getpid());
    for (i = 0; i < ps->n; i++) {
        if (!ps->p[i].mark || ps->p[i].state == 'Z')
            continue;
        live++;
        if (sig)
            kill(ps->p[i].pid, sig);
    }
    return live;
}

/* Reaps every exited child; true when w was among them (its status in *st). */
static int reap(pid_t w, int *st)
{
    int s, got = 0;
    pid_t p;
    while ((p = waitpid(-1, &s, WNOHANG)) > 0) {
        if (p == w) {
            *st = s;
            got = 1;
        }
    }
    return got;
}

/* Ends every descendant: SIGTERM, then SIGKILL at kill_at (already past:
 * at once), until the caller has no child left. */
static void end_all(Procs *ps, double kill_at)
{
    int st;
    signal_all(ps, SIGTERM);
    for (;;) {
        int killing = now_s() >= kill_at;
        reap(-1, &st);
        if (signal_all(ps, killing ? SIGKILL : 0) == 0 && waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD)
            return;
        nap();
    }
}

static void put(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* Writes a "left PID NAME" line for each descendant still running. */
static void put_left(int fd, Procs *ps)
{
    size_t i;
    char line[96];
    scan(ps, getpid());
    for (i = 0; i < ps->n; i++) {
        if (!ps->p[i].mark || ps->p[i].state == 'Z')
            continue;
        snprintf(line, sizeof line, "left %ld %s\n", (long)ps->p[i].pid, ps->p[i].name);
        put(fd, line);
    }
}

/* What a caller that is gone leaves to remove. */
typedef struct Leftovers {
    pid_t caller;
    const char *dir, *file;      /* NULL: none */
} Leftovers;

static int remove_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* The caller is gone: every descendant ended (SIGKILL a second after
 * SIGTERM), the temporaries removed (links are removed, never followed),
 * and the supervisor with them. */
static void orphaned(Procs *ps, const Leftovers *lo)
{
    end_all(ps, now_s() + 1);
    if (lo->dir)
        nftw(lo->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (lo->file)
        remove(lo->file);
    _exit(0);
}

/* The supervisor: never returns. */
static void supervisor(const char *code, double timeout, double kill_after, int fd,
                       const Leftovers *lo)
{
    Procs ps = {NULL, 0, 0};
    double deadline, kill_at = -1;
    int st = 0, lst, timed = 0, killed = 0, code_status;
    char line[64];
    pid_t w;
    signal(SIGCHLD, SIG_DFL);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0) {
        put(fd, "error PR_SET_CHILD_SUBREAPER failed\n");
        _exit(1);
    }
    if (getppid() != lo->caller)
        orphaned(&ps, lo);
    w = fork();
    if (w == 0) {
        close(fd);
        setsid();
        execl("/bin/sh", "sh", "-c", code, (char *)NULL);
        _exit(127);
    }
    if (w < 0) {
        put(fd, "error fork failed\n");
        _exit(1);
    }
    signal(SIGPIPE, SIG_IGN); /* a caller gone: still end every process */
    deadline = timeout > 0 ? now_s() + timeout : -1;
    while (!reap(w, &st)) {
        double t = now_s();
        if (getppid() != lo->caller)
            orphaned(&ps, lo);
        if (deadline >= 0 && !timed && t >= deadline) {
            timed = 1;
            kill_at = t + kill_after;
            signal_all(&ps, SIGTERM);
        }
        if (timed && !killed && t >= kill_at) {
            killed = 1;
            signal_all(&ps, SIGKILL);
        }
        nap();
    }
    /* after a timeout, what got SIGTERM has until kill_at to go; what
     * is still there then ignored it (killed) */
    while (timed && now_s() < kill_at && signal_all(&ps, 0) > 0) {
        if (getppid() != lo->caller)
            orphaned(&ps, lo);
        reap(-1, &lst);
        nap();
    }
    if (timed && signal_all(&ps, 0) > 0)
        killed = 1;
    code_status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
    snprintf(line, sizeof line, "status %d\ntimeout %d\nkilled %d\n", code_status, timed, killed);
    put(fd, line);
    put_left(fd, &ps);
    end_all(&ps, timed ? kill_at : now_s() + kill_after);
    if (getppid() != lo->caller)
        orphaned(&ps, lo);       /* the caller died while it waited */
    _exit(0);
}

int cgl_proc_supervise(lua_State *L)
{
    const char *code = luaL_checkstring(L, 1);
    double timeout = luaL_optnumber(L, 2, 0), kill_after = luaL_optnumber(L, 3, 5);
    Leftovers lo;
    int fds[2], st;
    pid_t pid;
    luaL_Buffer b;
    lo.caller = getpid();
    lo.dir = luaL_optstring(L, 4, NULL);
    lo.file = luaL_optstring(L, 5, NULL);
    if (pipe(fds) != 0)
        goto fail;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL); /* no buffered output written twice */
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        supervisor(code, timeout, kill_after, fds[1], &lo);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        goto fail;
    }
    luaL_buffinit(L, &b);
    for (;;) {
        char *p = luaL_prepbuffer(&b);
        ssize_t n = read(fds[0], p, LUAL_BUFFERSIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        luaL_addsize(&b, (size_t)n);
    }
    close(fds[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    luaL_pushresult(&b);
    return 1;
fail:
    lua_pushnil(L);
    lua_pushfstring(L, "cannot start the supervisor: %s", strerror(errno));
    lua_pushliteral(L, "io");
    return 3;
}

#else

int cgl_proc_supervise(lua_State *L)
{
    lua_pushnil(L);
    lua_pushliteral(L, "unsupported");
    return 2;
}

#endif
