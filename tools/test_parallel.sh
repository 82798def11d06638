#!/usr/bin/env bash
# make test: every spec file in JOBS processes of busted at once (default:
# the number of cores), the longest first, so the run takes about the
# longest file or the total divided by JOBS, whichever is more. Prints a
# line per file as it ends (file, seconds, result), then the details of
# every failure and one busted-style summary line summed over the files
# ("N successes / N failures / N errors / N pending : T seconds", T the
# wall time), which .ci/run reads; exits 1 on any failure or error.
#
#   JOBS=3 LUA=lua5.4 BUSTED=busted BUILD=build bash tools/test_parallel.sh [FILE...]
#
# BUSTED_OPTS: more options for each busted (--cpath=..., --lpath=...);
# the environment (CALLGRIND_*, LD_PRELOAD) reaches every process.
#
# Order: the seconds each file took in this checkout's last run
# ($BUILD/spec-times.txt, written at the end of each run), else
# tools/spec_times.txt (checked in, measured on the 2-core machine), else
# 5 s. Each file runs in a busted process of its own (.busted's lpath and
# cpath), its output in $BUILD/test-logs/FILE.log, under a limit of
# SPEC_TIMEOUT seconds (default 1200: a hung file fails, the run ends).
# Files that cannot share the machine's time with another one: SERIAL
# below, run one after the other in one process slot.
set -u
cd "$(dirname "$0")/.."

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
LUA=${LUA:-lua5.4}
BUSTED=${BUSTED:-busted}
BUILD=${BUILD:-build}
SPEC_TIMEOUT=${SPEC_TIMEOUT:-1200}
LOGS=$BUILD/test-logs
HISTORY=$BUILD/spec-times.txt
TABLE=tools/spec_times.txt

# Files run one after the other (in the order given), in one slot: none
# today. A file goes here when it measures the machine's speed or shares
# a fixed path with another file; each spec keeps its files in a
# directory of its own (spec/support/helpers.lua's lab, os.tmpname).
SERIAL=""

# --- one unit: FILE... run one after the other, each its own busted ---
if [ "${1:-}" = "--unit" ]; then
  shift
  for f in $1; do
    name=${f//\//_}
    log=$LOGS/$name.log
    start=$(date +%s.%N)
        # (timeout puts busted in a process group of its own, out of reach of
    # the terminal's ^C: this process passes it on, from a wait a trap
    # can interrupt)
    # shellcheck disable=SC2086 # (BUSTED_OPTS: words)
    timeout --kill-after=10 "$SPEC_TIMEOUT" "$BUSTED" --lua="$LUA" ${BUSTED_OPTS:-} "$f" </dev/null >"$log" 2>&1 &
    child=$!
    trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 130' INT TERM
    wait "$child"
    rc=$?
    trap - INT TERM
    secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    line=$(grep -E '^[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending' "$log" | tail -n 1)
    if [ -n "$line" ]; then
      set -- $(echo "$line" | sed -E 's#^([0-9]+) [^/]*/ ([0-9]+) [^/]*/ ([0-9]+) [^/]*/ ([0-9]+) .*#\1 \2 \3 \4#')
      s=$1 fl=$2 er=$3 pe=$4
    else
      s=0 fl=0 er=0 pe=0
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      why="timed out after $SPEC_TIMEOUT s (SPEC_TIMEOUT)"; er=$((er + 1))
    elif [ -z "$line" ]; then
      why="busted exited with status $rc and no summary"; er=$((er + 1))
    elif [ "$rc" -ne 0 ] && [ $((fl + er)) -eq 0 ]; then
      why="busted exited with status $rc"; er=$((er + 1))
    else
      why=""
    fi
    if [ $((fl + er)) -eq 0 ]; then
      result="ok    $s successes"
      [ "$pe" -ne 0 ] && result="$result, $pe pending"
    else
      result="FAIL  $s successes / $fl failures / $er errors${why:+ ($why)}"
    fi
    (
      flock 9
      printf '%s %s %s %s %s %s\n' "$f" "$secs" "$s" "$fl" "$er" "$pe" >>"$LOGS/results"
      [ -n "$why" ] && printf '%s\n' "$why" >"$log.why"
      done_n=$(wc -l <"$LOGS/results")
      printf '[%2d/%d] %-38s %6s s  %s\n' "$done_n" "$(cat "$LOGS/total")" "$f" "$secs" "$result"
    ) 9>"$LOGS/lock"
  done
  exit 0
fi

# --- the run ---
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find spec -path spec/fixtures -prune -o -name '*_spec.lua' -print | sort)
fi
[ "${#files[@]}" -gt 0 ] || { echo "test_parallel: no spec files" >&2; exit 1; }
rm -rf "$LOGS"
mkdir -p "$LOGS"
: >"$LOGS/results"
echo "${#files[@]}" >"$LOGS/total"

# seconds per file: the table, then the last run's measures over it
declare -A est
for src in "$TABLE" "$HISTORY"; do
  [ -f "$src" ] || continue
  while read -r f t _; do
    case "$f" in ''|'#'*) continue ;; esac
    est[$f]=$t
  done <"$src"
done

# units: one per file, but one for SERIAL's files together; longest first
declare -A in_serial
serial_unit="" serial_secs=0
for f in $SERIAL; do in_serial[$f]=1; done
units=$(
  for f in "${files[@]}"; do
    t=${est[$f]:-5}
    if [ -n "${in_serial[$f]:-}" ]; then
      serial_unit="$serial_unit $f"
      serial_secs=$(awk -v a="$serial_secs" -v b="$t" 'BEGIN { print a + b }')
    else
      echo "$t $f"
    fi
  done
  [ -n "$serial_unit" ] && echo "$serial_secs$serial_unit"
)
planned=$(echo "$units" | awk '{ s += $1 } END { printf "%d", s }')
echo "make test: ${#files[@]} spec files in $JOBS processes (busted --lua=$LUA), the longest first" \
  "(their last times add up to about $planned s); output of each in $LOGS/"
start=$(date +%s.%N)
echo "$units" | sort -k1,1 -g -r | cut -d' ' -f2- |
  xargs -d '\n' -n 1 -P "$JOBS" env JOBS="$JOBS" LUA="$LUA" BUSTED="$BUSTED" BUILD="$BUILD" \
    SPEC_TIMEOUT="$SPEC_TIMEOUT" BUSTED_OPTS="${BUSTED_OPTS:-}" bash "$0" --unit
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')

# the details of each failure (busted's own text after its summary line)
failed_files=0
while read -r f secs s fl er pe; do
  [ $((fl + er)) -eq 0 ] && continue
  failed_files=$((failed_files + 1))
  log=$LOGS/${f//\//_}.log
  echo
  echo "==== $f: $fl failures, $er errors ($log)"
  [ -f "$log.why" ] && cat "$log.why"
  if grep -qE '^[0-9]+ success(es)? / ' "$log"; then
    sed -n '/^[0-9]\+ success\(es\)\? \/ /,$p' "$log" | tail -n +2
  else
    tail -n 40 "$log"
  fi
done <"$LOGS/results"

# this run's seconds per file over the last ones, for the next run's order
{ [ -f "$HISTORY" ] && cat "$HISTORY"; awk '{ print $1, $2 }' "$LOGS/results"; } |
  awk '{ t[$1] = $2 } END { for (f in t) print f, t[f] }' | sort >"$HISTORY.tmp" && mv "$HISTORY.tmp" "$HISTORY"

read -r S F E P busted_secs < <(awk '{ s += $3; f += $4; e += $5; p += $6; t += $2 }
  END { printf "%d %d %d %d %.1f\n", s, f, e, p, t }' "$LOGS/results")
ran=$(wc -l <"$LOGS/results")
if [ "$ran" -ne "${#files[@]}" ]; then
  echo "test_parallel: $((${#files[@]} - ran)) of ${#files[@]} spec files gave no result"
  E=$((E + ${#files[@]} - ran))
fi
echo
echo "$ran spec files, $busted_secs s of busted in $JOBS processes, $wall s wall time;" \
  "slowest: $(sort -k2,2 -g -r "$LOGS/results" | head -n 3 | awk '{ printf "%s%s %s s", (NR > 1 ? ", " : ""), $1, $2 }')"
echo "$S successes / $F failures / $E errors / $P pending : $wall seconds"
[ $((F + E)) -eq 0 ]
