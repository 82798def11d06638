#!/usr/bin/env bash
# make bench, second table: the Lua profiler's overhead (issue 24's
# targets). Each workload of bench/lua/ runs plain, with a C hook on calls,
# returns and lines that does nothing (bench/lua_empty_hook.c: the
# interpreter's own cost of line-level hooks, the floor for any such
# profiler), and under our profiler (lua5.4 -lcallgrind.start, the file
# written) at function level (CALLGRIND_LINES=0), at line level (the
# default) and at line level with whole stacks (CALLGRIND_STACKS=1). The
# runs alternate (plain, empty, fn, lines, stacks; again) LUA_BENCH_PAIRS
# times (default 9; LUA_BENCH_ONLY=NAME: bench/lua/NAME.lua alone); each
# column is the median of the per-round ratios of
# cpu time (user + sys): fn and lines over plain, stacks over lines. The
# two empty-hook columns are the floors: "empty fn" a hook on calls and
# returns with the rare count hook that keeps the instruction counter
# counting (what function level needs), "empty lines" on lines too.
# Targets: fn <= 2x, lines <= 3x, stacks <= 1.3x; a ratio over its target
# is marked "!". With LUA_BENCH_VALGRIND=1 a last column gives valgrind
# --tool=callgrind (1 run) over the plain median. Run from anywhere; LUA,
# CC and BUILD as for run.sh. Needs lua-dkjson and lua-check (json.lua,
# luacheck.lua).
. "$(dirname "$0")/lua_common.sh"
PAIRS=${LUA_BENCH_PAIRS:-9}

printf "%-11s %8s %9s %11s %11s %11s %9s" "workload" "plain s" "empty fn" "fn level" "empty lines" "line level" "+stacks"
[ "${LUA_BENCH_VALGRIND:-}" = 1 ] && printf " %10s" "valgrind"
printf "\n"
for w in bench/lua/${LUA_BENCH_ONLY:-*}.lua; do
    name=$(basename "$w" .lua)
    : > "$tmp/plain"; : > "$tmp/r_efn"; : > "$tmp/r_empty"; : > "$tmp/r_fn"; : > "$tmp/r_lines"; : > "$tmp/r_stacks"
    for ((i = 0; i < PAIRS; i++)); do
        p=$(cpu "$LUA" "$w")
        ef=$(EMPTY_HOOK_LINES=0 cpu "$LUA" -lempty_hook "$w")
        e=$(cpu "$LUA" -lempty_hook "$w")
        f=$(CALLGRIND_LINES=0 cpu "$LUA" -lcallgrind.start "$w")
        l=$(cpu "$LUA" -lcallgrind.start "$w")
        s=$(CALLGRIND_STACKS=1 cpu "$LUA" -lcallgrind.start "$w")
        echo "$p" >> "$tmp/plain"
        awk -v a="$ef" -v b="$p" 'BEGIN { print a / b }' >> "$tmp/r_efn"
        awk -v a="$e" -v b="$p" 'BEGIN { print a / b }' >> "$tmp/r_empty"
        awk -v a="$f" -v b="$p" 'BEGIN { print a / b }' >> "$tmp/r_fn"
        awk -v a="$l" -v b="$p" 'BEGIN { print a / b }' >> "$tmp/r_lines"
        awk -v a="$s" -v b="$l" 'BEGIN { print a / b }' >> "$tmp/r_stacks"
    done
    plain=$(median < "$tmp/plain")
    printf "%-11s %8s %9s %11s %11s %11s %9s" "$name" "$plain" "$(cell "$(median < "$tmp/r_efn")" "")" \
        "$(cell "$(median < "$tmp/r_fn")" 2)" "$(cell "$(median < "$tmp/r_empty")" "")" \
        "$(cell "$(median < "$tmp/r_lines")" 3)" "$(cell "$(median < "$tmp/r_stacks")" 1.3)"
    if [ "${LUA_BENCH_VALGRIND:-}" = 1 ]; then
        vg=$(cpu valgrind --tool=callgrind --callgrind-out-file=/dev/null "$LUA" "$w")
        printf " %10s" "$(cell "$(awk -v a="$vg" -v b="$plain" 'BEGIN { print a / b }')" "")"
    fi
    printf "\n"
done
echo "cpu seconds (user + sys); ratios: median over $PAIRS alternating rounds of the per-round ratio;"
echo "fn level = CALLGRIND_LINES=0, line level = the default, +stacks = CALLGRIND_STACKS=1 over line level;"
echo "targets fn <= 2x, lines <= 3x, +stacks <= 1.3x (\"!\": over)"
