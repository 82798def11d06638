#!/usr/bin/env bash
# make bench, second table: the Lua profiler's overhead. Each workload of
# bench/lua/ runs plain, with a C hook on calls, returns and lines that does
# nothing (bench/lua_empty_hook.c: the interpreter's own cost of line-level
# hooks, the floor for any such profiler), under our profiler (lua5.4
# -lcallgrind.start, the file written), under a pure-Lua debug.sethook
# collector (bench/lua_hook_collector.lua) and under valgrind
# --tool=callgrind; the median wall time of LUA_BENCH_RUNS runs (default 5;
# valgrind: 1 run) and the ratio to the plain run. Run from anywhere; LUA,
# CC and BUILD as for run.sh.
set -eu
export LC_ALL=C

LUA=${LUA:-lua5.4}
CC=${CC:-cc}
BUILD=${BUILD:-build}
RUNS=${LUA_BENCH_RUNS:-5}
cd "$(dirname "$0")/.."
root=$PWD
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
export LUA_PATH="$root/lua/?.lua;$root/lua/?/init.lua;;"
export LUA_CPATH="$BUILD/?.so;$BUILD/bench/?.so;;"
incdir=$(pkg-config --variable=includedir lua5.4 2>/dev/null || echo /usr/include)/lua5.4
mkdir -p "$BUILD/bench"
"$CC" -std=c99 -O2 -Wall -Wextra -fPIC -shared -I"$incdir" -o "$BUILD/bench/empty_hook.so" \
    bench/lua_empty_hook.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CALLGRIND_OUT=$tmp/lua.callgrind

# secs CMD...: wall seconds of one run (stdout and stderr dropped)
secs() {
    local t0=$EPOCHREALTIME
    "$@" > /dev/null 2>&1 || { echo "bench: failed: $*" >&2; return 1; }
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'
}

# median N CMD...: the median of N runs
median() {
    local n=$1 i
    shift
    for ((i = 0; i < n; i++)); do secs "$@"; done | sort -n | awk '
        { v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / b }'; }

printf "%-12s %8s %14s %14s %15s %16s\n" "workload" "plain s" "empty hook" "ours" "pure-Lua hook" "valgrind"
for w in bench/lua/*.lua; do
    name=$(basename "$w" .lua)
    plain=$(median "$RUNS" "$LUA" "$w")
    empty=$(median "$RUNS" "$LUA" -lempty_hook "$w")
    ours=$(median "$RUNS" "$LUA" -lcallgrind.start "$w")
    hook=$(median "$RUNS" "$LUA" bench/lua_hook_collector.lua "$w")
    if [ "${BENCH_SKIP_VALGRIND:-}" = 1 ]; then
        vg="skipped"
    else
        vgs=$(median 1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$LUA" "$w")
        vg="$vgs $(ratio "$vgs" "$plain")"
    fi
    printf "%-12s %8s %14s %14s %15s %16s\n" "$name" "$plain" "$empty $(ratio "$empty" "$plain")" \
        "$ours $(ratio "$ours" "$plain")" "$hook $(ratio "$hook" "$plain")" "$vg"
done
echo "wall seconds, median of $RUNS runs (valgrind: 1); ours = $LUA -lcallgrind.start with per-line Instr, file written"
