/* The profile of a whole program, started and written without Lua code:
 * prof_autostart (what `-lcallgrind.start` calls: the CALLGRIND_*
 * variables, the checks, the sentinel whose collection writes at the
 * Lua state's closing, os.exit wrapped, the signals) and the write at
 * exit, the names of callgrind.profiler.writer (its describe, to_text and
 * exit_write, the reference: the two must give the same bytes) made here
 * through the Lua API, so that a profiled script's start-up and end parse
 * no Lua module. A profile nested in the program's (callgrind.profiler's
 * API) needs its segments merged: then the Lua writer is loaded, as
 * before. Sits on top of cg_prof.c's functions, reached through the core
 * module table. */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof_exit.h"
#include "cg_prof_describe.h"
#include "cg_prof_names.h"
#include "cg_atomic.h"
#include "cg_emit.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"
#include "lua.h"

/* Its address keys the registry's running profiles (exit.nest). */
static const char nest_key = 'n';

/* Pushes core.internal[name]. */
static void internal_get(lua_State *L, const char *name)
{
    cg_prof_core_get(L, "internal");
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
}

/* Pushes the running profiles (callgrind.profiler.exit's nest), made at
 * the first call. */
static void push_nest(lua_State *L)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &nest_key) == LUA_TTABLE)
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &nest_key);
}

/* prof_nest() -> the running profiles, outermost first (exit.nest). */
static int l_nest(lua_State *L)
{
    push_nest(L);
    return 1;
}

/* ---- the callgrind text (the writer's to_text) ---- */

/* Pushes the command line of the running script (from `arg`), or nil. */
static void command_line(lua_State *L)
{
    lua_Integer i = 0, j, n;
    luaL_Buffer b;
    int a;
    lua_pushglobaltable(L);
    lua_pushliteral(L, "arg");
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_pushnil(L);
        return;
    }
    a = lua_gettop(L);
    for (;;) {
        int t = lua_geti(L, a, i - 1);
        lua_pop(L, 1);
        if (t == LUA_TNIL)
            break;
        i--;
    }
    n = luaL_len(L, a);
    luaL_buffinit(L, &b);
    for (j = i; j <= n; j++) {
        lua_geti(L, a, j);
        luaL_tolstring(L, -1, NULL);
        lua_remove(L, -2);
        if (j > i)
            luaL_addchar(&b, ' ');
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_remove(L, a);
}

typedef struct Call {
    lua_Integer line, callee, k;
} Call;

static int call_cmp(const void *a, const void *b)
{
    const Call *x = (const Call *)a, *y = (const Call *)b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static const char *long_name(const char *ev)
{
    if (strcmp(ev, "Instr") == 0)
        return "Lua VM instructions";
    if (strcmp(ev, "Time") == 0)
        return "Time (ns)";
    if (strcmp(ev, "Alloc") == 0)
        return "Bytes allocated";
    return NULL;
}

static CgStr cg_str(const char *s, size_t len)
{
    CgStr c;
    c.ptr = s;
    c.len = len;
    return c;
}

static CgStr of_str(Str s)
{
    return cg_str(s.s, s.len);
}

/* The calls of the edges (at ed, stride integers each) by caller:
 * first[c] the index in calls of caller c's first, cnt[c] how many. */
static void text_calls(W *w, int ed, lua_Integer stride, lua_Integer ncall,
                       Call *calls, size_t *first, size_t *cnt)
{
    lua_State *L = w->L;
    lua_Integer j;
    size_t i, *pos;
    pos = (size_t *)lua_newuserdatauv(L, ((size_t)ncall + 1) * sizeof(size_t), 0);
    memset(cnt, 0, (w->nfn + 2) * sizeof(size_t));
    for (j = 0; j < ncall; j++) {
        lua_Integer caller;
        lua_rawgeti(L, ed, j * stride + 1);
        caller = lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (caller < 1 || (size_t)caller > w->nfn)
            luaL_error(L, "a call's caller is no function of the profile");
        pos[j] = (size_t)caller;
        cnt[caller]++;
    }
    first[0] = 0;
    for (i = 1; (size_t)i <= w->nfn + 1; i++)
        first[i] = first[i - 1] + cnt[i - 1];
    memset(cnt, 0, (w->nfn + 2) * sizeof(size_t));
    for (j = 0; j < ncall; j++) {
        size_t c = pos[j];
        Call *x = &calls[first[c] + cnt[c]++];
        x->k = j * stride + 1;
        lua_rawgeti(L, ed, x->k + 1);
        x->line = lua_tointeger(L, -1);
        lua_rawgeti(L, ed, x->k + 2);
        x->callee = lua_tointeger(L, -1);
        lua_pop(L, 2);
        if (x->callee < 1 || (size_t)x->callee > w->nfn)
            luaL_error(L, "a call's callee is no function of the profile");
    }
    lua_pop(L, 1);
}

/* The integer t[i] (t at idx); raises when it is none. */
static int64_t int_at(lua_State *L, int idx, lua_Integer i)
{
    int ok;
    int64_t v;
    lua_rawgeti(L, idx, i);
    v = (int64_t)lua_tointegerx(L, -1, &ok);
    if (!ok)
        luaL_error(L, "the profile's data holds a value that is no integer");
    lua_pop(L, 1);
    return v;
}

/* The most events a profile of the profiler has (Instr, Time, Alloc) */
#define TEXT_EVENTS 8
#define EXIT_TEXT "callgrind.ExitText"

static int text_gc(lua_State *L)
{
    cg_writer_free((CgWriter *)lua_touserdata(L, 1));
    return 0;
}

/* Pushes a writer into memory (compressed names), freed when collected
 * (an error on the way leaks nothing). */
static CgWriter *new_text(lua_State *L)
{
    CgWriter *tw = (CgWriter *)lua_newuserdatauv(L, sizeof *tw, 0);
    cg_writer_init_mem(tw, 1);
    if (luaL_newmetatable(L, EXIT_TEXT)) {
        lua_pushcfunction(L, text_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return tw;
}

/* The part's header: pid, the command line (at cmd), the events (at
 * events) with their long names, the engine (a desc: line); what the Lua
 * writer gives its emitter's part. */
static void text_part(W *w, CgWriter *tw, int events, int nev, int cmd)
{
    lua_State *L = w->L;
    CgWritePart h;
    CgStr evs[TEXT_EVENTS], posname = cg_str("line", 4);
    CgWriteEvent evl[TEXT_EVENTS];
    CgWriteDesc desc;
    uint8_t poskind = CG_POS_LINE;
    int i, top = lua_gettop(L);
    memset(&h, 0, sizeof h);
    lua_getfield(L, w->data, "pid");
    h.pid = (int64_t)lua_tointegerx(L, -1, &h.has_pid);
    if (!lua_isnil(L, cmd))
        h.cmd.ptr = lua_tolstring(L, cmd, &h.cmd.len);
    if (lua_getfield(L, w->data, "engine") != LUA_TNIL && lua_toboolean(L, -1)) {
        desc.type = cg_str("Engine", 6);
        desc.value.ptr = luaL_checklstring(L, -1, &desc.value.len);
        h.desc = &desc;
        h.ndesc = 1;
    }
    h.npos = 1;
    h.posname = &posname;
    h.poskind = &poskind;
    for (i = 0; i < nev; i++) {
        const char *ln;
        lua_rawgeti(L, events, i + 1);
        evs[i].ptr = luaL_checklstring(L, -1, &evs[i].len);
        lua_pop(L, 1);          /* (the events table keeps it) */
        evl[i].name = evs[i];
        ln = long_name(evs[i].ptr);
        evl[i].long_name = cg_str(ln, ln != NULL ? strlen(ln) : 0);
        evl[i].formula = cg_str(NULL, 0);
    }
    h.events = evs;
    h.nev = (size_t)nev;
    h.event_lines = evl;
    h.nevent_lines = (size_t)nev;
    cg_write_part(tw, &h);
    lua_settop(L, top);
}

/* The cost lines of a function (flat at -1: line, its nev costs, ...),
 * their costs added to totals. */
static void text_lines(lua_State *L, CgWriter *tw, int nev, int64_t *totals)
{
    int t = lua_gettop(L), j;
    lua_Integer n = (lua_Integer)lua_rawlen(L, t), k;
    uint64_t pos[CG_MAX_POSITIONS] = {0};
    int64_t cost[TEXT_EVENTS];
    for (k = 1; k + nev <= n && tw->status == CG_OK; k += nev + 1) {
        pos[0] = (uint64_t)int_at(L, t, k);
        for (j = 0; j < nev; j++) {
            cost[j] = int_at(L, t, k + 1 + j);
            totals[j] += cost[j];
        }
        cg_write_line(tw, pos, cost, (size_t)nev);
    }
}

/* The call x (its edge at ed): callee, count, its line, inclusive cost. */
static void text_call(W *w, CgWriter *tw, int ed, int nev, const Call *x)
{
    lua_State *L = w->L;
    const Fn *callee = &w->fns[x->callee - 1];
    CgWriteFn f;
    uint64_t pos[CG_MAX_POSITIONS] = {0}, tgt[CG_MAX_POSITIONS] = {0};
    int64_t cost[TEXT_EVENTS];
    int v;
    f.obj = cg_str(NULL, 0);
    f.file = of_str(callee->file);
    f.name = of_str(callee->name);
    f.hint = 0;
    tgt[0] = (uint64_t)callee->line;
    pos[0] = (uint64_t)x->line;
    for (v = 0; v < nev; v++)
        cost[v] = int_at(L, ed, x->k + 4 + v);
    cg_write_call(tw, &f, (uint64_t)int_at(L, ed, x->k + 3), tgt, pos, cost,
                  (size_t)nev);
}

/* to_text(data, cmd at cmd): the text pushed, written through the
 * emitter (cg_emit.h) as the Lua writer's emitter writes it. */
static void to_text(W *w, int cmd)
{
    lua_State *L = w->L;
    int events, nev, ed, lines, i;
    lua_Integer ned, stride, ncall;
    Call *calls;
    size_t *first, *cnt, len;
    CgWriter *tw;
    int64_t totals[TEXT_EVENTS];
    const char *text;
    lua_getfield(L, w->data, "events");
    events = lua_gettop(L);
    nev = (int)lua_rawlen(L, events);
    if (nev < 1 || nev > TEXT_EVENTS)
        luaL_error(L, "the profile has %d events", nev);
    tw = new_text(L);
    cg_write_begin(tw, cg_str("callgrind.lua profiler", 22));
    text_part(w, tw, events, nev, cmd);
    lua_getfield(L, w->data, "edges");
    ed = lua_gettop(L);
    lua_getfield(L, w->data, "lines");
    lines = lua_gettop(L);
    stride = 4 + nev;
    ned = (lua_Integer)lua_rawlen(L, ed);
    ncall = ned / stride;
    /* the calls by caller, each caller's in order of line, then callee */
    calls = (Call *)lua_newuserdatauv(L, (size_t)ncall * sizeof(Call) + 1, 0);
    first = (size_t *)lua_newuserdatauv(L, (w->nfn + 2) * sizeof(size_t), 0);
    cnt = (size_t *)lua_newuserdatauv(L, (w->nfn + 2) * sizeof(size_t), 0);
    text_calls(w, ed, stride, ncall, calls, first, cnt);
    for (i = 0; i < nev; i++)
        totals[i] = 0;
    for (i = 1; (size_t)i <= w->nfn; i++) {
        Fn *fn = &w->fns[i - 1];
        size_t m = cnt[i], c;
        lua_rawgeti(L, lines, i);
        if (lua_rawlen(L, -1) > 0 || m > 0) {
            CgWriteFn f;
            f.obj = cg_str(NULL, 0);
            f.file = of_str(fn->file);
            f.name = of_str(fn->name);
            f.hint = 0;
            cg_write_fn(tw, &f);
            text_lines(L, tw, nev, totals);
            qsort(calls + first[i], m, sizeof(Call), call_cmp);
            for (c = 0; c < m; c++)
                text_call(w, tw, ed, nev, &calls[first[i] + c]);
        }
        lua_pop(L, 1);
    }
    cg_write_totals(tw, totals);
    cg_write_end(tw);
    if (tw->status != CG_OK) {
        lua_pushstring(L, tw->status == CG_ENOMEM ? "out of memory" : "write failed");
        lua_error(L);
    }
    text = cg_writer_data(tw, &len);
    lua_pushlstring(L, text != NULL ? text : "", len);
    cg_writer_free(tw);
    lua_replace(L, events);
    lua_settop(L, events);
}

/* ---- the write at exit (the writer's exit_write) ---- */

/* One line on stderr: no profile written to path, and why (each blank
 * run with a newline in the cause one space). */
static void complain(const char *path, const char *cause)
{
    const char *p = cause;
    fprintf(stderr, "callgrind.profiler: no profile written to %s: ", path);
    while (*p != '\0') {
        if (isspace((unsigned char)*p)) {
            const char *q = p;
            int nl = 0;
            while (*q != '\0' && isspace((unsigned char)*q))
                nl |= *q++ == '\n';
            if (nl)
                fputc(' ', stderr);
            else
                fwrite(p, 1, (size_t)(q - p), stderr);
            p = q;
        } else {
            fputc(*p++, stderr);
        }
    }
    fputc('\n', stderr);
    fflush(stderr);
}

/* The cause of a failed write ("path: cause") without its path. */
static const char *cause_in(const char *path, const char *err)
{
    size_t plen = strlen(path);
    if (err == NULL)
        return "unknown error";
    if (strncmp(err, path, plen) == 0 && err[plen] == ':' && err[plen + 1] == ' ')
        return err + plen + 2;
    return err;
}

/* The cause of a failed core write (nil, "path: cause") without its path. */
static const char *cause_of(lua_State *L, const char *path, int idx)
{
    return cause_in(path, lua_tostring(L, idx));
}

/* The writer's safe(s) pushed: control bytes as \xHH, a blank at the
 * start or the end as \x20. */
static void push_safe(lua_State *L, Str s)
{
    luaL_Buffer b;
    size_t i, len;
    const char *t;
    char hex[8];
    luaL_buffinit(L, &b);
    for (i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.s[i];
        if (iscntrl(c) || c == 127) {
            snprintf(hex, sizeof hex, "\\x%02x", c);
            luaL_addstring(&b, hex);
        } else {
            luaL_addchar(&b, (char)c);
        }
    }
    luaL_pushresult(&b);
    t = lua_tolstring(L, -1, &len);
    if (len > 0 && t[0] == ' ') {
        lua_pushliteral(L, "\\x20");
        lua_pushlstring(L, t + 1, len - 1);
        lua_concat(L, 2);
        lua_remove(L, -2);
        t = lua_tolstring(L, -1, &len);
    }
    if (len > 0 && t[len - 1] == ' ') {
        lua_pushlstring(L, t, len - 1);
        lua_pushliteral(L, "\\x20");
        lua_concat(L, 2);
        lua_remove(L, -2);
    }
}

/* util.fold_escape(s) pushed */
static void push_fold_escaped(lua_State *L, Str s)
{
    luaL_Buffer b;
    size_t i;
    luaL_buffinit(L, &b);
    for (i = 0; i < s.len; i++) {
        char c = s.s[i];
        if (c == '\\')
            luaL_addstring(&b, "\\\\");
        else if (c == ';')
            luaL_addstring(&b, "\\;");
        else if (c == '\n')
            luaL_addstring(&b, "\\n");
        else if (c == '\r')
            luaL_addstring(&b, "\\r");
        else
            luaL_addchar(&b, c);
    }
    luaL_pushresult(&b);
}

/* exit_write's text: (data, stacks) -> text, with w's names; raises. */
static int describe_and_text(lua_State *L)
{
    W *w = (W *)lua_touserdata(L, 1);
    int cmd;
    w->data = 2;
    lua_settop(L, 2);
    lua_newtable(L);
    w->anchor = 3;
    lua_pushliteral(L, "");
    if (!luaL_getmetafield(L, -1, "__index"))
        lua_pushnil(L);
    lua_remove(L, -2);
    w->strlib = 4;
    lua_newtable(L);
    w->cmod = 5;
    lua_newtable(L);
    w->by_file = 6;
    lua_newtable(L);
    w->by_sub = 7;
    lua_pushnil(L);             /* (made by the first module_of) */
    w->templates = 8;
    lua_newtable(L);
    w->srccache = 9;
    lua_newtable(L);
    w->want = 10;
    w->indexed = 0;
    w->named = 0;
    cg_prof_describe(w);
    command_line(L);
    cmd = lua_gettop(L);
    to_text(w, cmd);
    /* the text, and the anchor of the names (kept by the caller) */
    lua_pushvalue(L, w->anchor);
    return 2;
}

/* The 16 hex digits of the end line of the profile's text at idx (the
 * writer's "# end digest=fnv1a64:" line, its last), or nil: read from
 * the end, not searched for (a pattern tried at every byte of a large
 * profile took 8.8 million instructions on luacheck's). */
static void push_digest(lua_State *L, int idx)
{
    static const char head[] = "# end digest=fnv1a64:";
    size_t len, hl = sizeof head - 1;
    const char *s = lua_tolstring(L, idx, &len), *d;
    if (s == NULL || len < hl + 17 || s[len - 1] != '\n') {
        lua_pushnil(L);
        return;
    }
    d = s + len - 17;
    if (memcmp(d - hl, head, hl) != 0 || (d - hl > s && *(d - hl - 1) != '\n')
        || strspn(d, "0123456789abcdef") != 16) {
        lua_pushnil(L);
        return;
    }
    lua_pushlstring(L, d, 16);
}

/* Writes the stack record or the folded text beside the profile:
 * (w, data, spath, folded, text) -> true, or nil and the cause. */
static int write_stacks(lua_State *L)
{
    W *w = (W *)lua_touserdata(L, 1);
    int folded = lua_toboolean(L, 4);
    size_t i;
    lua_getfield(L, 2, "events");
    lua_Integer nev = (lua_Integer)lua_rawlen(L, -1);
    lua_pop(L, 1);
    if (folded) {
        cg_prof_core_get(L, "prof_write_folded");
        lua_pushvalue(L, 3);
        lua_getfield(L, 2, "stacks");
        lua_pushinteger(L, 2 + nev);
        lua_createtable(L, (int)w->nfn, 0);
        for (i = 0; i < w->nfn; i++) {
            push_fold_escaped(L, w->fns[i].name);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_call(L, 4, 2);
    } else {
        internal_get(L, "write_stack_record");
        lua_pushvalue(L, 3);
        lua_getfield(L, 2, "stacks");
        lua_getfield(L, 2, "events");
        lua_createtable(L, (int)w->nfn, 0);
        lua_createtable(L, (int)w->nfn, 0);
        for (i = 0; i < w->nfn; i++) {
            push_safe(L, w->fns[i].file);
            lua_rawseti(L, -3, (lua_Integer)i + 1);
            push_safe(L, w->fns[i].name);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        push_digest(L, 5);
        lua_call(L, 6, 2);
    }
    return 2;
}

/* exit_write(data, why, sig, out, stacks): callgrind.profiler.writer's,
 * the profile of a run that nested none. Failures are one line on
 * stderr. */
static void exit_write(lua_State *L, int data, const char *why,
                       const char *sig, const char *out, int stacks)
{
    char pidpath[64];
    const char *path = out;
    W w;
    int top = lua_gettop(L), status;
    data = lua_absindex(L, data);
    memset(&w, 0, sizeof w);
    w.L = L;
    if (path == NULL) {
        snprintf(pidpath, sizeof pidpath, "callgrind.out.%ld", (long)getpid());
        path = pidpath;
    }
    if (lua_isnil(L, data)) {
        complain(path, why != NULL ? why : "the profiler was stopped before the end");
        return;
    }
    lua_pushcfunction(L, describe_and_text);
    lua_pushlightuserdata(L, &w);
    lua_pushvalue(L, data);
    status = lua_pcall(L, 2, 2, 0);
    cg_prof_std_names_done();
    if (status != LUA_OK) {
        luaL_tolstring(L, -1, NULL);
        lua_pushfstring(L, "error while writing: %s", lua_tostring(L, -1));
        complain(path, lua_tostring(L, -1));
        lua_settop(L, top);
        return;
    }
    /* text at top + 1, anchor at top + 2 */
    {
        size_t len;
        const char *text = lua_tolstring(L, top + 1, &len);
        char msg[1024];
        if (cg_write_file_atomic(path, text, len, msg, sizeof msg) != CG_OK) {
            complain(path, cause_in(path, msg));
            lua_settop(L, top);
            return;
        }
    }
    if (sig != NULL) {
        fprintf(stderr, "callgrind.profiler: %s: profile written to %s\n", sig, path);
        fflush(stderr);
    }
    lua_getfield(L, data, "stacks");
    if (!lua_isnil(L, -1) && lua_toboolean(L, -1)) {
        const char *spath;
        lua_pop(L, 1);
        lua_pushfstring(L, "%s%s", path, stacks == 2 ? ".folded" : ".stacks");
        spath = lua_tostring(L, -1);
        lua_pushcfunction(L, write_stacks);
        lua_pushlightuserdata(L, &w);
        lua_pushvalue(L, data);
        lua_pushvalue(L, -4);
        lua_pushboolean(L, stacks == 2);
        lua_pushvalue(L, top + 1);
        status = lua_pcall(L, 5, 2, 0);
        if (status != LUA_OK) {
            luaL_tolstring(L, -1, NULL);
            lua_pushfstring(L, "error while writing: %s", lua_tostring(L, -1));
            complain(spath, lua_tostring(L, -1));
        } else if (!lua_toboolean(L, -2)) {
            complain(spath, cause_of(L, spath, -1));
        }
    }
    lua_settop(L, top);
}

/* ---- the start (callgrind.start) ---- */

/* The context's fields (upvalue 1 of the writing closures): */
#define CTX_OPTS "opts"
#define CTX_OUT "out"
#define CTX_PATH "path"
#define CTX_DONE "done"
#define CTX_EXIT "exit"
#define CTX_REQUIRE "require"

/* Loads callgrind.profiler.writer (and merge) with the module path of
 * the start, calls its exit_write(data, why, sig, out, stacks): the
 * profile that nested one (or, for the specs, the second copy). */
static void lua_exit_write(lua_State *L, int ctx, int data, int why, int sig,
                           int out, int merge)
{
    int top = lua_gettop(L), ok;
    cg_prof_package_field(L, "path");
    if (lua_getglobal(L, "package") == LUA_TTABLE) {
        lua_getfield(L, ctx, CTX_PATH);
        lua_setfield(L, -2, "path");
    }
    lua_pop(L, 1);
    lua_getfield(L, ctx, CTX_REQUIRE);
    lua_pushliteral(L, "callgrind.profiler.writer");
    ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
    if (ok && merge) {
        lua_getfield(L, ctx, CTX_REQUIRE);
        lua_pushliteral(L, "callgrind.profiler.merge");
        ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
        if (ok)
            lua_pop(L, 1);
    }
    /* package.path as the script left it */
    if (lua_getglobal(L, "package") == LUA_TTABLE) {
        lua_pushvalue(L, top + 1);
        lua_setfield(L, -2, "path");
    }
    lua_pop(L, 1);
    if (!ok) {
        const char *path;
        luaL_tolstring(L, -1, NULL);
        lua_pushfstring(L, "cannot load the writer: %s", lua_tostring(L, -1));
        if (!lua_isnil(L, out)) {
            path = lua_tostring(L, out);
        } else {
            lua_pushfstring(L, "callgrind.out.%d", (int)getpid());
            path = lua_tostring(L, -1);
            lua_insert(L, -2);
        }
        complain(path, lua_tostring(L, -1));
        lua_settop(L, top);
        return;
    }
    lua_getfield(L, -1, "exit_write");
    lua_pushvalue(L, data);
    lua_pushvalue(L, why);
    lua_pushvalue(L, sig);
    lua_pushvalue(L, out);
    lua_getfield(L, ctx, CTX_OPTS);
    lua_getfield(L, -1, "stacks");
    lua_remove(L, -2);
    lua_call(L, 5, 0);
    lua_settop(L, top);
}

/* The writer the stoppers call: (data, why [, sig]), once. */
static int l_write(lua_State *L)
{
    int ctx = lua_upvalueindex(1), nested = 0, stacks;
    const char *sig, *out, *why;
    lua_settop(L, 3);
    /* sig: a string from the signal's stopper (the sentinel's __gc
     * passes the sentinel) */
    if (lua_type(L, 3) != LUA_TSTRING) {
        lua_pushnil(L);
        lua_replace(L, 3);
    }
    lua_getfield(L, ctx, CTX_DONE);
    if (lua_toboolean(L, -1))
        return 0;
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    lua_setfield(L, ctx, CTX_DONE);
    lua_getfield(L, ctx, CTX_OUT);  /* 4 */
    push_nest(L);                   /* 5 */
    if (lua_rawgeti(L, 5, (lua_Integer)lua_rawlen(L, 5)) == LUA_TTABLE) {
        lua_getfield(L, -1, "parts");
        nested = lua_istable(L, -1) && lua_rawlen(L, -1) > 0;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (nested) {
        lua_exit_write(L, ctx, 1, 2, 3, 4, 1);
        return 0;
    }
    /* writer.unnest: the context leaves the running profiles */
    if (lua_rawlen(L, 5) > 0) {
        lua_pushnil(L);
        lua_rawseti(L, 5, (lua_Integer)lua_rawlen(L, 5));
    }
    lua_getfield(L, ctx, CTX_OPTS);
    lua_getfield(L, -1, "stacks");
    stacks = lua_type(L, -1) == LUA_TSTRING ? 2 : lua_toboolean(L, -1);
    lua_pop(L, 2);
    why = lua_tostring(L, 2);
    sig = lua_tostring(L, 3);
    out = lua_tostring(L, 4);
    exit_write(L, 1, why, sig, out, stacks);
    /* CALLGRIND_EXIT_LUA_OUT (the specs): the Lua writer's profile of
     * the same data into that file too */
    {
        const char *also = getenv("CALLGRIND_EXIT_LUA_OUT");
        if (also != NULL && *also != '\0') {
            lua_pushstring(L, also);
            lua_pushnil(L);
            lua_exit_write(L, ctx, 1, 2, lua_gettop(L), lua_gettop(L) - 1, 0);
        }
    }
    return 0;
}

/* os.exit's replacement's builder: (data, why, ...) -> writes, then
 * the os.exit of the start with ... */
static int l_exit(lua_State *L)
{
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 0);
    lua_getfield(L, lua_upvalueindex(1), CTX_EXIT);
    lua_rotate(L, 3, 1);
    lua_call(L, n - 2 < 0 ? 0 : n - 2, LUA_MULTRET);
    return lua_gettop(L) - 2;
}

/* CALLGRIND_LINES / CALLGRIND_STACKS: pushes the value (boolean, or the
 * string also). */
static void flag(lua_State *L, const char *name, int def, const char *also)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        lua_pushboolean(L, def);
    } else if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
        lua_pushboolean(L, v[0] == '1');
    } else if (also != NULL && strcmp(v, also) == 0) {
        lua_pushstring(L, v);
    } else {
        lua_pushfstring(L, "callgrind.start: %s is '%s'; expected 0%s%s%s", name, v,
                        also ? ", 1 or " : " or 1", also ? also : "", "");
        lua_error(L);
    }
}

/* Pushes the depth of the frame at level of L (it and those below). */
static int depth_of(lua_State *L, int level)
{
    lua_Debug ar;
    int n = level;
    while (lua_getstack(L, n + 1, &ar))
        n++;
    return n - level + 1;
}

/* The options of CALLGRIND_EVENTS, CALLGRIND_LINES and CALLGRIND_STACKS
 * into the table at opts; raises, as callgrind.start did, on a bad one. */
static void read_opts(lua_State *L, int opts)
{
    const char *ev = getenv("CALLGRIND_EVENTS");
    while (ev != NULL && *ev != '\0') {
        const char *p = ev;
        size_t len;
        while (*p != '\0' && *p != ',' && !isspace((unsigned char)*p))
            p++;
        len = (size_t)(p - ev);
        if (len == 4 && memcmp(ev, "Time", 4) == 0) {
            lua_pushboolean(L, 1);
            lua_setfield(L, opts, "time");
        } else if (len == 5 && memcmp(ev, "Alloc", 5) == 0) {
            lua_pushboolean(L, 1);
            lua_setfield(L, opts, "alloc");
        } else if (len > 0 && !(len == 5 && memcmp(ev, "Instr", 5) == 0)) {
            lua_pushliteral(L, "callgrind.start: CALLGRIND_EVENTS lists '");
            lua_pushlstring(L, ev, len);
            lua_pushliteral(L, "'; known: Instr, Time, Alloc");
            lua_concat(L, 3);
            lua_error(L);
        }
        ev = *p != '\0' ? p + 1 : p;
    }
    flag(L, "CALLGRIND_LINES", 1, NULL);
    lua_setfield(L, opts, "lines");
    flag(L, "CALLGRIND_STACKS", 0, "folded");
    lua_setfield(L, opts, "stacks");
}

/* exit.check_free("until_exit", opts): raises when the profiler runs or
 * a foreign debug hook is set. */
static void check_free(lua_State *L, int opts)
{
    /* check_free("until_exit", opts); prof_running makes the collector's
     * state, so that it is finalized after the sentinel */
    cg_prof_core_get(L, "prof_running");
    lua_call(L, 0, 1);
    if (lua_toboolean(L, -1)) {
        luaL_where(L, 1);
        lua_pushliteral(L, "callgrind.profiler.until_exit: the profiler is already running");
        lua_concat(L, 2);
        lua_error(L);
    }
    lua_pop(L, 1);
    if (lua_gethook(L) != NULL) {
        cg_prof_core_get(L, "prof_own_hook");
        lua_pushvalue(L, opts);
        lua_call(L, 1, 1);
        if (!lua_toboolean(L, -1)) {
            luaL_where(L, 1);
            lua_pushliteral(L, "callgrind.profiler.until_exit: a debug hook is already set (debug.sethook); "
                            "the profiler does not chain hooks: remove it first");
            lua_concat(L, 2);
            lua_error(L);
        }
        lua_pop(L, 1);
    }
}

/* Pushes the sentinel, whose collection (the state's closing) writes,
 * and wraps os.exit: each calls the writer of the context at ctx. */
static void arm_exits(lua_State *L, int ctx)
{
    int sentinel;
    /* the sentinel: its collection (the state's closing) writes */
    lua_newtable(L);
    sentinel = lua_gettop(L);
    lua_createtable(L, 0, 1);
    cg_prof_core_get(L, "prof_stopper");
    lua_pushvalue(L, ctx);
    lua_pushcclosure(L, l_write, 1);
    lua_pushboolean(L, 1);
    lua_call(L, 2, 1);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, sentinel);
    /* os.exit ends the process without closing the Lua state: wrapped */
    if (lua_getglobal(L, "os") == LUA_TTABLE) {
        cg_prof_core_get(L, "prof_stopper");
        lua_pushvalue(L, ctx);
        lua_pushvalue(L, ctx);
        lua_pushcclosure(L, l_write, 1);
        lua_pushcclosure(L, l_exit, 2);
        lua_pushboolean(L, 1);
        lua_call(L, 2, 1);
        lua_pushliteral(L, "exit");
        lua_insert(L, -2);
        lua_rawset(L, -3);
    }
    lua_pop(L, 1);
}

/* prof_autostart() -> the sentinel: callgrind.start's work (see
 * lua/callgrind/start.lua), the options from CALLGRIND_EVENTS,
 * CALLGRIND_LINES, CALLGRIND_STACKS, the file CALLGRIND_OUT. Errors as
 * callgrind.profiler.exit's arm gives them, naming until_exit. */
static int l_autostart(lua_State *L)
{
    const char *out;
    int opts, ctx, level, base = -1;
    lua_Debug ar;
    lua_settop(L, 0);
    lua_createtable(L, 0, 4);
    opts = 1;
    read_opts(L, opts);
    check_free(L, opts);
    out = getenv("CALLGRIND_OUT");
    lua_createtable(L, 0, 6);
    ctx = 2;
    lua_pushvalue(L, opts);
    lua_setfield(L, ctx, CTX_OPTS);
    if (out != NULL) {
        lua_pushstring(L, out);
        lua_setfield(L, ctx, CTX_OUT);
    }
    cg_prof_package_field(L, "path");
    lua_setfield(L, ctx, CTX_PATH);
    lua_getglobal(L, "require");
    lua_setfield(L, ctx, CTX_REQUIRE);
    if (lua_getglobal(L, "os") == LUA_TTABLE)
        lua_getfield(L, -1, "exit");
    else
        lua_pushnil(L);
    lua_setfield(L, ctx, CTX_EXIT);
    lua_pop(L, 1);
    arm_exits(L, ctx);
    /* the profile's frames: those above the require of callgrind.start,
     * else above the caller of the starter's caller */
    lua_getglobal(L, "require");
    for (level = 1; lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "f", &ar);
        if (lua_rawequal(L, -1, -2))
            base = depth_of(L, level) - 1;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (base < 0)
        base = depth_of(L, 2) - 1;
    push_nest(L);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, opts);
    lua_setfield(L, -2, "opts");
    lua_pushinteger(L, base);
    lua_setfield(L, -2, "base");
    lua_newtable(L);
    lua_setfield(L, -2, "parts");
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_pop(L, 1);
    /* the start, with the signals' writer */
    cg_prof_core_get(L, "prof_start");
    lua_pushvalue(L, opts);
    lua_pushinteger(L, 0);
    cg_prof_core_get(L, "prof_stopper");
    lua_pushvalue(L, ctx);
    lua_pushcclosure(L, l_write, 1);
    lua_pushboolean(L, 1);
    lua_call(L, 2, 1);
    lua_call(L, 3, 0);
    lua_settop(L, 3);
    return 1;
}

int cg_prof_autostart(lua_State *L)
{
    return l_autostart(L);
}

void cg_prof_exit_register(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"prof_autostart", l_autostart},
        {"prof_nest", l_nest},
        {NULL, NULL}
    };
    cg_prof_core_keep(L);
    luaL_setfuncs(L, funcs, 0);
}
