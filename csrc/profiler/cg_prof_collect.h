/* The hook engine (cg_prof_collect.c): a C debug hook charging the
 * records at each call, return and line event. Layer 5 of profiler/
 * (spec/layout_c_spec.lua), beside the counting engine and independent of
 * it: it uses functions and their records, the records, the data, the
 * maps and the Lua 5.4 shortcuts; the state's layer above starts and stops
 * it. The hook and everything it calls on its fast paths stay in
 * cg_prof_collect.c, one translation unit (their speed depends on it, and
 * on the inline functions of cg_prof_base.h); what it calls only on a
 * slow path (a first sight, a miss, growth) is apart: functions
 * (cg_prof_fold.c), the records (cg_prof_records.c), the maps
 * (cg_prof_map.c).
 *
 * Counting. The fast way reads the interpreter's own per-instruction hook
 * counter (cg_l54_hookcount) at each call, return and line event: the
 * exact number of instructions since the last event, with no hook call
 * per instruction (lines = false sets a count hook of 2^31 - 1 instead of
 * the line hook, to keep the counter counting). Where the counter cannot
 * be found, or when asked (opts.count_hook), a count hook with count 1
 * counts the same instructions one hook call at a time. On the counting
 * interpreter (engine vm, Instr only: P->direct) the VM itself keeps the
 * calls, stacks and per-pc counts, with debug.sethook left to the user
 * (cg_prof_direct.c); with time or alloc the debug hook reads its clock.
 *
 * Finalizers run with hooks off while the counter keeps counting: the
 * automatic collector is stopped while profiling and stepped from the
 * hook (cg_prof_gc_step), where what finalizers run is nobody's; what a collection
 * inside a C function (collectgarbage) runs is counted while that C
 * function is on top, and C functions are charged no instructions. A count
 * hook sees neither: the two ways agree.
 *
 * Attribution. At each event the instructions since the last one go to the
 * function, line and stack node on top of the thread's shadow stack; at a
 * line event the counter already includes the new line's first
 * instruction, so one is kept for it. A call pushes a frame; its return
 * adds 1 to the call site's count, and the clock's advance to its
 * inclusive cost when no other frame of the callee is active (recursion is
 * counted once, so no call costs more than the total). Frames are matched
 * to the interpreter's CallInfo (ar->i_ci): frames that an error unwound
 * are popped at the next event of a frame below them; a tail call keeps
 * the replaced frame under the callee (same CallInfo) and both pop at the
 * callee's return, except a function tail-calling itself, which keeps its
 * one frame. Each coroutine has its own stack and clock; a clock stops
 * while its coroutine is suspended, so resume costs what ran until the
 * yield, and a resumed coroutine's stack nodes move under the resume. */
#ifndef CG_PROF_COLLECT_H
#define CG_PROF_COLLECT_H

#include "cg_prof_base.h"

/* The debug hook (the probes of the Lua 5.4 shortcuts run it). */
CG_HIDDEN lua_Hook cg_prof_collect_hook(void);
/* A start, up to its clock: raises when another debug hook is set (the
 * hook engine); the threads' records, the frames from level down (the
 * hook engine), the allocator. The counting engine starts between this
 * and cg_prof_collect_clock. */
CG_HIDDEN void cg_prof_collect_begin(Prof *P, lua_State *L, int level);
/* The start's end: the hook set (the hook engine), the clocks read, the
 * collector taken; running. */
CG_HIDDEN void cg_prof_collect_clock(Prof *P, lua_State *L);
/* The hook engine's stop: charges what ran since the last event, drops
 * the frame of the C function stopping (level 0) when it is on the stack,
 * closes every open frame, removes the hook. Returns 0 when the hook was
 * replaced. */
CG_HIDDEN int cg_prof_collect_stop(Prof *P, lua_State *L);

#endif
