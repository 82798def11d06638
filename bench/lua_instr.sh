#!/usr/bin/env bash
# make bench, third table: where the Lua profiler's overhead goes, in
# instructions (valgrind --tool=callgrind's total of the whole process:
# the same on every run, unlike cpu time). Smaller copies of four
# workloads of bench/lua/ (made here: fib(22) and ack(2, 50); 4 rounds of
# closures; 2 of coroutines; 300 records, once, of json) run plain, under
# the empty C hooks of bench/lua_empty_hook.c (the interpreter's own cost
# of dispatching hooks: "empty fn" calls, returns and the counter, "empty
# lines" lines too) and under lua5.4 -lcallgrind.start at function and
# line level. "ours" is the profiled run less the empty hook's and less
# the fixed cost of the profiler on an empty script (loading its modules,
# writing the file): what our hook adds per run. Columns in millions of
# instructions. LUA, CC and BUILD as for run.sh.
. "$(dirname "$0")/lua_common.sh"
command -v valgrind > /dev/null || { echo "bench: valgrind not found (apt-get install -y valgrind)" >&2; exit 1; }

# small NAME 'sed expression' EXPECTED: bench/lua/NAME.lua made smaller;
# fails when the expression no longer matches (the workload changed)
small() {
    sed -e "$2" "bench/lua/$1.lua" > "$tmp/$1.lua"
    grep -q -- "$3" "$tmp/$1.lua" || { echo "bench: bench/lua/$1.lua changed: update lua_instr.sh" >&2; exit 1; }
}
small recursive 's/or 32), ack(2, 500)/or 22), ack(2, 50)/' 'or 22), ack(2, 50)'
small closures 's/for round = 1, 400 do/for round = 1, 4 do/' 'for round = 1, 4 do'
small coroutines 's/for _ = 1, 50 do/for _ = 1, 2 do/' 'for _ = 1, 2 do'
small json 's/for i = 1, 2000 do/for i = 1, 300 do/; s/for _ = 1, 4 do/for _ = 1, 1 do/' 'for i = 1, 300 do'
: > "$tmp/empty.lua"

# ir CMD...: the instructions valgrind counts for the whole process
ir() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/vg.out" "$@" > /dev/null 2> "$tmp/vg.err" \
        || { echo "bench: failed: $*" >&2; cat "$tmp/vg.err" >&2; return 1; }
    awk '/Collected :/ { print $4 }' "$tmp/vg.err"
}

fixed_fn=$(( $(CALLGRIND_LINES=0 ir "$LUA" -lcallgrind.start "$tmp/empty.lua") - $(ir "$LUA" "$tmp/empty.lua") ))
fixed_lines=$(( $(ir "$LUA" -lcallgrind.start "$tmp/empty.lua") - $(ir "$LUA" "$tmp/empty.lua") ))

printf "%-11s %8s %9s %9s %9s %9s %11s %9s %9s\n" workload plain "empty fn" "fn level" "ours fn" \
    "empty lines" "line level" "ours lines" "ours/run"
for w in recursive closures coroutines json; do
    p=$(ir "$LUA" "$tmp/$w.lua")
    ef=$(EMPTY_HOOK_LINES=0 ir "$LUA" -lempty_hook "$tmp/$w.lua")
    f=$(( $(CALLGRIND_LINES=0 ir "$LUA" -lcallgrind.start "$tmp/$w.lua") - fixed_fn ))
    el=$(ir "$LUA" -lempty_hook "$tmp/$w.lua")
    l=$(( $(ir "$LUA" -lcallgrind.start "$tmp/$w.lua") - fixed_lines ))
    awk -v w="$w" -v p="$p" -v ef="$ef" -v f="$f" -v el="$el" -v l="$l" 'BEGIN {
        printf "%-11s %8.1f %9.1f %9.1f %9.1f %9.1f %11.1f %9.1f %8.0f%%\n", w, p / 1e6, ef / 1e6, f / 1e6,
            (f - ef) / 1e6, el / 1e6, l / 1e6, (l - el) / 1e6, 100 * (l - el) / l }'
done
echo "millions of instructions (valgrind), fixed costs on an empty script subtracted ($((fixed_fn / 1000000))M fn," \
    "$((fixed_lines / 1000000))M lines); ours = profiled - empty hook; ours/run = ours lines / line level"
