--- `lua5.4 -lcallgrind.start script.lua`: profiles the whole script and
-- writes `callgrind.out.<pid>` or `$CALLGRIND_OUT` at its end
-- (docs/profiling-lua.md). The C core does it, loaded through its starter
-- entry (csrc/binding/cg_lua.c). Every profiled process parses this file.
-- @module callgrind.start
-- @usage lua5.4 -lcallgrind.start script.lua
if _VERSION ~= "Lua 5.4" then error("callgrind needs Lua 5.4; this is " .. tostring(_VERSION), 0) end
-- the starter entry where the core is a file not loaded yet, else the core
local p = package
local s = not p.loaded["callgrind.core"] and p.searchpath("callgrind.core", p.cpath)
s = s and p.loadlib(s, "luaopen_callgrind_core_starter")
--- The object that writes the profile when the Lua state closes.
return { writer = s and s() or require("callgrind.core").prof_autostart() }
