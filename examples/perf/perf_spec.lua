-- Performance tests for sortnum.c, as a project keeps them beside its
-- other specs: run the program under callgrind, keep functions within
-- budgets, and compare with the stored baseline. From the repository root:
--
--   busted --lua=lua5.4 examples/perf/perf_spec.lua
--
-- After an intended change, accept the new numbers with
--
--   CALLGRIND_BASELINES=update busted --lua=lua5.4 examples/perf/perf_spec.lua
--
-- and commit examples/perf/baselines/. Instruction counts depend on the
-- compiler and the C library: a baseline is kept per build environment
-- (CI's), not copied between machines.
local callgrind = require "callgrind"
local assert = require "callgrind.check.luassert" -- luassert, with the assertions registered

local HERE = "examples/perf"
local BASELINES = { dir = os.getenv("CALLGRIND_BASELINE_DIR") or HERE .. "/baselines" }

-- The program, built once into a directory of its own (PERF_PROGRAM names
-- one built already).
local function build()
  local exe = os.getenv("PERF_PROGRAM")
  if exe then return exe end
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. dir))
  exe = dir .. "/sortnum"
  assert(os.execute(("cc -g -O1 -o %s %s/sortnum.c"):format(exe, HERE)), "cannot build sortnum.c")
  return exe
end

describe("sortnum", function()
  local exe, prof, info

  setup(function()
    exe = build()
    -- only sort_numbers and what it calls are measured
    prof, info = assert(callgrind.run({ exe, "2000" }, { toggle_collect = "sort_numbers" }))
  end)

  it("prints its checksum and nothing else", function()
    assert.matches("^%d+\n$", info.stdout)
    assert.are.equal("", info.stderr)
  end)

  it("sorts 2000 numbers in at most 600,000 instructions", function()
    assert.cost_at_most(600000, prof:func("sort_numbers"), "Ir")
  end)

  it("sifts at most 3,000 times", function()
    assert.calls_at_most(3000, prof:func("sift"))
  end)

  it("costs at most 2.3 times as much for twice the numbers", function()
    local bigger = assert(callgrind.run({ exe, "4000" }, { toggle_collect = "sort_numbers" }))
    assert.no_regression(prof, bigger, { Ir = "130%" })
  end)

  it("is no slower than its baseline", function()
    assert.within_baseline("sortnum", prof, { Ir = "5%", functions = { sort_numbers = { Ir = "5%" } } }, BASELINES)
  end)
end)
