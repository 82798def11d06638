--- `callgrind.help()`: the objects of the library and, for each, its
-- methods and fields with one line each. This table is the one source of
-- those lines: README.md's "Reference at a glance" is made from it
-- (`lua5.4 -e 'print(require("callgrind.help").markdown())'`) and a spec
-- checks that the two agree and that every method has a line.
-- @module callgrind.help
local ipairs, getmetatable, type = ipairs, getmetatable, type
local string_format, string_rep, table_concat = string.format, string.rep, table.concat

local M = {}

--- The objects, in the order help() lists them: `name`, `what` (one
-- line), `var` (how examples call one), `entries` (`{ signature, line }`;
-- a signature with "(" is a method or function, else a field).
M.objects = {
  { name = "callgrind", what = "the module", var = "callgrind", entries = {
    { "callgrind.load(path [, opts])", "loads a profile file: Profile, or nil and \"path:LINE: message\"" },
    { "callgrind.load({ path, ... } [, opts])", "loads several files (threads, dumps) as one Profile" },
    { "callgrind.files(path)", "the files one valgrind run wrote for that name, in order" },
    { "callgrind.parse(text [, name [, opts]])", "loads a profile from a string" },
    { "callgrind.help([x])", "this help: the objects, or the methods and fields of x" },
    { "callgrind.profile(fn [, opts])", "runs fn under the Lua profiler: a Profile of Lua VM instructions" },
    { "callgrind.run(argv [, opts])", "runs a command under valgrind --tool=callgrind: Profile, info" },
    { "callgrind.diff(old, new [, opts])", "compares two profiles, function by function (Diff)" },
    { "callgrind.write_file_atomic(path, text)", "writes text to a temporary file, synced and renamed over path" },
    { "callgrind.check_cost_at_most(limit, target, ev [, kind [, opts]])", "ok, message: a cost within a limit" },
    { "callgrind.check_calls_at_most(limit, fn [, opts])", "ok, message: calls into a function within a limit" },
    { "callgrind.check_no_regression(old, new, limits [, opts])", "ok, message: no cost grew past its limit" },
    { "callgrind.check_within_baseline(name, prof, limits [, opts])", "ok, message: against a stored baseline" },
    { "callgrind.methods", "the method tables of Profile, Function, Call, Jump, CostLine, Part" },
    { "callgrind.report", "formatting helpers: commas(n), shorten(name, width)" },
    { "callgrind._VERSION", "the library's version" },
  } },
  { name = "profiler", what = "require \"callgrind.profiler\": profile Lua code", var = "profiler", entries = {
    { "profiler.start([opts])", "starts counting Lua VM instructions (opts: time, alloc, count_hook, lines, stacks)" },
    { "profiler.stop()", "stops: the Profile and its callgrind text" },
    { "profiler.profile(fn [, opts])", "what callgrind.profile is" },
    { "profiler.running()", "whether the profiler runs" },
    { "profiler.until_exit([opts])", "profiles until the Lua state closes, then writes opts.out" },
  } },
  { name = "Profile", what = "a loaded profile", var = "prof", entries = {
    { "prof.name", "the path or chunk name it was loaded from" },
    { "prof.version", "the format version (1)" },
    { "prof.creator", "the writer's creator: line, or nil" },
    { "prof.cmd", "the profiled command, or nil" },
    { "prof.pid", "the profiled process id, or nil" },
    { "prof.events", "the base events, in file order" },
    { "prof:totals()", "sum of all cost lines, per base event" },
    { "prof:total(ev)", "sum of all cost lines for one event (base or derived)" },
    { "prof:warnings([kind])", "what was skipped or did not add up (kind: truncated, skipped, ...)" },
    { "prof:parts()", "iterator of Part" },
    { "prof:functions()", "iterator of Function" },
    { "prof:calls()", "iterator of every Call" },
    { "prof:jumps()", "iterator of every Jump" },
    { "prof:lines()", "iterator of every CostLine" },
    { "prof:ulines([ev, ...])", "fast iterator: fn index, line, addr and the asked costs per cost line" },
    { "prof:func(name [, file [, object]])", "the Function of that name, or nil and why" },
    { "prof:memory()", "bytes the model holds" },
    { "prof:close()", "frees the model now (also on garbage collection)" },
    { "prof:define(name, formula [, long_name])", "defines a derived event, e.g. \"Ir + 10 L1m\"" },
    { "prof:event_info(ev)", "name, long name, formula, derived of an event" },
    { "prof:derived_events()", "the derived events' names" },
    { "prof:all_events()", "base then derived events' names" },
    { "prof:inclusive_all(ev)", "inclusive cost of every function, by function index" },
    { "prof:cycles()", "iterator of Cycle: functions that call each other" },
    { "prof:all()", "every function, as a Selection" },
    { "prof:select(fns)", "a Selection of the given functions" },
    { "prof:find([pattern [, opts]])", "functions whose name matches, as a Selection" },
    { "prof:top(n [, ev [, kind]])", "the n costliest functions (kind \"self\" or \"inclusive\")" },
    { "prof:group(by [, ev])", "self cost grouped by \"file\" or \"object\", costliest first" },
    { "prof:annotate(file [, ev] [, opts])", "cost per source line of one file, as an Annotation" },
    { "prof:summary()", "a few lines about the profile" },
    { "prof:write(path_or_file [, opts])",
      "writes a canonical callgrind file, atomically (compress, functions, pid, cmd)" },
    { "prof:stacks([ev])", "iterator of frames, cost per call stack (a Lua profile made with stacks = true)" },
  } },
  { name = "Part", what = "one part of a profile (a dump, a thread)", var = "part", entries = {
    { "part.index", "its position in the profile, from 1" },
    { "part.number", "its part: number (or its position)" },
    { "part.pid", "the process id, or nil" },
    { "part.thread", "the thread id, or nil" },
    { "part.cmd", "the command, or nil" },
    { "part.desc", "its desc: lines, type -> value" },
    { "part.events", "the events its cost lines use" },
    { "part.summary", "its summary: line as written, or nil" },
    { "part.written_totals", "its totals: line as written, or nil" },
    { "part.file", "the file it was read from" },
    { "part:totals()", "the sum of its cost lines, per base event" },
  } },
  { name = "Function", what = "a function of a profile", var = "fn", entries = {
    { "fn.name", "its name as written" },
    { "fn.file", "its source file (fl=), or nil" },
    { "fn.object", "its object (ob=), or nil" },
    { "fn.index", "its index in the profile, from 1" },
    { "fn.profile", "the Profile it belongs to" },
    { "fn:self([ev [, part]])", "its self cost (in one part): a number, or a table of the base events" },
    { "fn:inclusive([ev])", "cost while it ran, callees included, recursion once" },
    { "fn:inclusive_bounds(ev)", "lower bound and estimate of its inclusive cost" },
    { "fn:lines()", "iterator of its CostLines" },
    { "fn:ulines([ev, ...])", "fast iterator over its cost lines, as prof:ulines" },
    { "fn:calls()", "iterator of its outgoing Calls" },
    { "fn:callers()", "iterator of its incoming Calls" },
    { "fn:jumps()", "iterator of its Jumps" },
    { "fn:callee_functions()", "its calls aggregated per callee (Edges)" },
    { "fn:caller_functions()", "its callers aggregated per caller (Edges)" },
    { "fn:cycle()", "the Cycle it is part of, or nil" },
    { "fn:tree([opts])", "its call tree (Tree): ev, direction, depth, threshold" },
  } },
  { name = "CostLine", what = "one cost line", var = "line", entries = {
    { "line.fn", "the Function it belongs to" },
    { "line.file", "its source file (fi=/fe= aware), or nil" },
    { "line.line", "its line number, or nil" },
    { "line.addr", "its instruction address, or nil" },
    { "line.part", "the Part it is in" },
    { "line:cost([ev])", "its cost: a number, or a table of the base events" },
  } },
  { name = "Call", what = "a calls= line: calls from one site to one function", var = "call", entries = {
    { "call.caller", "the calling Function" },
    { "call.callee", "the called Function" },
    { "call.count", "how many calls" },
    { "call.file", "the call site's file, or nil" },
    { "call.line", "the call site's line, or nil" },
    { "call.addr", "the call site's address, or nil" },
    { "call.part", "the Part it is in" },
    { "call.target_line", "the callee position the calls= line names, or nil" },
    { "call.target_addr", "the callee address the calls= line names, or nil" },
    { "call:cost([ev])", "inclusive cost of those calls" },
  } },
  { name = "Jump", what = "a jump= or jcnd= line", var = "jump", entries = {
    { "jump.from", "the Function it jumps from" },
    { "jump.to", "the Function it jumps to" },
    { "jump.file", "its source file, or nil" },
    { "jump.line", "its source line, or nil" },
    { "jump.addr", "its source address, or nil" },
    { "jump.target_file", "the target file, or nil" },
    { "jump.target_line", "the target line, or nil" },
    { "jump.target_addr", "the target address, or nil" },
    { "jump.conditional", "true for jcnd=" },
    { "jump.count", "how often it was followed" },
    { "jump.executed", "how often it was executed" },
    { "jump.part", "the Part it is in" },
  } },
  { name = "Selection", what = "an array of Functions that answers queries", var = "sel", entries = {
    { "sel:find([pattern [, opts]])", "those whose name matches" },
    { "sel:sort([ev [, kind]])", "sorted by cost, costliest first" },
    { "sel:top(n [, ev [, kind]])", "the n costliest" },
    { "sel:filter(pred)", "those for which pred(fn) is true" },
    { "sel:without(opts)", "without those whose object or file matches" },
    { "sel:above(fraction [, ev [, kind]])", "those costing at least a fraction of the total" },
    { "sel:sum([ev [, kind]])", "the sum of their costs" },
    { "sel:list()", "a plain array of the functions" },
    { "sel:report([opts])", "an aligned table (tostring prints the first 25 rows)" },
  } },
  { name = "Edges", what = "calls aggregated per function: rows { fn, count, calls }", var = "edges", entries = {
    { "edges:sort([ev])", "rows sorted by the cost of their calls" },
    { "edges:cost(i [, ev])", "the cost of row i's calls" },
    { "edges.rows", "the rows" },
  } },
  { name = "Diff", what = "two profiles compared, from callgrind.diff()", var = "d", entries = {
    { "d:total(ev)", "the old and the new total" },
    { "d:functions(ev [, kind])", "rows { name, key, old, new, delta, percent, old_fn, new_fn }, biggest first" },
    { "d:report([opts])", "totals per event and the biggest movers (also tostring)" },
    { "d.collisions", "functions of one profile that share a match key" },
  } },
  { name = "Cycle", what = "functions that call each other (a strongly connected component)", var = "cycle",
    entries = {
    { "cycle.number", "its number, from 1" },
    { "cycle.members", "its functions, as a Selection" },
    { "cycle:inclusive(ev)", "its inclusive cost as a whole" },
  } },
  { name = "Tree", what = "a call tree from fn:tree()", var = "tree", entries = {
    { "tree.root", "the root node: fn, value, count, children, hidden, recursive, cut" },
    { "tree:report()", "the tree drawn as text (also tostring)" },
  } },
  { name = "Annotation", what = "cost per line of one source file, from prof:annotate()", var = "ann", entries = {
    { "ann.file", "the file as the profile names it" },
    { "ann[i]", "row i: line, cost, functions, calls, text" },
    { "ann:report([opts])", "the annotated listing (also tostring); opts.context" },
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
    error(string_format("bad argument #1 to 'help' (no help for %s; try callgrind.help())",
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
