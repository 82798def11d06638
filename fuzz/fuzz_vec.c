/* libFuzzer target for the vector paths of cost lines (cg_vec.h): every
 * line of the input, with 0 to 3 positions and 1 to 20 events, read by
 * both paths, and from every line, the lines a window reads with the same
 * layouts (cg_vec_window); and from every line, the lines of one cost
 * each that the window of one cost reads, with 1 or 2 positions. Where a
 * vector path reads a line, the scalar path (cg_fast_pos, cg_fast_costs)
 * must read it too, to the same end, with the same positions and costs;
 * where it does not, the scalar path decides. A difference aborts with
 * the line.
 *
 * The input (its first 16 KB: more lines checked per second) is followed
 * by 64 newlines, part of the text both paths see, so the vector path,
 * which reads 64 bytes at a time, reaches its last line. On a CPU without
 * the vector path (or under valgrind) it checks nothing. */
#include "cg_vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CG_VEC
static void differ(const char *line, const char *end, int npos, int nev,
                   const char *what)
{
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    fprintf(stderr,
            "fuzz_vec: the paths differ (%s) with %d positions, %d events "
            "on the line \"%.*s\"\n",
            what, npos, nev, (int)((nl ? nl : end) - line), line);
    abort();
}

CG_VEC_TARGET static void check_line(const char *p, const char *end,
                                     int npos, int nev)
{
    CgVecLine v;
    int64_t vc[16], cost[32];
    uint64_t val;
    const char *q = p, *next = cg_vec_cost_line(p, npos, nev, &v);
    int k, n;
    if (!next)
        return;
    for (k = 0; k < npos; k++) {
        int op = cg_fast_pos(&q, end, &val);
        if (op == CG_OP_BAD)
            differ(p, end, npos, nev, "a position the scalar path refuses");
        if (op != v.op[k] || (op != CG_OP_SAME && val != v.val[k]))
            differ(p, end, npos, nev, "a position's value");
    }
    q = cg_fast_costs(q, end, cost, nev < 32 ? nev : 32, &n);
    if (!q)
        differ(p, end, npos, nev, "costs the scalar path refuses");
    if (q != next)
        differ(p, end, npos, nev, "where the next line starts");
    if (n != v.ncost)
        differ(p, end, npos, nev, "the number of costs");
    _mm512_storeu_si512((void *)vc, v.c0);
    _mm512_storeu_si512((void *)(vc + 8), v.c1);
    for (k = 0; k < 16; k++) {
        if (k < n && (cost[k] != vc[k] || vc[k] > (int64_t)CG_VEC_MAX))
            differ(p, end, npos, nev, "a cost");
        if (k >= n && vc[k])
            differ(p, end, npos, nev, "a lane past the last cost");
    }
}

/* The loader's form (cg_vec_costs_fast, positions relative to a base):
 * as cg_scan_costs_fast where it reads the line, with bases at both ends
 * of the range so that steps leave it. */
CG_VEC_TARGET static void check_costs_fast(const char *p, const char *end,
                                           int npos, int nev)
{
    static const uint64_t bases[] = { 0, 5, 0x400000, UINT64_MAX - 3 };
    int b;
    for (b = 0; b < 4; b++) {
        uint64_t base[3], pv[3], ps[3];
        int64_t cv[16], cs[32];
        int nv, ns, k;
        const char *v, *q;
        for (k = 0; k < 3; k++)
            base[k] = bases[(b + k) % 4];
        if (!(v = cg_vec_costs_fast(p, npos, base, pv, cv, nev, &nv)))
            continue;
        q = cg_scan_costs_fast(p, end, npos, base, ps, cs, nev, &ns);
        if (!q || q != v || ns != nv)
            differ(p, end, npos, nev, "relative: the line or its end");
        for (k = 0; k < npos; k++)
            if (pv[k] != ps[k])
                differ(p, end, npos, nev, "relative: a position");
        for (k = 0; k < nv; k++)
            if (cv[k] != cs[k])
                differ(p, end, npos, nev, "relative: a cost");
    }
}

/* The lines of one cost each from p (npos 1 or 2) as the window path
 * reads them, line by line with the scalar path. */
CG_VEC_TARGET static void check_lines1(const char *p, const char *end,
                                       int npos)
{
    CgVecLines b;
    const char *q = p, *next = cg_vec_lines1(p, npos, &b);
    uint64_t sum = 0;
    int j, k;
    if (!next)
        return;
    if (b.nlines < 1)
        differ(p, end, npos, 1, "a window of no lines");
    for (j = 0; j < b.nlines; j++) {
        int64_t cost[2];
        uint64_t val;
        int n;
        for (k = 0; k < npos; k++) {
            int op = cg_fast_pos(&q, end, &val);
            int t = (npos + 1) * j + k;
            if (op == CG_OP_BAD)
                differ(p, end, npos, 1, "window: a position refused");
            if (op != cg_vec_op(b.first[t]) ||
                (op != CG_OP_SAME && val != (uint64_t)b.tok[t]))
                differ(p, end, npos, 1, "window: a position's value");
        }
        if (!(q = cg_fast_costs(q, end, cost, 1, &n)) || n != 1 ||
            cost[0] != b.tok[(npos + 1) * j + npos])
            differ(p, end, npos, 1, "window: a cost");
        sum += (uint64_t)cost[0];
    }
    if (q != next)
        differ(p, end, npos, 1, "window: where the next line starts");
    if (sum != b.sum)
        differ(p, end, npos, 1, "window: the sum of the costs");
}

/* The lines of any number of costs from p as the window path reads them
 * (cg_vec_window), line by line with the scalar path. */
CG_VEC_TARGET static void check_window(const char *p, const char *end,
                                       int npos, int nev)
{
    CgVecWin b;
    const char *q = p, *next = cg_vec_window(p, npos, nev, &b);
    int j, k;
    if (!next)
        return;
    if (b.nlines < 1)
        differ(p, end, npos, nev, "a window of no lines");
    for (j = 0; j < b.nlines; j++) {
        const int64_t *t = b.tok + b.tok0[j];
        const char *f = b.first + b.tok0[j];
        int64_t cost[32];
        uint64_t val;
        int n;
        for (k = 0; k < npos; k++) {
            int op = cg_fast_pos(&q, end, &val);
            if (op == CG_OP_BAD)
                differ(p, end, npos, nev, "window: a position refused");
            if (op != cg_vec_op(f[k]) ||
                (op != CG_OP_SAME && val != (uint64_t)t[k]))
                differ(p, end, npos, nev, "window: a position's value");
        }
        if (!(q = cg_fast_costs(q, end, cost, nev < 32 ? nev : 32, &n)) ||
            n != b.ncost[j])
            differ(p, end, npos, nev, "window: the costs of a line");
        for (k = 0; k < n; k++)
            if (cost[k] != t[npos + k] || cost[k] > (int64_t)CG_VEC_MAX)
                differ(p, end, npos, nev, "window: a cost");
    }
    if (q != next)
        differ(p, end, npos, nev, "window: where the next line starts");
}
#endif

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
#ifdef CG_VEC
    static const int events[] = { 1, 4, 13, 20 };
    char *text;
    const char *p, *end;
    if (!cg_vec_usable())
        return 0;
    if (size > 16384)
        size = 16384;
    text = malloc(size + 64);
    if (!text)
        return 0;
    memcpy(text, data, size);
    memset(text + size, '\n', 64);
    end = text + size + 64;
    for (p = text; end - p >= 64;) {
        const char *nl;
        int npos, e;
        for (npos = 0; npos <= 3; npos++)
            for (e = 0; e < 4; e++) {
                check_line(p, end, npos, events[e]);
                check_costs_fast(p, end, npos, events[e]);
                check_window(p, end, npos, events[e]);
            }
        check_lines1(p, end, 1);
        check_lines1(p, end, 2);
        nl = memchr(p, '\n', (size_t)(end - p));
        p = nl + 1;
    }
    free(text);
#else
    (void)data;
    (void)size;
#endif
    return 0;
}
