-- A Lua recursion 150,000 calls deep profiled with stacks = true: the
-- stacks' tree is made in time linear in the profiler's trie, the folded
-- text it would make (quadratic: each line repeats its whole path) fails
-- before it is made, naming its size and collapse_recursion; collapsed,
-- each function keeps its exact self cost and the total; the flame graph
-- collapses it itself. (No wall-clock limit is asserted: the quadratic
-- paths this replaced took hours at this depth.)
require "callgrind"
local profiler = require "callgrind.profiler"
local stacks = require "callgrind.export.stacks"
local flame = require "callgrind.export.flame"
local H = require "spec.support.helpers"

local DEPTH = 150000

-- Sums of a folded text's costs by its leaf frame, and its total; checks
-- that no line enters a function twice when once is true.
local function leaves(text, once)
  local by, total, lines = {}, 0, 0
  for path, cost in text:gmatch("([^\n]*) (%d+)\n") do
    cost = math.tointeger(tonumber(cost))
    local leaf = path:match("([^;]*)$")
    by[leaf] = (by[leaf] or 0) + cost
    total = total + cost
    lines = lines + 1
    if once then
      local seen = {}
      for frame in path:gmatch("[^;]+") do
        assert(not seen[frame], "a frame twice on one line: " .. path)
        seen[frame] = true
      end
    end
  end
  return by, total, lines
end

-- Each function's exact self cost by name (names of one function each here).
local function selves(prof)
  local by = {}
  for fn in prof:functions() do
    local v = fn:self("Instr")
    if v ~= 0 then by[fn.name] = (by[fn.name] or 0) + v end
  end
  return by
end

describe("a recursion 150,000 deep", function()
  local prof
  setup(function()
    local function down(n)
      if n == 0 then return 0 end
      return 1 + down(n - 1)
    end
    -- two functions calling each other: A;B;A;B...
    local ping, pong
    function ping(n) if n == 0 then return 0 end return 1 + pong(n - 1) end
    function pong(n) if n == 0 then return 0 end return 1 + ping(n - 1) end
    prof = profiler.profile(function() return down(DEPTH) + ping(1000) end, { stacks = true })
  end)

  it("has its stacks' tree, every frame of it, each function's self exact", function()
    local top = stacks.tree(prof, "Instr", 0)
    assert.is_true(top.exact)
    assert.is_true(stacks.depth(top) > DEPTH)
    local by, sum = {}, 0
    stacks.walk(top, function(nd)
      by[nd.fn.name] = (by[nd.fn.name] or 0) + nd.self
      sum = sum + nd.self
    end)
    assert.are.equal(prof:total("Instr"), sum)
    assert.are.same(selves(prof), by)
  end)

  it("prof:folded fails fast at the default max_bytes, naming the size and the way out", function()
    local text, err, kind = prof:folded("Instr")
    assert.is_nil(text)
    assert.are.equal("memory", kind)
    local size = assert(tonumber(err:match("would take (%d+) bytes")))
    -- each line repeats its path: at least DEPTH^2 / 2 frames of a byte and a separator
    assert.is_true(size > DEPTH * DEPTH)
    assert.truthy(err:find("max_bytes (" .. stacks.MAX_BYTES .. ")", 1, true))
    assert.truthy(err:find("collapse_recursion = true", 1, true))
    local ok, werr, wkind = prof:write_folded(os.tmpname() .. ".folded", "Instr")
    assert.is_nil(ok)
    assert.are.equal("memory", wkind)
    assert.truthy(werr:find("^prof:write_folded: the folded stacks would take " .. size .. " bytes"))
  end)

  it("the size named is the text's size", function()
    local function down(n) if n == 0 then return 0 end return 1 + down(n - 1) end
    local small = profiler.profile(function() return down(300) end, { stacks = true })
    local text = assert(small:folded("Instr", { threshold = 0 }))
    local _, err = small:folded("Instr", { threshold = 0, max_bytes = #text - 1 })
    assert.are.equal(#text, tonumber(err:match("would take (%d+) bytes")))
    assert.are.equal(text, small:folded("Instr", { threshold = 0, max_bytes = #text }))
  end)

  it("collapse_recursion = true: each function's exact self cost, the total, no frame twice", function()
    for _, th in ipairs({ 0, 1e-4 }) do
      local text = assert(prof:folded("Instr", { collapse_recursion = true, threshold = th }))
      assert.is_true(#text < 100000)
      local by, total = leaves(text, true)
      assert.are.equal(prof:total("Instr"), total)
      if th == 0 then assert.are.same(selves(prof), by) end
    end
  end)

  it("the flame graph collapses it past flame.MAX_DEPTH and says so", function()
    local svg = prof:flamegraph("Instr")
    assert.truthy(svg:find("(recursion collapsed)", 1, true))
    local frames = select(2, svg:gsub('<g class="f">', ""))
    assert.is_true(frames < 100)
    assert.is_true(flame.MAX_DEPTH < DEPTH)
    -- asked for, on a shallow profile too
    local function down(n) if n == 0 then return 0 end return 1 + down(n - 1) end
    local small = profiler.profile(function() return down(50) end, { stacks = true })
    assert.falsy(small:flamegraph("Instr"):find("(recursion collapsed)", 1, true))
    local flat = small:flamegraph("Instr", { collapse_recursion = true })
    assert.truthy(flat:find("(recursion collapsed)", 1, true))
  end)

  it("until_exit's FILE.stacks: one line a node, however deep (the folded text would pass 256 MiB)", function()
    local out = os.tmpname()
    local said = H.fresh_lua(([[
      local keep = require("callgrind.profiler").until_exit { out = %q, stacks = true }
      local function down(n) if n == 0 then return 0 end return 1 + down(n - 1) end
      down(%d)
    ]]):format(out, DEPTH))
    assert.are.equal("", said)
    local record = H.read_file(out .. ".stacks")
    -- one chain: down DEPTH + 1 times (under the chunk that called it),
    -- a node each, the deepest stack as long as the record has nodes
    local nodes = tonumber(record:match("\nnodes: (%d+)\n"))
    assert.is_true(nodes == DEPTH + 1 or nodes == DEPTH + 2, tostring(nodes))
    assert.is_true(#record < 20 * DEPTH)
    assert.is_nil(io.open(out .. ".folded"))
    local loaded = assert(require("callgrind").load(out))
    assert.are.equal(nodes, stacks.depth(stacks.tree(loaded, "Instr", 0)))
    os.remove(out)
    os.remove(out .. ".stacks")
  end)

  it("until_exit's FILE.folded (stacks = \"folded\"): not written past 256 MiB, stderr naming the size", function()
    local out = os.tmpname()
    local said = H.fresh_lua(([[
      local keep = require("callgrind.profiler").until_exit { out = %q, stacks = "folded" }
      local function down(n) if n == 0 then return 0 end return 1 + down(n - 1) end
      down(%d)
    ]]):format(out, DEPTH))
    local want = ".folded: the folded stacks would take %d+ bytes, over max_bytes %(268435456%)"
    assert.truthy(said:find(out .. want), said)
    assert.is_nil(io.open(out .. ".folded"))
    assert.truthy(io.open(out))
    os.remove(out)
  end)

  it("pprof with collapse_recursion = true is written", function()
    local path = os.tmpname()
    assert(prof:write_pprof(path, { events = { "Instr" }, collapse_recursion = true }))
    os.remove(path)
  end)
end)
