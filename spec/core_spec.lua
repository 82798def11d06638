-- The C core through its Lua face: hand-written fixtures with numbers worked
-- out by hand (the comments in each fixture say what they exercise).
local callgrind = require "callgrind"

local FIX = "spec/fixtures/"

local function load(name, opts)
  return assert(callgrind.load(FIX .. name, opts))
end

local function collect(iter)
  local out = {}
  for x in iter do out[#out + 1] = x end
  return out
end

local function byname(prof)
  local t = {}
  for fn in prof:functions() do t[fn.name] = fn end
  return t
end

describe("callgrind.load", function()
  it("reads the format spec's extended example: self costs, calls, inclusive call costs", function()
    local prof = load("extended.callgrind")
    local f = byname(prof)
    assert.are.same({ "Instructions" }, prof.events)
    assert.are.equal(20, f.main:self("Instructions"))
    assert.are.equal(100, f.func1:self(1))
    assert.are.same({ Instructions = 700 }, f.func2:self())
    assert.are.equal("file1.c", f.main.file)
    assert.are.equal("file1.c", f.func1.file)
    assert.are.equal("file2.c", f.func2.file)
    assert.are.same({ Instructions = 820 }, prof:totals())
    assert.are.equal(820, prof:total("Instructions"))
    local calls = collect(f.main:calls())
    assert.are.equal(2, #calls)
    assert.are.equal(f.func1, calls[1].callee)
    assert.are.equal(1, calls[1].count)
    assert.are.equal(400, calls[1]:cost("Instructions"))
    assert.are.equal(16, calls[1].line)
    assert.are.equal(50, calls[1].target_line)
    assert.is_nil(calls[1].addr)
    assert.are.equal(f.func2, calls[2].callee)
    assert.are.equal(3, calls[2].count)
    assert.are.equal(400, calls[2]:cost(1))
    local into = collect(f.func2:callers())
    assert.are.equal(2, #into)
    assert.are.equal(f.main, into[1].caller)
    assert.are.equal(f.func1, into[2].caller)
    assert.are.equal(300, into[2]:cost(1))
    assert.are.equal(2, into[2].count)
    assert.are.equal(0, #collect(f.func2:calls()))
    assert.are.same({}, prof:warnings())
  end)

  it("resolves relative subpositions in every column (the spec's subposition example)", function()
    local prof = load("subposition.callgrind")
    local got = {}
    for l in prof:lines() do got[#got + 1] = { l.addr, l.line, l:cost("ticks") } end
    assert.are.same({ { 0x80001234, 90, 1 }, { 0x80001237, 90, 5 }, { 0x80001238, 91, 6 } }, got)
  end)

  it("keeps the function's fl= file while fi=/fe= switch the file of its lines and calls", function()
    local prof = load("inline.callgrind")
    local f = byname(prof)
    assert.are.equal("main.c", f.main.file)
    assert.are.equal("/bin/prog", f.main.object)
    assert.are.same({ Ir = 13, Dr = 3 }, f.main:self())
    local lines = {}
    for l in f.main:lines() do lines[#lines + 1] = { l.file, l.line, l:cost("Ir"), l:cost("Dr") } end
    assert.are.same({ { "main.c", 10, 5, 1 }, { "util.h", 3, 7, 2 }, { "main.c", 11, 1, 0 } }, lines)
    -- no cfi=: the callee is in the file in force at the call (util.h)
    assert.are.equal("util.h", f.helper.file)
    assert.are.same({ Ir = 100, Dr = 10 }, f.helper:self())
    local calls = collect(f.main:calls())
    assert.are.equal("util.h", calls[1].file)
    assert.are.equal(4, calls[1].line)
    assert.are.equal(30, calls[1].target_line)
    assert.are.same({ Ir = 100, Dr = 10 }, calls[1]:cost())
    -- cob= and cfl= name the callee's object and file
    assert.are.equal(f.strlen, calls[2].callee)
    assert.are.equal("/lib/libc.so", f.strlen.object)
    assert.are.equal("string.c", f.strlen.file)
    assert.are.equal("main.c", calls[2].file)
    assert.are.equal(12, calls[2].line)
    assert.are.same({ Ir = 153, Dr = 17 }, prof:totals())
    assert.are.equal(3, #collect(prof:functions()))
  end)

  it("reads jump= and both jcnd= forms with their source lines and jfi=/jfn= targets", function()
    local prof = load("jumps.callgrind")
    local f = byname(prof)
    local js = {}
    for j in prof:jumps() do
      js[#js + 1] = { j.from.name, j.to.name, j.file, j.addr, j.line, j.target_file,
                      j.target_addr, j.target_line, j.conditional, j.count, j.executed }
    end
    assert.are.same({
      { "f", "f", "a.c", 0x102, 10, "a.c", 0x110, 12, false, 4, 4 },
      { "f", "f", "a.c", 0x112, 12, "a.c", 0x200, 20, true, 3, 5 },   -- callgrind's F/E
      { "f", "g", "a.c", 0x116, 13, "b.h", 0x300, 30, true, 2, 7 },   -- the spec's E F
    }, js)
    assert.are.equal(3, #collect(f.f:jumps()))
    assert.are.equal(0, #collect(f.g:jumps()))
    -- jump source lines are not cost lines
    local lines = {}
    for l in f.f:lines() do lines[#lines + 1] = { l.addr, l.line, l:cost(1) } end
    assert.are.same({ { 0x100, 10, 3 }, { 0x112, 12, 4 }, { 0x120, 13, 2 } }, lines)
    assert.are.equal(9, f.f:self(1))
    assert.are.equal(9, f.g:self(1))
    assert.are.equal("b.h", f.g.file)
    assert.are.equal(18, prof:total(1))
  end)

  it("starts a part at a header after body lines, inherits pid/cmd/positions, and maps each part's events", function()
    local prof = load("parts.callgrind")
    assert.are.same({ "Ir", "Dr", "Dw" }, prof.events)
    assert.are.equal(42, prof.pid)
    assert.are.equal("./prog --flag", prof.cmd)
    assert.are.equal("hand", prof.creator)
    assert.are.equal(1, prof.version)
    local parts = collect(prof:parts())
    assert.are.equal(2, #parts)
    assert.are.equal(1, parts[1].number)
    assert.are.equal(2, parts[2].number)
    assert.are.equal(42, parts[2].pid)
    assert.are.equal("./prog --flag", parts[2].cmd)
    assert.are.same({ ["I1 cache"] = "", Trigger = "Program termination" }, parts[1].desc)
    assert.are.same({ Trigger = "--dump-every-bb=100" }, parts[2].desc)
    assert.are.same({ "Ir", "Dr" }, parts[1].events)
    assert.are.same({ "Dr", "Ir", "Dw" }, parts[2].events)
    assert.are.same({ Ir = 12, Dr = 3 }, parts[1].summary)
    assert.are.same({ Dr = 5, Ir = 7, Dw = 7 }, parts[2].written_totals)
    assert.are.same({ Ir = 18, Dr = 8, Dw = 7 }, prof:totals())
    -- the iai-callgrind preset Ir + Dr + Dw, defined since these events exist
    assert.are.equal(33, prof:total("TotalRW"))
    -- relative positions start again at 0 in a new part
    local lines = {}
    for l in prof:lines() do lines[#lines + 1] = { l.line, l.part.index, l:cost("Ir"), l:cost("Dw") } end
    assert.are.same({ { 1, 1, 10, 0 }, { 2, 1, 2, 0 }, { 1, 2, 6, 7 } }, lines)
    assert.are.same(
      { "spec/fixtures/parts.callgrind:25: totals: does not match the cost lines: Ir 7 written, 6 summed" },
      prof:warnings())
  end)

  it("separates Xdebug's appended profiles and forgets their compression ids", function()
    local prof = load("xdebug-append.callgrind")
    local f = byname(prof)
    assert.are.equal(0, prof.version)
    assert.are.equal("/srv/a.php", f["{main}"].file)
    assert.are.equal("/srv/b.php", f.other.file)
    assert.are.same({ Time = 10, Memory = -20 }, f["{main}"]:self())
    local parts = collect(prof:parts())
    assert.are.equal(2, #parts)
    assert.are.equal(1, parts[2].number)
    assert.are.equal(2, parts[2].index)
    assert.are.equal("/srv/b.php", parts[2].cmd)
    assert.are.same({}, prof:warnings())
  end)

  it("returns nil and 'path: reason' for a missing file", function()
    local prof, err = callgrind.load(FIX .. "no-such-file")
    assert.is_nil(prof)
    assert.are.equal(FIX .. "no-such-file: No such file or directory", err)
  end)
end)

describe("callgrind.parse", function()
  local function parse(text, opts) return callgrind.parse(text, "t.out", opts) end

  it("accepts tabs, CRLF, hex, trailing blanks, signed costs, dropped zeros and no final newline", function()
    local prof = assert(parse("events: A B C\r\nfn=x\r\n0x10\t1 -2 \r\n17 0x10\r\n18"))
    local got = {}
    for l in prof:lines() do got[#got + 1] = { l.line, l:cost("A"), l:cost("B"), l:cost("C") } end
    assert.are.same({ { 16, 1, -2, 0 }, { 17, 16, 0, 0 }, { 18, 0, 0, 0 } }, got)
    assert.are.same({ A = 17, B = -2, C = 0 }, prof:totals())
  end)

  it("adds up costs written for the same position", function()
    local prof = assert(parse("events: A\nfn=x\n5 1\n5 2\n* 3\n"))
    assert.are.equal(6, prof:func("x"):self("A"))
    assert.are.equal(3, #collect(prof:lines()))
  end)

  it("keeps names that only look compressed, and composite --compress-mangled names", function()
    local prof = assert(parse("events: A\nfl=(jruby_runtime)\nfn=(top)\n1 1\n" ..
      "fn=(1) a\nfn=(2) b\nfn=(3) (1)'(2)\n2 2\nfn=(1)'(2)\n3 3\n"))
    local f = byname(prof)
    assert.are.equal("(jruby_runtime)", f["(top)"].file)
    assert.are.equal(5, f["a'b"]:self(1))
    assert.is_nil(f.a)
  end)

  it("gives calls=0 and Xdebug's extra target subposition no special meaning", function()
    local prof = assert(parse("events: A\nfn=m\n1 1\ncfn=g\ncalls=0 0 0\n2 7\nfn=g\n3 7\n"))
    local c = collect(prof:calls())[1]
    assert.are.equal(0, c.count)
    assert.are.equal(7, c:cost("A"))
    assert.are.equal(1, prof:func("m"):self("A"))
  end)

  it("books a cost line after fl= with no fn= to <unspecified>, as cg_annotate does", function()
    local prof = assert(parse("events: A\nfl=a.c\nfn=f\n1 1\nfl=b.c\n2 5\n"))
    local u = assert(prof:func("<unspecified>"))
    assert.are.equal("b.c", u.file)
    assert.are.equal(5, u:self(1))
  end)

  it("gives the one function of a name the calls made without cfi= (Xdebug bug #489)", function()
    local prof = assert(parse("events: T\nfl=(1) r.php\nfn=(1) find\n1 3\nfl=(2) i.php\nfn=(2) main\n1 1\n" ..
      "cfn=(1)\ncalls=3 0 0\n9 9\n"))
    assert.are.equal(2, #collect(prof:functions()))
    local c = collect(prof:calls())[1]
    assert.are.equal("r.php", c.callee.file)
    assert.are.equal(prof:func("find"), c.callee)
  end)

  it("resolves an id used before its definition", function()
    local prof = assert(parse("events: A\nfn=m\n1 1\ncfn=(7)\ncalls=1 1\n1 4\nfn=(7) late\n1 4\n"))
    assert.are.equal(2, #collect(prof:functions()))
    assert.are.equal("late", collect(prof:calls())[1].callee.name)
  end)

  it("keeps an id that is never defined as the name (N), with a warning at its first use", function()
    -- callgrind 0.10 omits some names (shared corpus: gprof2dot/selinux.callgrind)
    local prof = assert(parse("events: A\nob=(1) /bin/x\nfn=m\n1 1\ncob=(8)\ncfn=(4) g\ncalls=1 1\n1 2\n"))
    assert.are.same({ "t.out:5: object id (8) is used but never defined" }, prof:warnings())
    assert.are.equal("(8)", collect(prof:calls())[1].callee.object)
    assert.are.equal(1, prof:total("A"))
  end)

  it("warns about unknown lines and skips them", function()
    local prof = assert(parse("events: A\nfn=m\nbb=0x1a 1 1\n1 2\nfoo: bar\n"))
    assert.are.same({ "t.out:3: unknown line 'bb=0x1a 1 1' skipped", "t.out:5: unknown line 'foo: bar' skipped" },
      prof:warnings())
    assert.are.equal(2, prof:total("A"))
  end)

  it("refuses an empty text: no events: line, no callgrind profile", function()
    assert.are.same({ nil, "t.out: no events: line: not a callgrind profile", "format" }, { parse("") })
  end)

  local bad = {
    { "a cost line before any events: line", "fn=m\n1 2\n", "t.out:2: cost line before any events: line" },
    { "more costs than events", "events: A B\nfn=m\n1 2 3 4\n", "t.out:3: cost line has 3 costs but events: lists 2" },
    { "a bad number", "events: A\nfn=m\n1 2x\n", "t.out:3: expected a number for cost 1, found '2x'" },
    { "a number over 64 bits", "events: A\nfn=m\n1 99999999999999999999\n",
      "t.out:3: cost 1 '99999999999999999999' does not fit in 64 bits" },
    { "a relative cost", "events: A\nfn=m\n1 +3\n",
      "t.out:3: cost 1 is '+3': costs cannot be relative, only positions" },
    { "a relative position below 0", "events: A\nfn=m\n-3 1\n", "t.out:3: position 'line' '-3' goes below 0" },
    { "calls= not followed by a cost line", "events: A\nfn=m\ncfn=g\ncalls=1 1\nfn=g\n",
      "t.out:5: expected the cost line of the calls= at line 4, found 'fn=g'" },
    { "calls= at the end of the file", "events: A\nfn=m\ncfn=g\ncalls=1 1\n",
      "t.out:4: calls= at end of file, with no cost line after it" },
    { "calls= with no cfn=", "events: A\nfn=m\ncalls=1 1\n1 1\n", "t.out:3: calls= without a cfn= line before it" },
    { "a jump source line with costs", "events: A\nfn=m\njump=1 2\n1 5\n",
      "t.out:4: the source line of jump= at line 3 has costs" },
    { "version 2", "version: 2\nevents: A\n",
      "t.out:1: version 2 is not supported (this reader knows versions 0 and 1)" },
    { "an events: line twice in a part", "events: A\nevents: B\n",
      "t.out:2: events: given twice in one part (first at line 1)" },
    { "an unknown line", "events: A\n%%%\n", "t.out:2: expected a cost, name or header line, found '%%%'" },
    { "fewer positions than positions: lists", "positions: instr line\nevents: A\nfn=m\n0x10\n",
      "t.out:4: cost line has 1 position but positions: lists 2" },
  }
  for _, case in ipairs(bad) do
    it("fails on " .. case[1] .. " with the file name and line", function()
      local prof, err = parse(case[2])
      assert.is_nil(prof)
      assert.are.equal(case[3], err)
    end)
  end

  it("in lenient mode skips exactly the bad lines and keeps the good ones", function()
    local text = "events: A\nfn=m\n1 5\n1 +3\n2 7\ncfn=g\ncalls=x 1\n3 100\n4 1\n"
    assert.is_nil((parse(text)))
    local prof = assert(parse(text, { lenient = true }))
    assert.are.equal(13, prof:total("A"))
    assert.are.same({
      "t.out:4: cost 1 is '+3': costs cannot be relative, only positions",
      "t.out:7: expected a number for the call count, found 'x'",
      "t.out:8: skipped with the bad line 7 before it",
    }, prof:warnings())
    local got = {}
    for l in prof:lines() do got[#got + 1] = { l.line, l:cost(1) } end
    assert.are.same({ { 1, 5 }, { 2, 7 }, { 4, 1 } }, got)
  end)

  it("rejects unknown options and unknown events as misuse", function()
    assert.has_error(function() parse("", { lenent = true }) end,
      "bad argument #3 to 'parse' (unknown option 'lenent'; options: chunk, lenient, max_bytes, position_rule, "
        .. "progress, threads)")
    local prof = assert(parse("events: Ir\nfn=m\n1 1\n"))
    assert.has_error(function() prof:func("m"):self("Irr") end,
      "bad argument #1 to 'self' (unknown event 'Irr'; events: Ir)")
    assert.has_error(function() prof:total("Irr") end, "bad argument #1 to 'total' (unknown event 'Irr'; events: Ir)")
  end)
end)

describe("handles", function()
  it("give one Lua value per function, so they work as table keys", function()
    local prof = load("extended.callgrind")
    local seen = {}
    for fn in prof:functions() do seen[fn] = true end
    local c = collect(prof:calls())[1]
    assert.is_true(seen[c.caller])
    assert.are.equal(prof:func("main"), c.caller)
    assert.is_true(rawequal(prof:func("main"), c.caller))
  end)

  it("are the same values whether a walk over the functions comes first or last", function()
    -- the walk sizes the handle cache for every function when it is empty
    -- (walk first) and keeps the handles already made (lookup first)
    for _, walk_first in ipairs({ true, false }) do
      local prof = load("extended.callgrind")
      local early = not walk_first and prof:func("main")
      local walked, n = {}, 0
      for fn in prof:functions() do
        n = n + 1
        walked[fn.name] = fn
      end
      assert.are.equal(3, n)     -- main, func1, func2 (fn= lines 5, 15, 23)
      assert.is_true(rawequal(walked.main, prof:func("main")))
      if early then assert.is_true(rawequal(early, walked.main)) end
      local again = {}
      for fn in prof:functions() do again[#again + 1] = fn end
      for _, fn in ipairs(again) do assert.is_true(rawequal(walked[fn.name], fn)) end
    end
  end)

  it("look functions up by name, file and object, and say when a name is ambiguous", function()
    local prof = assert(callgrind.parse("events: A\nfl=a.c\nfn=f\n1 1\nfl=b.c\nfn=f\n1 2\n", "t.out"))
    local fn, err = prof:func("f")
    assert.is_nil(fn)
    assert.are.equal("ambiguous: 2 functions named 'f' (a.c; b.c): give a file or object to choose", err)
    assert.are.equal(2, prof:func("f", "b.c"):self(1))
    assert.are.same({ nil, "not found: no function named 'g'; closest names: f", "not_found" }, { prof:func("g") })
    assert.are.same({ nil, "not found: 'f' is not in that file or object; it is in a.c, b.c", "not_found" },
      { prof:func("f", "c.c") })
    assert.are.same({ nil, "ambiguous: 2 functions named 'f' (a.c; b.c): give a file or object to choose",
      "ambiguous" },
      { prof:func("f") })
  end)

  it("print one readable line each", function()
    local prof = load("inline.callgrind")
    assert.are.equal("callgrind.Profile: spec/fixtures/inline.callgrind (3 functions, 2 calls, 1 part; events: Ir Dr)",
      tostring(prof))
    local main = prof:func("main")
    assert.are.equal("callgrind.Function: main (main.c; /bin/prog)", tostring(main))
    assert.are.equal("callgrind.Call: main -> helper (2 calls at util.h:4; Ir 100 inclusive)",
      tostring(collect(main:calls())[1]))
    assert.are.equal("callgrind.CostLine: main at util.h:3 Ir=7 Dr=2", tostring(collect(main:lines())[2]))
    assert.are.equal("callgrind.Part 1", tostring(collect(prof:parts())[1]))
  end)

  it("refuse to work once their profile is closed, and closing twice is harmless", function()
    local prof = load("extended.callgrind")
    local main = prof:func("main")
    local it = prof:lines()
    prof:close()
    prof:close()
    assert.are.equal("callgrind.Profile (closed)", tostring(prof))
    assert.has_error(function() return main:self(1) end, "attempt to use a closed profile")
    assert.has_error(function() return it() end, "attempt to use a closed profile")
    assert.has_error(function() return prof:totals() end, "attempt to use a closed profile")
  end)

  it("close with a to-be-closed variable", function()
    local main
    do
      local prof <close> = load("extended.callgrind")
      main = prof:func("main")
      assert.are.equal(20, main:self(1))
    end
    assert.has_error(function() return main:self(1) end, "attempt to use a closed profile")
  end)

  it("keep their profile alive through a garbage collection mid-iteration", function()
    local it = load("extended.callgrind"):lines()
    collectgarbage()
    collectgarbage()
    local n = 0
    for l in it do n = n + 1; assert.is_string(l.fn.name) end
    assert.are.equal(3, n)
  end)

  it("keep what the Lua modules know of a profile in its one state table, closed or not", function()
    local internal = require("callgrind.core").internal
    local prof = load("extended.callgrind")
    local state = internal.state(prof)
    assert.are.equal(state, internal.state(prof))
    prof:define("Twice", "2 Instructions")
    assert.are.same({ "Twice" }, state["callgrind.model.events"].order)
    assert.are.same({}, collect(prof:cycles()))
    assert.are.same({}, state["callgrind.model.graph"].list)
    prof:close()
    assert.are.equal(state, internal.state(prof))
    assert.are.same({ "Twice" }, prof:derived_events())
    assert.has_error(function() internal.state({}) end)
  end)
end)
