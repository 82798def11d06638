/* The cursor: walks cost lines and jumps again, block by block (the
 * loader keeps them as byte ranges of the text, cg_profile.h), with the
 * scanner the loader read them with (cg_scan.h). */
#ifndef CG_CURSOR_H
#define CG_CURSOR_H

#include "cg_profile.h"

typedef struct CgLine {
    int32_t func, file;
    uint32_t part;
    uint32_t flags;              /* CG_HAS_ADDR, CG_HAS_LINE */
    uint64_t addr, line;
    const int64_t *cost;         /* stride values, profile event order */
} CgLine;

typedef struct CgJump {
    int32_t from, to;
    int32_t file, target_file;
    uint32_t part;
    uint32_t flags;              /* CG_HAS_* for source and target */
    int conditional;
    uint64_t count, executed;
    uint64_t addr, line, taddr, tline;
} CgJump;

typedef struct CgCursor {
    const CgProfile *P;
    size_t block, block_end;     /* blocks still to walk */
    const char *p, *end;         /* rest of the current block */
    uint64_t base[CG_MAX_POSITIONS];
    int32_t jfile, jfunc;
    int started;
    int64_t *cost;               /* stride values, owned by the caller */
} CgCursor;

/* Walks blocks [first, last). cost must have room for P->stride values
 * (only needed for lines). */
CG_HIDDEN void cg_cursor_init(CgCursor *c, const CgProfile *P, size_t first,
                              size_t last, int64_t *cost);
/* 1 and fills *out, or 0 at the end. */
CG_HIDDEN int cg_cursor_next_line(CgCursor *c, CgLine *out);
CG_HIDDEN int cg_cursor_next_jump(CgCursor *c, CgJump *out);
/* Lines and jumps in one pass, in file order: 1 and fills *line, 2 and
 * fills *jump, or 0 at the end (the writer). */
CG_HIDDEN int cg_cursor_next_any(CgCursor *c, CgLine *line, CgJump *jump);

/* Function f's self cost in one part (0-based), into out (stride values);
 * scratch has room for stride values. -1 when a sum does not fit in 64
 * bits. */
CG_HIDDEN int cg_func_part_self(const CgProfile *P, int32_t f, uint32_t part,
                                int64_t *out, int64_t *scratch);

#endif
