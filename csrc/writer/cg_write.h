/* The profile writer: a loaded profile (cg_profile.h) written through the
 * emitter (cg_emit.h) in a canonical order. prof:write and baselines write
 * with it. No lua.h. */
#ifndef CG_WRITE_H
#define CG_WRITE_H

#include "cg_emit.h"

struct CgProfile;

typedef struct CgWriteOpts {
    int compress;                /* as cg_writer_init_* */
    int pid;                     /* 0: no pid: line; 1: as loaded (it
                                    changes at every run); 2: in a profile
                                    of several parts, each process
                                    numbered 1, 2... in order of its first
                                    part (KCachegrind labels a part by its
                                    pid: "PID 1, section 2, thread 3";
                                    without one, by the file's name);
                                    thread: always */
    int cmd;                     /* 0: no cmd: line (it holds local
                                    paths); 1: as loaded; 2: cmd_text in
                                    every part */
    CgStr cmd_text;
    const CgWriteEvent *event_lines;  /* event: lines of the first part
                                    (long names, formulas: the Lua layer
                                    knows them) */
    size_t nevent_lines;
    const uint8_t *only;         /* NULL, or per function: 1 to write it
                                    (its lines, jumps and calls out of
                                    it); totals: are then the sums of
                                    what was written */
} CgWriteOpts;

/* Writes P canonically: parts in order; in each, the functions sorted by
 * (object, file, name) bytewise, each with its cost lines in file order,
 * then its calls sorted by (callee object, file, name, call site), then
 * its jumps in file order; creator: as loaded; pid: as opts->pid says;
 * cmd: as opts->cmd says; totals: as loaded when the whole profile is
 * written (a mismatch stays one), else the sums. Writing the same
 * numbers twice gives the same bytes, whatever order the loaded file had. Returns the writer's
 * status, or CG_ENOMEM for its own scratch. */
CG_HIDDEN int cg_write_profile(CgWriter *w, const struct CgProfile *P,
                               const CgWriteOpts *opts);

/* cg_write_profile into w, made a writer to path (written through a
 * temporary renamed into place, cg_atomic.h) or, path NULL, to the open
 * stream f (left open), under the SIGXFSZ guard; w is freed after. CG_OK,
 * or a status with msg filled ("path: reason", or the reason alone for a
 * stream). */
CG_HIDDEN int cg_write_profile_to(CgWriter *w, const struct CgProfile *P,
                                  const CgWriteOpts *opts, const char *path,
                                  FILE *f, char *msg, size_t msgsize);

#endif
