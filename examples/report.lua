#!/usr/bin/env lua5.4
-- Writes one self-contained HTML report (open it from disk in any browser:
-- no network): the profile's header, its functions (sort and filter by any
-- event), the flame graph, and the callers, callees and source lines of the
-- function you click. With two profiles, the diff's totals and movers too.
--   lua5.4 examples/report.lua OUT.html [PROFILE [OLD_PROFILE]]
-- Without a profile it profiles a small Lua workload (with its exact
-- stacks). The command line does the same: callgrind-lua report FILE -o OUT.html
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local callgrind = require "callgrind"

local out, path, old = arg[1] or "report.html", arg[2], arg[3]
local prof
if path then
  prof = assert(callgrind.load(path))
else
  local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
  local function words(n)
    local t = {}
    for i = 1, n do t[#t + 1] = ("w%d"):format(i % 97) end
    table.sort(t)
    return table.concat(t, " ")
  end
  prof = callgrind.profile(function() return fib(18), #words(3000) end, { stacks = true })
end
if old then
  assert(callgrind.diff(assert(callgrind.load(old)), prof):write_html(out))
else
  assert(prof:write_html(out))
end
print(("%s: %d bytes"):format(out, #assert(io.open(out, "rb")):read("a")))
