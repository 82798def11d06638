/* The loader's state and what its files share (private to reader/):
 * cg_load.c (the entry points, each text's start and end, the messages),
 * cg_load_lines.c (the read loop, the dispatch of every line, the body
 * lines and name values), cg_load_head.c (header lines and parts) and
 * cg_load_names.c (composite names). The hot path (cg_ld_read_text down
 * to a cost line or a name) stays in cg_load_lines.c, one translation
 * unit; the small helpers it shares are inline here. */
#ifndef CG_LOADER_H
#define CG_LOADER_H

#include "cg_load.h"
#include "cg_prescan.h"
#include "cg_scan.h"

typedef struct CgLoader {
    CgProfile *P;
    CgError *err;
    const CgLoadOpts *opts;
    int lenient;
    int moving_base;             /* CG_MOVING_BASE */
    int vec;                     /* cost lines of CG_VEC_MIN_EVENTS or
                                    more may take the vector path */
    int fatal;                   /* the error may not be skipped */
    uint64_t lineno;
    const char *line;            /* start of the current line */

    uint32_t text;               /* the file being read: P->texts */
    const char *buf;             /* its bytes */
    size_t len;
    const char *name;            /* its name, for messages */
    int file_events;             /* an events: line in this file */
    uint64_t before;             /* bytes of the files before this one */
    const char *mark;            /* where report() is next due: the
                                    first of these two */
    const char *report_at;       /* where progress is next reported */

    size_t part;                 /* index of the current part */
    int touched;                 /* any header or body line in the part */
    int part_ended;              /* its sums were checked (cg_ld_end_part) */
    int body;                    /* body lines seen in the part, or its
                                    totals: (which ends it): the next
                                    header line starts a new part */
    uint64_t events_line, positions_line;
    uint64_t base[CG_MAX_POSITIONS];

    int32_t ob, fl, lfile;       /* names in force */
    int32_t fn_obj, fn_file, fn_name;   /* key of the current fn= */
    int32_t func;                /* its function, -1 until it has content */
    int fi_pending;              /* fi=/fe= since the last content line */
    int32_t rfile;               /* the file of the last regular cost line
                                    (fl= at fn=): valgrind's base file */
    int fi_site;                 /* fi=/fe= since the last position line
                                    (a cost line, a call's or a jump's) */

    int32_t cob, cfi, cfn;       /* call target being named */
    int call_pending;
    uint64_t call_line;
    CgCall call;
    CgCallSite site;
    int skip_cost;               /* lenient: drop the cost line of a bad
                                    calls=/jump= line */
    uint64_t skip_line;

    int32_t jfile, jfn_name, jfunc;
    int jump_pending;
    uint64_t jump_line;

    int block_open;
    int callgrind;               /* creator: callgrind..., which ends every
                                    part with totals: ("# callgrind format"
                                    alone is no sign: the format's own
                                    examples start so and have none) */
    int written;                 /* 2: starts with CG_WRITTEN_HEAD: every part
                                    ends with totals:, the file with the
                                    digest line; 1: the head before 0.2.0,
                                    the file with CG_WRITTEN_END; 0: neither */
    int32_t unspecified;
    int32_t *last_func;          /* function name index -> the function
                                    last found with it, or -1: most names
                                    have one function, found without the
                                    key table */
    size_t last_func_cap;
    CgNames evnames;             /* P->events hashed, same indices */
    int64_t cost[CG_MAX_EVENTS];
    int64_t row[CG_MAX_EVENTS];  /* a call's costs in profile event order;
                                    a cost line's new part sums */
    int64_t self_row[CG_MAX_EVENTS]; /* a cost line's new self costs */
    int any_done;                /* done[] has a non-zero sum */
    int64_t done[CG_MAX_EVENTS]; /* per profile event: the sum of the parts
                                    before this one (prof:totals() adds
                                    parts in order: no prefix may
                                    overflow) */
    uint64_t made;               /* bytes of composite names built, kept
                                    or not (CG_MADE_RATIO) */
    int any_callgrind;           /* a file of callgrind's: its calls are
                                    checked (cg_load.c, check_calls) */
} CgLoader;

/* ---- messages (cg_load.c) ---- */

/* Writes s quoted for a message: at most 60 bytes, non-printables as
 * \xHH. */
CG_HIDDEN void cg_ld_quote(char *out, size_t outsz, const char *s, size_t len);
/* Fills L->err with "NAME:LINE: message" about the current line; returns
 * CG_EBAD. */
CG_HIDDEN int cg_ld_fail(CgLoader *L, const char *fmt, ...);
/* Out of memory at the current line; returns CG_ENOMEM. */
CG_HIDDEN int cg_ld_nomem(CgLoader *L);
/* Adds a warning text of a kind (CG_W_*); CG_OK, or CG_ENOMEM. */
CG_HIDDEN int cg_ld_add_warning_text(CgLoader *L, int kind, const char *text);
/* A warning of a kind (CG_W_*) about line `line`, same shape as an
 * error. */
CG_HIDDEN int cg_ld_warn_at(CgLoader *L, int kind, uint64_t line,
                            const char *fmt, ...);
/* The error of a scan (why: CG_LEX_*) of the token at tok, about `what`. */
CG_HIDDEN int cg_ld_lex_fail(CgLoader *L, int why, const char *tok,
                             const char *e, const char *what);
/* The load was cancelled (by the progress callback); returns CG_ECANCEL. */
CG_HIDDEN int cg_ld_cancelled(CgLoader *L);

/* ---- the lines (cg_load_lines.c) ---- */

/* Reads the current text: alone, or with a worker thread summing runs of
 * cost lines ahead (cg_prescan.h) in big texts. */
CG_HIDDEN int cg_ld_read_text(CgLoader *L);

/* ---- header lines and parts (cg_load_head.c) ---- */

/* Starts a part. inherit: copy positions, events, pid, thread and cmd of
 * the previous part (a new dump of the same run). */
CG_HIDDEN int cg_ld_new_part(CgLoader *L, int inherit);
/* Ends the current part: its totals: and summary: checked against the
 * sums of its cost lines. */
CG_HIDDEN int cg_ld_end_part(CgLoader *L);
/* A header line: version:, creator:, event:, summary:, totals: and the
 * lines of one part (part:, pid:, thread:, cmd:, desc:, positions:,
 * events:). */
CG_HIDDEN int cg_ld_header_line(CgLoader *L, const CgRec *r);

/* ---- composite names (cg_load_names.c) ---- */

/* Resolves the composite name s..e (two or more "(N)" joined by '\'') of
 * a kind (CG_OBJ, CG_FILE, CG_FN) into a new string in the arena, or the
 * one it already is; *out its index. */
CG_HIDDEN int cg_ld_composite(CgLoader *L, int kind, const char *s,
                              const char *e, int32_t *out);

/* ---- small ones, inline ---- */

/* Scans "(N)" at s; returns the end past ')' or NULL when s is not one. */
static inline const char *cg_ld_scan_id(const char *s, const char *e,
                                         uint64_t *id, int *big)
{
    uint64_t v = 0;
    const char *p = s + 1;
    *big = 0;
    if (s >= e || *s != '(' || p >= e || *p < '0' || *p > '9')
        return NULL;
    while (p < e && *p >= '0' && *p <= '9') {
        if (v > CG_MAX_ID)
            *big = 1;
        else
            v = v * 10 + (uint64_t)(*p - '0');
        p++;
    }
    if (p >= e || *p != ')')
        return NULL;
    if (v > CG_MAX_ID)
        *big = 1;
    *id = v;
    return p + 1;
}

static inline int32_t cg_ld_intern(CgLoader *L, int kind, const char *s,
                                   size_t len)
{
    return cg_names_intern(&L->P->names[kind], s, len);
}

static inline void cg_ld_close_block(CgLoader *L, const char *at)
{
    if (L->block_open) {
        L->P->blocks[L->P->nblocks - 1].end = (size_t)(at - L->buf);
        L->block_open = 0;
    }
}

/* Forgets the function in force (after ob=, fl=, a new part). */
static inline void cg_ld_end_function(CgLoader *L)
{
    L->cob = L->cfi = L->cfn = -1;
    L->func = -1;
    L->fn_name = -1;
    L->fn_obj = L->ob;
    L->fn_file = L->fl;
    L->jfile = L->jfn_name = L->jfunc = -1;
}

/* The size from which a text is read with two threads (cg_prescan.h):
 * 0 for none. */
static inline size_t cg_ld_two_threads_from(const CgLoadOpts *o)
{
    return o->threads == 1 ? 0 : o->chunk ? 1 : CG_PRESCAN_MIN;
}

#endif
