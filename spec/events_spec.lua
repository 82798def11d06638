-- Derived events: formulas from event: lines, prof:define, presets.
local callgrind = require "callgrind"

local function load(name) return assert(callgrind.load("spec/fixtures/" .. name)) end

describe("derived events", function()
  it("are defined from the file's event: lines, in any order, and every accessor takes them", function()
    local prof = load("derived.callgrind")
    -- totals: Ir 17, Dr 5 (main 10/4, g 7/1)
    assert.are.equal(22, prof:total("Both"))             -- Ir + Dr
    assert.are.equal(44, prof:total("Double"))           -- 2 Both
    assert.are.equal(46, prof:total("Diff"))             -- 3 * 17 - 5
    assert.are.same({ Ir = 17, Dr = 5 }, prof:totals())     -- the table forms give base events
    local main = prof:func("main")
    assert.are.equal(14, main:self("Both"))
    assert.are.equal(26, main:self("Diff"))              -- 3 * 10 - 4
    assert.are.same({ Ir = 10, Dr = 4 }, main:self())
    local call = main:calls()()
    assert.are.equal(8, call:cost("Both"))               -- 7 + 1
    local line = main:lines()()
    assert.are.equal(28, line:cost("Double"))
    assert.are.equal(17, main:inclusive("Ir"))
    assert.are.equal(22, main:inclusive("Both"))
    assert.are.same({ "Both", "Double", "Diff" }, prof:derived_events())
    assert.are.same({ "Ir", "Dr" }, prof.events)
  end)

  it("turn a cycle between the file's definitions into warnings, not errors", function()
    local prof = load("derived.callgrind")
    assert.are.same({
      "spec/fixtures/derived.callgrind:7: formula 'Loop2 + Ir' for Loop1: Loop1 is defined in terms of itself; "
        .. "event not defined",
      "spec/fixtures/derived.callgrind:8: formula 'Loop1' for Loop2: Loop2 is defined in terms of itself; "
        .. "event not defined",
    }, prof:warnings())
    assert.has_error(function() prof:total("Loop1") end, "bad argument #1 to 'total' (unknown event 'Loop1'; "
      .. "events: Ir Dr, derived: Both Double Diff)")
  end)

  it("describe themselves with event_info", function()
    local prof = load("derived.callgrind")
    assert.are.same({ name = "Ir", long_name = "Instruction Fetch", derived = false }, prof:event_info("Ir"))
    assert.are.same({ name = "Ir", long_name = "Instruction Fetch", derived = false }, prof:event_info(1))
    assert.are.same({ name = "Diff", long_name = "Three fetches less reads", formula = "3 * Ir - Dr", derived = true },
      prof:event_info("Diff"))
    assert.are.equal("Ir: Instruction Fetch (base)", tostring(prof:event_info("Ir")))
    assert.are.equal("Diff = 3 * Ir - Dr: Three fetches less reads (derived)", tostring(prof:event_info("Diff")))
    assert.has_error(function() prof:event_info("Nope") end,
      "bad argument #1 to 'event_info' (unknown event 'Nope'; events: Ir Dr, derived: Both Double Diff)")
  end)

  it("can be defined with prof:define, using other derived events", function()
    local prof = load("derived.callgrind")
    prof:define("Mix", "Double - 3 Dr + 1 * Ir", "a mix")
    assert.are.equal(44 - 15 + 17, prof:total("Mix"))
    assert.are.equal(28 - 12 + 10, prof:func("main"):self("Mix"))
    assert.are.equal("a mix", prof:event_info("Mix").long_name)
  end)

  local bad = {
    { "Ir +", "formula 'Ir +' for X: a term ends without an event name" },
    { "Ir * Dr", "formula 'Ir * Dr' for X: expected '+' or '-' at '* Dr'" },
    { "2 *", "formula '2 *' for X: a term ends without an event name" },
    { "Ir + Nope", "formula 'Ir + Nope' for X: unknown event 'Nope'" },
    { "X + Ir", "formula 'X + Ir' for X: X refers to itself" },
    { "", "formula '' for X: empty formula" },
  }
  for _, case in ipairs(bad) do
    it("reject the malformed formula '" .. case[1] .. "' with a message naming it", function()
      local prof = load("derived.callgrind")
      assert.has_error(function() prof:define("X", case[1]) end, case[2])
    end)
  end

  it("refuse to redefine a base event", function()
    local prof = load("derived.callgrind")
    assert.has_error(function() prof:define("Ir", "Dr") end, "bad argument #1 to 'define' ('Ir' is a base event)")
  end)
end)

describe("the presets", function()
  local events = { "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim" }
  local vals = { 1000, 300, 200, 11, 13, 17, 5, 7, 3, 90, 9, 20, 4 }
  local text = "events: " .. table.concat(events, " ") .. "\nfn=main\n1 " .. table.concat(vals, " ") .. "\n"

  it("are defined from KCachegrind and iai-callgrind when their events exist", function()
    local prof = assert(callgrind.parse(text, "cache.out"))
    local v = {}
    for i, e in ipairs(events) do v[e] = vals[i] end
    local L1m = v.I1mr + v.D1mr + v.D1mw
    local LLm = v.ILmr + v.DLmr + v.DLmw
    local Bm = v.Bim + v.Bcm
    assert.are.equal(L1m, prof:total("L1m"))
    assert.are.equal(LLm, prof:total("LLm"))
    assert.are.equal(Bm, prof:total("Bm"))
    -- CEst = Ir + 10 Bm + 10 L1m + 20 Ge + 100 L2m + 100 LLm, without Ge and L2m
    assert.are.equal(v.Ir + 10 * Bm + 10 * L1m + 100 * LLm, prof:total("CEst"))  -- KCachegrind drops Ge, L2m
    assert.are.equal("Ir + 10 Bm + 10 L1m + 100 LLm", prof:event_info("CEst").formula)
    local L1hits = v.Ir + v.Dr + v.Dw - L1m
    local LLhits = L1m - LLm
    assert.are.equal(L1hits, prof:total("L1hits"))
    assert.are.equal(LLhits, prof:total("LLhits"))
    assert.are.equal(LLm, prof:total("RamHits"))
    assert.are.equal(v.Ir + v.Dr + v.Dw, prof:total("TotalRW"))
    assert.are.equal(L1hits + 5 * LLhits + 35 * LLm, prof:total("EstimatedCycles"))
    assert.is_nil(prof:derived_events()[11])
  end)

  it("are not defined when their events are missing", function()
    local prof = assert(callgrind.parse("events: Ir\nfn=main\n1 5\n", "ir.out"))
    assert.are.same({}, prof:derived_events())
    assert.has_error(function() prof:total("CEst") end, "bad argument #1 to 'total' (unknown event 'CEst'; events: Ir)")
  end)
end)

describe("the presets on a real --cache-sim=yes --branch-sim=yes profile", function()
  local dir, prof
  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    -- LD_PRELOAD: make check-asan preloads libasan, which valgrind's guest refuses
    assert(os.execute(("unset LD_PRELOAD; cc -g -O1 -o %s/w examples/workload.c"):format(dir)))
    assert(os.execute(("unset LD_PRELOAD; valgrind -q --tool=callgrind --cache-sim=yes --branch-sim=yes "
      .. "--callgrind-out-file=%s/cg.out %s/w > /dev/null 2> %s/vg.log"):format(dir, dir, dir)),
      "valgrind failed (it is needed for this spec)")
    prof = assert(callgrind.load(dir .. "/cg.out"))
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("gives each preset's formula evaluated by hand on the base totals and on a function", function()
    local names = {}
    for _, e in ipairs(prof.events) do names[e] = true end
    local base = { "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim" }
    for _, e in ipairs(base) do
      assert.is_true(names[e], e)
    end
    for _, get in ipairs({ function(e) return prof:total(e) end,
                           function(e) return prof:func("main"):self(e) end }) do
      local v = setmetatable({}, { __index = function(_, e) return get(e) end })
      local L1m, LLm = v.I1mr + v.D1mr + v.D1mw, v.ILmr + v.DLmr + v.DLmw
      assert.are.equal(L1m, v.L1m)
      assert.are.equal(LLm, v.LLm)
      assert.are.equal(v.Bim + v.Bcm, v.Bm)
      assert.are.equal(v.Ir + 10 * (v.Bim + v.Bcm) + 10 * L1m + 100 * LLm, v.CEst)
      assert.are.equal(v.Ir + v.Dr + v.Dw - L1m, v.L1hits)
      assert.are.equal(L1m - LLm, v.LLhits)
      assert.are.equal(LLm, v.RamHits)
      assert.are.equal(v.Ir + v.Dr + v.Dw, v.TotalRW)
      assert.are.equal((v.Ir + v.Dr + v.Dw - L1m) + 5 * (L1m - LLm) + 35 * LLm, v.EstimatedCycles)
    end
  end)
end)
