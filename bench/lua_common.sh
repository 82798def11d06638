# Sourced by bench/lua_overhead.sh, bench/lua_vm.sh and bench/lua_instr.sh:
# the settings of run.sh (LUA, CC, BUILD), the module paths of this
# checkout, the empty hook (bench/lua_empty_hook.c) built into
# $BUILD/bench, a scratch directory $tmp removed at exit, CALLGRIND_OUT
# inside it, and the timing helpers cpu, median and cell.
set -eu
export LC_ALL=C

LUA=${LUA:-lua5.4}
CC=${CC:-cc}
BUILD=${BUILD:-build}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
export LUA_PATH="$root/lua/?.lua;$root/lua/?/init.lua;;"
export LUA_CPATH="$BUILD/?.so;$BUILD/bench/?.so;;"
incdir=$(pkg-config --variable=includedir lua5.4 2>/dev/null || echo /usr/include)/lua5.4
mkdir -p "$BUILD/bench"
"$CC" -std=c99 -O2 -Wall -Wextra -fPIC -shared -I"$incdir" -o "$BUILD/bench/empty_hook.so" \
    bench/lua_empty_hook.c
"$CC" -std=c99 -O2 -Wall -Wextra -o "$BUILD/bench/cputime" bench/cputime.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CALLGRIND_OUT=$tmp/lua.callgrind

# cpu CMD...: user + sys seconds of one run, to the microsecond
# (bench/cputime.c; its output dropped)
cpu() {
    "$BUILD/bench/cputime" "$tmp/time" "$@" > /dev/null 2> "$tmp/err" \
        || { echo "bench: failed: $*" >&2; cat "$tmp/err" >&2; return 1; }
    cat "$tmp/time"
}

# median: of the numbers on stdin
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# cell RATIO TARGET: "1.83x", or "2.10x!" over the target
cell() { awk -v r="$1" -v t="$2" 'BEGIN { printf "%.2fx%s", r, (t != "" && r > t) ? "!" : "" }'; }
