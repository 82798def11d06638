-- One output of an estimate, timed after the load: what bench/estimate.sh
-- runs in turn under two checkouts. Prints "SECONDS BYTES": CPU seconds
-- (os.clock, one thread) of the output alone, and its size.
--   lua5.4 bench/estimate.lua FILE folded|pprof|flame|report    (BUILD=dir)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BUILD") or "build") .. "/?.so;" .. package.cpath
local callgrind = require "callgrind"

local path, what = arg[1], arg[2]
assert(path and what, "usage: lua5.4 bench/estimate.lua FILE folded|pprof|flame|report")
local p = assert(callgrind.load(path))
local out = os.tmpname()

local function size(file)
  local f = assert(io.open(file, "rb"))
  local n = f:seek("end")
  f:close()
  return n
end

local run = {
  folded = function() return #assert(p:folded()) end,
  pprof = function() assert(p:write_pprof(out)); return size(out) end,
  flame = function() assert(p:write_flamegraph(out)); return size(out) end,
  report = function() assert(p:write_html(out)); return size(out) end,
}
local f = assert(run[what], "unknown output " .. what)
local t = os.clock()
local bytes = f()
print(("%.4f %d"):format(os.clock() - t, bytes))
os.remove(out)
