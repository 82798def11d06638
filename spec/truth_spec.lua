-- The truth spec: every surface gives the model's exact numbers. It takes
-- every profile of spec/corpus/ that loads, fresh valgrind profiles (a
-- threaded program with recursion, a cycle and an inlined function: whole,
-- by thread, by dump, with --toggle-collect) and Lua profiles (recursion,
-- coroutines, with and without recorded stacks), and checks each surface
-- against the API: the command line's csv numbers, folded stacks and pprof
-- (decoded here: self per function and the total), the flame graph's
-- total, DOT's percentages (inclusive over the total), a diff with itself
-- (zero everywhere, all matched), and a written file loaded back. A new
-- output or command joins this file when it is written.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq
local lab = H.lab("spec/truth_spec.lua")

-- name, file, object: one function's key
local function key(fn) return fn.name .. "\0" .. tostring(fn.file) .. "\0" .. tostring(fn.object) end

-- Every profile the spec checks: { name, prof }.
local PROFILES = {}

local function add(name, prof) PROFILES[#PROFILES + 1] = { name, prof } end

setup(function()
  lab:open()
  lab:need_tools()
  -- the corpus: every file that loads as it is
  local p = assert(io.popen("find spec/corpus -type f ! -name '*.md' | sort"))
  for path in p:lines() do
    local prof = callgrind.load(path)
    if prof and prof.events[1] and prof:total(1) ~= 0 then add(path, prof) end
  end
  p:close()
  -- fresh valgrind profiles of the fixture program
  local exe = lab.dir .. "/prog"
  lab:run(("gcc -g -O1 -o %s -Ispec/fixtures/progs spec/fixtures/progs/*.c -lpthread"):format(shq(exe)), "gcc")
  local function vg(name, opts)
    local out = lab.dir .. "/" .. name .. ".out"
    lab:run(("valgrind --tool=callgrind %s --callgrind-out-file=%s %s 12 > /dev/null 2>&1"):format(opts, shq(out),
      shq(exe)), "valgrind " .. name)
    add("valgrind " .. name, assert(callgrind.load(callgrind.files(out))))
  end
  vg("whole", "")
  vg("threads", "--separate-threads=yes")
  vg("dumps", "--dump-instr=yes --collect-jumps=yes --dump-every-bb=20000")
  vg("toggle", "--toggle-collect=fib")
  -- Lua profiles
  local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
  local function co()
    local c = coroutine.wrap(function() for i = 1, 20 do coroutine.yield(fib(i % 8)) end end)
    local s = 0
    for _ = 1, 20 do s = s + c() end
    return s
  end
  add("lua recursion", callgrind.profile(function() return fib(15) end))
  add("lua coroutines", callgrind.profile(co))
  add("lua recursion, stacks", callgrind.profile(function() return fib(15) end, { stacks = true }))
  add("lua coroutines, stacks", callgrind.profile(co, { stacks = true }))
end)
teardown(function() lab:close() end)

-- The self cost of each function in ev, by key, and the total.
local function selfs(prof, ev)
  local t = {}
  for fn in prof:functions() do t[key(fn)] = (t[key(fn)] or 0) + fn:self(ev) end
  return t
end

-- Folded text -> the leaf cost of each frame name, and the total.
local function folded_leaves(text)
  local leaf, total = {}, 0
  for line in text:gmatch("[^\n]+") do
    local frames, n = line:match("^(.*) (%d+)$")
    n = math.tointeger(tonumber(n))
    local last = frames:match("([^;]*)$")
    -- a name with an escaped ';' ends after the last unescaped one
    for i = #frames, 1, -1 do
      if frames:sub(i, i) == ";" and frames:sub(i - 1, i - 1) ~= "\\" then last = frames:sub(i + 1); break end
      if i == 1 then last = frames end
    end
    leaf[last] = (leaf[last] or 0) + n
    total = total + n
  end
  return leaf, total
end

-- The escaped name prof:folded gives a function.
local function folded_name(name)
  return (name:gsub("[\\;\n\r]", { ["\\"] = "\\\\", [";"] = "\\;", ["\n"] = "\\n", ["\r"] = "\\r" }))
end

local pprof_flat = require("spec.support.pprof").flat

-- The self cost by name (functions of one name summed: pprof and folded
-- frames are by name).
local function self_by_name(prof, ev)
  local t = {}
  for fn in prof:functions() do t[fn.name] = (t[fn.name] or 0) + fn:self(ev) end
  return t
end

local function nonzero(t)
  local out = {}
  for k, v in pairs(t) do if v ~= 0 then out[k] = v end end
  return out
end

describe("every surface", function()
  it("checks a good number of profiles: the corpus, valgrind's and the Lua profiler's", function()
    assert.is_true(#PROFILES >= 30, #PROFILES .. " profiles")
  end)

  it("the command line's csv gives the API's self and inclusive cost of every function", function()
    for _, pp in ipairs(PROFILES) do
      local name, prof = pp[1], pp[2]
      local path = lab.dir .. "/csv.cg"
      assert(prof:write(path))
      local back = assert(callgrind.load(path))
      local ev = back.events[1]
      local out = H.run("lua5.4 bin/callgrind-lua csv " .. shq(path) .. " --events " .. shq(ev), "csv " .. name)
      local rows = 0
      local want = {}
      for fn in back:functions() do want[fn.name .. "|" .. fn:self(ev) .. "|" .. fn:inclusive(ev)] = true end
      for line in out:gmatch("[^\r\n]+") do
        local self_c, incl = line:match(",(%-?%d+),(%-?%d+)$")
        if self_c and rows > 0 then
          local fname = line:match('^"(.-)",') or line:match("^([^,]*),")
          fname = fname:gsub('""', '"'):gsub("^'", "")
          assert.is_true(want[fname .. "|" .. self_c .. "|" .. incl] or false, name .. ": " .. line)
        end
        rows = rows + 1
      end
      local n = 0
      for _ in back:functions() do n = n + 1 end
      assert.are.equal(n + 1, rows, name)
    end
  end)

  it("folded stacks keep every function's self cost and the total, at any threshold", function()
    for _, pp in ipairs(PROFILES) do
      local name, prof = pp[1], pp[2]
      for _, ev in ipairs(prof.events) do
        -- a folded count cannot be negative: a function of negative self
        -- cost (memory freed, say) has no line, and the lines add up to
        -- the total of the others (pprof keeps them: below)
        for _, threshold in ipairs({ 0, 1e-4 }) do
          -- (xapian's Ir at threshold 0 is 300 MB of text: past the default max_bytes)
          local leaf, total = folded_leaves(assert(prof:folded(ev, { threshold = threshold, max_bytes = 1 << 34 })))
          local want, positive, negative = {}, 0, 0
          for n, v in pairs(nonzero(self_by_name(prof, ev))) do
            if v > 0 then want[folded_name(n)] = v; positive = positive + v else negative = negative + v end
          end
          assert.are.equal(positive, total, name .. " " .. ev)
          if negative == 0 then assert.are.equal(prof:total(ev), total, name .. " " .. ev) end
          assert.are.same(want, nonzero(leaf), name .. " " .. ev)
        end
      end
    end
  end)

  it("pprof keeps every function's self cost (flat) and the total", function()
    for _, pp in ipairs(PROFILES) do
      local name, prof = pp[1], pp[2]
      local ev = prof.events[1]
      local path = lab.dir .. "/p.pb.gz"
      assert(prof:write_pprof(path, { events = { ev }, threshold = 0 }))
      local flat, total = pprof_flat(path)
      assert.are.equal(prof:total(ev), total, name)
      assert.are.same(nonzero(self_by_name(prof, ev)), nonzero(flat), name)
    end
  end)

  it("the flame graph's whole is the total, and DOT's percentages are inclusive over the total", function()
    for _, pp in ipairs(PROFILES) do
      local name, prof = pp[1], pp[2]
      local ev = prof.events[1]
      local total = prof:total(ev)
      local svg = prof:flamegraph(ev, { threshold = 0 })
      assert.is_truthy(svg:find("<title>all\n" .. require("callgrind").format.commas(total) .. " " .. ev, 1, true),
        name)
      local dot = prof:dot(ev, { node_threshold = 0, edge_threshold = 0 })
      local incl = {}
      for fn in prof:functions() do incl[fn.index] = fn:inclusive(ev) end
      for id, pct in dot:gmatch('\n  f(%d+) %[label="[^"]-\\n(%d+%.%d%d)%%') do
        local want = total == 0 and 0 or 100 * incl[math.tointeger(tonumber(id))] / total
        assert.is_true(math.abs(tonumber(pct) - want) <= 0.005 + 1e-9,
          name .. " f" .. id .. " " .. pct .. " vs " .. want)
      end
    end
  end)

  it("a diff of a profile with itself is zero everywhere and all matched", function()
    for _, pp in ipairs(PROFILES) do
      local name, prof = pp[1], pp[2]
      local d = callgrind.diff(prof, prof)
      local m = d:matched()
      assert.are.equal(1, m.old_share, name)
      assert.are.equal(1, m.new_share, name)
      for _, r in ipairs(d:movers(prof.events[1])) do assert.are.equal(0, r.delta, name .. " " .. r.name) end
      assert.are.same({}, d:warnings())
    end
  end)

  it("a written file loads back with the same numbers", function()
    for _, pp in ipairs(PROFILES) do
      local name, prof = pp[1], pp[2]
      local path = lab.dir .. "/w.cg"
      assert(prof:write(path))
      local back = assert(callgrind.load(path))
      -- whole and unchanged: no warning the original did not have (a
      -- summary: or totals: line that did not match stays as written)
      local lossy = require("callgrind.check.limits").lossy_warnings
      assert.is_true(#lossy(back) <= #lossy(prof), name)
      assert.are.same({}, back:warnings("truncated"), name)
      assert.are.same({}, back:warnings("changed"), name)
      for _, ev in ipairs(prof.events) do
        assert.are.equal(prof:total(ev), back:total(ev), name .. " " .. ev)
        assert.are.same(selfs(prof, ev), selfs(back, ev), name .. " " .. ev)
      end
    end
  end)
end)
