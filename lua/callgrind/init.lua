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
lazy_method("Profile", "dot", "callgrind.export.dot")
lazy_method("Profile", "write_dot", "callgrind.export.dot")
lazy_method("Profile", "write_pprof", "callgrind.export.pprof")
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
    __index = function(_, k) return require("callgrind.model.show").warnings_mt.__index[k] end,
    __tostring = function(w) return require("callgrind.model.show").warnings_mt.__tostring(w) end,
  }
  core.methods.Profile.warnings = function(prof, ...)
    return (setmetatable(warnings(prof, ...), warnings_mt))
  end
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

--- The record of every check (`CALLGRIND_REPORT=path`: one JSON object per
-- line) as a text table, or Markdown for a CI job summary (see the
-- `callgrind.record` module for the fields).
-- @tparam string path
-- @tparam[opt] string format "text" (default) or "markdown"
-- @return the text, or nil, a message and a kind ("io", "format")
-- @usage print(callgrind.report_summary(os.getenv("CALLGRIND_REPORT"), "markdown"))
M.report_summary = lazy("callgrind.check.record", "summary")

--- Formatting helpers: `commas(n)`, `shorten(name, width)` (the
-- `callgrind.report` module, loaded at the first use of either).
M.report = setmetatable({}, {
  __index = function(_, k) return require("callgrind.model.report")[k] end,
  __pairs = function() return pairs(require("callgrind.model.report")) end,
})

return M
