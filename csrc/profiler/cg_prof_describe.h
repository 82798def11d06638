/* The names of a profile's functions as the Lua writer gives them
 * (cg_prof_describe.c), for the profile written at exit (cg_prof_exit.c).
 * Layer 2 of profiler/ (spec/layout_c_spec.lua), beside the data and
 * independent of it: it uses the standard names only. */
#ifndef CG_PROF_DESCRIBE_H
#define CG_PROF_DESCRIBE_H

#include "cg_common.h"

#include <stddef.h>

#include "lua.h"

/* A string: its bytes stay alive in the anchor table of the writer. */
typedef struct Str {
    const char *s;
    size_t len;
} Str;

typedef struct Fn {
    Str name, file, decl, callname;
    lua_Integer line, last;
    int main, c, grouped;
} Fn;

/* The writer's state: stack indexes of its tables. */
typedef struct W {
    lua_State *L;
    int anchor;         /* strings kept alive */
    int data;
    int strlib;         /* the string library (of strings' metatable) */
    int loaded;         /* function -> { {name, module}, ... } */
    int cmod;           /* module -> is a C module */
    int by_file, by_sub, templates; /* module_finder's */
    int indexed, named;
    int set, nset;      /* the functions to name from package.loaded */
    int srccache, want;
    Fn *fns;
    size_t nfn;
} W;

/* Keeps the core module table at the top of the stack for
 * cg_prof_core_get. */
CG_HIDDEN void cg_prof_core_keep(lua_State *L);

/* Pushes core[name]. */
CG_HIDDEN void cg_prof_core_get(lua_State *L, const char *name);
/* Whether a core table is kept (cg_prof_core_keep) in L. */
CG_HIDDEN int cg_prof_core_kept(lua_State *L);

/* Pushes the global package table's field (nil when package is none);
 * returns its type. */
CG_HIDDEN int cg_prof_package_field(lua_State *L, const char *k);

/* The writer's describe(data): w->fns, w->nfn, each function's name, file
 * and line as the Lua writer gives them. w->L, w->data and the tables of
 * W set by the caller (see describe_and_text); raises on an error. */
CG_HIDDEN void cg_prof_describe(W *w);

#endif
