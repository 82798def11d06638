--- `lua5.4 -lcallgrind.start script.lua args...`: profiles the whole
-- script with callgrind.profiler and writes `callgrind.out.<pid>` (or
-- `$CALLGRIND_OUT`) when it ends, also by `os.exit` or an error; when it
-- cannot, one line on stderr says why (no partial file is left).
-- `CALLGRIND_EVENTS=Time,Alloc` adds those events to `Instr`;
-- `CALLGRIND_LINES=0` collects functions and calls only (faster);
-- `CALLGRIND_STACKS=1` records whole stacks too, written beside the
-- profile as its stack record `FILE.stacks` (the library's flame graph,
-- folded stacks, pprof export and report of FILE take them from there;
-- `callgrind-lua folded FILE` gives their folded text);
-- `CALLGRIND_STACKS=folded` writes folded text `FILE.folded` instead.
-- Requiring this module starts the profiler: that is its purpose. Until
-- the program ends only the C core and callgrind.profiler.exit are
-- loaded; the modules that format and write the profile are loaded then.
-- @module callgrind.start
-- @usage lua5.4 -lcallgrind.start script.lua
if _VERSION ~= "Lua 5.4" then
  error("callgrind needs Lua 5.4; this is " .. tostring(_VERSION), 0)
end
-- the profiler armed with the core alone (callgrind.profiler, the
-- writer, is loaded at the end)
local exit = require "callgrind.profiler.exit"

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

-- CALLGRIND_LINES=0 and CALLGRIND_STACKS=1 (unset: the defaults; and
-- CALLGRIND_STACKS=folded)
local function flag(name, default, also)
  local v = os.getenv(name)
  if v == nil or v == "" then return default end
  if v == "0" or v == "1" then return v == "1" end
  if v == also then return v end
  error("callgrind.start: " .. name .. " is '" .. v .. "'; expected 0" .. (also and ", 1 or " .. also or " or 1"), 0)
end
opts.lines = flag("CALLGRIND_LINES", true)
opts.stacks = flag("CALLGRIND_STACKS", false, "folded")

--- The object that writes the profile when the Lua state closes
-- (profiler.until_exit, without its options check: they are right here).
M.writer = exit.arm(opts)

return M
