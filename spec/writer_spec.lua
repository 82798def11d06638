-- prof:write: the round trip load -> write -> load over every fixture, every
-- file of the shared corpus that loads and fresh valgrind profiles, and
-- callgrind_annotate on written files against the originals.

local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq

-- Where the shared corpus is: ../shared/corpus from the repository root.
local function corpus_dir()
  local src = debug.getinfo(1, "S").source:sub(2)
  local spec_dir = src:match("^(.*)/[^/]*$") or "."
  local root = spec_dir == "." and ".." or (spec_dir:match("^(.*)/[^/]*$") or ".")
  return (root == "." and "" or (root .. "/")) .. "../shared/corpus"
end
local CORPUS = corpus_dir()

local function find_files(dir, pattern)
  local files = {}
  local p = assert(io.popen("find " .. shq(dir) .. " -type f | sort"))
  for line in p:lines() do
    if line:match(pattern) then files[#files + 1] = line end
  end
  p:close()
  return files
end

-- Everything the model holds, as sorted strings: a difference between two
-- profiles is a difference between two of these.
local function key(fn)
  return ("%s|%s|%s"):format(fn.name, tostring(fn.file), tostring(fn.object))
end

local function costs(prof, t)
  local s = {}
  for _, ev in ipairs(prof.events) do s[#s + 1] = ev .. "=" .. tostring(t[ev] or 0) end
  return table.concat(s, ",")
end

local function cost_map(evs, t)
  if not t then return "nil" end
  local s = {}
  for _, ev in ipairs(evs) do s[#s + 1] = ev .. "=" .. tostring(t[ev]) end
  return table.concat(s, ",")
end

local function dump(prof)
  local d = { functions = {}, lines = {}, calls = {}, jumps = {}, parts = {} }
  for fn in prof:functions() do
    d.functions[#d.functions + 1] = key(fn) .. " self " .. costs(prof, fn:self())
  end
  for l in prof:lines() do
    d.lines[#d.lines + 1] = ("%s @%s:%s:%s part %d: %s"):format(key(l.fn), tostring(l.file), tostring(l.line),
      tostring(l.addr), l.part.index, costs(prof, l:cost()))
  end
  for c in prof:calls() do
    d.calls[#d.calls + 1] = ("%s -> %s x%d @%s:%s:%s -> %s:%s part %d: %s"):format(key(c.caller), key(c.callee),
      c.count, tostring(c.file), tostring(c.line), tostring(c.addr), tostring(c.target_line),
      tostring(c.target_addr), c.part.index, costs(prof, c:cost()))
  end
  for j in prof:jumps() do
    d.jumps[#d.jumps + 1] = ("%s -> %s %s %d/%d @%s:%s:%s -> %s:%s:%s part %d"):format(key(j.from), key(j.to),
      tostring(j.conditional), j.count, j.executed, tostring(j.file), tostring(j.line), tostring(j.addr),
      tostring(j.target_file), tostring(j.target_line), tostring(j.target_addr), j.part.index)
  end
  -- a part without totals: gets one: the sum of its cost lines
  local sums = {}
  for l in prof:lines() do
    local t = sums[l.part.index] or {}
    sums[l.part.index] = t
    for ev, v in pairs(l:cost()) do t[ev] = (t[ev] or 0) + v end
  end
  for part in prof:parts() do
    local desc = {}
    for k, v in pairs(part.desc) do desc[#desc + 1] = k .. ":" .. v end
    table.sort(desc)
    d.parts[#d.parts + 1] = ("%d #%s pid %s thread %s cmd %s desc [%s] events %s summary %s totals %s"):format(
      part.index, tostring(part.number), tostring(part.pid), tostring(part.thread), tostring(part.cmd),
      table.concat(desc, ";"), table.concat(part.events, " "), cost_map(part.events, part.summary),
      cost_map(part.events, part.totals or sums[part.index] or {}))
  end
  for _, k in ipairs { "functions", "lines", "calls", "jumps" } do table.sort(d[k]) end
  d.totals = costs(prof, prof:totals())
  d.events = table.concat(prof.events, " ")
  local ev = {}
  for _, e in ipairs(prof:all_events()) do
    local info = prof:event_info(e)
    ev[#ev + 1] = ("%s=%s:%s"):format(e, tostring(info.formula), tostring(info.long_name))
  end
  d.event_info = table.concat(ev, " ")
  d.header = ("%s|%s|%s"):format(tostring(prof.creator), tostring(prof.cmd), tostring(prof.pid))
  return d
end

-- The first difference between two dumps, or nil.
local function difference(a, b)
  for _, k in ipairs { "totals", "events", "event_info", "header" } do
    if a[k] ~= b[k] then return ("%s: %s ~= %s"):format(k, a[k], b[k]) end
  end
  for _, k in ipairs { "functions", "lines", "calls", "jumps", "parts" } do
    local x, y = a[k], b[k]
    for i = 1, math.max(#x, #y) do
      if x[i] ~= y[i] then
        return ("%s (%d vs %d): first difference at %d:\n  %s\n  %s"):format(k, #x, #y, i, tostring(x[i]),
          tostring(y[i]))
      end
    end
  end
end

local tmp = {}
local function tmpname()
  local n = os.tmpname()
  tmp[#tmp + 1] = n
  return n
end
teardown(function() for _, n in ipairs(tmp) do os.remove(n) end end)

-- load -> write -> load; the second load must hold what the first held.
local function round_trip(path, opts, load_opts)
  local prof = assert(callgrind.load(path, load_opts))
  local out = tmpname()
  assert.is_true(prof:write(out, opts))
  local back, err = callgrind.load(out)
  assert(back, "the written file does not load: " .. tostring(err))
  local diff = difference(dump(prof), dump(back))
  assert(diff == nil, path .. " (written to " .. out .. "): " .. tostring(diff))
  return prof, back, out
end

describe("prof:write", function()
  describe("round trip over every fixture", function()
    for _, path in ipairs(find_files("spec/fixtures", "%.callgrind$")) do
      it("gives back what " .. path .. " holds, with names compressed", function()
        round_trip(path)
      end)
      it("gives back what " .. path .. " holds, with compress = false", function()
        round_trip(path, { compress = false })
      end)
    end
  end)

  describe("round trip over the shared corpus", function()
    local oracle = { "%.expected$", "%.exp$", "%.exp_map$", "%.exp_stacks$", "SOURCES%.md$" }
    for _, path in ipairs(find_files(CORPUS, ".")) do
      local skip = false
      for _, o in ipairs(oracle) do if path:match(o) then skip = true end end
      if not skip then
        it("gives back what " .. path:match("corpus/(.*)$") .. " holds", function()
          local load_opts = nil
          if not callgrind.load(path) then load_opts = { lenient = true } end
          if callgrind.load(path, load_opts) then
            round_trip(path, nil, load_opts)
            round_trip(path, { compress = false }, load_opts)
          end
        end)
      end
    end
  end)
end)
