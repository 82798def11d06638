-- Walk every cost line of a profile with the light iterator (prof:ulines)
-- and print how many lines per second that is (the load is not timed).
--   lua5.4 bench/ulines.lua FILE
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BUILD") or "build") .. "/?.so;" .. package.cpath
local callgrind = require "callgrind"

local path = assert(arg[1], "usage: lua5.4 bench/ulines.lua FILE")
local p = assert(callgrind.load(path))
local t0 = os.clock()
local n, sum = 0, 0
for _, _, _, c in p:ulines(1) do
  n = n + 1
  sum = sum + c
end
local dt = os.clock() - t0
assert(sum == p:total(1), "the lines do not add up to the total")
print(("%d %.3f %.0f"):format(n, dt, n / dt))
