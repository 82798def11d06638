/* The Lua profiler's shortcuts into Lua 5.4's private structures, fenced
 * apart from the portable collector (layer 1 of profiler/, with the maps
 * and the signals: spec/layout_c_spec.lua; it uses nothing of the
 * profiler). Each one is found
 * or checked by a probe at the first start (cg_l54_probe) and left off when
 * the probe fails: the collector then uses the public API only (a count
 * hook, lua_getinfo), with the same numbers, slower.
 *
 * Checked against Lua 5.4.0 to 5.4.6 (lstate.h, lobject.h, ldebug.c), on
 * 64-bit Linux; built here with Debian's 5.4.4. Compiled for another
 * LUA_VERSION_NUM, the probe turns every shortcut off. */
#ifndef CG_PROF_LUA54_H
#define CG_PROF_LUA54_H

#include <string.h>

#include "cg_common.h"

#include "lua.h"

/* What the probe found. -1 / 0: that shortcut is off. */
typedef struct CgL54 {
    int hc_off;                 /* lua_State.hookcount's offset */
    int proto_off;              /* LClosure.p (and CClosure.f) offset */
    int ci_ok;                  /* cg_l54_ci_key agrees with lua_getinfo */
    int prev_ok;                /* cg_l54_ci_prev agrees with lua_getstack */
} CgL54;

/* The counting interpreter's ways in (csrc/vm/, the one table the patch
 * exports, callgrind_vm_ways):
 * its profiler hook at the calls it does not keep itself, apart from the
 * user's debug.sethook (hook(L, h, ud); NULL removes it), the per-pc
 * instruction counts
 * of a prototype (counts: made on first use, kept by the prototype), the
 * line of an instruction (line: of savedpc's previous one, or of pc when
 * savedpc is NULL), and where a CallInfo keeps its saved pc and lua_State
 * the pc a Lua tail call left. All NULL / -1 in another interpreter. */
typedef struct CgVm {
    void (*hook)(lua_State *L, lua_Hook h, void *ud);
    lua_Unsigned *(*counts)(lua_State *L, const void *proto, int *n);
    int (*line)(const void *proto, const void *savedpc, int pc);
    int savedpc_off, tailpc_off;
    /* The VM keeping the calls itself (cg_prof_direct.c), NULL / -1 in an
     * interpreter without: direct(L, on) turns it on or off, every frame
     * of every thread forgetting its call either way; frame(L, ci, call,
     * how) gives frame ci its call (how 1: its Lua caller's site keeps
     * the callee; 2: a tail call whose replaced frames are pending here);
     * call_of(ci, &start) the call of a frame (NULL: none) and the clock
     * at it; close(L, skip) makes every frame of every thread leave, but
     * skip's; ud(L) the data set with the hook; where lua_State keeps
     * the thread's root (its bottom's caller here, -2 not known yet) and
     * its resumer. stacks(L, kid, tab, ud, nodes, kids), before
     * direct(L, 1), has the VM keep the stack of each frame too, kid(ud,
     * L, node, call) giving the child of a node (NULL: the outermost) for
     * a call's callee, tab(ud, L) a new table of a node's children (its
     * index), nodes and kids the arrays of nodes and of tables whose
     * offsets and indices it keeps (NULL in an interpreter without: it
     * then takes the debug hook and its clock), node_size and kidtab_size
     * the sizes of a node and of its table of children (-1: none). */
    void (*direct)(lua_State *L, int on);
    void (*stacks)(lua_State *L,
                   void *(*kid)(void *ud, lua_State *L, void *node,
                                void *call),
                   unsigned int (*tab)(void *ud, lua_State *L),
                   void *ud, void *nodes, void *kids);
    void (*frame)(lua_State *L, void *ci, void *call, int how);
    void *(*call_of)(const void *ci, lua_Unsigned *start);
    void (*close)(lua_State *L, const void *skip);
    void *(*ud)(lua_State *L);
    int (*lines)(const void *proto, int *lines); /* every pc's, or 0 */
    int root_off, from_off, node_size, kidtab_size;
    /* onfree(L, f): f is told of each prototype with counts the
     * collector frees (NULL: none); where lua_State keeps the prototype
     * a Lua tail call left */
    void (*onfree)(lua_State *L, void (*f)(lua_State *L, const void *proto,
                                           lua_Unsigned *counts, int n));
    int tailp_off;
} CgVm;

/* Fills v; returns 1 when every way was found. */
CG_HIDDEN int cg_l54_vm(CgVm *v);

/* The counting interpreter (make vm, csrc/vm/): the place of its
 * instruction clock in lua_State (an int counting down at every VM
 * instruction fetch, callgrind_vm_clock_offset in its table), or -1 in
 * another interpreter. */
CG_HIDDEN int cg_l54_vm_clock(void);

/* Runs the probes on L (hook: the collector's hook, set on a scratch
 * thread while probing). */
CG_HIDDEN void cg_l54_probe(lua_State *L, lua_Hook hook, CgL54 *k);

/* Shortcut 1, the instruction counter. Lua 5.4's luaG_traceexec
 * decrements L->hookcount before every instruction of a Lua function
 * while a line or count hook is set, whether or not a count hook is set;
 * the field's place is not public (lstate.h: `int basehookcount; int
 * hookcount;` near the end of struct lua_State). Probe: on a new thread,
 * lua_sethook with two distinct counts must show each, twice in adjacent
 * ints, at exactly one place. Lua 5.4.0-5.4.6. */
static inline int32_t cg_l54_hookcount(const CgL54 *k, const lua_State *L)
{
    int32_t h;
    memcpy(&h, (const char *)L + k->hc_off, sizeof h);
    return h;
}

/* Shortcut 2, the prototype of a Lua closure (lobject.h: LClosure's
 * `struct Proto *p` after the GC header, nupvalues and gclist; CClosure's
 * `lua_CFunction f` at the same place). Probe: two closures of one
 * prototype share the pointer, one of another prototype has another, at
 * the offset tried (24, 16, 32). Lua 5.4.0-5.4.6. */
static inline const void *cg_l54_proto(const CgL54 *k, const void *closure)
{
    const void *p;
    memcpy(&p, (const char *)closure + k->proto_off, sizeof p);
    return p;
}

/* Shortcut 3, the CallInfo reads and raw type tags: the key of the
 * function running in ci without lua_getinfo. ci->func (CallInfo's first
 * field, lstate.h) points at the function's TValue (value, then the type
 * tag, lobject.h): tag 0x06 (LUA_VLCL) a Lua closure: its prototype;
 * 0x16 (LUA_VLCF) a light C function: itself; 0x26 (LUA_VCCL) a C
 * closure: its C function. Probe: the keys of a C closure, a Lua chunk
 * and a light C function on the stack must equal lua_getinfo's. Used only
 * where the probe passed (ci_ok). Lua 5.4.0-5.4.6 (5.4.6's StkIdRel keeps
 * the pointer first). */
static inline int cg_l54_ci_key(const CgL54 *k, const void *ci,
                                uint64_t *key)
{
    const char *tv;
    const void *v;
    lua_CFunction f;
    memcpy(&tv, ci, sizeof tv);
    memcpy(&v, tv, sizeof v);
    switch (tv[sizeof v] & 0x3f) {
    case 0x06:
        *key = (uint64_t)(uintptr_t)cg_l54_proto(k, v);
        return 1;
    case 0x16:
        memcpy(&f, tv, sizeof f);
        *key = (uint64_t)(uintptr_t)f;
        return 1;
    case 0x26:
        memcpy(&f, (const char *)v + k->proto_off, sizeof f);
        *key = (uint64_t)(uintptr_t)f;
        return 1;
    default:
        return 0;
    }
}

/* Shortcut 4, the caller's CallInfo (lstate.h: CallInfo begins with
 * `func`, `top` (a pointer or StkIdRel each), then `struct CallInfo
 * *previous`): the frame below ci without lua_getstack. Probe: for each
 * of three levels, the pointer equals lua_getstack's i_ci one level up.
 * Used only where the probe passed (prev_ok). Lua 5.4.0-5.4.6. */
static inline const void *cg_l54_ci_prev(const void *ci)
{
    const void *p;
    memcpy(&p, (const char *)ci + 2 * sizeof(void *), sizeof p);
    return p;
}

/* Shortcut 4b, the saved pc of a Lua frame's CallInfo (lstate.h: the
 * field after func, top, previous and next; off: the counting
 * interpreter's own offset where it says it, else 4 pointers): the pc of
 * the generic for's call instruction (OP_TFORCALL, lopcodes.h: opcode 76
 * in the low 7 bits) just before it, or NULL. Used only where the
 * previous-CallInfo probe passed (prev_ok), whose layout it shares. Lua
 * 5.4.0-5.4.6. */
#define CG_L54_TFORCALL 76

static inline const void *cg_l54_tfor_pc(const void *ci, int off)
{
    const uint32_t *pc;
    memcpy(&pc, (const char *)ci + (off >= 0 ? (size_t)off
                                              : 4 * sizeof(void *)),
           sizeof pc);
    return pc != NULL && (pc[-1] & 0x7f) == CG_L54_TFORCALL
               ? (const void *)pc : NULL;
}

/* Shortcut 5, the allocator and its user data without lua_getallocf (a
 * call through the API at every hook event): lua_State's `global_State
 * *l_G` (lstate.h: after the GC header, status, allowhook, nci and top,
 * at CG_L54_G_OFF) points at global_State, which begins with `lua_Alloc
 * frealloc; void *ud;`. Probe: two threads share the pointer, and what
 * it points at follows lua_setallocf. One flag for every Lua state of
 * the process (one interpreter): set by the first probe that passes.
 * Lua 5.4.0-5.4.6. */
#define CG_L54_G_OFF 24
CG_HIDDEN extern int cg_l54_g_ok;
/* lua_getallocf's way: the user data when the allocator is f, else NULL. */
CG_HIDDEN void *cg_l54_alloc_ud_api(lua_State *L, lua_Alloc f);

/* The allocator's user data when the allocator of L is f, else NULL;
 * _g: only where cg_l54_g_ok. */
static inline void *cg_l54_alloc_ud_g(const lua_State *L, lua_Alloc f)
{
    const char *g;
    lua_Alloc had;
    void *ud;
    memcpy(&g, (const char *)L + CG_L54_G_OFF, sizeof g);
    memcpy(&had, g, sizeof had);
    if (had != f)
        return NULL;
    memcpy(&ud, g + sizeof had, sizeof ud);
    return ud;
}

static inline void *cg_l54_alloc_ud(lua_State *L, lua_Alloc f)
{
    return cg_l54_g_ok ? cg_l54_alloc_ud_g(L, f)
                       : cg_l54_alloc_ud_api(L, f);
}

#endif
