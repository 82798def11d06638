-- The light iterator: prof:ulines(...) and fn:ulines(...) yield plain
-- values per cost line (function index, line, address, the costs asked),
-- no userdata per line. Values worked by hand from the fixtures' text.
local callgrind = require "callgrind"

local function collect(iter)
  local rows = {}
  for fi, line, addr, a, b in iter do rows[#rows + 1] = { fi, line or "-", addr or "-", a, b } end
  return rows
end

describe("prof:ulines", function()
  local prof = assert(callgrind.load("spec/fixtures/inline.callgrind"))

  it("yields function index, line, no address (positions: line) and all base events by default", function()
    assert.are.same({
      { 1, 10, "-", 5, 1 }, { 1, 3, "-", 7, 2 }, { 1, 11, "-", 1, 0 },  -- main, with the util.h line
      { 2, 30, "-", 100, 10 },                                          -- helper
      { 3, 1, "-", 40, 4 },                                             -- strlen
    }, collect(prof:ulines()))
  end)

  it("yields the events asked, by name or index, base or derived", function()
    prof:define("W", "Ir + 2 Dr")
    assert.are.same({ { 1, 10, "-", 1, 7 }, { 1, 3, "-", 2, 11 }, { 1, 11, "-", 0, 1 },
                      { 2, 30, "-", 10, 120 }, { 3, 1, "-", 4, 48 } }, collect(prof:ulines(2, "W")))
  end)

  it("walks one function's lines with fn:ulines", function()
    assert.are.same({ { 2, 30, "-", 100 } }, collect(prof:func("helper"):ulines("Ir")))
    assert.are.same({ { 1, 10, "-", 5 }, { 1, 3, "-", 7 }, { 1, 11, "-", 1 } },
      collect(prof:func("main"):ulines("Ir")))
  end)

  it("agrees with prof:lines() on a profile with addresses", function()
    local p = assert(callgrind.load("spec/fixtures/jumps.callgrind"))
    local want = {}
    for l in p:lines() do
      want[#want + 1] = { l.fn.index, l.line or "-", l.addr or "-", l:cost(1), l:cost(1) }
    end
    local got = collect(p:ulines(1, 1))
    assert.are.same(want, got)
    assert.is_true(#got > 0 and got[1][3] ~= "-")
  end)

  it("raises on an unknown event, and on a closed profile", function()
    assert.has_error(function() prof:ulines("Nope") end,
      "bad argument #1 to 'ulines' (unknown event 'Nope'; events: Ir Dr, derived: W)")
    local p = assert(callgrind.load("spec/fixtures/inline.callgrind"))
    local it = p:ulines()
    p:close()
    assert.has_error(function() it() end, "attempt to use a closed profile")
  end)
end)
