#!/bin/sh
# make demo: profile examples/workload.c under callgrind, then load the
# profile with the library and print its summary and top 15 functions.
set -eu
LUA=${1:-lua5.4} CC=${2:-cc} BUILD=${3:-build}
out="$BUILD/demo"
mkdir -p "$out"
"$CC" -g -O1 -o "$out/workload" examples/workload.c
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
  --dump-instr=yes --collect-jumps=yes "$out/workload" 2>"$out/valgrind.log"
echo "profiled: $out/workload -> $out/callgrind.out"
echo
"$LUA" examples/top.lua "$out/callgrind.out" 15
