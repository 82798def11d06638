/* The Lua layer's whole-profile questions (the module's `internal`
 * table): the call graph's sums, columns by function, costs by file and by
 * line. cg_graph.c and cg_query.c compute them; this file converts. */
#include "cg_lua_query.h"
#include "cg_lua_handle.h"
#include "cg_lua_cost.h"
#include "cg_lua_func.h"
#include "cg_graph.h"
#include "cg_query.h"

#include <string.h>

static const CgGraph *check_graph(lua_State *L, CgProfile *P)
{
    int rc;
    const CgGraph *g = cg_graph_get(P, &rc);
    if (rc == CG_ENOMEM)
        cgl_memory_error(L);
    if (rc)
        luaL_error(L, "%s: an inclusive cost does not fit in 64 bits",
                   P->name);
    return g;
}

/* internal.ab(fn, ev) -> A, B (docs/format.md): calls in from outside its
 * component; self plus calls out of it. lua/callgrind/graph.lua gives
 * them meaning. When ev is no event: nil and why, so that the Lua layer
 * resolves the event once and raises in its own words. */
int cgl_func_ab(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    const CgGraph *g = check_graph(L, P);
    size_t i = (size_t)(f - P->funcs);
    const int64_t *coefs;
    int pidx, ev;
    lua_settop(L, 2);
    pidx = cgl_push_owner(L, 1);
    ev = cgl_find_event(L, P, pidx, 2, &coefs);
    if (ev == -2) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)cgl_event_value(L, P, g->a + i * P->stride,
                                                    ev, coefs));
    lua_pushinteger(L, (lua_Integer)cgl_event_value(L, P, g->b + i * P->stride,
                                                    ev, coefs));
    return 2;
}

/* Pushes { [function index] = event value } of per-function vectors v. */
static void push_column(lua_State *L, const CgProfile *P, const int64_t *v,
                        int ev, const int64_t *coefs)
{
    size_t i;
    lua_createtable(L, (int)P->nfuncs, 0);
    for (i = 0; i < P->nfuncs; i++) {
        lua_pushinteger(L, (lua_Integer)cgl_event_value(
                               L, P, v + i * P->stride, ev, coefs));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* internal.ab_all(prof, ev) -> { A by function index }, { B by function index } */
int cgl_profile_ab_all(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const CgGraph *g = check_graph(L, P);
    const int64_t *coefs;
    int ev = cgl_check_event(L, P, 1, 2, &coefs);
    push_column(L, P, g->a, ev, coefs);
    push_column(L, P, g->b, ev, coefs);
    return 2;
}

/* internal.components(prof) -> { component by function index }, { cyclic by
 * component }; components are numbered from 1 in reverse topological
 * order (callees before callers). */
int cgl_profile_components(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const CgGraph *g = check_graph(L, P);
    size_t i;
    lua_createtable(L, (int)P->nfuncs, 0);
    for (i = 0; i < P->nfuncs; i++) {
        lua_pushinteger(L, (lua_Integer)g->comp[i] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_createtable(L, (int)g->ncomp, 0);
    for (i = 0; i < g->ncomp; i++) {
        lua_pushboolean(L, g->cyclic[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 2;
}

/* internal.self_all(prof, ev) -> { self cost by function index } */
int cgl_profile_self_all(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const int64_t *coefs;
    int ev = cgl_check_event(L, P, 1, 2, &coefs);
    push_column(L, P, P->self, ev, coefs);
    return 1;
}

/* internal.function_at(prof, i) -> the handle of function i (1-based) */
int cgl_profile_function(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    lua_Integer i = luaL_checkinteger(L, 2);
    luaL_argcheck(L, i >= 1 && (lua_Unsigned)i <= P->nfuncs, 2,
                  "function index out of range");
    cgl_push_func(L, 1, (int32_t)(i - 1));
    return 1;
}

/* Raises the error of a sum's status rc (cg_query.h); what names the
 * sum: "a file's cost". */
static void sum_error(lua_State *L, int rc, const char *what)
{
    if (rc == CG_ENOMEM)
        cgl_memory_error(L);
    if (rc == CG_EVALUE)
        luaL_error(L, "a derived event's value does not fit in 64 bits");
    luaL_error(L, "%s does not fit in 64 bits", what);
}

/* internal.file_costs(prof, ev) -> { [source file] = self cost } (fi=/fe= aware;
 * lines with no file under the key false) */
int cgl_profile_file_costs(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    const int64_t *coefs;
    int ev = cgl_check_event(L, P, 1, 2, &coefs);
    int64_t *sum;
    size_t nf = P->names[CG_FILE].n, i;
    int rc;
    sum = (int64_t *)lua_newuserdatauv(L, (nf + 1 + P->stride + 1) *
                                       sizeof *sum, 0);
    rc = cg_file_costs(P, ev, coefs, sum, sum + nf + 1);
    if (rc)
        sum_error(L, rc, "a file's cost");
    lua_newtable(L);
    for (i = 0; i <= nf; i++) {
        if (!sum[i] && (i == nf || !P->names[CG_FILE].str[i].ptr))
            continue;
        if (i == nf)
            lua_pushboolean(L, 0);
        else
            cgl_push_str(L, P->names[CG_FILE].str[i]);
        lua_pushinteger(L, (lua_Integer)sum[i]);
        lua_rawset(L, -3);
    }
    return 1;
}

int cgl_filelines_gc(lua_State *L)
{
    cg_file_lines_free((CgFileLines *)luaL_checkudata(L, 1, FILELINES));
    return 0;
}

/* internal.annotate(prof, file, ev) -> { [line] = cost }, { [line] = { fn index
 * = true } } for the cost lines whose source file is `file` */
int cgl_profile_annotate(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    size_t len, i;
    const char *file = luaL_checklstring(L, 2, &len);
    int32_t fi = cg_names_find(&P->names[CG_FILE], file, len);
    const int64_t *coefs;
    int ev = cgl_check_event(L, P, 1, 3, &coefs);
    CgFileLines *fl;
    int64_t *scratch;
    int rc;
    lua_settop(L, 3);
    fl = (CgFileLines *)lua_newuserdatauv(L, sizeof *fl, 0);   /* 4 */
    memset(fl, 0, sizeof *fl);
    luaL_setmetatable(L, FILELINES);   /* frees the sums, even on error */
    lua_newtable(L);             /* 5: costs */
    lua_newtable(L);             /* 6: functions */
    if (fi < 0)
        return 2;
    scratch = (int64_t *)lua_newuserdatauv(L, (P->stride + 1) *
                                           sizeof *scratch, 0);
    rc = cg_file_lines(P, fi, ev, coefs, fl, scratch);
    if (rc)
        sum_error(L, rc, "a line's cost");
    lua_pop(L, 1);
    for (i = 0; i < fl->nlines; i++) {
        lua_pushinteger(L, (lua_Integer)fl->lines[i].cost);
        lua_rawseti(L, 5, (lua_Integer)fl->lines[i].line);
    }
    for (i = 0; i < fl->nfuncs; i++) {
        lua_Integer ln = (lua_Integer)fl->funcs[i].line;
        if (lua_rawgeti(L, 6, ln) == LUA_TNIL) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_rawseti(L, 6, ln);
        }
        lua_pushboolean(L, 1);
        lua_rawseti(L, -2, (lua_Integer)fl->funcs[i].func + 1);
        lua_pop(L, 1);
    }
    cg_file_lines_free(fl);
    return 2;
}
