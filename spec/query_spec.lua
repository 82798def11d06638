-- Queries, selections, aggregation, grouping, annotation and reports, with
-- the rows worked out by hand from the fixtures.
local callgrind = require "callgrind"

local function load(name) return assert(callgrind.load("spec/fixtures/" .. name)) end

local function names(sel)
  local out = {}
  for i, fn in ipairs(sel) do out[i] = fn.name end
  return out
end

describe("prof:find", function()
  local prof = load("inline.callgrind")

  it("matches names by Lua pattern, in first-seen order", function()
    assert.are.same({ "main", "helper", "strlen" }, names(prof:find()))
    assert.are.same({ "helper" }, names(prof:find("^h")))
    assert.are.same({}, names(prof:find("xyz")))
  end)

  it("matches plain text and restricts by file and object patterns", function()
    assert.are.same({ "strlen" }, names(prof:find("str", { plain = true })))
    assert.are.same({ "main", "helper" }, names(prof:find(nil, { object = "/bin/prog", plain = true })))
    assert.are.same({ "helper" }, names(prof:find(nil, { file = "%.h$" })))
    assert.are.same({ "helper" }, names(prof:all():find("e", { file = "util" })))
  end)

  it("raises on a wrong argument", function()
    assert.has_error(function() prof:find(5) end, "bad argument #1 to 'find' (string expected, got 5)")
  end)

  it("says a malformed pattern is the user's argument, naming find, never Lua's raw error", function()
    assert.has_error(function() prof:find("[") end, "bad argument #1 to 'find' (malformed pattern '[': missing ']')")
    assert.has_error(function() prof:all():find("%") end,
      "bad argument #1 to 'find' (malformed pattern '%': ends with '%')")
    assert.has_error(function() prof:find("x", { file = "(" }) end,
      "bad argument #2 to 'find' (opts.file: malformed pattern '(': unfinished capture)")
    -- plain text takes any bytes
    assert.are.equal(0, #prof:find("[", { plain = true }))
  end)
end)

describe("selections", function()
  local prof = load("extended.callgrind")

  it("sort, take the top n, filter, sum and count", function()
    local all = prof:all()
    assert.are.equal(3, #all)
    assert.are.same({ "func2", "func1", "main" }, names(all:sort("Instructions")))
    assert.are.same({ "main", "func2", "func1" }, names(all:sort("Instructions", "inclusive")))
    assert.are.same({ "func2", "func1" }, names(all:top(2, "Instructions")))
    assert.are.same({ "main", "func2" }, names(prof:top(2, "Instructions", "inclusive")))
    assert.are.same({ "func2" }, names(prof:top(1)))
    assert.are.same({ "main", "func1" }, names(all:filter(function(fn) return fn.file == "file1.c" end)))
    assert.are.equal(820, all:sum("Instructions"))
    assert.are.equal(120, all:find(nil, { file = "file1.c", plain = true }):sum())
    assert.are.equal(820 + 400 + 700, all:sum("Instructions", "inclusive"))   -- main + func1 + func2
    local seen = 0
    for _, fn in ipairs(all) do seen = seen + fn:self(1) end
    assert.are.equal(820, seen)
  end)

  it("drop noise by object or file and keep what is above a fraction of the total", function()
    local p = load("inline.callgrind")
    assert.are.same({ "main", "helper" }, names(p:all():without({ object = "libc" })))
    assert.are.same({ "main", "strlen" }, names(p:all():without({ file = "util.h", plain = true })))
    -- total Ir 153: 20% is 30.6
    assert.are.same({ "helper", "strlen" }, names(p:all():above(0.2, "Ir")))
    assert.are.same({ "main", "helper", "strlen" }, names(p:all():above(0.2, "Ir", "inclusive")))
  end)

  it("rank ties by name so the order is the same on every run", function()
    local p = assert(callgrind.parse("events: A\nfn=b\n1 5\nfn=c\n1 5\nfn=a\n1 5\n", "ties.out"))
    assert.are.same({ "a", "b", "c" }, names(p:top(3, "A")))
    assert.are.same({ "a", "b" }, names(p:all():top(2)))
  end)

  it("can be made from given functions, of this profile only", function()
    local sel = prof:select({ prof:func("func2"), prof:func("main") })
    assert.are.same({ "func2", "main" }, names(sel))
    assert.are.equal(720, sel:sum("Instructions"))
    local other = load("extended.callgrind")
    assert.has_error(function() prof:select({ other:func("main") }) end,
      "bad argument #1 to 'select' (fns[1] is not a function of this profile)")
  end)

  it("reject an unknown kind", function()
    assert.has_error(function() prof:all():sort("Instructions", "total") end,
      "bad argument #2 to 'sort' (expected \"self\" or \"inclusive\", got 'total')")
  end)
end)

describe("aggregated callers and callees", function()
  local prof = load("extended.callgrind")

  it("sum counts and costs over call sites per function", function()
    local out = prof:func("func2"):caller_functions():sort("Instructions")
    assert.are.equal(2, #out)
    assert.are.equal("main", out[1].fn.name)
    assert.are.equal(3, out[1].count)
    assert.are.equal(400, out:cost(1, "Instructions"))
    assert.are.equal("func1", out[2].fn.name)
    assert.are.equal(2, out[2].count)
    assert.are.equal(300, out:cost(2))
    local callees = prof:func("main"):callee_functions()
    assert.are.same({ "func1", "func2" }, { callees[1].fn.name, callees[2].fn.name })
    assert.are.same({ 1, 3 }, { callees[1].count, callees[2].count })
  end)

  it("merge several call sites of one callee", function()
    local p = assert(callgrind.parse(
      "events: A\nfn=m\n1 1\ncfn=g\ncalls=2 9\n3 10\ncfn=g\ncalls=5 9\n4 20\nfn=g\n9 30\n", "sites.out"))
    local rows = p:func("m"):callee_functions()
    assert.are.equal(1, #rows)
    assert.are.equal(7, rows[1].count)
    assert.are.equal(30, rows:cost(1, "A"))
    assert.are.equal(2, #rows[1].calls)
  end)
end)

describe("grouping and annotation", function()
  local prof = load("inline.callgrind")

  -- the rows as plain { key, cost } tables
  local function plain(rows)
    local out = {}
    for i, r in ipairs(rows) do out[i] = { key = r.key, cost = r.cost } end
    return out
  end

  it("groups self cost by the source file of the cost lines, and by object", function()
    -- main.c: main's lines 10 and 11 (5 + 1); util.h: main's inlined line 3 (7) + helper (100)
    assert.are.same({ { key = "util.h", cost = 107 }, { key = "string.c", cost = 40 }, { key = "main.c", cost = 6 } },
      plain(prof:group("file", "Ir")))
    assert.are.same({ { key = "/bin/prog", cost = 113 }, { key = "/lib/libc.so", cost = 40 } },
      plain(prof:group("object", "Ir")))
    assert.are.same({ { key = "util.h", cost = 12 }, { key = "string.c", cost = 4 }, { key = "main.c", cost = 1 } },
      plain(prof:group("file", "Dr")))
  end)

  it("annotates the lines of one source file with their cost and functions", function()
    local rows = prof:annotate("util.h", "Ir")
    assert.are.equal(2, #rows)
    assert.are.same({ 3, 7, "main" }, { rows[1].line, rows[1].cost, rows[1].functions[1].name })
    assert.are.same({ 30, 100, "helper" }, { rows[2].line, rows[2].cost, rows[2].functions[1].name })
    assert.has_error(function() prof:annotate("nowhere.c", "Ir") end,
      "bad argument #1 to 'annotate' (no source file of the profile matches 'nowhere.c')")
  end)

  it("rejects an unknown grouping", function()
    assert.has_error(function() prof:group("line") end,
      "bad argument #1 to 'group' (expected \"file\" or \"object\", got 'line')")
  end)
end)

describe("reports", function()
  it("render aligned tables with percent of the total, by what the selection was sorted by", function()
    local prof = load("extended.callgrind")
    assert.are.equal(table.concat({
      "self Instructions  function  file     object",
      "     700 ( 85.4%)  func2     file2.c  ?",
      "     100 ( 12.2%)  func1     file1.c  ?",
      "      20 (  2.4%)  main      file1.c  ?",
    }, "\n"), tostring(prof:top(3, "Instructions")))
    assert.are.equal(table.concat({
      "incl Instructions  function  file     object",
      "              820  main      file1.c  ?",
      "              700  func2     file2.c  ?",
    }, "\n"), prof:top(2, "Instructions", "inclusive"):report({ percent = false }))
  end)

  it("put several events side by side", function()
    local prof = load("inline.callgrind")
    assert.are.equal(table.concat({
      "     self Ir      self Dr  function  file      object",
      " 13 (  8.5%)   3 ( 17.6%)  main      main.c    /bin/prog",
      "100 ( 65.4%)  10 ( 58.8%)  helper    util.h    /bin/prog",
      " 40 ( 26.1%)   4 ( 23.5%)  strlen    string.c  /lib/libc.so",
    }, "\n"), prof:all():report({ events = { "Ir", "Dr" } }))
  end)

  it("write numbers with thousands separators and shorten long C++ names", function()
    assert.are.equal("1,234,567", callgrind.report.commas(1234567))
    assert.are.equal("-1,000", callgrind.report.commas(-1000))
    assert.are.equal("999", callgrind.report.commas(999))
    assert.are.equal("std::vector<...>::push_back(std::pair<...> const&)", callgrind.report.shorten(
      "std::vector<std::pair<int, int>, std::allocator<std::pair<int, int> > >::push_back(std::pair<int, int> const&)",
      50))
    local long = string.rep("x", 100)
    local s = callgrind.report.shorten(long, 20)
    assert.are.equal(20, #s)
    assert.are.equal("xxxxxxxxxxxx...xxxxx", s)
  end)

  it("summarise a profile", function()
    local prof = load("parts.callgrind")
    assert.are.equal(table.concat({
      "profile   spec/fixtures/parts.callgrind",
      "creator   hand",
      "command   ./prog --flag",
      "pid       42",
      "version   1",
      "events    Ir Dr Dw",
      "derived   TotalRW",
      "totals    Ir 18, Dr 8, Dw 7",
      "size      1 functions, 0 calls",
      "          part 1; trigger Program termination; summary Ir 12, Dr 3",
      "          part 2; trigger --dump-every-bb=100; summary Dr 5, Ir 6, Dw 7",
      "warnings  1",
      "          spec/fixtures/parts.callgrind:25: totals: does not match the cost lines: Ir 7 written, 6 summed",
    }, "\n"), prof:summary())
  end)
end)
