--- callgrind: read callgrind-format profiles and ask questions of them.
-- The face of the library: the C core (`callgrind.core`) loads profiles;
-- the topic modules add their methods to the same objects.
-- @module callgrind
local core = require "callgrind.core"
local events = require "callgrind.events"
require "callgrind.graph"
require "callgrind.query"
local report = require "callgrind.report"

local M = {}

--- The library's version (the one place it is written; a spec checks the
-- rockspecs against it).
M._VERSION = "0.1.0"

-- Every loaded profile gets its derived events (file formulas, presets).
local function attach(prof, ...)
  if prof then events._attach(prof) end
  return prof, ...
end

--- Loads a profile from a file.
-- @tparam string path
-- @tparam[opt] table opts `{ lenient = true }` skips bad lines (listed in
--   `prof:warnings()`) instead of failing
-- @return Profile, or nil and "path:LINE: message"
-- @usage local prof = assert(callgrind.load("callgrind.out.1234"))
function M.load(path, opts)
  return attach(core.load(path, opts))
end

--- Loads a profile from a string.
-- @tparam string text
-- @tparam[opt] string name used in messages (default "(string)")
-- @tparam[opt] table opts as for `load`
-- @usage local prof = assert(callgrind.parse("events: Ir\nfn=main\n1 5\n"))
function M.parse(text, name, opts)
  return attach(core.parse(text, name, opts))
end

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

--- Formatting helpers: `commas(n)`, `shorten(name, width)`.
M.report = report

return M
