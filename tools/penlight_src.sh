#!/bin/sh
# Penlight's source (its lua/ and tests/), from Debian's source package of
# the installed lua-penlight, else the archive's newest (a deb-src entry
# for Debian's archive: make vm adds one), unpacked once into
# BUILD/penlight/src; PENLIGHT_SRC=DIR gives one instead. Prints the
# directory. Used by tools/vm_compare.sh and make bench (bench/lua/penlight.lua).
# Usage: tools/penlight_src.sh BUILD
set -eu
BUILD=${1:-build}
if [ -n "${PENLIGHT_SRC:-}" ]; then
  echo "$PENLIGHT_SRC"
  exit 0
fi
W="$BUILD/penlight"
ver=$(dpkg-query -W -f='${Version}' lua-penlight 2>/dev/null) || ver=
mkdir -p "$W"
if ! ls "$W"/lua-penlight_*.orig.tar.* >/dev/null 2>&1; then
  # the upstream tarball is all that is needed: a missing Debian part is
  # no matter. The installed version first, else the archive's newest (the
  # archive keeps the current versions only): the tests run against the
  # source's own lua/, so any version serves
  (cd "$W" && apt-get source -qq --download-only "lua-penlight${ver:+=$ver}" >/dev/null 2>&1) || true
  ls "$W"/lua-penlight_*.orig.tar.* >/dev/null 2>&1 ||
    (cd "$W" && apt-get source -qq --download-only lua-penlight >/dev/null 2>&1) || true
  # the archive drops an older suite's tarball before its lists say so
  # (Debian 12's 1.13.1 answered 404 here in 2026): Debian 13's then
  ls "$W"/lua-penlight_*.orig.tar.* >/dev/null 2>&1 || {
    sh "$(dirname "$0")/deb_src_suite.sh" trixie penlight >&2 &&
      (cd "$W" && apt-get source -qq --download-only lua-penlight/trixie >/dev/null 2>&1)
  } || true
  ls "$W"/lua-penlight_*.orig.tar.* >/dev/null 2>&1 || {
    echo "penlight: apt-get source lua-penlight failed (a deb-src entry for Debian's archive: make vm adds one);" \
      "or set PENLIGHT_SRC=DIR" >&2
    exit 1
  }
fi
if [ ! -f "$W/src/.unpacked" ]; then
  rm -rf "$W/src" && mkdir -p "$W/src"
  tar xf "$W"/lua-penlight_*.orig.tar.* -C "$W/src" --strip-components=1
  basename "$(ls "$W"/lua-penlight_*.orig.tar.*)" | sed 's/\.orig\.tar\..*//' > "$W/src/.unpacked"
fi
echo "$W/src"
