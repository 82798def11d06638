#!/usr/bin/env bash
# make bench: the history store at 10,000 commits of 500 series (5 million
# points) on SQLite (a file in the bench cache) and on PostgreSQL 15 (a
# server started here: initdb into a temporary directory, a Unix socket
# only, stopped at the end). HISTORY_COMMITS, HISTORY_SERIES, HISTORY_REPEAT
# make it smaller or larger.
set -eu
LUA=${LUA:-lua5.4}
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.."
export LUA_PATH_5_4="$PWD/lua/?.lua;$PWD/lua/?/init.lua;;" LUA_CPATH_5_4="$PWD/$BUILD/?.so;;"
commits=${HISTORY_COMMITS:-10000} series=${HISTORY_SERIES:-500} repeat=${HISTORY_REPEAT:-9}
work=$(mktemp -d /tmp/callgrind-history-bench.XXXXXX)
pgbin=${CALLGRIND_PG_BIN:-/usr/lib/postgresql/15/bin}
as=""
if [ "$(id -u)" = 0 ]; then chmod 755 "$work"; as="runuser -u postgres --"; fi
mkdir -p "$work/sock"
[ -z "$as" ] || chown -R postgres "$work"
stop() { $as "$pgbin/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap stop EXIT
echo "history store: $commits commits x $series series, median of $repeat"
"$LUA" bench/history.lua "sqlite:$work/history.db" "$commits" "$series" "$repeat"
$as "$pgbin/initdb" -A trust -U cg -E UTF8 -D "$work/data" >/dev/null
$as "$pgbin/pg_ctl" -D "$work/data" -l "$work/log" -w -o "-k $work/sock -c listen_addresses=''" start >/dev/null
"$LUA" bench/history.lua "postgresql:///postgres?host=$work/sock&user=cg" "$commits" "$series" "$repeat"
