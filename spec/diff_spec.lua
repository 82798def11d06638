-- callgrind.diff on hand-made profiles: an old build under /home/a and the
-- same program built under /ci/b, where parse got slower, helper went away
-- and fresh is new. Every number below is worked by hand from the texts.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local OLD = H.read_file("spec/fixtures/moved-old.callgrind")
local NEW = H.read_file("spec/fixtures/moved-new.callgrind")

local old = assert(callgrind.parse(OLD, "old"))
local new = assert(callgrind.parse(NEW, "new"))

local function row_values(rows)
  local out = {}
  for i, r in ipairs(rows) do out[i] = { r.name, r.old, r.new, r.delta, r.percent } end
  return out
end

describe("callgrind.check.diff", function()
  local d = callgrind.diff(old, new)

  it("gives the totals of an event in both profiles", function()
    assert.are.same({ 117, 144 }, { d:total("Ir") })
    assert.are.same({ 22, 23 }, { d:total("Dr") })
  end)

  it("matches functions by name and file and object without directories, largest change first", function()
    assert.are.same({
      { "parse", 100, 130, 30, 30.0 },
      { "helper", 7, 0, -7, -100.0 },
      { "fresh", 0, 4, 4, nil },
      { "main", 10, 10, 0, 0.0 },
    }, row_values(d:functions("Ir")))
    local rows = d:functions("Ir")
    assert.are.equal(old:func("parse"), rows[1].old_fn)
    assert.are.equal(new:func("parse"), rows[1].new_fn)
    assert.is_nil(rows[2].new_fn)
    assert.is_nil(rows[3].old_fn)
  end)

  it("compares inclusive costs with kind \"inclusive\" (ties by name)", function()
    assert.are.same({
      { "main", 110, 140, 30, 100 * 30 / 110 },
      { "parse", 100, 130, 30, 30.0 },
      { "helper", 7, 0, -7, -100.0 },
      { "fresh", 0, 4, 4, nil },
    }, row_values(d:functions("Ir", "inclusive")))
  end)

  it("prints the totals per event and the biggest movers as an aligned table", function()
    assert.are.equal(table.concat({
      "event  old  new        change",
      "   Ir  117  144  +27 (+23.1%)",
      "   Dr   22   23    +1 (+4.5%)",
      "biggest changes in Ir (self):",
      "  old  new        change  function",
      "  100  130  +30 (+30.0%)  parse (/ci/b/src/main.c; /ci/b/build/prog)",
      "    7    0  -7 (-100.0%)  helper (/home/a/src/util.c; /home/a/build/prog)",
      "    0    4      +4 (new)  fresh (/ci/b/src/main.c; /ci/b/build/prog)",
      -- main and parse: 110 of 117 old Ir, 140 of 144 new
      "matched 2 functions: 94.0% of the old Ir, 97.2% of the new",
    }, "\n"), tostring(d))
    assert.are.equal(table.concat({
      "event  old  new      change",
      "   Dr   22   23  +1 (+4.5%)",
      "biggest changes in Dr (inclusive):",
      "  old  new      change  function",
      "   22   23  +1 (+4.5%)  main (/ci/b/src/main.c; /ci/b/build/prog)",
      -- fresh, the one unmatched function, costs no Dr
      "matched 2 functions: 100.0% of the old Dr, 100.0% of the new",
    }, "\n"), d:report({ events = { "Dr" }, kind = "inclusive", top = 1 }))
  end)

  it("uses opts.match as the key when given", function()
    local by_object = callgrind.diff(old, new, { match = function(fn) return fn.object end })
    -- every function of a side lands on its one object: reported, not summed
    assert.are.same({
      "old profile: 3 functions share the key of main, compared apart: main (/home/a/src/main.c; /home/a/build/prog), "
        .. "parse (/home/a/src/main.c; /home/a/build/prog), helper (/home/a/src/util.c; /home/a/build/prog)",
      "new profile: 3 functions share the key of main, compared apart: main (/ci/b/src/main.c; /ci/b/build/prog), "
        .. "parse (/ci/b/src/main.c; /ci/b/build/prog), fresh (/ci/b/src/main.c; /ci/b/build/prog)",
    }, by_object.collisions)
    local by_name = callgrind.diff(old, new, { match = function(fn) return fn.name end })
    assert.are.same({}, by_name.collisions)
    assert.are.equal(4, #by_name:functions("Ir"))
  end)

  it("reports two functions with the same key instead of summing them", function()
    local two = assert(callgrind.parse(table.concat({
      "events: Ir", "ob=/x/prog", "fl=/x/a/util.c", "fn=f", "1 5", "fl=/x/b/util.c", "fn=f", "1 6", "",
    }, "\n"), "two"))
    local one = assert(callgrind.parse("events: Ir\nob=/y/prog\nfl=/y/a/util.c\nfn=f\n1 5\n", "one"))
    local d2 = callgrind.diff(two, one)
    assert.are.same({ "old profile: 2 functions share the key of f, compared apart: f (/x/a/util.c; /x/prog), "
      .. "f (/x/b/util.c; /x/prog)" }, d2.collisions)
    assert.are.same({ { "f", 6, 0, -6, -100.0 }, { "f", 5, 0, -5, -100.0 }, { "f", 0, 5, 5, nil } },
      row_values(d2:functions("Ir")))
    assert.matches("old profile: 2 functions share the key of f", tostring(d2), 1, true)
  end)

  it("with match = \"name\", tells same-named functions apart by file and the program, so two builds still match",
    function()
    -- two builds: a static helper in two files of each, the program named apart
    local function build(exe, a, b)
      return assert(callgrind.parse(table.concat({ "events: Ir", "cmd: ./" .. exe, "ob=/b/" .. exe, "fl=/s/main.c",
        "fn=main", "1 1", "fl=/s/a.c", "fn=helper", "1 " .. a, "fl=/s/b.c", "fn=helper", "1 " .. b, "" }, "\n"), exe))
    end
    local builds = callgrind.diff(build("prog-O0", 10, 20), build("prog-O2", 4, 8), { match = "name" })
    local m = builds:matched("Ir")
    assert.are.equal(3, m.functions)
    assert.are.equal(1, m.old_share)
    assert.are.equal(1, m.new_share)
    local by = {}
    for _, r in ipairs(builds:movers("Ir")) do by[r.name .. " " .. r.old] = r.new end
    assert.are.same({ ["helper 20"] = 8, ["helper 10"] = 4, ["main 1"] = 1 }, by)
  end)

  it("works on derived events both profiles have", function()
    old:define("Mem2", "Ir + 2 Dr")
    new:define("Mem2", "Ir + 2 Dr")
    assert.are.same({ 117 + 44, 144 + 46 }, { d:total("Mem2") })
  end)

  it("raises on misuse, naming the argument", function()
    assert.has_error(function() callgrind.diff(1, new) end, "bad argument #1 to 'diff' (Profile expected, got 1)")
    assert.has_error(function() callgrind.diff(old, "x") end, "bad argument #2 to 'diff' (Profile expected, got 'x')")
    assert.has_error(function() callgrind.diff(old, new, { match = 1 }) end,
      "bad argument #3 to 'diff' (option 'match' must be string or function, got 1)")
    assert.has_error(function() callgrind.diff(old, new, { match = "object" }) end,
      "bad argument #3 to 'diff' (opts.match must be a function or one of: name, name+file, name+file+object; "
      .. "got 'object')")
    assert.has_error(function() callgrind.diff(old, new, { macth = 1 }) end,
      "bad argument #3 to 'diff' (unknown option 'macth'; options: match)")
    assert.has_error(function() d:report({ top = 3, ev = "Ir" }) end,
      "bad argument #1 to 'report' (unknown option 'ev'; options: event, events, kind, top)")
    assert.has_error(function() d:total("Nope") end,
      "bad argument #1 to 'total' (unknown event 'Nope' in the old profile)")
    assert.has_error(function() d:movers() end,
      "bad argument #1 to 'movers' (an event is needed (the old profile's: " .. table.concat(old.events, " ") .. "))")
    assert.has_error(function() d:movers("Ir", "both") end,
      "bad argument #2 to 'movers' (expected \"self\" or \"inclusive\", got 'both')")
    -- its name before 0.2.0 gives the same rows
    assert.are.same(d:movers("Ir"), d:functions("Ir"))
    assert.has_error(function() callgrind.diff(old, new, { match = function() return 1 end }):functions("Ir") end)
  end)
end)
