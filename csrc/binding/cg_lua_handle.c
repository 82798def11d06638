/* Handle plumbing: the Profile userdata (created closed, closed once),
 * the open check every handle makes, the profile's state table, and
 * pushing the one handle of a function or a part. */
#include "cg_lua_handle.h"

#include <string.h>

#include <limits.h>
#include <stdio.h>

LProfile *cgl_to_lprofile(lua_State *L, int idx)
{
    return (LProfile *)luaL_checkudata(L, idx, PROFILE);
}

CgProfile *cgl_check_open(lua_State *L, const LProfile *lp)
{
    if (!lp->P)
        luaL_error(L, "attempt to use a closed profile");
    return lp->P;
}

CgProfile *cgl_check_profile(lua_State *L, int idx)
{
    return cgl_check_open(L, cgl_to_lprofile(L, idx));
}


int cgl_memory_error(lua_State *L)
{
    lua_pushliteral(L, "not enough memory");
    return lua_error(L);
}

/* The profile behind the handle at idx (its user value 1). Leaves the
 * profile userdata on the stack top. */
CgProfile *cgl_handle_profile(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, 1);
    return cgl_check_open(L, (LProfile *)lua_touserdata(L, -1));
}

/* For __tostring of a handle whose profile is closed: pushes
 * "callgrind.X (closed profile)" and returns 1, else 0. */
int cgl_closed_tostring(lua_State *L, int idx, const char *tname)
{
    const LProfile *lp;
    cgl_push_owner(L, idx);
    lp = (const LProfile *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (lp && lp->P)
        return 0;
    lua_pushfstring(L, "%s (closed profile)", tname);
    return 1;
}

int cgl_profile_close(lua_State *L)
{
    LProfile *lp = cgl_to_lprofile(L, 1);
    if (lp->P) {
        cg_profile_free(lp->P);
        lp->P = NULL;
    }
    return 0;
}

void cgl_push_str(lua_State *L, CgStr s)
{
    if (s.ptr)
        lua_pushlstring(L, s.ptr, s.len);
    else
        lua_pushnil(L);
}

void cgl_push_name(lua_State *L, const CgProfile *P, int kind, int32_t i)
{
    if (i < 0)
        lua_pushnil(L);
    else
        cgl_push_str(L, P->names[kind].str[i]);
}

/* Pushes the state table of the profile at idx. */
void cgl_push_state(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, UV_STATE);
}

/* The key of the profile in its function handles' metatable. */
static const char func_owner_key = 0;

/* Makes the function handles' metatable of the profile at pidx: the
 * FUNCTION metatable's fields as they are now (init.lua adds methods to
 * the methods table behind __index, never fields to the metatable), and
 * the profile. */
static void new_func_mt(lua_State *L, int pidx)
{
    pidx = lua_absindex(L, pidx);
    lua_createtable(L, 0, 4);
    luaL_getmetatable(L, FUNCTION);
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -5);
    }
    lua_pop(L, 1);
    lua_pushvalue(L, pidx);
    lua_rawsetp(L, -2, &func_owner_key);
}

/* Pushes the function handles' metatable of the profile at pidx. */
void cgl_push_func_mt(lua_State *L, int pidx)
{
    cgl_push_state(L, pidx);
    lua_getfield(L, -1, STATE_FUNC_MT);
    lua_replace(L, -2);
}

/* Pushes the (one) handle of function i, through the handle cache (the
 * state table's STATE_FUNCS) at cidx; a new one takes the metatable at
 * midx. */
void cgl_push_cached_func(lua_State *L, int cidx, int midx, int32_t i)
{
    if (lua_rawgeti(L, cidx, (lua_Integer)i + 1) == LUA_TNIL) {
        LFunc *f;
        lua_pop(L, 1);
        f = (LFunc *)lua_newuserdatauv(L, sizeof *f, 0);
        f->index = i;
        lua_pushvalue(L, midx);
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_rawseti(L, cidx, (lua_Integer)i + 1);
    }
}

int cgl_push_func_owner(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx)) {
        lua_pushnil(L);
        return LUA_TNIL;
    }
    if (lua_rawgetp(L, -1, &func_owner_key) != LUA_TUSERDATA) {
        lua_pop(L, 2);
        lua_pushnil(L);
        return LUA_TNIL;
    }
    lua_replace(L, -2);
    return LUA_TUSERDATA;
}

/* (Its size checked too: debug.setmetatable can give another userdata
 * that metatable.) */
LFunc *cgl_check_lfunc(lua_State *L, int idx)
{
    LFunc *f = (LFunc *)lua_touserdata(L, idx);
    if (!f || lua_type(L, idx) != LUA_TUSERDATA ||
        lua_rawlen(L, idx) != sizeof *f ||
        cgl_push_func_owner(L, idx) != LUA_TUSERDATA)
        luaL_typeerror(L, idx, FUNCTION);
    return f;
}

/* Pushes the handle cache of the profile at pidx. Empty, it is first made
 * anew with room for every function: a walk over all of them then fills
 * it without rehashing on the way. */
void cgl_push_func_cache(lua_State *L, int pidx, int presize)
{
    pidx = lua_absindex(L, pidx);
    cgl_push_state(L, pidx);
    lua_getfield(L, -1, STATE_FUNCS);
    if (presize) {
        lua_pushnil(L);
        if (lua_next(L, -2) == 0) {
            const LProfile *lp = (const LProfile *)lua_touserdata(L, pidx);
            lua_pop(L, 1);
            lua_createtable(L, lp->P && lp->P->nfuncs < INT_MAX ?
                               (int)lp->P->nfuncs : 0, 0);
            lua_pushvalue(L, -1);
            lua_setfield(L, -3, STATE_FUNCS);
        } else {
            lua_pop(L, 2);
        }
    }
    lua_replace(L, -2);
}

/* Pushes the (one) handle of function i of the profile at pidx. */
void cgl_push_func(lua_State *L, int pidx, int32_t i)
{
    pidx = lua_absindex(L, pidx);
    cgl_push_func_cache(L, pidx, 0);
    cgl_push_func_mt(L, pidx);
    cgl_push_cached_func(L, lua_gettop(L) - 1, lua_gettop(L), i);
    lua_replace(L, -3);
    lua_pop(L, 1);
}

/* Pushes the profile a handle at idx belongs to (or the profile itself)
 * and returns its absolute index: a handle's user value, or a function
 * handle's metatable (it has no user value). */
int cgl_push_owner(lua_State *L, int idx)
{
    if (luaL_testudata(L, idx, PROFILE))
        lua_pushvalue(L, idx);
    else if (lua_getiuservalue(L, idx, 1) == LUA_TNONE) {
        lua_pop(L, 1);
        cgl_push_func_owner(L, idx);
    }
    return lua_gettop(L);
}

/* Pushes a position value, or nil when the file had no such column. */
void cgl_push_pos(lua_State *L, uint32_t flags, uint32_t bit, uint64_t v)
{
    if (flags & bit)
        lua_pushinteger(L, (lua_Integer)v);
    else
        lua_pushnil(L);
}

/* "file:line" or "0xaddr" or what there is of both. */
void cgl_add_where(lua_State *L, luaL_Buffer *b, const CgProfile *P,
                   int32_t file, uint32_t flags, uint32_t has_addr,
                   uint32_t has_line, uint64_t addr, uint64_t line)
{
    if (file >= 0)
        luaL_addlstring(b, P->names[CG_FILE].str[file].ptr,
                        P->names[CG_FILE].str[file].len);
    else
        luaL_addstring(b, "?");
    if (flags & has_line) {
        lua_pushfstring(L, ":%I", (lua_Integer)line);
        luaL_addvalue(b);
    }
    if (flags & has_addr) {
        char buf[32];
        snprintf(buf, sizeof buf, " 0x%llx", (unsigned long long)addr);
        luaL_addstring(b, buf);
    }
}

/* Pushes a new closed profile with its state table. */
LProfile *cgl_new_profile(lua_State *L)
{
    LProfile *lp = (LProfile *)lua_newuserdatauv(L, sizeof *lp, 2);
    lp->P = NULL;
    luaL_setmetatable(L, PROFILE);
    lua_createtable(L, 0, 4);
    lua_newtable(L);
    lua_setfield(L, -2, STATE_FUNCS);
    new_func_mt(L, -2);
    lua_setfield(L, -2, STATE_FUNC_MT);
    lua_setiuservalue(L, -2, UV_STATE);
    return lp;
}

/* internal.state(prof) -> the profile's state table, where the Lua modules
 * keep what they know of it (under "callgrind.MODULE" keys) beside the
 * binding's handles: one place, gone with the profile. A closed profile
 * keeps its table, as it kept its handles. */
int cgl_profile_state(lua_State *L)
{
    cgl_to_lprofile(L, 1);
    cgl_push_state(L, 1);
    return 1;
}

/* An iterator as a value that prints: a userdata whose __call takes the
 * next step, and whose __tostring says what it walks, so `prof:functions()`
 * at the REPL reads "callgrind.Iterator: 3 Functions" and not a function's
 * address. A generic for calls it as it calls a function. Its state: the
 * nuv values below the top of the stack when it is made (its user values:
 * the profile first; `ud[k]` points at the k-th when it is a userdata,
 * kept alive by the user value), and the counters of CgIter. */
CgIter *cgl_new_iter(lua_State *L, CgIterStep step, const char *what,
                     lua_Integer n, int nuv)
{
    CgIter *it = (CgIter *)lua_newuserdatauv(L, sizeof *it, nuv);
    int k;
    memset(it, 0, sizeof *it);
    it->step = step;
    it->what = what;
    it->n = n;
    it->nuv = nuv;
    for (k = nuv; k >= 1; k--) {
        if (k <= 2)
            it->ud[k - 1] = lua_touserdata(L, -2);
        lua_pushvalue(L, -1 - 1);
        lua_setiuservalue(L, -2, k);
        lua_remove(L, -2);
    }
    luaL_setmetatable(L, ITERATOR);
    return it;
}

/* __call(iterator, state, control): the step, the iterator at 1 */
int cgl_iter_call(lua_State *L)
{
    CgIter *it = (CgIter *)lua_touserdata(L, 1);
    return it->step(L, it);
}

int cgl_iter_tostring(lua_State *L)
{
    const CgIter *it = (const CgIter *)luaL_checkudata(L, 1, ITERATOR);
    if (it->n >= 0)
        lua_pushfstring(L, ITERATOR ": %I %s", it->n, it->what);
    else
        lua_pushfstring(L, ITERATOR ": %s", it->what);
    return 1;
}
