#!/bin/sh
# Builds the libFuzzer targets and runs each for FUZZ_SECONDS.
#
#   sh fuzz/run.sh [TARGET ...]       targets: fuzz_load fuzz_lua fuzz_vec fuzz_folded fuzz_stackrec (default all)
#
# Environment (all optional): FUZZ_SECONDS (60), FUZZ_TIMEOUT (10: seconds
# one input may take; raise it on a busy machine), FUZZ_CC (clang), BUILD
# (build), LUA_INCDIR (/usr/include/lua5.4), LUA_LIB (-llua5.4), FUZZ_FLAGS
# (more libFuzzer flags, e.g. -jobs=1), FUZZ_NOBUILD=1 (run what is built).
#
# Everything goes under $BUILD/fuzz/: the binaries, seeds/ (the shared
# corpus's profile files and spec/fixtures/*.callgrind, copied at each run,
# and gzip, zstd and xz copies of the fixtures: the compressed seed set),
# corpus-TARGET/ (the working corpus, kept between runs), artifacts-TARGET/
# (crash-*, leak-*, timeout-*, oom-* reproducers; slow-unit-* are only
# listed) and TARGET.log.
# Exits non-zero when a target fails, naming each new reproducer.
set -u
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
FUZZ_CC=${FUZZ_CC:-clang}
BUILD=${BUILD:-build}
LUA_INCDIR=${LUA_INCDIR:-/usr/include/lua5.4}
LUA_LIB=${LUA_LIB:--llua5.4}
CORE_LIBS=${CORE_LIBS:--ldl -lpthread}   # as the Makefile links the core
FUZZ_FLAGS=${FUZZ_FLAGS:-}
ROOT=$(pwd)
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OUT=$BUILD/fuzz
CORPUS_SRC=spec/corpus

TARGETS=${*:-fuzz_load fuzz_lua fuzz_vec fuzz_folded fuzz_stackrec}
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
# every folder of csrc/ on the include path, as the Makefile's CSRC_DIRS
CSRC_INC=$(for d in csrc/*/; do printf -- '-I%s ' "${d%/}"; done)
CFLAGS_FUZZ="-std=c99 -g -O1 -fno-omit-frame-pointer $CSRC_INC-I$LUA_INCDIR"

die() {
  echo "fuzz/run.sh: $*" >&2
  exit 2
}

build() {
  mkdir -p "$OUT/obj" || die "cannot create $OUT/obj"
  core=""
  lua_objs=""
  # the core: instrumented for coverage, no libFuzzer main; the binding
  # (csrc/binding/) and the Lua profiler (csrc/profiler/), which need Lua,
  # only in fuzz_lua; any other file of csrc/ that includes a Lua header
  # is an error
  for src in csrc/*/*.c; do
    obj="$OUT/obj/$(basename "$src" .c).o"
    if [ ! -f "$obj" ] || [ -n "$(find csrc -newer "$obj" | head -n 1)" ]; then
      echo "cc $src"
      $FUZZ_CC $CFLAGS_FUZZ -fsanitize=fuzzer-no-link,address,undefined \
        -fno-sanitize-recover=undefined -c "$src" -o "$obj" || return 1
    fi
    case "$src" in
      csrc/binding/*|csrc/profiler/*) lua_objs="$lua_objs $obj" ;;
      *)
        if grep -qE '#include "(lua|lauxlib|lualib|cg_binding|cg_lua(_[a-z]+)?|cg_prof(_[a-z0-9]+)?)\.h"' "$src"; then
          echo "fuzz/run.sh: $src includes a Lua header: it belongs in csrc/binding/ or csrc/profiler/" >&2
          return 1
        fi
        core="$core $obj" ;;
    esac
  done
  for t in fuzz_load fuzz_lua fuzz_vec fuzz_folded fuzz_stackrec; do
    extra=""
    [ "$t" = fuzz_lua ] && extra="$lua_objs $LUA_LIB -lm"
    echo "link $OUT/$t"
    # shellcheck disable=SC2086
    $FUZZ_CC $CFLAGS_FUZZ $SAN "fuzz/$t.c" $core $extra $CORE_LIBS \
      -o "$OUT/$t" || return 1
  done
}

seeds() {
  # built aside and renamed: another run may be reading the old ones
  tmp="$OUT/seeds.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  [ -d "$CORPUS_SRC" ] || echo "fuzz/run.sh: no $CORPUS_SRC; fixtures only" >&2
  # profile data files only: not the oracle outputs next to them
  n=0
  for f in $(find "$CORPUS_SRC" spec/fixtures -type f 2>/dev/null | sort); do
    case "$f" in
      */SOURCES.md|*.exp*|*.expected) continue ;;
      spec/fixtures/*.callgrind|spec/fixtures/fuzz/*|"$CORPUS_SRC"/*) ;;
      *) continue ;;
    esac
    n=$((n + 1))
    cp "$f" "$tmp/$n-$(basename "$f")"
  done
  # the compressed seed set: gzip, zstd and xz copies of the fixtures
  for f in spec/fixtures/*.callgrind; do
    b=$(basename "$f")
    command -v gzip >/dev/null && gzip -c "$f" >"$tmp/z-$b.gz" && n=$((n + 1))
    command -v zstd >/dev/null && zstd -q -c "$f" >"$tmp/z-$b.zst" && n=$((n + 1))
    command -v xz >/dev/null && xz -c "$f" >"$tmp/z-$b.xz" && n=$((n + 1))
  done
  # folded stacks (fuzz_folded): escapes, blanks, CRLF, a bad count
  printf 'main;f 10\nmain 2\nmain;f;g 3\r\n\n  \na\\;b;c\\\\d;e\\n 7\nmain;f 1\n' >"$tmp/folded-1.folded"
  printf 'x 1 5\na;; 3\nq\\ 4\nmain;f 9223372036854775807\nz 1' >"$tmp/folded-2.folded"
  n=$((n + 2))
  # stack records (fuzz_stackrec): bodies (the target appends the end
  # line), two events, a root after a chain, a negative cost
  printf '# callgrind.lua stack record 1\nprofile: fnv1a64:0123456789abcdef\nevents: Instr\nfunctions: 2\n[C]\tf\nx.lua\tmain chunk\nnodes: 4\n1 2 5\n1 1 3\n2 1 0\n4 2 7\n' >"$tmp/stacks-1.stacks"
  printf '# callgrind.lua stack record 1\nprofile: fnv1a64:ffffffffffffffff\nevents: Instr Alloc\nfunctions: 1\n\ta\nnodes: 2\n1 1 1 -4\n1 1 0 9223372036854775807\n' >"$tmp/stacks-2.stacks"
  n=$((n + 2))
  rm -rf "$OUT/seeds"
  mv "$tmp" "$OUT/seeds"
  echo "seeds: $n files in $OUT/seeds"
}

run_target() {
  t=$1
  corpus="$OUT/corpus-$t"
  art="$OUT/artifacts-$t"
  work="$OUT/work-$t"
  mkdir -p "$corpus" "$art" "$work"
  rm -f "$work"/fuzz-*.log
  before=$(ls "$art" | sort)
  echo "== $t for ${FUZZ_SECONDS}s (corpus $corpus, log $OUT/$t.log)"
  # from its own directory: with -jobs=N libFuzzer writes fuzz-N.log there
  # shellcheck disable=SC2086
  (cd "$work" && "$OUT/$t" -max_total_time="$FUZZ_SECONDS" \
    -dict="$ROOT/fuzz/dict" -max_len=65536 -rss_limit_mb=2048 \
    -timeout="$FUZZ_TIMEOUT" -print_final_stats=1 -artifact_prefix="$art/" \
    $FUZZ_FLAGS "$corpus" "$OUT/seeds") >"$OUT/$t.log" 2>&1
  rc=$?
  summary="$OUT/$t.log"
  for f in "$work"/fuzz-*.log; do
    [ -f "$f" ] || continue
    cat "$f" >>"$OUT/$t.log"
    summary=$f
  done
  grep -E '^stat::|^Done [0-9]+ runs' "$summary"
  grep -E '^#[0-9]+' "$summary" | tail -n 1
  # the reproducers this run wrote (slow-unit-*: slow, not failed; they
  # are listed, and a busy machine makes them)
  new=$(ls "$art" | sort | while read -r f; do
    echo "$before" | grep -qxF "$f" || echo "$art/$f"
  done)
  for f in $new; do
    case "$f" in */slow-unit-*) echo "slow input (not a failure): $f" ;; esac
  done
  new=$(for f in $new; do case "$f" in */slow-unit-*) ;; *) echo "$f" ;; esac; done)
  if [ "$rc" -ne 0 ] || [ -n "$new" ]; then
    echo "== $t FAILED (exit $rc); last lines of $OUT/$t.log:"
    tail -n 40 "$OUT/$t.log"
    for f in $new; do
      echo "reproducer: $f   (re-run: $OUT/$t $f)"
    done
    return 1
  fi
  echo "== $t: no crash in ${FUZZ_SECONDS}s; corpus $(ls "$corpus" | wc -l) files"
}

command -v "$FUZZ_CC" >/dev/null || die "no $FUZZ_CC (install clang libclang-rt-14-dev)"
if [ "${FUZZ_NOBUILD:-0}" != 1 ]; then
  build || die "build failed"
fi
seeds
status=0
for t in $TARGETS; do
  case "$t" in
    fuzz_load|fuzz_lua|fuzz_vec|fuzz_folded|fuzz_stackrec) run_target "$t" || status=1 ;;
    *) die "unknown target '$t' (fuzz_load, fuzz_lua, fuzz_vec, fuzz_folded, fuzz_stackrec)" ;;
  esac
done
exit $status
