/* The stack record's reader (cg_stackrec_read.h). */
#include "cg_stackrec_read.h"
#include "cg_profile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD "# callgrind.lua stack record "
#define VERSION "1"

typedef struct Cur {
    const char *p, *end;        /* the rest of the text */
    const char *line;           /* the line at hand, its length */
    size_t len;
    uint64_t lineno;
    const char *name;
    CgRec *r;
} Cur;

static int bad(Cur *c, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(c->r->msg, sizeof c->r->msg, "%s:%llu: ", c->name,
                     (unsigned long long)c->lineno);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof c->r->msg)
        vsnprintf(c->r->msg + n, sizeof c->r->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return CG_EBAD;
}

/* The next line (without its newline) into c->line; 0 at the end of the
 * text or on a last line without its newline (cut short). */
static int next_line(Cur *c)
{
    const char *nl;
    c->lineno++;
    if (c->p >= c->end)
        return 0;
    nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    if (nl == NULL)
        return 0;
    c->line = c->p;
    c->len = (size_t)(nl - c->p);
    c->p = nl + 1;
    return 1;
}

static int cut(Cur *c, const char *what)
{
    return bad(c, "cut short: the record ends before %s", what);
}

/* A line "key: value": the value, or NULL when the line is not so. */
static const char *field(const Cur *c, const char *key, size_t *vlen)
{
    size_t k = strlen(key);
    if (c->len < k || memcmp(c->line, key, k))
        return NULL;
    *vlen = c->len - k;
    return c->line + k;
}

/* A decimal integer at *s (a '-' first when neg is allowed), up to end;
 * advances *s. 0 when there is none or it overflows. */
static int number(const char **s, const char *end, int neg, int64_t *out)
{
    const char *p = *s;
    int minus = 0;
    uint64_t v = 0, lim;
    if (neg && p < end && *p == '-') {
        minus = 1;
        p++;
    }
    lim = minus ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (p >= end || *p < '0' || *p > '9')
        return 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (lim - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = minus ? (int64_t)(0 - v) : (int64_t)v;
    *s = p;
    return 1;
}

/* A count line "key: N" (N at most max). */
static int count_line(Cur *c, const char *key, uint64_t max, size_t *out)
{
    size_t vlen;
    const char *v, *s;
    int64_t n;
    if (!next_line(c))
        return cut(c, key);
    v = field(c, key, &vlen);
    s = v;
    if (v == NULL || !number(&s, v + vlen, 0, &n) || s != v + vlen)
        return bad(c, "not '%s N'", key);
    if ((uint64_t)n > max)
        return bad(c, "%s %lld: more than this file can hold", key, (long long)n);
    *out = (size_t)n;
    return CG_OK;
}

/* The head: version, profile digest, events. */
static int head(Cur *c)
{
    CgRec *r = c->r;
    size_t vlen, i;
    const char *v;
    if (!next_line(c) || c->len < sizeof HEAD - 1 || memcmp(c->line, HEAD, sizeof HEAD - 1))
        return bad(c, "not a stack record (its first line is not '%s%s')", HEAD, VERSION);
    if (c->len != sizeof HEAD - 1 + sizeof VERSION - 1 || memcmp(c->line + sizeof HEAD - 1, VERSION, sizeof VERSION - 1))
        return bad(c, "a stack record of version %.*s: this library reads version %s",
                   (int)(c->len - (sizeof HEAD - 1) > 20 ? 20 : c->len - (sizeof HEAD - 1)),
                   c->line + sizeof HEAD - 1, VERSION);
    if (!next_line(c))
        return cut(c, "its profile: line");
    v = field(c, "profile: fnv1a64:", &vlen);
    if (v == NULL || vlen != 16 || strspn(v, "0123456789abcdef") < 16)
        return bad(c, "not 'profile: fnv1a64:' and 16 hex digits");
    memcpy(r->profile, v, 16);
    r->profile[16] = '\0';
    if (!next_line(c))
        return cut(c, "its events: line");
    v = field(c, "events:", &vlen);
    if (v == NULL || vlen == 0)
        return bad(c, "not 'events:' and the names of the events");
    for (i = 0; i < vlen; i++)
        r->nev += v[i] == ' ' && (i + 1 == vlen || v[i + 1] != ' ');
    if (r->nev > CG_REC_MAX_EV)
        return bad(c, "%zu events: a stack record has at most %d", r->nev, CG_REC_MAX_EV);
    r->events = calloc(r->nev ? r->nev : 1, sizeof *r->events);
    if (r->events == NULL)
        return CG_ENOMEM;
    r->nev = 0;
    for (i = 0; i < vlen;) {
        size_t j;
        if (v[i] != ' ')
            return bad(c, "not 'events:' and the names of the events, one blank before each");
        for (j = ++i; j < vlen && v[j] != ' '; j++)
            ;
        if (j == i)
            return bad(c, "not 'events:' and the names of the events, one blank before each");
        r->events[r->nev].ptr = v + i;
        r->events[r->nev++].len = j - i;
        i = j;
    }
    return CG_OK;
}

/* The functions: "functions: N", then N lines FILE<tab>NAME. */
static int functions(Cur *c)
{
    CgRec *r = c->r;
    size_t i;
    int rc = count_line(c, "functions: ", (uint64_t)(c->end - c->p) / 2, &r->nfn);
    if (rc != CG_OK)
        return rc;
    r->files = malloc((r->nfn ? r->nfn : 1) * sizeof *r->files);
    r->names = malloc((r->nfn ? r->nfn : 1) * sizeof *r->names);
    if (r->files == NULL || r->names == NULL)
        return CG_ENOMEM;
    for (i = 0; i < r->nfn; i++) {
        const char *tab;
        if (!next_line(c))
            return cut(c, "all its functions");
        tab = memchr(c->line, '\t', c->len);
        if (tab == NULL || memchr(tab + 1, '\t', c->len - (size_t)(tab + 1 - c->line)))
            return bad(c, "not a function (its file, a tab, its name)");
        r->files[i].ptr = c->line;
        r->files[i].len = (size_t)(tab - c->line);
        r->names[i].ptr = tab + 1;
        r->names[i].len = c->len - r->files[i].len - 1;
    }
    return CG_OK;
}

/* One node line: distance back to the parent, function, costs. */
static int node(Cur *c, size_t i)
{
    CgRec *r = c->r;
    const char *s = c->line, *e = c->line + c->len;
    int64_t d, f;
    size_t k;
    if (!number(&s, e, 0, &d) || s >= e || *s++ != ' ' || !number(&s, e, 0, &f))
        goto no;
    if (d < 1 || (uint64_t)d > (uint64_t)i + 1)
        return bad(c, "node %zu: its parent is %lld nodes back, before the first node", i + 1, (long long)d);
    if (f < 1 || (uint64_t)f > r->nfn)
        return bad(c, "node %zu: function %lld, not one of the %zu functions", i + 1, (long long)f, r->nfn);
    r->parent[i] = (int32_t)((int64_t)i - d);
    r->fn[i] = (int32_t)(f - 1);
    for (k = 0; k < r->nev; k++)
        if (s >= e || *s++ != ' ' || !number(&s, e, 1, &r->cost[i * r->nev + k]))
            goto no;
    if (s == e)
        return CG_OK;
no:
    return bad(c, "not a node (its distance back to its parent, its function, %zu cost%s, one blank between)",
               r->nev, r->nev == 1 ? "" : "s");
}

static int nodes(Cur *c)
{
    CgRec *r = c->r;
    size_t i;
    int rc = count_line(c, "nodes: ", (uint64_t)(c->end - c->p) / 4, &r->n);
    if (rc != CG_OK)
        return rc;
    if (r->n > (size_t)INT32_MAX)
        return bad(c, "more than 2^31 - 1 nodes");
    r->parent = malloc((r->n ? r->n : 1) * sizeof *r->parent);
    r->fn = malloc((r->n ? r->n : 1) * sizeof *r->fn);
    r->cost = malloc((r->n ? r->n : 1) * (r->nev ? r->nev : 1) * sizeof *r->cost);
    if (r->parent == NULL || r->fn == NULL || r->cost == NULL)
        return CG_ENOMEM;
    for (i = 0; i < r->n; i++) {
        if (!next_line(c)) {
            char what[64];
            snprintf(what, sizeof what, "its node %zu (of %zu)", i + 1, r->n);
            return cut(c, what);
        }
        rc = node(c, i);
        if (rc != CG_OK)
            return rc;
    }
    return CG_OK;
}

/* The end line, the last, and the digest of every byte before it. */
static int end_line(Cur *c, const char *buf)
{
    const char *at, *v;
    size_t vlen, i;
    uint64_t want = 0;
    if (!next_line(c))
        return cut(c, "its last line '" CG_WRITTEN_DIGEST "...'");
    at = c->line;
    v = field(c, CG_WRITTEN_DIGEST, &vlen);
    if (v == NULL || vlen != 16 || strspn(v, "0123456789abcdef") < 16)
        return bad(c, "not the end line '" CG_WRITTEN_DIGEST "' and 16 hex digits");
    for (i = 0; i < 16; i++)
        want = want << 4 | (uint64_t)(v[i] <= '9' ? v[i] - '0' : v[i] - 'a' + 10);
    if (c->p != c->end)
        return bad(c, "the record goes on after its end line");
    if (cg_fnv1a(CG_FNV_OFFSET, buf, (size_t)(at - buf)) != want)
        return bad(c, "the record was changed after it was written: its digest (this line) does not match its content");
    return CG_OK;
}

int cg_rec_parse(CgRec *r, const char *buf, size_t len, const char *name)
{
    Cur c;
    int rc;
    memset(r, 0, sizeof *r);
    memset(&c, 0, sizeof c);
    c.p = buf;
    c.end = buf + len;
    c.name = name;
    c.r = r;
    rc = head(&c);
    if (rc == CG_OK)
        rc = functions(&c);
    if (rc == CG_OK)
        rc = nodes(&c);
    if (rc == CG_OK)
        rc = end_line(&c, buf);
    return rc;
}

void cg_rec_free(CgRec *r)
{
    free(r->events);
    free(r->files);
    free(r->names);
    free(r->parent);
    free(r->fn);
    free(r->cost);
    memset(r, 0, sizeof *r);
}
