#!/usr/bin/env bash
# make bench: time and memory of a newline scan (the floor), callgrind_annotate
# and our loader on one big instr-level callgrind profile. Run from anywhere;
# see bench/README.md for the profile recipe and the environment variables.
set -eu
export LC_ALL=C             # "." decimal point in $EPOCHREALTIME and awk

LUA=${LUA:-lua5.4}
CC=${CC:-cc}
BUILD=${BUILD:-build}
TIME=/usr/bin/time          # GNU time, for %M: peak RSS in KiB
export BUILD                # bench/load.lua reads it

# Paths given by the caller are relative to where it ran; make them absolute
# before moving to the repository root (load.lua finds lua/ and $BUILD/ there).
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
cache=$(abs "${CALLGRIND_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/callgrind-bench}")
big=$cache/big.callgrind
file=${BENCH_FILE:+$(abs "$BENCH_FILE")}
cd "$(dirname "$0")/.."

# The recipe (README.md): callgrind on g++ compiling bench/gen.lua's output.
# cc1plus is the largest of the profiles written (g++ driver, cc1plus, as).
CXXFLAGS="-std=gnu++20 -O3 -g -fopenmp -floop-nest-optimize -march=icelake-server -Wall -Wextra"
VGFLAGS="--tool=callgrind --dump-instr=yes --collect-jumps=yes --cache-sim=yes --branch-sim=yes --trace-children=yes"

make_profile() {
    mkdir -p "$cache"
    # Work inside the cache dir so the final mv is a rename on one file system:
    # a killed run leaves a tmp dir, never a half-written big.callgrind.
    work=$(mktemp -d "$cache/tmp.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    echo "making $big (once; a few minutes)..."
    "$LUA" bench/gen.lua > "$work/big.cpp"
    start=$(date +%s)
    # shellcheck disable=SC2086 # the flag lists are meant to split
    if ! (cd "$work" && valgrind $VGFLAGS --callgrind-out-file="$work/callgrind.out.%p" \
            g++ $CXXFLAGS -c big.cpp -o big.o) > "$work/valgrind.log" 2>&1; then
        tail -n 20 "$work/valgrind.log" >&2
        echo "bench: making the profile failed" >&2
        exit 1
    fi
    # shellcheck disable=SC2012 # our own names: callgrind.out.PID
    largest=$(ls -S "$work"/callgrind.out.* | head -n 1)
    mv "$largest" "$big"
    echo "made $big: $(wc -c < "$big") bytes in $(( $(date +%s) - start )) s"
    rm -rf "$work"
    trap - EXIT
}

if [ -n "$file" ]; then
    [ -r "$file" ] || { echo "bench: cannot read BENCH_FILE=$file" >&2; exit 1; }
    files=$file
else
    [ -s "$big" ] || make_profile
    # the 1-event form of the same profile (bench/one_event.lua)
    one=$cache/big-1ev.callgrind
    if [ ! -s "$one" ] || [ "$big" -nt "$one" ]; then
        "$LUA" bench/one_event.lua "$big" > "$one.tmp" && mv "$one.tmp" "$one"
    fi
    files="$big $one"
fi

mkdir -p "$BUILD/bench"
"$CC" -std=c99 -O2 -Wall -Wextra -o "$BUILD/bench/scan" bench/scan.c
# the sums of cg_query.c without Lua: the Lua-free core alone, every folder
# of csrc/ but the binding (csrc/binding/) and the Lua profiler's hook
# (csrc/profiler/), which need Lua
core_dirs=
for d in csrc/*/; do
    case $d in csrc/binding/|csrc/profiler/) ;; *) core_dirs="$core_dirs ${d%/}" ;; esac
done
core_src=$(for d in $core_dirs; do ls "$d"/*.c; done)
core_inc=$(for d in $core_dirs; do printf -- '-I%s ' "$d"; done)
# shellcheck disable=SC2086
"$CC" -std=c99 -O2 -Wall -Wextra $core_inc -o "$BUILD/bench/sums" bench/sums.c \
    $core_src -lz -lzstd -llzma -lpthread
RUNS=${BENCH_RUNS:-5}
IDLE_RUNS=${BENCH_IDLE_RUNS:-3}
IDLE=${BENCH_IDLE:-3}

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp".*' EXIT

# once CMD...: run CMD with stdout to $tmp.out; set secs (wall) and kib
# (peak RSS). Wall time comes from $EPOCHREALTIME (GNU time's %e has only
# 10 ms steps) and includes starting GNU time itself (about 1 ms).
once() {
    t0=$EPOCHREALTIME
    if ! "$TIME" -f '%M' -o "$tmp" "$@" > "$tmp.out" 2> "$tmp.err"; then
        cat "$tmp.err" >&2
        return 1
    fi
    t1=$EPOCHREALTIME
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
    read -r kib < "$tmp"
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CMD...: RUNS runs (or $runs), each after $idle seconds of
# sleep when set; prints one row with the medians of wall time and peak
# RSS and the fastest run, and sets secs to the median time.
measure() {
    name=$1; shift
    : > "$tmp.t"; : > "$tmp.k"
    for _ in $(seq "${runs:-$RUNS}"); do
        [ -n "${idle:-}" ] && sleep "$idle"
        once "$@" || { printf "%-24s %9s\n" "$name" "failed"; return 1; }
        echo "$secs" >> "$tmp.t"; echo "$kib" >> "$tmp.k"
    done
    low=$(sort -g "$tmp.t" | head -n 1)
    secs=$(median < "$tmp.t"); kib=$(median < "$tmp.k")
    awk -v n="$name" -v s="$secs" -v m="$low" -v k="$kib" -v b="$bytes" -v f="${scan_secs:-0}" 'BEGIN {
        printf "%-24s %9.3f %9.3f %9.1f %10.1f %9.2f %9s\n", n, s, m, b / 1e6 / s, k / 1024, k * 1024 / b,
            (f > 0 ? sprintf("%.2f", s / f) : "-") }'
}

status=0
"$BUILD/bench/sums" --vector
for file in $files; do
    bytes=$(wc -c < "$file")
    cat "$file" > /dev/null     # warm the page cache: every row reads from memory
    echo
    echo "file: $file ($bytes bytes, $("$BUILD/bench/scan" "$file" | cut -d' ' -f2) lines, median of $RUNS runs)"
    printf "%-24s %9s %9s %9s %10s %9s %9s\n" "" "wall s" "fastest" "MB/s" "RSS MiB" "RSS/byte" "x scan"
    scan_secs=
    measure "newline scan" "$BUILD/bench/scan" "$file" || status=1
    scan_secs=$secs
    if [ "${BENCH_SKIP_ANNOTATE:-}" != 1 ] && [ "$file" = "$big" ]; then
        measure "callgrind_annotate" callgrind_annotate --threshold=100 "$file" || status=1
    fi
    if [ ! -f "$BUILD/callgrind/core.so" ]; then
        printf "%-24s %9s\n" "callgrind (ours)" "not built"
        continue
    fi
    measure "callgrind (ours)" "$LUA" bench/load.lua "$file" || status=1
    echo "ours: $(cat "$tmp.out")"
    measure "ours, one thread" "$LUA" bench/load.lua "$file" 1 || status=1
    # the same load as a process that starts after the machine was idle
    # (bench/README.md: a host may take back the memory freed meanwhile)
    if [ "$IDLE_RUNS" -gt 0 ]; then
        runs=$IDLE_RUNS idle=$IDLE \
            measure "ours, after $IDLE s idle" "$LUA" bench/load.lua "$file" || status=1
    fi
    : > "$tmp.l"
    for _ in $(seq "$RUNS"); do
        "$LUA" bench/ulines.lua "$file" | awk '{ print $3 }' >> "$tmp.l" || status=1
    done
    echo "light iterator (prof:ulines(1)): $(median < "$tmp.l" | awk '{ printf "%.1f", $1 / 1e6 }') M lines/s"
    # the pictures and exports (bench/pictures.lua): CPU seconds after the load
    printf "%-24s %9s %9s %12s\n" "pictures, after the load" "cpu s" "fastest" "output"
    "$LUA" bench/pictures.lua "$file" "$RUNS" || status=1
    "$BUILD/bench/sums" "$file" || status=1
    # prof:write of the loaded profile (bench/write.lua: the write alone,
    # in CPU seconds, fastest of 3 in each run; the median of RUNS runs)
    if [ "$file" = "$big" ] || [ -n "${BENCH_FILE:-}" ]; then
        : > "$tmp.w"
        for _ in $(seq "$RUNS"); do
            "$LUA" bench/write.lua "$file" "$tmp.written" 3 | awk '{ print $2, $4, $6 }' >> "$tmp.w" || status=1
        done
        awk '{ print $1 }' "$tmp.w" | median > "$tmp.ws"
        read -r wsecs < "$tmp.ws"
        read -r _ wbytes _ < "$tmp.w"
        awk -v s="$wsecs" -v b="$wbytes" 'BEGIN {
            printf "prof:write: %.3f s (CPU, median of runs), %d bytes written, %.1f MB/s\n", s, b, b / 1e6 / s }'
        rm -f "$tmp.written"
    fi
done
# The flame graph of a 110 MB folded-stacks file against one awk pass over it
# (bench/folded.sh: alternating pairs, the median pair ratio)
echo
echo "Flame graph of folded stacks (bench/folded.sh):"
LUA=$LUA BUILD=$BUILD CALLGRIND_BENCH_DIR=$cache bash bench/folded.sh || status=1
# Estimated stacks of the 13-event profile against a base commit
# (bench/estimate.sh: alternating pairs, the median pair ratio, targets)
echo
echo "Estimated stacks (bench/estimate.sh):"
LUA=$LUA CC=$CC BUILD=$BUILD CALLGRIND_BENCH_DIR=$cache bash bench/estimate.sh || status=1
# The interpreter alone, for reference: its RSS is part of ours, not subtracted.
"$TIME" -f '%M' -o "$tmp" "$LUA" -e ''
read -r kib < "$tmp"
echo
echo "$LUA -e '': peak RSS $(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }') MiB"
echo "MB = 10^6 bytes; RSS = peak resident set; RSS/byte = peak RSS / file size;"
echo "x scan = wall time / the newline scan's wall time on the same file;"
echo "wall s = the median of the runs, fastest = the fastest run."
echo
if [ "${BENCH_SKIP_OVERHEAD:-}" != 1 ]; then
    # bench/lua/penlight.lua runs Penlight's own tests: their source
    sh tools/penlight_src.sh "$BUILD" > /dev/null || status=1
    echo "The Lua profiler's overhead (bench/lua_overhead.sh):"
    LUA=$LUA CC=$CC BUILD=$BUILD bash bench/lua_overhead.sh || status=1
    echo
    echo "Where it goes, in instructions (bench/lua_instr.sh):"
    LUA=$LUA CC=$CC BUILD=$BUILD bash bench/lua_instr.sh || status=1
    echo
    echo "The counting interpreter (make vm; bench/lua_vm.sh):"
    LUA=$LUA CC=$CC BUILD=$BUILD bash bench/lua_vm.sh || status=1
    echo
    echo "A process per test: the start-up and the profile written each time (bench/lua_procs.sh):"
    LUA=$LUA CC=$CC BUILD=$BUILD bash bench/lua_procs.sh || status=1
    echo
    echo "The Lua profiler's memory (bench/lua_memory.sh):"
    LUA=$LUA CC=$CC BUILD=$BUILD bash bench/lua_memory.sh || status=1
    echo
    echo "The stack record (bench/stack_record.sh):"
    LUA=$LUA CC=$CC BUILD=$BUILD bash bench/stack_record.sh || status=1
fi
exit "$status"
