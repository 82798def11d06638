-- make bench (bench/lua_memory.sh): loads and calls CHUNKS (default
-- 200,000) small chunks, as a template engine or a configuration loader
-- does: each chunk a function of its own, dropped once called, named
-- after the template it came from (100 of them); prints the sum.
local n = tonumber(os.getenv("CHUNKS")) or 200000
local s = 0
for i = 1, n do
  local f = assert(load("local x = ... return x + " .. i % 1000, "=template" .. i % 100))
  s = s + f(i)
end
print(s)
