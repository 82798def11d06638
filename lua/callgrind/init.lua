--- callgrind: read callgrind-format profiles and ask questions of them.
-- The face of the library: the C core (`callgrind.core`) loads profiles;
-- the topic modules add their methods to the same objects.
-- @module callgrind
if _VERSION ~= "Lua 5.4" then
  -- before the core, whose load would fail with a raw "undefined symbol"
  error("callgrind needs Lua 5.4; this is " .. tostring(_VERSION), 0)
end
local core = require "callgrind.core"
local loader = require "callgrind.model.load"
local args = require "callgrind.args"

-- The modules of functions alone (no methods) load on first use: a
-- script that loads a profile and asks it questions does not compile
-- them (about 1.5 ms of the 4.5 ms `require "callgrind"` took).
local function lazy(module, name)
  return function(...) return require(module)[name](...) end
end

-- So do the modules of methods, which put their methods in place of the
-- stubs when they load (another 1.3 ms for tree, annotate and write, and
-- 1.2 ms for the questions' modules below). The stub's call is a tail
-- call: an error the method blames on its caller names the caller.
local function lazy_method(class, name, ...)
  local methods, modules = core.methods[class], { ... }
  -- its module loaded first (require "callgrind.profiler" before
  -- require "callgrind"): its method is in place already
  if methods[name] ~= nil then return end
  local function stub(...)
    for _, module in ipairs(modules) do require(module) end
    if methods[name] == stub then error(modules[1] .. " defines no " .. class .. ":" .. name) end
    return methods[name](...)
  end
  methods[name] = stub
end
lazy_method("Function", "tree", "callgrind.model.tree")
lazy_method("Profile", "annotate", "callgrind.model.annotate")
lazy_method("Profile", "write", "callgrind.export.write")
-- Pictures and exports (folded stacks, flame graphs, DOT, pprof, CSV/JSON).
lazy_method("Profile", "folded", "callgrind.export.stacks")
lazy_method("Profile", "write_folded", "callgrind.export.stacks")
lazy_method("Profile", "flamegraph", "callgrind.export.flame")
lazy_method("Profile", "write_flamegraph", "callgrind.export.flame")
lazy_method("Profile", "dot", "callgrind.export.dot")
lazy_method("Profile", "write_dot", "callgrind.export.dot")
lazy_method("Profile", "write_pprof", "callgrind.export.pprof")
lazy_method("Profile", "html", "callgrind.export.html")
lazy_method("Profile", "write_html", "callgrind.export.html")
lazy_method("Profile", "stacks", "callgrind.profiler")

-- The questions: inclusive costs and cycles (graph), selections and
-- groups (query), summaries and the Selection's report (report). Any of
-- their methods loads all three: a Selection from prof:top() has its
-- report.
local QUESTIONS = {
  Profile = { "inclusive_all", "cycles", "select", "all", "find", "top", "group", "summary" },
  Function = { "inclusive", "inclusive_bounds", "cycle", "callee_functions", "caller_functions" },
}
for class, names in pairs(QUESTIONS) do
  for _, name in ipairs(names) do
    lazy_method(class, name, "callgrind.model.graph", "callgrind.model.query", "callgrind.model.report")
  end
end

-- prof:warnings() prints one a line and has to_csv / to_json
-- (callgrind.export, loaded on first use of either).
do
  local warnings = core.methods.Profile.warnings
  local warnings_mt = {
    __name = "callgrind.Warnings",
    -- a tail call: an unknown field's error names the user's line
    __index = function(w, k) return require("callgrind.model.show").warnings_mt.__index(w, k) end,
    __tostring = function(w) return require("callgrind.model.show").warnings_mt.__tostring(w) end,
  }
  core.methods.Profile.warnings = function(prof, ...)
    return (setmetatable(warnings(prof, ...), warnings_mt))
  end
end

-- prof:func fails as every look-up does: nil, why, and a kind
-- ("not_found" with the closest names, "ambiguous" with the choices).
do
  local func = core.methods.Profile.func
  core.methods.Profile.func = function(prof, name, ...)
    -- the core's checks, numbered as for a method (a number is a string to Lua)
    local given = { n = select("#", ...) + 1, name, ... }
    for i = 1, given.n do
      local v = given[i]
      if v ~= nil or i == 1 then
        local t = type(v)
        if t ~= "string" and t ~= "number" then args.fail("func", i, "string expected, got " .. args.show(v)) end
      end
    end
    local fn, err = func(prof, name, ...)
    if fn or err == nil then return fn, err end
    if err:find("^ambiguous") then return nil, err, "ambiguous" end
    name = tostring(name)
    if select("#", ...) > 0 and (... ~= nil or select(2, ...) ~= nil) then
      -- the name is there, in other files or objects: say which
      local places = {}
      for f in prof:functions() do
        if f.name == name and #places < 5 then places[#places + 1] = f.file or f.object or "?" end
      end
      if #places > 0 then
        return nil, string.format("not found: '%s' is not in that file or object; it is in %s", name,
          table.concat(places, ", ")), "not_found"
      end
    end
    local close = require("callgrind.model.query").closest_names(prof, name)
    return nil, string.format("not found: no function named '%s'%s", name,
      #close > 0 and ("; closest names: " .. table.concat(close, ", ")) or ""), "not_found"
  end
end

-- A field a handle does not have is an error naming the closest ones
-- (the core's __index calls this hook for a string key that gave nil): a
-- field that exists but is nil here (fn.file) stays nil.
core.internal.hooks.unknown = function(obj, key)
  local class = getmetatable(obj).__name:match("^callgrind%.(.*)$")
  if args.probing() or args.declared(class)[key] then return nil end
  args.unknown(obj, class, key, core.methods[class], nil, 3)
end

local M = {}

--- The library's version (the one place it is written; a spec checks the
-- rockspecs against it).
M._VERSION = "0.1.0"

--- Loads a profile from a file, or from several files as one profile.
-- A gzip, zstd or xz file is read as its decompressed text.
-- @param path a path, or an array of paths (each file's parts become parts,
--   in the order given; functions are merged by object, file and name)
-- @tparam[opt] table opts `{ lenient = true }` skips bad lines (listed in
--   `prof:warnings()`) instead of failing; `progress = function(done,
--   total)` is called at least every 16 MB of input and at the end, and
--   cancels the load when it returns false; `threads = 1` reads with one
--   thread (a file of 4 MB or more is read by two); `chunk = n` is the
--   second thread's chunk size in bytes (for tests); `max_bytes = n` the
--   most bytes of text a file may give (default: 16 GiB, or 1,000 times
--   a compressed file's size)
-- @return Profile, or nil and "path:LINE: message"
-- @usage local prof = assert(callgrind.load("callgrind.out.1234"))
-- @usage local prof = assert(callgrind.load(callgrind.files("callgrind.out.1234")))
M.load = loader.load

--- The files one valgrind run wrote for a name: the name itself, its
-- `-01`, `-02` thread files (`--separate-threads=yes`) and `.1`, `.2` dump
-- files (`--dump-every-bb`, `--dump-before` ...): numbered dumps in order,
-- then the last one; in each dump, threads in order. Empty files and files
-- with no `events:` line near their start are left out.
-- @tparam string path the output file name (`--callgrind-out-file`)
-- @return an array of paths (empty when there is none), or nil and
--   "dir: reason"
-- @usage local prof = assert(callgrind.load(callgrind.files("callgrind.out.1234")))
M.files = loader.files

--- Loads a profile from a string.
-- @tparam string text
-- @tparam[opt] string name used in messages (default "(string)")
-- @tparam[opt] table opts as for `load`
-- @usage local prof = assert(callgrind.parse("events: Ir\nfn=main\n1 5\n"))
M.parse = loader.parse

--- Help: the objects (no argument), or the methods and fields of one
-- (a Profile, Function, Selection ... or its name), one line each.
-- @treturn string
-- @usage print(callgrind.help(prof))
M.help = lazy("callgrind.help", "text")

--- Runs fn() under the Lua profiler (callgrind.profiler): Lua VM
-- instructions (event `Instr`) per function, line and call site.
-- @tparam function fn
-- @tparam[opt] table opts `time = true` adds event `Time` (ns), `alloc =
--   true` event `Alloc` (bytes allocated)
-- @return the Profile of what ran inside fn, then fn's results; an error in
--   fn stops the profiler and is raised again
-- @usage local prof = callgrind.profile(function() work() end)
function M.profile(fn, opts)
  return require("callgrind.profiler").profile(fn, opts)
end

--- The method tables of each object type (Profile, Function, Call, Jump,
-- CostLine, Part); topic modules add methods here.
M.methods = core.methods

--- Runs a command under valgrind's callgrind and loads its profile (see
-- `callgrind.run`'s module for the options).
-- @usage local prof, info = assert(callgrind.run({ "./prog" }, { toggle_collect = "work" }))
M.run = lazy("callgrind.check.run", "run")

--- Profiles a Lua script n times, each in a fresh process, and says how
-- much its counts vary: `{ min, max, spread_pct, totals, functions, text }`
-- (see `callgrind.check.spread`).
-- @usage print(assert(callgrind.spread("bench.lua", 10)).text)
M.spread = lazy("callgrind.check.spread", "spread")

--- The history store (`callgrind.history`: open, add, show, changes,
-- the trend page, Bencher Metric Format), loaded on first use.
-- @usage local hist = assert(callgrind.history.open("perf-history.db"))
M.history = setmetatable({}, { __index = function(t, k)
  local mod = require "callgrind.history"
  for name, v in pairs(mod) do rawset(t, name, v) end
  return mod[k]
end })

--- Compares two profiles (see the `callgrind.diff` module).
-- @usage local d = callgrind.diff(old, new); print(d)
M.diff = lazy("callgrind.check.diff", "diff")

--- Writes text to a file atomically (callgrind.writer): a temporary file
-- in the same directory, synced and renamed over the target.
-- @function write_file_atomic
M.write_file_atomic = lazy("callgrind.export.write", "write_file_atomic")

--- The checks behind the luassert assertions, for any test framework:
-- each returns `ok, message` (see the `callgrind.check` and
-- `callgrind.baseline` modules).
-- @usage local ok, msg = callgrind.check_cost_at_most(2e6, prof:func("parse"), "Ir")
M.check_cost_at_most = lazy("callgrind.check.limits", "cost_at_most")
M.check_calls_at_most = lazy("callgrind.check.limits", "calls_at_most")
M.check_no_regression = lazy("callgrind.check.limits", "no_regression")
M.check_within_baseline = lazy("callgrind.check.baseline", "check")

--- The record of every check (`CALLGRIND_RECORD=path`: one JSON object per
-- line) as a text table, or Markdown for a CI job summary (see the
-- `callgrind.record` module for the fields).
-- @tparam string path
-- @tparam[opt] string format "text" (default) or "markdown"
-- @return the text, or nil, a message and a kind ("io", "format")
-- @usage print(callgrind.record_summary(os.getenv("CALLGRIND_RECORD"), "markdown"))
M.record_summary = lazy("callgrind.check.record", "summary")
--- record_summary under its name before 0.2.0, kept one release (CHANGES.md).
M.report_summary = M.record_summary

--- Formatting helpers: `commas(n)`, `shorten(name, width)` (the
-- `callgrind.model.report` module, loaded at the first use of either).
M.format = setmetatable({}, {
  __index = function(_, k) return require("callgrind.model.report")[k] end,
  __pairs = function() return pairs(require("callgrind.model.report")) end,
})
--- callgrind.format under its name before 0.2.0, kept one release.
M.report = M.format

-- At the REPL (`lua5.4 -i`, a line typed at the prompt, or `-lcallgrind`
-- before -i), `help` is a global too, unless the user has one: the one
-- global the library sets, and only there.
local function interactive()
  for level = 3, 6 do
    local info = debug.getinfo(level, "S")
    if not info then break end
    if info.source == "=stdin" then return true end
  end
  local a = rawget(_G, "arg")
  if type(a) ~= "table" then return false end
  for k = -1, -20, -1 do
    if a[k] == nil then break end
    if a[k] == "-i" then return true end
  end
  -- no script: the interpreter's own options are at 1, 2, ...
  if type(a[0]) == "string" and a[0]:match("lua[%d.]*$") then
    for k = 1, #a do if a[k] == "-i" then return true end end
  end
  return false
end
if interactive() then
  if rawget(_G, "help") == nil then rawset(_G, "help", function(x) return M.help(x) end) end
  -- the library's errors print as one line (CALLGRIND_TRACEBACK=1: with
  -- lua.c's traceback, as before)
  args.repl = (os.getenv("CALLGRIND_TRACEBACK") or "") == ""
end

-- callgrind.lod: an error naming callgrind.load, not nil
return setmetatable(M, { __index = function(t, k)
  if type(k) == "string" then args.unknown(t, "callgrind", k, nil, nil, 2) end
end })
