-- Coroutines: generators and a producer/consumer pipeline.
local function range(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i) end
  end)
end

local function filter(pred, gen)
  return coroutine.wrap(function()
    for v in gen do
      if pred(v) then coroutine.yield(v) end
    end
  end)
end

local total = 0
for _ = 1, 50 do
  for v in filter(function(x) return x % 3 == 0 end, range(30000)) do total = total + v end
end
print(total)
