-- The conformance corpus (spec/corpus, PROVENANCE.md): writers' quirks. How the
-- expected values were worked out: spec/corpus_load_spec.lua.

local C = require "spec.support.corpus"
local load, collect, func, the_call = C.load, C.collect, C.func, C.the_call

describe("the conformance corpus", function()
  describe("writers' quirks", function()
    it("calls the Repo->find of Repo.php from cachegrind-studio/no-cfl.out's cfn=(1) with no cfl=", function()
      -- PROVENANCE.md: the callee file comes from its own fn= record (Xdebug
      -- bug #489); by hand: {main} `calls=3 0 0`, `9 960 1536`
      local prof = load("cachegrind-studio/no-cfl.out")
      assert.are.equal(2, #collect(prof:functions()))
      local c = the_call(prof, "{main}", "Repo->find")
      assert.are.same({ 3, 9, 960, 1536, "/srv/app/src/Repo.php" },
                      { c.count, c.line, c:cost(1), c:cost(2), c.callee.file })
      assert.are.same({ ["Time_(10ns)"] = 320, ["Memory_(bytes)"] = 512 }, c.callee:self())
    end)

    it("loads pprof/pprof.cpu.callgrind's calls=0 as calls with count 0", function()
      local prof = load("pprof/pprof.cpu.callgrind")
      local calls = collect(prof:calls())
      assert.are.equal(9, #calls)
      for _, c in ipairs(calls) do assert.are.equal(0, c.count) end
      -- by hand: the first block, `0x1000 1 1100`
      local f = func(prof, "line1000")
      assert.are.equal(1100, f:self(1))
      assert.are.equal("testdata/file1000.src", f.file)
      assert.are.equal("/path/to/testbinary", f.object)
      local l = collect(f:lines())
      assert.are.same({ 0x1000, 1 }, { l[1].addr, l[1].line })
      -- by hand: line2001 `+4096 9 10` (0x2000), calls=0 * 1, `* * 1000`
      local c = the_call(prof, "line2001", "line1000")
      assert.are.same({ 0, 0x2000, 9, 0x2000, 1, 1000 },
                      { c.count, c.addr, c.line, c.target_addr, c.target_line, c:cost(1) })
    end)

    it("reads pprof/pprof.heap.callgrind's empty ob= as an empty object name and its absolute hex call target",
       function()
      -- by hand: `0x2000 2 62`, then calls=0 0x1000 1 and `* * 0`
      local prof = load("pprof/pprof.heap.callgrind")
      local f = func(prof, "line2001")
      assert.are.equal("", f.object)
      assert.are.equal(62, f:self(1))
      local c = the_call(prof, "line2001", "line1000")
      assert.are.same({ 0, 0x2000, 2, 0x1000, 1, 0 },
                      { c.count, c.addr, c.line, c.target_addr, c.target_line, c:cost(1) })
      assert.are.equal("testdata/file1000.src", c.callee.file)
    end)

    it("reads jruby's fl=(jruby_runtime) and fn=(top) as plain names, not ids", function()
      local prof = load("jruby-callgrind-printer/example1.callgrind.out")
      local got = {}
      for fn in prof:functions() do got[fn.file .. ":" .. fn.name] = fn:self("process_time") end
      -- by hand, one self line per block
      assert.are.same({ ["(jruby_runtime):Fixnum#<=>"] = 8766488, ["example1.rb:Object#fibonacci"] = 256712,
                        ["(jruby_runtime):Range#include?"] = 43158495, ["(jruby_runtime):Integer#upto"] = 248929,
                        ["(jruby_runtime):(top)"] = 0 }, got)
      local top = the_call(prof, "(top)", "Integer#upto")
      assert.are.same({ 1, 114834005 }, { top.count, top:cost(1) })
      local rec = the_call(prof, "Object#fibonacci", "Object#fibonacci")
      assert.are.same({ 57270, 8, 8, 0 }, { rec.count, rec.line, rec.target_line, rec:cost(1) })
    end)

    it("takes klee's 13 events from events:, its event: lines giving long names only", function()
      local prof = load("klee-map2check/run.istats")
      assert.are.same({ "Icov", "Forks", "Ireal", "Itime", "I", "UCdist", "Rtime", "States", "Iuncov",
                        "Q", "Qiv", "Qv", "Qtime" }, prof.events)
      assert.are.same({}, prof:warnings())
      -- by hand: line 29-30, `calls=1 2208 0` then `55 14 33 0 0 0 54 0 ...`:
      -- decimal instr 55 at line 14, target instr 2208 line 0
      local c = collect(func(prof, "main"):calls())[1]
      assert.are.same({ "memset", 1, 55, 14, 2208, 0, 33, 54 },
                      { c.callee.name, c.count, c.addr, c.line, c.target_addr, c.target_line,
                        c:cost("Icov"), c:cost("I") })
      -- `fl=` (empty) before fn=map2check_track_bb
      assert.are.equal("", func(prof, "map2check_track_bb", "").file)
    end)

    it("gives bzr's functions the file of the fi= line before their fn= (there is no fl=)", function()
      -- by hand: lines 3-5 `fi=~`, `fn=<built-in method decompress>`, `0  586773`;
      -- lines 27-33 fi=.../btree_index.py, fn=_walk_through_internal_nodes ...,
      -- `1054 35121`, a call to _multi_bisect_right (calls=1836592 972, `1054 22831`)
      local prof = load("gprof2dot/bzr.callgrind")
      local d = func(prof, "<built-in method decompress>")
      assert.are.equal("~", d.file)
      assert.are.equal(586773, d:self("Ticks"))
      local w = func(prof, "_walk_through_internal_nodes bzrlib.btree_index:1054")
      local btree = "/usr/local/lib/python2.6/site-packages/bzrlib/btree_index.py"
      assert.are.equal(btree, w.file)
      assert.are.equal(35121, w:self("Ticks"))
      local c = the_call(prof, "_walk_through_internal_nodes bzrlib.btree_index:1054",
                         "_multi_bisect_right bzrlib.btree_index:972")
      assert.are.same({ 1836592, 1054, 972, 22831, btree },
                      { c.count, c.line, c.target_line, c:cost(1), c.callee.file })
      for fn in prof:functions() do assert.is_not_nil(fn.file) end
    end)

    it("reads gprof2dot/googlecode-issue34.callgrind's 2067 jumps, jcnd=65/211 among them", function()
      -- 801 jump= and 1266 jcnd= lines.  By hand (positions traced from
      -- `0x9c10 31` at line 94 through line 171 `+2 * 211` = 0x9d49 line 183):
      -- line 172 `jcnd=65/211 0x9e44 +7` then `* *` is a conditional jump in
      -- do_lookup_x (do-lookup.h) from 0x9d49 line 183 to 0x9e44 line 190,
      -- followed 65 times of 211.
      local prof = load("gprof2dot/googlecode-issue34.callgrind")
      local n, cond, found = 0, 0, {}
      for j in prof:jumps() do
        n = n + 1
        if j.conditional then cond = cond + 1 end
        if j.from.name == "do_lookup_x" and j.addr == 0x9d49 then found[#found + 1] = j end
      end
      assert.are.equal(2067, n)
      assert.are.equal(1266, cond)
      assert.are.equal(1, #found)
      local j = found[1]
      local dl = "/build/buildd/eglibc-2.10.1/elf/do-lookup.h"
      assert.are.same({ true, 65, 211, 183, 0x9e44, 190, dl, dl, "do_lookup_x", "/lib/ld-2.10.1.so" },
                      { j.conditional, j.count, j.executed, j.line, j.target_addr, j.target_line,
                        j.file, j.target_file, j.to.name, j.from.object })
      assert.are.equal(j.from, j.to)
      assert.are.equal(1, collect(prof:parts())[1].number)
    end)

    it("gives gungraun/callgrind.when_entry_point.out's hex-named functions the object and file ???", function()
      -- by hand: lines 21-24 ob=???, fl=???, fn=0x0000000004836294, `0 4 1 0 1 0 0 1`
      local prof = load("gungraun/callgrind.when_entry_point.out")
      local f = func(prof, "0x0000000004836294")
      assert.are.same({ "???", "???" }, { f.object, f.file })
      assert.are.same({ Ir = 4, Dr = 1, Dw = 0, I1mr = 1, D1mr = 0, D1mw = 0, ILmr = 1, DLmr = 0, DLmw = 0 },
                      f:self())
      assert.are.equal("target/release/benchmark-tests-exit 0", prof.cmd)
    end)

    it("splits php-cachegrindparser/example.cachegrind.out.dump into its two appended profiles", function()
      -- by hand (see the totals above): profile 1 Time 230 Memory 280,
      -- profile 2 Time 997 Memory 344, summary: only in profile 2
      local prof = load("php-cachegrindparser/example.cachegrind.out.dump")
      local parts = collect(prof:parts())
      assert.are.equal(2, #parts)
      assert.is_nil(parts[1].summary)
      assert.are.same({ Time = 1001, Memory = 344, Cycles = 0, Peakmemory = 0 }, parts[2].summary)
      local per_part = { {}, {} }
      for line in prof:lines() do
        local i = type(line.part) == "number" and line.part or line.part.index
        per_part[i].Time = (per_part[i].Time or 0) + line:cost("Time")
        per_part[i].Memory = (per_part[i].Memory or 0) + line:cost("Memory")
      end
      assert.are.same({ { Time = 230, Memory = 280 }, { Time = 997, Memory = 344 } }, per_part)
      -- {main} (only in profile 2), whose cost line follows the summary: line
      assert.are.same({ Time = 424, Memory = 64, Cycles = 0, Peakmemory = 0 }, func(prof, "{main}"):self())
      assert.are.equal(0, prof.version)
    end)

    it("reads php-cachegrindparser/cachegrind.out.491 (version: 0.9.6) as one part, {main}'s costs after its summary:",
       function()
      -- by hand: lines 19125-19129, fn={main}, blank, summary:, blank,
      -- `0 4920 161580 0 170760`
      local prof = load("php-cachegrindparser/cachegrind.out.491")
      assert.are.equal(0, prof.version)
      assert.are.equal(1, #collect(prof:parts()))
      local first = collect(func(prof, "{main}"):lines())[1]
      assert.are.same({ 0, 4920, 161580, 0, 170760 },
                      { first.line, first:cost("Time"), first:cost("Memory"), first:cost("Cycles"),
                        first:cost("Peakmemory") })
    end)

    it("reads pyprof2calltree's `event: ns : Nanoseconds` as a long name, not a second event", function()
      local prof = load("pyprof2calltree-combustion/profile.callgrind")
      assert.are.same({ "ns" }, prof.events)
    end)
  end)
end)
