-- String building: formatting, concatenation, gsub and table.concat.
local function line(i)
  return string.format("%05d,%s,%.2f", i, ("k" .. i):upper(), i / 7)
end

local total = 0
for round = 1, 40 do
  local parts = {}
  for i = 1, 5000 do parts[#parts + 1] = line(i + round) end
  local csv = table.concat(parts, "\n")
  local n = 0
  csv:gsub("K(%d+)", function(d) n = n + #d end)
  total = total + #csv + n
end
print(total)
