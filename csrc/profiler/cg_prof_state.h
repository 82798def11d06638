/* The collector's state over its life (cg_prof_state.c): made, dropped
 * and freed; the engine a start chooses, and the start and stop of that
 * engine. Layer 6 of profiler/ (spec/layout_c_spec.lua): it uses both
 * engines and everything below them; only the Lua face is above it. */
#ifndef CG_PROF_STATE_H
#define CG_PROF_STATE_H

#include "cg_prof_base.h"

/* The collector's state, made (kept in the registry for the life of the
 * Lua state, freed by its __gc) when there is none. */
CG_HIDDEN Prof *cg_prof_state(lua_State *L);
/* Forgets the collected data (and the functions' info table). */
CG_HIDDEN void cg_prof_drop(lua_State *L);
/* Whether a start with the options at idx would take calls and returns
 * from the counting interpreter's own hook, leaving debug.sethook to the
 * user (engine vm, Instr only). Raises on a bad engine. */
CG_HIDDEN int cg_prof_own_hook(lua_State *L, int idx);
/* Starts profiling (opts: the index of the options table, or of a
 * non-table: the defaults); level 0 starts with an empty stack, level n
 * with the frames from level n down. Raises when running, or when another
 * hook is set. */
CG_HIDDEN void cg_prof_start(lua_State *L, int opts, int level);
/* Stops: what ran since the last event charged, every open frame closed,
 * the hook removed. Returns 0 when the hook was replaced. */
CG_HIDDEN int cg_prof_stop(lua_State *L);
/* Node i's own cost: the hook engine's, or the counting interpreter's
 * (its VM's node, Instr). */
CG_HIDDEN void cg_prof_node_cost(const Prof *P, size_t i, Cost *c);
/* The own costs of nodes [from, from + n), in the events collected (the
 * first nev of them, 0 past those): cost[k * nev + e], node from + k. */
CG_HIDDEN void cg_prof_node_costs(const Prof *P, size_t from, size_t n,
                                  int64_t *cost, size_t nev);
/* The bytes the collector's records hold outside the Lua heap (its
 * arrays and maps, their capacities; the VM's calls and nodes). */
CG_HIDDEN size_t cg_prof_bytes(const Prof *P);

#endif
