/* Walking blocks again: the loader accepted every line inside a block, so
 * this pass cannot fail; it only turns text back into lines and jumps. */
#include "cg_cursor.h"
#include "cg_scan.h"

#include <string.h>

void cg_cursor_init(CgCursor *c, const CgProfile *P, size_t first,
                    size_t last, int64_t *cost)
{
    memset(c, 0, sizeof *c);
    c->P = P;
    c->block = first;
    c->block_end = last;
    c->cost = cost;
}

/* Enters the next block; 0 when there is none. */
static int next_block(CgCursor *c)
{
    const CgProfile *P = c->P;
    const CgBlock *b;
    int k;
    if (c->started)
        c->block++;
    c->started = 1;
    if (c->block >= c->block_end)
        return 0;
    b = &P->blocks[c->block];
    for (k = 0; k < P->parts[b->part].npos; k++)
        c->base[k] = P->bases[b->base + k];
    c->jfile = b->jfile;
    c->jfunc = b->jfunc;
    c->p = P->texts[P->parts[b->part].text].buf + b->start;
    c->end = P->texts[P->parts[b->part].text].buf + b->end;
    return 1;
}

static void set_pos(const CgPart *pt, const uint64_t *pos, uint64_t *addr,
                    uint64_t *line, uint32_t *flags, uint32_t has_addr,
                    uint32_t has_line)
{
    int k;
    for (k = 0; k < pt->npos; k++) {
        if (pt->poskind[k] == CG_POS_INSTR) {
            *addr = pos[k];
            *flags |= has_addr;
        } else if (pt->poskind[k] == CG_POS_LINE) {
            *line = pos[k];
            *flags |= has_line;
        }
    }
}

/* A jump=/jcnd= line of block b: its counts and target. */
static void read_jump(const CgCursor *c, const CgBlock *b, const CgPart *pt,
                      const CgRec *r, CgJump *j)
{
    int why, second;
    const char *at, *q;
    memset(j, 0, sizeof *j);
    j->conditional = r->kind == CG_K_JCND;
    q = cg_scan_jump_counts(r->val, r->e, j->conditional, &j->count,
                            &j->executed, &why, &at, &second);
    cg_scan_target(q, r->e, pt->npos, pt->poskind, c->base, &j->taddr,
                   &j->tline, &j->flags, CG_HAS_TADDR, CG_HAS_TLINE, &why,
                   &at);
    j->from = b->func;
    j->to = c->jfunc >= 0 ? c->jfunc : b->func;
    j->file = b->lfile;
    j->target_file = c->jfile >= 0 ? c->jfile : b->lfile;
    j->part = b->part;
}

/* The one walker behind both iterators. The loader accepted every line of
 * a block, so the scans here cannot fail. */
static int walk(CgCursor *c, CgLine *ol, CgJump *oj)
{
    const CgProfile *P = c->P;
    enum { NONE, CALL_COST, JUMP_SOURCE } expect = NONE;
    uint64_t pos[CG_MAX_POSITIONS];
    int64_t cost[CG_MAX_EVENTS];
    CgJump j;
    memset(&j, 0, sizeof j);
    for (;;) {
        const CgBlock *b;
        const CgPart *pt;
        CgRec r;
        int n = 0;
        if (c->p >= c->end) {
            expect = NONE;
            if (!next_block(c))
                return 0;
            continue;
        }
        b = &P->blocks[c->block];
        pt = &P->parts[b->part];
        r.next = NULL;
        if (cg_is_cost_start(*c->p)) {
            r.kind = CG_K_COST;
            r.next = cg_scan_costs_fast(c->p, c->end, pt->npos, c->base, pos,
                                        cost, pt->nev, &n);
        }
        if (!r.next) {
            cg_scan_line(c->p, c->end, &r);
            if (r.kind == CG_K_COST) {
                CgScanFail f;
                cg_scan_costs(r.s, r.e, pt->npos, c->base, pos, cost, pt->nev,
                              &n, &f);
            }
        }
        c->p = r.next;
        if (r.kind == CG_K_COST) {
            int was = expect, k;
            /* as the loader: only a regular cost line moves the base,
             * unless the part was read with the moving rule */
            if (was == NONE || pt->moving_base)
                memcpy(c->base, pos, (size_t)pt->npos * sizeof *pos);
            expect = NONE;
            if (was == JUMP_SOURCE && oj) {
                set_pos(pt, pos, &j.addr, &j.line, &j.flags, CG_HAS_ADDR,
                        CG_HAS_LINE);
                *oj = j;
                return 2;
            }
            if (was != NONE || !ol)
                continue;
            memset(c->cost, 0, P->stride * sizeof *c->cost);
            for (k = 0; k < n; k++)
                c->cost[pt->evmap[k]] = cost[k];
            memset(ol, 0, sizeof *ol);
            ol->func = b->func;
            ol->file = b->lfile;
            ol->part = b->part;
            ol->cost = c->cost;
            set_pos(pt, pos, &ol->addr, &ol->line, &ol->flags, CG_HAS_ADDR,
                    CG_HAS_LINE);
            return 1;
        }
        if (r.kind == CG_K_CALLS) {
            expect = CALL_COST;
        } else if (r.kind == CG_K_JUMP || r.kind == CG_K_JCND) {
            expect = JUMP_SOURCE;
            if (oj)
                read_jump(c, b, pt, &r, &j);
            c->jfile = c->jfunc = -1;
        }
        /* cfn=, cfi=, cfl=, cob=: calls are stored, nothing to do */
    }
}

int cg_cursor_next_line(CgCursor *c, CgLine *out)
{
    return walk(c, out, NULL);
}

int cg_cursor_next_jump(CgCursor *c, CgJump *out)
{
    return walk(c, NULL, out) != 0;
}

int cg_cursor_next_any(CgCursor *c, CgLine *line, CgJump *jump)
{
    return walk(c, line, jump);
}

int cg_func_part_self(const CgProfile *P, int32_t f, uint32_t part,
                      int64_t *out, int64_t *scratch)
{
    const CgFunc *fn = &P->funcs[f];
    uint32_t b;
    size_t i;
    for (i = 0; i < P->stride; i++)
        out[i] = 0;
    for (b = fn->blocks_begin; b < fn->blocks_end; b++) {
        CgCursor c;
        CgLine l;
        if (P->blocks[b].part != part)
            continue;
        cg_cursor_init(&c, P, b, (size_t)b + 1, scratch);
        while (cg_cursor_next_line(&c, &l))
            for (i = 0; i < P->nev; i++)
                if (__builtin_add_overflow(out[i], l.cost[i], &out[i]))
                    return -1;
    }
    return 0;
}
