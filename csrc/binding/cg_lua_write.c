/* The writer's binding: prof:write's core (internal.write_profile) and
 * core.write_file_atomic. Arguments are read into Lua-owned memory first;
 * the C writer then runs with no Lua call, and frees what it holds before
 * any result or error goes back. */
#include "cg_lua_write.h"
#include "cg_lua_handle.h"
#include "cg_lua_cost.h"
#include "cg_atomic.h"
#include "cg_write.h"

#include <stddef.h>
#include <string.h>

static const char *const kind_names[] = { "", "format", "memory", "io",
                                          "cancelled" };

/* nil, message, kind */
static int push_fail(lua_State *L, int status, const char *msg)
{
    lua_pushnil(L);
    lua_pushstring(L, msg);
    lua_pushstring(L, kind_names[status > 0 && status <= CG_ECANCEL ? status
                                                                     : 3]);
    return 3;
}

/* core.write_file_atomic(path, text): true, or nil, "path: reason", kind */
static int cgl_write_file_atomic(lua_State *L)
{
    size_t len;
    const char *path = luaL_checkstring(L, 1);
    const char *s = luaL_checklstring(L, 2, &len);
    char msg[1024];
    int rc;
    luaL_argcheck(L, strlen(path) == lua_rawlen(L, 1), 1,
                  "path contains a NUL byte");
    rc = cg_write_file_atomic(path, s, len, msg, sizeof msg);
    if (rc != CG_OK)
        return push_fail(L, rc, msg);
    lua_pushboolean(L, 1);
    return 1;
}

#define MAX_ARGV 64

/* internal.write_from_command(path, argv, input): runs argv (a sequence
 * of strings, argv[1] looked up in PATH; no shell) with input on its
 * stdin and writes its stdout to path atomically (cg_write_from_child):
 * true, or nil, message, "io", what failed ("io": the target; "exec":
 * the command could not run, message "CMD: reason"; "status": it failed,
 * message "CMD: exit status N"), its stderr. The strings stay on the Lua
 * stack while it runs; nothing in between can raise. */
static int cgl_write_from_command(lua_State *L)
{
    static const char *const hows[] = { "", "io", "exec", "status" };
    const char *path = luaL_checkstring(L, 1);
    size_t inlen;
    const char *input;
    const char *argv[MAX_ARGV + 1];
    char msg[1024], err[2048];
    lua_Integer i, n;
    int rc, how = CG_CHILD_IO;
    luaL_checktype(L, 2, LUA_TTABLE);
    input = luaL_checklstring(L, 3, &inlen);
    luaL_argcheck(L, strlen(path) == lua_rawlen(L, 1), 1,
                  "path contains a NUL byte");
    n = (lua_Integer)lua_rawlen(L, 2);
    luaL_argcheck(L, n >= 1 && n <= MAX_ARGV, 2, "1 to 64 strings expected");
    for (i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, i);
        argv[i - 1] = lua_tostring(L, -1);
        luaL_argcheck(L, argv[i - 1] != NULL, 2, "strings expected");
        /* the string stays referenced by the table at 2 */
        lua_pop(L, 1);
    }
    argv[n] = NULL;
    rc = cg_write_from_child(path, (char *const *)(void *)argv, input, inlen,
                             &how, err, sizeof err, msg, sizeof msg);
    if (rc == CG_OK) {
        lua_pushboolean(L, 1);
        return 1;
    }
    push_fail(L, rc, msg);
    lua_pushstring(L, hows[how >= 0 && how <= CG_CHILD_FAILED ? how : 1]);
    lua_pushstring(L, err);
    return 5;
}

static CgStr opt_str(lua_State *L, int t, const char *k)
{
    CgStr s;
    lua_getfield(L, t, k);
    s.ptr = lua_tolstring(L, -1, &s.len);
    if (!s.ptr)
        s.len = 0;
    /* the string stays referenced by the table at t */
    lua_pop(L, 1);
    return s;
}

#define WRITER "callgrind.writer"

/* A writer in a userdata: its buffers are freed by __gc if a Lua error
 * comes between its start and its end. */
static CgWriter *new_writer(lua_State *L)
{
    CgWriter *w = (CgWriter *)lua_newuserdatauv(L, sizeof *w, 0);
    memset(w, 0, sizeof *w);
    luaL_setmetatable(L, WRITER);
    return w;
}

static int writer_gc(lua_State *L)
{
    cg_writer_free((CgWriter *)luaL_checkudata(L, 1, WRITER));
    return 0;
}

/* The string at idx (nil: absent), kept alive as long as the emitter: the
 * writer compares names in force by their bytes. */
static CgStr anchored(lua_State *L, int idx)
{
    CgStr s;
    s.ptr = NULL;
    s.len = 0;
    if (lua_isnoneornil(L, idx))
        return s;
    s.ptr = luaL_checklstring(L, idx, &s.len);
    lua_getiuservalue(L, 1, 1);
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    return s;
}

/* A function from the arguments idx, idx + 1, idx + 2: object, file,
 * name (each may be nil). */
static CgWriteFn fn_args(lua_State *L, int idx)
{
    CgWriteFn f;
    f.obj = anchored(L, idx);
    f.file = anchored(L, idx + 1);
    f.name = anchored(L, idx + 2);
    f.hint = 0;
    return f;
}

static CgStr field_str(lua_State *L, int t, const char *k)
{
    CgStr s;
    int top = lua_gettop(L);
    lua_getfield(L, t, k);
    s = anchored(L, top + 1);
    lua_settop(L, top);
    return s;
}

/* The event_lines = { { name =, long_name =, formula = }... } of the
 * table at t, in a userdata left on the stack (with the list). anchor: the
 * strings are kept alive by the emitter at 1, else by the list. */
static const CgWriteEvent *event_lines(lua_State *L, int t, size_t *n,
                                       int anchor)
{
    CgWriteEvent *evl;
    size_t i;
    int list = lua_gettop(L) + 1;
    lua_getfield(L, t, "event_lines");
    *n = lua_istable(L, list) ? lua_rawlen(L, list) : 0;
    evl = (CgWriteEvent *)lua_newuserdatauv(L, (*n ? *n : 1) * sizeof *evl, 0);
    for (i = 0; i < *n; i++) {
        int e;
        lua_rawgeti(L, list, (lua_Integer)i + 1);
        luaL_checktype(L, -1, LUA_TTABLE);
        e = lua_gettop(L);
        evl[i].name = anchor ? field_str(L, e, "name") : opt_str(L, e, "name");
        evl[i].long_name = anchor ? field_str(L, e, "long_name")
                                  : opt_str(L, e, "long_name");
        evl[i].formula = anchor ? field_str(L, e, "formula")
                                : opt_str(L, e, "formula");
        if (!evl[i].name.ptr)
            luaL_error(L, "event line %d has no name", (int)i + 1);
        lua_pop(L, 1);
    }
    return evl;
}

/* Reads the spec table at t into o (strings stay referenced by t, arrays
 * are userdata pushed on the stack): { compress = bool, pid = bool or
 * "number" (the processes numbered in a profile of several parts),
 * cmd = true|string|nil, only = { function index (1-based)... } | nil,
 * event_lines = { { name =, long_name =, formula = }... } }. */
static void read_spec(lua_State *L, const CgProfile *P, int t, CgWriteOpts *o)
{
    size_t i, n;
    memset(o, 0, sizeof *o);
    lua_getfield(L, t, "compress");
    o->compress = lua_toboolean(L, -1);
    lua_getfield(L, t, "pid");
    o->pid = lua_type(L, -1) == LUA_TSTRING ? 2 : lua_toboolean(L, -1);
    lua_getfield(L, t, "cmd");
    if (lua_type(L, -1) == LUA_TSTRING) {
        o->cmd = 2;
        o->cmd_text = opt_str(L, t, "cmd");
    } else {
        o->cmd = lua_toboolean(L, -1) ? 1 : 0;
    }
    lua_pop(L, 3);
    if (lua_getfield(L, t, "only") == LUA_TTABLE) {
        size_t nf = P->nfuncs ? P->nfuncs : 1;
        uint8_t *only;
        n = lua_rawlen(L, -1);
        only = (uint8_t *)lua_newuserdatauv(L, nf, 0);
        memset(only, 0, nf);
        for (i = 1; i <= n; i++) {
            lua_Integer f;
            lua_rawgeti(L, -2, (lua_Integer)i);
            f = lua_tointeger(L, -1);
            lua_pop(L, 1);
            if (f >= 1 && (size_t)f <= P->nfuncs)
                only[f - 1] = 1;
        }
        o->only = only;
        lua_replace(L, -2);      /* the userdata stays on the stack */
    } else {
        lua_pop(L, 1);
    }
    o->event_lines = event_lines(L, t, &o->nevent_lines, 0);
}

/* internal.write_profile(prof, dest, spec): dest a path (written through
 * a temporary renamed into place) or an open file (left open). true, or
 * nil, message, kind. */
static int cgl_write_profile(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const char *path = NULL;
    luaL_Stream *stream = NULL;
    CgWriteOpts o;
    CgWriter *w;
    char msg[1024];
    int rc;
    if (lua_type(L, 2) == LUA_TSTRING) {
        path = lua_tostring(L, 2);
        luaL_argcheck(L, strlen(path) == lua_rawlen(L, 2), 2,
                      "path contains a NUL byte");
    } else {
        stream = (luaL_Stream *)luaL_checkudata(L, 2, LUA_FILEHANDLE);
        luaL_argcheck(L, stream->closef != NULL, 2, "file is closed");
    }
    luaL_checktype(L, 3, LUA_TTABLE);
    read_spec(L, P, 3, &o);
    w = new_writer(L);
    /* no Lua call until the writer is freed */
    rc = cg_write_profile_to(w, P, &o, path, path ? NULL : stream->f, msg,
                             sizeof msg);
    if (rc != CG_OK)
        return push_fail(L, rc, msg);
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- the emitter for Lua (internal.emitter): the profiler and specs
 * write records through the core writer without a profile ---- */

#define EMITTER "callgrind.Emitter"

typedef struct LEmit {
    CgWriter w;
    int64_t cost[CG_MAX_EVENTS];
    CgStr posname[CG_MAX_POSITIONS];
    uint8_t poskind[CG_MAX_POSITIONS];
} LEmit;

static LEmit *check_emit(lua_State *L)
{
    LEmit *e = (LEmit *)luaL_checkudata(L, 1, EMITTER);
    if (!e->w.buf && e->w.status == CG_ECANCEL)
        luaL_error(L, "attempt to use a finished emitter");
    return e;
}


/* The integer at t[i] (t at idx), checked. */
static int64_t int_at(lua_State *L, int idx, lua_Integer i)
{
    int ok;
    int64_t v;
    lua_rawgeti(L, idx, i);
    v = (int64_t)lua_tointegerx(L, -1, &ok);
    luaL_argcheck(L, ok, idx, "integers expected");
    lua_pop(L, 1);
    return v;
}

/* An array of integers at idx into out (at most max), or one integer there
 * (no table to make); nil: 0 of them. */
static size_t int_array(lua_State *L, int idx, int64_t *out, size_t max)
{
    size_t n, i;
    if (lua_isnoneornil(L, idx))
        return 0;
    if (lua_isinteger(L, idx) && max > 0) {   /* one value, no table */
        out[0] = (int64_t)lua_tointeger(L, idx);
        return 1;
    }
    luaL_checktype(L, idx, LUA_TTABLE);
    n = lua_rawlen(L, idx);
    luaL_argcheck(L, n <= max, idx, "too many values");
    for (i = 0; i < n; i++)
        out[i] = int_at(L, idx, (lua_Integer)i + 1);
    return n;
}

static void positions(lua_State *L, LEmit *e, int idx, uint64_t *out)
{
    int64_t v[CG_MAX_POSITIONS];
    size_t n = int_array(L, idx, v, CG_MAX_POSITIONS), i;
    for (i = 0; i < CG_MAX_POSITIONS; i++)
        out[i] = i < n ? (uint64_t)v[i] : 0;
    (void)e;
}

static int emit_status(lua_State *L, const LEmit *e)
{
    if (e->w.status != CG_OK)
        return push_fail(L, e->w.status, e->w.status == CG_ENOMEM
                                             ? "out of memory" : "write failed");
    lua_settop(L, 1);
    return 1;
}

/* The desc = { { type, value }... } of the part table at 2, in a userdata
 * left on the stack. */
static const CgWriteDesc *part_desc(lua_State *L, size_t *n)
{
    CgWriteDesc *desc;
    size_t i;
    int t = lua_gettop(L) + 1;
    lua_getfield(L, 2, "desc");
    *n = lua_istable(L, t) ? lua_rawlen(L, t) : 0;
    desc = (CgWriteDesc *)lua_newuserdatauv(L, (*n ? *n : 1) * sizeof *desc,
                                            0);
    for (i = 0; i < *n; i++) {
        lua_rawgeti(L, t, (lua_Integer)i + 1);
        luaL_checktype(L, -1, LUA_TTABLE);
        lua_rawgeti(L, -1, 1);
        desc[i].type = anchored(L, lua_gettop(L));
        lua_rawgeti(L, -2, 2);
        desc[i].value = anchored(L, lua_gettop(L));
        lua_pop(L, 3);
    }
    return desc;
}

/* e:part{ number =, pid =, thread =, cmd =, desc = { { type, value }... },
 * positions = { "instr", "line" }, events = {...}, event_lines = { { name
 * =, long_name =, formula = }... }, summary = {...} } */
static int emit_part(lua_State *L)
{
    LEmit *e = check_emit(L);
    CgWritePart h;
    CgStr *evs;
    size_t i, n;
    int k, top;
    luaL_checktype(L, 2, LUA_TTABLE);
    memset(&h, 0, sizeof h);
    top = lua_gettop(L);
    lua_getfield(L, 2, "number");
    lua_getfield(L, 2, "pid");
    lua_getfield(L, 2, "thread");
    h.number = (int64_t)lua_tointegerx(L, top + 1, &h.has_number);
    h.pid = (int64_t)lua_tointegerx(L, top + 2, &h.has_pid);
    h.thread = (int64_t)lua_tointegerx(L, top + 3, &h.has_thread);
    lua_settop(L, top);
    h.cmd = field_str(L, 2, "cmd");
    h.desc = part_desc(L, &h.ndesc);
    lua_getfield(L, 2, "positions");
    n = lua_istable(L, -1) ? lua_rawlen(L, -1) : 0;
    luaL_argcheck(L, n >= 1 && n <= CG_MAX_POSITIONS, 2,
                  "positions: 1 to 8 names expected");
    for (k = 0; k < (int)n; k++) {
        lua_rawgeti(L, -1, k + 1);
        e->posname[k] = anchored(L, lua_gettop(L));
        e->poskind[k] = !strcmp(e->posname[k].ptr, "instr") ? CG_POS_INSTR
                      : !strcmp(e->posname[k].ptr, "bb") ? CG_POS_BB
                      : !strcmp(e->posname[k].ptr, "line") ? CG_POS_LINE
                      : CG_POS_OTHER;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    h.npos = (int)n;
    h.posname = e->posname;
    h.poskind = e->poskind;
    lua_getfield(L, 2, "events");
    n = lua_istable(L, -1) ? lua_rawlen(L, -1) : 0;
    luaL_argcheck(L, n <= CG_MAX_EVENTS, 2, "too many events");
    evs = (CgStr *)lua_newuserdatauv(L, (n ? n : 1) * sizeof *evs, 0);
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, -2, (lua_Integer)i + 1);
        evs[i] = anchored(L, lua_gettop(L));
        lua_pop(L, 1);
    }
    h.events = evs;
    h.nev = n;
    h.event_lines = event_lines(L, 2, &h.nevent_lines, 1);
    lua_getfield(L, 2, "summary");
    if (!lua_isnil(L, -1)) {
        luaL_argcheck(L, int_array(L, lua_gettop(L), e->cost, CG_MAX_EVENTS) ==
                      h.nev, 2, "summary: one value per event expected");
        h.summary = e->cost;
    }
    cg_write_part(&e->w, &h);
    return emit_status(L, e);
}

/* e:fn(object, file, name) */
static int emit_fn(lua_State *L)
{
    LEmit *e = check_emit(L);
    CgWriteFn f = fn_args(L, 2);
    luaL_argcheck(L, f.name.ptr != NULL, 4, "name expected");
    cg_write_fn(&e->w, &f);
    return emit_status(L, e);
}

/* e:fi(file) */
static int emit_fi(lua_State *L)
{
    LEmit *e = check_emit(L);
    cg_write_fi(&e->w, anchored(L, 2));
    return emit_status(L, e);
}

/* e:line(positions, costs) */
static int emit_line(lua_State *L)
{
    LEmit *e = check_emit(L);
    uint64_t pos[CG_MAX_POSITIONS];
    size_t n;
    positions(L, e, 2, pos);
    n = int_array(L, 3, e->cost, CG_MAX_EVENTS);
    cg_write_line(&e->w, pos, e->cost, n);
    return emit_status(L, e);
}

/* e:lines(flat, nev [, totals]): what e:line writes for each line of
 * flat = { line, its nev costs, line, ... } (the profiler's data), in one
 * call: a line position each; their costs are added to totals (a list
 * of nev integers) when it is given */
static int emit_lines(lua_State *L)
{
    LEmit *e = check_emit(L);
    lua_Integer nev = luaL_checkinteger(L, 3), n, k, j;
    uint64_t pos[CG_MAX_POSITIONS] = {0};
    int64_t tot[CG_MAX_EVENTS];     /* its first nev zeroed (not 32 KiB) */
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_argcheck(L, nev >= 1 && nev <= CG_MAX_EVENTS, 3,
                  "event count out of range");
    for (j = 0; j < nev; j++)
        tot[j] = 0;
    n = (lua_Integer)lua_rawlen(L, 2);
    for (k = 1; k + nev <= n && e->w.status == CG_OK; k += nev + 1) {
        pos[0] = (uint64_t)int_at(L, 2, k);
        for (j = 0; j < nev; j++) {
            e->cost[j] = int_at(L, 2, k + 1 + j);
            tot[j] += e->cost[j];
        }
        cg_write_line(&e->w, pos, e->cost, (size_t)nev);
    }
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        for (j = 0; j < nev; j++) {
            lua_pushinteger(L, (lua_Integer)(int_at(L, 4, j + 1) + tot[j]));
            lua_rawseti(L, 4, j + 1);
        }
    }
    return emit_status(L, e);
}

/* e:call(object, file, name, count, target, positions, costs) */
static int emit_call(lua_State *L)
{
    LEmit *e = check_emit(L);
    CgWriteFn f = fn_args(L, 2);
    uint64_t pos[CG_MAX_POSITIONS], tgt[CG_MAX_POSITIONS];
    size_t n;
    luaL_argcheck(L, f.name.ptr != NULL, 4, "name expected");
    positions(L, e, 6, tgt);
    positions(L, e, 7, pos);
    n = int_array(L, 8, e->cost, CG_MAX_EVENTS);
    cg_write_call(&e->w, &f, (uint64_t)luaL_checkinteger(L, 5), tgt, pos,
                  e->cost, n);
    return emit_status(L, e);
}

/* e:jump(conditional, count, executed, to_object, to_file, to_name,
 * target_file, target, positions); to_name nil: the current function */
static int emit_jump(lua_State *L)
{
    LEmit *e = check_emit(L);
    CgWriteFn f = fn_args(L, 5);
    uint64_t pos[CG_MAX_POSITIONS], tgt[CG_MAX_POSITIONS];
    positions(L, e, 9, tgt);
    positions(L, e, 10, pos);
    cg_write_jump(&e->w, lua_toboolean(L, 2),
                  (uint64_t)luaL_checkinteger(L, 3),
                  (uint64_t)luaL_optinteger(L, 4, 0), f.name.ptr ? &f : NULL,
                  anchored(L, 8), tgt, pos);
    return emit_status(L, e);
}

/* e:totals(costs | nil) */
static int emit_totals(lua_State *L)
{
    LEmit *e = check_emit(L);
    size_t n = int_array(L, 2, e->cost, CG_MAX_EVENTS);
    luaL_argcheck(L, lua_isnoneornil(L, 2) || n == e->w.nev, 2,
                  "one value per event expected");
    cg_write_totals(&e->w, lua_isnoneornil(L, 2) ? NULL : e->cost);
    return emit_status(L, e);
}

/* e:finish(): the text, ended with "# end"; the emitter is then spent */
static int emit_finish(lua_State *L)
{
    LEmit *e = check_emit(L);
    size_t len;
    const char *s;
    cg_write_end(&e->w);
    if (e->w.status != CG_OK)
        return emit_status(L, e);
    s = cg_writer_data(&e->w, &len);
    lua_pushlstring(L, s ? s : "", len);
    cg_writer_free(&e->w);
    e->w.status = CG_ECANCEL;    /* spent */
    return 1;
}

static int emit_gc(lua_State *L)
{
    cg_writer_free(&((LEmit *)luaL_checkudata(L, 1, EMITTER))->w);
    return 0;
}

/* internal.emitter([compress [, creator]]): a writer into memory that has
 * written its header */
static int cgl_emitter(lua_State *L)
{
    int compress = lua_isnoneornil(L, 1) || lua_toboolean(L, 1);
    LEmit *e;
    lua_settop(L, 2);
    e = (LEmit *)lua_newuserdatauv(L, sizeof *e, 1);
    /* not cost (32 KiB), which every method fills before it reads */
    memset(e, 0, offsetof(LEmit, cost));
    memset(e->posname, 0, sizeof e->posname);
    memset(e->poskind, 0, sizeof e->poskind);
    luaL_setmetatable(L, EMITTER);
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);
    lua_replace(L, 1);
    cg_writer_init_mem(&e->w, compress);
    cg_write_begin(&e->w, anchored(L, 2));
    lua_settop(L, 1);
    return 1;
}

static const luaL_Reg emit_methods[] = {
    {"part", emit_part},
    {"fn", emit_fn},
    {"fi", emit_fi},
    {"line", emit_line},
    {"lines", emit_lines},
    {"call", emit_call},
    {"jump", emit_jump},
    {"totals", emit_totals},
    {"finish", emit_finish},
    {NULL, NULL}
};

static const luaL_Reg module_funcs[] = {
    {"write_file_atomic", cgl_write_file_atomic},
    {NULL, NULL}
};

static const luaL_Reg internal_funcs[] = {
    {"write_profile", cgl_write_profile},
    {"emitter", cgl_emitter},
    {"write_from_command", cgl_write_from_command},
    {NULL, NULL}
};

void cgl_write_register(lua_State *L, int module, int internal)
{
    luaL_newmetatable(L, WRITER);
    lua_pushcfunction(L, writer_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, EMITTER);
    lua_pushcfunction(L, emit_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, emit_methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_pushvalue(L, module);
    luaL_setfuncs(L, module_funcs, 0);
    lua_pop(L, 1);
    lua_pushvalue(L, internal);
    luaL_setfuncs(L, internal_funcs, 0);
    lua_pop(L, 1);
}
