-- A pure-Lua debug.sethook collector, for comparison in make bench: per
-- function call counts and per-line hit counts, with debug.getinfo on every
-- call, as luatrace or ProFi do (keyed by the function value: the cheapest
-- key debug.getinfo gives).
-- Usage: lua5.4 bench/lua_hook_collector.lua script.lua args...
local script = assert(arg[1], "usage: lua5.4 bench/lua_hook_collector.lua script.lua")
local getinfo = debug.getinfo
local calls, lines, stack, depth = {}, {}, {}, 0

local function key_of(level)
  return getinfo(level, "f").func
end

local function hook(event, line)
  if event == "line" then
    local key = stack[depth] or "?"
    local t = lines[key]
    if not t then
      t = {}
      lines[key] = t
    end
    t[line] = (t[line] or 0) + 1
  elseif event == "return" then
    if depth > 0 then
      stack[depth] = nil
      depth = depth - 1
    end
  else
    local key = key_of(3)
    calls[key] = (calls[key] or 0) + 1
    if event == "tail call" and depth > 0 then depth = depth - 1 end
    depth = depth + 1
    stack[depth] = key
  end
end

local chunk = assert(loadfile(script))
local args = { table.unpack(arg, 2) }
debug.sethook(hook, "crl")
chunk(table.unpack(args))
debug.sethook()
local n = 0
for _ in pairs(calls) do n = n + 1 end
io.stderr:write(("lua_hook_collector: %d functions\n"):format(n))
