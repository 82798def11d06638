-- Table-heavy code: records, table.sort with a Lua comparator, grouping.
local function records(n, seed)
  local t = {}
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    t[i] = { id = i, key = seed % 1000, name = "r" .. (seed % 97) }
  end
  return t
end

local function by_key(a, b)
  if a.key ~= b.key then return a.key < b.key end
  return a.id < b.id
end

local sum = 0
for round = 1, 8 do
  local t = records(20000, round)
  table.sort(t, by_key)
  local groups = {}
  for _, r in ipairs(t) do
    local g = groups[r.name]
    if not g then g = {}; groups[r.name] = g end
    g[#g + 1] = r.id
  end
  for _, g in pairs(groups) do sum = sum + #g end
end
print(sum)
