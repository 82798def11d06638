--- The profile written at the program's end, armed with nothing but the
-- core loaded: `callgrind.start` and `profiler.until_exit` start the
-- profiler here, and the writer (callgrind.profiler.writer, which formats and
-- writes the file) is required only when the program ends: when the Lua
-- state closes, by `os.exit`, by an error, or by SIGTERM. A profiled
-- script's start-up pays for the C core and this file alone.
--
-- Also the profiler's state that must be there before callgrind.profiler
-- is loaded: the running profiles (`nest`), the check that the profiler
-- and the debug hook are free.
-- @module callgrind.profiler.exit
local core = require "callgrind.core"

local M = {}

local getinfo = debug.getinfo
-- (the writer is loaded at the end, whatever the script did to the globals)
local pcall, require, setmetatable = pcall, require, setmetatable

--- The running profiles, outermost first (callgrind.profiler's nesting:
-- a `profile` while one runs): `{ opts, base, parts }` each, base the
-- depth (from the bottom of the stack) of the last frame that is not the
-- profile's.
-- @usage local nest = exit.nest; print(#nest)
M.nest = core.prof_nest()

--- The depth of the frame at level (of the caller of depth_of): the
-- frames from it to the bottom of the stack.
-- @usage local d = exit.depth_of(1)
function M.depth_of(level)
  local n = level + 1
  while getinfo(n + 1, "l") do n = n + 1 end
  return n - level
end

--- Raises (at the level of the caller of fname's caller) when the
-- profiler runs, or when a debug hook is set that the profiler would
-- have to replace (the counting interpreter's engine leaves the hook
-- free).
-- @usage exit.check_free("start", opts)
function M.check_free(fname, opts)
  if core.prof_running() then
    error("callgrind.profiler." .. fname .. ": the profiler is already running", 3)
  end
  if debug.gethook() and not core.prof_own_hook(opts) then
    error("callgrind.profiler." .. fname .. ": a debug hook is already set (debug.sethook); "
      .. "the profiler does not chain hooks: remove it first", 3)
  end
  local st = opts and opts.stacks
  if type(st) == "string" and st ~= "folded" then
    error(("callgrind.profiler.%s: option 'stacks' must be true, false or \"folded\", got %q"):format(fname, st), 3)
  end
end

--- One line on stderr: the profile was not written to path, and why.
-- @usage exit.complain("out.callgrind", "the disk is full")
function M.complain(path, cause)
  io.stderr:write(("callgrind.profiler: no profile written to %s: %s\n")
    :format(path, (tostring(cause):gsub("%s*\n%s*", " "))))
end

--- Starts the profiler for the rest of the program (profiler.until_exit's
-- work, its options checked): the profile is written to `opts.out`, else
-- `$CALLGRIND_OUT`, else `callgrind.out.<pid>`, by
-- callgrind.profiler.writer's exit_write (the writer is required
-- then). Raises as check_free does, naming until_exit.
-- @return the object whose collection (the Lua state's closing) writes
-- @usage local keep = exit.arm({ lines = true })
function M.arm(opts)
  M.check_free("until_exit", opts)
  local out = opts.out or os.getenv("CALLGRIND_OUT")
  local exit = os.exit
  local done = false
  -- the module path as it is now, the writer's: the script may change
  -- package.path before it ends
  local path = package.path
  -- sig: "SIGTERM" when that signal ends the run
  local function write(data, why, sig)
    if done then return end
    done = true
    local now = package.path
    package.path = path
    local ok, writer = pcall(require, "callgrind.profiler.writer")
    local err = writer
    local ctx = M.nest[#M.nest]
    if ok and ctx and #ctx.parts > 0 then
      -- (a profile was nested: the writer merges the segments)
      ok, err = pcall(require, "callgrind.profiler.merge")
    end
    package.path = now
    if not ok then
      return M.complain(out or ("callgrind.out." .. (data and data.pid or core.prof_pid())),
        "cannot load the writer: " .. tostring(err))
    end
    return writer.exit_write(data, why, sig, out, opts.stacks)
  end
  -- check_free made the collector's state, so it is finalized after the
  -- sentinel (finalizers run newest first)
  local sentinel = setmetatable({}, { __gc = core.prof_stopper(function(data, why) write(data, why) end, true) })
  -- os.exit ends the process without closing the Lua state: wrap it
  rawset(os, "exit", core.prof_stopper(function(data, why, ...)
    write(data, why)
    return exit(...)
  end, true))
  -- SIGINT: the script's "interrupted!" error, then the writing at the
  -- exit; SIGTERM: this stopper writes, then the signal ends the process
  -- the profile's frames: those above the caller of until_exit, or of
  -- the require of callgrind.start
  local base, level = nil, 2
  while true do
    local d = getinfo(level, "f")
    if not d then break end
    if d.func == require then base = M.depth_of(level) - 1 end
    level = level + 1
  end
  M.nest[#M.nest + 1] = { opts = opts, base = base or M.depth_of(3) - 1, parts = {} }
  core.prof_start(opts, 0, core.prof_stopper(write, true))
  return sentinel
end

return M
