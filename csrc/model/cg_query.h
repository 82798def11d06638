/* Sums over a loaded profile that the Lua layer asks for: totals, a
 * derived event's value, costs by source file and by source line. Plain
 * C, no Lua: the fuzzers check them and the bench times them. */
#ifndef CG_QUERY_H
#define CG_QUERY_H

#include "cg_profile.h"

/* Statuses besides CG_OK and CG_ENOMEM (cg_common.h): what did not fit
 * in 64 bits. */
enum {
    CG_EVALUE = 16,        /* a derived event's value */
    CG_ESUM = 17           /* a sum of values */
};

/* The profile's totals (the sum of its parts' sums) into out (nev
 * values); CG_ESUM when one does not fit. */
CG_HIDDEN int cg_totals(const CgProfile *P, int64_t *out);

/* Part `part`'s (0-based) sums in profile event order into out (nev
 * values; 0 for the events the part has no column of). */
CG_HIDDEN void cg_part_totals(const CgProfile *P, uint32_t part,
                              int64_t *out);

/* v[ev], or (ev < 0) the linear combination coefs[0..nev) of v: a
 * derived event's value, into *out. CG_EVALUE when it does not fit. */
CG_HIDDEN int cg_event_value(const CgProfile *P, const int64_t *v, int ev,
                             const int64_t *coefs, int64_t *out);

/* The value of event (ev, coefs) summed over the cost lines of each
 * source file: sum[i] for file name i, sum[names[CG_FILE].n] for lines
 * with no file (nfiles + 1 values). scratch has room for stride values.
 * CG_EVALUE or CG_ESUM when a value or a sum does not fit. */
CG_HIDDEN int cg_file_costs(const CgProfile *P, int ev, const int64_t *coefs,
                            int64_t *sum, int64_t *scratch);

/* One source line of a file and its summed cost. */
typedef struct CgLineSum {
    uint64_t line;               /* 0: the lines with no line number */
    int64_t cost;
} CgLineSum;

/* A function with cost lines at a source line. */
typedef struct CgLineFunc {
    uint64_t line;
    int32_t func;
} CgLineFunc;

/* The cost lines of one source file, by line: each line once with its
 * cost, and each (line, function) pair once, both in the order first
 * seen. Owned: cg_file_lines_free. */
typedef struct CgFileLines {
    CgLineSum *lines;
    size_t nlines, lines_cap;
    CgLineFunc *funcs;
    size_t nfuncs, funcs_cap;
    uint32_t *lslot, *fslot;     /* hashes: index + 1, 0 = empty */
    size_t lcap, fcap;           /* slots, powers of two */
} CgFileLines;

/* Fills *out (zeroed first) for the cost lines whose file is `file` (a
 * file name index, or -1 for lines with no file) with the value of event
 * (ev, coefs). scratch has room for stride values. CG_EVALUE, CG_ESUM or
 * CG_ENOMEM on failure, *out then empty. */
CG_HIDDEN int cg_file_lines(const CgProfile *P, int32_t file, int ev,
                            const int64_t *coefs, CgFileLines *out,
                            int64_t *scratch);
CG_HIDDEN void cg_file_lines_free(CgFileLines *fl);

#endif
