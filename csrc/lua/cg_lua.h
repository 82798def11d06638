/* The Lua binding's private header: what its files (cg_lua*.c) share.
 * Each file has one job; only luaopen_callgrind_core is exported, every
 * other shared symbol is cgl_ and hidden. The binding converts between C
 * and Lua; what computes is Lua-free C (cg_query.h, cg_graph.h). */
#ifndef CG_LUA_H
#define CG_LUA_H

#include "cg_profile.h"

#include "lauxlib.h"
#include "lua.h"

#define PROFILE "callgrind.Profile"
#define FUNCTION "callgrind.Function"
#define CALL "callgrind.Call"
#define JUMP "callgrind.Jump"
#define COSTLINE "callgrind.CostLine"
#define PART "callgrind.Part"
#define CURSOR "callgrind.cursor"
#define FILELIST "callgrind.filelist"
#define FILELINES "callgrind.filelines"
/* Registry key: a table with weak keys, part table -> its profile. */
#define PART_OWNER "callgrind.part_owner"
/* Metatables of printable lists. */
#define NAMES "callgrind.Names"
#define DESC "callgrind.Desc"

/* Profile user values: the text a parsed string keeps alive, and the
 * profile's state table. */
enum { UV_TEXT = 1, UV_STATE = 2 };
/* The state table is all the per-profile state there is, and it lives as
 * long as the profile userdata (closed or not). The binding's keys: */
#define STATE_FUNCS "funcs"             /* function handles by index + 1 */
#define STATE_PARTS "parts"             /* part tables */
#define STATE_EVENTS "events"           /* prof.events */
#define STATE_DERIVED "derived"          /* name -> coefficients */
#define STATE_DERIVED_ORDER "derived order" /* names, as defined */
#define STATE_TOTALS "totals"            /* userdata: nev sums */
#define STATE_COSTS_MT "costs mt"        /* cost tables' metatable */
#define STATE_FUNC_MT "function mt"      /* its function handles' metatable */
/* The Lua modules keep theirs under "callgrind.MODULE" keys
 * (internal.state(prof)). */

typedef struct LProfile {
    CgProfile *P;                /* NULL once closed */
} LProfile;

/* A function handle: a userdata with no user value (17,000 of them for a
 * big profile: 48 bytes each on the heap, not 80). Its metatable is its
 * profile's own (the state table's STATE_FUNC_MT): the fields of the
 * FUNCTION metatable, and the profile under a key of the binding's, which
 * keeps the profile alive while the handle is. */
typedef struct LFunc {
    int32_t index;
} LFunc;

/* cg_lua_handle.c: profiles, the state table, pushing handles */
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
CG_HIDDEN void cgl_push_part(lua_State *L, int pidx, uint32_t i);
CG_HIDDEN int cgl_push_owner(lua_State *L, int idx);
CG_HIDDEN void cgl_push_pos(lua_State *L, uint32_t flags, uint32_t bit,
                            uint64_t v);
CG_HIDDEN void cgl_add_where(lua_State *L, luaL_Buffer *b, const CgProfile *P,
                             int32_t file, uint32_t flags, uint32_t has_addr,
                             uint32_t has_line, uint64_t addr, uint64_t line);
CG_HIDDEN LProfile *cgl_new_profile(lua_State *L);
CG_HIDDEN int cgl_profile_state(lua_State *L);

/* cg_lua_cost.c: events and costs */
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

/* cg_lua_profile.c: profile fields, parts, finding a function */
CG_HIDDEN int cgl_profile_fields(lua_State *L);
CG_HIDDEN int cgl_profile_tostring(lua_State *L);
CG_HIDDEN int cgl_profile_warnings(lua_State *L);
CG_HIDDEN int cgl_profile_memory(lua_State *L);
CG_HIDDEN int cgl_profile_load_stats(lua_State *L);
CG_HIDDEN int cgl_vector_paths(lua_State *L);
/* cg_lua_visuals.c */
CG_HIDDEN int cgl_gzip(lua_State *L);
CG_HIDDEN int cgl_func_call_costs(lua_State *L);
CG_HIDDEN int cgl_profile_estimate(lua_State *L);
CG_HIDDEN int cgl_profile_parts(lua_State *L);
CG_HIDDEN void cgl_build_parts(lua_State *L, int pidx, const CgProfile *P);
CG_HIDDEN uint32_t cgl_check_part(lua_State *L, int arg, int pidx_want,
                                  const CgProfile **P);
CG_HIDDEN int cgl_part_totals(lua_State *L);
CG_HIDDEN int cgl_part_tostring(lua_State *L);
CG_HIDDEN int cgl_profile_func(lua_State *L);

/* cg_lua_func.c: functions and calls */
CG_HIDDEN int cgl_profile_functions(lua_State *L);
CG_HIDDEN int cgl_profile_calls(lua_State *L);
CG_HIDDEN const CgFunc *cgl_check_func(lua_State *L, int idx, CgProfile **PP);
CG_HIDDEN int cgl_func_self(lua_State *L);
CG_HIDDEN int cgl_func_fields(lua_State *L);
CG_HIDDEN int cgl_func_tostring(lua_State *L);
CG_HIDDEN int cgl_func_calls(lua_State *L);
CG_HIDDEN int cgl_func_callers(lua_State *L);
CG_HIDDEN int cgl_call_fields(lua_State *L);
CG_HIDDEN int cgl_call_cost(lua_State *L);
CG_HIDDEN int cgl_call_tostring(lua_State *L);
CG_HIDDEN int cgl_call_eq(lua_State *L);

/* cg_lua_lines.c: cost lines and jumps */
CG_HIDDEN int cgl_profile_ulines(lua_State *L);
CG_HIDDEN int cgl_func_ulines(lua_State *L);
CG_HIDDEN int cgl_profile_lines(lua_State *L);
CG_HIDDEN int cgl_profile_jumps(lua_State *L);
CG_HIDDEN int cgl_func_lines(lua_State *L);
CG_HIDDEN int cgl_func_jumps(lua_State *L);
CG_HIDDEN int cgl_line_fields(lua_State *L);
CG_HIDDEN int cgl_line_cost(lua_State *L);
CG_HIDDEN int cgl_line_tostring(lua_State *L);
CG_HIDDEN int cgl_jump_fields(lua_State *L);
CG_HIDDEN int cgl_jump_tostring(lua_State *L);

/* cg_lua_query.c: the Lua layer's whole-profile arrays */
CG_HIDDEN int cgl_func_ab(lua_State *L);
CG_HIDDEN int cgl_profile_ab_all(lua_State *L);
CG_HIDDEN int cgl_profile_components(lua_State *L);
CG_HIDDEN int cgl_profile_self_all(lua_State *L);
CG_HIDDEN int cgl_profile_function(lua_State *L);
CG_HIDDEN int cgl_profile_file_costs(lua_State *L);
CG_HIDDEN int cgl_filelines_gc(lua_State *L);
CG_HIDDEN int cgl_profile_annotate(lua_State *L);

/* cg_lua_load.c: load, parse, files */
CG_HIDDEN int cgl_module_load(lua_State *L);
CG_HIDDEN int cgl_filelist_gc(lua_State *L);
CG_HIDDEN int cgl_module_files(lua_State *L);
CG_HIDDEN int cgl_module_parse(lua_State *L);

/* cg_lua_write.c: core.write_file_atomic into the module table at
 * module, write_profile and write_string into the internal table */
CG_HIDDEN void cgl_write_register(lua_State *L, int module, int internal);

#endif
