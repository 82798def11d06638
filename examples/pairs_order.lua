-- A script whose count depends on pairs order: an insertion sort of 200
-- string keys taken in the order pairs gives them. Lua 5.4 seeds its
-- string hashes per process, so each process counts differently; measure
-- that spread with `callgrind-lua spread 20 examples/pairs_order.lua` or
-- callgrind.spread (docs/profiling-lua.md, "Determinism").
local t = {}
for i = 1, 200 do t["key" .. i] = i end

local function insert(list, v)
  local i = #list
  while i > 0 and list[i] > v do
    list[i + 1] = list[i]
    i = i - 1
  end
  list[i + 1] = v
end

local function sorted_keys(tab)
  local list = {}
  for k in pairs(tab) do insert(list, k) end
  return list
end

for _ = 1, 5 do sorted_keys(t) end
