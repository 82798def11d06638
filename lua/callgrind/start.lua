--- -lcallgrind.start (docs/profiling-lua.md); each comment char costs every run
local p = package
local s = _VERSION == "Lua 5.4" and not p.loaded["callgrind.core"] and p.searchpath("callgrind.core", p.cpath)
s = s and p.loadlib(s, "luaopen_callgrind_core_starter")
return s and s() or require("callgrind") and require("callgrind.core").prof_autostart()
