-- make fuzz-lua SEEDS=N [FROM=S]: N generated programs (spec/support/luagen.lua)
-- from seed S on, each profiled by the hook engine (lua5.4), the counting
-- engine (build/bin/callgrind-lua5.4) and the spec's count hook; every
-- dump must be the same. A failing seed is printed with its program shrunk
-- (delta debugging over the generator's statements: the smallest program
-- found that still differs in the same pair) and the lines that differ.
-- Exit status 1 when any seed failed.
--
--   lua5.4 tools/fuzz_lua.lua N [FROM] [VM]
local G = require "spec.support.luagen"

local N = tonumber(arg[1] or "1000")
local FROM = tonumber(arg[2] or "1000000")
local VM = arg[3] or "build/bin/callgrind-lua5.4"
local BATCH = 100
local LUA = "lua5.4"

local function shq(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- the output of p, and how its command ended: nil when it exited 0, else
-- "exit N" or "signal N"
local function read_all(p)
  local out = p:read("a")
  local ok, how, code = p:close()
  if ok then return out, nil end
  if how == "exit" and code > 128 then   -- the shell's way of saying a signal
    return out, ("signal %d (exit %d)"):format(code - 128, code)
  end
  return out, how .. " " .. tostring(code)
end

-- the commands of the two interpreters' children for seeds a..b
local function child(which, a, b)
  local lua = which == "vm" and shq(VM) or LUA
  return ("%s spec/support/luagen.lua %s %d %d"):format(lua, which, a, b)
end

-- the hook and vm dumps of seeds a..b, the two interpreters side by side;
-- then the children that did not exit 0, each with how it ended
local function batch(a, b)
  local ph = assert(io.popen(child("hook", a, b) .. " 2>&1"))
  local pv = assert(io.popen(child("vm", a, b) .. " 2>&1"))
  local h, hend = read_all(ph)
  local v, vend = read_all(pv)
  local dh, dv = G.parse(h), G.parse(v)
  for name, t in pairs(dv) do
    dh[name] = dh[name] or {}
    dh[name].vm = t.vm
  end
  return dh, h .. v, { hook = hend, vm = vend }
end

-- A child that died on seeds a..b (its output lost): the shortest run of
-- seeds ending at the first that fails when run after the ones before it
-- (a crash may need the state an earlier program left, as a stack grown
-- or a collection cycle's timing); nil when each of them passes alone
-- and together they do not fail again.
local function crashing_run(which, a, b)
  local function fails(x, y)
    local _, how = read_all(assert(io.popen(child(which, x, y) .. " >/dev/null 2>&1")))
    return how ~= nil
  end
  if not fails(a, b) then return nil end
  local lo, hi = a, b        -- a..hi fails; find the least such hi
  while lo < hi do
    local mid = (lo + hi) // 2
    if fails(a, mid) then hi = mid else lo = mid + 1 end
  end
  local first = a            -- first..hi fails; find the greatest such first
  for x = hi, a, -1 do
    if fails(x, hi) then first = x break end
  end
  return first, hi
end

-- which pair differs: "hook/oracle", "hook/vm", or nil
local function verdict(d)
  if not d or not d.hook or not d.oracle or not d.vm then return "missing" end
  if d.hook ~= d.oracle then return "hook/oracle" end
  if d.hook ~= d.vm then return "hook/vm" end
  return nil
end

local tmp = os.tmpname()

-- the dumps of one program's text
local function dumps_of(src)
  local f = assert(io.open(tmp, "wb"))
  f:write(src)
  f:close()
  -- a shrunk program may lose what bounded it (a fuel count): 60 s each
  local ph = assert(io.popen(("timeout 60 %s spec/support/luagen.lua hookfile %s 2>&1"):format(LUA, shq(tmp))))
  local pv = assert(io.popen(("timeout 60 %s spec/support/luagen.lua vmfile %s 2>&1"):format(shq(VM), shq(tmp))))
  local d = G.parse(read_all(ph)).file or {}
  d.vm = (G.parse(read_all(pv)).file or {}).vm
  return d
end

-- delta debugging: remove chunks of the statements still in the program,
-- halving the chunk, while the same pair still differs
local function shrink(seed, want)
  local tree = G.tree(seed)
  local drop = {}
  local function present()
    local t = {}
    local function walk(nodes)
      for _, n in ipairs(nodes) do
        if not drop[n] then
          if n.cut then t[#t + 1] = n end
          if n.body then walk(n.body) end
        end
      end
    end
    walk(tree.items)
    return t
  end
  local function fails(extra)
    local d = {}
    for k in pairs(drop) do d[k] = true end
    for _, n in ipairs(extra) do d[n] = true end
    return verdict(dumps_of(G.render(tree, d))) == want
  end
  local size = #present()
  while size >= 1 do
    local changed = false
    local nodes = present()
    local i = 1
    while i <= #nodes do
      local chunk = {}
      for j = i, math.min(i + size - 1, #nodes) do chunk[#chunk + 1] = nodes[j] end
      if fails(chunk) then
        for _, n in ipairs(chunk) do drop[n] = true end
        changed = true
      end
      i = i + size
    end
    if not changed then size = size // 2 end
  end
  return G.render(tree, drop)
end

local failed = 0
local done = 0
local t0 = os.time()
for a = FROM, FROM + N - 1, BATCH do
  local b = math.min(a + BATCH - 1, FROM + N - 1)
  local d, raw, ends = batch(a, b)
  local died = {}
  for _, which in ipairs({ "hook", "vm" }) do
    if ends[which] then
      local x, y = crashing_run(which, a, b)
      died[#died + 1] = ("the %s child of seeds %d to %d ended with %s; %s"):format(which, a, b, ends[which],
        x and ("seeds %d to %d fail together, run alone: %s"):format(x, y, child(which, x, y))
          or "no run of them fails again alone")
    end
  end
  if #died > 0 then print(table.concat(died, "\n")) end
  for seed = a, b do
    local v = verdict(d[tostring(seed)])
    if v == "missing" then
      failed = failed + 1
      print(("seed %d: no dump%s"):format(seed, #died > 0 and " (above)" or "\n" .. raw:sub(-2000)))
    elseif v then
      failed = failed + 1
      local src = shrink(seed, v)
      local dd = dumps_of(src)
      local x, y = v:match("(%w+)/(%w+)")
      local oa, ob = G.diff(dd[x] or "", dd[y] or "")
      print(("seed %d: %s differ; shrunk to %d lines:"):format(seed, v, select(2, src:gsub("\n", ""))))
      io.write(src)
      for _, l in ipairs(oa) do print("  " .. x .. ": " .. l:sub(1, 300)) end
      for _, l in ipairs(ob) do print("  " .. y .. ": " .. l:sub(1, 300)) end
    end
  end
  done = b - FROM + 1
end
os.remove(tmp)
print(("%d programs (seeds %d to %d), %d failed, %d s"):format(done, FROM, FROM + N - 1, failed, os.time() - t0))
os.exit(failed == 0 and 0 or 1)
