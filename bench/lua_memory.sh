#!/usr/bin/env bash
# make bench, the Lua profiler's memory (issue 43, point 2's targets).
#
# bench/chunks.lua loads and calls 200,000 small chunks (CHUNKS=n: as
# many), as a template engine or a configuration loader does: each chunk
# a function of its own, freed soon, named after what it came from. Its
# peak RSS (GNU time's %M) and cpu seconds (user + sys) run by plain
# lua5.4, then profiled at line level (-lcallgrind.start, the profile
# written at exit) by the hook engine (lua5.4) and the counting engine
# (build/bin/callgrind-lua5.4, make vm). Penlight's own tests
# (bench/lua/penlight.lua) give the page faults (GNU time's %R, minor
# faults, the children's included) plain and profiled the same ways.
# Each cell is the median of LUA_BENCH_PAIRS (default 9) rounds that run
# the three in turn; ratios are the median of the per-round ratios.
# Targets: the chunks' peak RSS <= 64 MB under either engine; Penlight's
# page faults <= 1.5x plain's ("!": over). Run from anywhere; LUA, CC and
# BUILD as for run.sh.
. "$(dirname "$0")/lua_common.sh"
PAIRS=${LUA_BENCH_PAIRS:-9}
VM=${CALLGRIND_VM:-$BUILD/bin/callgrind-lua5.4}
[ -x "$VM" ] || { echo "bench: no $VM (make vm)" >&2; exit 1; }

# gt FORMAT CMD...: GNU time's FORMAT of one run and its cpu seconds
gt() {
    local fmt=$1
    shift
    /usr/bin/time -f "$fmt %U %S" -o "$tmp/gt" "$@" > /dev/null 2> "$tmp/err" \
        || { echo "bench: failed: $*" >&2; cat "$tmp/err" >&2; return 1; }
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/gt"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }

# row NAME: the chunks (peak RSS MB, cpu s) or Penlight (faults) medians
run_rows() {
    local w=$1 fmt=$2
    : > "$tmp/p"; : > "$tmp/h"; : > "$tmp/v"; : > "$tmp/hr"; : > "$tmp/vr"
    : > "$tmp/pt"; : > "$tmp/ht"; : > "$tmp/vt"; : > "$tmp/htr"; : > "$tmp/vtr"
    for ((i = 0; i < PAIRS; i++)); do
        read -r p pt < <(gt "$fmt" "$LUA" "$w")
        read -r h ht < <(gt "$fmt" "$LUA" -lcallgrind.start "$w")
        read -r v vt < <(gt "$fmt" "$VM" -lcallgrind.start "$w")
        echo "$p" >> "$tmp/p"; echo "$h" >> "$tmp/h"; echo "$v" >> "$tmp/v"
        echo "$pt" >> "$tmp/pt"; echo "$ht" >> "$tmp/ht"; echo "$vt" >> "$tmp/vt"
        ratio "$h" "$p" >> "$tmp/hr"; ratio "$v" "$p" >> "$tmp/vr"
        ratio "$ht" "$pt" >> "$tmp/htr"; ratio "$vt" "$pt" >> "$tmp/vtr"
    done
}

n=${CHUNKS:-200000}
run_rows bench/chunks.lua "%M"
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
over() { awk -v v="$1" -v t="$2" 'BEGIN { printf "%s", (v > t) ? "!" : "" }'; }
h=$(median < "$tmp/h"); v=$(median < "$tmp/v")
printf "%-28s %10s %14s %14s\n" "" "plain" "hook engine" "counting vm"
printf "%-28s %10s %14s %14s\n" "chunks ($n): peak RSS MB" "$(mb "$(median < "$tmp/p")")" \
    "$(mb "$h")$(over "$h" 65536)" "$(mb "$v")$(over "$v" 65536)"
printf "%-28s %10s %14s %14s\n" "chunks: cpu s (x plain)" "$(median < "$tmp/pt")" \
    "$(median < "$tmp/ht") ($(cell "$(median < "$tmp/htr")" ""))" \
    "$(median < "$tmp/vt") ($(cell "$(median < "$tmp/vtr")" ""))"
run_rows bench/lua/penlight.lua "%R"
printf "%-28s %10s %14s %14s\n" "Penlight: page faults" "$(median < "$tmp/p")" \
    "$(median < "$tmp/h") ($(cell "$(median < "$tmp/hr")" 1.5))" \
    "$(median < "$tmp/v") ($(cell "$(median < "$tmp/vr")" 1.5))"
echo "medians of $PAIRS rounds (plain lua5.4, then lua5.4 and $VM with -lcallgrind.start);"
echo "targets: peak RSS <= 64 MB, Penlight's page faults <= 1.5x plain's (\"!\": over)"
