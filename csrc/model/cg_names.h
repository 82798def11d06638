/* Interned names, compression ids and the function key table. */
#ifndef CG_NAMES_H
#define CG_NAMES_H

#include "cg_common.h"

/* One kind of name (objects, files or functions): the distinct strings,
 * a hash from string to index, and the (N) id table of the file. */
typedef struct CgNames {
    CgStr *str;
    size_t n, cap;
    uint32_t *hash;              /* open addressing, index + 1, 0 = empty */
    size_t hcap;                 /* power of two */
    uint64_t *ids;               /* id -> name index, open addressing:
                                    id << 32 | (index + 1), 0 = empty (ids
                                    are sparse: callgrind numbers them
                                    across kinds, up to 400,000 for 17,000
                                    names) */
    size_t nids;                 /* slots, a power of two */
    int32_t *alias;              /* stand-in -> real name index (or -1);
                                    NULL while there is no stand-in */
    size_t alias_cap;
    uint32_t *stand_id;          /* stand-in -> its id: the id table
                                    forgets it at a separator */
    size_t stand_id_cap;
    uint32_t *set;               /* slots filled since the last reset: a
                                    reset clears those, not the whole
                                    table */
    size_t nset, set_cap;
} CgNames;

/* Returns the index of s (adding it), or -1 out of memory. s must outlive
 * the table. */
CG_HIDDEN int32_t cg_names_intern(CgNames *t, const char *s, size_t len);
/* -1 when absent. */
CG_HIDDEN int32_t cg_names_find(const CgNames *t, const char *s, size_t len);
/* Sets id -> index; -1 out of memory. *old receives the previous index or
 * -1. */
CG_HIDDEN int cg_names_set_id(CgNames *t, uint64_t id, int32_t index,
                              int32_t *old);
/* -1 when undefined. */
CG_HIDDEN int32_t cg_names_get_id(const CgNames *t, uint64_t id);
CG_HIDDEN void cg_names_reset_ids(CgNames *t);
/* Frees the id table (at the end of the last file: ids are per file). */
CG_HIDDEN void cg_names_free_ids(CgNames *t);
/* Adds a stand-in for an id used before its definition (old callgrind
 * writes those): a name with ptr NULL and len = the first line that used
 * it, not hashed. Returns its index or -1 out of memory. */
CG_HIDDEN int32_t cg_names_placeholder(CgNames *t, uint64_t id,
                                       uint64_t line);
CG_HIDDEN void cg_names_free(CgNames *t);

/* (obj, file, name) -> function index. */
typedef struct CgFuncTab {
    uint32_t *slot;              /* function index + 1, 0 = empty */
    size_t cap;                  /* power of two */
    size_t n;
} CgFuncTab;

typedef struct CgFuncKey {
    int32_t obj, file, name;
} CgFuncKey;

/* Finds key among keys[] (the functions' keys, stride in bytes between
 * them); -1 when absent. */
CG_HIDDEN int32_t cg_ftab_find(const CgFuncTab *t, const void *keys,
                               size_t stride, CgFuncKey key);
/* Records index for key (not present yet); -1 out of memory. */
CG_HIDDEN int cg_ftab_add(CgFuncTab *t, const void *keys, size_t stride,
                          CgFuncKey key, uint32_t index);
CG_HIDDEN void cg_ftab_free(CgFuncTab *t);

CG_HIDDEN uint64_t cg_hash_bytes(const char *s, size_t len);

/* "(N)" at s (N decimal digits): the byte after ')', or NULL. */
CG_HIDDEN const char *cg_names_id_at(const char *s, const char *e);
/* Is s..e two or more "(N)" joined by '\'' (--compress-mangled: a name a
 * reader resolves id by id)? The loader and the writer ask the same. */
CG_HIDDEN int cg_names_is_composite(const char *s, const char *e);

#endif
