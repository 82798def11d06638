-- Closures: counters, composition and higher-order helpers.
local function counter()
  local n = 0
  return function(k) n = n + (k or 1); return n end
end

local function compose(f, g) return function(x) return f(g(x)) end end

local function map(t, f)
  local r = {}
  for i = 1, #t do r[i] = f(t[i]) end
  return r
end

local acc = 0
for round = 1, 400 do
  local c = counter()
  local inc = compose(function(x) return x + 1 end, function(x) return x * 2 end)
  local t = {}
  for i = 1, 10000 do t[i] = i end
  local r = map(t, inc)
  for i = 1, #r, 3 do c(r[i]) end
  acc = acc + c(0) + round
end
print(acc)
