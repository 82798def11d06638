-- What real valgrind files hold (issue 7, sections 3 and 4): costs written
-- as unsigned 64-bit counters, frfn= id definitions, files that are no
-- profile at all, files cut short, and warnings sorted by kind. Every
-- expected value is worked out by hand from the fixture's text.
local callgrind = require "callgrind"

local FIX = "spec/fixtures/"

describe("callgrind.load on valgrind's own lines", function()
  it("reads frfn=(N) name as the definition of function id N", function()
    local prof = assert(callgrind.load(FIX .. "frfn.callgrind"))
    local main = assert(prof:func("main"))
    assert.are.equal(3, main:self("Ir"))
    assert.are.equal("prog.c", main.file)
    local call = main:calls()()
    assert.are.same({ "main", "work", 1, 20 }, { call.caller.name, call.callee.name, call.count, call:cost("Ir") })
    assert.are.same({}, prof:warnings())
  end)

  it("keeps the bits of a cost from 2^63 to 2^64-1, in summary: too", function()
    -- 2^64 - 18446744073403033508 = 306518108
    local prof = assert(callgrind.parse("version: 1\ncreator: callgrind-3.22.0\nevents: Ir sysTime\n"
      .. "fn=child\n1 10 18446744073403033508\n2 5 306518118\n"
      .. "summary: 15 10\ntotals: 15 10\n", "fork.out"))
    assert.are.same({ Ir = 15, sysTime = 10 }, prof:totals())
    local costs = {}
    for line in prof:lines() do costs[#costs + 1] = line:cost("sysTime") end
    assert.are.same({ -306518108, 306518118 }, costs)
    assert.are.same({}, prof:warnings())
  end)
end)

describe("a file that is no profile", function()
  for _, c in ipairs {
    { "an empty file", "" },
    { "only comments and blank lines", "# callgrind format\n\n# x\n" },
    { "headers but no events: line", "version: 1\ncreator: callgrind-3.22.0\ncmd: ./a\n" },
    { "text that is not a profile at all", "Hello, world\n" },
  } do
    it("is refused when it is " .. c[1], function()
      assert.are.same({ nil, "x.out: no events: line: not a callgrind profile", "format" },
        { callgrind.parse(c[2], "x.out", { lenient = true }) })
      if c[2]:find("Hello") then
        -- strictly, its first bad line is the error
        assert.are.same({ nil, "x.out:1: expected a cost, name or header line, found 'Hello, world'", "format" },
          { callgrind.parse(c[2], "x.out") })
      else
        assert.are.same({ nil, "x.out: no events: line: not a callgrind profile", "format" },
          { callgrind.parse(c[2], "x.out") })
      end
    end)
  end
end)

describe("a callgrind file cut short", function()
  local head = "version: 1\ncreator: callgrind-3.22.0\nevents: Ir\nfn=main\n1 5\n2 7\n"

  it("loads with a truncated warning that names its last line", function()
    local prof = assert(callgrind.parse(head .. "3 9", "cut.out"))
    assert.are.equal(21, prof:total("Ir"))
    local w = { "cut.out:7: the file ends without totals: (callgrind ends every part with one): cut short after '3 9'" }
    assert.are.same(w, prof:warnings())
    assert.are.same(w, prof:warnings("truncated"))
  end)

  it("names the last line that is not blank", function()
    local prof = assert(callgrind.parse(head .. "\n\n  \n", "cut.out"))
    assert.are.same({ "cut.out:6: the file ends without totals: (callgrind ends every part with one): "
      .. "cut short after '2 7'" }, prof:warnings("truncated"))
  end)

  it("is not cut short when its last part ends with totals:", function()
    local prof = assert(callgrind.parse(head .. "totals: 12\n", "ok.out"))
    assert.are.same({}, prof:warnings())
  end)

  it("is judged by its last part only: an earlier part may lack totals:", function()
    local prof = assert(callgrind.parse(head .. "part: 2\nfn=b\n1 1\ntotals: 1\n", "two.out"))
    assert.are.same({}, prof:warnings("truncated"))
  end)

  it("is no matter for files other writers made (no creator: callgrind)", function()
    local prof = assert(callgrind.parse("# callgrind format\nevents: Ir\nfn=main\n1 5\n", "x.out"))
    assert.are.same({}, prof:warnings())
  end)
end)

describe("a part's totals: line", function()
  it("ends the part, even one with no body lines (a thread's empty dump of --combine-dumps=yes)", function()
    local text = table.concat({
      "version: 1", "creator: callgrind-3.19.0", "pid: 1", "cmd: x",
      "part: 1", "thread: 1", "positions: line", "events: Ir", "summary: 5", "fl=(1) a.c", "fn=(1) f", "1 5",
      "totals: 5",
      "part: 2", "thread: 1", "positions: line", "events: Ir", "summary: 0", "totals: 0",
      "part: 2", "thread: 2", "positions: line", "events: Ir", "summary: 3", "fl=(1)", "fn=(1)", "2 3", "totals: 3", "",
    }, "\n")
    local prof = assert(callgrind.parse(text, "combined.out"))
    local parts = {}
    for pt in prof:parts() do parts[#parts + 1] = { pt.number, pt.thread, pt.written_totals.Ir } end
    assert.are.same({ { 1, 1, 5 }, { 2, 1, 0 }, { 2, 2, 3 } }, parts)
    assert.are.equal(8, prof:total("Ir"))
    assert.are.same({}, prof:warnings())
  end)
end)

describe("several files loaded as one", function()
  it("name the file of a part's last line in that part's warnings, not the next file", function()
    local dir = os.tmpname()
    local a, b = dir .. ".a", dir .. ".b"
    local part = "version: 1\ncreator: callgrind-3.19.0\npid: 5\ncmd: ./p\npart: %d\nevents: Ir\nfn=m\n1 %d\n"
      .. "totals: %d\n"
    local f = assert(io.open(a, "w")); f:write(part:format(1, 7, 9)); f:close()   -- 7 summed, 9 written
    f = assert(io.open(b, "w")); f:write(part:format(2, 3, 3)); f:close()
    local prof = assert(callgrind.load({ a, b }))
    os.remove(a); os.remove(b); os.remove(dir)
    assert.are.same({ a .. ":9: totals: does not match the cost lines: Ir 9 written, 7 summed" },
      prof:warnings("lost"))
  end)
end)

describe("prof:warnings(kind)", function()
  local prof = assert(callgrind.load(FIX .. "kinds.callgrind", { lenient = true }))
  local at = FIX .. "kinds.callgrind:"
  local want = {
    unknown = { at .. "8: unknown line 'bb=0x10' skipped" },
    skipped = { at .. "9: expected a number for cost 1, found 'x'" },
    name = { at .. "10: fn=(1) redefined from 'main' to 'other'" },
    truncated = { at .. "12: the file ends without totals: (callgrind ends every part with one): "
      .. "cut short after 'summary: 99 1'" },
    mismatch = { at .. "12: summary: does not match the cost lines: Ir 99 written, 15 summed" },
    formula = { at .. "4: formula 'Ir +' for Bad: a term ends without an event name; event not defined" },
    lost = {},   -- spec/writer_verify_spec.lua has them
  }

  it("stays an array of strings with no kind: every warning, the formula ones last", function()
    assert.are.same({ want.unknown[1], want.skipped[1], want.name[1], want.truncated[1], want.mismatch[1],
      want.formula[1] }, prof:warnings())
  end)

  for _, kind in ipairs { "truncated", "skipped", "mismatch", "unknown", "name", "lost", "formula" } do
    it("gives only the " .. kind .. " warnings for '" .. kind .. "'", function()
      assert.are.same(want[kind], prof:warnings(kind))
    end)
  end

  it("counts the warnings past the first 1000 per kind", function()
    local t = { "events: Ir\nfn=a\n" }
    for i = 1, 1200 do t[#t + 1] = "x" .. i .. "=1\n" end
    t[#t + 1] = "1 x\n"
    local p = assert(callgrind.parse(table.concat(t), "many.out", { lenient = true }))
    local unknown = p:warnings("unknown")
    assert.are.equal(1001, #unknown)
    assert.are.equal("many.out: 200 more unknown warnings not listed", unknown[1001])
    assert.are.same({ "many.out: 1 more skipped warnings not listed" }, p:warnings("skipped"))
    assert.are.equal("many.out: 201 more warnings not listed", p:warnings()[1001])
  end)

  it("raises on a kind it does not know, naming the kinds", function()
    assert.has_error(function() prof:warnings("bogus") end,
      "bad argument #1 to 'warnings' (invalid option 'bogus'; expected one of: "
      .. "truncated, skipped, mismatch, unknown, name, lost, changed, calls, formula)")
  end)
end)
