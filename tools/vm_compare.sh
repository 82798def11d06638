#!/bin/sh
# make vm-compare: Penlight's own tests, from Debian's source of the
# installed lua-penlight (or PENLIGHT_SRC=DIR), run by Debian's lua5.4 and by
# the counting interpreter: each tests/test-*.lua gives the same exit status
# and output under both, and so does busted over its spec/ (timings aside).
# Exit 1 on the first difference. Usage: tools/vm_compare.sh BUILD
set -eu
BUILD=${1:-build}
VM="$(cd "$BUILD/bin" && pwd)/callgrind-lua5.4"
[ -x "$VM" ] || { echo "vm-compare: $VM is missing (make vm)" >&2; exit 1; }
SRC=$(sh "$(dirname "$0")/penlight_src.sh" "$BUILD")
name=$(cat "$SRC/.unpacked" 2>/dev/null || echo "$SRC")

cd "$SRC"
export LUA_PATH="./lua/?.lua;./lua/?/init.lua;;"
n=0
for t in tests/test-*.lua; do
  a=$(timeout 120 lua5.4 "$t" 2>&1; echo "exit $?")
  b=$(timeout 120 "$VM" "$t" 2>&1; echo "exit $?")
  if [ "$a" != "$b" ]; then
    echo "vm-compare: $t differs: lua5.4 ended '$(echo "$a" | tail -2 | tr '\n' ' ')'," \
      "the counting interpreter '$(echo "$b" | tail -2 | tr '\n' ' ')'" >&2
    exit 1
  fi
  n=$((n + 1))
done
# busted's TAP output, the line of the time taken left out
a=$(timeout 600 busted --lua=lua5.4 -o TAP spec 2>&1 | grep -v '^# .*seconds' || true)
b=$(timeout 600 busted --lua="$VM" -o TAP spec 2>&1 | grep -v '^# .*seconds' || true)
if [ "$a" != "$b" ]; then
  echo "vm-compare: busted over Penlight's spec/ differs between lua5.4 and the counting interpreter" >&2
  exit 1
fi
echo "vm-compare: $name: $n test scripts and busted over spec/ ($(echo "$a" | grep -c '^ok ') ok," \
  "$(echo "$a" | grep -c '^not ok ') not ok under both) give the same output under lua5.4 and $VM"
