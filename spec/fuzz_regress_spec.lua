-- Regressions found by the fuzzers of fuzz/ (make fuzz): each fixture in
-- spec/fixtures/fuzz/ is a minimized reproducer, named after what it
-- exercises; its comment says what went wrong. Each one is loaded strictly
-- and leniently and the exact outcome asserted: the error with its line, or
-- what the profile holds (functions with their self costs, calls, parts,
-- totals, warnings), and that every function's lines add up to its self
-- cost (the loader and the cursor that re-parses blocks must agree).
local callgrind = require "callgrind"

local FIX = "spec/fixtures/fuzz/"

-- A loaded profile in a form `same` can compare.
local function shape(prof)
  local fns, calls, parts = {}, {}, 0
  for fn in prof:functions() do
    local self, sum = fn:self(), {}
    for line in fn:lines() do
      for ev, v in pairs(line:cost()) do sum[ev] = (sum[ev] or 0) + v end
    end
    for _, ev in ipairs(prof.events) do
      assert.are.equal(self[ev], sum[ev] or 0, fn.name .. " " .. ev)
    end
    fns[#fns + 1] = { fn.name, fn.file, fn.object, self }
    for call in fn:calls() do
      calls[#calls + 1] = { call.caller.name, call.callee.name, call.count, call:cost() }
    end
  end
  for _ in prof:parts() do parts = parts + 1 end
  -- one event at a time, by name and by index, agrees with the table
  local totals = prof:totals()
  for i, ev in ipairs(prof.events) do
    assert.are.equal(totals[ev], prof:total(ev))
    assert.are.equal(totals[ev], prof:total(i))
  end
  return {
    events = prof.events, totals = prof:totals(), fns = fns, calls = calls,
    parts = parts, warnings = prof:warnings(),
  }
end

-- fixture -> expected outcome, strict and lenient: either { err = msg } or
-- the shape of the profile (warnings name the fixture's path).
local cases = {
  ["composite-repeated.callgrind"] = function()
    local s = {
      events = { "Ir" }, totals = { Ir = 10 },
      fns = {
        { "outer'inner", nil, nil, { Ir = 5 } },
        { "inner'outer", nil, nil, { Ir = 5 } },
      },
      calls = { { "outer'inner", "inner'outer", 1, { Ir = 4 } } },
      parts = 1, warnings = {},
    }
    return s, s
  end,
  ["events-after-functions.callgrind"] = function(path)
    -- strictly: the calls= line (7) has no cost line after it, the events:
    -- line (8) comes instead; leniently the call is dropped, the events: line
    -- after body lines starts part 2, and c keeps its own cost
    return { err = path .. ":8: expected the cost line of the calls= at line 7, found 'events: Ir'" }, {
      events = { "Ir" }, totals = { Ir = 2 },
      fns = {
        { "a", nil, nil, { Ir = 0 } },
        { "b", nil, nil, { Ir = 0 } },
        { "c", nil, nil, { Ir = 2 } },
      },
      calls = {}, parts = 2,
      warnings = { path .. ":7: calls= skipped: the line after it is not its cost line" },
    }
  end,
  ["parts-total-per-event.callgrind"] = function()
    local ev = { "A", "B", "C", "D", "E", "F", "G", "H" }
    local totals = {}
    for i, e in ipairs(ev) do totals[e] = 10 * i end
    local s = {
      events = ev, totals = totals,
      fns = { { "f", nil, nil, totals } },
      calls = {}, parts = 10, warnings = {},
    }
    return s, s
  end,
  ["separator-high-id.callgrind"] = function(path)
    local s = {
      events = { "Ir" }, totals = { Ir = 15 },
      fns = {
        { "high", nil, nil, { Ir = 3 } },
        { "(16777215)", nil, nil, { Ir = 5 } },
        { "again", nil, nil, { Ir = 7 } },
      },
      calls = {}, parts = 3,
      warnings = { path .. ":10: function id (16777215) is used but never defined" },
    }
    return s, s
  end,
}

describe("fuzz regressions", function()
  local names = {}
  for name in pairs(cases) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local path = FIX .. name
    local strict, lenient = cases[name](path)
    for _, mode in ipairs({ { "strictly", false, strict }, { "leniently", true, lenient } }) do
      local how, opt, want = mode[1], mode[2], mode[3]
      it(name .. " loads " .. how .. " as expected", function()
        local prof, err = callgrind.load(path, { lenient = opt })
        if want.err then
          assert.is_nil(prof)
          assert.are.equal(want.err, err)
        else
          assert.is_truthy(prof, err)
          assert.are.same(want, shape(prof))
          prof:close()
        end
      end)
    end
  end
end)
