/* The profile model: what a loaded file holds (walking it: cg_cursor.h).
 *
 * Storage: the loaded bytes are the storage of cost lines and jumps. The
 * loader records, per function, blocks (byte ranges of the file with the
 * parser state at their start) and sums self costs once; iterating a
 * function's lines parses its blocks again. Calls, functions, names and
 * parts are few and are stored outright. */
#ifndef CG_PROFILE_H
#define CG_PROFILE_H

#include "cg_common.h"
#include "cg_names.h"

/* Where a warning list stops growing; one last line counts the rest.
 * A "truncated" warning (one per file at most) is always kept. */
#define CG_MAX_WARNINGS 1000

/* Warning kinds (README, "Warnings"); cg_warning_kinds names them. */
enum {
    CG_W_TRUNCATED = 0,    /* the file was cut short */
    CG_W_SKIPPED = 1,      /* lenient mode dropped a line */
    CG_W_MISMATCH = 2,     /* summary: differs from the cost lines */
    CG_W_UNKNOWN = 3,      /* an unknown line was skipped */
    CG_W_NAME = 4,         /* an id redefined or never defined */
    CG_W_LOST = 5,         /* totals: differs from the cost lines: lines
                              were lost (or added), whatever wrote it */
    CG_W_CHANGED = 6,      /* a written file's digest does not match: a
                              byte was changed, added or removed */
    CG_W_CALLS = 7,        /* a call costs more than its part, or a
                              function with its calls out more than the
                              profile: callgrind never writes that */
    CG_NWKINDS = 8
};

/* How the files of this library's writer (cg_emit.h) start and end: the
 * loader takes such a file as cut short ("truncated") when a part lacks
 * its totals: or the end line is missing. */
#define CG_WRITTEN_HEAD "# callgrind format\n# callgrind.lua: every part " \
    "ends with totals:, the file with \"# end\" and its digest\n"
/* The head before 0.2.0: an end line without a digest. */
#define CG_WRITTEN_HEAD_V1 "# callgrind format\n# callgrind.lua: every part " \
    "ends with totals:, the file with \"# end\"\n"
#define CG_WRITTEN_END "# end\n"
/* Since 0.2.0 the end line carries the digest of every byte before it:
 * "# end digest=fnv1a64:" and 16 lowercase hex digits (FNV-1a, 64 bits). */
#define CG_WRITTEN_DIGEST "# end digest=fnv1a64:"
#define CG_FNV_OFFSET 0xcbf29ce484222325u
#define CG_FNV_PRIME 0x100000001b3u

/* FNV-1a of n bytes, continuing from h (CG_FNV_OFFSET to start). */
static inline uint64_t cg_fnv1a(uint64_t h, const char *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p, *end = s + n;
    /* eight bytes a turn: the loop's own count and jump once for them
     * (3 instructions a byte instead of 5; the digest of a 2.8 MB stack
     * record took 16.8 million) */
    for (; end - s >= 8; s += 8) {
        h = (h ^ s[0]) * CG_FNV_PRIME;
        h = (h ^ s[1]) * CG_FNV_PRIME;
        h = (h ^ s[2]) * CG_FNV_PRIME;
        h = (h ^ s[3]) * CG_FNV_PRIME;
        h = (h ^ s[4]) * CG_FNV_PRIME;
        h = (h ^ s[5]) * CG_FNV_PRIME;
        h = (h ^ s[6]) * CG_FNV_PRIME;
        h = (h ^ s[7]) * CG_FNV_PRIME;
    }
    for (; s < end; s++)
        h = (h ^ *s) * CG_FNV_PRIME;
    return h;
}
CG_HIDDEN extern const char *const cg_warning_kinds[CG_NWKINDS];

typedef struct CgWarning {
    char *text;            /* "NAME:LINE: message" */
    int kind;              /* CG_W_* */
} CgWarning;

typedef struct CgError {
    int status;            /* CG_E* */
    uint64_t line;         /* 1-based, 0 when not about a line */
    char msg[512];         /* "NAME:LINE: message", ready to show */
} CgError;

/* Function flags. */
enum {
    CG_FN_BODY = 1,        /* has a fn= record of its own in the file */
    CG_FN_IMPLICIT = 2     /* named by cfn= with no cfi=/cfl= */
};

typedef struct CgFunc {
    int32_t obj, file, name;     /* name indices; obj/file -1 when none */
    uint32_t flags;
    uint32_t blocks_begin, blocks_end;   /* into CgProfile.blocks */
    uint32_t calls_begin, calls_end;     /* into CgProfile.calls */
    uint32_t callers_begin, callers_end; /* into CgProfile.callers */
} CgFunc;

/* Call flags: which positions the file gave. */
enum {
    CG_HAS_ADDR = 1, CG_HAS_LINE = 2, CG_HAS_TADDR = 4, CG_HAS_TLINE = 8
};

/* Parts a call can name (CgCall.part has 28 bits). */
#define CG_MAX_PARTS 0x0fffffff

/* A call. Its count, call site, target and inclusive costs are varints in
 * CgProfile.call_bytes at `site` (cg_call_site, cg_call_costs): calls are
 * the largest part of the model, and most of those numbers take a byte or
 * two. */
typedef struct CgCall {
    int32_t caller, callee;
    int32_t file;                /* source file of the call site, or -1 */
    unsigned part : 28;
    unsigned flags : 4;
    uint64_t site;               /* offset of its numbers in call_bytes */
} CgCall;

/* A call's numbers as written. */
typedef struct CgCallSite {
    uint64_t count;
    uint64_t addr, line;         /* call site (flags CG_HAS_ADDR/LINE) */
    uint64_t taddr, tline;       /* target as written (CG_HAS_TADDR/TLINE) */
} CgCallSite;

/* A run of a function's cost lines, jumps and calls in the file. */
typedef struct CgBlock {
    size_t start, end;           /* byte range */
    int32_t func;
    int32_t lfile;               /* source file of its lines (fi=/fe=) */
    int32_t jfile, jfunc;        /* pending jfi=/jfn= at start, or -1 */
    uint32_t part;
    uint32_t base;               /* index of its npos start positions */
} CgBlock;

typedef struct CgDesc {
    CgStr type, value;
} CgDesc;

typedef struct CgEventDef {
    CgStr name, formula, long_name;  /* ptr NULL when absent */
    uint64_t line;
} CgEventDef;

enum { CG_PART_NUMBER = 1, CG_PART_PID = 2, CG_PART_THREAD = 4,
       CG_PART_CMD = 8 };

typedef struct CgPart {
    uint32_t has;                /* CG_PART_* */
    uint32_t text;               /* the file it came from: CgProfile.texts */
    int64_t number, pid, thread;
    CgStr cmd;
    uint32_t desc_begin, desc_end;   /* into CgProfile.descs */
    int npos;
    int moving_base;             /* call and jump lines' positions move
                                    the base (the load's CG_MOVING_BASE) */
    uint8_t poskind[CG_MAX_POSITIONS];
    CgStr posname[CG_MAX_POSITIONS];
    int nev;
    uint32_t *evmap;             /* part column -> profile event index */
    int64_t *sum;                /* per part column: sum of cost lines */
    int64_t *summary, *totals;   /* per part column, NULL when absent */
    uint64_t line, summary_line, totals_line;
} CgPart;

/* One loaded file (or string): its bytes are the storage of its parts. */
typedef struct CgText {
    const char *buf;             /* owned by src, or by the caller */
    size_t len;
    void *src;                   /* what holds buf (the reader's CgSource),
                                    or NULL when the caller owns it */
    void (*release)(void *src);  /* frees src: the reader registers it, so
                                    the model needs none of its headers */
    char *name;                  /* path or chunk name, for messages */
} CgText;

struct CgGraph;                  /* cg_graph.h: built on first use */

typedef struct CgProfile {
    CgText *texts;               /* in load order; parts point into them */
    size_t ntexts, texts_cap;
    size_t len;                  /* bytes of all texts */
    char *name;                  /* the first text's name */
    CgStr creator;
    int version;

    CgStr *events;               /* base events, first-seen order */
    size_t nev, events_cap;
    size_t stride;               /* cost vector length (>= nev) */
    CgEventDef *event_defs;
    size_t nevent_defs, event_defs_cap;

    CgNames names[CG_NKINDS];
    CgFuncTab ftab;              /* (obj, file, name) -> function */
    CgFunc *funcs;
    size_t nfuncs, funcs_cap;
    int64_t *self;               /* nfuncs * stride */
    size_t self_cap;             /* functions it has room for */

    CgCall *calls;
    size_t ncalls, calls_cap;
    uint8_t *call_bytes;         /* per call: varints count, the positions
                                    its flags name, the number of costs,
                                    then zigzag costs in profile event
                                    order (cg_call_site, cg_call_costs) */
    size_t call_bytes_len, call_bytes_cap;
    uint32_t *callers;           /* call indices grouped by callee */

    CgBlock *blocks;
    size_t nblocks, blocks_cap;
    uint64_t *bases;
    size_t nbases, bases_cap;

    CgPart *parts;
    size_t nparts, parts_cap;
    CgDesc *descs;
    size_t ndescs, descs_cap;

    CgWarning *warnings;
    size_t nwarnings, warnings_cap;
    uint64_t warnings_dropped[CG_NWKINDS];   /* past CG_MAX_WARNINGS */

    uint64_t run_lines;          /* cost lines the loader took in runs
                                    its second thread summed
                                    (cg_prescan.h) */
    uint64_t chunks;             /* chunks of the texts read so */
    uint64_t vec_lines;          /* cost lines read by the vector paths
                                    (cg_vec.h) and taken into the model */
    uint64_t read_ahead;         /* texts the second thread read the
                                    rest of while the loader started
                                    (cg_source.h: read in part) */
    uint64_t done;               /* bytes of the texts the loader has
                                    read, as of its last report (every
                                    CG_DONE_STEP, cg_load.h): how far the arrays
                                    are expected to grow
                                    (cg_model_expect) */
    struct CgGraph *graph;       /* the call graph, built on first use
                                    (cg_graph_get), NULL before */
    void (*graph_free)(struct CgGraph *g);  /* set with graph: frees it */
    size_t graph_bytes;          /* its size, for cg_profile_bytes */

    uint32_t *by_name;           /* function indices grouped by name */
    uint32_t *by_name_start;     /* name index -> first in by_name; one
                                    more entry than CG_FN names (built by
                                    cg_model_finish: cg_func_lookup) */

    char **arena;                /* chunks holding made-up names */
    size_t narena, arena_cap;
    size_t arena_bytes;          /* their sizes, for cg_profile_bytes */
} CgProfile;

CG_HIDDEN void cg_profile_free(CgProfile *P);

/* Bytes the model holds besides the loaded text. */
CG_HIDDEN size_t cg_profile_bytes(const CgProfile *P);

/* The count and positions of call c. */
CG_HIDDEN void cg_call_site(const CgProfile *P, const CgCall *c,
                            CgCallSite *out);
/* The inclusive costs of call c into out (stride values). */
CG_HIDDEN void cg_call_costs(const CgProfile *P, const CgCall *c,
                             int64_t *out);

/* The functions named name (a CG_FN name index) in file and object (name
 * indices, or -2 for any): returns how many there are and writes the
 * first max of their indices to out, in function order. O(1) when file
 * and object are given (the key table), else O(functions of that name). */
CG_HIDDEN size_t cg_func_lookup(const CgProfile *P, int32_t name,
                                int32_t file, int32_t obj, uint32_t *out,
                                size_t max);

/* Looks an event name up; -1 when unknown. */
CG_HIDDEN int cg_event_index(const CgProfile *P, const char *name, size_t len);

/* Fills err with "not enough memory" (status CG_ENOMEM, no line) and
 * returns CG_ENOMEM: the one way the core says it. */
CG_HIDDEN int cg_error_nomem(CgError *err);

#endif
