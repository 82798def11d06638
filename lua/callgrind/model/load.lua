--- The one loader of the Lua layer: `callgrind.load`, `callgrind.parse`
-- and `callgrind.files` (the C core reads; every loaded profile gets its
-- derived events here). Every module that loads a profile (the face, the
-- profiler, running valgrind, baselines) loads it through this one.
-- @module callgrind.model.load
local core = require "callgrind.core"
local args = require "callgrind.args"
local events = require "callgrind.model.events"

local type = type

local M = {}

-- Every loaded profile gets its derived events (file formulas, presets).
local function attach(prof, ...)
  if prof then events.attach(prof) end
  return prof, ...
end

--- Loads a profile from a file, or from several files as one profile.
-- @usage local prof = assert(load.load("callgrind.out.1234"))
function M.load(path, opts)
  args.options(opts, "load", 2, "load")
  return attach(core.load(path, opts))
end

--- The files one valgrind run wrote for a name.
-- @usage local paths = load.files("callgrind.out.1234")
function M.files(path)
  return core.files(path)
end

--- Loads a profile from a string.
-- @usage local prof = assert(load.parse("events: Ir\nfn=main\n1 5\n"))
function M.parse(text, name, opts)
  if type(name) == "table" and opts == nil then
    args.options(name, "parse", 2, "load")
  else
    args.options(opts, "parse", 3, "load")
  end
  return attach(core.parse(text, name, opts))
end

return M
