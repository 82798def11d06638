-- The shared conformance corpus: real callgrind-format files from 16 public
-- repositories (spec/corpus; its PROVENANCE.md says
-- where each file comes from).  Every profile data file must load; the numbers
-- asserted here were worked out without the library: from the files' own
-- `totals:`/`summary:` lines, from the oracle files next to them
-- (cg_annotate/callgrind_annotate outputs, a speedscope snapshot, a gungraun
-- map), from the values PROVENANCE.md quotes from other projects' tests, or by
-- hand from the file text.  Each expected value says where it comes from.
--
-- "Summed by a scan" below means: outside the library, every line that starts
-- with a digit, `+`, `-` or `*` and does not follow a `calls=`, `jump=` or
-- `jcnd=` line was taken as a self-cost line, its leading position columns (as
-- many as `positions:` names, 1 without it) dropped and the remaining numbers
-- added per column.  This is done with Perl and awk while writing this spec,
-- and again by `scan` below (cost columns are never relative in a valid file,
-- so this needs no position arithmetic).

local callgrind = require "callgrind"
local C = require "spec.support.corpus"
local path, read_lines, header_values, scan, load = C.path, C.read_lines, C.header_values, C.scan, C.load
local sorted_keys, collect, warnings_at, func, the_call = C.sorted_keys, C.collect, C.warnings_at, C.func, C.the_call
local walk, DATA_FILES, BROKEN, CUT, CLEAN = C.walk, C.DATA_FILES, C.BROKEN, C.CUT, C.CLEAN
local TOTALS_AGREE, SUMMARY_AGREE, MISMATCH = C.TOTALS_AGREE, C.SUMMARY_AGREE, C.MISMATCH
local NO_HEADER_TOTALS = C.NO_HEADER_TOTALS

describe("the conformance corpus", function()
  it("holds exactly the 40 profile data files PROVENANCE.md lists", function()
    local listed = {}
    local in_table = false
    for _, l in ipairs(read_lines("PROVENANCE.md")) do
      if l:match("^## Profile data files") then in_table = true
      elseif l:match("^## ") then in_table = false
      elseif in_table then
        local cell = l:match("^| ([^|]-) |")
        if cell and cell:match("/") and not cell:match("^%-") then
          listed[#listed + 1] = cell:gsub("%s*`%[transcribed%]`", "")
        end
      end
    end
    table.sort(listed)
    assert.are.equal(40, #DATA_FILES)
    assert.are.same(listed, DATA_FILES)
  end)

  describe("loading", function()
    for _, rel in ipairs(DATA_FILES) do
      if not BROKEN[rel] then
        it("loads " .. rel .. " and walks every function, line, call, jump and part", function()
          local prof = load(rel)
          assert.are.equal(path(rel), prof.name)
          local n = walk(prof)
          if rel ~= "cachegrind-studio/truncated.out" then
            -- the same counts as the independent scan of the text
            local s = scan(rel)
            assert.are.same({ calls = s.calls, jumps = s.jumps, lines = s.costlines },
                            { calls = n.calls, jumps = n.jumps, lines = n.lines })
          end
        end)
      end
    end

    it("loads cachegrind-studio/truncated.out (cut off inside `cfn=(`) with one warning naming line 17", function()
      local rel = "cachegrind-studio/truncated.out"
      local prof = load(rel)
      walk(prof)
      assert.are.same({ path(rel) .. ":17: the file ends after a call's target with no calls= line (truncated?)" },
                      prof:warnings())
      -- by hand: the complete records before the cut
      assert.are.same({ ["Time_(10ns)"] = 40, ["Memory_(bytes)"] = 8 }, prof:totals())
      local call = the_call(prof, "{main}", "doWork")
      assert.are.equal(1, call.count)
      assert.are.equal(9, call.line)
      assert.are.equal(120, call:cost("Time_(10ns)"))
      assert.are.equal(16, call:cost("Memory_(bytes)"))
      assert.are.equal("/app/killed.php", call.callee.file)
      assert.are.equal(1, #collect(prof:calls()))
    end)

    it("rejects gungraun/callgrind.invalid.version_too_high.out at its `version: 2` line", function()
      local rel = "gungraun/callgrind.invalid.version_too_high.out"
      local prof, err = callgrind.load(path(rel))
      assert.is_nil(prof)
      assert.is_string(err)
      assert.are.equal(path(rel) .. ":2: version 2 is not supported (this reader knows versions 0 and 1)", err)
    end)

    it("rejects speedscope/callgrind.subposition-compression.log at its first relative cost, line 13",
       function()
      local rel = "speedscope/callgrind.subposition-compression.log"
      local prof, err = callgrind.load(path(rel))
      assert.is_nil(prof)
      assert.is_string(err)
      assert.are.equal(path(rel) .. ":13: cost 1 is '*': costs cannot be relative, only positions", err)
    end)

    it("loads speedscope/callgrind.subposition-compression.log leniently, skipping lines 13 and 24 only", function()
      -- The bad lines, by hand: 13 `* *` (a `*` cost) and 24 `-31 +400` (a
      -- `+N` cost).  Line 16 `+35 -300` is valid: line 16+35 = 51 with a
      -- negative cost -300 (docs/format.md: costs are signed; speedscope reads it
      -- as relative, which the format does not allow).  Line 9 `* 400` and
      -- line 20 `* 300` have `*` only in the position column.
      local rel = "speedscope/callgrind.subposition-compression.log"
      local prof = load(rel, { lenient = true })
      walk(prof)
      assert.are.same({
        path(rel) .. ":13: cost 1 is '*': costs cannot be relative, only positions",
        path(rel) .. ":24: cost 1 is '+400': costs cannot be relative, only positions",
      }, prof:warnings())
      -- the good lines: main `16 20`, func1 `+35 -300`
      assert.are.same({ Instructions = -280 }, prof:totals())
      assert.are.equal(20, func(prof, "main"):self("Instructions"))
      assert.are.equal(-300, func(prof, "func1"):self("Instructions"))
      assert.are.equal(0, func(prof, "func2"):self("Instructions"))
      local lines = collect(func(prof, "func1"):lines())
      assert.are.equal(1, #lines)
      assert.are.equal(51, lines[1].line)
      -- main -> func2 lost its cost line (13), so only two calls remain
      local calls = collect(prof:calls())
      assert.are.equal(2, #calls)
      local c1 = the_call(prof, "main", "func1")
      assert.are.same({ 1, 16, 50, 400 }, { c1.count, c1.line, c1.target_line, c1:cost(1) })
      local c2 = the_call(prof, "func1", "func2")
      assert.are.same({ 2, 51, 20, 300 }, { c2.count, c2.line, c2.target_line, c2:cost(1) })
      assert.are.equal("file2.c", c2.callee.file)
    end)

    it("loads gprof2dot/selinux.callgrind, whose object id (8) is used at line 632 and never defined, with a warning",
       function()
      -- callgrind 0.10.1 never wrote the name of object 8 (the program
      -- itself: apol_vector_grow, qpol_handle_route_to_callback); ob=(8) and
      -- cob=(8) appear, `ob=(8) name` never does.  Every corpus file must
      -- load, and no number depends on the object's name.
      local rel = "gprof2dot/selinux.callgrind"
      local prof = load(rel)
      assert.are.same({ path(rel) .. ":632: object id (8) is used but never defined" }, prof:warnings())
    end)

    it("refuses the empty gungraun/callgrind.empty.out: \"empty file\"", function()
      local rel = "gungraun/callgrind.empty.out"
      assert.are.same({ nil, path(rel) .. ": empty file", "format" },
        { callgrind.load(path(rel)) })
    end)

    for _, rel in ipairs(sorted_keys(CUT)) do
      local last = CUT[rel]
      it("loads " .. rel .. " with one warning: cut short after line " .. last[1], function()
        local prof = load(rel)
        local w = { ("%s:%d: the file ends without totals: (callgrind ends every part with one): "
          .. "cut short after '%s'"):format(path(rel), last[1], last[2]) }
        assert.are.same(w, prof:warnings())
        assert.are.same(w, prof:warnings("truncated"))
        assert.are.same({}, prof:warnings("skipped"))
      end)
    end

    it("loads gprof2dot/empty.callgrind (part 2, header only) with nine zero totals", function()
      local prof = load("gprof2dot/empty.callgrind")
      assert.are.same({ "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "I2mr", "D2mr", "D2mw" }, prof.events)
      assert.are.same({ Ir = 0, Dr = 0, Dw = 0, I1mr = 0, D1mr = 0, D1mw = 0, I2mr = 0, D2mr = 0, D2mw = 0 },
                      prof:totals())
      assert.are.same({}, collect(prof:functions()))
      local parts = collect(prof:parts())
      assert.are.equal(1, #parts)
      assert.are.equal(2, parts[1].number)
      assert.are.equal(14542, parts[1].pid)
    end)

    for _, rel in ipairs(CLEAN) do
      it("loads " .. rel .. " with no warning", function()
        assert.are.same({}, load(rel):warnings())
      end)
    end
  end)

  describe("totals", function()
    for _, rel in ipairs(TOTALS_AGREE) do
      it("loads " .. rel .. " with totals equal to its totals: line", function()
        local expected, at = header_values(rel, "totals")
        local prof = load(rel)
        assert.are.same(expected, prof:totals())
        assert.are.same({}, warnings_at(prof, rel, at))
        -- and the independent scan agrees with that line
        assert.are.same(expected, scan(rel).sum)
      end)
    end

    for _, rel in ipairs(SUMMARY_AGREE) do
      it("loads " .. rel .. " with totals equal to its summary: line", function()
        local expected, at = header_values(rel, "summary")
        local prof = load(rel)
        assert.are.same(expected, prof:totals())
        assert.are.same({}, warnings_at(prof, rel, at))
        assert.are.same(expected, scan(rel).sum)
      end)
    end

    for _, case in ipairs(MISMATCH) do
      it("warns that the " .. case.what .. ": line " .. case.line .. " of " .. case.file
         .. " disagrees with its cost lines, and totals the cost lines", function()
        local prof = load(case.file)
        assert.are.same({ path(case.file) .. ":" .. case.line .. ": " .. case.message },
                        warnings_at(prof, case.file, case.line))
        assert.are.same(case.sum, prof:totals())
        assert.are.same(case.sum, scan(case.file).sum)
      end)
    end

    for _, rel in ipairs(sorted_keys(NO_HEADER_TOTALS)) do
      local sum = NO_HEADER_TOTALS[rel]
      it("loads " .. rel .. " with totals equal to its cost lines", function()
        assert.are.same(sum, load(rel):totals())
      end)
    end

    it("keeps the summary: and totals: lines of gungraun/callgrind.summary_and_totals.out as written", function()
      local prof = load("gungraun/callgrind.summary_and_totals.out")
      local parts = collect(prof:parts())
      assert.are.equal(1, #parts)
      assert.are.same({ Ir = 1, Dr = 2, Dw = 3, I1mr = 4, D1mr = 5, D1mw = 6, ILmr = 7, DLmr = 8, DLmw = 9 },
                      parts[1].summary)
      assert.are.same({ Ir = 11, Dr = 12, Dw = 13, I1mr = 14, D1mr = 15, D1mw = 16, ILmr = 17, DLmr = 18,
                        DLmw = 19 }, parts[1].written_totals)
      -- summary: (line 18) agrees with the cost line: no warning for it
      assert.are.same({}, warnings_at(prof, "gungraun/callgrind.summary_and_totals.out", 18))
    end)

    it("takes octocov-cachegrind/cachegrind.out's metrics from its summary: line, as octocov's test does", function()
      -- k1LoW/octocov-cachegrind parser_test.go: metrics = summary: line
      local prof = load("octocov-cachegrind/cachegrind.out")
      assert.are.same({ "Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw" }, prof.events)
      assert.are.same({ Ir = 37543175, I1mr = 973290, ILmr = 4579, Dr = 8266649, D1mr = 75730,
                        DLmr = 9913, Dw = 5082704, D1mw = 61895, DLmw = 42493 }, prof:totals())
      local part = collect(prof:parts())[1]
      assert.are.same({ ["I1 cache"] = "32768 B, 64 B, 8-way associative",
                        ["D1 cache"] = "32768 B, 64 B, 8-way associative",
                        ["LL cache"] = "8388608 B, 64 B, 16-way associative" }, part.desc)
      assert.are.equal("./testdata/testbin/testbin 1000", prof.cmd)
    end)
  end)

end)
