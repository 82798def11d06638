-- Call costs callgrind never writes (docs/format.md, "Call costs that cannot
-- be"): in a file whose creator is callgrind, a call between functions on
-- no common cycle costs at most its part, and a function's self cost plus
-- its calls out of its cycle at most the whole profile. A file that breaks
-- either gets a "calls" warning naming the line, which the checks count
-- as lost data. The small files' numbers are worked out in the comments;
-- the real ones are fresh valgrind runs changed one calls= cost at a time.

local callgrind = require "callgrind"
local limits = require "callgrind.check.limits"
local H = require "spec.support.helpers"

-- main (self 10) calls work (60) and other (30): 100 in all
local function small(creator, other_cost)
  return table.concat({
    "# callgrind format", "version: 1", "creator: " .. creator, "positions: line", "events: Ir",
    "summary: 100", "fl=(1) a.c", "fn=(1) main", "10 10", "cfn=(2) work", "calls=1 20", "11 60",
    "cfn=(3) other", "calls=1 30", "12 " .. other_cost, "fn=(2)", "20 60", "fn=(3)", "30 30", "totals: 100", "",
  }, "\n")
end

describe("a callgrind file's call costs", function()
  it("give no warning when they are callgrind's own", function()
    local prof = assert(callgrind.parse(small("callgrind-3.19.0", 30), "t.out"))
    assert.are.same({}, prof:warnings())
  end)

  it("give a warning at the call's cost line when a call costs more than its part", function()
    local prof = assert(callgrind.parse(small("callgrind-3.19.0", 999999999999), "t.out"))
    -- line 15 is "12 999999999999"; and main's B, 10 + 60 + 999999999999,
    -- is above the total too
    assert.are.same({
      "t.out:15: calls from 'main' to 'other' cost 999999999999 Ir, more than their part in all (100): "
        .. "callgrind never writes that, a calls= cost was changed",
      "t.out:9: 'main' costs 1000000000069 Ir with its calls out, more than the whole profile (100): "
        .. "callgrind never writes that, a calls= cost was changed",
    }, prof:warnings("calls"))
    assert.are.equal(2, #limits.lossy_warnings(prof))
  end)

  it("give a warning at the function when its calls out add up to more than the profile", function()
    -- each call is below the part (100), but 10 + 60 + 50 = 120 is not
    local prof = assert(callgrind.parse(small("callgrind-3.19.0", 50), "t.out"))
    assert.are.same({
      "t.out:9: 'main' costs 120 Ir with its calls out, more than the whole profile (100): "
        .. "callgrind never writes that, a calls= cost was changed",
    }, prof:warnings("calls"))
  end)

  it("are bounded by summary: where it is higher than the cost lines", function()
    -- summary: 120 (callgrind's may count more, as for a call into _Exit)
    local prof = assert(callgrind.parse(small("callgrind-3.19.0", 50):gsub("summary: 100", "summary: 120"), "t.out"))
    assert.are.same({}, prof:warnings("calls"))
  end)

  it("are not checked in other writers' files", function()
    for _, creator in ipairs({ "pprof", "hand" }) do
      local prof = assert(callgrind.parse(small(creator, 999999999999), "t.out"))
      assert.are.same({}, prof:warnings())
    end
  end)

  it("are not checked inside a cycle, where callgrind's own sums count nested calls again", function()
    -- A(int)'2 -> B(int)'2, 49 calls: 1,715,042,679 Ir, 24 times the run
    local prof = assert(callgrind.load("spec/corpus/qt-creator/recursiveCycle.out"))
    assert.are.same({}, prof:warnings("calls"))
    local when = assert(callgrind.load("spec/corpus/gungraun/callgrind.when_entry_point.out"))
    assert.are.same({}, when:warnings("calls"))
  end)
end)

describe("real valgrind files", function()
  local lab = H.lab("spec/call_costs_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  -- The line numbers of the cost lines after calls= lines, with the cost.
  local function call_cost_lines(text)
    local out, n, after = {}, 0, false
    for line in text:gmatch("([^\n]*)\n") do
      n = n + 1
      if after then out[#out + 1] = { n, line } end
      after = line:match("^calls=") ~= nil
    end
    return out
  end

  it("load without a calls warning, once, threaded and dumped", function()
    local runs = { "", "--separate-threads=yes", "--dump-every-bb=20000", "--dump-instr=yes --collect-jumps=yes" }
    for _, opts in ipairs(runs) do
      local out = lab:callgrind("clean" .. #opts, opts)
      local prof = assert(callgrind.load(assert(callgrind.files(out))))
      assert.is_true(prof:total("Ir") > 0)
      assert.are.same({}, prof:warnings("calls"), opts)
    end
  end)

  it("warn at the changed line when a call's cost is set above the total", function()
    local path = lab:callgrind("changed", "")
    local text = H.read_file(path)
    local prof = assert(callgrind.load(path))
    -- the part's bound: its cost lines, or its summary: where higher
    local part = prof:parts()()
    local total = math.max(prof:total("Ir"), part.summary and part.summary.Ir or 0)
    local sites = call_cost_lines(text)
    assert.is_true(#sites > 20)
    -- every 7th call line, one at a time: its first cost set to 999999999999
    local tried = 0
    for i = 1, #sites, 7 do
      local at, line = sites[i][1], sites[i][2]
      local lines = {}
      for l in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
      -- positions: line; the first number after the position is Ir
      lines[at] = line:gsub("^(%S+%s+)%d+", "%1999999999999")
      local changed = lab.dir .. "/changed-" .. i .. ".out"
      H.write_file(changed, table.concat(lines, "\n") .. "\n")
      local p = assert(callgrind.load(changed))
      local w = p:warnings("calls")
      local call
      for c in p:calls() do if c:cost("Ir") == 999999999999 then call = c end end
      assert(call, "no call of the changed cost")
      local cycle = call.caller:cycle()
      if call.caller == call.callee or (cycle and cycle == call.callee:cycle()) then
        -- inside a cycle: no rule holds there (see above)
        assert.are.same({}, w)
      else
        assert.are.equal(("%s:%d: calls from '%s' to '%s' cost 999999999999 Ir, more than their part in all (%d): "
          .. "callgrind never writes that, a calls= cost was changed"):format(changed, at, call.caller.name,
          call.callee.name, total), w[1])
        tried = tried + 1
      end
    end
    assert.is_true(tried >= 3)
  end)
end)
