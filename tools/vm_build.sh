#!/bin/sh
# make vm: builds BUILD/bin/callgrind-lua5.4, the counting Lua 5.4, from the
# source of the installed lua5.4 (Debian: `apt-get source` of exactly the
# installed version, adding a deb-src entry for Debian's archive when it is
# missing) or from LUA_SRC=DIR|TARBALL, with csrc/vm/lua-<release>.patch.
# LUA_DEB_SUITE=trixie takes the lua5.4 source package of that Debian suite
# instead (a deb-src entry for it is added): 5.4.7 on Debian 12. VM_NO_APT=1
# (the rock's build) never adds a deb-src entry.
# Usage: tools/vm_build.sh BUILD [CC]
set -eu
BUILD=${1:-build}
CC=${2:-${CC:-cc}}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W="$BUILD/vm"
OUT="$BUILD/bin/callgrind-lua5.4"
supported=$(cd "$ROOT/csrc/vm" && ls lua-*.patch | sed 's/^lua-//; s/\.patch$//' | tr '\n' ' ' | sed 's/ $//')
mkdir -p "$W" "$BUILD/bin"

# Up to date when built from the same source with the same patches, script
# and compiler
key="${LUA_DEB_SUITE:-}${LUA_SRC:-$(dpkg-query -W -f='${Version}' lua5.4 2>/dev/null || echo none)} $CC $(cat "$ROOT"/csrc/vm/*.patch "$0" | cksum)"
if [ -x "$OUT" ] && [ -f "$W/key" ] && [ "$(cat "$W/key")" = "$key" ]; then
  echo "make vm: $OUT is up to date"
  exit 0
fi
rm -rf "$W/src" "$W/key"
mkdir -p "$W/src"

debian_source() {
  if [ -n "${LUA_DEB_SUITE:-}" ]; then
    suite_source
    return
  fi
  ver=$(dpkg-query -W -f='${Version}' lua5.4 2>/dev/null) || {
    echo "make vm: lua5.4 is not installed as a Debian package; set LUA_SRC=DIR|TARBALL" >&2
    exit 1
  }
  dl="$W/deb-$ver"
  if ! ls "$dl"/lua5.4_*.orig.tar.* >/dev/null 2>&1; then
    mkdir -p "$dl"
    if ! (cd "$dl" && apt-get source -qq --download-only "lua5.4=$ver") >/dev/null 2>&1; then
      add_deb_src
      (cd "$dl" && apt-get source -qq --download-only "lua5.4=$ver") || {
        echo "make vm: apt-get source lua5.4=$ver failed; set LUA_SRC=DIR|TARBALL" >&2
        exit 1
      }
    fi
  fi
  unpack "$dl"
}

# The source package of suite LUA_DEB_SUITE (root adds its deb-src entry).
suite_source() {
  sh "$ROOT/tools/deb_src_suite.sh" "$LUA_DEB_SUITE" "make vm"
  dl="$W/deb-$LUA_DEB_SUITE"
  rm -rf "$dl"
  mkdir -p "$dl"
  (cd "$dl" && apt-get source -qq --download-only "lua5.4/$LUA_DEB_SUITE") >/dev/null 2>&1 || {
    echo "make vm: apt-get source lua5.4/$LUA_DEB_SUITE failed" >&2
    exit 1
  }
  unpack "$dl"
}

# The orig tarball, then Debian's own patches (paths, CVE fixes) first: the
# same interpreter as Debian's
unpack() {
  tar -xf "$1"/lua5.4_*.orig.tar.* -C "$W/src" --strip-components=1
  if ls "$1"/lua5.4_*.debian.tar.* >/dev/null 2>&1; then
    tar -xf "$1"/lua5.4_*.debian.tar.* -C "$W/src"
    for p in $(grep -v '^#' "$W/src/debian/patches/series"); do
      patch -s -p1 -d "$W/src" < "$W/src/debian/patches/$p"
    done
  fi
}

# A deb-src entry beside each deb entry of Debian's archive (deb822 or
# one-line sources), then apt-get update.
add_deb_src() {
  # the rock's build (VM_NO_APT=1) leaves the system's package sources alone
  [ "$(id -u)" = 0 ] && [ -z "${VM_NO_APT:-}" ] || {
    echo "make vm: no deb-src entry for lua5.4; as root make vm adds one, or set LUA_SRC" >&2
    exit 1
  }
  f=/etc/apt/sources.list.d/callgrind-deb-src.sources
  for s in /etc/apt/sources.list.d/*.sources; do
    [ "$s" = "$f" ] && continue
    grep -q 'deb.debian.org\|security.debian.org' "$s" 2>/dev/null || continue
    awk 'BEGIN{RS=""; ORS="\n\n"} /Types:[^\n]*deb/ && /debian/ {sub(/Types:[^\n]*/, "Types: deb-src"); print}' "$s"
  done > "$f.tmp"
  if [ -f /etc/apt/sources.list ]; then
    grep '^deb ' /etc/apt/sources.list | grep debian | sed 's/^deb /deb-src /' \
      > /etc/apt/sources.list.d/callgrind-deb-src.list || true
  fi
  mv "$f.tmp" "$f"
  apt-get update -qq >/dev/null
}

if [ -n "${LUA_SRC:-}" ]; then
  if [ -d "$LUA_SRC" ]; then
    cp -R "$LUA_SRC"/. "$W/src"
  else
    tar -xf "$LUA_SRC" -C "$W/src" --strip-components=1
  fi
else
  debian_source
fi

S="$W/src/src"
[ -f "$S/lua.h" ] || { echo "make vm: no src/lua.h in the Lua source" >&2; exit 1; }
rel=$(sed -n 's/^#define LUA_VERSION_\(MAJOR\|MINOR\|RELEASE\)[ \t]*"\([0-9]*\)".*/\2/p' "$S/lua.h" | tr '\n' . | sed 's/\.$//')
patchf="$ROOT/csrc/vm/lua-$rel.patch"
if [ ! -f "$patchf" ]; then
  echo "make vm: unsupported Lua release $rel; supported releases: $supported" >&2
  exit 2
fi
# lua.h's two statements of the release agree, and the patch of that
# release applies exactly (no fuzz): a tree whose lua.h names another
# release than its files are gets a message, not a patch applied askew
# and a page of compiler errors
num=$(sed -n 's/^#define LUA_VERSION_RELEASE_NUM[ \t]*(LUA_VERSION_NUM[ \t]*\*[ \t]*100[ \t]*+[ \t]*\([0-9]*\)).*/\1/p' "$S/lua.h")
if [ -n "$num" ] && [ "$num" != "${rel##*.}" ]; then
  echo "make vm: the Lua source's lua.h names two releases: LUA_VERSION_RELEASE says $rel, LUA_VERSION_RELEASE_NUM" \
    "${rel%.*}.$num; supported releases: $supported (csrc/vm/lua-<release>.patch)" >&2
  exit 2
fi
if ! patch -s --dry-run -F0 -p1 -d "$W/src" < "$patchf" >/dev/null 2>&1; then
  echo "make vm: the Lua source's lua.h says release $rel, but csrc/vm/lua-$rel.patch does not apply to its files" \
    "(another release's files, or changed ones); supported releases: $supported; give the source of one" \
    "(LUA_SRC=DIR|TARBALL)" >&2
  exit 2
fi
patch -s -F0 -p1 -d "$W/src" < "$patchf"

# Debian's luaconf.h includes its multiarch header (built by its rules)
if grep -q 'lua5.4-deb-multiarch.h' "$S/luaconf.h"; then
  ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $CC -print-multiarch)
  printf '#define DEB_HOST_MULTIARCH "%s"\n' "$ma" > "$S/lua5.4-deb-multiarch.h"
fi

# Debian's build: linux-readline, LUA_COMPAT_5_3, its hardening flags
defs="-DLUA_COMPAT_5_3 -DLUA_USE_LINUX"
libs="-lm -ldl"
if [ -f /usr/include/readline/readline.h ]; then
  defs="$defs -DLUA_USE_READLINE"
  libs="$libs -lreadline"
fi
cflags=$(dpkg-buildflags --get CFLAGS 2>/dev/null || echo "-g -O2")
# every function at a 64-byte boundary: the interpreter's loop keeps its
# alignment when other code grows (a 16-byte shift of luaV_execute, from
# a change in ldo.c, made fib 1.19x slower with profiling off)
cflags="$cflags -falign-functions=64"
# GCC gives an opcode its own dispatch jump only when the code before the
# jump is short (its max-goto-duplication-insns, 8). The fetch's trap
# branch makes it longer, and all the opcodes then shared 6 jumps; 100
# gives them 52 (stock lvm.c, built with the same flags, has 3). With
# lines, fib runs 1.09x faster so, closures 1.08x, json and luacheck
# 1.04x (bench/README.md).
# A compiler without the parameter goes on without it.
dup="--param max-goto-duplication-insns=100"
if echo 'int x;' | $CC $dup -Werror -x c -c -o /dev/null - 2>/dev/null; then
  cflags="$cflags $dup"
fi
cppflags=$(dpkg-buildflags --get CPPFLAGS 2>/dev/null || true)
ldflags=$(dpkg-buildflags --get LDFLAGS 2>/dev/null || true)
objs=""
for c in lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes \
         lparser lstate lstring ltable ltm lundump lvm lzio lauxlib lbaselib \
         lcorolib ldblib liolib lmathlib loadlib loslib lstrlib ltablib lutf8lib \
         linit lua; do
  objs="$objs $S/$c.o"
done
# two at a time (CI machines have two cores)
echo "$objs" | tr ' ' '\n' | grep . | sed 's/\.o$//' | \
  xargs -P 2 -I{} sh -c "$CC -std=gnu99 $cflags $cppflags -Wall -Wextra $defs -c {}.c -o {}.o"
# -Wl,-E: the Lua API exported, so C modules (lpeg.so, lfs.so) load
$CC $ldflags -o "$OUT.tmp" $objs -Wl,-E $libs
mv "$OUT.tmp" "$OUT"
echo "$key" > "$W/key"
echo "make vm: $OUT (Lua $rel, csrc/vm/lua-$rel.patch)"
