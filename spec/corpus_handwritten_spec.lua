-- The conformance corpus (spec/corpus, PROVENANCE.md): hand-written files (Qt Creator's, callgrind's own). How the
-- expected values were worked out: spec/corpus_load_spec.lua.

local C = require "spec.support.corpus"
local load, collect, func, the_call = C.load, C.collect, C.func, C.the_call

describe("the conformance corpus", function()
  describe("Qt Creator's hand-written files", function()
    it("reads qt-creator/multiCostAndPos.out's `positions: line memAddr` as a line and no address", function()
      -- by hand: main (ob /my/object, fl /my/file.cpp) has 3 cost lines of
      -- Ir 1 Time 100 at lines 1, 2 (inside fi=/my/file.h), 3; one call to
      -- func1 (`calls=1 1 0x04`, cost line `4 0x05 1 100`); func1 `1 0x04 1 100`
      local prof = load("qt-creator/multiCostAndPos.out")
      assert.are.same({ "Ir", "Time" }, prof.events)
      -- `desc: I1 cache:` has an empty value
      assert.are.same({ ["I1 cache"] = "", ["D1 cache"] = "", ["L2 cache"] = "",
                        Timerange = "Basic block 0 - 300089", Trigger = "Program termination" },
                      collect(prof:parts())[1].desc)
      local main, func1 = func(prof, "main"), func(prof, "func1")
      assert.are.same({ Ir = 3, Time = 300 }, main:self())
      assert.are.same({ Ir = 1, Time = 100 }, func1:self())
      assert.are.equal("/my/object", main.object)
      assert.are.equal("/my/object", func1.object)
      assert.are.equal("/my/file.cpp", func1.file)
      local got = {}
      for line in main:lines() do
        got[#got + 1] = { line.line, line.addr == nil, line.file, line:cost("Ir"), line:cost("Time") }
      end
      assert.are.same({ { 1, true, "/my/file.cpp", 1, 100 }, { 2, true, "/my/file.h", 1, 100 },
                        { 3, true, "/my/file.cpp", 1, 100 } }, got)
      local c = the_call(prof, "main", "func1")
      assert.are.same({ 1, 4, 1, 1, 100 }, { c.count, c.line, c.target_line, c:cost("Ir"), c:cost("Time") })
      assert.is_nil(c.addr)
      assert.is_nil(c.target_addr)
      assert.are.equal(func1, c.callee)
    end)

    it("reads qt-creator/inlinedFunctions.out's cost line after fi= as file.h inside main of file1.c", function()
      -- by hand: main `1 1` (file1.c), fi=(2) file.h `2 1`, two calls made
      -- inside the fi= block, fe=(1) `1 2`; the first call's target has no
      -- cfi=, so its file is the fi= in force (file.h, where fl=(2) defines
      -- Something::Inlined()); the second names cfl=(3) file3.h
      local prof = load("qt-creator/inlinedFunctions.out")
      local main = func(prof, "main")
      assert.are.equal("file1.c", main.file)
      assert.are.equal(4, main:self("Ir"))
      local got = {}
      for line in main:lines() do got[#got + 1] = { line.line, line.file, line:cost("Ir") } end
      assert.are.same({ { 1, "file1.c", 1 }, { 2, "file.h", 1 }, { 1, "file1.c", 2 } }, got)
      local inl = the_call(prof, "main", "Something::Inlined()")
      assert.are.same({ 1, "file.h", 1, 50, 400 }, { inl.count, inl.file, inl.line, inl.target_line, inl:cost("Ir") })
      assert.are.equal("file.h", inl.callee.file)
      assert.are.equal(func(prof, "Something::Inlined()", "file.h"), inl.callee)
      assert.are.equal(400, inl.callee:self("Ir"))
      local f1 = the_call(prof, "main", "func1")
      assert.are.equal("file3.h", f1.callee.file)
      assert.are.equal(400, f1.callee:self("Ir"))
      assert.are.equal(3, #collect(prof:functions()))
    end)

    it("reads qt-creator/recursiveCycle.out's recursion-level names as distinct functions", function()
      -- by hand: self = the non-call cost lines of each fn= block; no fl= at
      -- all, so no function has a file
      local prof = load("qt-creator/recursiveCycle.out")
      local got = {}
      for fn in prof:functions() do
        assert.is_nil(fn.file)
        got[fn.name] = fn:self("Ir")
      end
      assert.are.same({ main = 7, ["A(int)"] = 700019, ["B(int)"] = 700016,
                        ["A(int)'2"] = 35000946, ["B(int)'2"] = 34300784 }, got)
      local calls = {}
      for c in prof:calls() do
        calls[#calls + 1] = string.format("%s->%s %d %d", c.caller.name, c.callee.name, c.count, c:cost("Ir"))
      end
      table.sort(calls)
      assert.are.same({ "A(int)'2->B(int)'2 49 1715042679", "A(int)->B(int) 1 70001746",
                        "B(int)'2->A(int)'2 49 1680741895", "B(int)->A(int)'2 1 69301730",
                        "main->A(int) 1 70701765" }, calls)
    end)
  end)

  describe("callgrind's own files, by hand", function()
    local GLIBC = "/build/glibc-mXZSwJ/glibc-2.24/elf/"

    it("resolves gprof2dot/issue35.callgrind's relative call target `calls=8 -20` against the last cost line",
       function()
      -- lines 103-114: fl=(17) (dl-minimal.c, defined by cfi= at line 51),
      -- fn=(38) calloc, cost lines at 101 +8 -1 -3 +4 +3 = 101 109 108 105
      -- 109 112, then cfn=(42) malloc, `calls=8 -20` (target line 92),
      -- `* 190` (call site 112), `* 8` (self again, line 112).  ob=(1) is
      -- ld-2.24.so (cob=(1) at line 50).  malloc has no cfi=: same file.
      local prof = load("gprof2dot/issue35.callgrind")
      local calloc = func(prof, "calloc")
      assert.are.same({ "/lib/x86_64-linux-gnu/ld-2.24.so", GLIBC .. "dl-minimal.c" },
                      { calloc.object, calloc.file })
      local got = {}
      for line in calloc:lines() do got[#got + 1] = { line.line, line:cost("Ir") } end
      assert.are.same({ { 101, 8 }, { 109, 8 }, { 108, 16 }, { 105, 8 }, { 109, 16 }, { 112, 8 }, { 112, 8 } },
                      got)
      assert.are.equal(72, calloc:self("Ir"))
      local c = the_call(prof, "calloc", "malloc")
      assert.are.same({ 8, 112, 92, 190, GLIBC .. "dl-minimal.c" },
                      { c.count, c.line, c.target_line, c:cost("Ir"), c.callee.file })
    end)

    it("switches gprof2dot/issue35.callgrind's line file with fi= and fe= inside _dl_start", function()
      -- lines 2506-2518: fl=(2) rtld.c, fn=(2) _dl_start, `353 9`, `+18 4`,
      -- fi=(3) (get-dynamic-info.h, line 1122) `45 1`, fe=(2) `371 1`,
      -- fi=(5) dl-machine.h `59 3`, fi=(3) `-14 1`, fe=(2) `397 1`
      local prof = load("gprof2dot/issue35.callgrind")
      local f = func(prof, "_dl_start")
      assert.are.equal(GLIBC .. "rtld.c", f.file)
      local got = {}
      for line in f:lines() do
        if #got == 7 then break end
        got[#got + 1] = { line.line, line.file:match("[^/]*$"), line:cost("Ir") }
      end
      assert.are.same({ { 353, "rtld.c", 9 }, { 371, "rtld.c", 4 }, { 45, "get-dynamic-info.h", 1 },
                        { 371, "rtld.c", 1 }, { 59, "dl-machine.h", 3 }, { 45, "get-dynamic-info.h", 1 },
                        { 397, "rtld.c", 1 } }, got)
    end)

    it("keeps gprof2dot/issue35.callgrind's recursion levels cycfn1/cycfn1'2 apart and adds up repeated blocks",
       function()
      -- lines 4239-4274 and 4537-4540, all in ob=(5) val3, fl=(64) ???:
      -- main `0 3` `0 6` `0 3`; cycfn2 2400000012 + 799934642; cycfn2'2
      -- 2400000012 + 799970658; cycfn1 1599955662 + 2; cycfn1'2 7, and
      -- 1600046005 in a second fn=(287) block
      local prof = load("gprof2dot/issue35.callgrind")
      local got = {}
      for _, name in ipairs({ "main", "cycfn2", "cycfn2'2", "cycfn1", "cycfn1'2" }) do
        local f = func(prof, name)
        assert.are.same({ "/home/jfonseca/projects/gprof2dot/tests/src/val3", "???" }, { f.object, f.file })
        got[name] = f:self("Ir")
      end
      assert.are.same({ main = 12, cycfn2 = 3199934654, ["cycfn2'2"] = 3199970670, cycfn1 = 1599955664,
                        ["cycfn1'2"] = 1600046012 }, got)
      local calls = {}
      for _, pair in ipairs({ { "main", "cycfn2" }, { "cycfn2", "cycfn1" }, { "cycfn1", "cycfn2'2" },
                              { "cycfn2'2", "cycfn1'2" } }) do
        local c = the_call(prof, pair[1], pair[2])
        calls[#calls + 1] = { c.count, c:cost("Ir") }
      end
      assert.are.same({ { 1, 9599907000 }, { 1, 6399972346 }, { 1, 4800016682 }, { 1, 1600046012 } }, calls)
    end)
  end)

end)
