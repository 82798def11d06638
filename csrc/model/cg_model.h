/* Model helpers the loader uses; not part of the binding's view. */
#ifndef CG_MODEL_H
#define CG_MODEL_H

#include "cg_profile.h"

/* A new empty profile with no text; NULL out of memory. */
CG_HIDDEN CgProfile *cg_model_new(const char *name);
/* Adds a text; src (NULL: the caller keeps buf alive) is then the
 * profile's, freed with release(src); -1 out of memory (src is then not
 * owned). */
CG_HIDDEN int cg_model_add_text(CgProfile *P, const char *buf, size_t len,
                                void *src, void (*release)(void *src),
                                const char *name);
/* How many of a thing the load is expected to make in the end, n of
 * them made so far: n scaled by the share of the texts read (a hint for
 * the large arrays, cg_mem.h). */
CG_HIDDEN size_t cg_model_expect(const CgProfile *P, size_t n);
/* Room for n functions' cost vectors; -1 out of memory. */
CG_HIDDEN int cg_model_reserve_self(CgProfile *P, size_t n);
/* Appends call c with its numbers and costs v[0..n) (profile event
 * order); c->site is set here; -1 out of memory. */
CG_HIDDEN int cg_model_add_call(CgProfile *P, const CgCall *c,
                                const CgCallSite *site, const int64_t *v,
                                size_t n);
/* Appends a base event, widening every cost vector; -1 out of memory. */
CG_HIDDEN int cg_model_add_event(CgProfile *P, const char *s, size_t len);
/* At the end of a file: ids it used and never defined keep the name "(N)",
 * with a warning naming the file; CG_ENOMEM out of memory. */
CG_HIDDEN int cg_model_name_orphans(CgProfile *P, const char *name);
/* After the last line: resolves forward id references, merges functions
 * named only by cfn= without a file into their one definition, and groups
 * blocks and calls by function. Fills err on failure. */
CG_HIDDEN int cg_model_finish(CgProfile *P, CgError *err);
/* Adds text ("NAME:LINE: message") of a kind (CG_W_*) to the warnings
 * (the first CG_MAX_WARNINGS, and every "truncated" one; the rest are
 * counted); -1 out of memory. */
CG_HIDDEN int cg_model_warn_text(CgProfile *P, int kind, const char *text);

#endif
