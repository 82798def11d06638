#!/usr/bin/env bash
# make bench, a process per test (issue 43, point 3): what profiling costs
# a suite that starts one interpreter per test, where the start-up and the
# writing of each profile are paid every time.
#  1. The start-up in instructions (valgrind, deterministic): an empty
#     script under plain lua5.4, lua5.4 -lcallgrind.start (the hook
#     engine), the counting interpreter alone and with -lcallgrind.start;
#     the whole process, and up to the script's first line (valgrind
#     --dump-before=difftime, which the script's one line calls); then
#     the same without malloc's fast bins (GLIBC_TUNABLES=
#     glibc.malloc.mxfast=0), as spec/profiler_start_spec.lua counts: with
#     them, lua_close's last free may or may not run malloc_consolidate
#     (about 29 thousand instructions) as earlier blocks happen to lie.
#  2. `callgrind-lua exec` against the interpreter started directly: the
#     cpu time it adds (median of LUA_BENCH_PAIRS alternating pairs of an
#     empty script; target <= 5 ms).
#  3. Penlight's 37 tests/test-*.lua, one process each, and busted over
#     Penlight's spec/ (one process, --ignore-lua): plain lua5.4, the
#     counting interpreter with -lcallgrind.start (lines: the default) and
#     the hook engine (lua5.4 -lcallgrind.start); each round runs every
#     test under the three in turn; the ratio is the round's cpu time over
#     plain lua5.4's, the median over the rounds (target: counting engine
#     <= 1.35x).
# Run from anywhere; LUA, CC and BUILD as for run.sh.
. "$(dirname "$0")/lua_common.sh"
PAIRS=${LUA_BENCH_PAIRS:-9}
VM=${CALLGRIND_VM:-$BUILD/bin/callgrind-lua5.4}
[ -x "$VM" ] || { echo "bench: no $VM (make vm)" >&2; exit 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
# cpu_any CMD...: as cpu, whatever CMD's exit status (busted's is 1 when a
# spec fails: one of Penlight's does under --ignore-lua, under all three)
cpu_any() {
    "$BUILD/bench/cputime" "$tmp/time" "$@" > /dev/null 2>&1 || true
    cat "$tmp/time"
}

# 1. instructions of an empty script (one line that calls os.difftime)
echo 'os.difftime(1, 2)' > "$tmp/empty.lua"
# ir CMD...: "whole first-line" instructions of one run, in the
# environment IR_ENV adds (NAME=VALUE words)
ir() {
    rm -f "$tmp"/vg.out*
    env $IR_ENV valgrind --tool=callgrind --dump-before=difftime --callgrind-out-file="$tmp/vg.out" "$@" \
        > /dev/null 2> "$tmp/vg.err" || { cat "$tmp/vg.err" >&2; return 1; }
    local first rest
    first=$(awk '/^summary:/ { print $2; exit }' "$tmp/vg.out.1")
    rest=$(awk '/^summary:/ { print $2; exit }' "$tmp/vg.out")
    echo "$((first + rest)) $first"
}
# rows NOTE: the table's rows, each run in IR_ENV's environment
rows() {
    local p_all p_first v_all v_first a f
    read -r p_all p_first < <(ir "$LUA" "$tmp/empty.lua")
    read -r v_all v_first < <(ir "$VM" "$tmp/empty.lua")
    printf "%-34s %12s %7s %12s %7s\n" "an empty script$1" "whole Ir" "ratio" "to line 1" "ratio"
    printf "%-34s %12s %7s %12s %7s\n" "lua5.4" "$p_all" "" "$p_first" ""
    read -r a f < <(ir "$LUA" -lcallgrind.start "$tmp/empty.lua")
    printf "%-34s %12s %7s %12s %7s\n" "lua5.4 -lcallgrind.start" "$a" "$(cell "$(ratio "$a" "$p_all")" 1.5)" \
        "$f" "$(cell "$(ratio "$f" "$p_first")" 1.5)"
    printf "%-34s %12s %7s %12s %7s\n" "callgrind-lua5.4" "$v_all" "" "$v_first" ""
    read -r a f < <(ir "$VM" -lcallgrind.start "$tmp/empty.lua")
    printf "%-34s %12s %7s %12s %7s\n" "callgrind-lua5.4 -lcallgrind.start" "$a" \
        "$(cell "$(ratio "$a" "$v_all")" 1.5)" "$f" "$(cell "$(ratio "$f" "$v_first")" 1.5)"
}
IR_ENV='' rows ""
IR_ENV=GLIBC_TUNABLES=glibc.malloc.mxfast=0 rows " (no fast bins)"
echo "ratios: over the same interpreter without the profiler (target <= 1.5x, \"!\": over)"
echo

# 2. what callgrind-lua exec adds to the interpreter started directly
: > "$tmp/d_exec"
for ((i = 0; i < PAIRS; i++)); do
    a=$(cpu "$VM" -lcallgrind.start "$tmp/empty.lua")
    b=$(cpu "$root/bin/callgrind-lua" exec "$tmp/empty.lua")
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >> "$tmp/d_exec"
done
d=$(median < "$tmp/d_exec")
printf "callgrind-lua exec adds %s ms of cpu to callgrind-lua5.4 -lcallgrind.start (median of %s pairs; target <= 5 ms)%s\n" \
    "$d" "$PAIRS" "$(awk -v d="$d" 'BEGIN { if (d > 5) printf " !" }')"
echo

# 3. Penlight's tests, a process each; busted over its spec/
SRC=$(sh tools/penlight_src.sh "$BUILD")
busted_bin=$(command -v busted || true)
cd "$SRC"
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;$LUA_PATH"
: > "$tmp/r_vm"; : > "$tmp/r_hook"; : > "$tmp/plain"; : > "$tmp/b_vm"; : > "$tmp/b_hook"; : > "$tmp/b_plain"
n=$(ls tests/test-*.lua | wc -l)
for ((i = 0; i < PAIRS; i++)); do
    p=0; v=0; h=0
    for t in tests/test-*.lua; do
        p=$(awk -v s="$p" -v x="$(cpu "$LUA" "$t")" 'BEGIN { print s + x }')
        v=$(awk -v s="$v" -v x="$(cpu "$VM" -lcallgrind.start "$t")" 'BEGIN { print s + x }')
        h=$(awk -v s="$h" -v x="$(cpu "$LUA" -lcallgrind.start "$t")" 'BEGIN { print s + x }')
    done
    echo "$p" >> "$tmp/plain"
    ratio "$v" "$p" >> "$tmp/r_vm"
    ratio "$h" "$p" >> "$tmp/r_hook"
    if [ -n "$busted_bin" ]; then
        p=$(cpu_any "$LUA" "$busted_bin" --ignore-lua -o TAP spec)
        v=$(cpu_any "$VM" -lcallgrind.start "$busted_bin" --ignore-lua -o TAP spec)
        h=$(cpu_any "$LUA" -lcallgrind.start "$busted_bin" --ignore-lua -o TAP spec)
        echo "$p" >> "$tmp/b_plain"
        ratio "$v" "$p" >> "$tmp/b_vm"
        ratio "$h" "$p" >> "$tmp/b_hook"
    fi
done
printf "%-36s %8s %12s %12s\n" "Penlight" "plain s" "vm lines" "hook lines"
printf "%-36s %8s %12s %12s\n" "$n tests/test-*.lua, a process each" "$(median < "$tmp/plain")" \
    "$(cell "$(median < "$tmp/r_vm")" 1.35)" "$(cell "$(median < "$tmp/r_hook")" "")"
if [ -n "$busted_bin" ]; then
    printf "%-36s %8s %12s %12s\n" "busted --ignore-lua spec/" "$(median < "$tmp/b_plain")" \
        "$(cell "$(median < "$tmp/b_vm")" 1.35)" "$(cell "$(median < "$tmp/b_hook")" "")"
fi
echo "cpu seconds (user + sys) of plain lua5.4 (a round: every test); ratios: median over $PAIRS rounds of"
echo "the round's cpu time over plain lua5.4's; vm lines = build/bin/callgrind-lua5.4 -lcallgrind.start,"
echo "hook lines = lua5.4 -lcallgrind.start; target vm lines <= 1.35x (\"!\": over)"
