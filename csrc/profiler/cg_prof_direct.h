/* The counting engine (cg_prof_direct.c): the counting interpreter keeps
 * the calls, stacks and per-pc counts itself (P->direct). Layer 5 of
 * profiler/ (spec/layout_c_spec.lua), beside the hook engine and
 * independent of it: it uses functions and their records,
 * the records, the data and the maps; the state's layer above starts and
 * stops it. */
#ifndef CG_PROF_DIRECT_H
#define CG_PROF_DIRECT_H

#include "cg_prof_base.h"

/* Start: its frames from level down join calls, its hook is set; stop:
 * every frame leaves, the calls go to their edges and the counts to their
 * lines, the profiler stops, the VM's nodes stay (their costs); free:
 * what it kept (the next start's reset does; also a state collected
 * while running). */
CG_HIDDEN void cg_prof_direct_start(Prof *P, lua_State *L, int level);
CG_HIDDEN void cg_prof_direct_stop(Prof *P, lua_State *L);
CG_HIDDEN void cg_prof_direct_free(Prof *P);
/* Node i's own instructions, from the VM's node: while running, and
 * after stop until the data is reset (stop frees the rest). */
CG_HIDDEN int64_t cg_prof_direct_self(const Prof *P, size_t i);
/* The instructions of VM nodes [from, from + n) at out[k * stride]. */
CG_HIDDEN void cg_prof_direct_selves(const Prof *P, size_t from, size_t n,
                                     int64_t *out, size_t stride);
/* 1 when the VM's nodes and their tables of children have the sizes of
 * the ones here (callgrind_vm_node_size, callgrind_vm_kidtab_size):
 * stacks are the VM's only then. */
CG_HIDDEN int cg_prof_direct_fits(const CgVm *v);
/* The bytes of the VM's calls, functions and nodes. */
CG_HIDDEN size_t cg_prof_direct_bytes(const Prof *P);

#endif
