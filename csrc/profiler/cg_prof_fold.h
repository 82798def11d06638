/* Functions and their records (cg_prof_fold.c): a function value seen
 * gets a slot, its definition a record (two closures of one definition,
 * and every prototype of it, share one); a function freed is folded into
 * its record. Layer 4 of profiler/ (spec/layout_c_spec.lua): it uses the
 * records, the data, the maps and the signals (a main chunk's first call
 * puts our SIGINT handler back). */
#ifndef CG_PROF_FOLD_H
#define CG_PROF_FOLD_H

#include "cg_prof_base.h"

/* The function of ar, its record made on first sight. */
CG_HIDDEN int32_t cg_prof_resolve(Prof *P, lua_State *L, lua_Debug *ar,
                                  int with_name);
/* info[id + 1][2] = the name the calling instruction gives the function. */
CG_HIDDEN void cg_prof_name_from_call(Prof *P, lua_State *L, lua_Debug *ar,
                                      int32_t id);
/* P->direct: the VM's per-pc counts into the lines of their functions. */
CG_HIDDEN void cg_prof_fold_counts(Prof *P, lua_State *L);
/* The hook engine, after a collector's step or collectgarbage: the
 * values it holds weakly that were collected leave their slots. */
CG_HIDDEN void cg_prof_weak_check(Prof *P, lua_State *L);
/* A step of the automatic collector, from the hook engine (its values
 * held weakly then checked). */
CG_HIDDEN void cg_prof_gc_step(Prof *P, lua_State *L);
/* The VM frees a prototype (P->direct): its counts are folded. */
CG_HIDDEN void cg_prof_freed(Prof *P, lua_State *L, const void *proto,
                             const lua_Unsigned *counts, int n);
/* Pushes data.info: per record { the function or a description of it
 * ({ source, linedefined, lastlinedefined, what }: a Lua function no
 * longer alive), its call-site name }. */
CG_HIDDEN void cg_prof_push_fninfo(Prof *P, lua_State *L);
/* Frees the slots, the pool's map and the definitions. */
CG_HIDDEN void cg_prof_fold_free(Prof *P);
/* The call cache and the generic for's lines, forgotten. */
CG_HIDDEN void cg_prof_cc_reset(Prof *P);
/* The bytes of the records, slots and maps outside the Lua heap (their
 * capacities). */
CG_HIDDEN size_t cg_prof_fold_bytes(const Prof *P);

#endif
