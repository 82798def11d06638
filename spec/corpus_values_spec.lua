-- The conformance corpus (spec/corpus, PROVENANCE.md): values other projects assert, speedscope's snapshot. How the
-- expected values were worked out: spec/corpus_load_spec.lua.

local C = require "spec.support.corpus"
local load, sorted_keys, collect, func, self_of = C.load, C.sorted_keys, C.collect, C.func, C.self_of
local the_call = C.the_call

describe("the conformance corpus", function()
  describe("values other projects' tests assert", function()
    it("reads gungraun's minimal_main as its exp_map says: main with no file and no object, Ir..DLmw = 1..9", function()
      local prof = load("gungraun/callgrind.valid.minimal_main.out")
      local fns = collect(prof:functions())
      assert.are.equal(1, #fns)
      local main = fns[1]
      assert.are.equal("main", main.name)
      assert.is_nil(main.file)
      assert.is_nil(main.object)
      assert.are.same({ Ir = 1, Dr = 2, Dw = 3, I1mr = 4, D1mr = 5, D1mw = 6, ILmr = 7, DLmr = 8, DLmw = 9 },
                      main:self())
      assert.are.equal(main, func(prof, "main"))
      -- the header, by hand (cmd: keeps its value minus the two leading blanks)
      assert.are.equal(1, prof.version)
      assert.are.equal("callgrind-3.21.0", prof.creator)
      assert.are.equal(1828905, prof.pid)
      assert.are.equal("/some/project/target/release/deps/my-bin-3d69ca9f0e146ded --iai-run group 0 0 "
                       .. "bench_file::group::library_benchmark", prof.cmd)
      local part = collect(prof:parts())[1]
      assert.are.same({ ["I1 cache"] = "32768 B, 64 B, 8-way associative",
                        ["D1 cache"] = "32768 B, 64 B, 8-way associative",
                        ["LL cache"] = "8388608 B, 64 B, 16-way associative",
                        ["Timerange"] = "Basic block 0 - 69481",
                        ["Trigger"] = "Program termination" }, part.desc)
    end)

    it("reads go-cachegrind/s1.cachegrind as go-cachegrind's test does", function()
      -- cachegrindParser_test.go: {main} Time=15000303 Memory=32, one call to
      -- fun1 at line 3 with inclusive 15000293/32; fun1 Time=15000290
      -- Memory=32 and 3 calls to fun2.  By hand from the file those are
      -- self + outgoing call costs: {main} self is `1 10 0` (the summary: line
      -- sits between its fn= and its cost line) and 10 + 15000293 = 15000303;
      -- fun1 self is `5 54 32` and 54 + 5000097 + 5000056 + 5000083 = 15000290.
      local prof = load("go-cachegrind/s1.cachegrind")
      local main = func(prof, "{main}")
      local fun1 = func(prof, "fun1")
      assert.are.same({ Time = 10, Memory = 0 }, main:self())
      assert.are.same({ Time = 54, Memory = 32 }, fun1:self())
      local function self_plus_calls(fn)
        local t = self_of(fn)
        for call in fn:calls() do
          for ev in pairs(t) do t[ev] = t[ev] + call:cost(ev) end
        end
        return t
      end
      assert.are.same({ Time = 15000303, Memory = 32 }, self_plus_calls(main))
      assert.are.same({ Time = 15000290, Memory = 32 }, self_plus_calls(fun1))
      local calls = collect(main:calls())
      assert.are.equal(1, #calls)
      assert.are.equal(fun1, calls[1].callee)
      assert.are.equal(1, calls[1].count)
      assert.are.equal(3, calls[1].line)
      assert.are.same({ Time = 15000293, Memory = 32 },
                      { Time = calls[1]:cost("Time"), Memory = calls[1]:cost("Memory") })
      assert.are.equal("/var/www/html/index.php", fun1.file)
      local to_fun2 = collect(fun1:calls())
      assert.are.equal(3, #to_fun2)
      for _, call in ipairs(to_fun2) do
        assert.are.equal("fun2", call.callee.name)
        assert.are.equal(1, call.count)
      end
      -- fun2 and php::sleep repeat their records three times: they add up
      assert.are.same({ Time = 100, Memory = 0 }, func(prof, "fun2"):self())
      assert.are.same({ Time = 15000136, Memory = 0 }, func(prof, "php::sleep"):self())
      assert.are.equal("php:internal", func(prof, "php::sleep").file)
      assert.are.equal(1, #collect(prof:parts()))
    end)

    it("gives nytprof-callgrind-ticksdiff/test01.callgrind the 7 blocks TicksDiff counts", function()
      -- t/01_ticks.t: 7 blocks; each fl=/fn= block holds one record, 3 self
      -- lines and 4 calls (by hand)
      local prof = load("nytprof-callgrind-ticksdiff/test01.callgrind")
      local lines, calls = collect(prof:lines()), collect(prof:calls())
      assert.are.equal(7, #lines + #calls)
      assert.are.equal(3, #lines)
      assert.are.equal(4, #calls)
      assert.are.equal(4, #collect(prof:functions()))
      assert.are.equal(4740, func(prof, "main::cFunction"):self("Ticks"))
      assert.are.equal(2583, func(prof, "main::aFunction"):self("Ticks"))
      assert.are.equal(51923, func(prof, "main::bFunction"):self("Ticks"))
      local runtime = func(prof, "main::RUNTIME")
      assert.are.equal(0, runtime:self("Ticks"))
      assert.are.same({}, collect(runtime:lines()))
      local from_runtime = collect(runtime:calls())
      assert.are.equal(2, #from_runtime)
      assert.are.same({ 2, 30183, 5, 29065 }, { from_runtime[1].line, from_runtime[1]:cost("Ticks"),
                                                from_runtime[2].line, from_runtime[2]:cost("Ticks") })
      local c = the_call(prof, "main::aFunction", "main::bFunction")
      assert.are.same({ 200, 10, 17, 51923 }, { c.count, c.line, c.target_line, c:cost("Ticks") })
    end)
  end)

  describe("speedscope's importer snapshot", function()
    -- callgrind.test.ts.snap.expected: selfWeight per frame.  Self only (the
    -- snapshot's totalWeight is inclusive cost).  Speedscope shows Time_(10ns)
    -- in ns, so its Time weights are 10x the file's numbers.
    local SELF = {
      ["speedscope/callgrind.example.log"] = {
        main = { "file1.c", { Instructions = 20 } },
        func1 = { "file1.c", { Instructions = 100 } },
        func2 = { "file2.c", { Instructions = 700 } },
      },
      ["speedscope/callgrind.name-compression.log"] = {
        main = { "file1.c", { Instructions = 20 } },
        func1 = { "file1.c", { Instructions = 100 } },
        func2 = { "file2.c", { Instructions = 700 } },
      },
      ["speedscope/callgrind.multiple-event-types.log"] = {
        main = { "file1.c", { ["Time_(10ns)"] = 20, ["Memory_(bytes)"] = 15000 } },   -- 200 ns
        func1 = { "file1.c", { ["Time_(10ns)"] = 100, ["Memory_(bytes)"] = 15000 } }, -- 1000 ns
        func2 = { "file2.c", { ["Time_(10ns)"] = 700, ["Memory_(bytes)"] = 8000 } },  -- 7000 ns
      },
    }
    for _, rel in ipairs(sorted_keys(SELF)) do
      local fns = SELF[rel]
      it("gives " .. rel .. " the self weight and file of each frame in the snapshot", function()
        local prof = load(rel)
        local want, got = {}, {}
        for name, v in pairs(fns) do want[name] = { file = v[1], self = v[2] } end
        for fn in prof:functions() do got[fn.name] = { file = fn.file, self = self_of(fn) } end
        assert.are.same(want, got)
      end)
    end

    it("reads speedscope/callgrind.example.log, the format doc's example, call by call", function()
      -- by hand: main self 20, func1 100, func2 700; main -> func1 once at
      -- line 16 (cost 400), main -> func2 three times (cfi=file2.c, 400),
      -- func1 -> func2 twice at line 51 (300)
      local prof = load("speedscope/callgrind.example.log")
      assert.are.equal(1, prof.version)
      local main, func1, func2 = func(prof, "main"), func(prof, "func1"), func(prof, "func2")
      assert.are.same({ 20, 100, 700 }, { main:self(1), func1:self(1), func2:self(1) })
      local function call(c)
        return { c.caller.name, c.callee.name, c.count, c:cost("Instructions"), c.file, c.line, c.target_line }
      end
      assert.are.same({
        { "main", "func1", 1, 400, "file1.c", 16, 50 },
        { "main", "func2", 3, 400, "file1.c", 16, 20 },
        { "func1", "func2", 2, 300, "file1.c", 51, 20 },
      }, { call(the_call(prof, "main", "func1")), call(the_call(prof, "main", "func2")),
           call(the_call(prof, "func1", "func2")) })
      assert.are.equal(func2, the_call(prof, "main", "func2").callee)
      assert.are.equal(func2, the_call(prof, "func1", "func2").callee)
      assert.are.equal(3, #collect(prof:calls()))
      assert.are.equal(2, #collect(func2:callers()))
    end)

    it("reads speedscope/callgrind.multiple-event-types.log's calls with both events", function()
      -- by hand: calls=3 51 names target line 51; cfi=(2) file2.c is defined
      -- inside the call spec and fl=(2) refers to it
      local prof = load("speedscope/callgrind.multiple-event-types.log")
      local c = the_call(prof, "main", "func2")
      assert.are.same({ 3, 16, 51, 400, 3000 },
                      { c.count, c.line, c.target_line, c:cost("Time_(10ns)"), c:cost("Memory_(bytes)") })
      assert.are.equal(func(prof, "func2", "file2.c"), c.callee)
      local d = the_call(prof, "func1", "func2")
      assert.are.same({ 2, 51, 20, 300, 5000 },
                      { d.count, d.line, d.target_line, d:cost(1), d:cost(2) })
    end)

    it("reads speedscope/callgrind.cfn-reset.log with cfl= holding for one call only", function()
      -- the snapshot's frame keys: beta.c:beta, alpha.c:gamma, alpha.c:delta.
      -- Self by hand: 10 each (the snapshot's selfWeight of gamma, 20, is
      -- spread from call costs, not the file's self cost).
      local prof = load("speedscope/callgrind.cfn-reset.log")
      local got = {}
      for fn in prof:functions() do got[fn.file .. ":" .. fn.name] = fn:self("Instructions") end
      assert.are.same({ ["alpha.c:alpha"] = 10, ["alpha.c:delta"] = 10, ["alpha.c:gamma"] = 10,
                        ["beta.c:beta"] = 10 }, got)
      local calls = {}
      for c in prof:calls() do
        calls[#calls + 1] = c.caller.name .. "->" .. c.callee.file .. ":" .. c.callee.name
                            .. " " .. c:cost(1)
      end
      table.sort(calls)
      assert.are.same({ "alpha->alpha.c:delta 20", "alpha->alpha.c:gamma 10", "alpha->beta.c:beta 10",
                        "delta->alpha.c:gamma 10" }, calls)
    end)
  end)

end)
