--- `lua5.4 -lcallgrind.start script.lua args...`: profiles the whole
-- script with callgrind.profiler and writes `callgrind.out.<pid>` (or
-- `$CALLGRIND_OUT`) when it ends, also by `os.exit` or an error.
-- `CALLGRIND_EVENTS=Time,Alloc` adds those events to `Instr`.
-- Requiring this module starts the profiler: that is its purpose.
-- @module callgrind.start
-- @usage lua5.4 -lcallgrind.start script.lua
local profiler = require "callgrind.profiler"

local M = {}

local opts = {}
for ev in (os.getenv("CALLGRIND_EVENTS") or ""):gmatch("[^,%s]+") do
  if ev == "Time" then
    opts.time = true
  elseif ev == "Alloc" then
    opts.alloc = true
  elseif ev ~= "Instr" then
    error("callgrind.start: CALLGRIND_EVENTS lists '" .. ev .. "'; known: Instr, Time, Alloc", 0)
  end
end

--- The object that writes the profile when the Lua state closes.
M.writer = profiler.until_exit(opts)

return M
