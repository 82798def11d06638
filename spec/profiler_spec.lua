-- The Lua profiler (callgrind.profile, callgrind.profiler): every count is
-- checked against an independent one made here, in the spec: a count hook
-- (debug.sethook with count 1) that tallies the instructions of each Lua
-- function per line, or a counter the workload keeps itself.
local callgrind = require "callgrind"
local profiler = require "callgrind.profiler"
local helpers = require "spec.support.helpers"

-- busted runs spec files with an environment whose __index is Lua code:
-- the workloads use locals, so that only their own code runs
local coroutine, error, pcall, setmetatable, string, table, tostring =
  coroutine, error, pcall, setmetatable, string, table, tostring

-- Instructions per function value and line, counted by a count hook while
-- f runs: { [func] = { [line] = n } }.
local function hook_count(f)
  local per = {}
  local getinfo = debug.getinfo
  debug.sethook(function()
    local info = getinfo(2, "fl")
    local t = per[info.func]
    if not t then
      t = {}
      per[info.func] = t
    end
    t[info.currentline] = (t[info.currentline] or 0) + 1
  end, "", 1)
  f()
  debug.sethook()
  return per
end

local function sum(t)
  local n = 0
  for _, v in pairs(t or {}) do n = n + v end
  return n
end

-- fn:lines() as { [line] = Instr }
local function lines_of(fn)
  local t = {}
  for l in fn:lines() do t[l.line] = (t[l.line] or 0) + l:cost("Instr") end
  return t
end

local function calls_between(prof, caller, callee)
  local n, cost = 0, 0
  for c in prof:calls() do
    if c.caller.name == caller and c.callee.name == callee then
      n, cost = n + c.count, cost + c:cost("Instr")
    end
  end
  return n, cost
end

-- The invariants every profile here meets.
local function check_invariants(prof, root)
  local total, selfs = prof:total("Instr"), 0
  for fn in prof:functions() do
    local s, i = fn:self("Instr"), fn:inclusive("Instr")
    assert.is_true(s <= i, fn.name .. ": self " .. s .. " > inclusive " .. i)
    assert.is_true(i <= total, fn.name .. ": inclusive " .. i .. " > total " .. total)
    selfs = selfs + s
    local lsum = 0
    for l in fn:lines() do lsum = lsum + l:cost("Instr") end
    assert.are.equal(s, lsum)
  end
  assert.are.equal(total, selfs)
  if root then assert.are.equal(total, prof:func(root):inclusive("Instr")) end
end

-- Asserts that the profile's function `name` has, per line, exactly the
-- instructions the count hook saw for `func`.
local function same_lines(prof, name, per, func)
  local fn = assert(prof:func(name))
  assert.are.same(per[func], lines_of(fn))
  assert.are.equal(sum(per[func]), fn:self("Instr"))
end

describe("callgrind.profile", function()
  it("counts exactly the instructions a count hook counts, per line, and fib(20) makes 21,891 calls", function()
    local function fib(n)
      if n < 2 then return n end
      return fib(n - 1) + fib(n - 2)
    end
    local work = function() local r = fib(20); return r end
    local per = hook_count(work)
    local prof, r = callgrind.profile(work)
    assert.are.equal(6765, r)
    same_lines(prof, "fib", per, fib)
    same_lines(prof, "work", per, work)
    local outer = calls_between(prof, "work", "fib")
    local inner = calls_between(prof, "fib", "fib")
    assert.are.equal(1, outer)
    assert.are.equal(21890, inner)
    assert.are.equal(21891, outer + inner)
    assert.are.equal(prof:total("Instr"), sum(per[fib]) + sum(per[work]))
    check_invariants(prof, "work")
  end)

  it("counts mutual recursion exactly", function()
    local is_odd
    local function is_even(n)
      if n == 0 then return true end
      local r = is_odd(n - 1)
      return r
    end
    function is_odd(n)
      if n == 0 then return false end
      local r = is_even(n - 1)
      return r
    end
    local run = function() return (is_even(10)) end
    local per = hook_count(run)
    local prof, r = callgrind.profile(run)
    assert.is_true(r)
    -- is_even(10) -> is_odd(9) -> ... -> is_even(0): six is_even, five is_odd
    assert.are.equal(5, (calls_between(prof, "is_even", "is_odd")))
    assert.are.equal(5, (calls_between(prof, "is_odd", "is_even")))
    assert.are.equal(1, (calls_between(prof, "run", "is_even")))
    same_lines(prof, "is_even", per, is_even)
    same_lines(prof, "is_odd", per, is_odd)
    check_invariants(prof, "run")
  end)

  it("charges a tail-called function to the function that called it, and the stack does not drift", function()
    local function g(x) return x * 2 end
    local function f(x) return g(x + 1) end
    local run = function()
      local a = f(1)
      local b = f(2)
      return a + b
    end
    local per = hook_count(run)
    local prof, r = callgrind.profile(run)
    assert.are.equal(10, r)
    local n, cost = calls_between(prof, "f", "g")
    assert.are.equal(2, n)
    assert.are.equal(sum(per[g]), cost)
    n, cost = calls_between(prof, "run", "f")
    assert.are.equal(2, n)
    assert.are.equal(sum(per[f]) + sum(per[g]), cost)
    -- after each tail call returned, run's own lines are still run's
    same_lines(prof, "run", per, run)
    same_lines(prof, "f", per, f)
    check_invariants(prof, "run")
  end)

  it("follows 100,000 tail calls and a 100,000-deep recursion", function()
    local function loop(n)
      if n == 0 then return 0 end
      return loop(n - 1)
    end
    local function deep(n)
      if n == 0 then return 0 end
      return 1 + deep(n - 1)
    end
    local run = function() return loop(100000) + deep(100000) end
    local per = hook_count(run)
    local prof, r = callgrind.profile(run)
    assert.are.equal(100000, r)
    assert.are.equal(100000, (calls_between(prof, "loop", "loop")))
    assert.are.equal(100000, (calls_between(prof, "deep", "deep")))
    same_lines(prof, "loop", per, loop)
    same_lines(prof, "deep", per, deep)
    same_lines(prof, "run", per, run)
    check_invariants(prof, "run")
  end)

  it("pops the frames an error unwinds through pcall and counts on correctly", function()
    local function bad(t) return t.x.y end         -- indexes nil: a runtime error
    local function middle(t) local v = bad(t); return v end
    local function raise() error("no") end
    local run = function()
      local ok1 = pcall(middle, {})
      local ok2 = pcall(raise)
      local s = 0
      for i = 1, 10 do s = s + i end
      return ok1, ok2, s
    end
    local per = hook_count(run)
    local prof, ok1, ok2, s = callgrind.profile(run)
    assert.are.same({ false, false, 55 }, { ok1, ok2, s })
    same_lines(prof, "run", per, run)
    same_lines(prof, "middle", per, middle)
    same_lines(prof, "bad", per, bad)
    assert.are.equal(1, (calls_between(prof, "middle", "bad")))
    assert.are.equal(1, (calls_between(prof, "raise", "error")))
    local n, cost = calls_between(prof, "pcall", "middle")
    assert.are.equal(1, n)
    assert.are.equal(sum(per[middle]) + sum(per[bad]), cost)
    assert.are.equal(2, (calls_between(prof, "run", "pcall")))
    check_invariants(prof, "run")
  end)

  it("gives each coroutine its own stack: resume is a call that returns at yield", function()
    local function body(n)
      for i = 1, n do coroutine.yield(i * 10) end
      return "done"
    end
    local function dying() local x = 1; error("dies" .. x) end
    local run = function()
      local co = coroutine.create(body)
      local got = {}
      for _ = 1, 4 do
        local _, v = coroutine.resume(co, 3)
        got[#got + 1] = v
      end
      local gen = coroutine.wrap(function() coroutine.yield(1) end)
      gen()
      local dead = coroutine.create(dying)
      local ok = coroutine.resume(dead)
      local s = 0
      for i = 1, 5 do s = s + i end
      return table.concat(got, " "), ok, s
    end
    local per = hook_count(run)
    -- debug.sethook's hooks are per thread: count the coroutines' own
    -- instructions with a hook on each, resumed as run resumes them
    local function thread_count(f, times, ...)
      local co, n = coroutine.create(f), { lines = {}, all = 0 }
      debug.sethook(co, function()
        local info = debug.getinfo(2, "fl")
        n.all = n.all + 1
        if info.func == f then n.lines[info.currentline] = (n.lines[info.currentline] or 0) + 1 end
      end, "", 1)
      for _ = 1, times do coroutine.resume(co, ...) end
      return n.lines, n.all
    end
    local body_all
    per[body], body_all = thread_count(body, 4, 3)
    local prof, got, ok, s = callgrind.profile(run)
    assert.are.same({ "10 20 30 done", false, 15 }, { got, ok, s })
    same_lines(prof, "body", per, body)
    same_lines(prof, "run", per, run)
    -- the body runs in its coroutine, called by resume once, and yields 3 times
    assert.are.equal(1, (calls_between(prof, "coroutine.resume", "body")))
    assert.are.equal(3, (calls_between(prof, "body", "coroutine.yield")))
    local n, cost = 0, 0
    for c in prof:calls() do
      if c.caller.name == "run" and c.callee.name == "coroutine.resume" then
        n, cost = n + c.count, cost + c:cost("Instr")
      end
    end
    -- 4 resumes of body and 1 of the dying coroutine; what they ran is the
    -- bodies' instructions (the yields' own cost is not the resumer's)
    assert.are.equal(5, n)
    local dying_lines, dying_all = thread_count(dying, 1)
    same_lines(prof, "dying", { [dying] = dying_lines }, dying)
    assert.are.equal(1, (calls_between(prof, "dying", "error")))
    assert.are.equal(sum(per[body]), body_all)
    assert.are.equal(body_all + dying_all, cost)
    check_invariants(prof, "run")
  end)

  it("names C callees from the library tables and counts a sort comparator's calls", function()
    local t = {}
    for i = 1, 50 do t[i] = (i * 37) % 101 end
    local compared = 0
    local cmp = function(a, b) compared = compared + 1; return a > b end
    local run = function()
      table.sort(t, cmp)
      return string.format("%d:%d", t[1], t[50])
    end
    local per = hook_count(function() compared = 0; run() end)
    local expected_compares = compared
    for i = 1, 50 do t[i] = (i * 37) % 101 end
    compared = 0
    local prof, s = callgrind.profile(run)
    assert.are.equal("100:2", s)
    assert.are.equal(expected_compares, compared)
    local sort = assert(prof:func("table.sort"))
    assert.are.equal("[C]", sort.file)
    assert.are.equal(0, sort:self("Instr"))
    local n, cost = calls_between(prof, "table.sort", "cmp")
    assert.are.equal(compared, n)
    assert.are.equal(sum(per[cmp]), cost)
    assert.are.equal(sum(per[cmp]), sort:inclusive("Instr"))
    assert.are.equal(1, (calls_between(prof, "run", "string.format")))
    check_invariants(prof, "run")
  end)

  it("counts metamethods as calls of the functions they are", function()
    local mt = {
      __index = function(_, k) return k * 2 end,
      __add = function(a, b) return a.v + b.v end,
    }
    local a, b = setmetatable({ v = 1 }, mt), setmetatable({ v = 2 }, mt)
    local run = function()
      local s = 0
      for i = 1, 4 do s = s + a[i] end
      return s + (a + b)
    end
    local per = hook_count(run)
    local prof, r = callgrind.profile(run)
    assert.are.equal(23, r)
    assert.are.equal(4, (calls_between(prof, "run", "__index")))
    assert.are.equal(1, (calls_between(prof, "run", "__add")))
    same_lines(prof, "__index", per, mt.__index)
    same_lines(prof, "run", per, run)
    check_invariants(prof, "run")
  end)

  it("names a loaded chunk's file [string \"...\"] and a required module's functions module.name", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -m 700 " .. helpers.shq(dir)))
    local f = assert(io.open(dir .. "/cgprofmod.lua", "w"))
    f:write("local M = {}\nfunction M.twice(x)\n  return x * 2\nend\nreturn M\n")
    f:close()
    local old_path = package.path
    package.path = dir .. "/?.lua;" .. package.path
    local chunk = assert(load("local x = 20\nreturn x + 1"))
    local prof, r1, r2 = callgrind.profile(function()
      local m = require "cgprofmod"
      return chunk(), m.twice(4)
    end)
    package.path = old_path
    package.loaded.cgprofmod = nil
    os.execute("rm -rf " .. helpers.shq(dir))
    assert.are.same({ 21, 8 }, { r1, r2 })
    local main = assert(prof:func("main chunk", '[string "local x = 20..."]'))
    -- LOADI; ADDI (which jumps over its MMBINI fallback); RETURN. The
    -- chunk's VARARGPREP runs before hooks start in a vararg function.
    assert.are.same({ [1] = 1, [2] = 2 }, lines_of(main))
    local twice = assert(prof:func("cgprofmod.twice"))
    assert.are.equal(dir .. "/cgprofmod.lua", twice.file)
    assert.are.same({ [3] = 2 }, lines_of(twice))  -- MULK (jumps over MMBINK), RETURN1
    -- the module's main chunk is named after its module
    assert.is_truthy(prof:func("main chunk (cgprofmod)", dir .. "/cgprofmod.lua"))
    assert.are.equal(1, (calls_between(prof, "require", "main chunk (cgprofmod)")))
  end)

  it("names a required module's main chunk after its module in every output; the script's stays \"main chunk\"",
    function()
      local dir = os.tmpname()
      os.remove(dir)
      assert(os.execute("mkdir -m 700 " .. helpers.shq(dir .. "/cgpkg") .. " -p"))
      local function put(path, text)
        local f = assert(io.open(dir .. "/" .. path, "w"))
        f:write(text)
        f:close()
      end
      -- a module requiring another (dotted: cgpkg/sub.lua), and a file run
      -- with dofile (no module)
      put("cgtop.lua", "local sub = require 'cgpkg.sub'\nlocal n = 0\nfor i = 1, 50 do n = n + sub.f(i) end\n"
        .. "return { n = n }\n")
      put("cgpkg/sub.lua", "local t = {}\nfor i = 1, 30 do t[i] = i end\nreturn { f = function(x) return x + 1 end }\n")
      put("cgplain.lua", "local s = 0\nfor i = 1, 10 do s = s + i end\nreturn s\n")
      local old_path = package.path
      package.path = dir .. "/?.lua;" .. package.path
      local prof, top, plain = callgrind.profile(function()
        return require "cgtop", dofile(dir .. "/cgplain.lua")
      end)
      package.path = old_path
      package.loaded.cgtop, package.loaded["cgpkg.sub"] = nil, nil
      assert.are.same({ 1325, 55 }, { top.n, plain })
      local want = { ["main chunk (cgtop)"] = dir .. "/cgtop.lua", ["main chunk (cgpkg.sub)"] = dir .. "/cgpkg/sub.lua",
        ["main chunk"] = dir .. "/cgplain.lua" }
      for name, file in pairs(want) do
        assert.is_truthy(prof:func(name, file), name)
      end
      assert.are.equal(1, (calls_between(prof, "main chunk (cgtop)", "require")))
      assert.are.equal(1, (calls_between(prof, "require", "main chunk (cgpkg.sub)")))
      -- the callgrind text, the folded stacks, the flame graph, pprof and
      -- the HTML report all say so
      local out = dir .. "/p.out"
      assert.is_true(prof:write(out))
      local text = helpers.read_file(out)
      local folded, svg = prof:folded(), prof:flamegraph()
      assert.is_true(prof:write_pprof(dir .. "/p.pb.gz"))
      local flat = require("spec.support.pprof").flat(dir .. "/p.pb.gz")
      local html = prof:html()
      for _, name in ipairs({ "main chunk (cgtop)", "main chunk (cgpkg.sub)" }) do
        assert.is_truthy(text:find(name .. "\n", 1, true), name)
        assert.is_truthy(folded:find(name, 1, true), name)
        assert.is_truthy(svg:find("<title>" .. name .. "\n", 1, true), name)
        assert.is_truthy(flat[name], name)
        assert.is_truthy(callgrind.parse(text, "back"):func(name, want[name]), name)
        assert.is_truthy(html:find('"n":"' .. name .. '"', 1, true), name)
      end
      os.execute("rm -rf " .. helpers.shq(dir))
    end)

  it("names a module's main chunk found through a template with two \"?\" and through DIR/?/init.lua", function()
    -- the writer matches a file against package.path's templates; one
    -- with several "?" makes it search every loaded name instead
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. helpers.shq(dir .. "/cgtwo") .. " " .. helpers.shq(dir .. "/cgdir")))
    helpers.write_file(dir .. "/cgtwo/cgtwo.lua", "return { n = 2 }\n")
    helpers.write_file(dir .. "/cgdir/init.lua", "return { n = 3 }\n")
    local old_path = package.path
    package.path = dir .. "/?/?.lua;" .. dir .. "/?/init.lua;" .. package.path
    local prof, a, b = callgrind.profile(function() return require "cgtwo", require "cgdir" end)
    package.path = old_path
    package.loaded.cgtwo, package.loaded.cgdir = nil, nil
    os.execute("rm -rf " .. helpers.shq(dir))
    assert.are.same({ 2, 3 }, { a.n, b.n })
    assert.is_truthy(prof:func("main chunk (cgtwo)", dir .. "/cgtwo/cgtwo.lua"))
    assert.is_truthy(prof:func("main chunk (cgdir)", dir .. "/cgdir/init.lua"))
  end)

  it("names functions as their definitions do, with :LINE where two share a name", function()
    local Parser = {}
    Parser.__index = Parser
    function Parser:next() self.pos = self.pos + 1; return self.pos end
    local function parse(p) return p:next() + p:next() end
    local a = { f = function() return 1 end }
    local b = { f = function() return 2 end }
    local prof = callgrind.profile(function()
      return parse(setmetatable({ pos = 0 }, Parser)) + a.f() + b.f()
    end)
    assert.are.equal(2, (calls_between(prof, "parse", "Parser:next")))
    local line = debug.getinfo(1, "l").currentline
    assert.is_truthy(prof:func("f:" .. (line - 6)))
    assert.is_truthy(prof:func("f:" .. (line - 5)))
    assert.is_truthy(prof:func("setmetatable", "[C]"))
  end)

  it("reads the interpreter's own counter and CallInfo here (the fast ways, checked at start)", function()
    callgrind.profile(function() end)
    local counter, ci_keys = require("callgrind.core").prof_mode()
    assert.are.equal("counter", counter)
    assert.is_true(ci_keys)
  end)

  it("gives the same counts with a count hook (count_hook = true)", function()
    local function work(n)
      local t = {}
      for i = 1, n do t[#t + 1] = tostring(i) end
      return table.concat(t)
    end
    local run = function()
      pcall(error, "x")
      local gen = coroutine.wrap(function() coroutine.yield(#work(50)) end)
      return #work(200) + gen()
    end
    local fast = callgrind.profile(run)
    local slow = callgrind.profile(run, { count_hook = true })
    for fn in fast:functions() do
      local other = assert(slow:func(fn.name, fn.file))
      assert.are.same(lines_of(fn), lines_of(other))
      assert.are.same(fn:inclusive("Instr"), other:inclusive("Instr"))
    end
    assert.are.equal(fast:total("Instr"), slow:total("Instr"))
  end)

  it("adds Time and Alloc when asked, each meeting the invariants", function()
    local run = function()
      local t = {}
      for i = 1, 1000 do t[i] = ("x"):rep(i % 50) end
      return #t
    end
    local prof = callgrind.profile(run, { time = true, alloc = true })
    assert.are.same({ "Instr", "Time", "Alloc" }, prof.events)
    assert.are.equal("Lua VM instructions", prof:event_info("Instr").long_name)
    local fn = prof:func("run")
    assert.is_true(fn:self("Time") > 0)
    assert.is_true(fn:self("Alloc") >= 1000 * 8)   -- the array part alone
    for _, ev in ipairs { "Time", "Alloc" } do
      local selfs = 0
      for f in prof:functions() do selfs = selfs + f:self(ev) end
      assert.are.equal(prof:total(ev), selfs)
    end
  end)

  it("keeps each call's Time and Alloc with it over 300 call sites, and the Instr of a run without them", function()
    -- 300 leaf functions, each called once from its own line and
    -- allocating its own amount: a leaf's call includes exactly its self
    local src = {}
    for i = 1, 300 do
      src[#src + 1] = ("function f%d() local t = {} for k = 1, %d do t[k] = k end return t end")
        :format(i, i)
    end
    for i = 1, 300 do src[#src + 1] = ("f%d()"):format(i) end
    local run = assert(load(table.concat(src, "\n"), "=leaves", "t", {}))
    local wide = callgrind.profile(run, { time = true, alloc = true })
    local plain = callgrind.profile(run)
    local alloc = {}
    for c in wide:calls() do
      local i = tonumber(c.callee.name:match("^f(%d+)$"))
      if i then
        assert.are.equal(1, c.count)
        assert.are.equal(c.callee:self("Alloc"), c:cost("Alloc"))
        assert.are.equal(c.callee:inclusive("Instr"), c:cost("Instr"))
        assert.is_true(c:cost("Time") > 0)
        alloc[i] = c:cost("Alloc")
      end
    end
    for i = 1, 300 do
      local name = "f" .. i
      assert.are.same(lines_of(plain:func(name)), lines_of(wide:func(name)))
      local n, instr = calls_between(plain, "main chunk", name)
      assert.are.equal(1, n)
      assert.are.same({ n, instr }, { calls_between(wide, "main chunk", name) })
    end
    -- a table of 300 integers takes more than one of 10
    assert.is_true(alloc[300] > alloc[10] and alloc[10] > 0)
  end)

  it("stops on an error in fn and raises it again", function()
    local e = {}
    local ok, err = pcall(callgrind.profile, function() error(e) end)
    assert.is_false(ok)
    assert.are.equal(e, err)
    assert.is_false(profiler.running())
    assert.is_nil(debug.gethook())
  end)

  it("refuses to start over a hook someone else set (the hook engine), and to run twice", function()
    debug.sethook(function() end, "l")
    local ok, err = pcall(callgrind.profile, function() end, { engine = "hook" })
    debug.sethook()
    assert.is_false(ok)
    assert.are.equal("callgrind.profiler.profile: a debug hook is already set (debug.sethook); "
      .. "the profiler does not chain hooks: remove it first", err:gsub("^[^:]*:%d+: ", ""))
    profiler.start()
    ok, err = pcall(profiler.start)
    profiler.stop()
    assert.is_false(ok)
    assert.are.equal("callgrind.profiler.start: the profiler is already running", err:gsub("^[^:]*:%d+: ", ""))
    -- until_exit's error names its caller's line, as start's does (its
    -- work is callgrind.profiler.exit.arm, which callgrind.start calls)
    local line = debug.getinfo(1, "l").currentline + 3
    profiler.start()
    ok, err = pcall(function()
      local keep = profiler.until_exit()
      return keep
    end)
    profiler.stop()
    assert.is_false(ok)
    assert.are.equal("spec/profiler_spec.lua:" .. line .. ": callgrind.profiler.until_exit: "
      .. "the profiler is already running", err)
  end)

  it("raises when its hook was replaced while profiling (the hook engine)", function()
    local ok, err = pcall(callgrind.profile, function() debug.sethook() end, { engine = "hook" })
    assert.is_false(ok)
    assert.are.equal("the profiler's hook was replaced while profiling (debug.sethook): no profile",
      err:gsub("^[^:]*:%d+: ", ""))
    assert.is_false(profiler.running())
  end)

  it("raises on misuse, naming the argument", function()
    local cases = {
      { function() callgrind.profile(42) end, "bad argument #1 to 'profile' (function expected, got 42)" },
      { function() callgrind.profile(print, 1) end, "bad argument #2 to 'profile' (table expected, got 1)" },
      { function() callgrind.profile(print, { tim = true }) end,
        "bad argument #2 to 'profile' (unknown option 'tim'; options: alloc, count_hook, engine, lines, runs, "
          .. "stacks, time)" },
      { function() profiler.start { time = 1 } end,
        "bad argument #1 to 'start' (option 'time' must be boolean, got 1)" },
      { function() callgrind.profile(print, { runs = 0 }) end,
        "bad argument #2 to 'profile' (option 'runs' must be at least 1)" },
      { function() profiler.stop() end, "callgrind.profiler.stop: the profiler is not running" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(c[1])
      assert.is_false(ok)
      assert.are.equal(c[2], (err:gsub("^[^:]*:%d+: ", "")))
    end
  end)
end)

describe("callgrind.profiler.start and stop", function()
  it("profile what runs between them, with the calling functions on the stack", function()
    local function step(x) return x + 1 end
    local per
    local function outer()
      profiler.start()
      local s = 0
      for i = 1, 5 do s = step(s) + i end
      local prof = profiler.stop()
      return prof, s
    end
    local prof, s = outer()
    assert.are.equal(20, s)
    per = hook_count(function() for i = 1, 5 do step(i) end end)
    assert.are.equal(5, (calls_between(prof, "outer", "step")))
    assert.are.equal(sum(per[step]), prof:func("step"):self("Instr"))
    assert.is_nil(prof:func("callgrind.profiler.stop"))
    assert.is_nil(prof:func("stop"))
    check_invariants(prof)
  end)

  it("returns the callgrind text, which loads back to the same model", function()
    local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
    profiler.start()
    fib(12)
    local prof, text = profiler.stop()
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write(text)
    f:close()
    local back = assert(callgrind.load(path))
    os.remove(path)
    assert.are.same(prof:totals(), back:totals())
    local n = 0
    for fn in prof:functions() do
      local other = assert(back:func(fn.name, fn.file))
      assert.are.same(fn:self(), other:self())
      assert.are.same(fn:inclusive(), other:inclusive())
      assert.are.same(lines_of(fn), lines_of(other))
      n = n + 1
    end
    local m = 0
    for _ in back:functions() do m = m + 1 end
    assert.are.equal(n, m)
    local calls = {}
    for c in prof:calls() do calls[#calls + 1] = { c.caller.name, c.callee.name, c.count, c:cost("Instr"), c.line } end
    local calls_back = {}
    for c in back:calls() do
      calls_back[#calls_back + 1] = { c.caller.name, c.callee.name, c.count, c:cost("Instr"), c.line }
    end
    assert.are.same(calls, calls_back)
  end)
end)
