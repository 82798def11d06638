#!/usr/bin/env bash
# make bench, the stack record's targets (issue 43, point 1), on luacheck
# over Penlight's source (bench/luacheck_dir.lua; the source is
# tools/penlight_src.sh's, or PENLIGHT_SRC=DIR) under the counting
# interpreter (make vm) with -lcallgrind.start:
# - its size: the record (CALLGRIND_STACKS=1, FILE.stacks) against the
#   folded text of the same stacks (CALLGRIND_STACKS=folded, FILE.folded);
#   target: at most 1/20 of it;
# - callgrind-lua flame FILE and report FILE, drawn from the record: cpu
#   seconds (user + sys), the median of LUA_BENCH_PAIRS runs (default 9);
#   target: under 1 s each;
# - +stacks: the run with CALLGRIND_STACKS=1 over the same run without,
#   the median of the per-pair cpu ratios (pairs in turn); target 1.1x
#   (bench/lua_vm.sh gives the same column on every workload of bench/lua/).
# "!" marks a number over its target. First, what fresh memory costs on
# this machine (bench/page_cost.c, one round of 10 MiB): the stacks' share
# of +stacks grows with it. LUA, CC and BUILD as for run.sh.
. "$(dirname "$0")/lua_common.sh"
PAIRS=${LUA_BENCH_PAIRS:-9}
VM=${CALLGRIND_VM:-$BUILD/bin/callgrind-lua5.4}
[ -x "$VM" ] || { echo "bench: no $VM (make vm)" >&2; exit 1; }
"$CC" -std=c99 -O2 -Wall -Wextra -o "$BUILD/bench/page_cost" bench/page_cost.c
echo "fresh memory here (bench/page_cost.c):"
"$BUILD/bench/page_cost" 10 1 | sed 's/^/  /'
src=${PENLIGHT_SRC:-$BUILD/penlight/src}
[ -d "$src" ] || { echo "bench: no Penlight source in $src (sh tools/penlight_src.sh $BUILD)" >&2; exit 1; }
w=bench/luacheck_dir.lua
rec=$tmp/rec.out
CALLGRIND_STACKS=1 CALLGRIND_OUT=$rec "$VM" -lcallgrind.start "$w" "$src" > /dev/null
CALLGRIND_STACKS=folded CALLGRIND_OUT=$tmp/fold.out "$VM" -lcallgrind.start "$w" "$src" > /dev/null
rb=$(wc -c < "$rec.stacks")
fb=$(wc -c < "$tmp/fold.out.folded")
nodes=$(sed -n 's/^nodes: //p' "$rec.stacks")
lines=$(wc -l < "$tmp/fold.out.folded")
share=$(awk -v r="$rb" -v f="$fb" 'BEGIN { printf "%.4f", r / f }')
mark=$(awk -v s="$share" 'BEGIN { print (s > 0.05) ? "!" : "" }')
echo "luacheck over Penlight's source ($src), the counting engine:"
printf "  record %s bytes (%s nodes), folded text %s bytes (%s stacks): %s of it, 1/%.0f%s (target: at most 1/20)\n" \
    "$rb" "$nodes" "$fb" "$lines" "$share" "$(awk -v s="$share" 'BEGIN { print 1 / s }')" "$mark"
rm -f "$tmp/fold.out.folded"
: > "$tmp/flame"; : > "$tmp/report"; : > "$tmp/r_stacks"
for ((i = 0; i < PAIRS; i++)); do
    cpu "$LUA" bin/callgrind-lua flame "$rec" -o "$tmp/x.svg" >> "$tmp/flame"
    cpu "$LUA" bin/callgrind-lua report "$rec" -o "$tmp/x.html" >> "$tmp/report"
    l=$(cpu "$VM" -lcallgrind.start "$w" "$src")
    s=$(CALLGRIND_STACKS=1 cpu "$VM" -lcallgrind.start "$w" "$src")
    awk -v a="$s" -v b="$l" 'BEGIN { print a / b }' >> "$tmp/r_stacks"
done
grep -q "(stacks from $rec.stacks)" "$tmp/x.svg" || { echo "bench: the flame graph is not the record's" >&2; exit 1; }
for what in flame report; do
    m=$(median < "$tmp/$what")
    printf "  callgrind-lua %-6s FILE: %s s cpu%s (target: under 1 s)\n" "$what" "$m" \
        "$(awk -v m="$m" 'BEGIN { print (m >= 1) ? "!" : "" }')"
done
echo "  +stacks (CALLGRIND_STACKS=1 over the same run without): $(cell "$(median < "$tmp/r_stacks")" 1.1) (target 1.1x)"
echo "cpu = user + sys seconds, the median of $PAIRS runs; +stacks: the median of $PAIRS per-pair ratios"
