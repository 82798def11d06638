--- `callgrind.help()`: the objects of the library and, for each, its
-- methods and fields with one line each. This table is the one source of
-- those lines, of README.md's "Reference at a glance" (`make types`
-- writes it, or `lua5.4 -e 'print(require("callgrind.help").markdown())'`)
-- and of the LuaLS types in types/ (`make types`, tools/gen_types.lua);
-- specs check that the three agree and that every method has a line.
-- @module callgrind.help
local ipairs, getmetatable, pairs, type = ipairs, getmetatable, pairs, type
local string_format, string_rep, table_concat = string.format, string.rep, table.concat

local M = {}

-- The options tables of the functions that take one: option name ->
-- LuaLS type. args.options checks the same names in each module; the
-- types file and spec/options_spec.lua are made from these.

-- A new options table: base's options and extra's.
local function with(base, extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra) do t[k] = v end
  return t
end

local ANN_REPORT_OPTIONS = {
  context = "integer",
}
local CHECK_OPTIONS = {
  allow_warnings = "boolean",
}
local COMPARE_OPTIONS = {
  allow_warnings = "boolean",
  fail_on_improvement = "boolean",
  kind = "\"self\"|\"inclusive\"",
  match = "fun(fn: callgrind.Function): string",
  top = "integer",
}
local CHECK_NO_REGRESSION_OPTIONS = with(COMPARE_OPTIONS, { hint = "string" })
local CHECK_WITHIN_BASELINE_OPTIONS = with(COMPARE_OPTIONS, {
  dir = "string",
  same_command = "boolean",
  update = "boolean",
  quiet = "boolean",
})
local DIFF_OPTIONS = {
  match = "fun(fn: callgrind.Function): string",
}
local D_REPORT_OPTIONS = {
  events = "string[]",
  event = "string",
  kind = "\"self\"|\"inclusive\"",
  top = "integer",
}
local FIND_OPTIONS = {
  plain = "boolean",
  file = "string",
  object = "string",
}
local FN_TREE_OPTIONS = {
  ev = "string|integer",
  direction = "\"callees\"|\"callers\"",
  depth = "integer",
  threshold = "number",
}
local LOAD_OPTIONS = {
  chunk = "integer",
  lenient = "boolean",
  max_bytes = "integer",
  progress = "fun(done: integer, total: integer): boolean?",
  threads = "integer",
}
local PROFILER_OPTIONS = {
  time = "boolean",
  alloc = "boolean",
  count_hook = "boolean",
  lines = "boolean",
  stacks = "boolean",
}
local PROFILE_OPTIONS = with(PROFILER_OPTIONS, { runs = "integer" })
local PROF_ANNOTATE_OPTIONS = {
  source = "boolean|string",
}
local PROF_WRITE_OPTIONS = {
  functions = "callgrind.Selection|callgrind.Function[]",
  compress = "boolean",
  pid = "boolean",
  cmd = "boolean|string",
}
local RUN_OPTIONS = {
  toggle_collect = "string|string[]",
  collect_atstart = "boolean",
  cache_sim = "boolean",
  branch_sim = "boolean",
  dump_instr = "boolean",
  collect_jumps = "boolean",
  separate_threads = "boolean",
  trace_children = "boolean",
  args = "string[]",
  env = "table<string, string>",
  stdin = "string",
  timeout = "number",
  cwd = "string",
  keep = "string",
  valgrind = "string",
  allow_failure = "boolean",
}
local SEL_REPORT_OPTIONS = {
  events = "(string|integer)[]",
  event = "string|integer",
  kind = "\"self\"|\"inclusive\"",
  width = "integer",
  percent = "boolean",
  file = "boolean",
  object = "boolean",
  limit = "integer",
}
local FOLDED_OPTIONS = {
  threshold = "number",
}
local FLAME_OPTIONS = {
  ev = "string|integer",
  threshold = "number",
  title = "string",
  width = "number",
  color = "\"object\"|\"file\"",
}
local DOT_OPTIONS = {
  node_threshold = "number",
  edge_threshold = "number",
  root = "callgrind.Function|string",
  leaf = "callgrind.Function|string",
  depth = "integer",
  title = "string",
}
local WRITE_DOT_OPTIONS = with(DOT_OPTIONS, {
  format = "\"dot\"|\"svg\"|\"png\"",
  dot_command = "string",
})
local PPROF_OPTIONS = {
  events = "string[]",
  threshold = "number",
}
local EXPORT_EVENTS_OPTIONS = {
  events = "(string|integer)[]",
}
local UNTIL_EXIT_OPTIONS = with(PROFILER_OPTIONS, { out = "string" })

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
M.error_kinds = { "io", "format", "truncated", "memory", "cancelled", "valgrind" }

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
      "callgrind.Profile?, string?, callgrind.ErrorKind?", opts = LOAD_OPTIONS },
    { "callgrind.load({ path, ... } [, opts])", "loads several files (threads, dumps) as one Profile",
      "callgrind.Profile?, string?, callgrind.ErrorKind?", opts = LOAD_OPTIONS },
    { "callgrind.files(path)", "the files one valgrind run wrote for that name, in order",
      "string[]?, string?, callgrind.ErrorKind?" },
    { "callgrind.parse(text [, name [, opts]])", "loads a profile from a string",
      "callgrind.Profile?, string?, callgrind.ErrorKind?", opts = LOAD_OPTIONS },
    { "callgrind.help([x])", "this help: the objects, or the methods and fields of x", "string" },
    { "callgrind.profile(fn [, opts])", "runs fn under the Lua profiler: a Profile of Lua VM instructions",
      "callgrind.Profile, any ...", opts = PROFILE_OPTIONS },
    { "callgrind.run(argv [, opts])", "runs a command under valgrind --tool=callgrind: Profile, info",
      "callgrind.Profile?, table|string, callgrind.ErrorKind?, table?", opts = RUN_OPTIONS },
    { "callgrind.write_file_atomic(path, text)", "writes text to a temporary file, synced and renamed over path",
      "true?, string?, callgrind.ErrorKind?" },
    { "callgrind.diff(old, new [, opts])", "compares two profiles, function by function (Diff)",
      "callgrind.Diff", opts = DIFF_OPTIONS },
    { "callgrind.check_cost_at_most(limit, target, ev [, kind [, opts]])", "ok, message: a cost within a limit",
      "boolean, string", opts = CHECK_OPTIONS },
    { "callgrind.check_calls_at_most(limit, fn [, opts])", "ok, message: calls into a function within a limit",
      "boolean, string", opts = CHECK_OPTIONS, params = { fn = "callgrind.Function" } },
    { "callgrind.check_no_regression(old, new, limits [, opts])", "ok, message: no cost grew past its limit",
      "boolean, string", opts = CHECK_NO_REGRESSION_OPTIONS },
    { "callgrind.check_within_baseline(name, prof, limits [, opts])", "ok, message: against a stored baseline",
      "boolean, string", opts = CHECK_WITHIN_BASELINE_OPTIONS },
    { "callgrind.report_summary(path [, format])", "the CALLGRIND_REPORT record of checks as a table",
      "string?, string?, callgrind.ErrorKind?" },
    { "callgrind.methods", "the method tables of Profile, Function, Call, Jump, CostLine, Part",
      "table<string, table>" },
    { "callgrind.report", "formatting helpers: commas(n), shorten(name, width)",
      "{ commas: fun(n: integer): string, shorten: fun(name: string, width?: integer): string }" },
    { "callgrind._VERSION", "the library's version", "string" },
  } },
  { name = "profiler", what = "require \"callgrind.profiler\": profile Lua code", var = "profiler",
    class = "callgrind.profiler", entries = {
    { "profiler.start([opts])",
      "starts counting Lua VM instructions (opts: time, alloc, count_hook, lines, stacks)",
      "nil", opts = PROFILER_OPTIONS },
    { "profiler.stop()", "stops: the Profile and its callgrind text", "callgrind.Profile, string" },
    { "profiler.profile(fn [, opts])", "what callgrind.profile is",
      "callgrind.Profile, any ...", opts = PROFILE_OPTIONS },
    { "profiler.running()", "whether the profiler runs", "boolean" },
    { "profiler.until_exit([opts])", "profiles until the Lua state closes, then writes opts.out",
      "table", opts = UNTIL_EXIT_OPTIONS },
  } },
  { name = "Profile", what = "a loaded profile", var = "prof", entries = {
    { "prof.name", "the path or chunk name it was loaded from", "string" },
    { "prof.version", "the format version (1)", "integer" },
    { "prof.creator", "the writer's creator: line, or nil", "string?" },
    { "prof.cmd", "the profiled command, or nil", "string?" },
    { "prof.pid", "the profiled process id, or nil", "integer?" },
    { "prof.events", "the base events, in file order", "string[]" },
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
    { "prof:func(name [, file [, object]])", "the Function of that name, or nil and why",
      "callgrind.Function?, string?" },
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
      "callgrind.Selection", opts = FIND_OPTIONS },
    { "prof:top(n [, ev [, kind]])", "the n costliest functions (kind \"self\" or \"inclusive\")",
      "callgrind.Selection" },
    { "prof:group(by [, ev])", "self cost grouped by \"file\" or \"object\", costliest first",
      "callgrind.Groups" },
    { "prof:annotate(file [, ev] [, opts])", "cost per source line of one file, as an Annotation",
      "callgrind.Annotation", opts = PROF_ANNOTATE_OPTIONS },
    { "prof:summary()", "a few lines about the profile", "string" },
    { "prof:write(path_or_file [, opts])",
      "writes a canonical callgrind file, atomically (compress, functions, pid, cmd)",
      "true?, string?, callgrind.ErrorKind?", opts = PROF_WRITE_OPTIONS },
    { "prof:folded([ev [, opts]])", "folded stacks \"a;b;c 123\" (exact, or estimated from the call graph)",
      "string", opts = FOLDED_OPTIONS },
    { "prof:write_folded(path [, ev [, opts]])", "writes the folded stacks to a file",
      "true?, string?, callgrind.ErrorKind?", opts = FOLDED_OPTIONS },
    { "prof:flamegraph(path [, opts])", "writes an interactive SVG flame graph (opts: ev, threshold, title ...)",
      "true?, string?, callgrind.ErrorKind?", opts = FLAME_OPTIONS },
    { "prof:dot([ev [, opts]])", "a Graphviz DOT call graph (node/edge thresholds, root, leaf, depth)",
      "string", opts = DOT_OPTIONS },
    { "prof:write_dot(path [, ev [, opts]])", "writes the call graph: DOT, or svg/png through Graphviz's dot",
      "true?, string?, callgrind.ErrorKind?", opts = WRITE_DOT_OPTIONS },
    { "prof:write_pprof(path [, opts])", "writes pprof's gzipped profile.proto (go tool pprof ...)",
      "true?, string?, callgrind.ErrorKind?", opts = PPROF_OPTIONS },
    { "prof:stacks([ev])", "iterator of frames, cost per call stack (a Lua profile made with stacks = true)",
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
    { "fn:tree([opts])", "its call tree (Tree): ev, direction, depth, threshold",
      "callgrind.Tree", opts = FN_TREE_OPTIONS },
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
    { "sel:find([pattern [, opts]])", "those whose name matches", "callgrind.Selection", opts = FIND_OPTIONS },
    { "sel:sort([ev [, kind]])", "sorted by cost, costliest first", "callgrind.Selection" },
    { "sel:top(n [, ev [, kind]])", "the n costliest", "callgrind.Selection" },
    { "sel:filter(pred)", "those for which pred(fn) is true", "callgrind.Selection" },
    { "sel:without(opts)", "without those whose object or file matches", "callgrind.Selection", opts = FIND_OPTIONS },
    { "sel:above(fraction [, ev [, kind]])", "those costing at least a fraction of the total", "callgrind.Selection" },
    { "sel:sum([ev [, kind]])", "the sum of their costs", "integer" },
    { "sel:list()", "a plain array of the functions", "callgrind.Function[]" },
    { "sel:report([opts])", "an aligned table (tostring prints the first 25 rows)",
      "string", opts = SEL_REPORT_OPTIONS },
    { "sel:to_csv([opts])", "CSV: name, file, object, then each event's self and .inclusive cost",
      "string", opts = EXPORT_EVENTS_OPTIONS },
    { "sel:to_json([opts])", "the same rows as JSON objects", "string", opts = EXPORT_EVENTS_OPTIONS },
  } },
  { name = "Edges", what = "calls aggregated per function: rows { fn, count, calls }", var = "edges", entries = {
    { "edges:sort([ev])", "rows sorted by the cost of their calls", "callgrind.Edges" },
    { "edges:cost(i [, ev])", "the cost of row i's calls", "integer" },
    { "edges.rows", "the rows", "{ fn: callgrind.Function, count: integer, calls: callgrind.Call[] }[]" },
    { "edges:to_csv([opts])", "CSV: name, file, object, calls, then each event's cost of the calls",
      "string", opts = EXPORT_EVENTS_OPTIONS },
    { "edges:to_json([opts])", "the same rows as JSON objects", "string", opts = EXPORT_EVENTS_OPTIONS },
  } },
  { name = "Diff", what = "two profiles compared, from callgrind.diff()", var = "d", entries = {
    { "d:total(ev)", "the old and the new total", "integer, integer" },
    { "d:functions(ev [, kind])", "rows { name, key, old, new, delta, percent, old_fn, new_fn }, biggest first",
      "callgrind.DiffRows" },
    { "d:report([opts])", "totals per event and the biggest movers (also tostring)",
      "string", opts = D_REPORT_OPTIONS },
    { "d.collisions", "functions of one profile that share a match key", "string[]" },
    { "d:flamegraph(path [, opts])", "the new profile's flame graph, red where it costs more, blue where less",
      "true?, string?, callgrind.ErrorKind?", opts = FLAME_OPTIONS },
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
  { name = "DiffRows", what = "the functions of a diff, from d:functions()", var = "rows", entries = {
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
    { "ann:report([opts])", "the annotated listing (also tostring); opts.context",
      "string", opts = ANN_REPORT_OPTIONS },
    { "ann:to_csv()", "CSV: line, cost, functions", "string" },
    { "ann:to_json()", "the same rows as JSON objects", "string" },
  } },
  { name = "assert", what = "require \"callgrind.luassert\": luassert assertions (negate with is_not)",
    var = "assert", class = "luassert", entries = {
    { "assert.cost_at_most(limit, target, ev [, kind [, opts]])", "fails when the cost is above the limit",
      "nil", opts = CHECK_OPTIONS },
    { "assert.calls_at_most(limit, fn [, opts])", "fails when the calls into fn are more than the limit",
      "nil", opts = CHECK_OPTIONS, params = { fn = "callgrind.Function" } },
    { "assert.no_regression(old, new, limits [, opts])", "fails when a cost grew past its limit",
      "nil", opts = CHECK_NO_REGRESSION_OPTIONS },
    { "assert.within_baseline(name, prof, limits [, opts])", "fails when a cost grew past the stored baseline's",
      "nil", opts = CHECK_WITHIN_BASELINE_OPTIONS },
  } },
}

local by_name = {}
for _, o in ipairs(M.objects) do by_name[o.name] = o end

-- The object a value is: the module, a handle, or one of the Lua layer's
-- tables, by its metatable's __name ("callgrind.Profile" -> Profile).
local function object_of(x)
  if type(x) == "string" then return by_name[x] or by_name[x:match("^callgrind%.(.*)$") or ""] end
  if type(x) == "table" and x.load and x.parse and x.help then return by_name.callgrind end
  local mt = getmetatable(x)
  local name = type(mt) == "table" and type(mt.__name) == "string" and mt.__name:match("^callgrind%.(.*)$")
  return name and by_name[name]
end

local function entry_lines(o)
  local w = 0
  for _, e in ipairs(o.entries) do if #e[1] > w then w = #e[1] end end
  local out = {}
  for i, e in ipairs(o.entries) do out[i] = "  " .. e[1] .. string_rep(" ", w - #e[1]) .. "  " .. e[2] end
  return out
end

--- The help text: the objects (no argument), or one object's methods and
-- fields (a Profile, Function, ... or its name). The REPL shows the
-- string it returns; a script prints it.
-- @treturn string
-- @usage print(callgrind.help(prof))
function M.text(x)
  if x == nil then
    local out = { "callgrind: read callgrind-format profiles. Objects (callgrind.help(x) for one):" }
    for _, o in ipairs(M.objects) do
      out[#out + 1] = string_format("  %-11s %s", o.name, o.what)
    end
    return table_concat(out, "\n")
  end
  local o = object_of(x)
  if not o then
    require("callgrind.args").fail("help", 1, string_format("no help for %s; try callgrind.help()",
      type(x) == "string" and ("'" .. x .. "'") or type(x)), 3)
  end
  local out = { string_format("%s: %s", o.name, o.what) }
  for _, l in ipairs(entry_lines(o)) do out[#out + 1] = l end
  return table_concat(out, "\n")
end

--- README.md's "Reference at a glance", made from the same lines.
-- @treturn string
-- @usage print(require("callgrind.help").markdown())
function M.markdown()
  local out = {}
  for _, o in ipairs(M.objects) do
    out[#out + 1] = string_format("**%s**: %s\n", o.name, o.what)
    out[#out + 1] = "| | |\n| --- | --- |"
    for _, e in ipairs(o.entries) do
      out[#out + 1] = string_format("| `%s` | %s |", e[1], (e[2]:gsub("|", "\\|")))
    end
    out[#out + 1] = ""
  end
  return table_concat(out, "\n")
end

return M
