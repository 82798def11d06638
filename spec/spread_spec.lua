-- callgrind.spread and `callgrind-lua spread`: a Lua script profiled in
-- fresh processes, whose counts vary with Lua 5.4's per-process string
-- hash seed (examples/pairs_order.lua sorts keys in pairs order), against
-- opts.runs of callgrind.profile, which repeats in one process.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local SCRIPT = "examples/pairs_order.lua"

local run = require("spec.support.cli").run

describe("callgrind.spread", function()
  it("shows the spread across fresh processes that opts.runs in one process cannot", function()
    local r = assert(callgrind.spread(SCRIPT, 8))
    assert.are.equal(8, r.runs)
    assert.are.equal(8, #r.totals)
    assert.are.equal("Instr", r.event)
    assert.are.equal(math.min(table.unpack(r.totals)), r.min)
    assert.are.equal(math.max(table.unpack(r.totals)), r.max)
    -- eight seeds give more than one order (each run sorts 200 keys 5
    -- times); the seed mixes addresses with the time in seconds, so
    -- without address randomisation eight quick runs can share one
    local aslr = H.read_file("/proc/sys/kernel/randomize_va_space")
    -- off for this process and its children too (gdb, setarch -R): the
    -- personality's ADDR_NO_RANDOMIZE bit, 0x0040000
    local persona = tonumber(H.run("cat /proc/self/personality", "personality"), 16) or 0
    if (aslr and aslr:match("^0")) or persona & 0x0040000 ~= 0 then
      pending("address randomisation is off: the processes may share a seed")
      return
    end
    assert.is_true(r.max > r.min, r.text)
    assert.are.equal((r.max - r.min) * 100 / r.min, r.spread_pct)
    -- only the insertion sort's work depends on the order: it varies by
    -- exactly what the totals vary by, and it is listed first
    assert.are.equal("insert", r.functions[1].name)
    assert.are.equal(SCRIPT, r.functions[1].file)
    assert.are.equal(r.max - r.min, r.functions[1].max - r.functions[1].min)
    assert.are.equal(1, #r.functions)
    assert.matches(("^Instr over 8 processes of %s: min %s, max %s %%(spread %s, %.2f%%%% of min%%)\n"
      .. "functions whose self Instr varies:\n"):format(SCRIPT:gsub("%p", "%%%0"), H.commify(r.min),
      H.commify(r.max), H.commify(r.max - r.min), r.spread_pct), r.text)
    -- in one process, one seed: the same script repeated shows no spread
    local _, spread = callgrind.profile(function() dofile(SCRIPT) end, { runs = 5 })
    assert.are.equal(spread.min, spread.max)
  end)

  it("passes the script's arguments, and says why a run failed", function()
    local dir = os.tmpname()
    finally(function() os.remove(dir) end)
    H.write_file(dir, "local n = assert(tonumber(arg[1]), 'a number')\nfor i = 1, n do local _ = i end\n")
    local r = assert(callgrind.spread({ dir, "10" }, 2))
    assert.are.equal(r.min, r.max)
    assert.are.same({}, r.functions)
    assert.matches("no function's self cost varies", r.text, 1, true)
    local more = assert(callgrind.spread({ dir, "20" }, 2))
    assert.is_true(more.min > r.min)
    local ok, err, kind = callgrind.spread(dir, 2)
    assert.is_nil(ok)
    assert.are.equal("io", kind)
    assert.matches("^" .. dir:gsub("%p", "%%%0") .. " exited with status 1 in run 1: .*a number", err)
    assert.are.same({ nil, "script not found: no/such/script.lua", "io" },
      { callgrind.spread("no/such/script.lua", 2) })
  end)

  it("raises on misuse, naming the argument", function()
    assert.has_error(function() callgrind.spread(SCRIPT, 1) end,
      "bad argument #2 to 'spread' (a whole number of runs, 2 or more, expected, got 1)")
    assert.has_error(function() callgrind.spread(42, 3) end,
      "bad argument #1 to 'spread' (a script's path or { script, args... } expected)")
    assert.has_error(function() callgrind.spread(SCRIPT, 3, { runs = 2 }) end,
      "bad argument #3 to 'spread' (unknown option 'runs'; options: lines, lua, top)")
  end)

  it("is the command line's spread", function()
    local code, out, err = run("spread", "--top", "1", "3", SCRIPT)
    assert.are.equal(0, code)
    assert.matches("^Instr over 3 processes of examples/pairs_order%.lua: min ", out)
    assert.are.equal("", err)
    local _
    code, _, err = run("spread", "1", SCRIPT)
    assert.are.equal(2, code)
    assert.matches("N must be 2 or more", err, 1, true)
    code, _, err = run("spread", "2", "no/such.lua")
    assert.are.equal(1, code)
    assert.are.equal("script not found: no/such.lua\n", err)
  end)
end)
