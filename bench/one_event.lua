-- Writes the 1-event form of an instr-level callgrind profile: the same
-- file with only its first event column (events:, summary:, totals: and
-- every cost line). make bench derives its 1-event profile from the
-- 13-event one this way, so that both come from one valgrind run.
--   lua5.4 bench/one_event.lua IN > OUT
local path = assert(arg[1], "usage: lua5.4 bench/one_event.lua IN > OUT")
local npos = 1
local out = {}
local function flush()
  io.write(table.concat(out))
  out = {}
end
for line in io.lines(path) do
  local c = line:sub(1, 1)
  if c:match("[%d%+%-%*]") then
    -- positions, then the first cost (if any: callgrind drops trailing zeros)
    local keep, n = {}, 0
    for tok in line:gmatch("%S+") do
      n = n + 1
      if n <= npos + 1 then keep[n] = tok end
    end
    line = table.concat(keep, " ")
  elseif line:find("^positions:") then
    npos = 0
    for _ in line:sub(11):gmatch("%S+") do npos = npos + 1 end
  elseif line:find("^events:") or line:find("^summary:") or line:find("^totals:") then
    line = line:match("^(%a+:%s*%S+)")
  end
  out[#out + 1] = line .. "\n"
  if #out >= 4096 then flush() end
end
flush()
