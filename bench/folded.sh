#!/usr/bin/env bash
# The flame graph of a big folded-stacks file against one awk pass over it
# (bench/README.md, "Flame graph of folded stacks"). The file (about 110 MB,
# bench/folded_gen.lua, the same bytes on every run) is made once into
# $CALLGRIND_BENCH_DIR. Alternating pairs: awk, ours, awk, ours...
# (BENCH_PAIRS, default 9); prints each pair's ratio, the median ratio and
# the peak RSS of each side.
set -eu
export LC_ALL=C
LUA=${LUA:-lua5.4}
BUILD=${BUILD:-build}
TIME=/usr/bin/time
PAIRS=${BENCH_PAIRS:-9}
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
cache=$(abs "${CALLGRIND_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/callgrind-bench}")
cd "$(dirname "$0")/.."
folded=$cache/luacheck.folded
if [ ! -s "$folded" ] || [ bench/folded_gen.lua -nt "$folded" ]; then
    mkdir -p "$cache"
    "$LUA" bench/folded_gen.lua > "$folded.tmp" && mv "$folded.tmp" "$folded"
fi
[ -f "$BUILD/callgrind/core.so" ] || { echo "folded flame: $BUILD/callgrind/core.so not built"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat "$folded" > /dev/null      # from the page cache, both sides
# one run: wall seconds (EPOCHREALTIME) and peak RSS (KiB) on stdout
run() {
    local t0 t1
    t0=$EPOCHREALTIME
    "$TIME" -f '%M' -o "$tmp/rss" "$@" > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err" >&2; return 1; }
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" -v k="$(cat "$tmp/rss")" 'BEGIN { printf "%.4f %d\n", b - a, k }'
}
echo "file: $folded ($(wc -c < "$folded") bytes, $(wc -l < "$folded") lines)"
printf "%-5s %9s %9s %9s %12s %12s\n" pair "awk s" "flame s" ratio "awk RSS KiB" "flame KiB"
: > "$tmp/ratios"
for i in $(seq "$PAIRS"); do
    read -r as ak < <(run awk '{ n += $NF } END { print n }' "$folded")
    read -r fs fk < <(run "$LUA" bin/callgrind-lua flame "$folded" -o "$tmp/flame.svg")
    r=$(awk -v a="$as" -v f="$fs" 'BEGIN { printf "%.2f", f / a }')
    echo "$r" >> "$tmp/ratios"
    echo "$as $fs $ak $fk" >> "$tmp/rows"
    printf "%-5s %9s %9s %9s %12s %12s\n" "$i" "$as" "$fs" "$r" "$ak" "$fk"
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median of the pair ratios (flame / awk): $(median < "$tmp/ratios")x;" \
    "median awk $(awk '{ print $1 }' "$tmp/rows" | median) s, flame $(awk '{ print $2 }' "$tmp/rows" | median) s;" \
    "peak RSS awk $(awk '{ print $3 }' "$tmp/rows" | median) KiB, flame $(awk '{ print $4 }' "$tmp/rows" | median) KiB;" \
    "SVG $(wc -c < "$tmp/flame.svg") bytes"
