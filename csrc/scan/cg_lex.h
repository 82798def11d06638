/* Number and position scanning shared by the loader and the cursor.
 * Hand-written: no locale, no strtol, overflow checked. A token ends at a
 * blank or at the end of the line. */
#ifndef CG_LEX_H
#define CG_LEX_H

#include "cg_common.h"

/* The scanners run for every number of a file: inline them. */
#if defined(__GNUC__) || defined(__clang__)
#define CG_INLINE static inline __attribute__((always_inline))
#else
#define CG_INLINE static inline
#endif

/* Why a scan failed. */
enum {
    CG_LEX_BADNUM = 1,     /* not a number */
    CG_LEX_OVERFLOW = 2,   /* does not fit 64 bits */
    CG_LEX_BELOW = 3,      /* relative position below 0 */
    CG_LEX_RELCOST = 4     /* '+N' or '*' where a cost belongs */
};

static inline int cg_is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static inline const char *cg_skip_blanks(const char *s, const char *e)
{
    while (s < e && cg_is_blank(*s))
        s++;
    return s;
}

static inline const char *cg_token_end(const char *s, const char *e)
{
    while (s < e && !cg_is_blank(*s))
        s++;
    return s;
}

/* Each byte's value as a hex digit, -1 for the others (cg_scan.c): one
 * load per digit of an address, not three range tests. */
CG_HIDDEN extern const signed char cg_hex_digit[256];

static inline int cg_hexval(char c)
{
    return cg_hex_digit[(unsigned char)c];
}

/* Scans a decimal or 0x-hex unsigned number at s that ends at a blank, at
 * the end of the line or at the character stop. Returns the end of the
 * number, or NULL with *why set. */
CG_INLINE const char *cg_scan_u64_to(const char *s, const char *e,
                                         uint64_t *out, int *why, char stop)
{
    uint64_t v = 0;
    const char *start;
    if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        int d;
        s += 2;
        start = s;
        while (s < e && (d = cg_hexval(*s)) >= 0) {
            if (v >> 60) {
                *why = CG_LEX_OVERFLOW;
                return NULL;
            }
            v = (v << 4) | (uint64_t)d;
            s++;
        }
    } else {
        start = s;
        /* up to 19 digits cannot overflow: no check per digit */
        while (s < e && (unsigned char)(*s - '0') < 10) {
            v = v * 10 + (uint64_t)(*s - '0');
            s++;
        }
        if (s - start > 19) {
            v = 0;
            for (s = start; s < e && *s >= '0' && *s <= '9'; s++) {
                unsigned d = (unsigned)(*s - '0');
                if (v >= 1844674407370955161ULL &&
                    (v > 1844674407370955161ULL || d > 5)) {
                    *why = CG_LEX_OVERFLOW;
                    return NULL;
                }
                v = v * 10 + d;
            }
        }
    }
    if (s == start || (s < e && !cg_is_blank(*s) && *s != stop)) {
        *why = CG_LEX_BADNUM;
        return NULL;
    }
    *out = v;
    return s;
}

CG_INLINE const char *cg_scan_u64(const char *s, const char *e,
                                      uint64_t *out, int *why)
{
    return cg_scan_u64_to(s, e, out, why, ' ');
}

/* Scans a subposition: absolute, +N, -N or '*', relative to base. */
CG_INLINE const char *cg_scan_pos(const char *s, const char *e,
                                      uint64_t base, uint64_t *out, int *why)
{
    uint64_t v;
    switch (*s) {
    case '*':
        if (s + 1 < e && !cg_is_blank(s[1])) {
            *why = CG_LEX_BADNUM;
            return NULL;
        }
        *out = base;
        return s + 1;
    case '+':
        if (!(s = cg_scan_u64(s + 1, e, &v, why)))
            return NULL;
        if (v > UINT64_MAX - base) {
            *why = CG_LEX_OVERFLOW;
            return NULL;
        }
        *out = base + v;
        return s;
    case '-':
        if (!(s = cg_scan_u64(s + 1, e, &v, why)))
            return NULL;
        if (v > base) {
            *why = CG_LEX_BELOW;
            return NULL;
        }
        *out = base - v;
        return s;
    default:
        return cg_scan_u64(s, e, out, why);
    }
}

/* Scans a signed cost (decimal or 0x hex, optional '-'). A cost from 2^63
 * to 2^64-1 is a 64-bit counter written unsigned: it keeps its bits
 * (docs/format.md, "Cost lines"). */
CG_INLINE const char *cg_scan_cost(const char *s, const char *e,
                                       int64_t *out, int *why)
{
    uint64_t v;
    int neg = 0;
    if (*s == '+' || *s == '*') {
        *why = CG_LEX_RELCOST;
        return NULL;
    }
    if (*s == '-') {
        neg = 1;
        s++;
    }
    if (!(s = cg_scan_u64(s, e, &v, why)))
        return NULL;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) {
            *why = CG_LEX_OVERFLOW;
            return NULL;
        }
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else if (v > (uint64_t)INT64_MAX) {
        *out = (int64_t)(v - (uint64_t)INT64_MAX - 1) + INT64_MIN;
    } else {
        *out = (int64_t)v;
    }
    return s;
}

#endif
