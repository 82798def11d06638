/* Cost lines read 64 bytes at a time with AVX-512 (VBMI2), on CPUs that
 * have it (cg_vec_usable): masks of the bytes' kinds (blank, digit, sign,
 * newline) give the tokens, and the tokens' digits are gathered into
 * 8-byte lanes and converted eight at a time (multiply-add: pairs, fours,
 * eights), where the scalar path (cg_fast_pos, cg_fast_costs) takes a
 * token at a time with a branch on its length. Three forms: a line at a
 * time, all its costs at once (cg_vec_cost_line, as cg_vec_costs_fast:
 * the loader's own lines of many events); a window of lines at a time
 * (cg_vec_window: the worker's runs of many events, a window holding
 * three to four of their lines); and a window of lines of one cost each
 * (cg_vec_lines1: the worker's runs of one event, summed in the window).
 *
 * They read a subset of what the scalar path reads, with the same values:
 * lines of at most 63 bytes, tokens of at most 8 bytes separated by one
 * space, positions '*', +N, -N or N (no 0x-hex), costs N. For anything
 * else they return NULL (or stop before the line) and the caller reads
 * the line with the scalar path, which accepts it or not and words the
 * error. fuzz/fuzz_vec.c checks that on random lines. */
#ifndef CG_VEC_H
#define CG_VEC_H

#include "cg_scan.h"

#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__) && \
    (defined(__clang__) || __GNUC__ >= 8)
#define CG_VEC 1
#endif

/* The fewest event columns for which the line-at-a-time form pays: lines
 * of two or three costs are read as fast a token at a time (and lines of
 * one cost take the window form). */
#define CG_VEC_MIN_EVENTS 4

/* Can this CPU (and OS) run the vector paths? Checked once; always 0
 * without CG_VEC. Under valgrind, which does not emulate AVX-512, 0; with
 * CALLGRIND_NO_VECTOR set (not empty, not "0") in the environment, 0. */
CG_HIDDEN int cg_vec_usable(void);

#ifdef CG_VEC
#include <immintrin.h>

#define CG_VEC_TARGET                                                   \
    __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,"   \
                          "bmi,bmi2,popcnt")))

/* The values of tokens base..base+7 (their ends and starts: byte vectors
 * of positions in the line, by token; dv: the line's digit values, 0 for
 * any other byte), as eight 64-bit lanes, 0 past the last token. Each
 * lane gathers the 8 bytes before its token's end, those before its start
 * zeroed (a sign is not a digit: it reads as a leading zero). */
CG_VEC_TARGET static inline __m512i cg_vec_values(__m512i ends,
                                                  __m512i starts,
                                                  __m512i dv, int base)
{
    /* lane k's 8 bytes all pick token base + k */
    const __m512i lane = _mm512_set_epi64(
        0x0707070707070707LL, 0x0606060606060606LL, 0x0505050505050505LL,
        0x0404040404040404LL, 0x0303030303030303LL, 0x0202020202020202LL,
        0x0101010101010101LL, 0);
    /* byte i of a lane reads the byte 8 - i before the token's end */
    const __m512i back = _mm512_set1_epi64((long long)0xFFFEFDFCFBFAF9F8ULL);
    __m512i pick = _mm512_add_epi8(lane, _mm512_set1_epi8((char)base));
    __m512i e = _mm512_permutexvar_epi8(pick, ends);
    __m512i s = _mm512_permutexvar_epi8(pick, starts);
    __m512i idx = _mm512_add_epi8(e, back);
    __m512i d = _mm512_maskz_permutexvar_epi8(
        _mm512_cmpge_epi8_mask(idx, s), idx, dv);
    /* the first byte is the most significant: 10a+b, 100ab+cd, ... */
    __m512i d2 = _mm512_maddubs_epi16(d, _mm512_set1_epi16(0x010A));
    __m512i d4 = _mm512_madd_epi16(d2, _mm512_set1_epi32(0x00010064));
    return _mm512_add_epi64(_mm512_mul_epu32(d4, _mm512_set1_epi64(10000)),
                            _mm512_srli_epi64(d4, 32));
}

/* Bytes 0, 1, ..., 63: positions in a line, compressed by a mask. */
CG_VEC_TARGET static inline __m512i cg_vec_iota(void)
{
    return _mm512_set_epi8(
        63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47,
        46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30,
        29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13,
        12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

/* What a position token starting with c says (the vector path has
 * checked c is one of these). */
static inline int cg_vec_op(char c)
{
    return c == '*' ? CG_OP_SAME : c == '+' ? CG_OP_ADD :
           c == '-' ? CG_OP_SUB : CG_OP_ABS;
}

/* The largest cost the vector path reads: 8 digits. */
#define CG_VEC_MAX 99999999u

/* A cost line as the vector path reads it. */
typedef struct CgVecLine {
    __m512i c0, c1;              /* costs 0-7 and 8-15, 0 past the last */
    int ncost;
    int op[CG_MAX_POSITIONS];    /* CG_OP_* */
    uint64_t val[CG_MAX_POSITIONS];
} CgVecLine;

/* The cost line at p (which has 64 bytes readable) with npos positions
 * and at most nev costs, into *ln; the start of the next line. NULL: read
 * it with the scalar path. */
CG_VEC_TARGET CG_INLINE const char *
cg_vec_cost_line(const char *p, int npos, int nev, CgVecLine *ln)
{
    const __m512i iota = cg_vec_iota();
    __m512i v = _mm512_loadu_si512((const void *)p);
    __m512i d = _mm512_sub_epi8(v, _mm512_set1_epi8('0'));
    uint64_t nl = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\n'));
    uint64_t line, sp, dg, ts, te, star, sign, first_cost, t;
    __m512i ends, starts, t0, t1, up;
    unsigned e;
    int ntok, n, k;
    if (!nl)
        return NULL;
    e = (unsigned)_tzcnt_u64(nl);
    line = _bzhi_u64(~0ULL, e);
    sp = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(' ')) & line;
    dg = _mm512_cmplt_epu8_mask(d, _mm512_set1_epi8(10)) & line;
    star = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('*')) & line;
    sign = (_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('+')) |
            _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('-'))) & line;
    ts = line & ~sp & ((sp << 1) | 1);        /* token starts */
    te = sp | (1ULL << e);                    /* token ends (one past) */
    ntok = (int)_mm_popcnt_u64(ts);
    n = ntok - npos;
    /* where the first cost starts, 0 without costs */
    first_cost = _pdep_u64(1ULL << npos, ts);
    /* one space between tokens (one may end the line, as callgrind
     * writes a jump's source line); '*', '+' and '-' only starting a
     * position, '*' alone, a sign before a digit */
    if (!e || (sp & ((sp >> 1) | 1)) || n < 0 || n > nev || n > 16 ||
        (line & ~sp & ~dg & ~((star | sign) & ts & (first_cost - 1))) ||
        ((star << 1) & ~te) || ((sign << 1) & ~dg))
        return NULL;
    ends = _mm512_maskz_compress_epi8(te, iota);
    starts = _mm512_maskz_compress_epi8(ts, iota);
    /* tokens of at most 8 bytes */
    if (_mm512_cmpgt_epu8_mask(_mm512_sub_epi8(ends, starts),
                               _mm512_set1_epi8(8)) &
        _bzhi_u64(~0ULL, (unsigned)ntok))
        return NULL;
    d = _mm512_maskz_mov_epi8(dg, d);
    /* tokens 0-7 and 8-15 (16-23 only when needed), positions and costs
     * alike: the costs are lanes npos.. of them */
    t0 = cg_vec_values(ends, starts, d, 0);
    t1 = ntok > 8 ? cg_vec_values(ends, starts, d, 8) : _mm512_setzero_si512();
    up = _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                          _mm512_set1_epi64(npos));
    ln->c0 = _mm512_maskz_permutex2var_epi64(
        (__mmask8)_bzhi_u32(0xFF, (unsigned)n), t0, up, t1);
    ln->c1 = n > 8 ? _mm512_maskz_permutex2var_epi64(
                         (__mmask8)_bzhi_u32(0xFF, (unsigned)n - 8), t1, up,
                         ntok > 16 ? cg_vec_values(ends, starts, d, 16)
                                   : _mm512_setzero_si512())
                   : _mm512_setzero_si512();
    ln->ncost = n;
    for (k = 0, t = ts; k < npos; k++, t &= t - 1) {
        ln->op[k] = cg_vec_op(p[_tzcnt_u64(t)]);
        ln->val[k] = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(
            _mm512_permutexvar_epi64(_mm512_set1_epi64(k), t0)));
    }
    return p + e + 1;
}

/* cg_scan_costs_fast with the vector path: the positions relative to
 * base into pos, the costs into cost (room for 16 at least); the start of
 * the next line, or NULL (read it with the scalar path: it may be a line
 * this path does not read, or a position out of range). */
CG_VEC_TARGET static inline const char *
cg_vec_costs_fast(const char *p, int npos, const uint64_t *base,
                  uint64_t *pos, int64_t *cost, int max, int *ncost)
{
    CgVecLine ln;
    const char *next = cg_vec_cost_line(p, npos, max, &ln);
    int k;
    if (!next)
        return NULL;
    for (k = 0; k < npos; k++)
        if (!cg_pos_apply(ln.op[k], ln.val[k], base[k], &pos[k]))
            return NULL;
    _mm512_storeu_si512((void *)cost, ln.c0);
    if (ln.ncost > 8)
        _mm512_storeu_si512((void *)(cost + 8), ln.c1);
    *ncost = ln.ncost;
    return next;
}

/* A 64-byte window of whole lines, as both window forms (cg_vec_window,
 * cg_vec_lines1) first take it: its tokens, and the first byte that makes
 * its line one they do not read. */
typedef struct CgVecMasks {
    __m512i v;                   /* the bytes */
    __m512i d;                   /* their digit values, 0 for others */
    __m512i ends, starts, first; /* by token: where it ends and starts,
                                    its first byte */
    uint64_t nl, ls, ts;         /* newlines, line starts, token starts,
                                    in whole lines */
    int ntok;
    unsigned cut;                /* 64: none */
} CgVecMasks;

/* The window at p (64 bytes readable) into *m: 0 when it holds no whole
 * line. */
CG_VEC_TARGET CG_INLINE int cg_vec_masks(const char *p, CgVecMasks *m)
{
    __m512i v = _mm512_loadu_si512((const void *)p);
    __m512i d = _mm512_sub_epi8(v, _mm512_set1_epi8('0'));
    uint64_t nl = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\n'));
    uint64_t w, sp, dg, star, sign, ls, ts, te, bad;
    if (!nl)
        return 0;
    w = _bzhi_u64(~0ULL, 64 - (unsigned)__builtin_clzll(nl)); /* whole lines */
    nl &= w;
    sp = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(' ')) & w;
    dg = _mm512_cmplt_epu8_mask(d, _mm512_set1_epi8(10)) & w;
    star = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('*')) & w;
    sign = (_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('+')) |
            _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('-'))) & w;
    ls = ((nl << 1) | 1) & w;                 /* line starts */
    ts = w & ~sp & ~nl & ((sp << 1) | ls);    /* token starts */
    te = sp | nl;                             /* token ends */
    /* bytes that make their line one the window forms do not read: a
     * space at a line's start or end or after another, an empty line, a
     * byte but a digit, space or newline that does not start a token
     * ('*', '+' or '-'), '*' not alone, a sign not before a digit */
    bad = (sp & ((sp >> 1) | (nl >> 1) | ls)) | (ls & nl) |
          (w & ~sp & ~nl & ~dg & ~((star | sign) & ts)) |
          ((star << 1) & ~te & w) | ((sign << 1) & ~dg & w);
    m->v = v;
    m->d = _mm512_maskz_mov_epi8(dg, d);
    m->ends = _mm512_maskz_compress_epi8(te, cg_vec_iota());
    m->starts = _mm512_maskz_compress_epi8(ts, cg_vec_iota());
    m->first = _mm512_permutexvar_epi8(m->starts, v);
    m->nl = nl;
    m->ls = ls;
    m->ts = ts;
    m->ntok = (int)_mm_popcnt_u64(ts);
    m->cut = bad ? (unsigned)_tzcnt_u64(bad) : 64;
    return 1;
}

/* Token lanes of m the form refuses, and tokens of more than 8 bytes:
 * the line of the first of them is cut too. Then only the lines before
 * the cut are kept (m->nl, m->ntok): 0 when none is left. */
CG_VEC_TARGET CG_INLINE int cg_vec_cut(CgVecMasks *m, uint64_t lanes)
{
    lanes |= _mm512_cmpgt_epu8_mask(_mm512_sub_epi8(m->ends, m->starts),
                                    _mm512_set1_epi8(8));
    lanes &= _bzhi_u64(~0ULL, (unsigned)m->ntok);
    if (lanes) {
        /* the token's first byte is in the line to drop */
        unsigned at = (unsigned)(unsigned char)_mm_cvtsi128_si32(
            _mm512_castsi512_si128(_mm512_permutexvar_epi8(
                _mm512_set1_epi8((char)_tzcnt_u64(lanes)), m->starts)));
        if (at < m->cut)
            m->cut = at;
    }
    if (m->cut < 64) {
        /* the whole lines before the one holding byte cut */
        m->nl &= _bzhi_u64(~0ULL, m->cut);
        if (!m->nl)
            return 0;
        m->ntok = (int)_mm_popcnt_u64(
            m->ts & _bzhi_u64(~0ULL, 64 - (unsigned)__builtin_clzll(m->nl)));
    }
    return 1;
}

/* The digit tokens' lanes of m: those whose first byte is a digit. */
CG_VEC_TARGET CG_INLINE uint64_t cg_vec_digit_tokens(const CgVecMasks *m)
{
    return _mm512_cmplt_epu8_mask(
        _mm512_sub_epi8(m->first, _mm512_set1_epi8('0')),
        _mm512_set1_epi8(10));
}

/* Lines of any number of costs, read a 64-byte window at a time: every
 * complete line in the window that the checks of cg_vec_cost_line pass
 * (but a space ending the line), up to the first that fails. */
typedef struct CgVecWin {
    int nlines;                  /* lines read */
    unsigned char tok0[32];      /* line j's first token */
    unsigned char ncost[32];     /* and its number of costs */
    int64_t tok[48];             /* token values (room for a read of 16
                                    from the last line's costs) */
    char first[64];              /* each token's first byte */
} CgVecWin;

/* The cost lines from p on (64 bytes readable) with npos positions and
 * at most nev costs each, as far as the 64 bytes hold whole lines that
 * pass, into *b; the start of the line after them. NULL: not even the
 * first line (read it with the scalar path). Where cg_vec_cost_line
 * takes a line at a time, this takes the masks, the tokens and their
 * values once for the window, and only its lines' bounds one by one. */
CG_VEC_TARGET CG_INLINE const char *
cg_vec_window(const char *p, int npos, int nev, CgVecWin *b)
{
    CgVecMasks m;
    uint64_t lines, pos, t;
    int g, k, n = 0;
    if (!cg_vec_masks(p, &m))
        return NULL;
    /* by token: those starting a line, and the positions (the first npos
     * of a line: a line of fewer is refused below); a cost must start
     * with a digit */
    lines = _pext_u64(m.ls, m.ts);
    for (pos = 0, k = 0; k < npos; k++)
        pos |= lines << k;
    if (!cg_vec_cut(&m, ~pos & ~cg_vec_digit_tokens(&m)))
        return NULL;
    lines &= _bzhi_u64(~0ULL, (unsigned)m.ntok);
    /* each line's tokens: from its first to the next line's */
    for (t = lines; t; t &= t - 1) {
        int a = (int)_tzcnt_u64(t), c;
        uint64_t rest = t & (t - 1);
        c = (rest ? (int)_tzcnt_u64(rest) : m.ntok) - a - npos;
        if (c < 0 || c > nev || c > 16)
            break;
        b->tok0[n] = (unsigned char)a;
        b->ncost[n++] = (unsigned char)c;
    }
    if (!n)
        return NULL;
    if (n < (int)_mm_popcnt_u64(lines))
        m.ntok = (int)_tzcnt_u64(_pdep_u64(1ULL << n, lines));
    b->nlines = n;
    for (g = 0; g * 8 < m.ntok; g++)
        _mm512_storeu_si512((void *)(b->tok + 8 * g),
                            cg_vec_values(m.ends, m.starts, m.d, 8 * g));
    _mm512_storeu_si512((void *)b->first, m.first);
    /* past the '\n' of line n */
    return p + _tzcnt_u64(_pdep_u64(1ULL << (n - 1), m.nl)) + 1;
}

/* Lines of one cost each, read a 64-byte window at a time: every
 * complete line in the window that the checks pass, up to the first that
 * fails (see cg_vec_lines1). */
typedef struct CgVecLines {
    int nlines;                  /* lines read */
    uint64_t sum;                /* of their costs */
    int64_t tok[32];             /* token values: line j's position k is
                                    token (npos + 1) * j + k */
    char first[64];              /* each token's first byte */
} CgVecLines;

/* The lines from p on (64 bytes readable) with npos (1 or 2) positions
 * and exactly one cost each, as far as the 64 bytes hold whole lines and
 * each is one the per-line vector path would read, into *b; the start of
 * the line after them. NULL: not even the first line (read it with the
 * scalar path). */
CG_VEC_TARGET static inline const char *
cg_vec_lines1(const char *p, int npos, CgVecLines *b)
{
    /* token k ends its line when k % T == T - 1, T = npos + 1 */
    static const uint32_t ends_line[3] = { 0, 0xAAAAAAAAu, 0x24924924u };
    CgVecMasks m;
    uint64_t costs;
    __m512i acc;
    int g;
    if (npos < 1 || npos > 2 || !cg_vec_masks(p, &m))
        return NULL;
    /* tokens (at most 32 in 64 bytes) of which the first wrong one: one
     * that ends its line where it should not or the reverse, a cost not
     * starting with a digit */
    costs = ends_line[npos] & _bzhi_u64(~0ULL, (unsigned)m.ntok);
    if (!cg_vec_cut(&m, (_mm512_cmpeq_epi8_mask(
                             _mm512_permutexvar_epi8(m.ends, m.v),
                             _mm512_set1_epi8('\n')) ^ costs) |
                            (costs & ~cg_vec_digit_tokens(&m))))
        return NULL;
    b->nlines = (int)_mm_popcnt_u64(m.nl);
    acc = _mm512_setzero_si512();
    costs = ends_line[npos] & _bzhi_u64(~0ULL, (unsigned)m.ntok);
    for (g = 0; g * 8 < m.ntok; g++) {
        __m512i t = cg_vec_values(m.ends, m.starts, m.d, 8 * g);
        _mm512_storeu_si512((void *)(b->tok + 8 * g), t);
        acc = _mm512_add_epi64(
            acc, _mm512_maskz_mov_epi64((__mmask8)(costs >> (8 * g)), t));
    }
    b->sum = (uint64_t)_mm512_reduce_add_epi64(acc);
    _mm512_storeu_si512((void *)b->first, m.first);
    return p + (64 - __builtin_clzll(m.nl));
}
#endif

#endif
