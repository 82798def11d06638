-- callgrind.report: the tables people read. spec/fixtures/report.callgrind
-- is hand-written: main (100 Ir, 10 Dr) calls work 3 times (1,200 Ir and
-- 300 Dr inclusive), work (1,000, 250) calls helper (200, 50). Totals
-- 1,300 Ir and 310 Dr; the self and inclusive numbers are callgrind_annotate's
-- (3.22, with and without --inclusive=yes), the shares worked out by hand
-- (1000 / 1300 = 76.9%, 300 / 310 = 96.8%).
local callgrind = require "callgrind"

local prof = assert(callgrind.load("spec/fixtures/report.callgrind"))

local function lines(...) return table.concat({ ... }, "\n") end

describe("sel:report", function()
  it("prints self costs with their share of the total, costliest first, by default", function()
    assert.are.equal(lines(
      "       self Ir  function  file    object",
      "1,000 ( 76.9%)  work      lib.c   libc.so",
      "  200 ( 15.4%)  helper    lib.c   libc.so",
      "  100 (  7.7%)  main      main.c  prog"), prof:top(3):report())
  end)

  it("prints inclusive costs of several events, and leaves out the columns asked", function()
    assert.are.equal(lines(
      "       incl Ir       incl Dr  function  file",
      "1,300 (100.0%)  310 (100.0%)  main      main.c",
      "1,200 ( 92.3%)  300 ( 96.8%)  work      lib.c",
      "  200 ( 15.4%)   50 ( 16.1%)  helper    lib.c"),
      prof:top(3, "Ir", "inclusive"):report({ events = { "Ir", "Dr" }, object = false }))
  end)

  it("prints plain numbers without percent, and the first rows with a count of the rest", function()
    assert.are.equal(lines(
      "self Ir  function  object",
      "    100  main      prog",
      "  1,000  work      libc.so",
      "... 1 more functions (sel:report() prints them all)"),
      prof:all():report({ percent = false, file = false, limit = 2 }))
  end)

  it("is what tostring prints", function()
    assert.are.equal(prof:top(3):report(), tostring(prof:top(3)))
  end)

  it("refuses an unknown option, a wrong kind and an unknown event", function()
    assert.has_error(function() prof:all():report({ evnts = { "Ir" } }) end,
      "bad argument #1 to 'report' (unknown option 'evnts'; options: event, events, file, kind, limit, "
      .. "object, percent, width)")
    assert.has_error(function() prof:all():report({ kind = "incl" }) end,
      "bad argument #1 to 'report' (expected \"self\" or \"inclusive\", got 'incl')")
    assert.has_error(function() prof:all():report({ event = "Irr" }) end,
      "bad argument #1 to 'report' (unknown event 'Irr'; events: Ir Dr)")
  end)
end)

describe("the printouts of edges and groups", function()
  it("print a function's callees and callers with their calls and inclusive cost", function()
    assert.are.equal(lines(
      "callees of main",
      "calls              Ir  function",
      "    3  1,200 ( 92.3%)  work"), tostring(prof:func("main"):callee_functions()))
    assert.are.equal(lines(
      "callers of work",
      "calls              Ir  function",
      "    3  1,200 ( 92.3%)  main"), tostring(prof:func("work"):caller_functions()))
  end)

  it("print self cost grouped by file and by object", function()
    assert.are.equal(lines(
      "          Dr  file",
      "300 ( 96.8%)  lib.c",
      " 10 (  3.2%)  main.c"), tostring(prof:group("file", "Dr")))
    assert.are.equal(lines(
      "            Ir  object",
      "1,200 ( 92.3%)  libc.so",
      "  100 (  7.7%)  prog"), tostring(prof:group("object")))
  end)
end)

describe("prof:summary", function()
  it("says what the profile holds", function()
    assert.are.equal(lines(
      "profile   spec/fixtures/report.callgrind",
      "version   1",
      "events    Ir Dr",
      "totals    Ir 1,300, Dr 310",
      "size      3 functions, 2 calls",
      "          part 1"), prof:summary())
  end)
end)

describe("callgrind.model.report", function()
  it("offers commas and shorten", function()
    assert.are.equal("1,234,567", callgrind.report.commas(1234567))
    assert.are.equal("std::vector<...>::push_back(int const&)",
      callgrind.report.shorten("std::vector<int, std::allocator<int> >::push_back(int const&)", 40))
  end)
end)
