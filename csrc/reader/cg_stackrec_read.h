/* The stack record's reader (the format: docs/format.md, "The stack
 * record"; its writer: csrc/writer/cg_stackrec.h). A record is read whole
 * from memory and checked whole: its head, every node line, its end line
 * and its digest; a bad one gives "NAME:LINE: reason". No lua.h. */
#ifndef CG_STACKREC_READ_H
#define CG_STACKREC_READ_H

#include "cg_common.h"

typedef struct CgRec {
    char profile[17];           /* the profile's digest, 16 hex digits */
    size_t nev;
    CgStr *events;              /* into the buffer read */
    size_t nfn;
    CgStr *files, *names;       /* into the buffer read */
    size_t n;
    int32_t *parent;            /* -1: a root; else an earlier node */
    int32_t *fn;                /* 0-based, < nfn */
    int64_t *cost;              /* n * nev, node by node */
    char msg[512];              /* a failure: "NAME:LINE: reason" */
} CgRec;

/* Reads the record in buf[0, len) (name for messages) into r, whose
 * strings point into buf. CG_OK; CG_EBAD (r->msg says why and where);
 * CG_ENOMEM. Free r with cg_rec_free either way. */
CG_HIDDEN int cg_rec_parse(CgRec *r, const char *buf, size_t len,
                           const char *name);
CG_HIDDEN void cg_rec_free(CgRec *r);

#endif
