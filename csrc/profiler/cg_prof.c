/* The Lua profiler's Lua face: the core module's prof_* functions
 * (start, stop, run, the collected data as Lua tables) over the
 * collector's state and its engines (cg_prof_state.h); the binding writes
 * their files (cg_lua_stacks.c: the stack record, the folded text). The
 * top layer of profiler/ (spec/layout_c_spec.lua): nothing below uses it. */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof.h"
#include "cg_prof_state.h"
#include "cg_prof_fold.h"
#include "cg_prof_records.h"
#include "cg_prof_names.h"
#include "cg_prof_signal.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

/* Appends the collected events of c to the array on top, after *k. */
static void append_costs(lua_State *L, const Prof *P, lua_Integer *k,
                         const Cost *c)
{
    int e;
    for (e = 0; e < NEV; e++)
        if (P->ev[e]) {
            lua_pushinteger(L, c->v[e]);
            lua_rawseti(L, -2, ++*k);
        }
}

/* A function's lines into the table on top (cg_prof_fn_lines). */
typedef struct LinesOut {
    lua_State *L;
    const Prof *P;
    lua_Integer k;
} LinesOut;

static void count_line(void *ud, int32_t line, const Cost *c)
{
    (void)line;
    (void)c;
    ((LinesOut *)ud)->k++;
}

static void push_line(void *ud, int32_t line, const Cost *c)
{
    LinesOut *o = (LinesOut *)ud;
    lua_pushinteger(o->L, line);
    lua_rawseti(o->L, -2, ++o->k);
    append_costs(o->L, o->P, &o->k, c);
}

/* Pushes the collected data:
 * { events = {...}, pid = n, info = { {func, name}, ... },
 *   lines = { [fn] = { line, cost..., line, cost..., ... } },
 *   edges = { caller, line, callee, count, cost..., ... } } */
static void push_stacks(lua_State *L, const Prof *P, int live_stacks, int nev);

static void push_data(lua_State *L, int live_stacks)
{
    static const char *const names[NEV] = {"Instr", "Time", "Alloc"};
    Prof *P = cg_prof_get(L);
    lua_Integer k;
    size_t i;
    int e, nev = 0;
    lua_createtable(L, 0, 5);
    lua_newtable(L);
    for (e = 0; e < NEV; e++)
        if (P->ev[e]) {
            lua_pushstring(L, names[e]);
            lua_rawseti(L, -2, ++nev);
        }
    lua_setfield(L, -2, "events");
    lua_pushinteger(L, (lua_Integer)getpid());
    lua_setfield(L, -2, "pid");
    lua_pushstring(L, P->vm ? "vm" : "hook");
    lua_setfield(L, -2, "engine");
    cg_prof_push_fninfo(P, L);
    lua_setfield(L, -2, "info");
    lua_createtable(L, (int)P->nfn, 0);
    for (i = 0; i < P->nfn; i++) {
        LinesOut o;
        o.L = L;
        o.P = P;
        o.k = 0;
        if (cg_prof_fn_lines(P, (int32_t)i, count_line, &o) != 0)
            luaL_error(L, "not enough memory");
        lua_createtable(L, (int)(o.k * (1 + nev)), 0);
        o.k = 0;
        cg_prof_fn_lines(P, (int32_t)i, push_line, &o);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "lines");
    /* made at its size: no copies while it grows (a page fault each) */
    lua_createtable(L, (int)(P->ned < (size_t)INT_MAX / (size_t)(4 + nev)
                             ? P->ned * (size_t)(4 + nev) : 0), 0);
    k = 0;
    for (i = 0; i < P->ned; i++) {
        const Edge *x = &P->edges[i];
        Cost incl;
        if (x->count == 0)
            continue;           /* a call still open nowhere: cannot be */
        lua_pushinteger(L, x->caller + 1);
        lua_rawseti(L, -2, ++k);
        lua_pushinteger(L, x->line);
        lua_rawseti(L, -2, ++k);
        lua_pushinteger(L, x->callee + 1);
        lua_rawseti(L, -2, ++k);
        lua_pushinteger(L, x->count);
        lua_rawseti(L, -2, ++k);
        incl = cg_prof_edge_incl(P, (int32_t)i);
        append_costs(L, P, &k, &incl);
    }
    lua_setfield(L, -2, "edges");
    push_stacks(L, P, live_stacks, nev);
}

/* data.stacks: nothing without stacks; the number of nodes still in the
 * state (live); else { parent, fn, cost..., ... } per node. */
static void push_stacks(lua_State *L, const Prof *P, int live_stacks, int nev)
{
    lua_Integer k;
    size_t i;
    if (P->stacks && live_stacks) {
        /* stacks = the number of nodes: they stay in the state until the
         * builder returns, for prof_write_folded (cg_lua_stacks.c) to read there */
        lua_pushinteger(L, (lua_Integer)P->nnode);
        lua_setfield(L, -2, "stacks");
    } else if (P->stacks) {
        /* stacks = { parent, fn, cost..., ... } per node (parent 0: none) */
        lua_createtable(L, (int)(P->nnode * (size_t)(2 + nev)), 0);
        k = 0;
        for (i = 0; i < P->nnode; i++) {
            const Node *x = &P->nodes[i];
            Cost self;
            cg_prof_node_cost(P, i, &self);
            lua_pushinteger(L, x->parent + 1);
            lua_rawseti(L, -2, ++k);
            lua_pushinteger(L, x->fn + 1);
            lua_rawseti(L, -2, ++k);
            append_costs(L, P, &k, &self);
        }
        lua_setfield(L, -2, "stacks");
    }
}

/* ---- the standard library's names ---- */

/* prof_std_name(f) -> the standard library's name of the C function f
 * (its _G name, or lib.name), or nil: f is no C function of the
 * standard library. Read from fresh copies of the libraries
 * (cg_prof_names.c), so that nothing the program loads or changes renames
 * them; the names are kept for the process, the new state (if one was
 * needed) closed. */
static int l_std_name(lua_State *L)
{
    lua_CFunction f = lua_tocfunction(L, 1);
    const char *name = f != NULL ? cg_prof_std_name_of(L, f, NULL) : NULL;
    cg_prof_std_names_done();
    if (name != NULL)
        lua_pushstring(L, name);
    else
        lua_pushnil(L);
    return 1;
}

/* Sets t[n] (t on the top of the stack) to the text of line n of the
 * len bytes at text, for each n for which want[n] (at index want) is
 * true; a line ends before its newline. */
static void pick_lines(lua_State *L, int want, const char *text, size_t len)
{
    const char *p = text, *end = text + len, *nl;
    lua_Integer n = 1;
    for (;;) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (lua_rawgeti(L, want, n) != LUA_TNIL && lua_toboolean(L, -1)) {
            lua_pushlstring(L, p, (size_t)((nl != NULL ? nl : end) - p));
            lua_rawseti(L, -3, n);
        }
        lua_pop(L, 1);
        if (nl == NULL)
            break;
        p = nl + 1;
        n++;
    }
}

/* prof_source_lines(source, want) -> { [n] = line n's text } for each n
 * of the set want, of a chunk's source: the file of "@path", the text of
 * a string chunk; no line for "=name" or a file that cannot be read.
 * The writer's names read a definition's line: reading each file whole
 * into a Lua string and finding its newlines in Lua cost a third of
 * writing a profile. */
static int l_source_lines(lua_State *L)
{
    size_t len;
    const char *source = luaL_checklstring(L, 1, &len);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lua_newtable(L);
    if (source[0] == '@') {
        FILE *f = fopen(source + 1, "rb");
        long size;
        char *buf;
        if (f == NULL)
            return 1;
        if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
            fclose(f);
            return 1;
        }
        /* a userdata: freed by the collector whatever happens next */
        buf = (char *)lua_newuserdatauv(L, (size_t)size + 1, 0);
        len = fread(buf, 1, (size_t)size, f);
        fclose(f);
        lua_insert(L, -2);
        pick_lines(L, 2, buf, len);
    } else if (source[0] != '=') {
        pick_lines(L, 2, source, len);
    }
    return 1;
}

/* ---- the module's functions ---- */

/* prof_own_hook(opts): debug.sethook stays free (cg_prof_own_hook) */
static int l_own_hook(lua_State *L)
{
    lua_pushboolean(L, cg_prof_own_hook(L, 1));
    return 1;
}

/* prof_start(opts, level [, writer]). With writer (until_exit), while
 * the profiler runs SIGINT raises "interrupted! (SIGINT)" where the code
 * is, and SIGTERM calls writer("SIGTERM"), then ends the process by
 * SIGTERM (cg_prof_signal.c; one Lua state of the process at a time);
 * the stop puts the handlers before back. Armed here, so that the
 * profile has no call of its own for it. */
static int l_start(lua_State *L)
{
    int level = (int)luaL_optinteger(L, 2, 0);
    int signals = !lua_isnoneornil(L, 3);
    if (signals)
        luaL_checktype(L, 3, LUA_TFUNCTION);
    cg_prof_start(L, 1, level);
    if (signals) {
        lua_settop(L, 3);
        cg_prof_sig_arm(L, cg_prof_get(L)->l54.hc_off);
    }
    return 0;
}

/* Also creates the collector's state: until_exit needs it older than the
 * object that writes at exit (finalizers run newest first). */
static int l_running(lua_State *L)
{
    lua_pushboolean(L, cg_prof_state(L)->running);
    return 1;
}

/* How instructions are counted, once calibrated (nil before the first
 * start): "counter" (read from lua_State) or "count hook"; and whether
 * function keys are read from the CallInfo. For the specs. */
static int l_mode(lua_State *L)
{
    Prof *P = cg_prof_state(L);
    if (!P->calibrated)
        return 0;
    lua_pushstring(L, P->l54.hc_off >= 0 ? "counter" : "count hook");
    lua_pushboolean(L, P->l54.ci_ok);
    return 2;
}

#define HOOK_REPLACED "the profiler's hook was replaced while profiling " \
                      "(debug.sethook): no profile"

/* The closure prof_stopper(builder [, soft]) makes: (...) ->
 * builder(data, ...), data nil when the profiler was not running. When
 * the hook was replaced it raises, or, soft, calls builder(nil, why, ...);
 * a soft builder always gets that second argument (nil when all went
 * well). */
static int l_stop(lua_State *L)
{
    Prof *P = cg_prof_get(L);
    int n = lua_gettop(L), soft = lua_toboolean(L, lua_upvalueindex(2));
    const char *why = NULL;
    /* the signal handlers of until_exit go first: a signal now is the
     * interpreter's */
    cg_prof_sig_disarm(L);
    if (P != NULL && P->running) {
        if (!cg_prof_stop(L)) {
            cg_prof_drop(L);
            if (!soft)
                return luaL_error(L, HOOK_REPLACED);
            why = HOOK_REPLACED;
            lua_pushnil(L);
        } else {
            /* soft (until_exit): the stacks are read where they are */
            push_data(L, soft);
            if (!soft)
                cg_prof_drop(L);
        }
    } else {
        lua_pushnil(L);
    }
    if (soft) {
        int status;
        if (why != NULL)
            lua_pushstring(L, why);
        else
            lua_pushnil(L);
        lua_insert(L, 1);
        n++;
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_insert(L, 2);
        status = lua_pcall(L, n + 1, LUA_MULTRET, 0);
        if (P != NULL && !P->running)
            cg_prof_drop(L);
        if (status != LUA_OK)
            return lua_error(L);
        return lua_gettop(L);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_insert(L, 2);
    lua_call(L, n + 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int l_stopper(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 2);
    lua_pushboolean(L, lua_toboolean(L, 2));
    lua_replace(L, 2);
    lua_pushcclosure(L, l_stop, 2);
    return 1;
}

/* prof_exec(file, argv, env): replaces the process with file (looked up
 * in PATH as a shell does), argv its arguments (argv[1] its name), with
 * the variables of env (name -> value) set; returns only when it cannot:
 * nil, "file: reason", errno. callgrind-lua exec: the interpreter keeps
 * the command's pid, so that a signal sent to the command reaches the
 * profiled script, and its exit status is the command's. */
static int l_exec(lua_State *L)
{
    const char *file = luaL_checkstring(L, 1);
    char **argv;
    size_t n, i;
    int err;
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    n = lua_rawlen(L, 2);
    argv = (char **)lua_newuserdatauv(L, (n + 1) * sizeof *argv, 0);
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 2, "the arguments must be strings");
        /* the string stays in argv's table: execvp does not write it */
        argv[i] = (char *)(uintptr_t)lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    argv[n] = NULL;
    lua_pushnil(L);
    while (lua_next(L, 3)) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 3, "names and values must be strings");
        if (setenv(lua_tostring(L, -2), lua_tostring(L, -1), 1) != 0) {
            err = errno;
            lua_pushnil(L);
            lua_pushfstring(L, "%s: %s", lua_tostring(L, -3), strerror(err));
            lua_pushinteger(L, err);
            return 3;
        }
        lua_pop(L, 1);
    }
    fflush(NULL);
    execvp(file, argv);
    err = errno;
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", file, strerror(err));
    lua_pushinteger(L, err);
    return 3;
}

static int l_pid(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)getpid());
    return 1;
}

/* prof_pause() -> data: stops the running profiler and returns what it
 * collected (stacks as a table), as prof_run does; the signal handlers
 * of until_exit stay armed. A nested profile's pause of the outer one
 * (callgrind.profiler: the outer restarts with prof_start after it). */
static int l_pause(lua_State *L)
{
    Prof *P = cg_prof_get(L);
    if (P == NULL || !P->running)
        return luaL_error(L, "the profiler is not running");
    if (!cg_prof_stop(L)) {
        cg_prof_drop(L);
        return luaL_error(L, HOOK_REPLACED);
    }
    push_data(L, 0);
    cg_prof_drop(L);
    return 1;
}

/* prof_resume(opts, level, ok, ...) -> ...: starts as prof_start(opts,
 * level) does, then returns ... (ok) or raises the error ... (not ok). A
 * nested profile tail-calls it to restart the outer one: no Lua
 * instruction runs between the start and the return to its caller. */
static int l_resume(lua_State *L)
{
    int level = (int)luaL_checkinteger(L, 2);
    cg_prof_start(L, 1, level);
    if (!lua_toboolean(L, 3)) {
        lua_settop(L, 4);
        return lua_error(L);
    }
    return lua_gettop(L) - 3;
}

/* prof_live_stacks() -> the stacks still in the state after a soft stop
 * (until_exit's builder), as a table: { parent, fn, cost..., ... }. */
static int l_live_stacks(lua_State *L)
{
    Prof *P = cg_prof_get(L);
    int e, nev = 0;
    if (P == NULL || P->running || !P->stacks)
        return 0;
    for (e = 0; e < NEV; e++)
        nev += P->ev[e] != 0;
    lua_newtable(L);
    push_stacks(L, P, 0, nev);
    lua_getfield(L, -1, "stacks");
    return 1;
}

/* prof_memory() -> the bytes the collector's records hold outside the Lua
 * heap now (0 before the first start), and the number of records. */
static int l_memory(lua_State *L)
{
    Prof *P = cg_prof_get(L);
    lua_pushinteger(L, P != NULL ? (lua_Integer)cg_prof_bytes(P) : 0);
    lua_pushinteger(L, P != NULL ? (lua_Integer)P->nfn : 0);
    return 2;
}

/* prof_run(fn, opts) -> data, fn's results; an error in fn stops the
 * profiler and is raised again. */
static int l_run(lua_State *L)
{
    int base, status;
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 2);
    cg_prof_start(L, 2, 0);
    base = lua_gettop(L);
    lua_pushvalue(L, 1);
    status = lua_pcall(L, 0, LUA_MULTRET, 0);
    if (!cg_prof_stop(L)) {
        cg_prof_drop(L);
        return luaL_error(L, HOOK_REPLACED);
    }
    if (status != LUA_OK) {
        cg_prof_drop(L);
        return lua_error(L);
    }
    push_data(L, 0);
    cg_prof_drop(L);
    lua_insert(L, base + 1);
    return lua_gettop(L) - base;
}

void cg_prof_register(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"prof_start", l_start},
        {"prof_stopper", l_stopper},
        {"prof_run", l_run},
        {"prof_pause", l_pause},
        {"prof_resume", l_resume},
        {"prof_live_stacks", l_live_stacks},
        {"prof_running", l_running},
        {"prof_own_hook", l_own_hook},
        {"prof_mode", l_mode},
        {"prof_pid", l_pid},
        {"prof_exec", l_exec},
        {"prof_std_name", l_std_name},
        {"prof_source_lines", l_source_lines},
        {"prof_memory", l_memory},
        {NULL, NULL}
    };
    luaL_setfuncs(L, funcs, 0);
}

void cg_prof_register_start(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"prof_start", l_start},
        {"prof_stopper", l_stopper},
        {"prof_running", l_running},
        {"prof_own_hook", l_own_hook},
        {"prof_source_lines", l_source_lines},
        {NULL, NULL}
    };
    luaL_setfuncs(L, funcs, 0);
}
