-- Limits and the checks behind the assertions (callgrind.check_*), on the
-- hand-made profiles spec/fixtures/moved-old.callgrind (Ir 117, Dr 22) and
-- moved-new.callgrind (Ir 144, Dr 23), where parse went from 100 to 130 Ir, helper went away and fresh
-- is new. Every number is worked by hand from the texts.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"
local check = require "callgrind.check.limits"

local OLD = H.read_file("spec/fixtures/moved-old.callgrind")
local NEW = H.read_file("spec/fixtures/moved-new.callgrind")

local old = assert(callgrind.parse(OLD, "old"))
local new = assert(callgrind.parse(NEW, "new"))

local IR_TABLE = table.concat({
  "event  old  new        change",
  "   Ir  117  144  +27 (+23.1%)",
  "biggest changes in Ir (self):",
  "  old  new        change  function",
  "  100  130  +30 (+30.0%)  parse (/ci/b/src/main.c; /ci/b/build/prog)",
  "    7    0  -7 (-100.0%)  helper (/home/a/src/util.c; /home/a/build/prog)",
  "    0    4      +4 (new)  fresh (/ci/b/src/main.c; /ci/b/build/prog)",
  -- main and parse: 110 of 117 old Ir, 140 of 144 new
  "matched 2 functions: 94.0% of the old Ir, 97.2% of the new",
}, "\n")

describe("limits", function()
  it("are a percentage, a number, or both", function()
    assert.are.same({ increase = 5 }, check.parse_limit("5%"))
    assert.are.same({ increase = 2.5 }, check.parse_limit(" 2.5 %"))
    assert.are.same({ max = 1000 }, check.parse_limit(1000))
    assert.are.same({ increase = 5, max = 2e6 }, check.parse_limit({ "5%", 2e6 }))
    assert.are.same({ increase = 2.5, max = 10 }, check.parse_limit({ increase = "2.5%", max = 10 }))
  end)

  it("say what is wrong with a bad one", function()
    assert.are.same({ nil, "limit '5' is not a percentage like \"5%\"" }, { check.parse_limit("5") })
    assert.are.same({ nil, "limit must be \"N%\", a number or a table, got boolean" }, { check.parse_limit(true) })
    assert.are.same({ nil, "empty limit table" }, { check.parse_limit({}) })
  end)
end)

describe("callgrind.check_cost_at_most", function()
  local main = old:func("main")

  it("checks a function's inclusive cost by default, and says by how much it is over", function()
    assert.are.same({ false, "Ir of main (inclusive): 110 > 100 (+10.0%)\nprofile: old" },
      { callgrind.check_cost_at_most(100, main, "Ir") })
    assert.are.same({ true, "Ir of main (inclusive): 110 <= 110\nprofile: old" },
      { callgrind.check_cost_at_most(110, main, "Ir") })
  end)

  it("checks self cost with kind \"self\"", function()
    assert.are.same({ false, "Ir of main (self): 10 > 5 (+100.0%)\nprofile: old" },
      { callgrind.check_cost_at_most(5, main, "Ir", "self") })
  end)

  it("sums a selection's self costs", function()
    assert.are.same({ false, "Ir of 2 functions (main, parse; self, summed): 110 > 100 (+10.0%)\nprofile: old" },
      { callgrind.check_cost_at_most(100, old:find("^[mp]"), "Ir") })
  end)

  it("takes a profile's total", function()
    assert.are.same({ false, "Ir of the whole profile: 117 > 100 (+17.0%)\nprofile: old" },
      { callgrind.check_cost_at_most(100, old, "Ir") })
  end)

  it("fails on a profile that lost costs unless allow_warnings", function()
    local lossy = assert(callgrind.parse("events: Ir\nfn=main\n1 5 6\n2 7\n", "lossy", { lenient = true }))
    assert.are.same({ false, "lossy has 1 warning that lose costs (allow_warnings = true accepts them):\n"
      .. "  lossy:3: cost line has 2 costs but events: lists 1" },
      { callgrind.check_cost_at_most(100, lossy, "Ir") })
    assert.is_true((callgrind.check_cost_at_most(100, lossy, "Ir", nil, { allow_warnings = true })))
    -- a callgrind file cut short before its totals: line fails too
    local cut = assert(callgrind.parse("creator: callgrind-3.19.0\nevents: Ir\nfn=main\n1 5\n2 7\n", "cut"))
    local ok, msg = callgrind.check_cost_at_most(100, cut, "Ir")
    assert.is_false(ok)
    assert.are.equal("cut has 1 warning that lose costs (allow_warnings = true accepts them):",
      msg:match("^[^\n]*"))
    assert.are.equal(cut:warnings("truncated")[1], msg:match("\n  ([^\n]*)$"))
    -- cost lines that do not add up to totals: lost some
    local parts = assert(callgrind.load("spec/fixtures/parts.callgrind"))
    assert.are.same({ false, "spec/fixtures/parts.callgrind has 1 warning that lose costs (allow_warnings = true "
      .. "accepts them):\n  spec/fixtures/parts.callgrind:25: totals: does not match the cost lines: Ir 7 written, "
      .. "6 summed" }, { callgrind.check_cost_at_most(100, parts, "Ir") })
    -- a summary: mismatch loses nothing (summary: is the whole run's)
    local summary = assert(callgrind.parse("events: Ir\nsummary: 9\nfn=main\n1 5\n", "summary"))
    assert.are.equal(1, #summary:warnings("mismatch"))
    assert.is_true((callgrind.check_cost_at_most(100, summary, "Ir")))
  end)

  it("raises on misuse, naming the argument", function()
    assert.has_error(function() callgrind.check_cost_at_most("5", main, "Ir") end,
      "bad argument #1 to 'cost_at_most' (limit must be a number, got '5')")
    assert.has_error(function() callgrind.check_cost_at_most(5, {}, "Ir") end,
      "bad argument #2 to 'cost_at_most' (Function, Selection or Profile expected, got table)")
    assert.has_error(function() callgrind.check_cost_at_most(5, main, "Ir", "all") end,
      "bad argument #4 to 'cost_at_most' (expected \"self\" or \"inclusive\", got 'all')")
  end)
end)

describe("callgrind.check_calls_at_most", function()
  it("counts the calls into a function", function()
    assert.are.same({ false, "calls into parse (/home/a/src/main.c; /home/a/build/prog): 1 > 0 (1 call site)\n"
      .. "profile: old" }, { callgrind.check_calls_at_most(0, old:func("parse")) })
    assert.are.same({ true, "calls into parse (/home/a/src/main.c; /home/a/build/prog): 1 <= 1 (1 call site)\n"
      .. "profile: old" }, { callgrind.check_calls_at_most(1, old:func("parse")) })
  end)
end)

describe("callgrind.check_no_regression", function()
  it("fails past a relative limit with the limit, the table, the movers and the files", function()
    assert.are.same({ false, "1 limit exceeded:\n  Ir (total): 117 -> 144 +27 (+23.1%), limit +5%\n" .. IR_TABLE
      .. "\nold: old\nnew: new" }, { callgrind.check_no_regression(old, new, { Ir = "5%" }) })
  end)

  it("passes within the limit", function()
    assert.are.same({ true, "within the limits\n" .. IR_TABLE .. "\nold: old\nnew: new" },
      { callgrind.check_no_regression(old, new, { Ir = "25%" }) })
  end)

  it("checks an absolute bound, and both", function()
    local ok, msg = callgrind.check_no_regression(old, new, { Dr = 22 })
    assert.is_false(ok)
    assert.are.equal("1 limit exceeded:\n  Dr (total): 23 > 22 (+4.5%) (limit), was 22", msg:match("^[^\n]*\n[^\n]*"))
    assert.is_true((callgrind.check_no_regression(old, new, { Dr = { "10%", 30 } })))
    assert.is_false((callgrind.check_no_regression(old, new, { Dr = { "10%", 22 } })))
    assert.is_false((callgrind.check_no_regression(old, new, { Dr = { "4%", 30 } })))
  end)

  it("checks named functions' inclusive costs, and every function with \"*\"", function()
    local ok, msg = callgrind.check_no_regression(old, new, { functions = { parse = { Ir = "20%" } } })
    assert.is_false(ok)
    assert.are.equal("1 limit exceeded:\n  Ir of parse (inclusive): 100 -> 130 +30 (+30.0%), limit +20%",
      msg:match("^[^\n]*\n[^\n]*"))
    ok, msg = callgrind.check_no_regression(old, new, { functions = { ["*"] = { Ir = "25%" } } })
    assert.is_false(ok)
    assert.are.equal("2 limits exceeded:\n  Ir of main (inclusive): 110 -> 140 +30 (+27.3%), limit +25%\n"
      .. "  Ir of parse (inclusive): 100 -> 130 +30 (+30.0%), limit +25%", msg:match("^[^\n]*\n[^\n]*\n[^\n]*"))
    ok, msg = callgrind.check_no_regression(old, new, { functions = { parse = { Ir = "20%" } }, kind = "self" })
    assert.is_false(ok)
    assert.are.equal("  Ir of parse (self): 100 -> 130 +30 (+30.0%), limit +20%", msg:match("\n([^\n]*)"))
  end)

  it("reports a decrease beyond the limit as an improvement, or fails on it when asked", function()
    local ok, msg = callgrind.check_no_regression(new, old, { Ir = "5%" })
    assert.is_true(ok)
    assert.are.equal("within the limits\nimproved beyond the limits (1):\n"
      .. "  Ir (total): 144 -> 117 -27 (-18.8%), beyond -5%", msg:match("^[^\n]*\n[^\n]*\n[^\n]*"))
    ok, msg = callgrind.check_no_regression(new, old, { Ir = "5%", fail_on_improvement = true })
    assert.is_false(ok)
    assert.are.equal("1 limit exceeded:\n  Ir (total): 144 -> 117 -27 (-18.8%), beyond -5%",
      msg:match("^[^\n]*\n[^\n]*"))
  end)

  it("says when an event or a function is in neither profile", function()
    local ok, msg = callgrind.check_no_regression(old, new, { Nope = "5%", functions = { nothere = { Ir = "1%" } } })
    assert.is_false(ok)
    assert.are.equal("2 limits exceeded:\n  event Nope: not in both profiles (old: Ir Dr; new: Ir Dr)\n"
      .. "  function nothere: in neither profile (inlined, or outside toggle_collect?)\nold: old\nnew: new", msg)
  end)

  it("raises on a malformed limit, naming it", function()
    assert.has_error(function() callgrind.check_no_regression(old, new, { Ir = "5" }) end,
      "bad argument #3 to 'no_regression' (Ir: limit '5' is not a percentage like \"5%\")")
    assert.has_error(function() callgrind.check_no_regression(old, new, "5%") end,
      "bad argument #3 to 'no_regression' (table of limits expected, got '5%')")
  end)
end)

describe("limits that cannot fail", function()
  local main = old:func("main")

  it("are argument errors: NaN, infinite, negative, or not a number or percentage", function()
    local bad = {
      { 0 / 0, "limit is NaN: it would let every value pass" },
      { math.huge, "limit must be finite, got inf" },
      { -math.huge, "limit must be finite, got -inf" },
      { -1, "limit must not be negative (a cost or count is never below 0), got -1" },
    }
    for _, c in ipairs(bad) do
      assert.has_error(function() callgrind.check_cost_at_most(c[1], main, "Ir") end,
        "bad argument #1 to 'cost_at_most' (" .. c[2] .. ")")
      assert.has_error(function() callgrind.check_calls_at_most(c[1], main) end,
        "bad argument #1 to 'calls_at_most' (" .. c[2] .. ")")
    end
    assert.has_error(function() callgrind.check_cost_at_most(nil, main, "Ir") end,
      "bad argument #1 to 'cost_at_most' (limit must be a number, got no value)")
    -- in a table of limits, each one
    local cases = {
      { { Ir = 0 / 0 }, "Ir: limit is NaN: it would let every value pass" },
      { { Ir = -5 }, "Ir: limit must not be negative (a cost is never below 0), got -5" },
      { { Ir = { "5%", 0 / 0 } }, "Ir: limit is NaN: it would let every value pass" },
      { { Ir = "nan%" }, "Ir: limit 'nan%' is not a percentage like \"5%\"" },
      { { Ir = "-5%" }, "Ir: limit '-5%' is not a percentage like \"5%\"" },
      { { Ir = "inf%" }, "Ir: limit 'inf%' is not a percentage like \"5%\"" },
      { { Ir = ("9"):rep(400) .. "%" }, "Ir: limit '" .. ("9"):rep(400) .. "%' is not finite" },
      { { Ir = true }, "Ir: limit must be \"N%\", a number or a table, got boolean" },
      { { Ir = { inc = "5%" } }, "Ir: unknown key 'inc' in a limit (keys: 1, 2, increase, max)" },
      { { functions = { parse = { Ir = 0 / 0 } } }, "functions.parse.Ir: limit is NaN: it would let every value pass" },
      { { functions = { parse = "5%" } }, "functions.parse must be a table of limits, got '5%'" },
    }
    for _, c in ipairs(cases) do
      assert.has_error(function() callgrind.check_no_regression(old, new, c[1]) end,
        "bad argument #3 to 'no_regression' (" .. c[2] .. ")")
    end
  end)

  it("catch a 10 -> 1,000,000 regression that a NaN limit let pass", function()
    local a = assert(callgrind.parse("events: Ir\nfn=main\n1 10\n", "a"))
    local b = assert(callgrind.parse("events: Ir\nfn=main\n1 1000000\n", "b"))
    assert.is_false((callgrind.check_no_regression(a, b, { Ir = "5%" })))
    assert.is_false((callgrind.check_cost_at_most(10, b, "Ir")))
  end)

  it("read a calls= count of 2^63 or more as unsigned, never negative", function()
    local prof = assert(callgrind.parse(table.concat({
      "events: Ir", "fn=main", "1 5", "cfn=f", "calls=18446744073709551614 1", "1 3",
      "cfn=g", "calls=9223372036854775808 1", "1 3", "cfn=g", "calls=9223372036854775807 2", "2 3",
      "fn=f", "1 3", "fn=g", "1 6", "",
    }, "\n"), "big"))
    local call = prof:func("f"):callers()()
    assert.are.equal(18446744073709551614.0, call.count)
    assert.are.equal("float", math.type(call.count))
    assert.matches("(18446744073709551614 calls at", tostring(call), 1, true)
    local ok, msg = callgrind.check_calls_at_most(10, prof:func("f"))
    assert.is_false(ok)
    assert.are.equal("calls into f: 18,446,744,073,709,551,616 > 10 (+184467440737095516160.0%) (1 call site)",
      msg:match("^[^\n]*"))
    -- two counts whose sum passes 2^63: summed as floats, not wrapped
    ok, msg = callgrind.check_calls_at_most(10, prof:func("g"))
    assert.is_false(ok)
    assert.are.equal("calls into g: 18,446,744,073,709,551,616 > 10", msg:match("^[^\n(]*%d"))
    -- up to 2^63-1 a count is an integer
    local exact = assert(callgrind.parse("events: Ir\nfn=main\ncfn=f\ncalls=9223372036854775807 1\n1 3\nfn=f\n1 3\n"))
    assert.are.equal(math.maxinteger, exact:func("f"):callers()().count)
  end)
end)

describe("errors in the user's words", function()
  local luassert = require "callgrind.check.luassert"

  -- The error of f, and the line the call in f is on.
  local function raised(f)
    local ok, err = pcall(f)
    assert(not ok, "no error")
    return tostring(err)
  end

  it("raise at the spec's own line, naming the assertion or check called", function()
    local here = "spec/check_spec.lua:"
    local line = debug.getinfo(1, "l").currentline + 1
    local err = raised(function() luassert.cost_at_most(0 / 0, old, "Ir") end)
    assert.are.equal(here .. line .. ": bad argument #1 to 'cost_at_most' (limit is NaN: it would let every value "
      .. "pass)", err)
    line = debug.getinfo(1, "l").currentline + 1
    err = raised(function() luassert.cost_at_most(100, old:func("main"), "Irr") end)
    assert.are.equal(here .. line .. ": bad argument #3 to 'cost_at_most' (unknown event 'Irr'",
      err:match("^[^;]*"))
    line = debug.getinfo(1, "l").currentline + 1
    err = raised(function() luassert.calls_at_most(10, old:func("inlined_away")) end)
    assert.are.equal(here .. line .. ": bad argument #2 to 'calls_at_most' (Function expected, got nil (a function "
      .. "looked up with prof:func(name) that is not in the profile? pass { prof, \"name\" } to have it named, with "
      .. "the closest names))", err)
    line = debug.getinfo(1, "l").currentline + 1
    err = raised(function() luassert.no_regression(old, new, { Ir = -1 }) end)
    assert.are.equal(here .. line .. ": bad argument #3 to 'no_regression' (Ir: limit must not be negative (a cost "
      .. "is never below 0), got -1)", err)
    local dir = os.tmpname()
    os.remove(dir)
    line = debug.getinfo(1, "l").currentline + 1
    err = raised(function() luassert.within_baseline("b", old, { Ir = 0 / 0 }, { dir = dir }) end)
    assert.is_nil(io.open(dir))  -- raised before the directory was made
    assert.are.equal(here .. line .. ": bad argument #3 to 'within_baseline' (Ir: limit is NaN: it would let every "
      .. "value pass)", err)
    assert.are.equal(here .. line .. ": bad argument #4 to 'within_baseline' (unknown option 'dri'; options: "
      .. "allow_warnings, dir, fail_on_improvement, kind, match, quiet, same_command, top, update)",
      raised(function() luassert.within_baseline("b", old, {}, { dri = "x" }) end):gsub(":%d+:", ":" .. line .. ":"))
    assert.matches("^" .. here .. line .. ": ", err)
    -- the checks called directly, too
    line = debug.getinfo(1, "l").currentline + 1
    err = raised(function() callgrind.check_cost_at_most(100, old, "Irr") end)
    assert.matches("^" .. here .. line .. ": bad argument #3 to 'cost_at_most' %(unknown event 'Irr'", err)
  end)

  it("name a function that is not in the profile, with the closest names and why it may be missing", function()
    local prof = assert(callgrind.parse(table.concat({
      "events: Ir", "fn=main", "1 10", "cfn=parse_line", "calls=3 1", "1 30", "fn=parse_line", "1 30",
      "fn=parser", "1 1", "fn=pause", "1 1", "fn=unrelated_function", "1 1", "",
    }, "\n"), "prog.out"))
    local why = "\n(was it inlined? build with -fno-inline or mark it noinline; or left out of the collection? with "
      .. "toggle_collect only the named functions and what they call are counted)"
    assert.are.same({ false, "function parse is not in the profile prog.out; closest names: parser, parse_line, "
      .. "pause" .. why }, { callgrind.check_calls_at_most(10, { prof, "parse" }) })
    assert.are.same({ false, "function parse is not in the profile prog.out; closest names: parser, parse_line, "
      .. "pause" .. why }, { callgrind.check_cost_at_most(10, { prof, "parse" }, "Ir") })
    -- found, it is the function
    assert.are.same({ true, "calls into parse_line: 3 <= 10 (1 call site)\nprofile: prog.out" },
      { callgrind.check_calls_at_most(10, { prof, "parse_line" }) })
    assert.are.same({ "parser", "parse_line", "pause" }, check.closest_names(prof, "parse"))
    assert.are.same({}, check.closest_names(prof, "zzzzzzzz"))
    -- in a table of limits
    local _, msg = callgrind.check_no_regression(prof, prof, { functions = { parse = { Ir = "5%" } } })
    assert.are.equal("  function parse: in neither profile; closest names: parser, parse_line, pause (inlined, or "
      .. "outside toggle_collect?)", msg:match("\n[^\n]*"):sub(2))
    -- luassert says the same
    local err = raised(function() luassert.calls_at_most(10, { prof, "parse" }) end)
    assert.matches("function parse is not in the profile prog.out; closest names: parser, parse_line, pause",
      err, 1, true)
  end)

  it("show the movers in the event of the limit that failed", function()
    local _, msg = callgrind.check_no_regression(old, new, { Ir = "50%", Dr = "1%" })
    assert.are.equal(table.concat({
      "1 limit exceeded:",
      "  Dr (total): 22 -> 23 +1 (+4.5%), limit +1%",
      "event  old  new        change",
      "   Ir  117  144  +27 (+23.1%)",
      "   Dr   22   23    +1 (+4.5%)",
      "biggest changes in Dr (self):",
    }, "\n"), msg:match("^(.-)\n  old"))
  end)
end)
