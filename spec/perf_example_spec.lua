-- examples/perf: its spec passes on the program as it is, and on a build
-- that does ~10% more work (-DSLOW) fails with the whole story: the limits
-- broken, the old/new/change table, the biggest mover, the files and how
-- to accept new numbers. The expected numbers come from valgrind runs made
-- here and read by callgrind_annotate, not from the library.
local H = require "spec.support.helpers"

local shq, commify = H.shq, H.commify

local lab = H.lab("spec/perf_example_spec.lua")

local function build(name, flags)
  lab:run("mkdir -p " .. shq(lab.dir .. "/" .. name), "mkdir")
  local exe = lab.dir .. "/" .. name .. "/sortnum"
  lab:run(("gcc -g -O1 %s -o %s examples/perf/sortnum.c"):format(flags, shq(exe)), "gcc (examples/perf/sortnum.c)")
  return exe
end

-- Runs the example spec with its program and a copy of the baselines.
local function run_example(exe)
  local paths
  if os.getenv("CALLGRIND_INSTALLED") then
    paths = "--lpath='' --cpath=''"
  else
    paths = "--cpath=" .. shq((os.getenv("CALLGRIND_BUILD") or "build") .. "/?.so")
  end
  local p = assert(io.popen(("PERF_PROGRAM=%s CALLGRIND_BASELINE_DIR=%s busted --lua=lua5.4 %s "
    .. "examples/perf/perf_spec.lua 2>&1"):format(shq(exe), shq(lab.dir .. "/baselines"), paths)))
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

-- Independent numbers: valgrind with the same toggle, callgrind_annotate.
local function measure(exe)
  local out = lab.dir .. "/measure.out"
  lab:run(("valgrind -q --tool=callgrind --toggle-collect=sort_numbers --collect-atstart=no "
    .. "--callgrind-out-file=%s %s 2000 >/dev/null"):format(shq(out), shq(exe)), "valgrind")
  local a = lab:annotate(out)
  local self
  for k, row in pairs(a.rows) do
    if k:match(":sort_numbers$") then self = row.Ir end
  end
  return a.program.Ir, assert(self, "no sort_numbers row")
end

local function rjust(rows)
  local w = {}
  for _, r in ipairs(rows) do
    for i, c in ipairs(r) do w[i] = math.max(w[i] or 0, #c) end
  end
  local out = {}
  for _, r in ipairs(rows) do
    local cells = {}
    for i, c in ipairs(r) do cells[i] = i == #r and r.left and c or (string.rep(" ", w[i] - #c) .. c) end
    out[#out + 1] = table.concat(cells, "  ")
  end
  return out
end

describe("examples/perf", function()
  setup(function()
    lab:open()
    lab:need_tools()
    lab:run(("mkdir %s && cp examples/perf/baselines/sortnum.callgrind %s/"):format(
      shq(lab.dir .. "/baselines"), shq(lab.dir .. "/baselines")), "copy the baseline")
  end)
  teardown(function() lab:close() end)

  it("passes on the program as it is, against the stored baseline", function()
    local out, ok = run_example(build("fast", ""))
    assert(ok, out)
    assert.matches("5 successes / 0 failures / 0 errors / 0 pending", out)
  end)

  it("fails on a build made 10% slower, with the limits, the table, the mover, the files and the way out", function()
    local fast, slow = build("fast", ""), build("slow", "-DSLOW")
    local old_ir, old_self = measure(fast)
    local new_ir, new_self = measure(slow)
    -- the slower build does ~10% more work, past the 5% limit
    local p = (new_ir - old_ir) * 100 / old_ir
    assert.is_true(p > 5 and p < 15, "the -DSLOW build is " .. p .. "% slower")
    local out, ok = run_example(slow)
    assert.is_falsy(ok)
    assert.matches("4 successes / 1 failure / 0 errors / 0 pending", out)
    local line
    local n = 0
    for l in io.lines("examples/perf/perf_spec.lua") do
      n = n + 1
      if l:find("assert.within_baseline", 1, true) then line = n end
    end
    local change = ("+%s (+%.1f%%)"):format(commify(new_ir - old_ir), p)
    local self_change = ("+%s (+%.1f%%)"):format(commify(new_self - old_self), (new_self - old_self) * 100 / old_self)
    local dir = lab.dir .. "/baselines"
    local expected = { "sortnum is no slower than its baseline",
      ("examples/perf/perf_spec.lua:%d: 2 limits exceeded:"):format(line),
      ("  Ir (total): %s -> %s %s, limit +5%%"):format(commify(old_ir), commify(new_ir), change),
      ("  Ir of sort_numbers (inclusive): %s -> %s %s, limit +5%%"):format(commify(old_ir), commify(new_ir), change),
    }
    local totals = { { "event", "old", "new", "change" }, { "Ir", commify(old_ir), commify(new_ir), change } }
    for _, l in ipairs(rjust(totals)) do
      expected[#expected + 1] = l
    end
    expected[#expected + 1] = "biggest changes in Ir (self):"
    local src = H.run("pwd"):gsub("%s+$", "") .. "/examples/perf/sortnum.c"
    local movers = { { "old", "new", "change", "function", left = true },
      { commify(old_self), commify(new_self), self_change, ("sort_numbers (%s; %s)"):format(src, slow), left = true } }
    for _, l in ipairs(rjust(movers)) do
      expected[#expected + 1] = "  " .. l
    end
    -- every function of the run is in both profiles: all matched
    local nfuncs = 0
    for _ in H.load(dir .. "/sortnum.new.callgrind"):functions() do nfuncs = nfuncs + 1 end
    expected[#expected + 1] = ("matched %d functions: 100.0%% of the old Ir, 100.0%% of the new"):format(nfuncs)
    expected[#expected + 1] = "old: " .. dir .. "/sortnum.callgrind"
    expected[#expected + 1] = "new: " .. dir .. "/sortnum.new.callgrind"
    expected[#expected + 1] = "accept the new numbers: CALLGRIND_BASELINES=update (or opts.update = true) replaces "
      .. dir .. "/sortnum.callgrind"
    local block = out:match("\n(sortnum is no slower than its baseline\n.-)\n*$") or out
    assert.are.equal(table.concat(expected, "\n"), block)
    -- the new profile is kept beside the baseline, and is the slow run
    local kept = H.load(dir .. "/sortnum.new.callgrind")
    assert.are.equal(new_ir, kept:total("Ir"))
  end)
end)
