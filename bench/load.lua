-- Load one profile with this checkout's callgrind and touch the result a little,
-- so the number measured is the load. Run from the repository root:
--   lua5.4 bench/load.lua FILE [THREADS]   (BUILD=dir if the module is not in
--   build/; THREADS: opts.threads, e.g. 1 for the load with one thread)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BUILD") or "build") .. "/?.so;" .. package.cpath
local callgrind = require "callgrind"

local path = assert(arg[1], "usage: lua5.4 bench/load.lua FILE")
local p = assert(callgrind.load(path, { threads = tonumber(arg[2]) }))
local nfn = 0
for _ in p:functions() do nfn = nfn + 1 end
print(("%s: %d functions, %s total %d, warnings: %d")
  :format(path, nfn, p.events[1], p:total(1), #p:warnings()))
