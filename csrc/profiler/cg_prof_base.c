/* What every file of the profiler above it uses of the collector's state
 * (cg_prof_base.h): where it is kept, running out of memory, the info
 * table, an option, the automatic collector and the allocator while
 * profiling. The state's life (made, freed) is cg_prof_state.c's. */
#define _POSIX_C_SOURCE 200809L
#include "cg_prof_base.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

const char cg_prof_key = 'p';          /* its address keys the registry */

Prof *cg_prof_get(lua_State *L)
{
    Prof *P;
    Prof **box;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &cg_prof_key);
    box = (Prof **)lua_touserdata(L, -1);
    P = box != NULL ? *box : NULL;
    lua_pop(L, 1);
    return P;
}

/* Out of memory inside the hook or a start/stop: the state stays
 * consistent (every array grows before it is written). */
void cg_prof_oom(Prof *P, lua_State *L)
{
    P->in_hook = 0;
    luaL_error(L, "not enough memory");
}

/* ---- the collector's steps ----
 *
 * Finalizers run with hooks off, but the instruction counter keeps
 * counting, so a finalizer that ran in the middle of a Lua function would
 * be charged to the line that happened to allocate. While profiling, the
 * automatic collector is stopped and its steps are taken here, inside the
 * hook, at the pace it would have taken them itself (a step every 8 KB
 * allocated, the next cycle once as much again is allocated as is in
 * use): what finalizers run there is nobody's. A collectgarbage("restart")
 * by the profiled code gives the collector back. */

void cg_prof_gc_take(Prof *P, lua_State *L)
{
    P->gc_ours = lua_gc(L, LUA_GCISRUNNING);
    if (P->gc_ours)
        lua_gc(L, LUA_GCSTOP);
    P->gc_last = 0;
    P->gc_next = P->gc_ours ? GC_STEP_BYTES : INT64_MAX;
}

void cg_prof_gc_give_back(Prof *P, lua_State *L)
{
    if (P->gc_ours && !lua_gc(L, LUA_GCISRUNNING))
        lua_gc(L, LUA_GCRESTART);
    P->gc_ours = 0;
}

/* opts[name] as a boolean; def when it is nil or opts is not a table. */
int cg_prof_flag(lua_State *L, int idx, const char *name, int def)
{
    int v = def;
    if (lua_type(L, idx) != LUA_TTABLE)
        return def;
    lua_getfield(L, idx, name);
    if (!lua_isnil(L, -1))
        v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

void cg_prof_push_info(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &cg_prof_key);
    lua_getiuservalue(L, -1, 1);
    lua_remove(L, -2);
}
/* ---- allocation counting ---- */

void *cg_prof_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    Prof *P = (Prof *)ud;
    size_t had = ptr != NULL ? osize : 0;
    if (nsize > had && !P->in_hook)
        P->alloc += (int64_t)(nsize - had);
    return P->old_f(P->old_ud, ptr, osize, nsize);
}

void cg_prof_restore_alloc(Prof *P, lua_State *L)
{
    void *ud;
    if (P->old_f != NULL && lua_getallocf(L, &ud) == cg_prof_alloc && ud == P) {
        lua_setallocf(L, P->old_f, P->old_ud);
        P->old_f = NULL;
    }
}

/* While it has a record, a thread is kept alive (in the state's info
 * table, keyed by its address): a suspended coroutine the program drops
 * is not collected while profiling, and no new thread takes its address
 * and its record. Its frames close at stop, as they would have. L is the
 * running thread. */
void cg_prof_anchor(lua_State *L, lua_State *th, int keep)
{
    cg_prof_push_info(L);
    lua_pushlightuserdata(L, th);
    if (keep)
        lua_pushthread(L);      /* th is L */
    else
        lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

