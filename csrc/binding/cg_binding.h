/* The Lua binding's shared header: the names, keys and types every one of
 * its files (cg_lua*.c) uses. Each file has one job and a header of its
 * own (cg_lua_handle.h ...) with what it offers the others, in layers
 * that never include back: handle <- cost <- profile <- func <- lines;
 * query and load above them; cg_lua.c registers. Only
 * luaopen_callgrind_core is exported, every other shared symbol is cgl_
 * and hidden. The binding converts between C and Lua; what computes is
 * Lua-free C (cg_query.h, cg_graph.h, cg_model.c). */
#ifndef CG_BINDING_H
#define CG_BINDING_H

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
#define ITERATOR "callgrind.Iterator"
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

#endif
