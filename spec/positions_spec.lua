-- Relative positions after calls=, jump= and jcnd= as valgrind writes
-- them (callgrind/dump.c: fprint_jcc prints a call's or jump's target and
-- site against `last`, the position of the last regular cost line, and
-- only fprint_fcost moves `last`): the reader's default rule, the
-- KCachegrind reading as an option, and the files this library writes,
-- which give the same numbers under both. docs/format.md, "Calls and
-- jumps". The expected numbers are worked out by hand in the comments.

local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local function collect(it)
  local t = {}
  for x in it do t[#t + 1] = x end
  return t
end

local function lines_of(prof)
  local t = {}
  for l in prof:lines() do t[#t + 1] = { l.fn.name, l.line, l:cost(1) } end
  return t
end

local function calls_of(prof)
  local t = {}
  for c in prof:calls() do
    t[#t + 1] = { c.caller.name, c.callee.name, c.count, c.line, c.target_line, c:cost(1) }
  end
  return t
end

-- What a dump of callgrind looks like where a call was still running when
-- the part before was dumped: the call site (line 3) has no cost line of
-- its own, so the site is written against the last regular line (100).
local DUMP_PART = [[
# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
fl=(1) a.c
fn=(1) main
100 5
cfn=(2) f
calls=1 -50
-97 40
+2 1
fn=(2)
-50 40
totals: 46
]]

describe("relative positions after calls=", function()
  it("count from the last regular cost line and leave it the base, as valgrind writes them", function()
    local prof = assert(callgrind.parse(DUMP_PART, "dump.out"))
    -- main: 100 (5); the call's target 100-50 = 50, its site 100-97 = 3;
    -- then +2 from 100 again: 102 (1); f's -50 from 102: 52 (40)
    assert.are.same({ { "main", 100, 5 }, { "main", 102, 1 }, { "f", 52, 40 } }, lines_of(prof))
    assert.are.same({ { "main", "f", 1, 3, 50, 40 } }, calls_of(prof))
    assert.are.equal(46, prof:total("Ir"))
    assert.are.same({}, prof:warnings())
  end)

  it("are read from the call site with position_rule = \"kcachegrind\", which fails on this file", function()
    -- read KCachegrind's way, +2 counts from the site (3): line 5, and
    -- f's -50 from 5 goes below 0, as pigz's dumps did
    local prof, err, kind = callgrind.parse(DUMP_PART, "dump.out", { position_rule = "kcachegrind" })
    assert.is_nil(prof)
    assert.are.equal("dump.out:14: position 'line' '-50' goes below 0", err)
    assert.are.equal("format", kind)
    local fixed = DUMP_PART:gsub("\nfn=%(2%)\n%-50 40", "\nfn=(2)\n52 40")
    local kc = assert(callgrind.parse(fixed, "dump.out", { position_rule = "kcachegrind" }))
    assert.are.same({ { "main", 100, 5 }, { "main", 5, 1 }, { "f", 52, 40 } }, lines_of(kc))
  end)

  it("refuses a position_rule it does not know", function()
    assert.has_error(function() callgrind.parse(DUMP_PART, "dump.out", { position_rule = "moving" }) end,
      "bad argument #3 to 'parse' (option 'position_rule' must be \"valgrind\" or \"kcachegrind\")")
  end)
end)

describe("the file of a cost line after a call", function()
  -- valgrind keeps the file of the last regular cost line in its base
  -- too: an fi= written for a call's site (fprint_apos, which leaves the
  -- base) does not hold for the next cost line, which gets an fi=/fe= of
  -- its own only when its file differs from the base's. So line 11 below
  -- is in a.c, as in xapian.callgrind (callgrind 3.3) after calls from
  -- crti.S into ???, and in a dump of cgdump.c where allocate_dtv's lines
  -- read as rtld-malloc.h's.
  local text = table.concat({
    "# callgrind format", "creator: callgrind-3.19.0", "positions: line", "events: Ir",
    "fl=(1) a.c", "fn=(1) main", "10 5", "fi=(2) inl.h", "cfn=(2) work", "calls=1 50", "3 40", "11 2", "12 1",
    "fi=(2)", "4 7", "fe=(1)", "13 1", "fn=(2)", "50 40", "totals: 56", "",
  }, "\n")
  local function lines(prof)
    local t = {}
    for l in prof:func("main"):lines() do t[#t + 1] = { l.file, l.line, l:cost(1) } end
    return t
  end

  it("is the last regular cost line's, unless an fi= or fe= comes right before it, with or without the worker",
    function()
      for _, opts in ipairs({ { threads = 1 }, { chunk = 64 } }) do
        local prof = assert(callgrind.parse(text, "files.out", opts))
        assert.are.same({ { "a.c", 10, 5 }, { "a.c", 11, 2 }, { "a.c", 12, 1 }, { "inl.h", 4, 7 }, { "a.c", 13, 1 } },
          lines(prof))
        local call = prof:func("main"):calls()()
        assert.are.same({ "inl.h", 3, 40 }, { call.file, call.line, call:cost(1) })
        assert.are.same({}, prof:warnings())
      end
    end)

  it("holds until the next fi= or fe= under position_rule = \"kcachegrind\"", function()
    local prof = assert(callgrind.parse(text, "files.out", { position_rule = "kcachegrind" }))
    -- the base moves with the site: 11 and 12 count from line 3 there
    assert.are.same({ { "a.c", 10, 5 }, { "inl.h", 11, 2 }, { "inl.h", 12, 1 }, { "inl.h", 4, 7 }, { "a.c", 13, 1 } },
      lines(prof))
  end)
end)

describe("relative positions after jump= and jcnd=", function()
  -- A function whose every block ends in a jump: the source line (+2, from
  -- the last cost line) does not move the base, so each next cost line
  -- counts from the cost line before the jump. Many blocks, so that the
  -- worker thread's runs (csrc/reader/cg_prescan.c) hold jumps too.
  local parts = { "positions: instr line", "events: Ir", "fl=(1) a.c", "fn=(1) f", "0x1000 10 1" }
  local N = 200
  for _ = 1, N do
    parts[#parts + 1] = "jump=1 +8 *"      -- target: last cost line + 8
    parts[#parts + 1] = "+4 +1"            -- source: last cost line + 4, line + 1
    parts[#parts + 1] = "+16 +2 1"         -- next cost line: last + 16, line + 2
  end
  local text = table.concat(parts, "\n") .. "\n"

  local function check(prof)
    local ls = collect(prof:func("f"):lines())
    assert.are.equal(N + 1, #ls)
    for i, l in ipairs(ls) do
      assert.are.equal(0x1000 + 16 * (i - 1), l.addr)
      assert.are.equal(10 + 2 * (i - 1), l.line)
    end
    local js = collect(prof:jumps())
    assert.are.equal(N, #js)
    for i, j in ipairs(js) do
      local base, line = 0x1000 + 16 * (i - 1), 10 + 2 * (i - 1)
      assert.are.same({ base + 4, line + 1, base + 8, line },
        { j.addr, j.line, j.target_addr, j.target_line })
    end
    assert.are.equal(N + 1, prof:total("Ir"))
  end

  it("count from the last regular cost line, with one thread and with the worker's runs", function()
    check(assert(callgrind.parse(text, "jumps.out", { threads = 1 })))
    check(assert(callgrind.parse(text, "jumps.out", { chunk = 256 })))
  end)

  it("move the base with their source line under position_rule = \"kcachegrind\", on both paths", function()
    for _, opts in ipairs({ { threads = 1 }, { chunk = 256 } }) do
      opts.position_rule = "kcachegrind"
      local prof = assert(callgrind.parse(text, "jumps.out", opts))
      local ls = collect(prof:func("f"):lines())
      -- each cost line is then 4 + 16 and 1 + 2 on from the one before
      assert.are.same({ 0x1000 + 20, 13 }, { ls[2].addr, ls[2].line })
      assert.are.same({ 0x1000 + 20 * N, 10 + 3 * N }, { ls[N + 1].addr, ls[N + 1].line })
    end
  end)
end)

describe("the files this library writes", function()
  -- a cost table as text, its events in order
  local function costs(t)
    local out = {}
    for _, k in ipairs(H.sorted_keys(t)) do out[#out + 1] = k .. "=" .. t[k] end
    return table.concat(out, ",")
  end

  -- Everything a model says about positions, as sorted text, to compare
  -- two loads of one profile.
  local function signature(prof)
    local t = {}
    for l in prof:lines() do
      t[#t + 1] = ("L %s|%s|%s|%s|%s|%s"):format(l.fn.name, l.fn.file, tostring(l.file), tostring(l.line),
        tostring(l.addr), costs(l:cost()))
    end
    for c in prof:calls() do
      t[#t + 1] = ("C %s|%s|%d|%s|%s|%s|%s|%s|%s"):format(c.caller.name, c.callee.name, c.count,
        tostring(c.file), tostring(c.line), tostring(c.addr), tostring(c.target_line),
        tostring(c.target_addr), costs(c:cost()))
    end
    for j in prof:jumps() do
      t[#t + 1] = ("J %s|%s|%s|%s|%s|%s|%s|%d"):format(j.from.name, j.to.name, tostring(j.line),
        tostring(j.addr), tostring(j.target_file), tostring(j.target_line), tostring(j.target_addr), j.count)
    end
    table.sort(t)
    return table.concat(t, "\n")
  end

  local lab = H.lab("spec/positions_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  local function inputs()
    local list = {}
    local p = assert(io.popen("find spec/corpus spec/fixtures -maxdepth 2 -type f "
      .. "\\( -name '*.callgrind' -o -name '*.out' -o -name '*.out.*' -o -name '*.log' -o -name '*.cgout' \\) "
      .. "| grep -v '/dumps/' | sort"))
    for f in p:lines() do list[#list + 1] = f end
    p:close()
    return list
  end

  it("read the same under both rules, and as the profile they were written from", function()
    -- a fresh valgrind run with jumps and instructions too: many call
    -- sites per function, at other positions than the lines before them
    local files = inputs()
    files[#files + 1] = lab:callgrind("jumps", "--dump-instr=yes --collect-jumps=yes")
    local written = 0
    for i, path in ipairs(files) do
      local prof = callgrind.load(path, { lenient = true })
      if prof and prof:total(1) ~= nil and #prof.events > 0 then
        local out = lab.dir .. "/w" .. i .. ".out"
        assert(prof:write(out))
        local a = assert(callgrind.load(out))
        local b = assert(callgrind.load(out, { position_rule = "kcachegrind" }))
        local want = signature(prof)
        assert.are.equal(want, signature(a), path .. " written and read back")
        assert.are.equal(want, signature(b), path .. " written and read KCachegrind's way")
        written = written + 1
      end
    end
    assert.is_true(written >= 40, written .. " files written")
  end)

  it("write a call's site, a jump's source and the cost line after them in full", function()
    local prof = assert(callgrind.load(lab:callgrind("full", "--dump-instr=yes --collect-jumps=yes")))
    local out = lab.dir .. "/full-written.out"
    assert(prof:write(out))
    local lines = {}
    for l in H.read_file(out):gmatch("[^\n]+") do lines[#lines + 1] = l end
    local function relative(l) return l:match("^[%d%+%-%*]") and l:match("[%+%-%*]") end
    local seen = { calls = 0, jumps = 0 }
    for i, l in ipairs(lines) do
      local key = l:match("^(calls)=") or l:match("^(j[uc][mn][pd])=")
      if key then
        seen[key == "calls" and "calls" or "jumps"] = seen[key == "calls" and "calls" or "jumps"] + 1
        assert.is_falsy(l:match(" [%+%-%*]"), "a target written relative: " .. l)
        assert.is_falsy(relative(lines[i + 1]), "a site written relative: " .. lines[i + 1])
        local nxt = lines[i + 2]
        if nxt and nxt:match("^[%d%+%-%*]") then
          assert.is_falsy(relative(nxt), "a cost line after a call or jump written relative: " .. nxt)
        end
      end
    end
    assert.is_true(seen.calls > 20 and seen.jumps > 20, seen.calls .. " calls, " .. seen.jumps .. " jumps")
  end)
end)
