-- The load's second thread (csrc/reader/cg_prescan.c): it sums runs of cost lines
-- ahead of the loader, and the loader takes a run at once or reads its
-- lines itself. Whichever it does, the model, the warnings and every
-- message are those of the load with one thread (`threads = 1`).
-- spec/model_dump_spec.lua compares every fixture and corpus file; this
-- spec adds fresh instr-level valgrind profiles, a file big enough for the
-- default (4 MB), and errors inside runs.
local callgrind = require "callgrind"
local internal = require("callgrind.core").internal
local function run_lines(prof) return (internal.load_stats(prof)) end
local D = require "spec.support.dump"
local H = require "spec.support.helpers"


describe("the load's second thread", function()
  local lab = H.lab("spec/prescan_spec.lua")
  local instr, big, big_one
  local N = 3000
  -- The big file's model in short (its 600,000 lines dumped one by one
  -- take minutes under valgrind): every function's self costs, blocks'
  -- worth of lines and calls, and the totals.
  local function short(prof)
    local t = { prof:total("Ir"), prof:total("Dr") }
    for fn in prof:functions() do
      local n = 0
      for _ in fn:ulines(1) do n = n + 1 end
      t[#t + 1] = ("%s %d %d %d lines"):format(fn.name, fn:self("Ir"), fn:self("Dr"), n)
      for call in fn:calls() do t[#t + 1] = ("-> %s %d"):format(call.callee.name, call.count) end
    end
    return table.concat(t, "\n")
  end
  -- as one thread reads it, made once
  local function one_thread()
    big_one = big_one or short(assert(callgrind.load(big, { threads = 1 })))
    return big_one
  end

  setup(function()
    lab:open()
    instr = lab:callgrind("instr", "--dump-instr=yes --collect-jumps=yes --cache-sim=yes")
    -- 5 MB: N fn= blocks of a first line, a call and 199 more lines; Ir
    -- of a block's lines: 1, then 2..200; Dr: 2 each; the call: 1 2
    big = lab.dir .. "/big.out"
    local t = { "events: Ir Dr\n" }
    for b = 1, N do
      t[#t + 1] = ("fn=f%d\n1 1 2\ncfn=g\ncalls=1 9\n+1 1 2\n"):format(b % 300)
      for i = 2, 200 do t[#t + 1] = ("+1 %d 2\n"):format(i) end
    end
    t[#t + 1] = "fn=g\n9 1 1\n"
    H.write_file(big, table.concat(t))
    assert.is_true(#table.concat(t) > 4 * 1024 * 1024)
  end)

  teardown(function() lab:close() end)

  it("gives the model of one thread on an instr-level valgrind profile, in chunks of 4 and 64 KiB", function()
    local one = assert(callgrind.load(instr, { threads = 1 }))
    assert.are.equal(0, run_lines(one))
    local want = D.dump(one)
    -- (few sizes, and none tiny: every chunk is a hand-over between the
    -- threads, and under valgrind, which runs one thread at a time, each
    -- costs a time slice)
    for _, chunk in ipairs({ 4096, 65536 }) do
      local two = assert(callgrind.load(instr, { chunk = chunk }))
      assert.is_true(run_lines(two) > 1000, chunk .. ": " .. run_lines(two) .. " lines in runs")
      assert.are.equal(want, D.dump(two), "chunk " .. chunk)
    end
  end)

  it("starts by itself on a file of 4 MB, in chunks of 128 KiB", function()
    local prof = assert(callgrind.load(big))
    local _, chunks, _, read_ahead = internal.load_stats(prof)
    -- its rest read by the second thread (spec/readahead_spec.lua)
    assert.are.equal(1, read_ahead)
    local size = #H.read_file(big)
    -- chunks end at the first line end past each 128 KiB
    assert.is_true(chunks >= size // (128 * 1024) - 1 and chunks <= size // (128 * 1024) + 1, chunks .. " chunks")
    -- self Ir of a block: 1 + (2 + ... + 200) = 20100; Dr: 200 * 2; g: 1 1
    assert.are.equal(N * 20100 + 1, prof:total("Ir"))
    assert.are.equal(N * 400 + 1, prof:total("Dr"))
    -- f7: blocks 7, 307, ..., 2707
    local f7 = prof:func("f7")
    assert.are.same({ 10 * 20100, 10 * 400 }, { f7:self("Ir"), f7:self("Dr") })
    assert.are.equal(one_thread(), short(prof))
  end)

  it("takes most of a file's lines in runs when the loader waits for it", function()
    -- `chunk` makes the loader wait for every chunk (by default it reads
    -- one the worker has not started itself, and how many those are
    -- depends on the machine: under valgrind, which runs one thread at a
    -- time, it can be all of them)
    local prof = assert(callgrind.load(big, { chunk = 128 * 1024 }))
    -- per block: line 1 (after fn=) and the 199 lines after the call's
    -- cost line are in runs; the call's cost line (after calls=) is the
    -- loader's, as are the lines of the first chunk (128 KiB, a fortieth
    -- of the file) and the first line of each chunk
    local lines = run_lines(prof)
    assert.is_true(lines > 0.9 * N * 200 and lines < N * 200, lines .. " lines in runs")
    assert.are.equal(one_thread(), short(prof))
  end)

  -- The vector paths (csrc/reader/cg_vec.h), where this CPU has them: they read
  -- most cost lines of a 9-event and of a 1-event instr-level profile, and
  -- a process with CALLGRIND_NO_VECTOR=1, which reads every line byte by
  -- byte, makes the same model of each.
  it("reads cost lines with the vector paths where the CPU has them, to the byte-by-byte path's model", function()
    local flags = (H.read_file("/proc/cpuinfo"):match("\nflags%s*:([^\n]*)") or "") .. " "
    local cpu = true
    for _, f in ipairs({ "avx512f", "avx512bw", "avx512vbmi", "avx512_vbmi2", "bmi2", "popcnt" }) do
      cpu = cpu and flags:find(" " .. f .. " ", 1, true) ~= nil
    end
    -- valgrind (make memcheck) does not emulate AVX-512, and sets LD_PRELOAD
    local off = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)
      or (os.getenv("CALLGRIND_NO_VECTOR") or "0"):find("[^0]")
    assert.are.equal(cpu and not off, internal.vector_paths())
    local one_event = lab:callgrind("instr1", "--dump-instr=yes")
    for _, path in ipairs({ instr, one_event }) do
      local prof = assert(callgrind.load(path, { chunk = 4096 }))
      local runs, _, vec = internal.load_stats(prof)
      if internal.vector_paths() then
        assert.is_true(vec > 0.5 * runs, path .. ": " .. vec .. " of " .. runs .. " lines in runs")
      else
        assert.are.equal(0, vec)
      end
      local out = lab.dir .. "/bytes.dump"
      -- (LD_PRELOAD kept: under make check-asan the core needs it)
      local script = ("package.path = %q package.cpath = %q local callgrind = require 'callgrind' "
        .. "local D = require 'spec.support.dump' local prof = assert(callgrind.load(%q, { chunk = 4096 })) "
        .. "local f = assert(io.open(%q, 'wb')) f:write(D.dump(prof)) f:close() "
        .. "print((select(3, require('callgrind.core').internal.load_stats(prof))))")
        :format(package.path, package.cpath, path, out)
      local p = assert(io.popen("CALLGRIND_NO_VECTOR=1 lua5.4 -e " .. H.shq(script) .. " 2>&1"))
      local said = p:read("a")
      p:close()
      assert.are.equal("0\n", said)
      assert.are.equal(H.read_file(out), D.dump(prof), path)
    end
  end)

  it("follows the positions: and events: lines of the first chunk, which it does not scan", function()
    -- the first chunk (the loader's) ends a part of one event and one
    -- position and starts one of two and two; the worker must scan every
    -- later chunk with the new layout for the loader to take its runs (a
    -- colon in a name must not look like a layout line to it)
    local path = lab.dir .. "/layout.out"
    local n = 20000
    local t = { "events: Ir\npositions: line\nfn=a::b\n1 1\ntotals: 1\n",
      "events: Ir Dr\npositions: instr line\nfn=c::d:\n0x10 1 1 2\n" }
    for i = 1, n do t[#t + 1] = ("+1 %d %d %d\n"):format(i % 7, i % 5, 1) end
    H.write_file(path, table.concat(t))
    for _, chunk in ipairs({ 1024, 16384 }) do
      local prof = assert(callgrind.load(path, { chunk = chunk }))
      local lines = run_lines(prof)
      assert.is_true(lines > 0.9 * n, chunk .. ": " .. lines .. " lines in runs")
      -- Ir: 1 + the sum of i % 5; Dr: 2 + n
      local ir = 1
      for i = 1, n do ir = ir + i % 5 end
      assert.are.same({ ir, 2 + n }, { prof:func("c::d:"):self("Ir"), prof:func("c::d:"):self("Dr") })
      assert.are.equal(D.dump(assert(callgrind.load(path, { threads = 1 }))), D.dump(prof))
    end
  end)

  -- each case: a file whose bad line sits inside what would be a run; the
  -- line numbers count from its events: line. In the files loaded, 21
  -- lines of another function come between, so that the lines of each
  -- case fall in later chunks of every size swept (the loader reads the
  -- first chunk itself)
  local filler = "fn=z\n" .. ("1 0\n"):rep(20)  -- costs 0: the sums stay
  local cases = {
    { "a relative position below 0",
      "fn=a\n5 1\n+1 1\n-3 1\n-9 1\n+1 1\n+1 1\n", 6 },
    { "a relative position below 0 before a line that writes it outright",
      "fn=a\n5 1\n+1 1\n+1 1\n-9 1\n3 1\n+1 1\n", 6 },
    { "a sum past 64 bits",
      "fn=a\n5 1\n+1 1\n+1 9223372036854775800\n+1 9\n+1 1\n", 6 },
    { "a negative cost that brings a sum back",
      "fn=a\n5 1\n+1 9223372036854775800\n+1 -10\n+1 10\n+1 1\n", nil },
    { "too many costs",
      "fn=a\n5 1\n+1 1\n+1 1 2\n+1 1\n", 5 },
    -- runs take jump=/jcnd= lines and their source lines: a target only
    -- has to stay in range, from the position before the source line
    { "a jump's target below 0",
      "fn=a\n5 1\n+1 1\njump=1 -9\n+1\n+1 1\n+1 1\n", 5 },
    { "a jump's target below 0 after a line that wrote the position outright",
      "fn=a\n5 1\n+1 1\n3 1\njump=1 -9\n+1\n+1 1\n", 6 },
    { "a jump's target past 2^64 - 1",
      "fn=a\n18446744073709551610 1\n+1 1\njump=1 +9\n+1\n+1 1\n", 5 },
    { "a jump's source line with costs",
      "fn=a\n5 1\n+1 1\njcnd=1/2 +3\n+1 1\n+1 1\n", 6 },
    { "jumps that reach 0 and the spec's jcnd=EXECUTED FOLLOWED",
      "fn=a\n5 1\n+1 1\njump=1 -6\n-6\n+1 1\njcnd=2 1 +3\n+1\n+1 1\njump=3 0x10\n*\n+1 1\n", nil },
    -- and calls between runs (cfn=, calls= and the call's cost line, which
    -- the loader reads itself): a bad line in one, or after one
    { "a call's cost line with a relative position below 0",
      "fn=a\n5 1\ncfn=(1) b\ncalls=1 9\n+1 3\ncfn=(1)\ncalls=2 9\n-9 3\n+1 1\n", 9 },
    { "a call's target below 0",
      "fn=a\n5 1\ncfn=(1) b\ncalls=1 9\n+1 3\ncfn=(1)\ncalls=2 -9\n+1 3\n+1 1\n", 8 },
    { "a bad line after calls taken whole",
      "fn=a\n5 1\ncfn=(1) b\ncalls=1 9\n+1 3\ncfn=(1)\ncalls=1 9\n+1 3\n+1 1\n-9 1\n", 11 },
    { "a call's cost line with too many costs",
      "fn=a\n5 1\ncfn=(1) b\ncalls=1 9\n+1 3\ncfn=(1)\ncalls=1 9\n+1 3 4\n+1 1\n", 9 },
    { "calls= without a cfn= line",
      "fn=a\n5 1\ncfn=(1) b\ncalls=1 9\n+1 3\ncalls=1 9\n+1 3\n+1 1\n", 7 },
    { "a cfn= line where a jump's source line should be",
      "fn=a\n5 1\ncfn=(1) b\ncalls=1 9\n+1 3\njump=1 9\ncfn=(1)\ncalls=1 9\n+1 3\n", 8 },
    { "calls of a forward reference, every position form and a count past 18 digits",
      "fn=a\n5 1\ncfn=(7)\ncalls=1 9\n+1 3\ncfn=(7) b\ncalls=3 +2 \n* 4\ncfn=(7)\ncalls=1 *\n-1 2\n"
        .. "cfn=(7)\ncalls=18446744073709551615 0x10\n+1 1\ncfn=(7)\ncalls=1\n0x20 1\n+1 1\n", nil },
    { "a second events: line's layout",
      "fn=a\n5 1\n+1 1\n+1 1\ntotals: 3\nevents: Ir Dr\nfn=b\n1 1 1\n+1 1 1\n+1 1 1\n", nil },
  }
  for _, case in ipairs(cases) do
    it("says what one thread says of " .. case[1] .. ", naming the line", function()
      local path = lab.dir .. "/case.out"
      H.write_file(path, "events: Ir\n" .. filler .. case[2])
      local p1, e1 = callgrind.load(path, { threads = 1 })
      for chunk = 8, 120, 4 do
        local p2, e2 = callgrind.load(path, { chunk = chunk })
        assert.are.equal(e1, e2, "chunk " .. chunk)
        assert.are.equal(D.dump(p1, e1), D.dump(p2, e2), "chunk " .. chunk)
        local l1 = assert(callgrind.load(path, { threads = 1, lenient = true }))
        local l2 = assert(callgrind.load(path, { chunk = chunk, lenient = true }))
        assert.are.equal(D.dump(l1), D.dump(l2), "lenient, chunk " .. chunk)
      end
      if case[3] then
        assert.is_nil(p1)
        local line = tostring(case[3] + 21)
        assert.are.equal(path .. ":" .. line .. ":", e1:sub(1, #path + #line + 2))
      else
        assert.is_not_nil(p1, e1)
      end
    end)
  end

  it("checks its options", function()
    local path = "spec/fixtures/parts.callgrind"
    for _, bad in ipairs({ { threads = 0 }, { threads = 1.5 }, { chunk = 0 } }) do
      local k = next(bad)
      local ok, err = pcall(callgrind.load, path, bad)
      assert.is_false(ok)
      assert.are.equal("bad argument #2 to 'load' (option '" .. k .. "' must be a whole number of at least 1)",
        err:gsub("^[^:]*:%d+: ", ""))
    end
    -- not a number at all: the options check's type error
    for _, bad in ipairs({ { "threads", "2", "'2'" }, { "chunk", true, "true" } }) do
      local ok, err = pcall(callgrind.load, path, { [bad[1]] = bad[2] })
      assert.is_false(ok)
      assert.are.equal("bad argument #2 to 'load' (option '" .. bad[1] .. "' must be number, got " .. bad[3] .. ")",
        err:gsub("^[^:]*:%d+: ", ""))
    end
  end)
end)
