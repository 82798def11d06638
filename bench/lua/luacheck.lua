-- luacheck (Debian lua-check, pure Lua) over this repository's lua/: a
-- real program nobody here wrote. Run from the repository's root.
package.path = "/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;" .. package.path
local luacheck = require "luacheck"
local files = {}
local p = io.popen("ls lua/callgrind/*.lua")
for f in p:lines() do files[#files + 1] = f end
p:close()
local report = luacheck.check_files(files, { std = "lua54" })
print(#files, report.warnings, report.errors)
