-- The truth spec: every surface gives the model's exact numbers. It takes
-- every profile of spec/corpus/ that loads, fresh valgrind profiles (a
-- threaded program with recursion, a cycle and an inlined function: whole,
-- by thread, by dump, with --toggle-collect) and Lua profiles (recursion,
-- coroutines, with and without recorded stacks), and checks each surface
-- against the API: the command line's csv, json, top, hot and annotate
-- numbers, the HTML report's data (decoded by Python), folded stacks and pprof
-- (decoded here: self per function and the total), the flame graph's
-- total, DOT's percentages (inclusive over the total), a diff with itself
-- (zero everywhere, all matched), and a written file loaded back. Where a
-- profile has exact stacks (recorded, or the FILE.folded -lcallgrind.start
-- writes beside its file), pprof's cumulative cost of every function is the
-- one of those stacks, read here from prof:stacks and from the file's
-- text, and so is go tool pprof -top's. A new output or command joins this
-- file when it is written.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq
local lab = H.lab("spec/truth_spec.lua")

-- name, file, object: one function's key
local function key(fn) return fn.name .. "\0" .. tostring(fn.file) .. "\0" .. tostring(fn.object) end

-- Every profile the spec checks: { name, prof }.
local PROFILES = {}

local function add(name, prof) PROFILES[#PROFILES + 1] = { name, prof, index = #PROFILES + 1 } end

-- The profiles with exact stacks: { name, prof, stacks }, stacks an
-- array of { names (outermost first), cost } of the first event, read
-- apart from the library's trees (prof:stacks, or the folded file's text).
local EXACT = {}

-- The frames of a folded line, unescaped (\\, \;, \n, \r), and its count.
local function folded_line(line)
  local frames, n = line:match("^(.*) (%d+)$")
  local names, cur, i = {}, {}, 1
  while i <= #frames do
    local c = frames:sub(i, i)
    if c == "\\" then
      local e = frames:sub(i + 1, i + 1)
      cur[#cur + 1] = e == "n" and "\n" or e == "r" and "\r" or e
      i = i + 2
    elseif c == ";" then
      names[#names + 1] = table.concat(cur)
      cur = {}
      i = i + 1
    else
      cur[#cur + 1] = c
      i = i + 1
    end
  end
  names[#names + 1] = table.concat(cur)
  return names, math.tointeger(tonumber(n))
end

-- A Lua script run by lua5.4 -lcallgrind.start with CALLGRIND_STACKS=1 (its stack record):
-- two files, each with a function `step` (recursive in one, calling the
-- other file's in the other) and a `main chunk`, so that names are shared
-- and a caller (the main chunk) calls both functions of one name.
local SCRIPT_A = [[
local function step(n) if n <= 1 then return 1 end return step(n - 1) + step(n - 2) end
local b = dofile(DIR .. "/b.lua")
local t = 0
for i = 1, 12 do t = t + step(i % 9) + b.step(i, step) + b.run(i) end
print(t)
]]
local SCRIPT_B = [[
local function step(n, f) local s = 0 for i = 1, n * 3 do s = s + i % 7 end return s + (f and f(n % 6) or 0) end
local function run(n) if n <= 0 then return 0 end return step(n) + run(n - 1) end
return { step = step, run = run }
]]

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
  -- (its three files, as Lab:program builds it: another program may sit
  -- beside them)
  local exe = lab.dir .. "/prog"
  lab:run(("gcc -g -O1 -o %s -Ispec/fixtures/progs spec/fixtures/progs/cgmain.c spec/fixtures/progs/cgparity.c "
    .. "spec/fixtures/progs/cgthreads.c -lpthread"):format(shq(exe)), "gcc")
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
  for _, pp in ipairs({ PROFILES[#PROFILES - 1], PROFILES[#PROFILES] }) do
    local list = {}
    for frames, cost in pp[2]:stacks("Instr") do
      local names = {}
      for i, fn in ipairs(frames) do names[i] = fn.name end
      list[#list + 1] = { names, cost }
    end
    EXACT[#EXACT + 1] = { pp[1], pp[2], list }
  end
  -- a script's profile with its FILE.stacks (the same environment as
  -- this process: under make check-asan, its LD_PRELOAD too)
  H.write_file(lab.dir .. "/a.lua", "local DIR = " .. ("%q"):format(lab.dir) .. "\n" .. SCRIPT_A)
  H.write_file(lab.dir .. "/b.lua", SCRIPT_B)
  local out = lab.dir .. "/script.out"
  assert(os.execute(("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s CALLGRIND_OUT=%s CALLGRIND_STACKS=1 "
    .. "lua5.4 -lcallgrind.start %s > /dev/null"):format(shq(package.path), shq(package.cpath), shq(out),
    shq(lab.dir .. "/a.lua"))), "lua5.4 -lcallgrind.start")
  local prof = assert(callgrind.load(out))
  add("lua script, FILE.stacks", prof)
  local list = {}
  local text = assert(require("callgrind.export.stackrec").folded(out .. ".stacks"))
  for line in text:gmatch("[^\n]+") do list[#list + 1] = { folded_line(line) } end
  EXACT[#EXACT + 1] = { "lua script, FILE.stacks", prof, list }
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
    -- the leaf: after the last unescaped ';' (a backward walk over it
    -- alone; a pattern anchored at the end would retry every position)
    local last = frames
    for i = #frames, 1, -1 do
      if frames:byte(i) == 59 and frames:byte(i - 1) ~= 92 then last = frames:sub(i + 1); break end
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

local pprof = require "spec.support.pprof"
local pprof_flat = pprof.flat

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

local printable = require("callgrind.util").printable

-- Each profile written once, for the command line: its path and the copy
-- loaded back (the numbers the command line must give).
local ON_DISK = {}
local function on_disk(i)
  if not ON_DISK[i] then
    local path = lab.dir .. "/p" .. i .. ".cg"
    assert(PROFILES[i][2]:write(path))
    ON_DISK[i] = { path, assert(callgrind.load(path)) }
  end
  return ON_DISK[i][1], ON_DISK[i][2]
end

-- The rows of a multiset, sorted, for assert.are.same.
local function sorted(t) table.sort(t); return t end

-- The profiles of the five slowest surfaces (the command line's json and
-- the HTML report, each a Python per profile; folded stacks, pprof, the
-- flame graph and DOT, in this process): make test (about 100 s of them
-- on a 2-core machine with all) takes the fresh profiles and every tenth
-- file of the corpus under 100 KB; CALLGRIND_TRUTH=full (make check-long,
-- which CI runs) all of them. Every profile still goes through the other
-- surfaces in make test.
local FULL = os.getenv("CALLGRIND_TRUTH") == "full"
local function slow_set()
  if FULL then return PROFILES end
  local out, k = {}, 0
  for _, pp in ipairs(PROFILES) do
    local f = pp[1]:find("^spec/corpus/") and io.open(pp[1], "rb")
    if not f then
      out[#out + 1] = pp
    else
      local size = f:seek("end")
      f:close()
      if size < 100 * 1024 then
        k = k + 1
        if k % 10 == 1 then out[#out + 1] = pp end
      end
    end
  end
  return out
end

-- a share printed to two decimals is 100 * cost / total (0 of a total 0)
local function assert_share(pct, cost, total, where)
  local want = total == 0 and 0 or 100 * cost / total
  assert.is_true(math.abs(tonumber(pct) - want) <= 0.005 + 1e-9, where .. ": " .. pct .. "% vs " .. want)
end

describe("every surface", function()
  it("checks a good number of profiles: the corpus, valgrind's and the Lua profiler's", function()
    assert.is_true(#PROFILES >= 30, #PROFILES .. " profiles")
  end)

  it("the command line's csv gives the API's self and inclusive cost of every function", function()
    for i, pp in ipairs(PROFILES) do
      local name = pp[1]
      local path, back = on_disk(i)
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

  it("the command line's top, by self and by inclusive cost, gives every function the API's number", function()
    for i, pp in ipairs(PROFILES) do
      local path, back = on_disk(i)
      local ev = back.events[1]
      for _, kind in ipairs({ "self", "inclusive" }) do
        local out = H.run(("lua5.4 bin/callgrind-lua top %s 100000000 --event %s --raw%s"):format(shq(path), shq(ev),
          kind == "inclusive" and " --inclusive" or ""), "top " .. pp[1])
        local got, want, total = {}, {}, back:total(ev)
        for line in out:gmatch("[^\n]+") do
          local cost, pct, rest = line:match("^(%-?%d+)\t(%-?[%d.]+)\t(.*)$")
          assert.is_string(rest, pp[1] .. ": " .. line)
          assert_share(pct, tonumber(cost), total, pp[1] .. ": " .. line)
          got[#got + 1] = rest .. "\t" .. cost
        end
        for fn in back:functions() do
          want[#want + 1] = table.concat({ printable(fn.name), printable(fn.file or ""), printable(fn.object or ""),
            tostring(kind == "inclusive" and fn:inclusive(ev) or fn:self(ev)) }, "\t")
        end
        assert.are.same(sorted(want), sorted(got), pp[1] .. " " .. kind)
      end
    end
  end)

  it("the command line's hot gives a function's self cost and its calls' costs, line by line", function()
    for i, pp in ipairs(PROFILES) do
      local path, back = on_disk(i)
      local ev = back.events[1]
      local total = back:total(ev)
      -- the costliest function with a name the command line can take alone
      for _, fn in ipairs(back:top(5, ev, "self")) do
        local n = 0
        for g in back:functions() do if g.name == fn.name then n = n + 1 end end
        if n == 1 and not fn.name:find("^%-") and not fn.name:find("[%c:]") then
          local out = H.run(("lua5.4 bin/callgrind-lua hot %s %s --event %s --top 100000000 --raw"):format(shq(path),
            shq(fn.name), shq(ev)), "hot " .. pp[1])
          local self_sum, cost_sum, counts = 0, 0, 0
          for line in out:gmatch("[^\n]+") do
            local cost, pct, self_c, calls = line:match("^(%-?%d+)\t([%d.-]+)\t(%-?%d+)\t[^\t]*\t[^\t]*\t(.*)$")
            assert.is_string(calls, pp[1] .. ": " .. line)
            self_sum, cost_sum = self_sum + tonumber(self_c), cost_sum + tonumber(cost)
            assert_share(pct, tonumber(cost), total, pp[1] .. ": " .. line)
            for c in calls:gmatch("%((%d+)%)") do counts = counts + tonumber(c) end
          end
          local want_cost, want_counts = fn:self(ev), 0
          for call in fn:calls() do want_cost, want_counts = want_cost + call:cost(ev), want_counts + call.count end
          assert.are.equal(fn:self(ev), self_sum, pp[1] .. " " .. fn.name)
          assert.are.equal(want_cost, cost_sum, pp[1] .. " " .. fn.name)
          assert.are.equal(want_counts, counts, pp[1] .. " " .. fn.name)
          break
        end
      end
    end
  end)

  it("the command line's annotate lists the API's costliest self costs until the total is covered", function()
    for i, pp in ipairs(PROFILES) do
      local path, back = on_disk(i)
      local ev = back.events[1]
      local out = H.run(("lua5.4 bin/callgrind-lua annotate %s --event %s --threshold 100 --top 100000000")
        :format(shq(path), shq(ev)), "annotate " .. pp[1])
      local got, listing = {}, false
      for line in (out .. "\n"):gmatch("([^\n]*)\n") do
        if listing and line == "" then break end
        if listing and not line:find("^%s*self ") then got[#got + 1] = assert(math.tointeger(tonumber(
          (line:match("^%s*(%-?[%d,]+) %(") or ""):gsub(",", ""), 10)), pp[1] .. ": " .. line) end
        if line:find("^%-%- functions by self ") then listing = true end
      end
      local all = {}
      for fn in back:functions() do all[#all + 1] = fn:self(ev) end
      table.sort(all, function(a, b) return a > b end)
      assert.is_true(#got >= 1 or back:total(ev) == 0, pp[1])
      for k, v in ipairs(got) do assert.are.equal(all[k], v, pp[1] .. " row " .. k) end
    end
  end)

  it("the command line's json gives the API's self and inclusive cost of every function", function()
    for _, pp in ipairs(slow_set()) do
      local path, back = on_disk(pp.index)
      local ev = back.events[1]
      local json = lab.dir .. "/f.json"
      H.run(("lua5.4 bin/callgrind-lua csv %s --events %s --json -o %s"):format(shq(path), shq(ev), shq(json)),
        "json " .. pp[1])
      -- Python reads the JSON; every number row, in the order of the file
      local out = H.run(("python3 -c %s %s"):format(shq([[
import json, sys
for r in json.load(open(sys.argv[1], encoding="utf-8")):
    nums = [v for v in r.values() if isinstance(v, int)]
    print(" ".join(str(v) for v in nums[-2:]))]]), shq(json)), "python3")
      local got, want = {}, {}
      for line in out:gmatch("[^\n]+") do got[#got + 1] = line end
      for fn in back:functions() do want[#want + 1] = fn:self(ev) .. " " .. fn:inclusive(ev) end
      assert.are.same(sorted(want), sorted(got), pp[1])
    end
  end)

  it("the HTML report's data holds the API's self and inclusive costs, calls and flame totals", function()
    for _, pp in ipairs(slow_set()) do
      local _, back = on_disk(pp.index)
      local page = lab.dir .. "/r.html"
      assert(back:write_html(page))
      -- Python reads the page's data: per function its name (hex of its
      -- UTF-8, or * where a byte was replaced), costs per event and calls in
      local out = H.run(("python3 -c %s %s"):format(shq([[
import json, re, sys
d = json.loads(re.search(r'id="data">(.*?)</script>', open(sys.argv[1], encoding="utf-8").read(), re.S).group(1))
P = d["profile"]
print("left_out", P.get("left_out", d.get("left_out", 0)))
for e in P["flame"]:
    print("flame", e, P["flame"][e]["total"])
for f in P["fns"]:
    n = "*" if "�" in f["n"] else f["n"].encode("utf-8").hex()
    print(n, ",".join(map(str, f["s"])), ",".join(map(str, f["i"])), f["c"])]]), shq(page)), "python3")
      local want = {}
      local calls_in = {}
      for call in back:calls() do calls_in[call.callee.index] = (calls_in[call.callee.index] or 0) + call.count end
      for fn in back:functions() do
        local s, incl = {}, {}
        for _, ev in ipairs(back.events) do s[#s + 1] = fn:self(ev); incl[#incl + 1] = fn:inclusive(ev) end
        local hex = fn.name:gsub(".", function(c) return ("%02x"):format(c:byte()) end)
        want[table.concat({ hex, table.concat(s, ","), table.concat(incl, ","), calls_in[fn.index] or 0 }, " ")] = true
      end
      local rows, left_out = 0, nil
      for line in out:gmatch("[^\n]+") do
        local ev, t = line:match("^flame (.-) (%-?%d+)$")
        if line:find("^left_out ") then left_out = tonumber(line:match("%d+"))
        elseif ev then
          local positive = 0
          for fn in back:functions() do positive = positive + math.max(0, fn:self(ev)) end
          assert.is_true(tonumber(t) == back:total(ev) or tonumber(t) == positive, pp[1] .. " " .. line)
        else
          rows = rows + 1
          if not line:find("^%*") then assert.is_true(want[line] or false, pp[1] .. ": " .. line) end
        end
      end
      local n = 0
      for _ in back:functions() do n = n + 1 end
      assert.are.equal(n, rows + left_out, pp[1])
    end
  end)

  it("folded stacks keep every function's self cost and the total, at any threshold", function()
    for _, pp in ipairs(slow_set()) do
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
    for _, pp in ipairs(slow_set()) do
      local name, prof = pp[1], pp[2]
      local ev = prof.events[1]
      local path = lab.dir .. "/p.pb.gz"
      assert(prof:write_pprof(path, { events = { ev }, threshold = 0 }))
      local flat, total = pprof_flat(path)
      assert.are.equal(prof:total(ev), total, name)
      assert.are.same(nonzero(self_by_name(prof, ev)), nonzero(flat), name)
    end
  end)

  it("pprof's cumulative cost of every function is the exact stacks' where the profile has them", function()
    assert.are.equal(3, #EXACT)
    for _, ex in ipairs(EXACT) do
      local name, prof, list = ex[1], ex[2], ex[3]
      -- a function's cum: the sum of the costs of the stacks that name it
      -- at least once; the self by name: of the stacks it ends
      local want, flat_want, total = {}, {}, 0
      for _, st in ipairs(list) do
        local seen = {}
        for _, fname in ipairs(st[1]) do
          if not seen[fname] then seen[fname] = true; want[fname] = (want[fname] or 0) + st[2] end
        end
        local leaf = st[1][#st[1]]
        flat_want[leaf] = (flat_want[leaf] or 0) + st[2]
        total = total + st[2]
      end
      assert.are.equal(prof:total("Instr"), total, name)
      -- the default threshold: every exact stack
      local path = lab.dir .. "/x.pb.gz"
      assert(prof:write_pprof(path, { events = { "Instr" } }))
      assert.are.same(nonzero(want), nonzero(pprof.cum(path)), name)
      local flat, _, comments = pprof_flat(path)
      assert.are.same(nonzero(flat_want), nonzero(flat), name)
      assert.is_truthy(comments[2]:find("^Instr: .*%(exact%)$"), name .. ": " .. comments[2])
      -- and go tool pprof reads them so
      local rows, go_total, out = pprof.go_top(path)
      assert.are.equal(total, go_total, name .. "\n" .. out)
      for fname, c in pairs(want) do
        assert.are.same({ flat_want[fname] or 0, c }, rows[fname], name .. " " .. fname .. "\n" .. out)
      end
    end
  end)

  it("the flame graph's whole is the total, and DOT's percentages are inclusive over the total", function()
    for _, pp in ipairs(slow_set()) do
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
        assert_share(pct, incl[math.tointeger(tonumber(id))], total, name .. " f" .. id)
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
    for i, pp in ipairs(PROFILES) do
      local name, prof = pp[1], pp[2]
      local _, back = on_disk(i)
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
