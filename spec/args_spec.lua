-- callgrind.args: the one argument checker. Each check words its error as
-- "bad argument #N to 'NAME' (...)" and raises it at the caller of the
-- public function (level 2 from the function that calls the check).
local callgrind = require "callgrind"
local args = require "callgrind.args"

local prof = assert(callgrind.parse("events: Ir Dr\nfn=main\n1 5 2\nfn=f\n2 3 1\n", "a.out"))
prof:define("Both", "Ir + Dr")
local other = assert(callgrind.parse("events: Ir\nfn=main\n1 1\n", "b.out"))

-- A public function "top" of this file, so an error's position can be
-- checked: a check called in it blames its caller's line.
local function top(n) return args.count(n, "top", 1) end

describe("args.fail", function()
  it("words the error the way Lua's own argument errors are worded", function()
    assert.has_error(function() args.fail("top", 2, "count must not be negative") end,
      "bad argument #2 to 'top' (count must not be negative)")
  end)

  it("raises at the caller of the function that checks", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() return top(-1) end)
    assert.is_false(ok)
    assert.are.equal(("spec/args_spec.lua:%d: bad argument #1 to 'top' (count must not be negative, got -1)")
      :format(line), err)
  end)
end)

describe("args.options", function()
  local SPEC = { depth = "number", direction = "string", ev = "string|number", threshold = "number" }

  it("returns the table, or a new empty one for nil", function()
    local t = { depth = 2 }
    assert.are.equal(t, args.options(t, "tree", 1, SPEC))
    assert.are.same({}, args.options(nil, "tree", 1, SPEC))
  end)

  it("refuses an unknown key, listing the options sorted", function()
    assert.has_error(function() args.options({ dept = 2 }, "tree", 1, SPEC) end,
      "bad argument #1 to 'tree' (unknown option 'dept'; options: depth, direction, ev, threshold)")
    assert.has_error(function() args.options({ 5 }, "tree", 3, SPEC) end,
      "bad argument #3 to 'tree' (unknown option 1; options: depth, direction, ev, threshold)")
    assert.has_error(function() args.options({ x = 1 }, "f", 1, {}) end,
      "bad argument #1 to 'f' (unknown option 'x'; options: none)")
  end)

  it("checks each value's type, one of several joined by |", function()
    assert.has_error(function() args.options({ depth = "2" }, "tree", 1, SPEC) end,
      "bad argument #1 to 'tree' (option 'depth' must be number, got '2')")
    assert.has_error(function() args.options({ ev = true }, "tree", 1, SPEC) end,
      "bad argument #1 to 'tree' (option 'ev' must be string or number, got true)")
    assert.are.same({ ev = 2 }, args.options({ ev = 2 }, "tree", 1, SPEC))
    assert.are.same({ x = print }, args.options({ x = print }, "f", 1, { x = "any" }))
  end)

  it("refuses what is not a table", function()
    assert.has_error(function() args.options("Ir", "tree", 1, SPEC) end,
      "bad argument #1 to 'tree' (table expected, got 'Ir')")
  end)
end)

describe("args.option", function()
  it("takes one of a list of strings, or the default for nil", function()
    assert.are.equal("callers", args.option("callers", "tree", 1, { "callees", "callers" }, "callees"))
    assert.are.equal("callees", args.option(nil, "tree", 1, { "callees", "callers" }, "callees"))
  end)

  it("names the choices when the value is none of them", function()
    assert.has_error(function() args.option("up", "tree", 1, { "callees", "callers" }) end,
      "bad argument #1 to 'tree' (invalid option 'up'; expected one of: callees, callers)")
    assert.has_error(function() args.option(nil, "group", 1, { "file", "object" }) end,
      "bad argument #1 to 'group' (invalid option no value; expected one of: file, object)")
  end)
end)

describe("args.event", function()
  it("takes a base event, a derived one, or an index", function()
    assert.are.equal("Dr", args.event(prof, "Dr", "top", 2))
    assert.are.equal("Both", args.event(prof, "Both", "top", 2))
    -- an index stands for its name, so every output names the event
    assert.are.equal("Dr", args.event(prof, 2, "top", 2))
  end)

  it("lists the events there are when the name is none of them", function()
    assert.has_error(function() args.event(prof, "Irr", "top", 2) end,
      "bad argument #2 to 'top' (unknown event 'Irr'; events: Ir Dr, derived: Both)")
    assert.has_error(function() args.event(prof, 3, "top", 2) end,
      "bad argument #2 to 'top' (event index 3 out of range 1..2)")
  end)

  it("says a kind given where the event goes is a kind", function()
    assert.has_error(function() args.event(prof, "inclusive", "top", 2) end,
      "bad argument #2 to 'top' ('inclusive' is a kind, not an event: the event comes first, "
      .. "as in top(..., \"Ir\", \"inclusive\"); events: Ir Dr, derived: Both)")
  end)

  it("is the first event when none is given (event_or_first)", function()
    assert.are.equal("Ir", args.event_or_first(prof, nil, "top", 2))
    assert.are.equal("Dr", args.event_or_first(prof, "Dr", "top", 2))
  end)
end)

describe("args.kind", function()
  it("is \"self\" by default, or \"inclusive\"", function()
    assert.are.equal("self", args.kind(nil, "top", 3))
    assert.are.equal("self", args.kind("self", "top", 3))
    assert.are.equal("inclusive", args.kind("inclusive", "top", 3))
  end)

  it("refuses anything else", function()
    assert.has_error(function() args.kind("incl", "top", 3) end,
      "bad argument #3 to 'top' (expected \"self\" or \"inclusive\", got 'incl')")
    assert.has_error(function() args.kind(1, "sum", 2) end,
      "bad argument #2 to 'sum' (expected \"self\" or \"inclusive\", got 1)")
  end)
end)

describe("args.count", function()
  it("takes a whole number, a float with an integral value as an integer", function()
    assert.are.equal(0, args.count(0, "top", 1))
    assert.are.equal(3, args.count(3.0, "top", 1))
    assert.are.equal("integer", math.type(args.count(3.0, "top", 1)))
  end)

  it("refuses fractions, negatives and non-numbers", function()
    assert.has_error(function() args.count(2.5, "top", 1) end,
      "bad argument #1 to 'top' (count must be a whole number, got 2.5)")
    assert.has_error(function() args.count(-1, "top", 1) end,
      "bad argument #1 to 'top' (count must not be negative, got -1)")
    assert.has_error(function() args.count("3", "top", 1) end,
      "bad argument #1 to 'top' (number expected, got '3')")
  end)
end)

describe("args.check_type", function()
  it("takes a value of the type, or nil when optional", function()
    assert.are.equal("x", args.check_type("x", "string", "find", 1))
    assert.is_nil(args.check_type(nil, "string", "find", 1, true))
  end)

  it("names the type it wants and what it got", function()
    assert.has_error(function() args.check_type(nil, "string", "find", 1) end,
      "bad argument #1 to 'find' (string expected, got no value)")
    assert.has_error(function() args.check_type({}, "function", "filter", 1) end,
      "bad argument #1 to 'filter' (function expected, got table)")
  end)
end)

describe("args.profile, args.func and args.functions", function()
  it("take a Profile, a Function (of a given profile) and an array of a profile's functions", function()
    assert.are.equal(prof, args.profile(prof, "diff", 1))
    local main = prof:func("main")
    assert.are.equal(main, args.func(main, "calls_at_most", 2))
    assert.are.equal(main, args.func(main, "calls_at_most", 2, prof))
    local list = { main, prof:func("f") }
    assert.are.equal(list, args.functions(list, prof, "select", 1))
    assert.are.equal(3, #args.functions(prof:all(), prof, "select", 1) + 1)
  end)

  it("say what they got instead", function()
    assert.has_error(function() args.profile({}, "diff", 2) end,
      "bad argument #2 to 'diff' (Profile expected, got table)")
    assert.has_error(function() args.profile(prof:func("main"), "diff", 1) end,
      "bad argument #1 to 'diff' (Profile expected, got userdata)")
    assert.has_error(function() args.func(prof, "calls_at_most", 2) end,
      "bad argument #2 to 'calls_at_most' (Function expected, got userdata)")
    assert.has_error(function() args.func(other:func("main"), "calls_at_most", 2, prof) end,
      "bad argument #2 to 'calls_at_most' (a Function of another profile)")
    assert.has_error(function() args.functions({ prof:func("main"), other:func("main") }, prof, "write", 2,
      "opts.functions") end, "bad argument #2 to 'write' (opts.functions[2] is not a function of this profile)")
    assert.has_error(function() args.functions(5, prof, "select", 1) end,
      "bad argument #1 to 'select' (functions must be a Selection or an array of functions, got 5)")
  end)
end)

describe("args.show", function()
  it("quotes strings and names other values by type", function()
    assert.are.equal("'x'", args.show("x"))
    assert.are.equal("2.5", args.show(2.5))
    assert.are.equal("false", args.show(false))
    assert.are.equal("no value", args.show(nil))
    assert.are.equal("table", args.show({}))
  end)
end)
