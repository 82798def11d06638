--- The one declaration of the library's public surface: every function,
-- method and field with its signature, one line of meaning and what it
-- returns; every options table with each option's type, default and
-- meaning; the kinds of a recoverable failure. Made from it (nothing
-- declares these anywhere else; specs check it):
--
-- - the argument checks of every options table (`args.options(opts,
--   fname, n, "set")` takes the set's name, `M.option_types`);
-- - `callgrind.help()` (help.lua);
-- - docs/reference.md and the LuaLS types in types/ (`make docs`,
--   tools/gen_docs.lua).
--
-- Nothing here runs at require time but the building of tables.
-- @module callgrind.api
local ipairs, type = ipairs, type

local M = {}

-- Options -----------------------------------------------------------------
-- Each set: a list of { name, LuaLS type, default (as text, or false for
-- none), meaning }. A set may start from another (`with`).

local function with(base, extra)
  local t = {}
  for _, o in ipairs(base) do t[#t + 1] = o end
  for _, o in ipairs(extra) do t[#t + 1] = o end
  return t
end

local O = {}
M.options = O

O.load = {
  { "lenient", "boolean", "false", "skip bad lines, keeping each in prof:warnings(), instead of failing" },
  { "position_rule", "\"valgrind\"|\"kcachegrind\"", "\"valgrind\"",
    "what relative positions after calls=, jump= and jcnd= lines are relative to: \"valgrind\", the last regular "
      .. "cost line, as valgrind writes them; \"kcachegrind\", the line before, as KCachegrind's loader reads them "
      .. "(docs/format.md, \"Calls and jumps\")" },
  { "progress", "fun(done: integer, total: integer): boolean?", false,
    "called at least every 16 MB of input and at the end; returning false cancels the load (kind \"cancelled\")" },
  { "threads", "integer", "2 for a file of 4 MB or more", "1 reads with one thread" },
  { "chunk", "integer", "the reader's own", "the second thread's chunk size in bytes (for tests)" },
  { "max_bytes", "integer", "16 GiB, or 1,000 times a compressed file's size",
    "the most bytes of text a file may give (a decompression bomb fails with kind \"memory\")" },
  { "merge", "boolean", "false",
    "sum files of different runs (pid: or cmd: differ); without it they are refused (kind \"runs\")", lua = true },
}
O.parse = {}
for _, o in ipairs(O.load) do
  if o[1] ~= "merge" then O.parse[#O.parse + 1] = o end
end
O.files = {
  { "merge", "boolean", "false",
    "list the files of every run of that name (without it, several runs fail, kind \"runs\")" },
}
O.profiler = {
  { "lines", "boolean", "true", "count per source line too (false: functions and calls only, faster)" },
  { "stacks", "boolean|string", "false",
    "record whole call stacks (prof:stacks, exact folded stacks and flame graphs); until_exit writes them as "
      .. "the stack record FILE.stacks, or with \"folded\" as folded text FILE.folded" },
  { "time", "boolean", "false", "add event Time: nanoseconds, the hook's own time left out" },
  { "alloc", "boolean", "false", "add event Alloc: bytes allocated" },
  { "count_hook", "boolean", "false", "count with a count hook instead of the fast paths (for tests)" },
  { "engine", "\"vm\"|\"hook\"", "\"vm\" on the counting interpreter (make vm), else \"hook\"",
    "count with the counting interpreter's clock or with the debug hook's counter" },
}
O.profile = with(O.profiler, {
  { "runs", "integer", "1",
    "run fn this many times in this process: one process's spread of Instr only (callgrind.spread: across processes)" },
})
O.spread = {
  { "lua", "string", "\"lua5.4\"", "the interpreter each run starts (with -lcallgrind.start)" },
  { "lines", "boolean", "true", "count per source line too (false: functions and calls only, faster)" },
  { "top", "integer", "10", "the most functions the text lists" },
}
O.until_exit = with(O.profiler, {
  { "out", "string", "\"callgrind.out.<pid>\"", "the file written when the Lua state closes" },
})
O.run = {
  { "toggle_collect", "string|string[]", false,
    "count only these functions and what they call (collect_atstart then defaults to false)" },
  { "collect_atstart", "boolean", "true", "count from the start" },
  { "cache_sim", "boolean", "false", "simulate the caches, with a fixed geometry (run.cache_geometry)" },
  { "branch_sim", "boolean", "false", "simulate branch prediction" },
  { "dump_instr", "boolean", "false", "costs per instruction address" },
  { "collect_jumps", "boolean", "false", "record jumps" },
  { "separate_threads", "boolean", "false", "a part per thread" },
  { "trace_children", "boolean", "false", "follow child processes" },
  { "args", "string[]", false, "more valgrind options" },
  { "env", "table<string, string|false>", false,
    "variables to add (keys matching ^[%a_][%w_]*$); false unsets one" },
  { "env_clear", "boolean", "true",
    "start from a fixed environment: PATH, and TMPDIR and VALGRIND_LIB when set, then env (false: the caller's)" },
  { "stdin", "string", false, "the program's standard input" },
  { "timeout", "number", false,
    "seconds: every process of the run gets SIGTERM, then SIGKILL 5 s later" },
  { "cwd", "string", false, "the program's working directory" },
  { "keep", "string", false, "a directory to keep the files in (a fresh run.XXXXXX inside it if it exists)" },
  { "valgrind", "string", "\"valgrind\"", "the valgrind executable" },
  { "allow_failure", "boolean", "false", "a non-zero exit is not an error" },
}
O.write = {
  { "functions", "callgrind.Selection|callgrind.Function[]", false,
    "write only these functions (and the calls between them)" },
  { "compress", "boolean", "true", "name compression: each name written once, then by number" },
  { "pid", "boolean", "numbered in a profile of several parts, else none",
    "true: the pid: lines as loaded (they change at every run); false: none; by default several parts (threads, "
    .. "dumps, files) get pid: 1, 2... by process in order, the same at every run: KCachegrind labels a part "
    .. "\"PID 1, section 2, thread 3\" from them, and by the file's name alone without" },
  { "cmd", "boolean|string", "true", "write the cmd: line (false: none; a string: that command)" },
}
O.find = {
  { "plain", "boolean", "false", "the pattern is plain text, not a Lua pattern" },
  { "file", "string", false, "only functions whose file contains this (plain text)" },
  { "object", "string", false, "only functions whose object contains this (plain text)" },
}
O.tree = {
  { "ev", "string|integer", "the first event", "the event (the positional ev wins)" },
  { "direction", "\"callees\"|\"callers\"", "\"callees\"", "walk down to callees or up to callers" },
  { "depth", "integer", "3", "levels below the root" },
  { "threshold", "number", "0.01", "leave out entries below this fraction of the profile's total" },
  { "relative", "boolean", "false",
    "the threshold and the percentages are shares of the root function's inclusive cost, not of the total" },
}
O.annotate = {
  { "source", "boolean|string", "false",
    "read the source text beside the costs (a string: the directory to find it in)" },
}
O.ann_report = {
  { "context", "integer", "3", "source lines shown around each costly line" },
  { "limit", "integer", "every line (tostring: 25)",
    "the most lines with cost shown: the costliest, in line order, and a count of the rest" },
}
O.sel_report = {
  { "events", "(string|integer)[]", "the first event", "the events shown, a column each" },
  { "event", "string|integer", "the first event", "the one event shown (events wins)" },
  { "kind", "\"self\"|\"inclusive\"", "\"self\"", "which cost is shown" },
  { "width", "integer", "60", "the name column's width" },
  { "percent", "boolean", "true", "show each cost's share of the total" },
  { "file", "boolean", "true", "a column for the file" },
  { "object", "boolean", "true, but false for a Lua profile (it has no objects)", "a column for the object" },
  { "limit", "integer", "every row (tostring: 25)", "the most rows shown" },
}
O.d_report = {
  { "events", "string[]", "the events both profiles have", "the events whose totals are shown" },
  { "event", "string", "the first event", "the event of the movers" },
  { "kind", "\"self\"|\"inclusive\"", "\"self\"", "which cost the movers compare" },
  { "top", "integer", "5", "how many movers (0: none)" },
}
local MATCH = "\"name\"|\"name+file\"|\"name+file+object\"|fun(fn: callgrind.Function): string"
O.diff = {
  { "match", MATCH, "\"name+file+object\"",
    "the key that matches a function of one profile with one of the other: name, file and object without "
    .. "directories (each profile's own program counting as one object), fewer of them, or a function" },
}
O.check = {
  { "allow_warnings", "boolean", "false", "pass a profile that lost data (its lossy warnings fail the check)" },
}
O.no_regression = with(O.check, {
  { "fail_on_improvement", "boolean", "false", "fail when a cost fell past its limit too" },
  { "kind", "\"self\"|\"inclusive\"", "\"inclusive\"", "which cost per function is compared" },
  { "match", MATCH, "as callgrind.diff", "the match key" },
  { "top", "integer", "5", "how many movers the message shows" },
  { "hint", "string", false, "a line the failure message ends with" },
})
O.within_baseline = with(O.check, {
  { "fail_on_improvement", "boolean", "false", "fail when a cost fell past its limit too" },
  { "kind", "\"self\"|\"inclusive\"", "\"inclusive\"", "which cost per function is compared" },
  { "match", MATCH, "as callgrind.diff", "the match key" },
  { "top", "integer", "5", "how many movers the message shows" },
  { "dir", "string", "$CALLGRIND_BASELINE_DIR, else spec/baselines under the project root",
    "the baselines' directory" },
  { "same_command", "boolean", "false", "fail when the baseline is of another command" },
  { "update", "boolean", "false", "write the baseline anew from this profile" },
  { "quiet", "boolean", "false", "say nothing on stderr when a baseline is saved" },
})
O.folded = {
  { "threshold", "number", "0.0001",
    "estimated stacks below this fraction of the total are not made: their cost goes to the same functions' "
    .. "other stacks (self costs stay exact), and those below 0.00001 (or this, if smaller) are pruned: a "
    .. "function below it in all is one stack [pruned];NAME; 0: the whole estimate, nothing pruned; exact "
    .. "stacks below it merge into their parent" },
  { "collapse_recursion", "boolean", "false",
    "a function already on a stack is not entered again: f;f;f folds into f, A;B;A;B into A;B "
    .. "(each function's self cost and the total stay exact)" },
  { "max_bytes", "integer", "268435456 (256 MiB)",
    "the most bytes of text; the size is computed first and a larger text fails (kind \"memory\") "
    .. "naming it (a deep recursion: collapse_recursion = true)" },
}
O.flame = {
  { "ev", "string|integer", "the first event", "the event (the positional ev wins)" },
  { "threshold", "number", "0.0001", "leave out frames below this fraction of the total" },
  { "title", "string", "the profile's name and event", "the title" },
  { "width", "number", "1200", "the picture's width in pixels (at least 100)" },
  { "color", "\"object\"|\"file\"", "\"object\"", "what a frame's colour says (a legend names each object or file)" },
  { "collapse_recursion", "boolean", "false, and true for stacks deeper than 1,000 frames",
    "draw the stacks with recursion collapsed (as prof:folded's); the title says so" },
}
O.dot = {
  { "node_threshold", "number", "0.005", "leave out functions below this fraction of the total inclusive cost" },
  { "edge_threshold", "number", "0.001", "leave out calls below this fraction" },
  { "root", "callgrind.Function|string", false, "only what this function calls" },
  { "leaf", "callgrind.Function|string", false, "only what calls this function" },
  { "depth", "integer", false, "levels from root or leaf" },
  { "title", "string", "the profile's name and event", "the graph's title" },
  { "max_nodes", "integer", "1000", "the most nodes: the hottest are kept and the title says how many more" },
}
O.write_dot = with(O.dot, {
  { "format", "\"dot\"|\"svg\"|\"png\"", "\"dot\"", "DOT text, or a picture drawn by Graphviz" },
  { "dot_command", "string", "\"dot\"", "Graphviz's dot" },
})
O.pprof = {
  { "events", "string[]", "every base event", "the sample types" },
  { "threshold", "number", "0 for exact stacks, else 0.0001",
    "estimated stacks below this fraction of the total are not made, and pruned below 0.00001 (or this) as in "
      .. "prof:folded (flat per function stays exact; 0: the whole estimate); "
      .. "exact stacks (recorded, FILE.stacks or FILE.folded) are all kept unless it is given, and then merge into "
      .. "their caller below it, as in prof:folded" },
  { "collapse_recursion", "boolean", "false", "as prof:folded's" },
  { "max_bytes", "integer", "268435456 (256 MiB)",
    "the most bytes of samples (each lists its whole stack: a recursion n deep takes about n^2/2 locations); "
    .. "the size is computed first and a larger profile fails (kind \"memory\") naming it" },
}
O.html = {
  { "title", "string", "\"callgrind report: \" and the profile's name", "the page's title" },
  { "threshold", "number", "0.0005", "leave out flame frames below this fraction of the total" },
  { "max_functions", "integer", "2000", "the most functions in the table, by inclusive cost (the page says how many "
    .. "were left out)" },
  { "source_functions", "integer", "every function of the table",
    "how many of the costliest functions (by inclusive cost) keep their hottest lines (the page says when not all)" },
  { "source_share", "number", "0", "only the functions of at least this fraction of the total (inclusive, first "
    .. "event) keep their hottest lines (the page says so)" },
  { "max_lines", "integer", "20", "the most lines kept per function (source text, when readable, embedded)" },
  { "source_root", "string", false, "the directory relative source paths are read under (default: as written)" },
  { "movers", "integer", "50", "a diff: how many movers per event" },
  { "flame_events", "integer", "4", "flame graphs for the first N events (the page says which were left out)" },
}
-- The history store (callgrind.history).
O.history_open = {
  { "busy_ms", "integer", "60000", "SQLite: how long a write waits for another process's (its busy timeout)" },
}
local LINE = {
  { "branch", "string", false, "only this branch's runs (default: every branch, each a line of its own)" },
  { "machine", "string", false, "only this machine's runs (default: every machine, each a line of its own)" },
}
O.history_add = {
  { "commit", "string", "$GITHUB_SHA, $CI_COMMIT_SHA ..., else git's HEAD", "the run's commit" },
  { "branch", "string", "$GITHUB_HEAD_REF, $GITHUB_REF_NAME, $CI_COMMIT_REF_NAME ..., else git's branch",
    "the run's branch" },
  { "machine", "string", "$CALLGRIND_MACHINE, else uname -n", "the machine the numbers were counted on" },
  { "time", "integer|string", "the commit's time (git log -1 --format=%cI), else now",
    "the commit's time: seconds since 1970 or ISO 8601" },
  { "dir", "string", "the working directory", "the git checkout the commit is read from" },
  { "label", "string", "the profile's file name (without .callgrind), the baseline's name",
    "the first part of a profile's series' names" },
  { "events", "string[]", "the profile's base events", "a profile's events to keep" },
  { "spread", "number", false, "the series vary between processes (Lua counts): their measured spread, in "
    .. "percent (callgrind-lua spread); a step must go beyond it" },
}
O.history_show = with(LINE, {})
O.history_changes = with(LINE, {
  { "series", "string", false, "only series whose name matches this Lua pattern" },
  { "tolerance", "number", "0", "a step is a change beyond this percent of the value before (0: any change)" },
})
O.history_bmf = with(LINE, {
  { "commit", "string", "the latest run's", "the commit whose run is exported" },
})
O.history_html = with(O.history_changes, {
  { "title", "string", "\"callgrind history\"", "the page's title" },
})
O.none = {}
-- The keys of a limits table (check_no_regression, check_within_baseline
-- and their assertions) beside its event limits ({ Ir = "5%", ... }).
O.limits = {
  { "functions", "table<string, table>", false, "limits per function name: { [name] = { Ir = \"10%\" } }" },
  { "kind", "\"self\"|\"inclusive\"", "\"inclusive\"", "which cost the per-function limits compare" },
  { "allow_warnings", "boolean", "false", "pass a profile that lost data" },
  { "fail_on_improvement", "boolean", "false", "fail when a cost fell past its limit too" },
}
O.export_events = {
  { "events", "(string|integer)[]", "the base events", "the events, columns each" },
}

--- The Lua types (as `type` names them, joined by "|") that the values of
-- a LuaLS type have: what the argument checks compare with.
-- @usage api.lua_types("callgrind.Function|string[]") --> "userdata|table"
local function lua_types(t)
  local out, seen = {}, {}
  local function add(x)
    if not seen[x] then seen[x] = true; out[#out + 1] = x end
  end
  -- split on | outside parentheses and braces
  local depth, start = 0, 1
  local alts = {}
  for i = 1, #t do
    local c = t:sub(i, i)
    if c == "(" or c == "{" or c == "<" then depth = depth + 1
    elseif c == ")" or c == "}" or c == ">" then depth = depth - 1
    elseif c == "|" and depth == 0 then alts[#alts + 1] = t:sub(start, i - 1); start = i + 1 end
  end
  alts[#alts + 1] = t:sub(start)
  for _, a in ipairs(alts) do
    if a:match("^fun%(") then add("function")
    elseif a:match("%[%]$") or a:match("^table") or a:match("^{") or a == "callgrind.Selection" then add("table")
    elseif a:match("^\"") or a == "string" then add("string")
    elseif a == "integer" or a == "number" then add("number")
    elseif a == "boolean" then add("boolean")
    elseif a:match("^callgrind%.") then add("userdata")
    else add("any") end
  end
  return table.concat(out, "|")
end
M.lua_types = lua_types

local checks = {}
--- The checks of an options set: option name -> Lua types ("string|number"),
-- what args.options takes (made once per set).
-- @usage api.option_types("tree").depth --> "number"
function M.option_types(set)
  local c = checks[set]
  if c then return c end
  local list = O[set]
  if type(list) ~= "table" then error("callgrind.api: no options set '" .. tostring(set) .. "'", 2) end
  c = {}
  for _, o in ipairs(list) do c[o[1]] = lua_types(o[2]) end
  checks[set] = c
  return c
end

--- The types of parameters by name, for the types file (an entry's
-- `params` overrides one).
M.params = {
  path = "string", paths = "string[]", text = "string", name = "string", x = "any", fn = "function",
  opts = "table", argv = "string[]", old = "callgrind.Profile", new = "callgrind.Profile",
  prof = "callgrind.Profile", limit = "number", limits = "table", ev = "string|integer",
  kind = "\"self\"|\"inclusive\"", target = "callgrind.Function|callgrind.Selection|callgrind.Profile",
  file = "string", object = "string", formula = "string", long_name = "string",
  fns = "callgrind.Function[]", pattern = "string", n = "integer", by = "\"file\"|\"object\"",
  path_or_file = "string|file*", part = "callgrind.Part", pred = "fun(fn: callgrind.Function): boolean",
  fraction = "number", i = "integer",
}

--- The kinds of a recoverable failure, the third result of `nil, message,
-- kind` (README, "Errors").
M.error_kinds = {
  { "io", "a file could not be read or written (the message has the path and the system's reason)" },
  { "format", "the input is not what it should be (the message has the file and line)" },
  { "truncated", "a file ends in the middle (cut short while being written)" },
  { "memory", "out of memory, or past a limit (max_bytes, a decompression bomb)" },
  { "cancelled", "the progress function returned false" },
  { "valgrind", "running valgrind failed: missing, a non-zero exit, a timeout, processes left running" },
  { "not_found", "no function of that name (the message names the closest ones)" },
  { "ambiguous", "several functions of that name (the message lists them with their file or object)" },
  { "conflict", "a run added again with another value of an exact count (nothing of that add is kept)" },
  { "runs", "files of different runs (pid: or cmd: differ) not summed: the message lists them (opts.merge sums them)" },
}

--- The objects, in the order help() lists them: `name`, `what` (one
-- line), `var` (how examples call one), `class` (the type's name in the
-- types file, default "callgrind." .. name), `entries` (`{ signature,
-- line, type }`: a signature with "(" is a method or function and type
-- what it returns, else a field and type its type; `opts`, the options
-- table it takes; `params`, parameter types other than M.params').
-- `tools/gen_types.lua` makes the LuaLS types file from them.
M.objects = {
  { name = "callgrind", what = "the module", var = "callgrind", class = "callgrind", entries = {
    { "callgrind.load(path [, opts])", "loads a profile file: Profile, or nil and \"path:LINE: message\"",
      "callgrind.Profile?, string?, callgrind.ErrorKind?", opts = "load",
      errors = { "io", "format", "truncated", "memory", "cancelled" } },
    { "callgrind.load({ path, ... } [, opts])",
      "loads several files (threads, dumps) as one Profile; files of different runs only with merge",
      "callgrind.Profile?, string?, callgrind.ErrorKind?", opts = "load",
      errors = { "io", "format", "truncated", "memory", "cancelled", "runs" } },
    { "callgrind.files(path [, opts])", "the files one valgrind run wrote for that name, in order",
      "string[]?, string?, callgrind.ErrorKind?", opts = "files", errors = { "io", "runs" } },
    { "callgrind.parse(text [, name [, opts]])", "loads a profile from a string",
      "callgrind.Profile?, string?, callgrind.ErrorKind?", opts = "parse",
      errors = { "io", "format", "truncated", "memory", "cancelled" } },
    { "callgrind.help([x])", "this help: the objects, or the methods and fields of x", "string" },
    { "callgrind.profile(fn [, opts])", "runs fn under the Lua profiler: a Profile of Lua VM instructions",
      "callgrind.Profile, any ...", opts = "profile" },
    { "callgrind.run(argv [, opts])", "runs a command under valgrind --tool=callgrind: Profile, info",
      "callgrind.Profile?, table|string, callgrind.ErrorKind?, table?", opts = "run",
      errors = { "valgrind", "io", "format", "truncated", "memory" } },
    { "callgrind.spread(script, n [, opts])",
      "profiles a Lua script in n fresh processes: min, max and the functions that vary",
      "{ event: string, runs: integer, totals: integer[], min: integer, max: integer, spread_pct: number, "
        .. "functions: { name: string, file: string?, min: integer, max: integer }[], text: string }?, string?, "
        .. "callgrind.ErrorKind?", opts = "spread", params = { script = "string|string[]" }, errors = { "io" } },
    { "callgrind.write_file_atomic(path, text)", "writes text to a temporary file, synced and renamed over path",
      "true?, string?, callgrind.ErrorKind?", errors = { "io" } },
    { "callgrind.diff(old, new [, opts])", "compares two profiles, function by function (Diff)",
      "callgrind.Diff", opts = "diff" },
    { "callgrind.check_cost_at_most(limit, target, ev [, kind [, opts]])", "ok, message: a cost within a limit",
      "boolean, string", opts = "check" },
    { "callgrind.check_calls_at_most(limit, fn [, opts])", "ok, message: calls into a function within a limit",
      "boolean, string", opts = "check", params = { fn = "callgrind.Function" } },
    { "callgrind.check_no_regression(old, new, limits [, opts])", "ok, message: no cost grew past its limit",
      "boolean, string", opts = "no_regression" },
    { "callgrind.check_within_baseline(name, prof, limits [, opts])", "ok, message: against a stored baseline",
      "boolean, string", opts = "within_baseline" },
    { "callgrind.record_summary(path [, format])", "the record of checks (CALLGRIND_RECORD) as text or Markdown",
      "string?, string?, callgrind.ErrorKind?", errors = { "io", "format" } },
    { "callgrind.report_summary(path [, format])", "callgrind.record_summary under its old name",
      "string?, string?, callgrind.ErrorKind?", deprecated = "callgrind.record_summary" },
    { "callgrind.methods", "the method tables of Profile, Function, Call, Jump, CostLine, Part",
      "table<string, table>" },
    { "callgrind.format", "formatting helpers: commas(n), shorten(name, width)",
      "{ commas: fun(n: integer): string, shorten: fun(name: string, width?: integer): string }" },
    { "callgrind.report", "callgrind.format under its old name",
      "{ commas: fun(n: integer): string, shorten: fun(name: string, width?: integer): string }",
      deprecated = "callgrind.format" },
    { "callgrind.history", "the history store: every run's numbers by commit (callgrind.help(\"history\"))",
      "callgrind.history" },
    { "callgrind._VERSION", "the library's version", "string" },
  } },
  { name = "profiler", what = "require \"callgrind.profiler\": profile Lua code", var = "profiler",
    class = "callgrind.profiler", entries = {
    { "profiler.start([opts])",
      "starts counting Lua VM instructions (opts: time, alloc, count_hook, engine, lines, stacks)",
      "nil", opts = "profiler" },
    { "profiler.stop()", "stops: the Profile and its callgrind text", "callgrind.Profile, string" },
    { "profiler.profile(fn [, opts])", "what callgrind.profile is",
      "callgrind.Profile, any ...", opts = "profile" },
    { "profiler.running()", "whether the profiler runs", "boolean" },
    { "profiler.until_exit([opts])", "profiles until the Lua state closes, then writes opts.out",
      "table", opts = "until_exit" },
  } },
  { name = "Profile", what = "a loaded profile", var = "prof", entries = {
    { "prof.name", "the path or chunk name it was loaded from", "string" },
    { "prof.version", "the format version (1)", "integer" },
    { "prof.creator", "the writer's creator: line, or nil", "string?" },
    { "prof.cmd", "the profiled command, or nil", "string?" },
    { "prof.pid", "the profiled process id, or nil", "integer?" },
    { "prof.events", "the base events, in file order", "string[]" },
    { "prof.engine", "a Lua profile's engine (desc: Engine:): \"vm\" (the counting interpreter) or \"hook\"",
      "string?" },
    { "prof:totals()", "sum of all cost lines, per base event", "table<string, integer>" },
    { "prof:total(ev)", "sum of all cost lines for one event (base or derived)", "integer" },
    { "prof:warnings([kind])", "what was skipped or did not add up (kind: truncated, skipped, ...)",
      "callgrind.Warnings" },
    { "prof:parts()", "iterator of Part", "fun(): callgrind.Part?" },
    { "prof:functions()", "iterator of Function", "fun(): callgrind.Function?" },
    { "prof:calls()", "iterator of every Call", "fun(): callgrind.Call?" },
    { "prof:jumps()", "iterator of every Jump", "fun(): callgrind.Jump?" },
    { "prof:lines()", "iterator of every CostLine", "fun(): callgrind.CostLine?" },
    { "prof:ulines([ev, ...])", "fast iterator: fn index, line, addr and the asked costs per cost line",
      "fun(): integer?, integer?, integer?, integer ..." },
    { "prof:func(name [, file [, object]])", "the Function of that name, or nil, why and a kind",
      "callgrind.Function?, string?, callgrind.ErrorKind?", errors = { "not_found", "ambiguous" } },
    { "prof:memory()", "bytes the model holds", "integer" },
    { "prof:close()", "frees the model now (also on garbage collection)", "nil" },
    { "prof:define(name, formula [, long_name])", "defines a derived event, e.g. \"Ir + 10 L1m\"",
      "callgrind.Profile" },
    { "prof:event_info(ev)", "name, long name, formula, derived of an event",
      "{ name: string, long_name: string?, formula: string?, derived: boolean }" },
    { "prof:derived_events()", "the derived events' names", "string[]" },
    { "prof:all_events()", "base then derived events' names", "string[]" },
    { "prof:inclusive_all(ev)", "inclusive cost of every function, by function index", "integer[]" },
    { "prof:cycles()", "iterator of Cycle: functions that call each other", "fun(): callgrind.Cycle?" },
    { "prof:all()", "every function, as a Selection", "callgrind.Selection" },
    { "prof:select(fns)", "a Selection of the given functions", "callgrind.Selection" },
    { "prof:find([pattern [, opts]])", "functions whose name matches, as a Selection",
      "callgrind.Selection", opts = "find" },
    { "prof:top(n [, ev [, kind]])", "the n costliest functions (kind \"self\" or \"inclusive\")",
      "callgrind.Selection" },
    { "prof:group(by [, ev])", "self cost grouped by \"file\" or \"object\", costliest first",
      "callgrind.Groups" },
    { "prof:annotate(file [, ev] [, opts])", "cost per source line of one file, as an Annotation",
      "callgrind.Annotation", opts = "annotate" },
    { "prof:summary()", "a few lines about the profile", "string" },
    { "prof:write(path_or_file [, opts])",
      "writes a canonical callgrind file, atomically (compress, functions, pid, cmd)",
      "true?, string?, callgrind.ErrorKind?", opts = "write", errors = { "io" } },
    { "prof:folded([ev [, opts]])", "folded stacks \"a;b;c 123\" (exact, or estimated with exact self costs)",
      "string", opts = "folded" },
    { "prof:write_folded(path [, ev [, opts]])", "writes the folded stacks to a file",
      "true?, string?, callgrind.ErrorKind?", opts = "folded", errors = { "io" } },
    { "prof:flamegraph([ev [, opts]])", "an interactive SVG flame graph (threshold, title, width, color)",
      "string", opts = "flame" },
    { "prof:write_flamegraph(path [, ev [, opts]])", "writes the flame graph to a file",
      "true?, string?, callgrind.ErrorKind?", opts = "flame", errors = { "io" } },
    { "prof:dot([ev [, opts]])", "a Graphviz DOT call graph (node/edge thresholds, root, leaf, depth)",
      "string", opts = "dot" },
    { "prof:write_dot(path [, ev [, opts]])", "writes the call graph: DOT, or svg/png through Graphviz's dot",
      "true?, string?, callgrind.ErrorKind?", opts = "write_dot", errors = { "io" } },
    { "prof:write_pprof(path [, opts])", "writes pprof's gzipped profile.proto (go tool pprof ...)",
      "true?, string?, callgrind.ErrorKind?", opts = "pprof", errors = { "io", "memory" } },
    { "prof:html([opts])", "one self-contained HTML report: header, function table, flame graph, "
      .. "callers, callees and call graph of a function (opens on the root), source lines", "string", opts = "html" },
    { "prof:write_html(path [, opts])", "writes the HTML report to a file",
      "true?, string?, callgrind.ErrorKind?", opts = "html", errors = { "io" } },
    { "prof:stacks([ev])",
      "iterator of frames, cost per call stack (a Lua profile made with stacks = true, or loaded with its FILE.stacks)",
      "fun(): callgrind.Function[]?, integer?" },
  } },
  { name = "Part", what = "one part of a profile (a dump, a thread)", var = "part", entries = {
    { "part.index", "its position in the profile, from 1", "integer" },
    { "part.number", "its part: number (or its position)", "integer" },
    { "part.pid", "the process id, or nil", "integer?" },
    { "part.thread", "the thread id, or nil", "integer?" },
    { "part.cmd", "the command, or nil", "string?" },
    { "part.desc", "its desc: lines, type -> value", "table<string, string>" },
    { "part.events", "the events its cost lines use", "string[]" },
    { "part.summary", "its summary: line as written, or nil", "table<string, integer>?" },
    { "part.written_totals", "its totals: line as written, or nil", "table<string, integer>?" },
    { "part.file", "the file it was read from", "string" },
    { "part:totals()", "the sum of its cost lines, per base event", "table<string, integer>" },
  } },
  { name = "Function", what = "a function of a profile", var = "fn", entries = {
    { "fn.name", "its name as written", "string" },
    { "fn.file", "its source file (fl=), or nil", "string?" },
    { "fn.object", "its object (ob=), or nil", "string?" },
    { "fn.index", "its index in the profile, from 1", "integer" },
    { "fn.profile", "the Profile it belongs to", "callgrind.Profile" },
    { "fn:self([ev [, part]])", "its self cost (in one part): a number, or a table of the base events",
      "integer|table<string, integer>" },
    { "fn:inclusive([ev])", "cost while it ran, callees included, recursion once", "integer|table<string, integer>" },
    { "fn:inclusive_bounds(ev)", "lower bound and estimate of its inclusive cost", "integer, integer" },
    { "fn:lines()", "iterator of its CostLines", "fun(): callgrind.CostLine?" },
    { "fn:ulines([ev, ...])", "fast iterator over its cost lines, as prof:ulines",
      "fun(): integer?, integer?, integer?, integer ..." },
    { "fn:calls()", "iterator of its outgoing Calls", "fun(): callgrind.Call?" },
    { "fn:callers()", "iterator of its incoming Calls", "fun(): callgrind.Call?" },
    { "fn:jumps()", "iterator of its Jumps", "fun(): callgrind.Jump?" },
    { "fn:callee_functions()", "its calls aggregated per callee (Edges)", "callgrind.Edges" },
    { "fn:caller_functions()", "its callers aggregated per caller (Edges)", "callgrind.Edges" },
    { "fn:cycle()", "the Cycle it is part of, or nil", "callgrind.Cycle?" },
    { "fn:tree([ev [, opts]])", "its call tree (Tree): direction, depth, threshold",
      "callgrind.Tree", opts = "tree" },
  } },
  { name = "CostLine", what = "one cost line", var = "line", entries = {
    { "line.fn", "the Function it belongs to", "callgrind.Function" },
    { "line.file", "its source file (fi=/fe= aware), or nil", "string?" },
    { "line.line", "its line number, or nil", "integer?" },
    { "line.addr", "its instruction address, or nil", "integer?" },
    { "line.part", "the Part it is in", "callgrind.Part" },
    { "line:cost([ev])", "its cost: a number, or a table of the base events", "integer|table<string, integer>" },
  } },
  { name = "Call", what = "a calls= line: calls from one site to one function", var = "call", entries = {
    { "call.caller", "the calling Function", "callgrind.Function" },
    { "call.callee", "the called Function", "callgrind.Function" },
    { "call.count", "how many calls", "integer" },
    { "call.file", "the call site's file, or nil", "string?" },
    { "call.line", "the call site's line, or nil", "integer?" },
    { "call.addr", "the call site's address, or nil", "integer?" },
    { "call.part", "the Part it is in", "callgrind.Part" },
    { "call.target_line", "the callee position the calls= line names, or nil", "integer?" },
    { "call.target_addr", "the callee address the calls= line names, or nil", "integer?" },
    { "call:cost([ev])", "inclusive cost of those calls", "integer|table<string, integer>" },
  } },
  { name = "Jump", what = "a jump= or jcnd= line", var = "jump", entries = {
    { "jump.from", "the Function it jumps from", "callgrind.Function" },
    { "jump.to", "the Function it jumps to", "callgrind.Function" },
    { "jump.file", "its source file, or nil", "string?" },
    { "jump.line", "its source line, or nil", "integer?" },
    { "jump.addr", "its source address, or nil", "integer?" },
    { "jump.target_file", "the target file, or nil", "string?" },
    { "jump.target_line", "the target line, or nil", "integer?" },
    { "jump.target_addr", "the target address, or nil", "integer?" },
    { "jump.conditional", "true for jcnd=", "boolean" },
    { "jump.count", "how often it was followed", "integer" },
    { "jump.executed", "how often it was executed", "integer" },
    { "jump.part", "the Part it is in", "callgrind.Part" },
  } },
  { name = "Selection", what = "an array of Functions that answers queries", var = "sel", entries = {
    { "sel:find([pattern [, opts]])", "those whose name matches", "callgrind.Selection", opts = "find" },
    { "sel:sort([ev [, kind]])", "sorted by cost, costliest first", "callgrind.Selection" },
    { "sel:top(n [, ev [, kind]])", "the n costliest", "callgrind.Selection" },
    { "sel:filter(pred)", "those for which pred(fn) is true", "callgrind.Selection" },
    { "sel:without(opts)", "without those whose object or file matches", "callgrind.Selection", opts = "find" },
    { "sel:above(fraction [, ev [, kind]])", "those costing at least a fraction of the total", "callgrind.Selection" },
    { "sel:sum([ev [, kind]])", "the sum of their costs", "integer" },
    { "sel:list()", "a plain array of the functions", "callgrind.Function[]" },
    { "sel:report([opts])", "an aligned table (tostring prints the first 25 rows)",
      "string", opts = "sel_report" },
    { "sel:to_csv([opts])", "CSV: name, file, object, then each event's self and .inclusive cost",
      "string", opts = "export_events" },
    { "sel:to_json([opts])", "the same rows as JSON objects", "string", opts = "export_events" },
  } },
  { name = "Edges", what = "calls aggregated per function: rows { fn, count, calls }", var = "edges", entries = {
    { "edges:sort([ev])", "rows sorted by the cost of their calls", "callgrind.Edges" },
    { "edges:cost(i [, ev])", "the cost of row i's calls", "integer" },
    { "edges.rows", "the rows", "{ fn: callgrind.Function, count: integer, calls: callgrind.Call[] }[]" },
    { "edges:to_csv([opts])", "CSV: name, file, object, calls, then each event's cost of the calls",
      "string", opts = "export_events" },
    { "edges:to_json([opts])", "the same rows as JSON objects", "string", opts = "export_events" },
  } },
  { name = "Diff", what = "two profiles compared, from callgrind.diff()", var = "d", entries = {
    { "d:total(ev)", "the old and the new total", "integer, integer" },
    { "d:movers(ev [, kind])", "rows { name, key, old, new, delta, percent, old_fn, new_fn }, biggest first",
      "callgrind.DiffRows" },
    { "d:functions(ev [, kind])", "d:movers under its old name", "callgrind.DiffRows",
      deprecated = "d:movers" },
    { "d:report([opts])", "totals per event and the biggest movers (also tostring)",
      "string", opts = "d_report" },
    { "d.collisions", "functions of one profile that share a match key", "string[]" },
    { "d:matched([ev])", "how many functions matched and what share of each side's cost they hold",
      "{ functions: integer, old: integer, new: integer, old_total: integer, new_total: integer, "
      .. "old_share: number, new_share: number }" },
    { "d:warnings([ev])", "why the comparison is doubtful (less than half of a side matched) and the fix",
      "string[]" },
    { "d:flamegraph([ev [, opts]])", "the new profile's flame graph, red where it costs more, blue where less",
      "string", opts = "flame" },
    { "d:write_flamegraph(path [, ev [, opts]])", "writes the diff's flame graph to a file",
      "true?, string?, callgrind.ErrorKind?", opts = "flame", errors = { "io" } },
    { "d:html([opts])", "the new profile's HTML report with the diff's totals, share matched and movers", "string",
      opts = "html" },
    { "d:write_html(path [, opts])", "writes the diff's HTML report to a file",
      "true?, string?, callgrind.ErrorKind?", opts = "html", errors = { "io" } },
  } },
  { name = "Cycle", what = "functions that call each other (a strongly connected component)", var = "cycle",
    entries = {
    { "cycle.number", "its number, from 1", "integer" },
    { "cycle.members", "its functions, as a Selection", "callgrind.Selection" },
    { "cycle:inclusive(ev)", "its inclusive cost as a whole", "integer" },
  } },
  { name = "Tree", what = "a call tree from fn:tree()", var = "tree", entries = {
    { "tree.root", "the root node: fn, value, count, children, hidden, recursive, cut",
      "{ fn: callgrind.Function, value: integer, count: integer?, level: integer, children: table[], "
      .. "hidden: integer, recursive: boolean, cut: boolean? }" },
    { "tree:report()", "the tree drawn as text (also tostring)", "string" },
  } },
  { name = "Groups", what = "self cost grouped by file or object, from prof:group()", var = "groups", entries = {
    { "groups[i]", "row i: key (nil for none), cost", "{ key: string?, cost: integer }" },
    { "groups:to_csv()", "CSV: the key (file or object) and the event's cost", "string" },
    { "groups:to_json()", "the same rows as JSON objects", "string" },
  } },
  { name = "DiffRows", what = "the functions of a diff, from d:movers()", var = "rows", entries = {
    { "rows[i]", "row i: name, key, old, new, delta, percent, old_fn, new_fn", "table" },
    { "rows:to_csv()", "CSV: name, file, object, old, new, delta, percent (also tostring: a table)", "string" },
    { "rows:to_json()", "the same rows as JSON objects", "string" },
  } },
  { name = "Warnings", what = "what was skipped or did not add up, from prof:warnings()", var = "warnings",
    entries = {
    { "warnings[i]", "warning i: \"name:LINE: message\" (also tostring: one a line)", "string" },
    { "warnings:to_csv()", "CSV: file, line, message", "string" },
    { "warnings:to_json()", "the same rows as JSON objects", "string" },
  } },
  { name = "Annotation", what = "cost per line of one source file, from prof:annotate()", var = "ann", entries = {
    { "ann.file", "the file as the profile names it", "string" },
    { "ann[i]", "row i: line, cost, functions, calls, text",
      "{ line: integer, cost: integer, functions: callgrind.Function[], calls: table[], text: string? }" },
    { "ann:report([opts])", "the annotated listing (tostring: its 25 costliest lines); opts.context, limit",
      "string", opts = "ann_report" },
    { "ann:top(n)", "the n costliest lines, costliest first, as an Annotation", "callgrind.Annotation" },
    { "ann:to_csv()", "CSV: line, cost, functions", "string" },
    { "ann:to_json()", "the same rows as JSON objects", "string" },
  } },
  { name = "history", what = "callgrind.history: every run's numbers by commit, their steps, trends",
    var = "history", class = "callgrind.history", entries = {
    { "history.open([url [, opts]])",
      "opens a store: SQLite (a path, sqlite:PATH; default $CALLGRIND_HISTORY or callgrind-history.db) or "
        .. "postgresql://...", "callgrind.History?, string?, callgrind.ErrorKind?", opts = "history_open",
      params = { url = "string" }, errors = { "io" } },
    { "history.context([opts])", "the commit, branch, machine and time an add takes (CI variables, git, uname)",
      "{ commit: string, branch: string, machine: string, time: integer }?, string?", opts = "history_add" },
  } },
  { name = "History", what = "a history store, from callgrind.history.open()", var = "hist", entries = {
    { "hist:add(source [, opts])",
      "adds a run: a record file, a profile (file or Profile), { baseline = NAME }, records, a spread result",
      "{ run: integer, commit: string, branch: string, machine: string, time: integer, series: integer, "
        .. "added: integer, merged: integer, unchanged: integer, again: boolean? }?, string?, callgrind.ErrorKind?",
      opts = "history_add", params = { source = "string|callgrind.Profile|table" },
      errors = { "io", "format", "conflict", "not_found" } },
    { "hist:series([pattern])", "the series' names, sorted", "string[]" },
    { "hist:show(name [, opts])", "a series: its points { commit, branch, machine, time, value, lo, hi, n }",
      "table?, string?, callgrind.ErrorKind?", opts = "history_show", errors = { "io", "not_found" } },
    { "hist:changes([opts])",
      "the steps: { series, commit, before_commit, before, after, share, ... }, oldest first",
      "table[]?, string?, callgrind.ErrorKind?", opts = "history_changes", errors = { "io" } },
    { "hist:bmf([opts])", "a run's points as Bencher Metric Format JSON", "string", opts = "history_bmf" },
    { "hist:write_bmf(path [, opts])", "writes the Bencher Metric Format JSON to a file",
      "true?, string?, callgrind.ErrorKind?", opts = "history_bmf", errors = { "io", "not_found" } },
    { "hist:html([opts])", "the trend page: a chart per series, steps marked, a click shows the commit",
      "string", opts = "history_html" },
    { "hist:write_html(path [, opts])", "writes the trend page to a file",
      "true?, string?, callgrind.ErrorKind?", opts = "history_html", errors = { "io" } },
    { "hist:info()", "the store's kind (\"sqlite\", \"postgres\"), url and schema_version",
      "{ kind: string, url: string, schema_version: integer }" },
    { "hist:close()", "closes the store (also on garbage collection)", "nil" },
  } },
  { name = "assert", what = "require \"callgrind.check.luassert\": luassert assertions (negate with is_not)",
    var = "assert", class = "luassert", entries = {
    { "assert.cost_at_most(limit, target, ev [, kind [, opts]])", "fails when the cost is above the limit",
      "nil", opts = "check" },
    { "assert.calls_at_most(limit, fn [, opts])", "fails when the calls into fn are more than the limit",
      "nil", opts = "check", params = { fn = "callgrind.Function" } },
    { "assert.no_regression(old, new, limits [, opts])", "fails when a cost grew past its limit",
      "nil", opts = "no_regression" },
    { "assert.within_baseline(name, prof, limits [, opts])", "fails when a cost grew past the stored baseline's",
      "nil", opts = "within_baseline" },
  } },
}


--- Every entry, with the object it is in: an iterator of object, entry.
-- @usage for o, e in api.entries() do print(o.name, e[1]) end
function M.entries()
  return coroutine.wrap(function()
    for _, o in ipairs(M.objects) do
      for _, e in ipairs(o.entries) do coroutine.yield(o, e) end
    end
  end)
end

return M
