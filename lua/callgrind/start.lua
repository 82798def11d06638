--- `lua5.4 -lcallgrind.start script.lua`: profiles the whole script and
-- writes `callgrind.out.<pid>` (or `$CALLGRIND_OUT`) at its end; the
-- CALLGRIND_* variables: docs/profiling-lua.md. The C core does it all,
-- through its starter entry (cg_lua.c). Every profiled process parses
-- this file: keep it short.
-- @module callgrind.start
-- @usage lua5.4 -lcallgrind.start script.lua
if _VERSION ~= "Lua 5.4" then
  error("callgrind needs Lua 5.4; this is " .. tostring(_VERSION), 0)
end

-- the starter entry where the core is a file not loaded yet, else the core
local path = not package.loaded["callgrind.core"] and package.searchpath("callgrind.core", package.cpath)
local starter = path and package.loadlib(path, "luaopen_callgrind_core_starter")

--- The object that writes the profile when the Lua state closes.
return { writer = starter and starter() or require("callgrind.core").prof_autostart() }
