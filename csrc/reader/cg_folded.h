/* Folded stacks (`frame;frame;frame count` lines) read into a trie of
 * frames merged as the lines come: memory grows with the distinct stack
 * prefixes (trie nodes) and distinct names, not with the file. Then the
 * flame graph's pruning (a node below a minimum width merges into its
 * parent's own cost), and the nodes kept, in the order a flame graph
 * draws them. The rules of a line are those of lua/callgrind/export/
 * stacks.lua's read_folded: one trailing carriage return dropped, a line
 * of blanks skipped, else frames, blanks (space or tab), decimal digits,
 * blanks; frames split at `;`, with `\\`, `\;`, `\n`, `\r` unescaped and
 * any other backslash kept. */
#ifndef CG_FOLDED_H
#define CG_FOLDED_H

#include "cg_common.h"

/* A trie node: the frame `name` under `parent` (-1: a root). */
typedef struct CgFoldedNode {
    int32_t parent, first, last, next;  /* children in order of first line */
    int32_t name;
    int32_t depth;                      /* 1 for a root */
    int64_t self, total;
} CgFoldedNode;

/* A slot of the children's hash, its key kept in it (one cache line
 * read per lookup, not two). */
typedef struct CgFoldedSlot {
    int32_t parent, name, node;
} CgFoldedSlot;

typedef struct CgFoldedLine {
    uint64_t hash;
    int32_t node;               /* -1: an empty slot */
    uint32_t len;
} CgFoldedLine;

typedef struct CgFolded {
    CgFoldedNode *nodes;
    size_t n, cap;
    int32_t root_last;          /* the last root + 1; 0: none yet */
    struct CgFoldedSlot *slots; /* (parent, name) -> node + 1; 0 empty */
    size_t nslots;
    /* the distinct names: bytes in arena, name k at off[k], len[k] */
    char *arena;
    size_t arena_len, arena_cap;
    size_t *off;
    uint32_t *len;
    size_t nnames, names_cap, len_cap;
    int32_t *nslot;             /* name hash: name + 1; 0 empty */
    size_t nnslots;
    /* the lines seen, by the hash of their frames: a line seen before
     * finds its node at once (then checked frame by frame up the trie) */
    struct CgFoldedLine *seen;
    size_t nseen, seen_slots;
    char *tmp;                  /* one frame unescaped */
    size_t tmp_cap;
    int64_t total;              /* the sum of the counts */
    int64_t lines;              /* lines read (blank ones too) */
    size_t max_line;            /* the longest line, in bytes */
    /* a bad line: its number and its first bytes */
    int64_t bad_line;
    char bad_text[96];
    size_t bad_len;
} CgFolded;

/* A zeroed CgFolded is empty and ready. */
CG_HIDDEN void cg_folded_free(CgFolded *f);
/* Adds one line (without its newline). CG_OK; CG_EBAD with bad_line and
 * bad_text set; CG_ENOMEM; CG_ELIMIT past 2^31 - 1 nodes or names. */
CG_HIDDEN int cg_folded_line(CgFolded *f, const char *s, size_t n);
/* Reads path with read(2) in pieces, a line at a time (a line is held
 * whole: memory grows with the longest line). CG_OK, CG_EBAD (bad_line),
 * CG_ENOMEM, CG_ELIMIT, or CG_EIO with errno kept. */
CG_HIDDEN int cg_folded_read_file(CgFolded *f, const char *path);
/* Adds the text of buf[0, len) (lines split at \n, the last one without
 * it too). Codes as cg_folded_line. */
CG_HIDDEN int cg_folded_read_buffer(CgFolded *f, const char *buf, size_t len);
/* Sums totals from the leaves, then marks the nodes kept by the pruning
 * of minimum min (a child of a kept node, or a root, with total >= min
 * and total > 0): the others' totals go to the own cost of their parent
 * (top_self for a root). Writes the kept nodes, children after their
 * parent in order, into order[0, *nkept) (order holds f->n entries),
 * each kept node's self then its cost after pruning. */
CG_HIDDEN void cg_folded_prune(CgFolded *f, int64_t min, int32_t *order,
                               size_t *nkept, int64_t *top_self);

#endif
