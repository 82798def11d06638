/* cg_lua_cost.c: events and costs. */
#ifndef CG_LUA_COST_H
#define CG_LUA_COST_H

#include "cg_binding.h"

CG_HIDDEN int cgl_find_event(lua_State *L, const CgProfile *P, int pidx,
                             int arg, const int64_t **coefs);
CG_HIDDEN int cgl_check_event(lua_State *L, const CgProfile *P, int pidx,
                              int arg, const int64_t **coefs);
CG_HIDDEN int cgl_profile_event_problem(lua_State *L);
CG_HIDDEN int64_t cgl_event_value(lua_State *L, const CgProfile *P,
                                  const int64_t *v, int ev,
                                  const int64_t *coefs);
CG_HIDDEN int cgl_names_tostring(lua_State *L);
CG_HIDDEN int cgl_desc_tostring(lua_State *L);
CG_HIDDEN void cgl_set_costs_mt(lua_State *L, int pidx);
CG_HIDDEN int cgl_push_costs(lua_State *L, const CgProfile *P, int pidx,
                             const int64_t *v, int arg);
CG_HIDDEN int cgl_profile_define(lua_State *L);
CG_HIDDEN int cgl_profile_totals(lua_State *L);
CG_HIDDEN int cgl_profile_total(lua_State *L);
CG_HIDDEN void cgl_push_events(lua_State *L, int pidx, const CgProfile *P);
CG_HIDDEN int cgl_profile_event_defs(lua_State *L);
#endif
