-- luacheck (Debian lua-check, pure Lua) over every .lua file under the
-- directory arg[1] (bench/stack_record.sh: Penlight's source, whose deep
-- stacks make a big folded text). Run from anywhere.
package.path = "/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;" .. package.path
local luacheck = require "luacheck"
local dir = assert(arg[1], "usage: luacheck_dir.lua DIR")
local files = {}
local p = io.popen("find '" .. dir:gsub("'", "'\\''") .. "' -name '*.lua' | LC_ALL=C sort")
for f in p:lines() do files[#files + 1] = f end
p:close()
local report = luacheck.check_files(files, { std = "lua54" })
print(#files, report.warnings, report.errors)
