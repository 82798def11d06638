-- prof:folded: exact stacks from a profile that has them, and the
-- estimate from the call graph, worked by hand below.
local callgrind = require "callgrind"
local core = require "callgrind.core"

-- spec/fixtures/graph.callgrind (every number a call's inclusive cost, as a
-- callgrind file gives it):
--
--   main (self 10) -> a: 100, -> b: 60          total 170
--   a (self 20)    -> c: 80
--   b (self 10)    -> c: 50
--   c (self 30)    -> d: 100
--   d (self 100)
--
-- Roots: main alone (no calls into it), budget 170 = the total.
-- A frame of f shares its budget between its own line and its callees in
-- proportion to f's self cost and the cost of its calls to each (their sum
-- T(f) = self + calls: main 170, a 100, b 60, c 130, d 100), by floor.
-- main (170): a 100, b 60; main keeps 10.
-- a (100): c 80; a keeps 20.
-- c under a (80): d 80 * 100/130 = 61.5 -> 61; c keeps 19.
-- b (60): c 50; b keeps 10.
-- c under b (50): d 50 * 100/130 = 38.5 -> 38; c keeps 12.
-- Then each function's lines are corrected to its exact self cost: c has
-- 19 + 12 = 31 for 30 and gives 1 back (from its lines in proportion,
-- floor of cumulative shares: 0 from the first, 1 from the second); d has
-- 61 + 38 = 99 for 100 and gets 1 on its lines in proportion (0, then 1).
-- Lines: main 10, main;a 20, main;a;c 19, main;a;c;d 61, main;b 10,
-- main;b;c 11, main;b;c;d 39 = 170; c 30 and d 100 exactly.
local GRAPH = require("spec.support.helpers").read_file("spec/fixtures/graph.callgrind")

local function sum(folded)
  local s = 0
  for v in folded:gmatch(" (%d+)\n") do s = s + tonumber(v) end
  return s
end

describe("prof:folded", function()
  local prof = assert(callgrind.parse(GRAPH, "graph"))

  it("estimates stacks top-down, sharing each frame in proportion to self and call costs", function()
    assert.are.equal(table.concat({ "main 10", "main;a 20", "main;a;c 19", "main;a;c;d 61", "main;b 10",
      "main;b;c 11", "main;b;c;d 39", "" }, "\n"), prof:folded("Ir"))
  end)

  it("leaves out a stack below the threshold, its cost going to the same functions' other stacks", function()
    -- threshold 0.3 of 170 = 51: c under b (50) is not made, and b keeps
    -- 60; the correction gives b's excess 50 back, and c's missing 11 and
    -- d's missing 39 go to their only frames, under a
    assert.are.equal(table.concat({ "main 10", "main;a 20", "main;a;c 30", "main;a;c;d 100", "main;b 10", "" },
      "\n"), prof:folded("Ir", { threshold = 0.3 }))
  end)

  it("enters a function of a cycle again, each function's lines adding up to its self cost", function()
    -- spec/fixtures/cycle-entry.callgrind: main -> a (390) -> c (750) -> b
    -- (720) -> leaf (300), and b -> a (390). Only main is a root (391).
    -- T: a 780, c 750, b 720 (self 30 each): a (390) gives c 375, c gives
    -- b 360, b gives leaf 150 and a 195, ... around the cycle, halving each
    -- round, until a share is below 0.01% of the total.
    local p = assert(callgrind.load("spec/fixtures/cycle-entry.callgrind"))
    local text = p:folded()
    assert.is_truthy(text:find("^main 1\nmain;a 14\nmain;a;c 15\nmain;a;c;b 13\nmain;a;c;b;a 7\n"))
    assert.is_truthy(text:find("\nmain;a;c;b;leaf 156\n", 1, true))
    local by = {}
    for frames, n in text:gmatch("([^\n]-) (%d+)\n") do
      local last = frames:match("([^;]+)$")
      by[last] = (by[last] or 0) + tonumber(n)
    end
    assert.are.same({ main = 1, a = 30, c = 30, b = 30, leaf = 300 }, by)
  end)

  it("adds up to the profile's total on every event of real profiles", function()
    for _, path in ipairs({ "spec/fixtures/extended.callgrind", "spec/fixtures/recursion.callgrind",
        "spec/fixtures/mutual.callgrind", "spec/fixtures/inline.callgrind",
        "spec/corpus/gprof2dot/googlecode-issue34.callgrind", "spec/corpus/gprof2dot/bzr.callgrind" }) do
      local p = assert(callgrind.load(path))
      for _, ev in ipairs(p.events) do
        assert.are.equal(p:total(ev), sum(p:folded(ev)), path .. " " .. ev)
        assert.are.equal(p:total(ev), sum(p:folded(ev, { threshold = 0 })), path .. " " .. ev)
      end
    end
  end)

  it("escapes ; \\ and line breaks in names", function()
    local stacks = require "callgrind.export.stacks"
    assert.are.equal("a\\;b\\\\c\\nd\\re", stacks.escape("a;b\\c\nd\re"))
    local p = assert(callgrind.parse("events: Ir\nfn=x;y\n1 1\ncfn=back\\slash\ncalls=1 1\n2 5\n"
      .. "fn=back\\slash\n1 5\n"))
    assert.are.equal("x\\;y 1\nx\\;y;back\\\\slash 5\n", p:folded())
  end)

  it("is empty for an event that costs nothing", function()
    local p = assert(callgrind.parse("events: Ir Dr\nfn=main\n1 5 0\n"))
    assert.are.equal("", p:folded("Dr"))
  end)

  it("rejects a bad threshold, an unknown event or option; an empty profile has no stacks", function()
    assert.has_error(function() prof:folded("Ir", { threshold = 1 }) end,
      "bad argument #2 to 'folded' (threshold must be in [0, 1), got 1)")
    assert.has_error(function() prof:folded("Ir", { threshold = -0.1 }) end,
      "bad argument #2 to 'folded' (threshold must be in [0, 1), got -0.1)")
    assert.has_error(function() prof:folded("Irr") end,
      "bad argument #1 to 'folded' (unknown event 'Irr'; events: Ir)")
    assert.has_error(function() prof:folded("Ir", { depth = 1 }) end,
      "bad argument #2 to 'folded' (unknown option 'depth'; options: collapse_recursion, max_bytes, threshold)")
    local empty = assert(callgrind.parse("events: Ir\n"))
    assert.are.equal("", empty:folded())
  end)

  it("blames the caller's line for a misuse", function()
    local ok, err = pcall(function() prof:folded("Ir", { threshold = 2 }) end)
    assert.is_false(ok)
    assert.is_truthy(err:find("^spec/stacks_spec.lua:%d+: bad argument"))
  end)

  it("writes a file whole, or returns nil, message, \"io\" and leaves nothing", function()
    local F = require "spec.support.files"
    local dir = F.tmpdir()
    assert.is_true(prof:write_folded(dir .. "/out.folded", "Ir"))
    local f = assert(io.open(dir .. "/out.folded"))
    assert.are.equal(prof:folded("Ir"), f:read("a"))
    f:close()
    local ok, err, kind = prof:write_folded(dir .. "/no/such/dir/out.folded")
    assert.is_nil(ok)
    assert.are.equal(dir .. "/no/such/dir/out.folded: No such file or directory", err)
    assert.are.equal("io", kind)
    assert.are.equal("out.folded\n", F.ls(dir))
    F.remove(dir)
  end)
end)

describe("prof:folded with exact stacks", function()
  -- A profile with stacks (the Lua profiler's `stacks = true`) answers
  -- prof:stacks(ev) with frames (outermost first) and a cost. Until the
  -- profiler has it, a hand-made stacks method stands in: the stacks below
  -- cannot come from the estimate (b under a costs 7, b under main 3,
  -- although the graph's one call a -> b costs 7 and main -> b 3 too; and
  -- c appears only under b under a).
  local prof = assert(callgrind.parse(table.concat({
    "events: Instr", "fn=main", "1 1", "cfn=a", "calls=1 1", "2 12", "cfn=b", "calls=1 1", "3 3",
    "fn=a", "1 5", "cfn=b", "calls=1 1", "2 7", "fn=b", "1 8", "cfn=c", "calls=1 1", "2 2", "fn=c", "1 2", "" },
    "\n"), "exact"))
  local main, a, b, c = prof:func("main"), prof:func("a"), prof:func("b"), prof:func("c")
  local STACKS = { { { main }, 1 }, { { main, a }, 5 }, { { main, a, b }, 5 }, { { main, a, b, c }, 2 },
    { { main, b }, 3 } }
  local Profile = core.methods.Profile
  local saved

  before_each(function()
    saved = rawget(Profile, "stacks")
    Profile.stacks = function(p, ev)
      assert.are.equal(prof, p)
      assert.are.equal("Instr", ev)
      local i = 0
      return function()
        i = i + 1
        if STACKS[i] then return STACKS[i][1], STACKS[i][2] end
      end
    end
  end)
  after_each(function() Profile.stacks = saved end)

  it("prints the profile's own stacks", function()
    assert.are.equal(table.concat({ "main 1", "main;a 5", "main;a;b 5", "main;a;b;c 2", "main;b 3", "" }, "\n"),
      prof:folded())
  end)

  it("merges exact stacks below the threshold into their parent", function()
    -- total 16; threshold 0.15 = 2.4: c (2) merges into main;a;b
    assert.are.equal(table.concat({ "main 1", "main;a 5", "main;a;b 7", "main;b 3", "" }, "\n"),
      prof:folded(nil, { threshold = 0.15 }))
  end)
end)

describe("prof:folded of a Lua profile made with stacks = true", function()
  -- x does its own work (m loop rounds) and calls leaf (n rounds); p calls
  -- x(1000, 0), q calls x(0, 1000). A loop round is 2 Lua VM instructions
  -- (FORLOOP, ADD), so leaf(1000) is 2,000 plus 6 of set-up and return,
  -- leaf(0) is those 6; x's own loop of 1000 is 2,000 plus 10. The
  -- profiler counts them exactly: leaf is costly under p only.
  local function leaf(n) local s = 0 for i = 1, n do s = s + i end return s end
  local function x(n, m) local s = 0 for i = 1, m do s = s + i end return s + leaf(n) end
  local function p() return x(1000, 0) end
  local function q() return x(0, 1000) end
  local prof = callgrind.profile(function() p(); q() end, { stacks = true })

  it("gives the exact stacks", function()
    local lines = {}
    for line in prof:folded("Instr"):gmatch("[^\n]+") do
      lines[#lines + 1] = (line:gsub("^anonymous@[^; ]*", "top"))
    end
    assert.are.same({ "top 5", "top;p 4", "top;p;x 10", "top;p;x;leaf 2006", "top;q 4", "top;q;x 2010",
      "top;q;x;leaf 6" }, lines)
    assert.are.equal(4045, prof:total("Instr"))
  end)

  it("where the estimate from the same call graph invents leaf's cost under q", function()
    -- x's calls to leaf cost 2,012 in all and x's self 2,020: every x frame
    -- shares its budget in that proportion, so leaf gets half of each
    -- (1,006), under q as under p, where it costs 6 and 2,006
    local Profile = core.methods.Profile
    local saved = rawget(Profile, "stacks")
    Profile.stacks = function() error("no stacks") end
    local text = prof:folded("Instr")
    Profile.stacks = saved
    assert.is_truthy(text:find(";q;x;leaf 1006\n", 1, true))
    assert.is_truthy(text:find(";p;x;leaf 1006\n", 1, true))
  end)
end)

describe("a profile loaded from a file with FILE.folded beside it", function()
  local H = require "spec.support.helpers"
  local F = require "spec.support.files"
  -- c costs 5 of its own under a and nothing under b, where d costs 5:
  -- the call graph cannot tell, the recorded stacks can
  local PROFILE = table.concat({ "events: Instr", "fn=main", "1 1", "cfn=a", "calls=1 1", "2 6", "cfn=b",
    "calls=1 1", "3 6", "fn=a", "1 1", "cfn=c", "calls=1 1", "2 5", "fn=b", "1 1", "cfn=c", "calls=1 1", "2 5",
    "fn=c", "1 5", "cfn=d", "calls=1 1", "2 5", "fn=d", "1 5", "" }, "\n")
  local FOLDED = "main 1\nmain;a 1\nmain;a;c 5\nmain;b 1\nmain;b;c;d 5\n"

  local function setup(folded)
    local dir = F.tmpdir()
    H.write_file(dir .. "/p.cg", PROFILE)
    if folded then H.write_file(dir .. "/p.cg.folded", folded) end
    return dir, assert(callgrind.load(dir .. "/p.cg"))
  end

  it("takes its exact stacks from it, in folded stacks and the flame graph, and says so", function()
    local dir, prof = setup(FOLDED)
    assert.are.equal(FOLDED, prof:folded("Instr", { threshold = 0 }))
    assert.is_truthy(prof:flamegraph():find("p.cg: 13 Instr (stacks from " .. dir .. "/p.cg.folded)", 1, true))
    F.remove(dir)
  end)

  it("estimates from the call graph when the file's stacks are another run's, or there are none", function()
    local dir, prof = setup("main 1\nmain;a 2\n")
    local estimate = prof:folded("Instr", { threshold = 0 })
    assert.are_not.equal(FOLDED, estimate)
    assert.is_truthy(prof:flamegraph():find("(stacks estimated from the call graph)", 1, true))
    local dir2, alone = setup(nil)
    assert.are.equal(estimate, alone:folded("Instr", { threshold = 0 }))
    F.remove(dir)
    F.remove(dir2)
  end)
end)
