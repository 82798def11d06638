/* SIGINT and SIGTERM while a whole run is profiled (until_exit).
 *
 * The handler only records the signal and sets a stand-in debug hook on
 * the state's main thread with lua_sethook, as lua.c's own SIGINT handler
 * does (Lua documents lua_sethook as safe in a signal handler): no
 * allocation, no Lua call. The stand-in (sig_hook) runs at the thread's
 * next call, return or line, outside the handler: it puts back the hook
 * it stood in for (the collector's, the user's or none) with the
 * instruction counter untouched, hands that hook the event, then acts:
 *
 * - SIGINT raises the error lua.c raises, "interrupted!", naming the
 *   signal: the script ends as an interrupted one does (lua.c prints the
 *   message and exits with 1), and the profile is written at the exit;
 * - SIGTERM calls the writer given at arm (it stops the profiler and
 *   writes the profile), then ends the process by SIGTERM itself, with
 *   the default action.
 *
 * A second signal of the same kind before the first is acted on takes
 * the default action (the handler is one-shot, as lua.c's): a run stuck in
 * a C function can still be stopped. SIGKILL cannot be caught: its
 * profile is lost.
 *
 * lua.c sets its SIGINT handler before each chunk it runs (docall), so
 * after `-lcallgrind.start` loaded, the script runs under lua.c's handler,
 * whose hook would replace the collector's: cg_prof_sig_rearm, called
 * where a main chunk is called, puts ours back.
 *
 * A handler reaches its state only through a global: S is the core's one
 * mutable global, set while a state is armed (one state at a time). */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof_signal.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"

#define NSIG_OURS 2
#define ALL_EVENTS (LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT)

static const int sig_no[NSIG_OURS] = {SIGINT, SIGTERM};

static struct {
    lua_State *L;               /* the armed state's main thread, or NULL */
    volatile sig_atomic_t pending;  /* caught, not acted on: its number */
    volatile sig_atomic_t fired[NSIG_OURS]; /* caught: SIG_DFL meanwhile */
    lua_Hook hook;              /* the hook sig_hook stands in for */
    int mask, count;
    int hc_off;                 /* lua_State.hookcount, or -1 */
    int armed[NSIG_OURS];       /* 0: it was ignored, left alone */
    struct sigaction old[NSIG_OURS];    /* what ours replaced */
} S;

/* The registry key of the writer a SIGTERM calls (its address). */
static const char sig_key = 's';

static void sig_hook(lua_State *L, lua_Debug *ar);

/* lua_sethook, with lua_State.hookcount kept: the collector's clock (it
 * reads the counter) runs on as if nothing had changed. */
static void sethook_keep_count(lua_State *L, lua_Hook h, int mask, int count)
{
    int hc = 0;
    if (S.hc_off >= 0)
        memcpy(&hc, (const char *)L + S.hc_off, sizeof hc);
    lua_sethook(L, h, mask, count);
    if (S.hc_off >= 0)
        memcpy((char *)L + S.hc_off, &hc, sizeof hc);
}

static void on_signal(int sig);

/* The disposition of signal k is our handler. */
static int is_ours(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == on_signal;
}

static int is_default(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

static void set_disposition(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = 0;            /* no SA_RESTART: a blocking read returns */
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* The handler: async-signal-safe calls only (sigaction, lua_sethook,
 * reads of the state's hook fields). */
static void on_signal(int sig)
{
    int saved = errno, k = sig == SIGTERM;
    lua_State *L = S.L;
    set_disposition(sig, SIG_DFL);      /* a second one acts at once */
    S.fired[k] = 1;
    if (S.pending != SIGTERM)
        S.pending = sig;
    if (L != NULL && lua_gethook(L) != sig_hook) {
        S.hook = lua_gethook(L);
        S.mask = lua_gethookmask(L);
        S.count = lua_gethookcount(L);
        /* every event, and the count events the old hook had, at its
         * count: sig_hook hands them on unchanged */
        sethook_keep_count(L, sig_hook, S.mask | ALL_EVENTS,
                           S.mask & LUA_MASKCOUNT ? S.count : INT_MAX);
    }
    errno = saved;
}

/* Our handler for signal k, unless it is ours already or ignored; what
 * it replaces is kept for disarm (not the SIG_DFL of a signal caught). */
static void install(int k)
{
    struct sigaction now;
    if (sigaction(sig_no[k], NULL, &now) != 0 || is_ours(&now))
        return;
    if (!S.fired[k]) {
        if (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN) {
            S.armed[k] = 0;
            return;
        }
        S.old[k] = now;
    }
    S.fired[k] = 0;
    S.armed[k] = 1;
    set_disposition(sig_no[k], on_signal);
}

/* Blocks (how SIG_BLOCK) or unblocks our signals; *old: the mask before. */
static void mask_ours(int how, sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(how, &set, old);
}

static lua_State *main_thread(lua_State *L)
{
    lua_State *M;
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    M = lua_tothread(L, -1);
    lua_pop(L, 1);
    return M;
}

static int event_mask(int event)
{
    switch (event) {
    case LUA_HOOKCALL:
    case LUA_HOOKTAILCALL:
        return LUA_MASKCALL;
    case LUA_HOOKRET:
        return LUA_MASKRET;
    case LUA_HOOKLINE:
        return LUA_MASKLINE;
    default:
        return LUA_MASKCOUNT;
    }
}

/* A SIGTERM acted on: the writer writes the profile (its own messages on
 * stderr), then the signal ends the process with its default action. */
static void terminate(lua_State *L)
{
    sigset_t set;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &sig_key);
    if (lua_isfunction(L, -1)) {
        lua_pushliteral(L, "SIGTERM");
        if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
            const char *msg = lua_tostring(L, -1);
            lua_writestringerror("callgrind.profiler: SIGTERM: %s\n",
                                 msg != NULL ? msg : "(an error object)");
        }
    }
    cg_prof_sig_disarm(L);
    set_disposition(SIGTERM, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGTERM);
    _exit(128 + SIGTERM);       /* not reached */
}

/* The stand-in hook: the hook it replaced back (on this thread: a
 * coroutine made meanwhile inherited it), the event handed to that hook,
 * then the signal caught acted on. */
static void sig_hook(lua_State *L, lua_Debug *ar)
{
    sigset_t old;
    int sig;
    lua_Hook h;
    mask_ours(SIG_BLOCK, &old);
    sig = S.pending;
    S.pending = 0;
    h = S.hook;
    sethook_keep_count(L, h, S.mask, S.count);
    if (!(S.mask & event_mask(ar->event)))
        h = NULL;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (h != NULL)
        h(L, ar);
    if (sig == 0 || S.L == NULL)
        return;
    if (sig == SIGINT) {
        install(0);             /* a script that goes on can be stopped again */
        luaL_error(L, "interrupted! (SIGINT)");
    }
    terminate(L);
}

int cg_prof_sig_arm(lua_State *L, int hc_off)
{
    lua_State *M = main_thread(L);
    int k;
    if (S.L != NULL && S.L != M) {
        lua_pop(L, 1);
        return 0;
    }
    lua_rawsetp(L, LUA_REGISTRYINDEX, &sig_key);
    S.hc_off = hc_off;
    S.pending = 0;
    for (k = 0; k < NSIG_OURS; k++) {
        S.fired[k] = 0;
        S.armed[k] = 1;
    }
    S.L = M;
    for (k = 0; k < NSIG_OURS; k++)
        install(k);
    return 1;
}

void cg_prof_sig_rearm(void)
{
    int k;
    if (S.L == NULL)
        return;
    for (k = 0; k < NSIG_OURS; k++)
        if (S.armed[k])
            install(k);
}

void cg_prof_sig_disarm(lua_State *L)
{
    sigset_t old;
    int k;
    if (S.L == NULL || S.L != main_thread(L))
        return;
    mask_ours(SIG_BLOCK, &old);
    for (k = 0; k < NSIG_OURS; k++) {
        struct sigaction now;
        if (S.armed[k] && sigaction(sig_no[k], NULL, &now) == 0
            && (is_ours(&now) || (S.fired[k] && is_default(&now))))
            sigaction(sig_no[k], &S.old[k], NULL);
        S.fired[k] = 0;
    }
    if (lua_gethook(S.L) == sig_hook)
        sethook_keep_count(S.L, S.hook, S.mask, S.count);
    S.L = NULL;
    S.pending = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &sig_key);
}
