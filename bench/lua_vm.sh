#!/usr/bin/env bash
# make bench, the counting interpreter's table (issue 29's targets). Each
# workload of bench/lua/ runs under Debian's plain lua5.4 and under
# build/bin/callgrind-lua5.4 (make vm): with profiling off, then with
# -lcallgrind.start at function level (CALLGRIND_LINES=0), at line level
# (the default) and at line level with whole stacks (CALLGRIND_STACKS=1),
# all on the counting engine (its own call/return hook and per-instruction
# counts), and the hook engine at line level on plain lua5.4 (-lcallgrind.start
# there) for comparison (LUA_BENCH_ONLY=NAME: bench/lua/NAME.lua alone).
# The runs alternate LUA_BENCH_PAIRS times (default 9); each column is
# the median of the per-round ratios of cpu time (user + sys): off, fn,
# lines and hook over plain lua5.4, stacks over lines.
# Targets: off <= 1.05x, lines <= 1.35x, stacks <= 1.1x ("!": over). Under
# a workload whose stack record (FILE.stacks) passes 1 MB, a line gives what writing those
# bytes alone costs (bench/write_floor.lua) against its lines run: the
# least +stacks can be there. With
# LUA_BENCH_VALGRIND=1 four last columns give machine instructions
# (valgrind, 1 run each): plain lua5.4's, and the vm off, vm lines and
# hook lines runs' over it. Run from anywhere; LUA, CC and BUILD as for
# run.sh.
. "$(dirname "$0")/lua_common.sh"
PAIRS=${LUA_BENCH_PAIRS:-9}
VM=${CALLGRIND_VM:-$BUILD/bin/callgrind-lua5.4}
[ -x "$VM" ] || { echo "bench: no $VM (make vm)" >&2; exit 1; }

# ir CMD...: machine instructions of one run (valgrind's Ir total)
ir() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/vg.out" "$@" > /dev/null 2> "$tmp/vg.err"
    awk '/^(summary|totals):/ { print $2; exit }' "$tmp/vg.out"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
printf "%-11s %8s %8s %9s %11s %9s %10s" "workload" "plain s" "vm off" "vm fn" "vm lines" "+stacks" "hook lines"
[ "${LUA_BENCH_VALGRIND:-}" = 1 ] && printf " %14s %7s %9s %10s" "plain Ir" "off Ir" "lines Ir" "hook Ir"
printf "\n"
for w in bench/lua/${LUA_BENCH_ONLY:-*}.lua; do
    name=$(basename "$w" .lua)
    : > "$tmp/plain"; : > "$tmp/r_off"; : > "$tmp/r_fn"; : > "$tmp/r_lines"; : > "$tmp/r_stacks"; : > "$tmp/r_hook"
    : > "$tmp/lines"; rm -f "$CALLGRIND_OUT.stacks"
    for ((i = 0; i < PAIRS; i++)); do
        p=$(cpu "$LUA" "$w")
        o=$(cpu "$VM" "$w")
        f=$(CALLGRIND_LINES=0 cpu "$VM" -lcallgrind.start "$w")
        l=$(cpu "$VM" -lcallgrind.start "$w")
        s=$(CALLGRIND_STACKS=1 cpu "$VM" -lcallgrind.start "$w")
        h=$(cpu "$LUA" -lcallgrind.start "$w")
        echo "$p" >> "$tmp/plain"
        echo "$l" >> "$tmp/lines"
        ratio "$o" "$p" >> "$tmp/r_off"
        ratio "$f" "$p" >> "$tmp/r_fn"
        ratio "$l" "$p" >> "$tmp/r_lines"
        ratio "$s" "$l" >> "$tmp/r_stacks"
        ratio "$h" "$p" >> "$tmp/r_hook"
    done
    printf "%-11s %8s %8s %9s %11s %9s %10s" "$name" "$(median < "$tmp/plain")" \
        "$(cell "$(median < "$tmp/r_off")" 1.05)" "$(cell "$(median < "$tmp/r_fn")" "")" \
        "$(cell "$(median < "$tmp/r_lines")" 1.35)" "$(cell "$(median < "$tmp/r_stacks")" 1.1)" \
        "$(cell "$(median < "$tmp/r_hook")" "")"
    if [ "${LUA_BENCH_VALGRIND:-}" = 1 ]; then
        a=$(ir "$LUA" "$w")
        printf " %14s %7s %9s %10s" "$a" "$(cell "$(ratio "$(ir "$VM" "$w")" "$a")" "")" \
            "$(cell "$(ratio "$(ir "$VM" -lcallgrind.start "$w")" "$a")" "")" \
            "$(cell "$(ratio "$(ir "$LUA" -lcallgrind.start "$w")" "$a")" "")"
    fi
    printf "\n"
    # a large stack record: what writing its bytes alone costs (the floor
    # of +stacks, however cheap the stacks are to record)
    if [ "$(stat -c %s "$CALLGRIND_OUT.stacks" 2>/dev/null || echo 0)" -gt 1000000 ]; then
        read -r w_s w_bytes < <(LUA_CPATH="$BUILD/?.so;;" "$LUA" bench/write_floor.lua "$CALLGRIND_OUT.stacks" "$PAIRS")
        l_s=$(median < "$tmp/lines")
        share=$(ratio "$w_s" "$l_s")
        printf "  %s: its stack record is %s bytes; writing them alone takes %s s cpu, %.3f of its vm lines run (%s s):\n" \
            "$name" "$w_bytes" "$w_s" "$share" "$l_s"
        echo "  +stacks cannot be under $(cell "$(awk -v s="$share" 'BEGIN { print 1 + s }')" "") there"
    fi
done
echo "cpu seconds (user + sys) of plain lua5.4; ratios: median over $PAIRS alternating rounds of the"
echo "per-round ratio; vm = build/bin/callgrind-lua5.4 (make vm): off = no profiler, fn = CALLGRIND_LINES=0,"
echo "lines = the default, all over plain lua5.4; +stacks = CALLGRIND_STACKS=1 over lines;"
echo "hook lines = plain lua5.4 -lcallgrind.start (the hook engine) over plain lua5.4;"
echo "targets off <= 1.05x, lines <= 1.35x, +stacks <= 1.1x (\"!\": over)"
