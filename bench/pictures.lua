-- The pictures and exports on one profile: prof:folded(), prof:dot(),
-- prof:flamegraph(), prof:write_pprof() and prof:write_html() (the HTML
-- report) at their default thresholds,
-- each timed after the load, RUNS times (the median and the fastest of
-- os.clock(): CPU seconds of this process, which runs one thread).
--   lua5.4 bench/pictures.lua FILE [RUNS]    (BUILD=dir as for bench/load.lua)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("BUILD") or "build") .. "/?.so;" .. package.cpath
local callgrind = require "callgrind"

local path = assert(arg[1], "usage: lua5.4 bench/pictures.lua FILE [RUNS]")
local runs = tonumber(arg[2] or 5)
local p = assert(callgrind.load(path))
local out = os.tmpname()

local function size(file)
  local f = assert(io.open(file, "rb"))
  local n = f:seek("end")
  f:close()
  return n
end

local rows = {
  { "prof:folded()", function() return #p:folded() end },
  { "prof:dot()", function() return #p:dot() end },
  { "prof:write_flamegraph()", function() assert(p:write_flamegraph(out)); return size(out) end },
  { "prof:write_pprof()", function() assert(p:write_pprof(out)); return size(out) end },
  { "prof:write_html()", function() assert(p:write_html(out)); return size(out) end },
}
for _, row in ipairs(rows) do
  local times, bytes = {}, 0
  for i = 1, runs do
    local t = os.clock()
    bytes = row[2]()
    times[i] = os.clock() - t
  end
  table.sort(times)
  local median = runs % 2 == 1 and times[(runs + 1) // 2] or (times[runs // 2] + times[runs // 2 + 1]) / 2
  print(("%-24s %9.3f %9.3f %12d bytes"):format(row[1], median, times[1], bytes))
end
os.remove(out)
