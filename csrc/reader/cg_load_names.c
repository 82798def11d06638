/* Composite names: a name of compression ids joined by '\''
 * (--compress-mangled, fn=(1)'(2)), built of their names, within a bound
 * on the bytes a load may build so. */
#include "cg_loader.h"

#include <stdlib.h>
#include <string.h>

static const char *kind_key(int kind)
{
    return kind == CG_OBJ ? "ob" : kind == CG_FILE ? "fl" : "fn";
}

/* The bytes of composite names a load may build: CG_MADE_RATIO times the
 * bytes of its input, plus CG_MADE_MIN. */
#define CG_MADE_RATIO 16
#define CG_MADE_MIN (16 << 20)

/* Resolves a composite name into a new string in the arena. */
int cg_ld_composite(CgLoader *L, int kind, const char *s, const char *e,
                     int32_t *out)
{
    CgProfile *P = L->P;
    const CgNames *t = &P->names[kind];
    size_t len = 0;
    const char *p;
    char *buf = NULL, *w = NULL;
    uint64_t id = 0;             /* (s is a composite: every id scans) */
    int big, pass;
    for (pass = 0; pass < 2; pass++) {
        p = s;
        w = pass ? buf : NULL;
        for (;;) {
            const char *q = cg_ld_scan_id(p, e, &id, &big);
            int32_t idx = big ? -1 : cg_names_get_id(t, id);
            if (big)
                return cg_ld_fail(L, "id %.*s is above the limit %d",
                                  (int)(q - p), p, CG_MAX_ID);
            if (idx < 0 || !t->str[idx].ptr) {
                char qq[300];
                cg_ld_quote(qq, sizeof qq, p, (size_t)(q - p));
                return cg_ld_fail(L, "%s=%s used before it is defined",
                                  kind_key(kind), qq);
            }
            if (pass) {
                memcpy(w, t->str[idx].ptr, t->str[idx].len);
                w += t->str[idx].len;
                if (q < e)
                    *w++ = '\'';
            } else {
                len += t->str[idx].len + 1;
            }
            if (q == e)
                break;
            p = q + 1;
        }
        if (!pass) {
            uint64_t bound = (uint64_t)P->len * CG_MADE_RATIO + CG_MADE_MIN;
            if (len > CG_MAX_NAME)
                return cg_ld_fail(L, "name longer than %d bytes", CG_MAX_NAME);
            /* names built of names can double at each line: bounded, the
             * memory and the time they take stay linear in the input */
            if ((L->made += len) > bound) {
                cg_ld_fail(L, "names made up of compressed ids (%s=(1)'(2)) "
                           "exceed %llu bytes (%d times the input, plus %d "
                           "MiB)", kind_key(kind), (unsigned long long)bound,
                           CG_MADE_RATIO, CG_MADE_MIN >> 20);
                L->err->status = CG_ELIMIT;
                L->fatal = 1;
                return CG_ELIMIT;
            }
            if (CG_GROW(P->arena, P->arena_cap, P->narena + 1) != 0 ||
                !(buf = malloc(len)))
                return cg_ld_nomem(L);
            P->arena[P->narena++] = buf;
            P->arena_bytes += len;
        }
    }
    /* A composite written again (no (N) to name it) keeps its first copy:
     * the arena grows with distinct names, not with their occurrences. */
    if ((*out = cg_names_find(t, buf, (size_t)(w - buf))) >= 0) {
        P->arena_bytes -= len;
        free(P->arena[--P->narena]);
        return CG_OK;
    }
    *out = cg_ld_intern(L, kind, buf, (size_t)(w - buf));
    return *out < 0 ? cg_ld_nomem(L) : CG_OK;
}
