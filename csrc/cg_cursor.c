/* Walking blocks again: the loader accepted every line inside a block, so
 * this pass cannot fail; it only turns text back into lines and jumps. */
#include "cg_profile.h"
#include "cg_lex.h"

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

/* Reads the positions of a line at s into pos[]; returns the rest. */
static const char *read_pos(const CgCursor *c, const CgPart *pt,
                            const char *s, const char *e, uint64_t *pos)
{
    int k, why;
    for (k = 0; k < pt->npos; k++) {
        s = cg_skip_blanks(s, e);
        s = cg_scan_pos(s, e, c->base[k], &pos[k], &why);
    }
    return s;
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

/* The one walker behind both iterators. */
static int walk(CgCursor *c, CgLine *ol, CgJump *oj)
{
    const CgProfile *P = c->P;
    enum { NONE, CALL_COST, JUMP_SOURCE } expect = NONE;
    uint64_t pos[CG_MAX_POSITIONS];
    CgJump j;
    memset(&j, 0, sizeof j);
    for (;;) {
        const CgBlock *b;
        const CgPart *pt;
        const char *s, *e, *nl;
        if (c->p >= c->end) {
            expect = NONE;
            if (!next_block(c))
                return 0;
            continue;
        }
        b = &P->blocks[c->block];
        pt = &P->parts[b->part];
        s = c->p;
        nl = memchr(s, '\n', (size_t)(c->end - s));
        e = nl ? nl : c->end;
        c->p = nl ? nl + 1 : c->end;
        if (e > s && e[-1] == '\r')
            e--;
        s = cg_skip_blanks(s, e);
        if (s == e || *s == '#')
            continue;
        if ((*s >= '0' && *s <= '9') || *s == '+' || *s == '-' ||
            *s == '*') {
            const char *q = read_pos(c, pt, s, e, pos);
            int was = expect;
            memcpy(c->base, pos, (size_t)pt->npos * sizeof *pos);
            expect = NONE;
            if (was == CALL_COST)
                continue;
            if (was == JUMP_SOURCE) {
                if (!oj)
                    continue;
                set_pos(pt, pos, &j.addr, &j.line, &j.flags, CG_HAS_ADDR,
                        CG_HAS_LINE);
                *oj = j;
                return 1;
            }
            if (ol) {
                int n = 0, why;
                int64_t v = 0;
                memset(c->cost, 0, P->stride * sizeof *c->cost);
                for (q = cg_skip_blanks(q, e); q < e;
                     q = cg_skip_blanks(q, e)) {
                    q = cg_scan_cost(q, e, &v, &why);
                    c->cost[pt->evmap[n++]] = v;
                }
                memset(ol, 0, sizeof *ol);
                ol->func = b->func;
                ol->file = b->lfile;
                ol->part = b->part;
                ol->cost = c->cost;
                set_pos(pt, pos, &ol->addr, &ol->line, &ol->flags,
                        CG_HAS_ADDR, CG_HAS_LINE);
                return 1;
            }
            continue;
        }
        if (e - s > 6 && !memcmp(s, "calls=", 6)) {
            expect = CALL_COST;
        } else if ((e - s > 5 && !memcmp(s, "jump=", 5)) ||
                   (e - s > 5 && !memcmp(s, "jcnd=", 5))) {
            expect = JUMP_SOURCE;
            if (oj) {
                int cond = s[1] == 'c', why;
                uint64_t a = 0, bb = 0;
                const char *q = cg_skip_blanks(s + 5, e);
                memset(&j, 0, sizeof j);
                q = cg_scan_u64_to(q, e, &a, &why, cond ? '/' : ' ');
                if (cond) {
                    int slash = q < e && *q == '/';
                    q = slash ? q + 1 : cg_skip_blanks(q, e);
                    q = cg_scan_u64(q, e, &bb, &why);
                    /* callgrind: followed/executed; the spec:
                     * executed followed */
                    j.count = slash ? a : bb;
                    j.executed = slash ? bb : a;
                } else {
                    j.count = j.executed = a;
                }
                j.conditional = cond;
                {
                    int k;
                    for (k = 0; k < pt->npos; k++) {
                        uint64_t v = 0;
                        q = cg_skip_blanks(q, e);
                        if (q == e)
                            break;
                        q = cg_scan_pos(q, e, c->base[k], &v, &why);
                        if (pt->poskind[k] == CG_POS_INSTR) {
                            j.taddr = v;
                            j.flags |= CG_HAS_TADDR;
                        } else if (pt->poskind[k] == CG_POS_LINE) {
                            j.tline = v;
                            j.flags |= CG_HAS_TLINE;
                        }
                    }
                }
                j.from = b->func;
                j.to = c->jfunc >= 0 ? c->jfunc : b->func;
                j.file = b->lfile;
                j.target_file = c->jfile >= 0 ? c->jfile : b->lfile;
                j.part = b->part;
            }
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
    return walk(c, NULL, out);
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
