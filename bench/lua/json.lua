-- dkjson (Debian lua-dkjson, pure Lua): encode and decode a generated
-- document of records, arrays and escaped strings, several times.
package.path = "/usr/share/lua/5.1/?.lua;" .. package.path
local json = require "dkjson"
json.use_lpeg = nil
local doc = {}
for i = 1, 2000 do
  doc[i] = { id = i, name = "item \"" .. i .. "\"\n", tags = { "a" .. i % 7, "b" .. i % 11 },
    price = i / 8, ok = i % 2 == 0, nested = { depth = { i, i * 2, { x = i } } } }
end
local n = 0
for _ = 1, 4 do
  local text = json.encode(doc)
  local back = json.decode(text)
  n = n + #text + #back
end
print(n)
