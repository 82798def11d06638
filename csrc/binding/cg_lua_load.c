/* Loading: callgrind.load, callgrind.parse and callgrind.files, their
 * options and progress callback, and the result as a Profile or nil and a
 * message. */
#include "cg_lua_load.h"
#include "cg_lua_handle.h"
#include "cg_load.h"
#include "cg_source.h"

#include <string.h>

/* A whole number option of at least min, or its default. */
static lua_Integer int_option(lua_State *L, int arg, const char *k,
                              lua_Integer min)
{
    int isnum;
    lua_Integer v = lua_tointegerx(L, -1, &isnum);
    if (lua_type(L, -1) != LUA_TNUMBER || !isnum || v < min)
        luaL_argerror(L, arg, lua_pushfstring(L, "option '%s' must be a "
                      "whole number of at least %I", k, min));
    return v;
}

/* The options table at arg into o: lenient, position_rule, threads, max_bytes, chunk; and
 * progress, a function left at *progress_idx (0 when none). Which options
 * there are, their types and meanings are callgrind.api's declaration
 * (`options.load`), checked by the Lua face before this runs
 * (spec/api_spec.lua checks that these are the fields read here); what is
 * checked here is what a type cannot say: a whole number of at least 1. */
static void check_load_options(lua_State *L, int arg, CgLoadOpts *o,
                               int *progress_idx)
{
    *progress_idx = 0;
    if (lua_isnoneornil(L, arg))
        return;
    luaL_checktype(L, arg, LUA_TTABLE);
    if (lua_getfield(L, arg, "lenient") != LUA_TNIL && lua_toboolean(L, -1))
        o->options |= CG_LENIENT;
    lua_pop(L, 1);
    if (lua_getfield(L, arg, "position_rule") != LUA_TNIL) {
        const char *r = lua_tostring(L, -1);
        if (r && !strcmp(r, "kcachegrind"))
            o->options |= CG_MOVING_BASE;
        else if (!r || strcmp(r, "valgrind"))
            luaL_argerror(L, arg, "option 'position_rule' must be "
                          "\"valgrind\" or \"kcachegrind\"");
    }
    lua_pop(L, 1);
    if (lua_getfield(L, arg, "threads") != LUA_TNIL)
        o->threads = int_option(L, arg, "threads", 1) > 1 ? 2 : 1;
    lua_pop(L, 1);
    if (lua_getfield(L, arg, "max_bytes") != LUA_TNIL)
        o->max_bytes = (uint64_t)int_option(L, arg, "max_bytes", 1);
    lua_pop(L, 1);
    if (lua_getfield(L, arg, "chunk") != LUA_TNIL) {
        lua_Integer v = int_option(L, arg, "chunk", 1);
        o->chunk = (uint64_t)v > SIZE_MAX ? SIZE_MAX : (size_t)v;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, arg, "progress") == LUA_TFUNCTION)
        *progress_idx = lua_gettop(L);
    else if (lua_isnil(L, -1))
        lua_pop(L, 1);
    else
        luaL_argerror(L, arg, "option 'progress' must be a function");
}

/* The kind of a failure (README, "Errors"), the third result of a load
 * that failed. */
static void push_error_kind(lua_State *L, int status, const char *msg)
{
    switch (status) {
    case CG_EIO: lua_pushliteral(L, "io"); break;
    case CG_ECANCEL: lua_pushliteral(L, "cancelled"); break;
    case CG_ETRUNC: lua_pushliteral(L, "truncated"); break;
    case CG_ELIMIT: lua_pushliteral(L, "memory"); break;
    default:
        /* until the decompressors say CG_ETRUNC, their message does */
        if (strstr(msg, "(truncated?)"))
            lua_pushliteral(L, "truncated");
        else
            lua_pushliteral(L, "format");
    }
}

static int load_result(lua_State *L, LProfile *lp, int rc, CgProfile *P,
                       const CgError *err)
{
    if (rc == CG_ENOMEM)
        return cgl_memory_error(L);
    if (rc) {
        lua_pushnil(L);
        lua_pushstring(L, err->msg);
        push_error_kind(L, rc, err->msg);
        return 3;
    }
    lp->P = P;
    return 1;
}

/* The progress callback: calls the Lua function in a protected call (a
 * Lua error must not unwind through the loader, which holds memory). An
 * error is kept on the stack and cancels the load. */
typedef struct Progress {
    lua_State *L;
    int fn;                      /* stack index of the function */
    int raised;                  /* its error is on the stack top */
} Progress;

static int progress_cb(void *ud, uint64_t done, uint64_t total)
{
    Progress *pr = (Progress *)ud;
    lua_State *L = pr->L;
    int cancel;
    if (!lua_checkstack(L, 4)) {
        lua_pushliteral(L, "not enough memory");
        pr->raised = 1;
        return 1;
    }
    lua_pushvalue(L, pr->fn);
    lua_pushinteger(L, (lua_Integer)done);
    lua_pushinteger(L, (lua_Integer)total);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
        pr->raised = 1;
        return 1;
    }
    cancel = lua_isboolean(L, -1) && !lua_toboolean(L, -1);
    lua_pop(L, 1);
    return cancel;
}

/* Calls the function at stack index fn (0: none) while loading. */
static void set_progress(lua_State *L, CgLoadOpts *o, Progress *pr, int fn)
{
    pr->L = L;
    pr->fn = fn;
    pr->raised = 0;
    if (fn) {
        o->progress = progress_cb;
        o->ud = pr;
    }
}

/* callgrind.load(path or { path, ... } [, opts]) */
int cgl_module_load(lua_State *L)
{
    int fn, rc;
    size_t n, i;
    const char **paths;
    LProfile *lp;
    CgProfile *P;
    CgError err;
    CgLoadOpts o;
    Progress pr;
    if (lua_type(L, 1) == LUA_TTABLE) {
        n = (size_t)lua_rawlen(L, 1);
        luaL_argcheck(L, n > 0, 1, "empty list of paths");
    } else {
        luaL_checkstring(L, 1);
        n = 1;
    }
    memset(&o, 0, sizeof o);
    check_load_options(L, 2, &o, &fn);
    /* the array lives on the stack: an error cannot leak it; the strings
     * stay in the argument table */
    paths = (const char **)lua_newuserdatauv(L, n * sizeof *paths, 0);
    if (lua_type(L, 1) == LUA_TTABLE) {
        for (i = 0; i < n; i++) {
            if (lua_rawgeti(L, 1, (lua_Integer)i + 1) != LUA_TSTRING)
                luaL_argerror(L, 1, lua_pushfstring(L, "path #%I is not a "
                              "string", (lua_Integer)i + 1));
            paths[i] = lua_tostring(L, -1);
            lua_pop(L, 1);
        }
    } else {
        paths[0] = lua_tostring(L, 1);
    }
    lp = cgl_new_profile(L);
    set_progress(L, &o, &pr, fn);
    rc = cg_load_files(&P, paths, n, &o, &err);
    if (fn && pr.raised)
        return lua_error(L);     /* everything is freed already */
    return load_result(L, lp, rc, P, &err);
}

int cgl_filelist_gc(lua_State *L)
{
    cg_file_list_free((CgFileList *)luaL_checkudata(L, 1, FILELIST));
    return 0;
}

/* callgrind.files(path) -> { path, ... } or nil, "dir: reason" */
int cgl_module_files(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    CgFileList *l = (CgFileList *)lua_newuserdatauv(L, sizeof *l, 0);
    CgError err;
    size_t i;
    memset(l, 0, sizeof *l);
    luaL_setmetatable(L, FILELIST);   /* frees the list, even on error */
    if (cg_run_files(path, l, &err) != CG_OK) {
        if (err.status == CG_ENOMEM)
            return cgl_memory_error(L);
        lua_pushnil(L);
        lua_pushstring(L, err.msg);
        push_error_kind(L, err.status, err.msg);
        return 3;
    }
    lua_createtable(L, (int)l->n, 0);
    for (i = 0; i < l->n; i++) {
        lua_pushstring(L, l->paths[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    cg_file_list_free(l);
    return 1;
}

int cgl_module_parse(lua_State *L)
{
    size_t len;
    const char *text = luaL_checklstring(L, 1, &len);
    const char *name = "(string)";
    int opt_arg = 3, rc, fn;
    LProfile *lp;
    CgProfile *P;
    CgError err;
    CgLoadOpts o;
    Progress pr;
    if (lua_type(L, 2) == LUA_TTABLE)
        opt_arg = 2;
    else
        name = luaL_optstring(L, 2, name);
    memset(&o, 0, sizeof o);
    check_load_options(L, opt_arg, &o, &fn);
    lp = cgl_new_profile(L);
    /* the profile's storage is the string itself: keep it alive */
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, UV_TEXT);
    set_progress(L, &o, &pr, fn);
    rc = cg_load_text(&P, text, len, name, &o, &err);
    if (fn && pr.raised)
        return lua_error(L);     /* everything is freed already */
    return load_result(L, lp, rc, P, &err);
}
