/* Functions and calls: their fields, methods and __tostring, and the
 * iterators over them. */
#include "cg_lua_func.h"
#include "cg_lua_handle.h"
#include "cg_lua_cost.h"
#include "cg_lua_profile.h"
#include "cg_cursor.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct LCall {
    uint32_t index;
} LCall;

/* user values: profile, its handle cache, its handles' metatable */
static int functions_iter(lua_State *L, CgIter *it)
{
    lua_Integer i = it->i;
    cgl_check_open(L, (LProfile *)it->ud[0]);
    if (i >= it->end)
        return 0;
    it->i = i + 1;
    lua_settop(L, 1);
    lua_getiuservalue(L, 1, 2);
    lua_getiuservalue(L, 1, 3);
    cgl_push_cached_func(L, 2, 3, (int32_t)i);
    return 1;
}

int cgl_profile_functions(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    lua_settop(L, 1);
    cgl_push_func_cache(L, 1, 1);
    cgl_push_func_mt(L, 1);
    cgl_new_iter(L, functions_iter, "Functions", (lua_Integer)P->nfuncs, 3)
        ->end = (lua_Integer)P->nfuncs;
    return 1;
}

static void new_call(lua_State *L, int pidx, uint32_t i)
{
    LCall *c;
    pidx = lua_absindex(L, pidx);
    c = (LCall *)lua_newuserdatauv(L, sizeof *c, 1);
    c->index = i;
    luaL_setmetatable(L, CALL);
    lua_pushvalue(L, pidx);
    lua_setiuservalue(L, -2, 1);
}

/* user value: the profile; flag: by callee (the callers' order) */
static int calls_iter(lua_State *L, CgIter *it)
{
    lua_Integer i = it->i;
    const CgProfile *P = cgl_check_open(L, (LProfile *)it->ud[0]);
    if (i >= it->end)
        return 0;
    it->i = i + 1;
    lua_settop(L, 1);
    lua_getiuservalue(L, 1, 1);
    new_call(L, 2, it->flag ? P->callers[i] : (uint32_t)i);
    return 1;
}

static void push_calls_iter(lua_State *L, int pidx, size_t from, size_t to,
                            int by_callee)
{
    CgIter *it;
    lua_pushvalue(L, pidx);
    it = cgl_new_iter(L, calls_iter, "Calls", (lua_Integer)(to - from), 1);
    it->i = (lua_Integer)from;
    it->end = (lua_Integer)to;
    it->flag = by_callee;
}

int cgl_profile_calls(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    push_calls_iter(L, 1, 0, P->ncalls, 0);
    return 1;
}

const CgFunc *cgl_check_func(lua_State *L, int idx, CgProfile **PP)
{
    LFunc *f = cgl_check_lfunc(L, idx);
    CgProfile *P = cgl_check_open(L, (LProfile *)lua_touserdata(L, -1));
    lua_pop(L, 1);
    if (f->index < 0 || (size_t)f->index >= P->nfuncs)   /* forged */
        luaL_typeerror(L, idx, FUNCTION);
    *PP = P;
    return &P->funcs[f->index];
}

/* fn:self([ev [, part]]): in the whole profile, or in one part. */
int cgl_func_self(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    const CgProfile *PP;
    int pidx;
    uint32_t part;
    int64_t *v;
    lua_settop(L, 3);
    pidx = cgl_push_owner(L, 1);
    if (lua_isnil(L, 3))
        return cgl_push_costs(L, P, pidx,
                              P->self + (size_t)(f - P->funcs) * P->stride, 2);
    part = cgl_check_part(L, 3, pidx, &PP);
    v = (int64_t *)lua_newuserdatauv(L, 2 * (P->stride + 1) * sizeof *v, 0);
    if (cg_func_part_self(P, (int32_t)(f - P->funcs), part, v,
                          v + P->stride + 1) != 0)
        return luaL_error(L, "the sum of a function's costs in a part does "
                          "not fit in 64 bits");
    return cgl_push_costs(L, P, pidx, v, 2);
}

int cgl_func_fields(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    const char *k = lua_tostring(L, 2);
    if (!strcmp(k, "name"))
        cgl_push_name(L, P, CG_FN, f->name);
    else if (!strcmp(k, "file"))
        cgl_push_name(L, P, CG_FILE, f->file);
    else if (!strcmp(k, "object"))
        cgl_push_name(L, P, CG_OBJ, f->obj);
    else if (!strcmp(k, "index"))
        lua_pushinteger(L, (lua_Integer)(f - P->funcs) + 1);
    else if (!strcmp(k, "profile"))
        cgl_push_func_owner(L, 1);
    else
        lua_pushnil(L);
    return 1;
}

int cgl_func_tostring(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f;
    cgl_check_lfunc(L, 1);
    lua_pop(L, 1);
    if (cgl_closed_tostring(L, 1, FUNCTION))
        return 1;
    f = cgl_check_func(L, 1, &P);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "callgrind.Function: ");
    cgl_push_name(L, P, CG_FN, f->name);
    luaL_addvalue(&b);
    if (f->file >= 0 || f->obj >= 0) {
        luaL_addstring(&b, " (");
        if (f->file >= 0) {
            cgl_push_name(L, P, CG_FILE, f->file);
            luaL_addvalue(&b);
        }
        if (f->obj >= 0) {
            luaL_addstring(&b, f->file >= 0 ? "; " : "");
            cgl_push_name(L, P, CG_OBJ, f->obj);
            luaL_addvalue(&b);
        }
        luaL_addchar(&b, ')');
    }
    luaL_pushresult(&b);
    return 1;
}

int cgl_func_calls(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    cgl_push_func_owner(L, 1);
    push_calls_iter(L, -1, f->calls_begin, f->calls_end, 0);
    return 1;
}

int cgl_func_callers(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    cgl_push_func_owner(L, 1);
    push_calls_iter(L, -1, f->callers_begin, f->callers_end, 1);
    return 1;
}

static const CgCall *check_call(lua_State *L, int idx, CgProfile **PP)
{
    LCall *c = (LCall *)luaL_checkudata(L, idx, CALL);
    CgProfile *P = cgl_handle_profile(L, idx);
    lua_pop(L, 1);
    *PP = P;
    return &P->calls[c->index];
}

/* A count (calls=, jump=, jcnd=) is unsigned: up to 2^63-1 it is pushed
 * as an integer, above as a float (the nearest double), so it never
 * reads negative and compares right against any limit. */
void cgl_push_count(lua_State *L, uint64_t n)
{
    if (n <= (uint64_t)INT64_MAX)
        lua_pushinteger(L, (lua_Integer)n);
    else
        lua_pushnumber(L, (lua_Number)n);
}

/* A count in decimal, exact (for __tostring). */
void cgl_push_count_text(lua_State *L, uint64_t n)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, n);
    lua_pushstring(L, buf);
}

int cgl_call_fields(lua_State *L)
{
    CgProfile *P;
    const CgCall *c = check_call(L, 1, &P);
    const char *k = lua_tostring(L, 2);
    CgCallSite site;
    int pidx;
    cg_call_site(P, c, &site);
    lua_getiuservalue(L, 1, 1);
    pidx = lua_gettop(L);
    if (!strcmp(k, "caller"))
        cgl_push_func(L, pidx, c->caller);
    else if (!strcmp(k, "callee"))
        cgl_push_func(L, pidx, c->callee);
    else if (!strcmp(k, "count"))
        cgl_push_count(L, site.count);
    else if (!strcmp(k, "file"))
        cgl_push_name(L, P, CG_FILE, c->file);
    else if (!strcmp(k, "line"))
        cgl_push_pos(L, c->flags, CG_HAS_LINE, site.line);
    else if (!strcmp(k, "addr"))
        cgl_push_pos(L, c->flags, CG_HAS_ADDR, site.addr);
    else if (!strcmp(k, "target_line"))
        cgl_push_pos(L, c->flags, CG_HAS_TLINE, site.tline);
    else if (!strcmp(k, "target_addr"))
        cgl_push_pos(L, c->flags, CG_HAS_TADDR, site.taddr);
    else if (!strcmp(k, "part"))
        cgl_push_part(L, pidx, c->part);
    else if (!strcmp(k, "index"))
        lua_pushinteger(L, (lua_Integer)(c - P->calls) + 1);
    else if (!strcmp(k, "profile"))
        lua_pushvalue(L, pidx);
    else
        lua_pushnil(L);
    return 1;
}

/* A call's costs, decoded into a userdata pushed on the stack. */
static const int64_t *push_call_costs(lua_State *L, const CgProfile *P,
                                      const CgCall *c)
{
    int64_t *v = (int64_t *)lua_newuserdatauv(L, (P->stride + 1) *
                                              sizeof *v, 0);
    cg_call_costs(P, c, v);
    return v;
}

int cgl_call_cost(lua_State *L)
{
    CgProfile *P;
    const CgCall *c = check_call(L, 1, &P);
    int pidx;
    lua_settop(L, 2);
    pidx = cgl_push_owner(L, 1);
    return cgl_push_costs(L, P, pidx, push_call_costs(L, P, c), 2);
}

int cgl_call_tostring(lua_State *L)
{
    CgProfile *P;
    const CgCall *c;
    CgCallSite site;
    luaL_checkudata(L, 1, CALL);
    if (cgl_closed_tostring(L, 1, CALL))
        return 1;
    c = check_call(L, 1, &P);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "callgrind.Call: ");
    cgl_push_name(L, P, CG_FN, P->funcs[c->caller].name);
    luaL_addvalue(&b);
    luaL_addstring(&b, " -> ");
    cgl_push_name(L, P, CG_FN, P->funcs[c->callee].name);
    luaL_addvalue(&b);
    cg_call_site(P, c, &site);
    cgl_push_count_text(L, site.count);
    lua_pushfstring(L, " (%s call%s at ", lua_tostring(L, -1),
                    site.count == 1 ? "" : "s");
    lua_remove(L, -2);
    luaL_addvalue(&b);
    cgl_add_where(L, &b, P, c->file, c->flags, CG_HAS_ADDR, CG_HAS_LINE,
                  site.addr, site.line);
    if (P->nev) {
        luaL_addstring(&b, "; ");
        luaL_addlstring(&b, P->events[0].ptr, P->events[0].len);
        const int64_t *v = push_call_costs(L, P, c);
        lua_pushfstring(L, " %I inclusive", (lua_Integer)v[0]);
        lua_remove(L, -2);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    return 1;
}

int cgl_call_eq(lua_State *L)
{
    LCall *a = (LCall *)luaL_checkudata(L, 1, CALL);
    LCall *b = (LCall *)luaL_checkudata(L, 2, CALL);
    int same;
    lua_getiuservalue(L, 1, 1);
    lua_getiuservalue(L, 2, 1);
    same = lua_rawequal(L, -1, -2) && a->index == b->index;
    lua_pushboolean(L, same);
    return 1;
}
