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
-- Requiring this module starts the profiler: that is its purpose. The
-- C core does the work (core.prof_autostart: the variables, the start,
-- the profile written in C at the end), loaded through a small entry of
-- its own, not as callgrind.core: no other Lua module is loaded,
-- unless the script nests a profile of callgrind.profiler in this one
-- (then the Lua writer merges them at the end).
-- @module callgrind.start
-- @usage lua5.4 -lcallgrind.start script.lua
if _VERSION ~= "Lua 5.4" then
  error("callgrind needs Lua 5.4; this is " .. tostring(_VERSION), 0)
end

-- The core's starter entry (luaopen_callgrind_core_starter: a few
-- functions registered, not callgrind.core's hundreds; a later require of
-- callgrind.core finds the library loaded) where the core is a file of
-- package.cpath and not loaded yet; else callgrind.core itself.
local path = not package.loaded["callgrind.core"] and package.searchpath("callgrind.core", package.cpath)
local starter = path and package.loadlib(path, "luaopen_callgrind_core_starter")

--- The object that writes the profile when the Lua state closes.
return { writer = starter and starter() or require("callgrind.core").prof_autostart() }
