/* The line scanner, shared by the loader (which validates every line and
 * builds the model) and the cursor (which walks again the blocks the
 * loader accepted, and trusts them). A line becomes a record: its kind,
 * and for keyed lines the value; cost lines and the counts and targets of
 * calls=/jump=/jcnd= are scanned by the functions below. Adding a line kind
 * is one CgKind and one entry in cg_keys[] (cg_scan.c), plus its handler in
 * the loader. */
#ifndef CG_SCAN_H
#define CG_SCAN_H

#include "cg_lex.h"

#include <string.h>

typedef enum CgKind {
    CG_K_BLANK,            /* empty, blanks only, or a # comment */
    CG_K_COST,             /* starts with a digit, '+', '-' or '*' */
    CG_K_SEPARATOR,        /* Xdebug's ==== NEW PROFILING FILE */
    CG_K_OTHER,            /* none of the kinds: a bad line */
    /* key=value: names */
    CG_K_OB, CG_K_FL, CG_K_FI, CG_K_FE, CG_K_FN, CG_K_COB, CG_K_CFI,
    CG_K_CFL, CG_K_CFN, CG_K_JFI, CG_K_JFN, CG_K_FRFN,
    /* key=value: calls and jumps */
    CG_K_CALLS, CG_K_JUMP, CG_K_JCND, CG_K_UNKNOWN_EQ,
    /* key: value */
    CG_K_VERSION, CG_K_CREATOR, CG_K_PID, CG_K_THREAD, CG_K_PART, CG_K_CMD,
    CG_K_DESC, CG_K_POSITIONS, CG_K_EVENTS, CG_K_EVENT, CG_K_SUMMARY,
    CG_K_TOTALS, CG_K_UNKNOWN_COLON,
    CG_NLINEKINDS
} CgKind;

/* A keyed line kind: its key, separator, and for name lines the kind of
 * name (CG_OBJ, CG_FILE, CG_FN; -1 otherwise). */
typedef struct CgKeyDef {
    const char *key;
    size_t len;
    char sep;
    CgKind kind;
    int names;
} CgKeyDef;

CG_HIDDEN extern const CgKeyDef cg_keys[];

typedef struct CgRec {
    CgKind kind;
    const char *s, *e;           /* the line from its first non-blank to its
                                    end (no '\n', no '\r' before it) */
    const char *key, *val;       /* keyed lines: the key, the value after
                                    the separator */
    const CgKeyDef *def;         /* keyed lines: their entry */
    const char *next;            /* the start of the next line */
} CgRec;

/* The keyed part of cg_scan_line: r->s..r->e starts with a letter. */
CG_HIDDEN void cg_scan_keyed(CgRec *r);

#define CG_SEPARATOR "==== NEW PROFILING FILE"

/* Scans the line at p (p < end) into r. Inline: it runs once per line. */
static inline void cg_scan_line(const char *p, const char *end, CgRec *r)
{
    const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    char c;
    r->next = nl ? nl + 1 : end;
    if (e > p && e[-1] == '\r')
        e--;
    r->s = cg_skip_blanks(p, e);
    r->e = e;
    r->key = r->val = NULL;
    r->def = NULL;
    if (r->s == e) {
        r->kind = CG_K_BLANK;
        return;
    }
    c = *r->s;
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*')
        r->kind = CG_K_COST;
    else if (c == '#')
        r->kind = CG_K_BLANK;
    else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        cg_scan_keyed(r);
    else if ((size_t)(e - r->s) >= sizeof CG_SEPARATOR - 1 &&
             !memcmp(r->s, CG_SEPARATOR, sizeof CG_SEPARATOR - 1))
        r->kind = CG_K_SEPARATOR;
    else
        r->kind = CG_K_OTHER;
}

/* Why a cost line failed (cg_scan_costs). */
enum {
    CG_SCAN_OK = 0,
    CG_SCAN_FEWPOS,        /* col positions where npos were wanted */
    CG_SCAN_POS,           /* position col: lex error why at `at` */
    CG_SCAN_MANY,          /* col costs where at most max were wanted */
    CG_SCAN_COST           /* cost col: lex error why at `at` */
};

typedef struct CgScanFail {
    int col;
    int why;                     /* CG_LEX_* */
    const char *at;
} CgScanFail;

/* Scans a cost line s..e: npos positions (relative to base) into pos[],
 * then at most max costs into cost[] (*ncost of them). CG_SCAN_OK or a
 * CG_SCAN_* code with f filled. Inline: it runs once per cost line. */
static inline int cg_scan_costs(const char *s, const char *e, int npos,
                                const uint64_t *base, uint64_t *pos,
                                int64_t *cost, int max, int *ncost,
                                CgScanFail *f)
{
    int k, n = 0;
    for (k = 0; k < npos; k++) {
        const char *q;
        s = cg_skip_blanks(s, e);
        if (s == e) {
            f->col = k;
            return CG_SCAN_FEWPOS;
        }
        if (!(q = cg_scan_pos(s, e, base[k], &pos[k], &f->why))) {
            f->col = k;
            f->at = s;
            return CG_SCAN_POS;
        }
        s = q;
    }
    for (s = cg_skip_blanks(s, e); s < e; s = cg_skip_blanks(s, e)) {
        const char *q;
        if (n >= max) {
            for (; s < e; s = cg_skip_blanks(s, e), n++)
                s = cg_token_end(s, e);
            f->col = n;
            return CG_SCAN_MANY;
        }
        if (!(q = cg_scan_cost(s, e, &cost[n], &f->why))) {
            f->col = n;
            f->at = s;
            return CG_SCAN_COST;
        }
        n++;
        s = q;
    }
    *ncost = n;
    return CG_SCAN_OK;
}

/* Can a cost line start with c? */
static inline int cg_is_cost_start(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*';
}

/* Ends a token of the fast path: blank, '\n' or the end. */
static inline int cg_fast_end(const char *p, const char *end)
{
    return p == end || *p == ' ' || *p == '\t' || *p == '\n';
}

/* What a position token of the fast path says (cg_fast_pos). */
enum { CG_OP_BAD = 0, CG_OP_SAME, CG_OP_ABS, CG_OP_ADD, CG_OP_SUB };

/* One position token of the fast path at *pp (blanks before it skipped):
 * '*', decimal, +N, -N (at most 18 digits) or 0x-hex (at most 15), ending
 * at a blank, '\n' or end. Its value goes to *v, *pp past it; returns a
 * CG_OP_* (CG_OP_BAD for anything else). */
CG_INLINE int cg_fast_pos(const char **pp, const char *end, uint64_t *v)
{
    const char *p = *pp, *start;
    uint64_t x = 0;
    int op;
    char c;
    p = cg_skip_blanks(p, end);
    if (p == end)
        return CG_OP_BAD;
    c = *p;
    if (c == '*') {
        p++;
        op = CG_OP_SAME;
    } else if (c == '0' && end - p > 2 && p[1] == 'x') {
        int d;
        start = p += 2;
        while (p < end && (d = cg_hexval(*p)) >= 0) {
            x = x << 4 | (uint64_t)d;
            p++;
        }
        if (p == start || p - start > 15)
            return CG_OP_BAD;
        op = CG_OP_ABS;
    } else {
        op = c == '+' ? CG_OP_ADD : c == '-' ? CG_OP_SUB : CG_OP_ABS;
        if (op != CG_OP_ABS)
            p++;
        start = p;
        while (p < end && (unsigned char)(*p - '0') < 10) {
            x = x * 10 + (uint64_t)(*p - '0');
            p++;
        }
        if (p == start || p - start > 18)
            return CG_OP_BAD;
    }
    if (!cg_fast_end(p, end))
        return CG_OP_BAD;
    *v = x;
    *pp = p;
    return op;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CG_SWAR 1
#endif

#ifdef CG_SWAR
/* The decimal token at p, read as one little-endian word of the 8 bytes
 * at p (the caller checks they are there): its value into *v, and its
 * length, 1 to 7 digits followed by a blank or '\n'; 0 for anything else
 * (no digit first, 8 digits or more, another byte after them), which the
 * caller scans byte by byte. No branch on the number of digits: a line's
 * costs have 1 to 6 of them, unforeseeably. */
CG_INLINE int cg_swar_digits(const char *p, uint64_t *v)
{
    const uint64_t hi = 0x8080808080808080ULL;
    uint64_t w, a, nd;
    int len;
    char c;
    memcpy(&w, p, 8);
    a = w ^ 0x3030303030303030ULL;   /* digits become 0..9 */
    /* the top bit of each byte that is not 0..9 */
    nd = (((a & 0x7F7F7F7F7F7F7F7FULL) + 0x7676767676767676ULL) | a) & hi;
    if (!nd)
        return 0;
    len = __builtin_ctzll(nd) >> 3;
    if (!len)
        return 0;
    c = p[len];
    if (c != ' ' && c != '\n' && c != '\t')
        return 0;
    /* the digits to the top bytes, the first the most significant */
    a <<= 64 - 8 * len;
    a = (a * 10 + (a >> 8)) & 0x00FF00FF00FF00FFULL;
    a = (a * 100 + (a >> 16)) & 0x0000FFFF0000FFFFULL;
    a = (a * 10000 + (a >> 32)) & 0x00000000FFFFFFFFULL;
    *v = a;
    return len;
}
#endif

/* The costs of the fast path at p, up to the line's '\n' (or end): at
 * most max, decimal, maybe negative, of at most 18 digits. Returns the
 * start of the next line, or NULL. */
CG_INLINE const char *cg_fast_costs(const char *p, const char *end,
                                    int64_t *cost, int max, int *ncost)
{
    int n = 0;
    for (;;) {
        uint64_t v = 0;
        const char *start;
        int neg;
        p = cg_skip_blanks(p, end);
        if (p == end || *p == '\n')
            break;
        if (n >= max)
            return NULL;
        /* one digit, then a blank or the line end: most costs (0 above
         * all, in profiles of many events) */
        if ((unsigned char)(*p - '0') < 10 && end - p > 1 &&
            (p[1] == ' ' || p[1] == '\n')) {
            cost[n++] = *p - '0';
            p++;
            continue;
        }
#ifdef CG_SWAR
        if (end - p >= 8) {
            int len = cg_swar_digits(p, &v);
            if (len) {
                cost[n++] = (int64_t)v;
                p += len;
                continue;
            }
        }
#endif
        neg = *p == '-';
        p += neg;
        start = p;
        while (p < end && (unsigned char)(*p - '0') < 10) {
            v = v * 10 + (uint64_t)(*p - '0');
            p++;
        }
        if (p == start || p - start > 18 || !cg_fast_end(p, end))
            return NULL;
        cost[n++] = neg ? -(int64_t)v : (int64_t)v;
    }
    *ncost = n;
    return p == end ? p : p + 1;
}

/* Position token (op, v) applied to base: 1 with *out set, or 0 (a
 * relative one out of range, or CG_OP_BAD). */
CG_INLINE int cg_pos_apply(int op, uint64_t v, uint64_t base, uint64_t *out)
{
    switch (op) {
    case CG_OP_SAME:
        v = base;
        break;
    case CG_OP_ABS:
        break;
    case CG_OP_ADD:
        if (v > UINT64_MAX - base)
            return 0;
        v += base;
        break;
    case CG_OP_SUB:
        if (v > base)
            return 0;
        v = base - v;
        break;
    default:
        return 0;
    }
    *out = v;
    return 1;
}

/* One position of the fast path at *pp, relative to base: 1 with *out
 * set and *pp past it, or 0 (a token cg_fast_pos does not take, or a
 * relative one out of range): the caller scans it with cg_scan_pos,
 * which also words the error. */
CG_INLINE int cg_fast_step(const char **pp, const char *end, uint64_t base,
                           uint64_t *out)
{
    uint64_t v;
    int op = cg_fast_pos(pp, end, &v);
    return cg_pos_apply(op, v, base, out);
}

/* The fast path of cg_scan_costs, for the common cost line: p starts it
 * (no blank before), and it ends at its '\n' (or at end), which this scan
 * finds itself: no separate search for the line end. Returns the start of
 * the next line, or NULL when the line has anything else than the tokens
 * of cg_fast_pos and cg_fast_costs ('\r', a long number, too many costs,
 * a relative position out of range): the caller then scans it with
 * cg_scan_line and cg_scan_costs, which also word the error. */
CG_INLINE const char *cg_scan_costs_fast(const char *p, const char *end,
                                         int npos, const uint64_t *base,
                                         uint64_t *pos, int64_t *cost,
                                         int max, int *ncost)
{
    int k;
    for (k = 0; k < npos; k++)
        if (!cg_fast_step(&p, end, base[k], &pos[k]))
            return NULL;
    return cg_fast_costs(p, end, cost, max, ncost);
}

/* The target subpositions of calls=/jump=/jcnd= at s: up to npos given
 * (Xdebug writes one more: ignored), relative to base; the instr and line
 * ones land in *addr / *line with flags CG_HAS_TADDR / CG_HAS_TLINE (of
 * cg_profile.h, passed in as has_addr, has_line). NULL on a bad one
 * (*why, *at set). */
CG_HIDDEN const char *cg_scan_target(const char *s, const char *e, int npos,
                                     const unsigned char *poskind,
                                     const uint64_t *base, uint64_t *addr,
                                     uint64_t *line, uint32_t *flags,
                                     uint32_t has_addr, uint32_t has_line,
                                     int *why, const char **at);

/* The counts of jump=COUNT or jcnd=: callgrind's FOLLOWED/EXECUTED or the
 * spec's EXECUTED FOLLOWED. Returns the rest of the line, or NULL (*why,
 * *at set; *second: the failure is about the second count). */
CG_HIDDEN const char *cg_scan_jump_counts(const char *s, const char *e,
                                          int cond, uint64_t *followed,
                                          uint64_t *executed, int *why,
                                          const char **at, int *second);

#endif
