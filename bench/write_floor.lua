-- What writing a folded file costs by itself, for bench/lua_vm.sh:
--   lua5.4 bench/write_floor.lua FILE [ROUNDS]
-- reads FILE (a profiled run's FILE.folded) and writes the same bytes over
-- it ROUNDS times (default 9) with the core's atomic write, the one the
-- profiler's folded file takes (a temporary file, fsync, renamed over the
-- old one). Prints the median cpu seconds of one write (os.clock: user +
-- sys of this one thread) and the bytes. The stacks run of a workload
-- cannot cost less over its line-level run than this share of it, however
-- cheap its stacks are to record.
local core = require "callgrind.core"

local path = assert(arg[1], "usage: lua5.4 bench/write_floor.lua FILE [ROUNDS]")
local f = assert(io.open(path, "rb"))
local text = f:read("a")
f:close()
local times = {}
for i = 1, tonumber(arg[2]) or 9 do
  local t0 = os.clock()
  assert(core.write_file_atomic(path, text))
  times[i] = os.clock() - t0
end
table.sort(times)
print(("%.6f %d"):format(times[(#times + 1) // 2], #text))
