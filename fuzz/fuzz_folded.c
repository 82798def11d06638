/* libFuzzer target for the folded-stacks reader (cg_folded.h): the input
 * read as folded lines into the trie, then pruned at a minimum taken from
 * its first byte. Where it reads, the roots kept and what the pruning left
 * on the top add up to the lines' total, and every kept node's own cost
 * and its kept children's totals to its total; a difference aborts. */
#include "cg_folded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    CgFolded f;
    int32_t *order;
    int64_t top_self = 0, sum, *kids;
    size_t nkept = 0, i;
    int64_t min = size > 0 ? data[0] % 8 : 0;
    memset(&f, 0, sizeof f);
    if (cg_folded_read_buffer(&f, (const char *)data, size) != CG_OK) {
        cg_folded_free(&f);
        return 0;
    }
    order = malloc((f.n + 1) * sizeof *order);
    kids = calloc(f.n + 1, sizeof *kids);
    if (!order || !kids)
        abort();
    cg_folded_prune(&f, min, order, &nkept, &top_self);
    sum = top_self;
    for (i = 0; i < nkept; i++) {
        const CgFoldedNode *nd = &f.nodes[order[i]];
        if (nd->total < min || nd->total <= 0)
            abort();
        if (nd->parent < 0)
            sum += nd->total;
        else
            kids[nd->parent] += nd->total;
    }
    for (i = 0; i < nkept; i++) {
        const CgFoldedNode *nd = &f.nodes[order[i]];
        if (nd->self + kids[order[i]] != nd->total) {
            fprintf(stderr, "fuzz_folded: node %d: self %lld + children %lld != total %lld\n",
                    (int)order[i], (long long)nd->self, (long long)kids[order[i]],
                    (long long)nd->total);
            abort();
        }
    }
    if (sum != f.total) {
        fprintf(stderr, "fuzz_folded: roots %lld != total %lld\n", (long long)sum,
                (long long)f.total);
        abort();
    }
    free(order);
    free(kids);
    cg_folded_free(&f);
    return 0;
}
