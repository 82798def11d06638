-- The estimate's pruning (lua/callgrind/export/stacks.lua, docs/design.md
-- "Estimated stacks"): stacks below stacks.PRUNE (0.001%) of the total, or
-- the threshold when it is smaller, are pruned; a function's line below
-- the cut gives its cost to its lines of at least the cut (all to its
-- largest line when none is), and a function whose whole self cost is
-- below the cut is one stack [pruned];NAME. Worked by hand below, then
-- the invariants on the corpus.
local callgrind = require "callgrind"
local stacks = require "callgrind.export.stacks"
local internal = require("callgrind.core").internal

-- main (self 1,000,000) -> a: 2,000,000, -> tiny: 5; a (self 1,999,990)
-- -> b: 10; b (self 10); tiny (self 5). Total 3,000,005.
local SMALL = table.concat({
  "events: Ir", "fn=main", "0 1000000", "cfn=a", "calls=1 0", "0 2000000", "cfn=tiny", "calls=1 0", "0 5",
  "fn=a", "0 1999990", "cfn=b", "calls=1 0", "0 10", "fn=b", "0 10", "fn=tiny", "0 5", "" }, "\n")

-- main (self 399,980) -> a: 300,020, -> d: 300,000; a (self 20) -> d:
-- 300,000; d (self 12) -> e: 599,988; e (self 599,988). Total 1,000,000.
local SPLIT = table.concat({
  "events: Ir", "fn=main", "0 399980", "cfn=a", "calls=1 0", "0 300020", "cfn=d", "calls=1 0", "0 300000",
  "fn=a", "0 20", "cfn=d", "calls=1 0", "0 300000", "fn=d", "0 12", "cfn=e", "calls=1 0", "0 599988",
  "fn=e", "0 599988", "" }, "\n")

local function sum(folded)
  local s = 0
  for v in folded:gmatch(" (%d+)\n") do s = s + tonumber(v) end
  return s
end

describe("the estimate's pruning", function()
  it("puts a function below the cut in all under [pruned], with its exact self cost", function()
    -- cut: ceil(1e-5 * 3,000,005) = 31; threshold 1e-4: frames of at
    -- least ceil(300.0005) = 301. main (3,000,005) gives a 2,000,000 (T(main)
    -- = 3,000,005); tiny's 5 is below 301 and stays on main (1,000,005);
    -- a keeps all 2,000,000 (b's 10 is below 301). The correction gives
    -- main's 5 and a's 10 back; b (10) and tiny (5) are below 31: one stack
    -- each under [pruned], in function index order (the order the file
    -- names them: main, a, tiny, b).
    local p = assert(callgrind.parse(SMALL, "small"))
    assert.are.equal(table.concat({ "main 1000000", "main;a 1999990", "[pruned];tiny 5", "[pruned];b 10", "" },
      "\n"), p:folded("Ir"))
    -- threshold 0: the whole estimate, nothing pruned (a gives b 10, main
    -- gives tiny 5)
    assert.are.equal(table.concat({ "main 1000000", "main;a 1999990", "main;a;b 10", "main;tiny 5", "" }, "\n"),
      p:folded("Ir", { threshold = 0 }))
  end)

  it("is the command line's default, and --threshold 0 is the whole estimate", function()
    local H = require "spec.support.helpers"
    local run = require("spec.support.cli").run
    local dir = require("spec.support.files").tmpdir()
    H.write_file(dir .. "/small.callgrind", SMALL)
    local code, out, err = run("folded", dir .. "/small.callgrind")
    assert.are.equal(0, code)
    assert.are.equal("main 1000000\nmain;a 1999990\n[pruned];tiny 5\n[pruned];b 10\n", out)
    assert.is_truthy(err:find("stacks below 0.001% of the total pruned", 1, true))
    code, out, err = run("folded", dir .. "/small.callgrind", "--threshold", "0")
    assert.are.equal(0, code)
    assert.are.equal("main 1000000\nmain;a 1999990\nmain;a;b 10\nmain;tiny 5\n", out)
    assert.is_falsy(err:find("pruned", 1, true))
    os.execute("rm -r " .. dir)
  end)

  it("is not done in a diff's flame graph, whose old side is the whole estimate", function()
    -- the old side is estimated whole (threshold 0): a [pruned] frame on
    -- the new side would pair with nothing there and count as new. The
    -- profile against itself: tiny and b keep their paths (main;tiny and,
    -- below the threshold's 301, b's 10 on a), so nothing is new.
    local p = assert(callgrind.parse(SMALL, "small"))
    local svg = callgrind.diff(p, p):flamegraph("Ir")
    assert.is_nil(svg:find(stacks.PRUNED, 1, true))
    assert.is_truthy(svg:find("only in the new, 0.0% of its cost", 1, true))
    assert.is_truthy(svg:find("tiny", 1, true))
  end)

  it("moves a function's lines below the cut to its larger ones", function()
    -- cut ceil(1e-5 * 1,000,000) = 10. main: a 300,020 (first: costlier),
    -- d 300,000, keeps 399,980; a: d 300,000, keeps 20; each d (300,000,
    -- T(d) = 600,000): e 299,994, keeps 6. d's two lines (6 and 6) are
    -- both below 10: its 12 go to its largest line, the first of equals
    -- (its frame under main, made before the one under a).
    local p = assert(callgrind.parse(SPLIT, "split"))
    assert.are.equal(table.concat({ "main 399980", "main;a 20", "main;a;d;e 299994", "main;d 12",
      "main;d;e 299994", "" }, "\n"), p:folded("Ir"))
    assert.are.equal(table.concat({ "main 399980", "main;a 20", "main;a;d 6", "main;a;d;e 299994", "main;d 6",
      "main;d;e 299994", "" }, "\n"), p:folded("Ir", { threshold = 0 }))
    -- a threshold below 0.001% is the cut: 6 >= ceil(5e-6 * 1,000,000) = 5
    assert.are.equal(table.concat({ "main 399980", "main;a 20", "main;a;d 6", "main;a;d;e 299994", "main;d 6",
      "main;d;e 299994", "" }, "\n"), p:folded("Ir", { threshold = 5e-6 }))
  end)

  it("says so in every note: folded's stderr, pprof's comment, the flame graph's title, the report", function()
    local p = assert(callgrind.parse(SMALL, "small"))
    local note = "; stacks below 0.001% of the total pruned (into the function's larger stacks, or [pruned];FUNCTION)"
    assert.are.equal(stacks.ESTIMATED .. note, stacks.describe(p, "Ir"))
    assert.are.equal(stacks.ESTIMATED, stacks.describe(p, "Ir", 0))
    assert.are.equal(stacks.ESTIMATED .. note:gsub("0%.001%%", "0.0005%%"), stacks.describe(p, "Ir", 5e-6))
    local _, _, _, _, names, how = stacks.frames(p, "Ir")
    assert.are.equal(stacks.ESTIMATED .. note, how)
    assert.are.same({ [5] = "[pruned]" }, names)
    assert.is_truthy(p:flamegraph("Ir"):find("(stacks estimated from the call graph, below 0.001% pruned)", 1, true))
    assert.is_truthy(p:flamegraph("Ir", { threshold = 0 }):find("(stacks estimated from the call graph)", 1, true))
    -- the report's flame graph note (its data: the page's script says it)
    assert.is_truthy(p:html():find('"pruned":"0.001"', 1, true))
    assert.is_falsy(p:html({ threshold = 0 }):find('"pruned"', 1, true))
    -- pprof's comment: the string table holds it
    local pprof = require "callgrind.export.pprof"
    assert.is_truthy(pprof.encode(p, { "Ir" }):find("Ir: " .. stacks.ESTIMATED .. note, 1, true))
  end)

  it("keeps every function's self cost and the total on the corpus, pruned or not", function()
    -- make test: the small files and selinux; make check-long
    -- (CALLGRIND_TRUTH=full): the three large ones too
    local files = { "spec/corpus/gprof2dot/selinux.callgrind", "spec/corpus/pprof/pprof.cpu.callgrind",
      "spec/corpus/qt-creator/recursiveCycle.out", "spec/corpus/speedscope/callgrind.multiple-event-types.log" }
    if os.getenv("CALLGRIND_TRUTH") == "full" then
      for _, f in ipairs({ "xapian", "bzr", "googlecode-issue34" }) do
        files[#files + 1] = "spec/corpus/gprof2dot/" .. f .. ".callgrind"
      end
    end
    for _, path in ipairs(files) do
      local p = assert(callgrind.load(path))
      for _, ev in ipairs(p.events) do
        local want = internal.self_all(p, ev)
        local total = p:total(ev)
        for _, threshold in ipairs({ stacks.THRESHOLD, 1e-6, 0 }) do
          local what = ("%s %s %g"):format(path, ev, threshold)
          local parent, func, tot, self, names = stacks.frames(p, ev, threshold)
          local got, sum_self, pruned_at = {}, 0, nil
          for k = 1, #parent do
            local f = func[k]
            got[f] = (got[f] or 0) + self[k]
            sum_self = sum_self + self[k]
            if names[f] then
              assert.are.equal("[pruned]", names[f], what)
              assert.are.equal(0, parent[k], what)
              pruned_at = k
            end
            -- totals: the line and the children's totals
            if parent[k] > 0 then tot[parent[k]] = tot[parent[k]] - tot[k] end
          end
          for k = 1, #parent do assert.are.equal(self[k], tot[k], what .. " frame " .. k) end
          local positive = 0
          for f = 1, #want do
            local w = want[f] > 0 and want[f] or 0
            positive = positive + w
            assert.are.equal(w, got[f] or 0, what .. " function " .. f)
          end
          assert.are.equal(positive, sum_self, what)
          -- every line is at least the cut but those under [pruned]
          local cut = stacks.cut(threshold, total)
          for k = 1, #parent do
            if self[k] > 0 and parent[k] ~= pruned_at then
              assert.is_true(self[k] >= cut, what .. " line " .. k)
            end
          end
          if threshold == 0 then assert.is_nil(pruned_at, what) end
        end
        if total > 0 then
          local folded = assert(p:folded(ev, { max_bytes = 1 << 34 }))
          local positive = 0
          for f = 1, #want do if want[f] > 0 then positive = positive + want[f] end end
          assert.are.equal(positive, sum(folded), path .. " " .. ev)
        end
      end
    end
  end)

  it("prunes the corpus's small stacks into [pruned]", function()
    local p = assert(callgrind.load("spec/corpus/gprof2dot/xapian.callgrind"))
    local text = p:folded("Ir")
    local under, n = 0, 0
    for frames, v in text:gmatch("([^\n]*) (%d+)\n") do
      n = n + 1
      if frames:find("^%[pruned%];") then
        under = under + 1
        assert.is_true(tonumber(v) < stacks.cut(nil, p:total("Ir")))
      end
    end
    -- 1,265 of its 1,948 lines (2,167 unpruned at the same threshold)
    assert.are.equal(1265, under)
    assert.are.equal(1948, n)
  end)
end)
