#!/usr/bin/env lua5.4
-- Prints a profile's summary and its top functions by self cost.
--   lua5.4 examples/top.lua callgrind.out.1234 [N] [EVENT]
-- Run from the repository (it finds the library in lua/ and build/), or
-- with the library installed.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local callgrind = require "callgrind"

local path, n, event = arg[1], tonumber(arg[2] or 15), arg[3]
if not path then
  io.stderr:write("usage: lua5.4 examples/top.lua FILE [N] [EVENT]\n")
  os.exit(2)
end
local prof, err = callgrind.load(path)
if not prof then
  io.stderr:write(err, "\n")
  os.exit(1)
end

-- 1234567 -> "1,234,567"
local function commas(v)
  local s = tostring(v)
  local sign, digits = s:match("^(-?)(%d+)$")
  if not digits then return s end
  return sign .. digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
end

event = event or prof.events[1]
print(("profile  %s"):format(prof.name))
print(("creator  %s"):format(prof.creator or "?"))
print(("command  %s"):format(prof.cmd or "?"))
local nparts = 0
for _ in prof:parts() do nparts = nparts + 1 end
local totals = prof:totals()
local cols = {}
for _, e in ipairs(prof.events) do cols[#cols + 1] = e .. " " .. commas(totals[e]) end
print(("totals   %s"):format(table.concat(cols, ", ")))
local nfuncs, ncalls = 0, 0
local funcs = {}
for fn in prof:functions() do
  nfuncs = nfuncs + 1
  funcs[nfuncs] = fn
end
for _ in prof:calls() do ncalls = ncalls + 1 end
print(("size     %d functions, %d calls, %d part(s)"):format(nfuncs, ncalls, nparts))
for _, w in ipairs(prof:warnings()) do print("warning  " .. w) end

table.sort(funcs, function(a, b)
  local x, y = a:self(event), b:self(event)
  if x ~= y then return x > y end
  return a.name < b.name
end)
local total = totals[event]
print()
print(("top %d functions by self %s"):format(n, event))
print(("%15s %6s  %s"):format(event, "%", "function  (file; object)"))
for i = 1, math.min(n, #funcs) do
  local fn = funcs[i]
  local v = fn:self(event)
  local pct = total ~= 0 and 100 * v / total or 0
  print(("%15s %5.1f%%  %s  (%s; %s)"):format(commas(v), pct, fn.name,
    fn.file or "?", fn.object or "?"))
end
