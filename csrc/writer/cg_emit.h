/* The emitter (CgWriter, cg_write_*): writes callgrind-format text to a
 * growable memory buffer, a file descriptor or a stdio stream, with name
 * compression as KCachegrind reads it. No lua.h. It needs no CgProfile:
 * the profile writer (cg_write.h) walks a loaded profile into it, and the
 * Lua profiler writes through it (from C, or from Lua through
 * internal.emitter, csrc/binding/cg_lua_write.c). One writer for prof:write,
 * baselines and the profiler.
 *
 * Compression ids (KCachegrind's rule, also valgrind's): a function id
 * stands for one (object, file, name), never for a name string alone, and
 * every part defines again each id it uses (KCachegrind forgets all ids at
 * a new part). Object and file ids are per string. An id keeps its number
 * in every part (readers that keep ids across parts, callgrind_annotate
 * and this library, see the same name defined again, not a new one).
 *
 * Every file starts with CG_WRITTEN_HEAD and ends with CG_WRITTEN_END
 * (cg_profile.h): the loader takes one without its end, or with a part
 * without totals:, as cut short ("truncated").
 *
 * Names made safe (every name, cmd:, creator:, desc: value and event long
 * name): a control byte (0x00-0x1f, 0x7f), and a blank at the start or
 * end of a name, is written as the four characters \xHH (a newline becomes
 * "\x0a"); the name then reads back as that visible text. A name starting
 * with "(N)" is always written with an id of its own, so it reads back as
 * itself, compressed or not; an empty name is written plain ("fn="). A
 * '#' inside or at the start of a name needs nothing (only a line starting
 * with '#' is a comment).
 *
 * Errors are sticky: after the first failure (out of memory, a failed
 * write) every call does nothing and returns it (CG_ENOMEM, or CG_EIO with
 * w->err the errno). Calls need not be checked one by one; check once at
 * the end.
 *
 * Call order: cg_writer_init_*; cg_write_begin once; then per part
 * cg_write_part, then per function cg_write_fn followed by its cost lines
 * (cg_write_line, with cg_write_fi to change their source file), calls
 * (cg_write_call) and jumps (cg_write_jump) in any order; cg_write_totals
 * ends the part; cg_write_end (which flushes); cg_writer_free (always,
 * also after an error). */
#ifndef CG_EMIT_H
#define CG_EMIT_H

#include "cg_common.h"

#include <stdio.h>

/* A function as the file names it: object and file may be absent (ptr
 * NULL: no ob=/fl= is written for it, and it inherits the ones in force,
 * as the format reads it). hint: 0, or a number the caller gives this
 * (object, file, name) alone, under which the writer remembers its id
 * (the profile writer gives function index + 1): no hashing of the names
 * at each call. */
typedef struct CgWriteFn {
    CgStr obj, file, name;
    uint32_t hint;
} CgWriteFn;

/* An event column: its name, and for event: lines its long name and
 * formula (ptr NULL when absent; a formula makes it a derived event,
 * which is written as an event: line only, never as a column). */
typedef struct CgWriteEvent {
    CgStr name, long_name, formula;
} CgWriteEvent;

/* A desc: line: "desc: TYPE: VALUE". */
typedef struct CgWriteDesc {
    CgStr type, value;
} CgWriteDesc;

/* A part's header. Lines are written in callgrind's own order: pid:, cmd:,
 * part:, thread:, desc:, positions:, event:, events:, summary:. */
typedef struct CgWritePart {
    int has_pid, has_thread, has_number;
    int64_t pid, thread, number;         /* part: N; thread: N; pid: N */
    CgStr cmd;                           /* ptr NULL: no cmd: line */
    const CgWriteDesc *desc;
    size_t ndesc;
    int npos;                            /* 1..CG_MAX_POSITIONS */
    const CgStr *posname;                /* "instr", "bb", "line", ... */
    const uint8_t *poskind;              /* CG_POS_*: INSTR and BB are
                                            written in hex, others decimal */
    const CgWriteEvent *event_lines;     /* event: lines, in this order */
    size_t nevent_lines;
    const CgStr *events;                 /* the events: columns */
    size_t nev;
    const int64_t *summary;              /* nev values, or NULL: none */
} CgWritePart;

/* Output targets. */
enum { CG_WOUT_MEM = 0, CG_WOUT_FD = 1, CG_WOUT_FILE = 2 };

/* Buffer size of a file target: writes go out in pieces of this size.
 * 64 KiB, one buffer reused: a 1 MiB one was fresh memory at each file,
 * and on these guests a 4 KiB page faulted in takes 13 to 16
 * microseconds (bench/page_cost.c; the 671 KB stack record of luacheck's
 * run: 170 faults, 2 ms); a write(2) of 64 KiB costs its copy into the
 * page cache, as one of 1 MiB does. */
#define CG_WRITE_BUF ((size_t)64 << 10)

/* A name -> id table of one kind (private to cg_emit.c). */
typedef struct CgWriteIds {
    uint64_t *hash;              /* per slot: key hash */
    uint32_t *id;                /* per slot: id, 0 = empty */
    uint32_t *key;               /* per slot: offset of the key in keys */
    uint32_t *part;              /* per slot: the part that last defined
                                    it (ids keep their number across
                                    parts, and are defined again in each
                                    part that uses them) */
    size_t cap, n;               /* slots (a power of two), used */
    char *keys;                  /* the keys' bytes, length-prefixed */
    size_t keys_len, keys_cap;
} CgWriteIds;

/* The emitter. Its fields are private to cg_emit.c; the struct is here so
 * a caller can hold one anywhere (a Lua userdata, the stack). */
typedef struct CgWriter {
    int out;                     /* CG_WOUT_* */
    int fd;
    FILE *file;
    int status;                  /* CG_OK, CG_ENOMEM or CG_EIO */
    int err;                     /* errno of a failed write */
    char *buf;
    size_t len, cap;
    uint64_t written;            /* bytes passed to write(2) */
    uint64_t digest;             /* FNV-1a of the bytes sent out so far */
    int no_digest;               /* a file with no end line (folded
                                    stacks): no digest kept */
    int compress;                /* (N) ids and relative positions */

    /* the part in writing */
    int in_part, parts;
    int npos;
    uint8_t hex[CG_MAX_POSITIONS];
    uint64_t base[CG_MAX_POSITIONS];
    int have_base;
    size_t nev;
    CgWriteIds ids[3];           /* objects, files, functions (triples) */
    uint32_t next_id[3];
    /* the names in force, compared by content: the strings given to
     * cg_write_fn, _fi, _call and _jump must stay valid until the part
     * ends */
    CgStr ob, fl, lfile, fn;
    int has_ob, has_fl, has_fn;
    CgWriteFn cur;               /* the function of the lines */
    char *kbuf;                  /* a function's id key */
    size_t kcap;
    uint32_t *hint_id, *hint_part;   /* by CgWriteFn.hint: its fn id and
                                        the part that last defined it */
    size_t hint_cap;
} CgWriter;

/* A writer into memory (cg_writer_data gives the bytes). compress: 1 for
 * "(N) name" ids and relative positions, 0 to write names and positions
 * whole (names like "(3)" still get an id). */
CG_HIDDEN void cg_writer_init_mem(CgWriter *w, int compress);
/* A writer to fd (not closed by the writer), buffered by CG_WRITE_BUF. */
CG_HIDDEN void cg_writer_init_fd(CgWriter *w, int fd, int compress);
/* A writer to a stdio stream (fwrite in CG_WRITE_BUF pieces; fflush at
 * cg_writer_flush; not closed). */
CG_HIDDEN void cg_writer_init_file(CgWriter *w, FILE *f, int compress);
/* Writes out what is buffered (fd target); returns the status. */
CG_HIDDEN int cg_writer_flush(CgWriter *w);
/* Records a failure of the caller's own (out of memory for its scratch:
 * status CG_ENOMEM, err ENOMEM) as the writer's, unless it has one. */
CG_HIDDEN void cg_writer_fail(CgWriter *w, int status, int err);
/* Memory target: the bytes written so far (not NUL-terminated). */
CG_HIDDEN const char *cg_writer_data(const CgWriter *w, size_t *len);
/* Frees what the writer holds; the fd stays open. Safe to call twice. */
CG_HIDDEN void cg_writer_free(CgWriter *w);

/* "# callgrind format", a comment that says the file ends with "# end"
 * (CG_WRITTEN_HEAD: the loader then takes a file without it as cut
 * short), "version: 1" and "creator:" when creator.ptr is not NULL. Once,
 * first. */
CG_HIDDEN int cg_write_begin(CgWriter *w, CgStr creator);

/* Starts a part (ends none: call cg_write_totals first): a blank line
 * before all but the first, the header lines, and a fresh id table and
 * position base. */
CG_HIDDEN int cg_write_part(CgWriter *w, const CgWritePart *p);

/* Starts the records of function f: ob= and fl= when they differ from
 * the ones in force, then fn=. The line file is reset to f's file. */
CG_HIDDEN int cg_write_fn(CgWriter *w, const CgWriteFn *f);

/* Sets the source file of the following cost lines, calls and jumps:
 * fi= (fe= when it is the function's own file) when it changes. */
CG_HIDDEN int cg_write_fi(CgWriter *w, CgStr file);

/* A cost line: npos positions (relative to the previous line of the part
 * when compressing), then ncost costs with trailing zeros dropped. */
CG_HIDDEN int cg_write_line(CgWriter *w, const uint64_t *pos,
                            const int64_t *cost, size_t ncost);

/* A call to callee: cob= (when its object differs from the one in force),
 * cfi= (when it has a file), cfn=, "calls=COUNT TARGET" with target
 * positions absolute, then the call's line: pos and inclusive costs as in
 * cg_write_line. target may be NULL (zeros). */
CG_HIDDEN int cg_write_call(CgWriter *w, const CgWriteFn *callee,
                            uint64_t count, const uint64_t *target,
                            const uint64_t *pos, const int64_t *cost,
                            size_t ncost);

/* A jump: jfi= when target_file differs from the line file, jfn= when to
 * is not the current function (to NULL: the current function), then
 * "jump=COUNT TARGET" or, when conditional, "jcnd=COUNT/EXECUTED TARGET",
 * then the source position line. */
CG_HIDDEN int cg_write_jump(CgWriter *w, int conditional, uint64_t count,
                            uint64_t executed, const CgWriteFn *to,
                            CgStr target_file, const uint64_t *target,
                            const uint64_t *pos);

/* "totals: ..." (nev values of the part) and ends the part. NULL ends the
 * part with no totals: line. */
CG_HIDDEN int cg_write_totals(CgWriter *w, const int64_t *totals);

/* Ends the file: "# end" (CG_WRITTEN_END), then cg_writer_flush. A file
 * begun by cg_write_begin and not ended so loads with a "truncated"
 * warning. */
CG_HIDDEN int cg_write_end(CgWriter *w);

/* Text as is, for a line the API does not cover (a "# comment\n"): the
 * caller makes it safe. */
CG_HIDDEN int cg_write_raw(CgWriter *w, const char *s, size_t len);

#endif
