#!/usr/bin/env bash
# Estimated stacks on the 13-event profile (bench/README.md, "Estimated
# stacks"): prof:folded(), prof:write_pprof(), prof:write_flamegraph() and
# prof:write_html() at their defaults, under this checkout and under a base
# commit (BENCH_BASE, default 5c6b58c: before the pruning), in alternating
# pairs (base, this, base, this ...; BENCH_PAIRS, default 9). Each run is a
# process of its own (bench/estimate.lua: the load, then the output, timed
# alone in CPU seconds). Prints each pair, the median of the pair ratios
# (this / base), the median times, and the targets: folded under 0.5 s,
# pprof under 1.5 s, flame and report no slower than the base (ratio <= 1).
set -eu
export LC_ALL=C
LUA=${LUA:-lua5.4}
CC=${CC:-cc}
BUILD=${BUILD:-build}
PAIRS=${BENCH_PAIRS:-9}
BASE=${BENCH_BASE:-5c6b58c}
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
cache=$(abs "${CALLGRIND_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/callgrind-bench}")
file=${BENCH_FILE:+$(abs "$BENCH_FILE")}
file=${file:-$cache/big.callgrind}
cd "$(dirname "$0")/.."
[ -s "$file" ] || { echo "estimate: $file missing (make bench makes it)"; exit 0; }
[ -f "$BUILD/callgrind/core.so" ] || { echo "estimate: $BUILD/callgrind/core.so not built"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the base: its lua/ and its core, built apart (its C differs)
git archive "$BASE" lua csrc Makefile | tar -x -C "$tmp"
cp bench/estimate.lua "$tmp/estimate.lua"
make -s -C "$tmp" CC="$CC" build/callgrind/core.so > "$tmp/build.log" 2>&1 \
    || { tail -n 20 "$tmp/build.log" >&2; echo "estimate: building $BASE failed" >&2; exit 1; }
here=$PWD
cat "$file" > /dev/null
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "file: $file ($(wc -c < "$file") bytes); base $BASE ($(git log -1 --format=%h "$BASE")), this $(git log -1 --format=%h HEAD)$(git diff --quiet HEAD -- lua csrc || echo ' + changes')"
printf "%-8s %-5s %9s %9s %7s %12s %12s\n" output pair "base s" "this s" ratio "base bytes" "this bytes"
status=0
for what in folded pprof flame report; do
    : > "$tmp/r"; : > "$tmp/b"; : > "$tmp/t"
    for i in $(seq "$PAIRS"); do
        read -r bs bb < <(cd "$tmp" && BUILD=build "$LUA" estimate.lua "$file" "$what")
        read -r ts tb < <(cd "$here" && BUILD=$BUILD "$LUA" bench/estimate.lua "$file" "$what")
        r=$(awk -v a="$bs" -v b="$ts" 'BEGIN { printf "%.3f", b / a }')
        echo "$r" >> "$tmp/r"; echo "$bs" >> "$tmp/b"; echo "$ts" >> "$tmp/t"
        printf "%-8s %-5s %9s %9s %7s %12s %12s\n" "$what" "$i" "$bs" "$ts" "$r" "$bb" "$tb"
    done
    mr=$(median < "$tmp/r"); mb=$(median < "$tmp/b"); mt=$(median < "$tmp/t")
    case $what in
        folded) target="this under 0.5 s"; ok=$(awk -v t="$mt" 'BEGIN { print (t < 0.5) ? "met" : "NOT met" }') ;;
        pprof) target="this under 1.5 s"; ok=$(awk -v t="$mt" 'BEGIN { print (t < 1.5) ? "met" : "NOT met" }') ;;
        *) target="ratio at most 1"; ok=$(awk -v r="$mr" 'BEGIN { print (r <= 1) ? "met" : "NOT met" }') ;;
    esac
    echo "$what: median ratio (this / base) ${mr}x; median base $mb s, this $mt s; target: $target: $ok"
done
exit "$status"
