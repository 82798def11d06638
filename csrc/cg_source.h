/* The bytes of a file, mapped (or read once when it cannot be mapped). */
#ifndef CG_SOURCE_H
#define CG_SOURCE_H

#include "cg_common.h"

typedef struct CgSource CgSource;

/* Opens path; NULL with *errnum set (an errno value, or 0 out of memory). */
CG_HIDDEN CgSource *cg_source_open(const char *path, const char **buf,
                                   size_t *len, int *errnum);
/* Releases it; NULL is fine. */
CG_HIDDEN void cg_source_release(void *src);

#endif
