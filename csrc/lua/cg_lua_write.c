/* The writer's binding: prof:write's core (internal.write_profile) and
 * core.write_file_atomic. Arguments are read into Lua-owned memory first;
 * the C writer then runs with no Lua call, and frees what it holds before
 * any result or error goes back. */
#define _POSIX_C_SOURCE 200809L
#include "cg_lua.h"
#include "cg_write.h"

#include <errno.h>
#include <signal.h>
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

/* A file-size limit (ulimit -f) raises SIGXFSZ, whose default action
 * kills the process, temporary file and all: while writing, a write past
 * the limit fails with EFBIG instead (when nobody handles the signal). */
typedef struct XfszGuard {
    struct sigaction old;
    int set;
} XfszGuard;

static void xfsz_block(XfszGuard *g)
{
    struct sigaction ign;
    g->set = 0;
    if (sigaction(SIGXFSZ, NULL, &g->old) != 0 ||
        g->old.sa_handler != SIG_DFL)
        return;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    g->set = sigaction(SIGXFSZ, &ign, NULL) == 0;
}

static void xfsz_restore(const XfszGuard *g)
{
    if (g->set)
        sigaction(SIGXFSZ, &g->old, NULL);
}

/* core.write_file_atomic(path, text): true, or nil, "path: reason", kind */
static int cgl_write_file_atomic(lua_State *L)
{
    size_t len;
    const char *path = luaL_checkstring(L, 1);
    const char *s = luaL_checklstring(L, 2, &len);
    char msg[1024];
    XfszGuard g;
    int rc;
    luaL_argcheck(L, strlen(path) == lua_rawlen(L, 1), 1,
                  "path contains a NUL byte");
    xfsz_block(&g);
    rc = cg_write_file_atomic(path, s, len, msg, sizeof msg);
    xfsz_restore(&g);
    if (rc != CG_OK)
        return push_fail(L, rc, msg);
    lua_pushboolean(L, 1);
    return 1;
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

/* Reads the spec table at t into o (strings stay referenced by t, arrays
 * are userdata pushed on the stack): { compress = bool, pid = bool,
 * cmd = true|string|nil, only = { function index (1-based)... } | nil,
 * event_lines = { { name =, long_name =, formula = }... } }. */
static void read_spec(lua_State *L, const CgProfile *P, int t, CgWriteOpts *o)
{
    size_t i, n;
    memset(o, 0, sizeof *o);
    lua_getfield(L, t, "compress");
    o->compress = lua_toboolean(L, -1);
    lua_getfield(L, t, "pid");
    o->pid = lua_toboolean(L, -1);
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
    if (lua_getfield(L, t, "event_lines") == LUA_TTABLE) {
        int et = lua_gettop(L);
        CgWriteEvent *evs;
        n = lua_rawlen(L, et);
        evs = (CgWriteEvent *)lua_newuserdatauv(L, (n ? n : 1) * sizeof *evs,
                                                0);
        for (i = 0; i < n; i++) {
            int e;
            lua_rawgeti(L, et, (lua_Integer)i + 1);
            luaL_checktype(L, -1, LUA_TTABLE);
            e = lua_gettop(L);
            evs[i].name = opt_str(L, e, "name");
            evs[i].long_name = opt_str(L, e, "long_name");
            evs[i].formula = opt_str(L, e, "formula");
            if (!evs[i].name.ptr)
                luaL_error(L, "event line %d has no name", (int)i + 1);
            lua_pop(L, 1);
        }
        o->event_lines = evs;
        o->nevent_lines = n;
    } else {
        lua_pop(L, 1);
    }
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
    CgAtomic a;
    XfszGuard g;
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
    /* from here on no Lua call until the writer is freed */
    xfsz_block(&g);
    if (path) {
        rc = cg_atomic_open(&a, path, msg, sizeof msg);
        if (rc != CG_OK) {
            xfsz_restore(&g);
            return push_fail(L, rc, msg);
        }
        cg_writer_init_fd(w, a.fd, o.compress);
    } else {
        cg_writer_init_file(w, stream->f, o.compress);
    }
    rc = cg_write_profile(w, P, &o);
    if (rc == CG_EIO)
        snprintf(msg, sizeof msg, "%s%s%s", path ? path : "",
                 path ? ": " : "", strerror(w->err));
    else if (rc != CG_OK)
        snprintf(msg, sizeof msg, "%s%sout of memory", path ? path : "",
                 path ? ": " : "");
    cg_writer_free(w);
    if (path) {
        if (rc == CG_OK)
            rc = cg_atomic_commit(&a, msg, sizeof msg);
        else
            cg_atomic_abort(&a);
    }
    xfsz_restore(&g);
    if (rc != CG_OK)
        return push_fail(L, rc, msg);
    lua_pushboolean(L, 1);
    return 1;
}

/* internal.write_string(prof, spec): the text prof:write would write. */
static int cgl_write_string(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    CgWriteOpts o;
    CgWriter *w;
    size_t len;
    const char *s;
    int rc;
    luaL_checktype(L, 2, LUA_TTABLE);
    read_spec(L, P, 2, &o);
    w = new_writer(L);
    cg_writer_init_mem(w, o.compress);
    rc = cg_write_profile(w, P, &o);
    if (rc != CG_OK) {
        cg_writer_free(w);
        return push_fail(L, rc, "out of memory");
    }
    s = cg_writer_data(w, &len);
    lua_pushlstring(L, s ? s : "", len);   /* may raise: __gc frees w */
    cg_writer_free(w);
    return 1;
}

static const luaL_Reg module_funcs[] = {
    {"write_file_atomic", cgl_write_file_atomic},
    {NULL, NULL}
};

static const luaL_Reg internal_funcs[] = {
    {"write_profile", cgl_write_profile},
    {"write_string", cgl_write_string},
    {NULL, NULL}
};

void cgl_write_register(lua_State *L, int module, int internal)
{
    luaL_newmetatable(L, WRITER);
    lua_pushcfunction(L, writer_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushvalue(L, module);
    luaL_setfuncs(L, module_funcs, 0);
    lua_pop(L, 1);
    lua_pushvalue(L, internal);
    luaL_setfuncs(L, internal_funcs, 0);
    lua_pop(L, 1);
}
