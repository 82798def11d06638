/* cg_lua_handle.c: profiles, the state table, pushing handles. */
#ifndef CG_LUA_HANDLE_H
#define CG_LUA_HANDLE_H

#include "cg_binding.h"

/* Raises Lua's own memory error (its message, no "file:line: "), for a
 * CG_ENOMEM of the core. */
CG_HIDDEN int cgl_memory_error(lua_State *L);
CG_HIDDEN LProfile *cgl_to_lprofile(lua_State *L, int idx);
CG_HIDDEN CgProfile *cgl_check_open(lua_State *L, const LProfile *lp);
CG_HIDDEN CgProfile *cgl_check_profile(lua_State *L, int idx);
CG_HIDDEN CgProfile *cgl_handle_profile(lua_State *L, int idx);
CG_HIDDEN int cgl_closed_tostring(lua_State *L, int idx, const char *tname);
CG_HIDDEN int cgl_profile_close(lua_State *L);
CG_HIDDEN void cgl_push_str(lua_State *L, CgStr s);
CG_HIDDEN void cgl_push_name(lua_State *L, const CgProfile *P, int kind,
                             int32_t i);
CG_HIDDEN void cgl_push_state(lua_State *L, int idx);
CG_HIDDEN void cgl_push_func(lua_State *L, int pidx, int32_t i);
/* The handle cache of the profile at pidx (presize: made anew, while
 * empty, with room for every function), and a handle through it at cidx,
 * made with the metatable at midx (cgl_push_func_mt). */
CG_HIDDEN void cgl_push_func_cache(lua_State *L, int pidx, int presize);
CG_HIDDEN void cgl_push_func_mt(lua_State *L, int pidx);
CG_HIDDEN void cgl_push_cached_func(lua_State *L, int cidx, int midx,
                                    int32_t i);
/* The function handle at idx (else raises, as luaL_checkudata would),
 * with the profile it belongs to pushed. */
CG_HIDDEN LFunc *cgl_check_lfunc(lua_State *L, int idx);
/* The profile of the function handle at idx, pushed (nil when it is
 * none); returns its type. */
CG_HIDDEN int cgl_push_func_owner(lua_State *L, int idx);
CG_HIDDEN int cgl_push_owner(lua_State *L, int idx);
CG_HIDDEN void cgl_push_pos(lua_State *L, uint32_t flags, uint32_t bit,
                            uint64_t v);
CG_HIDDEN void cgl_add_where(lua_State *L, luaL_Buffer *b, const CgProfile *P,
                             int32_t file, uint32_t flags, uint32_t has_addr,
                             uint32_t has_line, uint64_t addr, uint64_t line);
CG_HIDDEN LProfile *cgl_new_profile(lua_State *L);
/* An iterator's state (cgl_new_iter): the step runs with the iterator at
 * 1; it reads the userdata among its user values through ud[] (the
 * profile's LProfile first), the others with lua_getiuservalue(L, 1, k),
 * and its counters from here. */
typedef struct CgIter CgIter;
typedef int (*CgIterStep)(lua_State *L, CgIter *it);
struct CgIter {
    CgIterStep step;
    const char *what;            /* a string literal: what it walks */
    lua_Integer n;               /* how many, or -1 when not known */
    lua_Integer i, end;          /* the step's own counters */
    int flag;
    int nuv;
    void *ud[2];                 /* its first user values, when userdata */
};
CG_HIDDEN CgIter *cgl_new_iter(lua_State *L, CgIterStep step, const char *what,
                               lua_Integer n, int nuv);
CG_HIDDEN int cgl_iter_call(lua_State *L);
CG_HIDDEN int cgl_iter_tostring(lua_State *L);
CG_HIDDEN int cgl_profile_state(lua_State *L);
#endif
