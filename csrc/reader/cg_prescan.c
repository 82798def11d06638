/* The worker thread of a load (cg_prescan.h). It runs ahead of the loader
 * by at most CG_RING chunks; each chunk's segments are built in a slot of
 * the ring and handed over under the mutex. */
#include "cg_prescan.h"
#include "cg_scan.h"
#include "cg_source.h"
#include "cg_vec.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Chunks scanned ahead and not yet used, at most: the memory a load
 * takes on top of the model stays a few chunks' worth (a slot holds its
 * chunk's runs only: some 80 KB for 128 KB of text). 8
 * rather than 4: with the vector paths the worker outruns the loader,
 * and a deeper ring evens out chunks of many calls, slow for the loader,
 * against chunks of long runs, slow for the worker (median load 3-5%
 * faster, measured). */
#define CG_RING 8

/* The positions and events columns a chunk is scanned with. */
typedef struct Layout {
    int npos, nev;
    int vec;                     /* the vector paths may be used (which
                                    one, the layout says: scan_vec) */
    int moving;                  /* a jump's source line moves the
                                    positions (CG_MOVING_BASE) */
} Layout;

typedef struct Slot {
    CgChunk chunk;
    CgSeg *segs;
    size_t nsegs, segs_cap;
    int64_t *sums;
    size_t nsums, sums_cap;
    CgRunPos *pos;
    size_t npos, pos_cap;
    int failed;                  /* out of memory: the loader reads it */
    size_t ready;                /* the chunk scanned into it, 0: none */
} Slot;

struct CgPrescan {
    const char *buf;
    size_t len;
    size_t chunk;
    const char **bounds;         /* nchunks + 1 line starts: the chunks'
                                    starts, then the text's end */
    size_t nchunks;              /* known: their starts and ends */
    int whole;                   /* every chunk is known */
    /* a text read in part (cg_source.h): the worker reads the rest
     * first, and finds the chunks in what it has read */
    CgSource *src;
    size_t nstarts;              /* chunk starts found (the worker's) */
    int read_failed;             /* read_err says why */
    CgError read_err;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t claimed;              /* chunks below this are the worker's or
                                    the loader's */
    size_t released;             /* chunks below this are used */
    int stop;
    int steal;                   /* the loader may take unstarted chunks,
                                    and scan one ahead while it waits */
    Layout lay;                  /* the layout last written (worker) */
    Slot slot[CG_RING];
    Slot own;                    /* a chunk the loader scanned ahead */
    size_t own_chunk;            /* which, 0: none */
};

/* ---- the layout: positions: and events: lines ---- */

static int count_tokens(const char *s, const char *e)
{
    int n = 0;
    for (s = cg_skip_blanks(s, e); s < e; s = cg_skip_blanks(s, e)) {
        s = cg_token_end(s, e);
        n++;
    }
    return n;
}

/* A line that is not a cost line: follows positions: and events:. */
static void layout_line(Layout *s, const CgRec *r)
{
    if (r->kind == CG_K_POSITIONS) {
        int n = count_tokens(r->val, r->e);
        s->npos = n <= CG_MAX_POSITIONS ? n : 0;
    } else if (r->kind == CG_K_EVENTS) {
        int n = count_tokens(r->val, r->e);
        s->nev = n <= CG_MAX_EVENTS ? n : 0;
    }
}

/* The line at p, which is not scanned further: the start of the next
 * line. Follows positions: and events: lines. */
static const char *other_line(Layout *s, const char *p, const char *end)
{
    const char *nl;
    if (*p == 'p' || *p == 'e') {
        CgRec r;
        cg_scan_line(p, end, &r);
        layout_line(s, &r);
        return r.next;
    }
    nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

/* ---- one chunk ---- */

typedef struct Run {
    size_t seg;                  /* its entry in segs */
    int doubt;                   /* read its lines instead */
    uint64_t bound;              /* every cost of the run is at most this
                                    (an OR of them; a negative one sets
                                    the top bit) */
    size_t sums, pos;            /* offsets into the slot's pools */
} Run;

/* A line of the fast path: its position tokens, and costs. */
typedef struct Line {
    int op[CG_MAX_POSITIONS];
    uint64_t val[CG_MAX_POSITIONS];
    int64_t cost[CG_MAX_EVENTS];
    int ncost;
} Line;

/* A position token (op, v) at column p of run r. move: a cost line's,
 * which the position follows; else a jump's target, which only has to
 * stay in range. (Inline, as add_line and scan_cost: once per line.) */
CG_INLINE void step(CgRunPos *p, int op, uint64_t v, Run *r, int move)
{
    int64_t d = (int64_t)p->v;
    switch (op) {
    case CG_OP_ABS:
        if (move) {
            p->absolute = 1;
            p->v = v;
        }
        break;
    case CG_OP_ADD:
        if (p->absolute) {
            if (v > UINT64_MAX - p->v)
                r->doubt = 1;
            else if (move)
                p->v += v;
        } else if (v > ((uint64_t)1 << 62) ||
                   (d += (int64_t)v) > ((int64_t)1 << 62)) {
            r->doubt = 1;
        } else {
            if (move)
                p->v = (uint64_t)d;
            if (d > p->hi)
                p->hi = d;
        }
        break;
    case CG_OP_SUB:
        if (p->absolute) {
            if (v > p->v)
                r->doubt = 1;
            else if (move)
                p->v -= v;
        } else if (v > ((uint64_t)1 << 62) ||
                   (d -= (int64_t)v) < -((int64_t)1 << 62)) {
            r->doubt = 1;
        } else {
            if (move)
                p->v = (uint64_t)d;
            if (d < p->lo)
                p->lo = d;
        }
        break;
    default:                     /* CG_OP_SAME */
        break;
    }
}

/* Adds one scanned cost line to the run r of slot sl. */
CG_INLINE void add_line(const Layout *s, Slot *sl, Run *r, const Line *ln)
{
    CgSeg *g = &sl->segs[r->seg];
    int64_t *sum = sl->sums + r->sums;
    CgRunPos *pos = s->npos ? sl->pos + r->pos : NULL;
    int j, k;
    uint64_t bound = 0;
    /* summed mod 2^64; end_run sees from `bound` whether that was exact */
    for (j = 0; j < ln->ncost; j++) {
        sum[j] = (int64_t)((uint64_t)sum[j] + (uint64_t)ln->cost[j]);
        bound |= (uint64_t)ln->cost[j];
    }
    r->bound |= bound;
    if (ln->ncost > g->ncost)
        g->ncost = ln->ncost;
    for (k = 0; k < s->npos; k++)
        step(&pos[k], ln->op[k], ln->val[k], r, 1);
    g->nlines++;
}

/* The cost line of the fast path at p into ln: the start of the next
 * line, or NULL. */
CG_INLINE const char *scan_cost(const Layout *s, const char *p,
                                const char *end, Line *ln)
{
    int k;
    for (k = 0; k < s->npos; k++)
        if ((ln->op[k] = cg_fast_pos(&p, end, &ln->val[k])) == CG_OP_BAD)
            return NULL;
    return cg_fast_costs(p, end, ln->cost, s->nev, &ln->ncost);
}

#ifdef CG_VEC
/* The cost lines from p on that the vector path reads, added to run r
 * (begun): their costs summed in registers, added to the run's sums at
 * the end. Returns the start of the first line it did not read. */
CG_VEC_TARGET static const char *scan_costs_vec(const Layout *s, Slot *sl,
                                                Run *r, const char *p,
                                                const char *end)
{
    CgSeg *g = &sl->segs[r->seg];
    CgRunPos *pos = s->npos ? sl->pos + r->pos : NULL;
    __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0;
    uint64_t lines = 0;
    int widest = g->ncost, k;
    while (end - p >= 64 && cg_is_cost_start(*p)) {
        CgVecWin b;
        const char *next = cg_vec_window(p, s->npos, s->nev, &b);
        int j;
        if (!next)
            break;
        for (j = 0; j < b.nlines; j++) {
            const int64_t *t = b.tok + b.tok0[j];
            const char *f = b.first + b.tok0[j];
            int n = b.ncost[j];
            for (k = 0; k < s->npos; k++)
                step(&pos[k], cg_vec_op(f[k]), (uint64_t)t[k], r, 1);
            t += s->npos;
            acc0 = _mm512_add_epi64(
                acc0, _mm512_maskz_loadu_epi64(
                          (__mmask8)_bzhi_u32(0xFF, (unsigned)n), t));
            if (n > 8)
                acc1 = _mm512_add_epi64(
                    acc1, _mm512_maskz_loadu_epi64(
                              (__mmask8)_bzhi_u32(0xFF, (unsigned)n - 8),
                              t + 8));
            if (n > widest)
                widest = n;
        }
        lines += (uint64_t)b.nlines;
        p = next;
    }
    if (lines) {
        int64_t *sum = sl->sums + r->sums;
        __mmask8 m = (__mmask8)_bzhi_u32(0xFF, (unsigned)s->nev);
        _mm512_mask_storeu_epi64(
            sum, m, _mm512_add_epi64(_mm512_maskz_loadu_epi64(m, sum), acc0));
        if (s->nev > 8) {
            m = (__mmask8)_bzhi_u32(0xFF, (unsigned)s->nev - 8);
            _mm512_mask_storeu_epi64(
                sum + 8, m,
                _mm512_add_epi64(_mm512_maskz_loadu_epi64(m, sum + 8), acc1));
        }
        /* every cost it read is below CG_VEC_MAX (end_run's bound) */
        r->bound |= CG_VEC_MAX;
        g->ncost = widest;
        g->nlines += lines;
        g->vlines += lines;
    }
    return p;
}

/* The same for lines of one cost each (one event, one or two positions),
 * read a window of lines at a time. */
CG_VEC_TARGET static const char *scan_lines1_vec(const Layout *s, Slot *sl,
                                                 Run *r, const char *p,
                                                 const char *end)
{
    CgSeg *g = &sl->segs[r->seg];
    CgRunPos *pos = sl->pos + r->pos;
    const int T = s->npos + 1;
    uint64_t lines = 0, sum = 0;
    while (end - p >= 64 && cg_is_cost_start(*p)) {
        CgVecLines b;
        const char *next = cg_vec_lines1(p, s->npos, &b);
        int j, k;
        if (!next)
            break;
        for (j = 0; j < b.nlines; j++)
            for (k = 0; k < s->npos; k++)
                step(&pos[k], cg_vec_op(b.first[T * j + k]),
                     (uint64_t)b.tok[T * j + k], r, 1);
        sum += b.sum;
        lines += (uint64_t)b.nlines;
        p = next;
    }
    if (lines) {
        sl->sums[r->sums] = (int64_t)((uint64_t)sl->sums[r->sums] + sum);
        r->bound |= CG_VEC_MAX;
        if (g->ncost < 1)
            g->ncost = 1;
        g->nlines += lines;
        g->vlines += lines;
    }
    return p;
}

/* The cost lines from p on that a vector path reads for this layout,
 * added to run r: the start of the first line it did not read (p: none). */
static const char *scan_vec(const Layout *s, Slot *sl, Run *r,
                            const char *p, const char *end)
{
    if (s->nev >= CG_VEC_MIN_EVENTS)
        return scan_costs_vec(s, sl, r, p, end);
    if (s->nev == 1 && (s->npos == 1 || s->npos == 2))
        return scan_lines1_vec(s, sl, r, p, end);
    return p;
}
#endif

/* A count of a jump line's fast path at p: decimal, then `stop` ('/') or
 * else a blank or the line end. Past it, or NULL. */
static const char *jump_count(const char *p, const char *end, char stop)
{
    const char *start = p;
    while (p < end && (unsigned char)(*p - '0') < 10)
        p++;
    if (p == start || p - start > 18 || p == end)
        return NULL;
    if (stop)
        return *p == stop ? p + 1 : NULL;
    return cg_fast_end(p, end) ? p : NULL;
}

/* The line at p is a jump= line (0), a jcnd= line (1), or neither (-1). */
static int jump_key(const char *p, const char *end)
{
    if (end - p < 5 || p[0] != 'j')
        return -1;
    return !memcmp(p, "jcnd=", 5) ? 1 : !memcmp(p, "jump=", 5) ? 0 : -1;
}

/* A jump=/jcnd= line of the fast path at p (callgrind's counts N or
 * FOLLOWED/EXECUTED, then targets the tokens of cg_fast_pos, nothing
 * else) and its source line after it, a cost line without costs: its
 * targets into *t (t->ncost of them), the source line into src; the
 * start of the line after both, or NULL (the loader reads them). */
static const char *scan_jump(const Layout *s, const char *p,
                             const char *end, Line *t, Line *src)
{
    int cond = jump_key(p, end), k;
    if (cond < 0)
        return NULL;
    p += 5;
    if (cond && !(p = jump_count(p, end, '/')))
        return NULL;
    if (!(p = jump_count(p, end, 0)))
        return NULL;
    for (k = 0; k < s->npos; k++) {
        p = cg_skip_blanks(p, end);
        if (p == end || *p == '\n')
            break;
        if ((t->op[k] = cg_fast_pos(&p, end, &t->val[k])) == CG_OP_BAD)
            return NULL;
    }
    t->ncost = k;
    p = cg_skip_blanks(p, end);
    if (p == end || *p != '\n' || ++p == end || !cg_is_cost_start(*p) ||
        !(p = scan_cost(s, p, end, src)) || src->ncost)
        return NULL;
    return p;
}

/* A new run, its segment starting at `at` (a chunk's segments are its
 * runs). Its fields are set one by one: a memset of the struct showed in
 * the worker's time. */
static int begin_run(const Layout *s, Slot *sl, Run *r, const char *at)
{
    CgSeg *g;
    int k;
    if (CG_GROW(sl->segs, sl->segs_cap, sl->nsegs + 1) != 0 ||
        CG_GROW(sl->sums, sl->sums_cap, sl->nsums + (size_t)s->nev) != 0 ||
        CG_GROW(sl->pos, sl->pos_cap, sl->npos + (size_t)s->npos) != 0)
        return -1;
    r->seg = sl->nsegs++;
    g = &sl->segs[r->seg];
    g->start = g->end = at;
    g->sums = NULL;              /* publish sets them */
    g->pos = NULL;
    g->nlines = g->vlines = 0;
    g->npos = (uint16_t)s->npos;
    g->nev = (uint16_t)s->nev;
    g->ncost = 0;
    g->kind = CG_SEG_RUN;
    g->jumps = 0;
    r->doubt = 0;
    r->bound = 0;
    r->sums = sl->nsums;
    r->pos = sl->npos;
    /* nev >= 1 (runs need events); npos may be 0: pos may be NULL */
    for (k = 0; k < s->nev; k++)
        sl->sums[sl->nsums + (size_t)k] = 0;
    for (k = 0; k < s->npos; k++) {
        CgRunPos *q = &sl->pos[sl->npos + (size_t)k];
        q->absolute = 0;
        q->v = 0;
        q->lo = q->hi = 0;
    }
    sl->nsums += (size_t)s->nev;
    sl->npos += (size_t)s->npos;
    return 0;
}

/* A run whose lines are in doubt becomes lines the loader reads. */
static void end_run(Slot *sl, const Run *r, const char *at)
{
    CgSeg *g = &sl->segs[r->seg];
    uint64_t most;
    g->end = at;
    /* Every sum is at most nlines * bound: when that fits in int64_t and
     * no cost is negative, every sum on the way fit too. */
    if (r->doubt || r->bound >> 63 ||
        __builtin_mul_overflow(r->bound, g->nlines, &most) ||
        most > (uint64_t)INT64_MAX)
        g->kind = CG_SEG_LINES;
}

/* Can the cost line after the line at p be in a run? Not after calls=,
 * jump= or jcnd= (its cost line is the call's or the jump's, or is skipped
 * with a bad one), nor after a line starting with a blank (it may be one
 * of those): the loader reads those itself. */
static int run_may_follow(const char *p, const char *end)
{
    size_t n = (size_t)(end - p);
    switch (*p) {
    case 'c':
        return !(n >= 6 && !memcmp(p, "calls=", 6));
    case 'j':
        return jump_key(p, end) < 0;
    case ' ':
    case '\t':
        return 0;
    default:
        return 1;
    }
}

/* Room in a slot used for the first time, for the runs of n bytes of
 * text (about what instr-level profiles have; more grows it):
 * grown from nothing by doubling, the arrays left their smaller copies
 * behind in the heap: some 250 KB of the 1-event bench profile's peak
 * memory. */
static int reserve(Slot *sl, size_t n)
{
    if (sl->segs_cap)
        return 0;
    return CG_GROW(sl->segs, sl->segs_cap, n / 48) != 0 ||
           CG_GROW(sl->sums, sl->sums_cap, n / 8) != 0 ||
           CG_GROW(sl->pos, sl->pos_cap, n / 32) != 0 ? -1 : 0;
}

/* Scans p..end into sl: runs of cost lines (but the first of a chunk, and
 * those run_may_follow excludes); the lines between are the loader's. */
static int scan_chunk(Layout *s, Slot *sl, const char *p, const char *end)
{
    int after_other = 1, in_run = 0;    /* after_other: no run may
                                            start at the next line */
    Run run = { 0, 0, 0, 0, 0 };
    if (reserve(sl, (size_t)(end - p)) != 0)
        return -1;
    sl->nsegs = sl->nsums = sl->npos = 0;
    while (p < end) {
        Line ln;
        if (!after_other && s->nev && cg_is_cost_start(*p)) {
            const char *next;
#ifdef CG_VEC
            /* in a run (after a jump, say), the vector path first */
            if (in_run && s->vec &&
                (next = scan_vec(s, sl, &run, p, end)) != p) {
                p = next;
                continue;
            }
#endif
            next = scan_cost(s, p, end, &ln);
            if (next) {
                if (!in_run) {
                    if (begin_run(s, sl, &run, p) != 0)
                        return -1;
                    in_run = 1;
                }
                add_line(s, sl, &run, &ln);
                p = next;
#ifdef CG_VEC
                /* the lines after it, as far as the vector path reads */
                if (s->vec)
                    p = scan_vec(s, sl, &run, p, end);
#endif
                continue;
            }
        } else if (in_run && *p == 'j') {
            /* a jump and its source line: the targets only have to stay
             * in range, and so does the source line, which moves the
             * positions only under the moving rule (valgrind's writer
             * leaves the base at the last cost line) */
            Line t;
            const char *next = scan_jump(s, p, end, &t, &ln);
            if (next) {
                int k;
                for (k = 0; k < t.ncost; k++)     /* none without npos */
                    step(&sl->pos[run.pos + (size_t)k], t.op[k], t.val[k],
                         &run, 0);
                for (k = 0; k < s->npos; k++)
                    step(&sl->pos[run.pos + (size_t)k], ln.op[k], ln.val[k],
                         &run, s->moving);
                sl->segs[run.seg].nlines += 2;
                sl->segs[run.seg].jumps = 1;
                p = next;
                continue;
            }
        }
        if (in_run) {
            end_run(sl, &run, p);
            in_run = 0;
        }
        after_other = !run_may_follow(p, end);
        p = other_line(s, p, end);
    }
    if (in_run)
        end_run(sl, &run, end);
    return 0;
}

/* The slot's pools are final: point the segments into them. */
static void publish(Slot *sl)
{
    size_t i, sums = 0, pos = 0;
    for (i = 0; i < sl->nsegs; i++) {
        CgSeg *g = &sl->segs[i];
        /* every run took its room (nev >= 1), kept or not */
        g->sums = sl->sums + sums;
        g->pos = g->npos ? sl->pos + pos : NULL;
        sums += g->nev;
        pos += g->npos;
    }
    sl->chunk.segs = sl->segs;
    sl->chunk.nsegs = sl->nsegs;
}

/* The layout lines of chunks [from, to), which the worker does not scan
 * (the first, and those the loader took): it follows them all the same.
 * Only positions: and events: lines matter: they are found by their
 * colon, a byte rare in a profile's body (some C++ names have it),
 * rather than every line read. */
static void follow_layout(CgPrescan *s, size_t from, size_t to)
{
    const char *start = s->bounds[from], *end = s->bounds[to], *p;
    if (start == end)
        return;
    /* the first line has its '\n' before the range (or is the text's) */
    if (*start == 'p' || *start == 'e')
        other_line(&s->lay, start, end);
    for (p = start; (p = memchr(p, ':', (size_t)(end - p))) != NULL;) {
        size_t back = (size_t)(p - start);
        const char *key = NULL;
        if (back >= 10 && p[-10] == '\n' && !memcmp(p - 9, "positions", 9))
            key = p - 9;
        else if (back >= 7 && p[-7] == '\n' && !memcmp(p - 6, "events", 6))
            key = p - 6;
        p = key ? other_line(&s->lay, key, end) : p + 1;
    }
}

/* Finds the chunk starts in the first `have` bytes of the text (all of
 * it when whole): after the first '\n' at or past each chunk's size.
 * Only starts 64 bytes or more short of `have`: the loader reads up to
 * 64 bytes past a line (cg_vec.h), and must find them read. Sets how
 * many chunks are known, and (whole) the text's end. The worker's, or
 * the starter's before it starts. */
static void find_chunks(CgPrescan *s, size_t have, int whole)
{
    const char *end = s->buf + s->len;
    const char *lim = whole ? end : s->buf + (have > 64 ? have - 64 : 0);
    const char *p = s->bounds[s->nstarts - 1], *nl;
    while (p < lim && (size_t)(lim - p) > s->chunk &&
           (nl = memchr(p + s->chunk, '\n', (size_t)(lim - p) - s->chunk))) {
        p = nl + 1;
        if (p < end)
            s->bounds[s->nstarts++] = p;
    }
    if (whole)
        s->bounds[s->nstarts] = end;
    /* (published under the mutex, by the caller) */
}

static void publish_chunks(CgPrescan *s, int whole)
{
    s->nchunks = whole ? s->nstarts : s->nstarts - 1;
    s->whole = whole;
}

/* Reads the rest of the text, in pieces of eight chunks, publishing the
 * chunks found in each as it goes. 0 when all is read; -1 when it
 * failed (read_err) or the load stopped. */
static int read_rest(CgPrescan *s)
{
    size_t piece = 8 * s->chunk;
    for (;;) {
        CgError err;
        int r = cg_source_read(s->src, piece, &err), stop;
        if (r >= 0)
            find_chunks(s, cg_source_have(s->src), r == 0);
        pthread_mutex_lock(&s->mu);
        if (r < 0) {
            s->read_err = err;
            s->read_failed = 1;
        } else {
            publish_chunks(s, r == 0);
        }
        pthread_cond_broadcast(&s->cv);
        stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (r <= 0 || stop)
            return r == 0 ? 0 : -1;
    }
}

static void *worker(void *arg)
{
    CgPrescan *s = arg;
    size_t followed = 0;         /* chunks [0, followed): layout followed */
    if (s->src && read_rest(s) != 0)
        return NULL;
    for (;;) {
        size_t i;
        Slot *sl;
        pthread_mutex_lock(&s->mu);
        while (!s->stop && s->claimed < s->nchunks &&
               s->claimed >= s->released + CG_RING)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop || s->claimed >= s->nchunks) {
            pthread_mutex_unlock(&s->mu);
            break;
        }
        i = s->claimed++;
        pthread_mutex_unlock(&s->mu);
        follow_layout(s, followed, i);
        sl = &s->slot[i % CG_RING];
        sl->failed = scan_chunk(&s->lay, sl, s->bounds[i],
                                s->bounds[i + 1]) != 0;
        if (!sl->failed)
            publish(sl);
        followed = i + 1;
        pthread_mutex_lock(&s->mu);
        sl->ready = i;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

/* ---- the loader's side ---- */

CgPrescan *cg_prescan_start(const char *buf, size_t len, size_t chunk,
                            int steal, int vec, int moving, CgSource *src)
{
    CgPrescan *s;
    if (!chunk)
        chunk = CG_CHUNK;
    if (chunk > CG_MAX_CHUNK)
        chunk = CG_MAX_CHUNK;
    if (len < 2 * chunk || !(s = calloc(1, sizeof *s)))
        return NULL;
    /* every chunk but the last has more than `chunk` bytes: room for
     * all their starts and the end, so the array never moves while the
     * loader reads it */
    if (!(s->bounds = malloc((len / chunk + 2) * sizeof *s->bounds)))
        goto fail;
    s->buf = buf;
    s->len = len;
    s->chunk = chunk;
    s->bounds[0] = buf;
    s->nstarts = 1;
    s->src = src;
    if (!src) {
        find_chunks(s, len, 1);
        if (s->nstarts < 2)
            goto fail;
        publish_chunks(s, 1);
    }
    s->lay.npos = 1;             /* no positions: line: just the line */
    s->lay.vec = vec;
    s->lay.moving = moving;
    s->claimed = s->released = 1;
    s->steal = steal;
    if (pthread_mutex_init(&s->mu, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        pthread_mutex_destroy(&s->mu);
        goto fail;
    }
    if (pthread_create(&s->thread, NULL, worker, s) != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        goto fail;
    }
    return s;
fail:
    free(s->bounds);
    free(s);
    return NULL;
}

int cg_prescan_chunk(CgPrescan *s, size_t i, const char **start,
                     const char **end, CgError *err)
{
    int rc;
    pthread_mutex_lock(&s->mu);
    while (i >= s->nchunks && !s->whole && !s->read_failed)
        pthread_cond_wait(&s->cv, &s->mu);
    rc = i < s->nchunks ? 1 : s->whole ? 0 : -1;
    if (rc > 0) {
        *start = s->bounds[i];
        *end = s->bounds[i + 1];
    } else if (rc < 0) {
        *err = s->read_err;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Scans the next chunk the worker has not started into s->own, rather
 * than wait (called and returning with the mutex held). Its
 * layout is a guess, the loader's own now (npos, nev): a run scanned with
 * another is read line by line (take_run checks), and the worker follows
 * the chunk's layout lines when it goes past it. */
static void scan_own(CgPrescan *s, int npos, int nev)
{
    size_t j = s->claimed++;
    Layout lay;
    int failed;
    pthread_mutex_unlock(&s->mu);
    lay.npos = npos;
    lay.nev = nev;
    lay.vec = s->lay.vec;        /* set before the worker started */
    lay.moving = s->lay.moving;
    failed = scan_chunk(&lay, &s->own, s->bounds[j], s->bounds[j + 1]) != 0;
    if (!failed)
        publish(&s->own);
    pthread_mutex_lock(&s->mu);
    s->own.failed = failed;
    s->own_chunk = j;
}

const CgChunk *cg_prescan_wait(CgPrescan *s, size_t i, int npos, int nev)
{
    const Slot *sl = &s->slot[i % CG_RING];
    const CgChunk *c = NULL;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->own_chunk == i) {
            s->own_chunk = 0;
            if (!s->own.failed)
                c = &s->own.chunk;
            break;
        }
        if (sl->ready == i) {
            if (!sl->failed)
                c = &sl->chunk;
            break;
        }
        if (s->read_failed)
            break;               /* the worker stopped; so will the load */
        if (s->steal && s->claimed <= i) {
            /* the worker is behind (still reading the file, say): the
             * loader scans this chunk into runs itself, as the worker
             * would (read line by line, a chunk took it some twice as
             * long) */
            s->claimed = i;
            if (!s->own_chunk) {
                scan_own(s, npos, nev);
                continue;
            }
            s->claimed = i + 1;  /* (its slot is taken: line by line) */
            break;
        }
        if (s->steal && !s->own_chunk && s->claimed < s->nchunks) {
            /* the worker is on chunk i: rather than wait, scan the one
             * after the worker's last */
            scan_own(s, npos, nev);
            continue;
        }
        pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return c;
}

void cg_prescan_done(CgPrescan *s, size_t i)
{
    pthread_mutex_lock(&s->mu);
    s->released = i + 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void cg_prescan_stop(CgPrescan *s)
{
    int k;
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    for (k = 0; k <= CG_RING; k++) {
        Slot *sl = k < CG_RING ? &s->slot[k] : &s->own;
        free(sl->segs);
        free(sl->sums);
        free(sl->pos);
    }
    free(s->bounds);
    free(s);
}
