# Sourced by bench/lua_overhead.sh and bench/lua_instr.sh: the settings
# of run.sh (LUA, CC, BUILD), the module paths of this checkout, the
# empty hook (bench/lua_empty_hook.c) built into $BUILD/bench, a scratch
# directory $tmp removed at exit, and CALLGRIND_OUT inside it.
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CALLGRIND_OUT=$tmp/lua.callgrind
