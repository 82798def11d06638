#!/bin/sh
# Adds a deb-src entry for Debian suite SUITE (its main component, from
# Debian's archive) when there is none, and updates apt's lists: as root
# only (it says so otherwise and fails). Used by tools/vm_build.sh
# (LUA_DEB_SUITE, make vm-trixie) and tools/penlight_src.sh.
# Usage: tools/deb_src_suite.sh SUITE WHO (WHO names the caller in messages)
set -eu
SUITE=$1
WHO=${2:-deb_src_suite}
f=/etc/apt/sources.list.d/callgrind-deb-src-$SUITE.sources
[ -f "$f" ] && exit 0
[ "$(id -u)" = 0 ] || { echo "$WHO: as root it adds a deb-src entry for $SUITE" >&2; exit 1; }
printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
  "$SUITE" > "$f"
apt-get update -qq >/dev/null
