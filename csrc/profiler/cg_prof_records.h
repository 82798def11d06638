/* The records the collectors charge (cg_prof_records.c): a function's
 * line costs, the call edges, the stack trie's nodes, a coroutine's frames
 * leaving and joining. Layer 3 of profiler/ (spec/layout_c_spec.lua): it
 * uses the data and the maps. */
#ifndef CG_PROF_RECORDS_H
#define CG_PROF_RECORDS_H

#include "cg_prof_base.h"

/* cg_grow by half again (records: one per function, per call site). */
CG_HIDDEN int cg_prof_grow(void **arr, size_t *cap, size_t need,
                           size_t elem);
/* The lines a function's array has room for when it holds n: n up to 8,
 * then n rounded up to its 3 leading bits (at most a fourth more). */
CG_HIDDEN size_t cg_prof_lines_room(size_t n);
/* The cost of fn's line (made, zeroed, when new): P->cw int64_t, the
 * events of a Cost from v[0]. */
CG_HIDDEN int64_t *cg_prof_line_slot(Prof *P, lua_State *L, int32_t fn,
                                     int32_t line);
/* Adds the events of d (the first P->cw) to the line's cost c. */
CG_HIDDEN void cg_prof_line_add(const Prof *P, int64_t *c, const Cost *d);
/* The inclusive cost of edge id, every event (0 where not collected). */
CG_HIDDEN Cost cg_prof_edge_incl(const Prof *P, int32_t id);
/* Adds the Time and Alloc of d to edge id's inclusive cost (P->cw NEV). */
CG_HIDDEN void cg_prof_edge_plus(Prof *P, int32_t id, const Cost *d);
/* Calls each(ud, line, cost) for each line of fn with a cost, in
 * order of line. Returns -1 out of memory (nothing called). */
CG_HIDDEN int cg_prof_fn_lines(const Prof *P, int32_t fn,
                               void (*each)(void *ud, int32_t line,
                                            const Cost *c), void *ud);
/* Frees the lines apart. */
CG_HIDDEN void cg_prof_over_free(Prof *P);
/* T's frames leave (delta -1: it yielded) or join (+1: resumed) the
 * running threads. */
CG_HIDDEN void cg_prof_activity(Prof *P, Thread *T, int delta);
/* A suspended coroutine resumed from another stack: its frames' nodes
 * move under the resume (node base) that runs it now. */
CG_HIDDEN void cg_prof_rebase(Prof *P, lua_State *L, Thread *T,
                              int32_t base);
/* fn's node under parent from its children (-1: none yet). */
CG_HIDDEN int32_t cg_prof_find_kid(Prof *P, int32_t parent, int32_t fn);
/* The node of the stack `parent` extended by fn (-1 without stacks). */
/* A new node for fn under parent, which has none yet (the counting
 * interpreter's caches say so): its index. */
CG_HIDDEN int32_t cg_prof_node_new(Prof *P, lua_State *L, int32_t parent,
                                   int32_t fn);
CG_HIDDEN int32_t cg_prof_node_of(Prof *P, lua_State *L, int32_t parent,
                                  int32_t fn);
/* The edge from caller's line to callee (made when new). */
CG_HIDDEN int32_t cg_prof_edge_id(Prof *P, lua_State *L, int32_t caller,
                                  int32_t line, int32_t callee);
/* The line of the call the Lua frame f at level 1 of L makes now, when
 * it is a generic for's (cached, else lua_getinfo's), goes to f. */
CG_HIDDEN void cg_prof_tfor_line(Prof *P, lua_State *L, Frame *f,
                                 lua_Debug *up);

#endif
