-- Time prof:write of one profile with this checkout's callgrind. Run from
-- the repository root:
--   lua5.4 bench/write.lua FILE OUT [REPEAT]
-- loads FILE once, writes it to OUT REPEAT times (default 1), and prints
-- the CPU seconds of the fastest write (os.clock: the writer is one thread;
-- the fsync at the end is I/O wait, not counted), the bytes and MB/s.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BUILD") or "build") .. "/?.so;" .. package.cpath
local callgrind = require "callgrind"

local path = assert(arg[1], "usage: lua5.4 bench/write.lua FILE OUT [REPEAT]")
local out = assert(arg[2], "usage: lua5.4 bench/write.lua FILE OUT [REPEAT]")
local prof = assert(callgrind.load(path))
local best = math.huge
for _ = 1, tonumber(arg[3]) or 1 do
  local t0 = os.clock()
  assert(prof:write(out))
  best = math.min(best, os.clock() - t0)
end
local f = assert(io.open(out, "rb"))
local bytes = f:seek("end")
f:close()
print(("write: %.4f s %d bytes %.1f MB/s"):format(best, bytes, bytes / 1e6 / best))
