-- The Lua profiler exact in every case (issue 24): finalizers, tail
-- recursion, whole stacks, several runs, functions only, names a person
-- would use, and names that could break the written text. Every count is
-- checked against one made here: a count hook (debug.sethook with count 1),
-- or a hand count.
local callgrind = require "callgrind"
local profiler = require "callgrind.profiler"
local helpers = require "spec.support.helpers"

-- busted runs spec files with an environment whose __index is Lua code:
-- the workloads use locals, so that only their own code runs
local collectgarbage, coroutine, ipairs, load, math, pcall, setmetatable, table =
  collectgarbage, coroutine, ipairs, load, math, pcall, setmetatable, table
local sethook, getinfo = debug.sethook, debug.getinfo

local lines_by_function = helpers.instr_lines

-- Instructions f runs, counted by a count hook (finalizers run with hooks
-- off, so it does not see theirs): the hook's count less what it counts
-- around an empty function (whose profile is its 1 RETURN0).
local function hook_count(f)
  local n = 0
  sethook(function() n = n + 1 end, "", 1)
  f()
  sethook()
  return n
end
local function hook_total(f)
  return hook_count(f) - (hook_count(function() end) - 1)
end

describe("callgrind.profile with finalizers", function()
  -- objects with __gc, a collection in the middle, and allocations after
  -- it that step the collector (whose finalizers then run on their lines)
  local function fin(o)
    local s = 0
    for i = 1, 20 do s = s + i end
    o.v = s
  end
  local mt = { __gc = fin }
  local function work()
    local keep = {}
    for i = 1, 3000 do
      local o = setmetatable({ i = i }, mt)
      if i % 100 == 0 then keep[#keep + 1] = o end
    end
    collectgarbage()
    for i = 1, 5000 do
      local o = setmetatable({ i, i }, mt)
      keep[0] = o
    end
    return #keep
  end

  it("gives the same profile as a count hook, function by function and line by line", function()
    local fast = callgrind.profile(work)
    local slow = callgrind.profile(work, { count_hook = true })
    assert.are.same(lines_by_function(slow), lines_by_function(fast))
    assert.are.equal(slow:total("Instr"), fast:total("Instr"))
    -- the finalizer's 8,000 runs (about 90 instructions each) are in neither
    assert.is_nil(fast:func("fin"))
    assert.are.equal(0, fast:func("collectgarbage", "[C]"):self("Instr"))
  end)

  it("counts what a count hook counts, finalizers left out", function()
    local prof = callgrind.profile(work)
    -- a fresh set of garbage for the hook's own run
    collectgarbage()
    local expected = hook_total(work)
    assert.are.equal(expected, prof:total("Instr"))
  end)
end)

describe("callgrind.profile with tail calls and recursion", function()
  local function loop(n)
    if n == 0 then return 0 end
    return loop(n - 1)
  end

  local function profile_text(f)
    profiler.start()
    f()
    return profiler.stop()
  end

  it("gives no call a cost above the total on a tail recursion 100,000 deep", function()
    local prof, text = profile_text(function() return loop(100000) end)
    local total = prof:total("Instr")
    local deep = function() return loop(100000) end
    assert.are.equal(hook_total(deep), callgrind.profile(deep):total("Instr"))
    for call in prof:calls() do
      assert.is_true(call:cost("Instr") <= total, call.caller.name .. " -> " .. call.callee.name)
    end
    local self_call
    for call in prof:func("loop"):calls() do
      if call.callee.name == "loop" then self_call = call end
    end
    assert.are.equal(100000, self_call.count)
    assert.are.equal(0, self_call:cost("Instr"))
    assert.is_true(prof:func("loop"):inclusive("Instr") <= total)

    -- callgrind_annotate --inclusive=yes shows nothing above 100%
    local lab = helpers.lab("spec/profiler_exact_spec.lua")
    lab:open()
    lab:need("callgrind_annotate")
    local path = lab.dir .. "/tail.out"
    helpers.write_file(path, text)
    local out = lab:run("callgrind_annotate --inclusive=yes " .. helpers.shq(path), "callgrind_annotate")
    lab:close()
    local seen = 0
    for pct in out:gmatch("%(%s*([%d%.]+)%%%)") do
      seen = seen + 1
      assert.is_true(tonumber(pct) <= 100.0, "callgrind_annotate shows " .. pct .. "%")
    end
    assert.is_true(seen >= 2)
  end)

  it("counts a recursive call's cost once: fn:inclusive is at most the total", function()
    local function fib(n)
      if n < 2 then return n end
      return fib(n - 1) + fib(n - 2)
    end
    local function gcd(a, b) if b == 0 then return a end return gcd(b, a % b) end
    local run = function() return fib(15) + gcd(1071, 462) end
    local prof = callgrind.profile(run)
    local total = prof:total("Instr")
    for call in prof:calls() do
      assert.is_true(call:cost("Instr") <= total, call.caller.name .. " -> " .. call.callee.name)
    end
    assert.are.equal(prof:func("fib"):self("Instr"), prof:func("fib"):inclusive("Instr"))
    assert.are.equal(total, prof:func("fib"):inclusive("Instr") + prof:func("gcd"):inclusive("Instr")
      + prof:func("run"):self("Instr"))
  end)
end)

describe("callgrind.profile{ stacks = true }", function()
  it("gives each distinct stack its own cost, as a count hook walking the stack sees it", function()
    local function b() end                       -- RETURN0: 1 instruction
    local function a() b() b() end
    local function c() a() end
    local run = function() a() c() b() end
    local prof = callgrind.profile(run, { stacks = true })
    local got = {}
    for frames, cost in prof:stacks("Instr") do
      local names = {}
      for i, f in ipairs(frames) do names[i] = f.name end
      got[table.concat(names, ";")] = cost
    end
    -- hand count: b is RETURN0 (1); a is GETUPVAL CALL GETUPVAL CALL RETURN0
    -- (5); c GETUPVAL CALL RETURN0 (3); run 3 x (GETUPVAL CALL) + RETURN0 (7)
    assert.are.same({
      ["run"] = 7, ["run;a"] = 5, ["run;a;b"] = 2, ["run;c"] = 3, ["run;c;a"] = 5,
      ["run;c;a;b"] = 2, ["run;b"] = 1,
    }, got)
    local sum = 0
    for _, cost in prof:stacks() do sum = sum + cost end
    assert.are.equal(prof:total("Instr"), sum)
  end)

  it("puts a coroutine's stack under the resume that runs it, and adds up to the total", function()
    local function produce(n) for i = 1, n do coroutine.yield(i) end end
    local body_line = getinfo(1, "l").currentline + 2
    local run = function()
      local co = coroutine.create(function() produce(2) end)
      local function first() return coroutine.resume(co) end
      local function second() return coroutine.resume(co) end
      first()
      second()
    end
    local prof = callgrind.profile(run, { stacks = true, time = true })
    local got, sum = {}, 0
    for frames, cost in prof:stacks("Instr") do
      local names = {}
      for i, f in ipairs(frames) do names[i] = f.name end
      got[#got + 1] = table.concat(names, ";")
      sum = sum + cost
    end
    table.sort(got)
    local body = "anonymous@profiler_exact_spec.lua:" .. body_line
    assert.are.same({
      "run", "run;first", "run;first;coroutine.resume;" .. body, "run;first;coroutine.resume;" .. body .. ";produce",
      "run;second", "run;second;coroutine.resume;" .. body .. ";produce",
    }, got)
    assert.are.equal(prof:total("Instr"), sum)
    local tsum = 0
    for _, cost in prof:stacks("Time") do tsum = tsum + cost end
    assert.are.equal(prof:total("Time"), tsum)
  end)

  -- Each distinct stack's Instr as a count hook sees it: at every
  -- instruction, the functions on the stack from run to the one running.
  local function hook_stacks(run, names)
    local costs = {}
    sethook(function()
      local up, level = {}, 2
      while true do
        local info = getinfo(level, "f")
        if not info then return end             -- outside run
        up[#up + 1] = info.func
        if info.func == run then break end
        level = level + 1
      end
      local path = {}
      for i = #up, 1, -1 do path[#path + 1] = names[up[i]] end
      local key = table.concat(path, ";")
      costs[key] = (costs[key] or 0) + 1
    end, "", 1)
    run()
    sethook()
    return costs
  end

  it("finds every stack's node when callers have more children than it caches, and many parents", function()
    -- fan calls m of the k functions in a rotating order: 6 (more than
    -- the 4 last children a node keeps, fewer than the 9 from which a
    -- node's children are indexed) or 10; under each of deep's frames, so
    -- every k has many parents
    local function k1(x) return x + 1 end
    local function k2(x) return x + 2 end
    local function k3(x) return x + 3 end
    local function k4(x) return x + 4 end
    local function k5(x) return x + 5 end
    local function k6(x) return x + 6 end
    local function k7(x) return x + 7 end
    local function k8(x) return x + 8 end
    local function k9(x) return x + 9 end
    local function k10(x) return x + 10 end
    local ks = { k1, k2, k3, k4, k5, k6, k7, k8, k9, k10 }
    local function fan(n, d, m)
      local s = 0
      for i = 1, n do s = s + ks[(i * 7 + d) % m + 1](i) end
      return s
    end
    local function deep(d, m)
      if d == 0 then local s = fan(30, d, m) return s end   -- no tail call
      return deep(d - 1, m) + fan(5 + d, d, m) + fan(3, d + 1, 6)
    end
    local function run()
      for d = 1, 7 do deep(d, d % 2 == 0 and 10 or 6) end
      fan(40, 3, 10)
    end
    local names = { [fan] = "fan", [deep] = "deep", [run] = "run" }
    for i, k in ipairs(ks) do names[k] = "k" .. i end
    local want = hook_stacks(run, names)
    for _, opts in ipairs { { stacks = true }, { stacks = true, time = true }, { stacks = true, count_hook = true } } do
      local prof = callgrind.profile(run, opts)
      local got, n = {}, 0
      for frames, cost in prof:stacks("Instr") do
        local path = {}
        for i, f in ipairs(frames) do path[i] = f.name end
        got[table.concat(path, ";")] = cost
        n = n + 1
      end
      assert.are.equal(103, n)
      assert.are.same(want, got)
    end
  end)

  it("keeps one frame for a function tail-calling itself", function()
    local function loop(n) if n == 0 then return 0 end return loop(n - 1) end
    local prof = callgrind.profile(function() return loop(1000) end, { stacks = true })
    local depth = 0
    for frames in prof:stacks() do depth = math.max(depth, #frames) end
    assert.are.equal(2, depth)
  end)

  it("gives prof:stacks when callgrind.profiler is required before callgrind", function()
    -- callgrind's lazy stub of Profile:stacks must not replace the method
    -- the profiler module put in place when it loaded first
    local out = helpers.fresh_lua([[
      local profiler = require "callgrind.profiler"
      local function leaf() local s = 0 for i = 1, 10 do s = s + i end return s end
      local prof = profiler.profile(function() leaf() leaf() end, { stacks = true })
      local sum, deepest = 0, 0
      for frames, cost in prof:stacks() do
        sum = sum + cost
        if #frames > deepest then deepest = #frames end
      end
      print(sum == prof:total("Instr"), deepest)
    ]])
    assert.are.equal("true\t2\n", out)
  end)

  it("raises for a profile without stacks, and for an unknown event", function()
    local prof = callgrind.profile(function() end)
    local ok, err = pcall(prof.stacks, prof)
    assert.is_false(ok)
    assert.matches("this profile has no stacks", err)
    prof = callgrind.profile(function() end, { stacks = true })
    ok, err = pcall(prof.stacks, prof, "Ir")
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'stacks' %(no event 'Ir'; events: Instr%)", err)
  end)
end)

describe("callgrind.profile{ lines = false }", function()
  it("counts the same instructions per function, all on the line defined", function()
    local function work(n)
      local t = {}
      for i = 1, n do t[i] = i * 2 end
      return #t
    end
    local run = function() return work(1000) + work(10) end
    local full = callgrind.profile(run)
    local fns = callgrind.profile(run, { lines = false })
    assert.are.equal(full:total("Instr"), fns:total("Instr"))
    assert.are.equal(full:func("work"):self("Instr"), fns:func("work"):self("Instr"))
    local lines = {}
    for l in fns:func("work"):lines() do lines[#lines + 1] = l.line end
    assert.are.same({ getinfo(work, "S").linedefined }, lines)
  end)
end)

describe("callgrind.profile{ runs = N }", function()
  it("runs fn N times and reports the smallest and largest total", function()
    local n = 0
    local run = function()
      n = n + 1
      local t = {}
      for i = 1, n * 10 do t[i] = i end
      return t
    end
    local prof, spread = callgrind.profile(run, { runs = 3 })
    assert.are.equal(3, n)
    assert.are.equal(3, #spread.totals)
    assert.are.equal(20 * 2, spread.totals[3] - spread.totals[1])  -- SETTABLE, FORLOOP per iteration
    assert.are.equal(spread.totals[1], spread.min)
    assert.are.equal(spread.totals[3], spread.max)
    assert.are.equal(spread.max, prof:total("Instr"))
  end)
end)

describe("the profiler's names", function()
  it("never names a function by a keyword or punctuation, and gives the name to its owner", function()
    local code = table.concat({
      "local handlers = {}",
      "handlers[\"(\"] = function() return 1 end",
      "handlers[\"for\"] = function() return 2 end",
      "local function inf() return pcall(function() return 3 end) end",
      "return function() return handlers[\"(\"]() + handlers[\"for\"]() + select(2, inf()) end",
    }, "\n")
    local run = assert(load(code))()
    local prof = callgrind.profile(run)
    local names = {}
    for fn in prof:functions() do
      if fn.file ~= "[C]" then names[#names + 1] = fn.name end
    end
    table.sort(names)
    local short = prof:func("inf").file:match("[^/]*$")
    assert.are.same({ "[\"(\"]", "[\"for\"]", "anonymous@" .. short .. ":4",
      "anonymous@" .. short .. ":5", "inf" }, names)
  end)
end)

describe("the profiler's written text", function()
  it("keeps hostile chunk names from injecting lines, with exactly the instructions that ran", function()
    local chunks = {
      assert(load("local x = 0 for i = 1, 3 do x = x + i end return x", "@x.lua\n1 1000000")),
      assert(load("return 1", "=# not a comment")),
      assert(load("return 2", "@  leading blanks")),
      assert(load("return 3", "@(3)")),
    }
    local run = function() for _, f in ipairs(chunks) do f() end end
    profiler.start()
    run()
    local prof, text = profiler.stop()
    assert.is_nil(text:find("\n1 1000000", 1, true))
    local per = {}
    for fn in prof:functions() do per[fn.file] = fn:self("Instr") end
    assert.are.equal(2, per["# not a comment"])   -- LOADI RETURN1
    assert.are.equal(2, per["(3)"])
    assert.are.equal(2, per["\\x20 leading blanks"])
    assert.are.equal(hook_total(chunks[1]), per["x.lua\\x0a1 1000000"])
    local reread = assert(callgrind.parse(text, "again"))
    assert.are.equal(prof:total("Instr"), reread:total("Instr"))
  end)

  it("writes same-named functions of two files as two functions, one id each", function()
    local a = assert(load("local function f() return 1 end return f", "@a.lua"))()
    local b = assert(load("local function f() return 1 + 1 end return f", "@b.lua"))()
    local run = function() for _, f in ipairs { a, b, b } do f() end end
    profiler.start()
    run()
    local prof, text = profiler.stop()
    local called = {}
    for call in prof:calls() do
      if call.callee.name == "f" then called[call.callee.file] = (called[call.callee.file] or 0) + call.count end
    end
    assert.are.same({ ["a.lua"] = 1, ["b.lua"] = 2 }, called)
    assert.are.equal(2 * 2, prof:func("f", "b.lua"):self("Instr"))  -- LOADI RETURN1, twice
    assert.are.equal(2, prof:func("f", "a.lua"):self("Instr"))
    -- each (file, name) its own id, defined once, used after as "(id)"
    local defined, f_ids = {}, {}
    for id, name in text:gmatch("\nc?fn=%((%d+)%) ([^\n]+)") do
      assert.is_nil(defined[id], "id " .. id .. " defined twice")
      defined[id] = name
      if name == "f" then f_ids[#f_ids + 1] = id end
    end
    assert.are.equal(2, #f_ids)
    assert.is_truthy(text:find("\ncfi=%(%d+%) a%.lua\ncfn=%(" .. f_ids[1] .. "%) f\n"))
    assert.is_truthy(text:find("\ncfi=%(%d+%) b%.lua\ncfn=%(" .. f_ids[2] .. "%) f\n"))
  end)
end)

describe("callgrind.profile's fast paths", function()
  -- The common case (Instr only) takes calls, tail calls, returns and
  -- thread switches without lua_getinfo, through a cache of call sites;
  -- count_hook = true takes every event the general way. The two must
  -- give the same functions, calls, lines and stacks on code that has
  -- every kind of call: tail calls (to itself and to others), several
  -- callees on one line, coroutines switching, metamethods, C functions
  -- calling Lua ones, and errors unwinding frames.
  local function work()
    local function leaf(x) return x + 1 end
    local function other(x) return leaf(x) * 2 end
    local function loop(n, acc) if n == 0 then return acc end return loop(n - 1, acc + 1) end
    local function hop(n) if n == 0 then return 0 end return other(n) end
    local function fails(n) if n % 3 == 0 then error("x") end return leaf(n) end
    local mt = { __index = function(_, k) return leaf(k) end, __add = function(a, b) return other(a.v + b.v) end }
    local function gen(n)
      return coroutine.wrap(function()
        for i = 1, n do coroutine.yield(leaf(i) + other(i)) end
      end)
    end
    local s = 0
    for i = 1, 60 do
      s = s + leaf(i) + other(i) + hop(i % 4) + loop(i % 7, 0)
      local t = setmetatable({ v = i }, mt)
      s = s + t[i] + (t + t)
      local ok = pcall(fails, i)
      if ok then s = s + 1 end
    end
    for v in gen(40) do s = s + v end
    local words = ("a b c d e f"):gsub("%a", function(c) return c .. leaf(#c) end)
    local arr = { 5, 3, 9, 1, 7, 2, 8 }
    table.sort(arr, function(a, b) return leaf(a) < leaf(b) end)
    return s + #words + arr[1]
  end

  local function dump(prof)
    local t = { lines = lines_by_function(prof), fns = {}, calls = {}, stacks = {} }
    for f in prof:functions() do
      t.fns[f.file .. ":" .. f.name] = { f:self("Instr"), f:inclusive("Instr") }
    end
    for c in prof:calls() do
      local k = c.caller.name .. " -> " .. c.callee.name .. " @" .. tostring(c.line)
      local was = t.calls[k] or { 0, 0 }
      t.calls[k] = { was[1] + c.count, was[2] + c:cost("Instr") }
    end
    for frames, cost in prof:stacks() do
      local names = {}
      for i, f in ipairs(frames) do names[i] = f.name end
      local k = table.concat(names, ";")
      t.stacks[k] = (t.stacks[k] or 0) + cost
    end
    return t
  end

  for _, lines in ipairs({ true, false }) do
    it("give what the general path gives" .. (lines and "" or " at function level"), function()
      work()
      local general = dump(callgrind.profile(work, { lines = lines, stacks = true, count_hook = true }))
      local fast = dump(callgrind.profile(work, { lines = lines, stacks = true }))
      assert.are.same(general, fast)
      -- loop tail-calls itself i % 7 times for i = 1..60: 8 * 21 + 1 + 2 + 3 + 4
      local self_calls = 0
      for k, v in pairs(fast.calls) do
        if k:find("^loop %-> loop ") then self_calls = self_calls + v[1] end
      end
      assert.are.equal(178, self_calls)
    end)
  end
end)

