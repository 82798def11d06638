-- The conformance corpus (spec/corpus, PROVENANCE.md): valgrind's annotate oracles. How the
-- expected values were worked out: spec/corpus_load_spec.lua.

local C = require "spec.support.corpus"
local load, collect, func, self_of = C.load, C.collect, C.func, C.self_of

describe("the conformance corpus", function()
  describe("valgrind's cg_annotate and callgrind_annotate oracles", function()
    local DL = "/build/glibc-OTsEL5/glibc-2.27/"

    it("gives valgrind/ann1.cgout the PROGRAM TOTALS of ann1a/ann1b.post.exp", function()
      -- ann1a: Ir 5,229,753 I1mr 952 ILmr 931; ann1b: Dw 18,005 Dr 4,057,955;
      -- the other three from its summary: line (which cg_annotate checks)
      local prof = load("valgrind/ann1.cgout")
      assert.are.same({ Ir = 5229753, I1mr = 952, ILmr = 931, Dr = 4057955, D1mr = 1918, DLmr = 1520,
                        Dw = 18005, D1mw = 745, DLmw = 699 }, prof:totals())
      -- the Metadata section: desc: values without the blanks after the
      -- colon, and the events: line's trailing blank is no event
      assert.are.same({ ["I1 cache"] = "32768 B, 64 B, 8-way associative",
                        ["D1 cache"] = "32768 B, 64 B, 8-way associative",
                        ["LL cache"] = "19922944 B, 64 B, 19-way associative" }, collect(prof:parts())[1].desc)
      assert.are.equal("./a.out", prof.cmd)
      assert.are.same({ "Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw" }, prof.events)
    end)

    -- file:function self costs: Ir I1mr ILmr from ann1a.post.exp (and
    -- callgrind_annotate-ann1.post.exp, which agrees), Dw Dr from ann1b.post.exp
    -- and callgrind_annotate-ann2.post.exp where they list the function.
    local ANN1 = {
      { "main", "a.c", { Ir = 5000015, I1mr = 1, ILmr = 1, Dw = 3, Dr = 4000004 } },
      { "do_lookup_x", DL .. "elf/dl-lookup.c", { Ir = 47993, I1mr = 19, ILmr = 19, Dw = 4543, Dr = 17566 } },
      { "_dl_lookup_symbol_x", DL .. "elf/dl-lookup.c", { Ir = 28534, I1mr = 11, ILmr = 11, Dw = 3083, Dr = 5750 } },
      { "__GI___tunables_init", DL .. "elf/dl-tunables.c", { Ir = 28136, I1mr = 7, ILmr = 7, Dw = 8, Dr = 5521 } },
      { "strcmp", DL .. "string/../sysdeps/x86_64/strcmp.S", { Ir = 25408, I1mr = 47, ILmr = 47, Dw = 0, Dr = 5158 } },
      { "_dl_relocate_object", DL .. "elf/../sysdeps/x86_64/dl-machine.h",
        { Ir = 21821, I1mr = 23, ILmr = 23, Dw = 2490, Dr = 5219 } },
      { "_dl_relocate_object", DL .. "elf/do-rel.h", { Ir = 11521, I1mr = 15, ILmr = 15 } },
      { "__GI___tunables_init", DL .. "elf/dl-tunables.h", { Ir = 8055, I1mr = 0, ILmr = 0 } },
      { "_dl_name_match_p", DL .. "elf/dl-misc.c", { Ir = 6898, I1mr = 2, ILmr = 2 } },
    }
    for _, row in ipairs(ANN1) do
      local name, file, want = row[1], row[2], row[3]
      it("gives valgrind/ann1.cgout's " .. file .. ":" .. name .. " the self cost cg_annotate reports", function()
        local fn = func(load("valgrind/ann1.cgout"), name, file)
        local got = {}
        for ev in pairs(want) do got[ev] = fn:self(ev) end
        assert.are.same(want, got)
      end)
    end

    it("gives valgrind/ann1.cgout's functions the function:file totals of ann1a/ann1b.post.exp", function()
      -- summed over every file a function name appears in
      local want = {
        main = { Ir = 5000015, I1mr = 1, ILmr = 1, Dw = 3, Dr = 4000004 },
        do_lookup_x = { Ir = 48347, I1mr = 20, ILmr = 20, Dw = 4543, Dr = 17684 },
        __GI___tunables_init = { Ir = 36191, I1mr = 7, ILmr = 7, Dw = 8, Dr = 7430 },
        _dl_relocate_object = { Ir = 34576, I1mr = 51, ILmr = 51, Dw = 3010, Dr = 8480 },
        _dl_lookup_symbol_x = { Ir = 28534, I1mr = 11, ILmr = 11, Dw = 3083, Dr = 5750 },
        strcmp = { Ir = 25426, I1mr = 48, ILmr = 48, Dw = 0, Dr = 5166 },
        _dl_name_match_p = { Ir = 6898, I1mr = 2, ILmr = 2 },
      }
      local got = {}
      for fn in load("valgrind/ann1.cgout"):functions() do
        if want[fn.name] then
          got[fn.name] = got[fn.name] or {}
          for ev in pairs(want[fn.name]) do got[fn.name][ev] = (got[fn.name][ev] or 0) + fn:self(ev) end
        end
      end
      assert.are.same(want, got)
    end)

    it("gives valgrind/ann1.cgout's source files the file totals of ann1a/ann1b.post.exp", function()
      local want = {
        [DL .. "elf/dl-lookup.c"] = { Ir = 76688, I1mr = 32, ILmr = 32, Dw = 7668, Dr = 23365 },
        [DL .. "elf/dl-tunables.c"] = { Ir = 28391, I1mr = 11, ILmr = 9, Dw = 22, Dr = 5577 },
        [DL .. "string/../sysdeps/x86_64/strcmp.S"] = { Ir = 25408, I1mr = 47, ILmr = 47, Dw = 0, Dr = 5158 },
        [DL .. "elf/../sysdeps/x86_64/dl-machine.h"] = { Ir = 22214, I1mr = 25, ILmr = 25, Dw = 2542, Dr = 5343 },
        [DL .. "elf/do-rel.h"] = { Ir = 11817, I1mr = 16, ILmr = 16 },
        [DL .. "elf/dl-tunables.h"] = { Ir = 8055, I1mr = 0, ILmr = 0 },
        [DL .. "elf/dl-misc.c"] = { Ir = 6939, I1mr = 5, ILmr = 5 },
        ["a.c"] = { Ir = 5000015, I1mr = 1, ILmr = 1 },
        -- ann1a's "unannotated: files unknown" row is fl=???
        ["???"] = { Ir = 472, I1mr = 45, ILmr = 38 },
      }
      local got = {}
      for fn in load("valgrind/ann1.cgout"):functions() do
        if want[fn.file] then
          got[fn.file] = got[fn.file] or {}
          for ev in pairs(want[fn.file]) do got[fn.file][ev] = (got[fn.file][ev] or 0) + fn:self(ev) end
        end
      end
      assert.are.same(want, got)
    end)

    it("gives valgrind/ann1.cgout's a.c the per-line costs of its annotated source", function()
      -- ann1a.post.exp (Ir I1mr ILmr) and callgrind_annotate-ann2.post.exp
      -- (Dw Dr) annotate a.c lines 1-7; line 5 has no data
      local want = {
        [1] = { Ir = 2, I1mr = 0, ILmr = 0, Dw = 1, Dr = 0 },
        [2] = { Ir = 1, I1mr = 1, ILmr = 1, Dw = 1, Dr = 0 },
        [3] = { Ir = 3000004, I1mr = 0, ILmr = 0, Dw = 1, Dr = 2000001 },
        [4] = { Ir = 2000000, I1mr = 0, ILmr = 0, Dw = 0, Dr = 2000000 },
        [6] = { Ir = 6, I1mr = 0, ILmr = 0, Dw = 0, Dr = 1 },
        [7] = { Ir = 2, I1mr = 0, ILmr = 0, Dw = 0, Dr = 2 },
      }
      local got = {}
      for line in load("valgrind/ann1.cgout"):lines() do
        if line.file == "a.c" then
          local t = got[line.line] or {}
          got[line.line] = t
          for ev in pairs(want[1]) do t[ev] = (t[ev] or 0) + line:cost(ev) end
        end
      end
      assert.are.same(want, got)
    end)

    it("gives valgrind/ann2.cgout the PROGRAM TOTALS of ann2.post.exp", function()
      local prof = load("valgrind/ann2.cgout")
      assert.are.same({ "A", "SomeCount", "VeryLongEventName" }, prof.events)
      assert.are.same({ A = 100000, SomeCount = 100000, VeryLongEventName = 0 }, prof:totals())
    end)

    -- ann2.post.exp, "File:function summary"; rows it leaves out (below its
    -- 0.5% threshold) by hand from ann2.cgout, marked "hand".
    local ANN2 = {
      { "f0", "ann2-basic.rs", { 68081, 90291, 0 } },
      { "f1", "ann2-basic.rs", { 15000, 600, 0 } },       -- 5000 + 5000 + 5000, 0 + 500 + 100
      { "f2", "ann2-basic.rs", { 2000, 100, 0 } },
      { "f3", "ann2-basic.rs", { 10, 9, 0 } },            -- hand
      { "f4", "ann2-basic.rs", { 500, 0, 0 } },           -- implicit zeros, and `18` alone
      { "f5", "ann2-basic.rs", { 499, 2000, 0 } },        -- hand
      { "f6", "ann2-basic.rs", { 500, 0, 0 } },           -- repeated line numbers add up
      { "f1", "ann2-could-not-be-found.rs", { 9000, 6000, 0 } },
      { "<unspecified>", "ann2-past-the-end.rs", { 1000, 500, 0 } },
      { "f1", "ann2-past-the-end.rs", { 1000, 300, -1000 } },
      { "new", "ann2-more-recent-than-cgout.rs", { 1000, 0, 0 } },
      { "unknown", "???", { 1000, 0, 0 } },
      { "neg1", "ann2-negatives.rs", { 0, 0, 1000 } },    -- hand
      { "neg2a", "ann2-negatives.rs", { 500000, 0, -150000 } },
      { "neg2b", "ann2-negatives.rs", { 499999, 0, 0 } },
      { "neg3", "ann2-negatives.rs", { -1000000, 0, 150000 } },
      { "neg4", "ann2-negatives.rs", { 11, 0, 0 } },      -- hand
      { "below1", "ann2-below-threshold.rs", { 200, 100, 0 } }, -- hand
      { "below2", "ann2-below-threshold.rs", { 200, 100, 0 } }, -- hand
    }

    it("gives valgrind/ann2.cgout exactly the functions of ann2.cgout, with the self costs of ann2.post.exp", function()
      local prof = load("valgrind/ann2.cgout")
      local want, got = {}, {}
      for _, row in ipairs(ANN2) do
        want[row[2] .. ":" .. row[1]] = { A = row[3][1], SomeCount = row[3][2], VeryLongEventName = row[3][3] }
      end
      for fn in prof:functions() do
        assert.is_nil(fn.object)
        got[fn.file .. ":" .. fn.name] = self_of(fn)
      end
      assert.are.same(want, got)
    end)

    it("finds f1 in three files of valgrind/ann2.cgout and calls a bare lookup ambiguous", function()
      local prof = load("valgrind/ann2.cgout")
      local fn, err = prof:func("f1")
      assert.is_nil(fn)
      assert.are.equal("ambiguous: ", err:sub(1, #"ambiguous: "))
      assert.are.equal(15000, func(prof, "f1", "ann2-basic.rs"):self("A"))
      assert.are.equal(9000, func(prof, "f1", "ann2-could-not-be-found.rs"):self("A"))
      assert.are.equal(-1000, func(prof, "f1", "ann2-past-the-end.rs"):self("VeryLongEventName"))
    end)

    it("gives valgrind/ann2.cgout's source lines the costs of ann2.post.exp's annotated files", function()
      -- "Annotated source file" sections; `<unknown (line 0)>` is line 0 and
      -- `<bogus line N>` is line N; a row of 0s is a line with data, a row of
      -- dots a line without.  ann2-more-recent-than-cgout.rs line 2 too.
      local want = {
        ["ann2-basic.rs"] = {
          [0] = { 7100, 100, 0 }, [4] = { 5000, 500, 0 }, [5] = { 5000, 100, 0 },
          [7] = { 68081, 90291, 0 }, [9] = { 110, 9, 0 }, [12] = { 200, 0, 0 },
          [13] = { 200, 0, 0 }, [14] = { 100, 0, 0 }, [15] = { 0, 0, 0 }, [16] = { 0, 0, 0 },
          [17] = { 0, 0, 0 }, [18] = { 0, 0, 0 }, [19] = { 499, 2000, 0 }, [20] = { 300, 0, 0 },
        },
        ["ann2-negatives.rs"] = {
          [0] = { -2000, -1000, -990 }, [1] = { 2000, 2000, 2000 }, [2] = { -1000, -1000, 0 },
          [5] = { 500000, 0, -150000 }, [6] = { 499999, 0, 0 }, [8] = { -1000000, 0, 150000 },
          [10] = { -8000, 0, 10 }, [11] = { 9000, 0, -20 }, [13] = { 11, 0, 0 },
        },
        ["ann2-past-the-end.rs"] = {
          [1] = { 1000, 500, 0 }, [2] = { 200, 100, 0 }, [20] = { 300, 100, 0 },
          [21] = { 300, 100, 0 }, [22] = { 200, 0, -1000 },
        },
        ["ann2-more-recent-than-cgout.rs"] = { [2] = { 1000, 0, 0 } },
      }
      local got = {}
      for line in load("valgrind/ann2.cgout"):lines() do
        if want[line.file] then
          local f = got[line.file] or {}
          got[line.file] = f
          local t = f[line.line] or { 0, 0, 0 }
          f[line.line] = t
          for i = 1, 3 do t[i] = t[i] + line:cost(i) end
        end
      end
      assert.are.same(want, got)
    end)

    it("gives the cg_merge inputs valgrind/ann-merge1a.cgout and ann-merge1b.cgout their shares of "
       .. "ann-merge1.post.exp", function()
      -- ann-merge1.post.exp / ann-merge2.post.exp (the merge of both): total
      -- 86; x1 40, x3 20, x2 10, y1 16.  By hand from the two inputs: a has
      -- x1 10+10, x2 10, y1 8+8 (46); b has x1 10+10, x3 20 (40).
      local a, b = load("valgrind/ann-merge1a.cgout"), load("valgrind/ann-merge1b.cgout")
      assert.are.equal(86, a:total("A") + b:total("A"))
      assert.are.equal(46, a:total("A"))
      assert.are.equal(40, b:total("A"))
      assert.are.equal(40, func(a, "x1"):self("A") + func(b, "x1"):self("A"))
      assert.are.equal(20, func(a, "x1"):self("A"))
      assert.are.equal(10, func(a, "x2"):self("A"))
      assert.are.equal(16, func(a, "y1"):self("A"))
      assert.are.equal(20, func(b, "x3"):self("A"))
      assert.are.equal("ann-merge-x.rs", func(b, "x3").file)
      assert.are.equal("ann-merge-y.rs", func(a, "y1").file)
      -- the merged annotated files: x.rs lines 1-5 = 20 10 10 10 20, y.rs 8 8
      local got = {}
      for _, prof in ipairs({ a, b }) do
        for line in prof:lines() do
          local key = line.file .. ":" .. line.line
          got[key] = (got[key] or 0) + line:cost("A")
        end
      end
      assert.are.same({ ["ann-merge-x.rs:1"] = 20, ["ann-merge-x.rs:2"] = 10, ["ann-merge-x.rs:3"] = 10,
                        ["ann-merge-x.rs:4"] = 10, ["ann-merge-x.rs:5"] = 20,
                        ["ann-merge-y.rs:1"] = 8, ["ann-merge-y.rs:2"] = 8 }, got)
      -- each input keeps its own cmd: line
      assert.are.equal("Command 1", a.cmd)
      assert.are.equal("Command 2", b.cmd)
    end)
  end)

end)
