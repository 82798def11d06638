/* The line scanner (cg_scan.h): one table of line kinds, one function per
 * kind of number run. */
#include "cg_scan.h"

#include <string.h>

#define KEY(s) s, sizeof s - 1

#define X16 -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1
const signed char cg_hex_digit[256] = {
    X16, X16, X16,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1,
    -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, X16,
    -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, X16,
    X16, X16, X16, X16, X16, X16, X16, X16
};
#undef X16

/* The keys of the body first, the most frequent in callgrind's files
 * first: cg_scan_keyed tries them in this order. */
const CgKeyDef cg_keys[] = {
    { KEY("jcnd"), '=', CG_K_JCND, -1 },
    { KEY("calls"), '=', CG_K_CALLS, -1 },
    { KEY("cfn"), '=', CG_K_CFN, CG_FN },
    { KEY("jump"), '=', CG_K_JUMP, -1 },
    { KEY("fn"), '=', CG_K_FN, CG_FN },
    { KEY("cfi"), '=', CG_K_CFI, CG_FILE },
    { KEY("cob"), '=', CG_K_COB, CG_OBJ },
    { KEY("fi"), '=', CG_K_FI, CG_FILE },
    { KEY("fe"), '=', CG_K_FE, CG_FILE },
    { KEY("fl"), '=', CG_K_FL, CG_FILE },
    { KEY("ob"), '=', CG_K_OB, CG_OBJ },
    { KEY("cfl"), '=', CG_K_CFL, CG_FILE },
    { KEY("jfi"), '=', CG_K_JFI, CG_FILE },
    { KEY("jfn"), '=', CG_K_JFN, CG_FN },
    { KEY("frfn"), '=', CG_K_FRFN, CG_FN },
    { KEY("version"), ':', CG_K_VERSION, -1 },
    { KEY("creator"), ':', CG_K_CREATOR, -1 },
    { KEY("pid"), ':', CG_K_PID, -1 },
    { KEY("thread"), ':', CG_K_THREAD, -1 },
    { KEY("part"), ':', CG_K_PART, -1 },
    { KEY("cmd"), ':', CG_K_CMD, -1 },
    { KEY("desc"), ':', CG_K_DESC, -1 },
    { KEY("positions"), ':', CG_K_POSITIONS, -1 },
    { KEY("events"), ':', CG_K_EVENTS, -1 },
    { KEY("event"), ':', CG_K_EVENT, -1 },
    { KEY("summary"), ':', CG_K_SUMMARY, -1 },
    { KEY("totals"), ':', CG_K_TOTALS, -1 },
    { NULL, 0, 0, CG_K_OTHER, -1 }
};

static const CgKeyDef unknown_eq = { "", 0, '=', CG_K_UNKNOWN_EQ, -1 };
static const CgKeyDef unknown_colon = { "", 0, ':', CG_K_UNKNOWN_COLON, -1 };

static int is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

void cg_scan_keyed(CgRec *r)
{
    const char *k = r->s, *s = r->s;
    size_t n;
    const CgKeyDef *d;
    while (s < r->e && is_key_char(*s))
        s++;
    if (s == r->e || (*s != '=' && *s != ':')) {
        r->kind = CG_K_OTHER;
        return;
    }
    n = (size_t)(s - k);
    r->key = k;
    r->val = s + 1;
    /* keys are short: compared here, not through a call of memcmp */
    for (d = cg_keys; d->key; d++) {
        size_t i;
        if (d->sep != *s || d->len != n || d->key[0] != *k)
            continue;
        for (i = 1; i < n && d->key[i] == k[i]; i++)
            ;
        if (i == n)
            break;
    }
    if (!d->key)
        d = *s == '=' ? &unknown_eq : &unknown_colon;
    r->def = d;
    r->kind = d->kind;
}

const char *cg_scan_target(const char *s, const char *e, int npos,
                           const unsigned char *poskind,
                           const uint64_t *base, uint64_t *addr,
                           uint64_t *line, uint32_t *flags, uint32_t has_addr,
                           uint32_t has_line, int *why, const char **at)
{
    int k;
    for (k = 0; k < npos; k++) {
        uint64_t v;
        const char *q;
        s = cg_skip_blanks(s, e);
        if (s == e)
            break;
        q = s;
        if (!cg_fast_step(&q, e, base[k], &v) &&
            !(q = cg_scan_pos(s, e, base[k], &v, why))) {
            *at = s;
            return NULL;
        }
        if (poskind[k] == CG_POS_INSTR) {
            *addr = v;
            *flags |= has_addr;
        } else if (poskind[k] == CG_POS_LINE) {
            *line = v;
            *flags |= has_line;
        }
        s = q;
    }
    return s;
}

const char *cg_scan_jump_counts(const char *s, const char *e, int cond,
                                uint64_t *followed, uint64_t *executed,
                                int *why, const char **at, int *second)
{
    uint64_t a, b;
    const char *q;
    int slash;
    *second = 0;
    s = cg_skip_blanks(s, e);
    if (!(q = cg_scan_u64_to(s, e, &a, why, cond ? '/' : ' '))) {
        *at = s;
        return NULL;
    }
    if (!cond) {
        *followed = *executed = a;
        return q;
    }
    slash = q < e && *q == '/';
    s = slash ? q + 1 : cg_skip_blanks(q, e);
    *second = 1;
    *at = s;
    if (s == e) {
        *why = CG_LEX_BADNUM;
        return NULL;
    }
    if (!(q = cg_scan_u64(s, e, &b, why)))
        return NULL;
    /* callgrind: followed/executed; the spec: executed followed */
    *followed = slash ? a : b;
    *executed = slash ? b : a;
    return q;
}
