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
local H = require "spec.support.helpers"

local read_file, words = H.read_file, H.words

---------------------------------------------------------------------------
-- Where the corpus is: spec/corpus, beside this file (its PROVENANCE.md
-- names each file's source and licence).

local function corpus_dir()
  local src = debug.getinfo(1, "S").source
  assert(src:sub(1, 1) == "@", "spec must be loaded from a file")
  local spec_dir = src:sub(2):match("^(.*)/[^/]*$") or "."
  return spec_dir .. "/corpus"
end

local CORPUS = corpus_dir()

local function path(rel) return CORPUS .. "/" .. rel end

local function read_lines(rel)
  local text = read_file(path(rel))
  local lines = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  if text:sub(-1) == "\n" or text == "" then lines[#lines] = nil end
  return lines
end

-- The file's own `events:` line and its first `KEY:` line (summary/totals),
-- as an { event = number } table, plus the line number of that KEY: line.
local function header_values(rel, key)
  local events, values, at
  for i, l in ipairs(read_lines(rel)) do
    local ev = l:match("^events:%s*(.*)$")
    if ev and not events then events = words(ev) end
    local v = l:match("^" .. key .. ":%s*(.*)$")
    if v and not values then values, at = words(v), i end
  end
  assert(events and values, rel .. " has no events: or " .. key .. ": line")
  local t = {}
  for i, ev in ipairs(events) do t[ev] = math.tointeger(tonumber(values[i] or "0")) end
  return t, at
end

-- Counts (and self-cost sums) by the independent line scan described at the
-- top: calls= lines, jump=/jcnd= lines, self-cost lines.
local function scan(rel)
  local npos, events = 1, {}
  local r = { calls = 0, jumps = 0, costlines = 0, sum = {} }
  local skip = false
  for _, l in ipairs(read_lines(rel)) do
    local p = l:match("^positions:%s*(.*)$")
    local ev = l:match("^events:%s*(.*)$")
    if p then
      npos = #words(p)
    elseif ev then
      events = words(ev)
    elseif l:match("^calls=") then
      r.calls, skip = r.calls + 1, true
    elseif l:match("^jump=") or l:match("^jcnd=") then
      r.jumps, skip = r.jumps + 1, true
    elseif l:match("^[%d%+%-%*]") then
      if skip then
        skip = false
      else
        r.costlines = r.costlines + 1
        local w = words(l)
        for i = npos + 1, #w do
          local ename = events[i - npos]
          r.sum[ename] = (r.sum[ename] or 0) + math.tointeger(tonumber(w[i]))
        end
      end
    end
  end
  for _, e in ipairs(events) do r.sum[e] = r.sum[e] or 0 end
  return r
end

local function load(rel, opts)
  local prof, err = callgrind.load(path(rel), opts)
  assert(prof, err)
  return prof
end

-- the keys of t, sorted, so that generated `it` blocks run in a fixed order
local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function collect(f, s, c)
  local t = {}
  for x in f, s, c do t[#t + 1] = x end
  return t
end

-- warnings of prof that name file rel at line n
local function warnings_at(prof, rel, n)
  local prefix = path(rel) .. ":" .. n .. ": "
  local found = {}
  for _, w in ipairs(prof:warnings()) do
    if w:sub(1, #prefix) == prefix then found[#found + 1] = w end
  end
  return found
end

-- prof:func that fails the test with the library's own message
local function func(prof, name, file)
  local fn, err = prof:func(name, file)
  assert(fn, name .. (file and " in " .. file or "") .. ": " .. tostring(err))
  return fn
end

local function self_of(fn)
  local t = {}
  for k, v in pairs(fn:self()) do t[k] = v end
  return t
end

-- the only call from caller to callee (names), checked to be the only one
local function the_call(prof, caller, callee)
  local found
  for call in prof:calls() do
    if call.caller.name == caller and call.callee.name == callee then
      assert(not found, "more than one call " .. caller .. " -> " .. callee)
      found = call
    end
  end
  assert(found, "no call " .. caller .. " -> " .. callee)
  return found
end

---------------------------------------------------------------------------
-- Walk everything a profile offers, touching every field, checking that the
-- library agrees with itself (self = sum of a function's lines, totals = sum
-- of all lines = sum of all selfs, every call seen from both ends, handles
-- are the cached ones), and return the counts.

local function walk(prof)
  local failure
  local function check(ok, msg)
    if not ok and not failure then failure = msg end
  end
  local function is_int(v) return math.type(v) == "integer" end
  local function opt(v, ty) return v == nil or type(v) == ty end

  local events = prof.events
  local n = { functions = 0, lines = 0, fnlines = 0, calls = 0, callers = 0,
              fncalls = 0, jumps = 0, fnjumps = 0, parts = 0 }
  local known = {}
  local selfsum, linesum = {}, {}
  for _, ev in ipairs(events) do selfsum[ev], linesum[ev] = 0, 0 end

  check(type(tostring(prof)) == "string", "tostring(prof)")
  check(opt(prof.name, "string") and opt(prof.creator, "string")
        and opt(prof.cmd, "string") and is_int(prof.version)
        and (prof.pid == nil or is_int(prof.pid)), "profile header fields")

  for part in prof:parts() do
    n.parts = n.parts + 1
    check(is_int(part.index) and part.index == n.parts, "part.index")
    check(is_int(part.number), "part.number")
    check(part.pid == nil or is_int(part.pid), "part.pid")
    check(part.thread == nil or is_int(part.thread), "part.thread")
    check(opt(part.cmd, "string") and opt(part.desc, "table")
          and opt(part.summary, "table") and opt(part.written_totals, "table")
          and type(part.events) == "table", "part fields")
    check(type(tostring(part)) == "string", "tostring(part)")
  end

  for fn in prof:functions() do
    n.functions = n.functions + 1
    check(not known[fn], "function listed twice: " .. tostring(fn))
    known[fn] = true
    check(type(fn.name) == "string" and opt(fn.file, "string")
          and opt(fn.object, "string"), "function fields")
    check(type(tostring(fn)) == "string", "tostring(fn)")
    local all = fn:self()
    local own = {}
    for i, ev in ipairs(events) do
      local v = fn:self(ev)
      check(is_int(v), "fn:self is not an integer")
      check(v == all[ev] and v == fn:self(i), "fn:self(ev) ~= fn:self()[ev] or fn:self(i)")
      selfsum[ev] = selfsum[ev] + v
      own[ev] = 0
    end
    for line in fn:lines() do
      n.fnlines = n.fnlines + 1
      check(line.fn == fn, "line.fn of " .. fn.name)
      for _, ev in ipairs(events) do own[ev] = own[ev] + line:cost(ev) end
    end
    for _, ev in ipairs(events) do
      check(own[ev] == all[ev], "self of " .. fn.name .. " is not the sum of its lines")
    end
    for call in fn:calls() do
      n.fncalls = n.fncalls + 1
      check(call.caller == fn, "call.caller of " .. fn.name)
    end
    for call in fn:callers() do
      n.callers = n.callers + 1
      check(call.callee == fn, "call.callee of " .. fn.name)
    end
    for jump in fn:jumps() do
      n.fnjumps = n.fnjumps + 1
      check(jump.from == fn, "jump.from of " .. fn.name)
    end
  end

  for line in prof:lines() do
    n.lines = n.lines + 1
    check(known[line.fn], "line.fn is not a listed function")
    check(opt(line.file, "string") and (line.line == nil or is_int(line.line))
          and (line.addr == nil or is_int(line.addr)), "line fields")
    local _ = line.part
    for i, ev in ipairs(events) do
      local v = line:cost(ev)
      check(is_int(v) and v == line:cost(i), "line:cost")
      linesum[ev] = linesum[ev] + v
    end
    if n.lines == 1 then check(type(tostring(line)) == "string", "tostring(line)") end
  end

  for call in prof:calls() do
    n.calls = n.calls + 1
    check(known[call.caller] and known[call.callee], "call ends are not listed functions")
    check(is_int(call.count) and call.count >= 0, "call.count")
    check(opt(call.file, "string") and (call.line == nil or is_int(call.line))
          and (call.addr == nil or is_int(call.addr))
          and (call.target_line == nil or is_int(call.target_line))
          and (call.target_addr == nil or is_int(call.target_addr)), "call fields")
    local _ = call.part
    for i, ev in ipairs(events) do
      local v = call:cost(ev)
      check(is_int(v) and v == call:cost(i), "call:cost")
    end
    if n.calls == 1 then check(type(tostring(call)) == "string", "tostring(call)") end
  end

  for jump in prof:jumps() do
    n.jumps = n.jumps + 1
    check(known[jump.from] and known[jump.to], "jump ends are not listed functions")
    check(type(jump.conditional) == "boolean" and is_int(jump.count)
          and (jump.executed == nil or is_int(jump.executed)), "jump counts")
    check(opt(jump.file, "string") and opt(jump.target_file, "string")
          and (jump.line == nil or is_int(jump.line))
          and (jump.addr == nil or is_int(jump.addr))
          and (jump.target_line == nil or is_int(jump.target_line))
          and (jump.target_addr == nil or is_int(jump.target_addr)), "jump fields")
    local _ = jump.part
    if n.jumps == 1 then check(type(tostring(jump)) == "string", "tostring(jump)") end
  end

  local totals = prof:totals()
  for i, ev in ipairs(events) do
    check(totals[ev] == prof:total(ev) and totals[ev] == prof:total(i), "prof:total")
    check(totals[ev] == selfsum[ev], "totals ~= sum of function selfs for " .. ev)
    check(totals[ev] == linesum[ev], "totals ~= sum of all lines for " .. ev)
  end
  check(n.lines == n.fnlines, "prof:lines() and fn:lines() disagree")
  check(n.calls == n.fncalls and n.calls == n.callers, "prof:calls(), fn:calls(), fn:callers() disagree")
  check(n.jumps == n.fnjumps, "prof:jumps() and fn:jumps() disagree")
  assert(not failure, failure)
  return n
end

---------------------------------------------------------------------------
-- The corpus, file by file.

-- The 40 profile data files (PROVENANCE.md, "Profile data files (40)").
local ORACLE_SUFFIXES = { "%.expected$", "%.exp$", "%.exp_map$", "%.exp_stacks$", "%.post%.exp$" }

local function data_files()
  local files = {}
  local p = assert(io.popen("find '" .. CORPUS .. "' -type f"))
  for line in p:lines() do
    local rel = line:sub(#CORPUS + 2)
    local keep = rel ~= "PROVENANCE.md"
    for _, suffix in ipairs(ORACLE_SUFFIXES) do
      if rel:match(suffix) then keep = false end
    end
    if keep then files[#files + 1] = rel end
  end
  p:close()
  table.sort(files)
  return files
end

local DATA_FILES = data_files()

-- Files that must not load as they are.
local BROKEN = {
  ["gungraun/callgrind.invalid.version_too_high.out"] = true,
  ["speedscope/callgrind.subposition-compression.log"] = true,
  ["gungraun/callgrind.empty.out"] = true,
}

-- Files that say `creator: callgrind-...` but whose last part has no
-- `totals:` (callgrind ends every part with one): trimmed by hand for other
-- projects' tests, so they load with one "truncated" warning naming their
-- last line (line count and text read with wc -l and tail -1).
local CUT = {
  ["gungraun/callgrind.valid.minimal_main.out"] = { 20, "0 1 2 3 4 5 6 7 8 9" },
  ["qt-creator/multiCostAndPos.out"] = { 32, "1 0x04 1 100" },
  ["qt-creator/recursiveCycle.out"] = { 52, "0 98" },
}

-- Files whose summary:/totals: lines agree with their cost lines (checked by
-- the scan), with nothing else odd in them: they load with no warning.
local CLEAN = {
  "gprof2dot/compare-test1.callgrind", "gprof2dot/empty.callgrind",
  "gprof2dot/issue35.callgrind", "gprof2dot/xapian.callgrind",
  "jruby-callgrind-printer/example1.callgrind.out",
  "klee-map2check/run.istats", "nytprof-callgrind-ticksdiff/test01.callgrind",
  "octocov-cachegrind/cachegrind.out", "pprof/pprof.cpu.call_tree.callgrind",
  "pprof/pprof.cpu.callgrind", "pprof/pprof.heap.callgrind",
  "speedscope/callgrind.cfn-reset.log", "speedscope/callgrind.example.log",
  "speedscope/callgrind.multiple-event-types.log",
  "speedscope/callgrind.name-compression.log",
  "valgrind/ann-merge1a.cgout", "valgrind/ann-merge1b.cgout",
  "valgrind/ann1.cgout", "valgrind/ann2.cgout", "valgrind/concord.cgout",
}

-- Files with a totals: line that equals the sum of their cost lines.
local TOTALS_AGREE = {
  "gprof2dot/compare-test1.callgrind", "gprof2dot/empty.callgrind",
  "gprof2dot/googlecode-issue34.callgrind", "gprof2dot/issue35.callgrind",
  "gprof2dot/selinux.callgrind", "gprof2dot/xapian.callgrind",
  "gungraun/callgrind.when_entry_point.out",
}

-- Files with a summary: line (and no totals: line) that equals the sum of
-- their cost lines.
local SUMMARY_AGREE = {
  "octocov-cachegrind/cachegrind.out", "qt-creator/multiCostAndPos.out",
  "qt-creator/recursiveCycle.out", "valgrind/ann-merge1a.cgout",
  "valgrind/ann-merge1b.cgout", "valgrind/ann1.cgout", "valgrind/ann2.cgout",
  "valgrind/concord.cgout",
}

-- Files whose summary: or totals: line disagrees with their cost lines: the
-- library warns at that line and its totals are the sum of the cost lines.
-- `line` is the line number of the disagreeing summary:/totals: line; `sum`
-- was summed by the scan (Perl and awk, and `scan` in this spec), and by hand
-- where the file is small.  `message` is the library's wording; the numbers
-- in it are the file's ("written") and ours ("summed"), compared per part.
local MISMATCH = {
  { file = "gprof2dot/bzr.callgrind", line = 2, what = "summary",
    message = "summary: does not match the cost lines: Ticks 1482829 written, 1482191 summed",
    -- summary: 1482829; 2828 cost lines sum to 1482191
    sum = { Ticks = 1482191 } },
  { file = "gprof2dot/googlecode-issue34.callgrind", line = 17, what = "summary",
    message = "summary: does not match the cost lines: Ir 0 written, 192717159265 summed, "
      .. "Dr 0 written, 64592858456 summed, Dw 0 written, 41880232760 summed, "
      .. "I1mr 0 written, 9202071 summed, ...",
    -- `summary: 0` (gprof2dot issue 34); the totals: line (line 67998) agrees
    -- with the 45560 cost lines
    sum = { Ir = 192717159265, Dr = 64592858456, Dw = 41880232760, I1mr = 9202071,
            D1mr = 127695919, D1mw = 4750724, I2mr = 3468, D2mr = 44754, D2mw = 10930 } },
  { file = "gungraun/callgrind.summary_and_totals.out", line = 23, what = "totals",
    message = "totals: does not match the cost lines: Ir 11 written, 1 summed, Dr 12 written, "
      .. "2 summed, Dw 13 written, 3 summed, I1mr 14 written, 4 summed, ...",
    -- by hand: one cost line `0 1 2 3 4 5 6 7 8 9`; summary: 1..9 agrees,
    -- totals: 11..19 does not
    sum = { Ir = 1, Dr = 2, Dw = 3, I1mr = 4, D1mr = 5, D1mw = 6, ILmr = 7, DLmr = 8, DLmw = 9 } },
  { file = "gungraun/callgrind.no_summary_but_totals.out", line = 22, what = "totals",
    message = "totals: does not match the cost lines: Ir 11 written, 1 summed, Dr 12 written, "
      .. "2 summed, Dw 13 written, 3 summed, I1mr 14 written, 4 summed, ...",
    -- by hand: the same single cost line, totals: 11..19
    sum = { Ir = 1, Dr = 2, Dw = 3, I1mr = 4, D1mr = 5, D1mw = 6, ILmr = 7, DLmr = 8, DLmw = 9 } },
  { file = "gungraun/callgrind.when_entry_point.out", line = 18, what = "summary",
    message = "summary: does not match the cost lines: Ir 3473 written, 3471 summed",
    -- summary: 3473 ...; totals: (line 827) 3471 ... agrees with the cost lines
    sum = { Ir = 3471, Dr = 889, Dw = 559, I1mr = 143, D1mr = 30, D1mw = 7, ILmr = 116, DLmr = 4, DLmw = 4 } },
  { file = "php-cachegrindparser/cachegrind.out.491", line = 19127, what = "summary",
    message = "summary: does not match the cost lines: Time 235580 written, 234563 summed",
    -- summary: 235580 6625060 124007 6725596 (Xdebug measures {main} itself)
    sum = { Time = 234563, Memory = 6625060, Cycles = 124007, Peakmemory = 6725596 } },
  { file = "php-cachegrindparser/example.cachegrind.out.dump", line = 92, what = "summary",
    message = "summary: does not match the cost lines: Time 1001 written, 997 summed",
    -- by hand: profile 1 Time 16+7+141+60+6 = 230, Memory 40+120+120 = 280;
    -- profile 2 Time 21+8+6+6+291+235+6+424 = 997, Memory 40+120+120+64 = 344.
    -- Its summary: 1001 344 0 0 disagrees with 997.
    sum = { Time = 1227, Memory = 624, Cycles = 0, Peakmemory = 0 } },
  { file = "go-cachegrind/s1.cachegrind", line = 64, what = "summary",
    message = "summary: does not match the cost lines: Time 15000303 written, 15000300 summed",
    -- by hand: php::sleep 5000063+5000023+5000050, fun2 34+33+33, fun1 54,
    -- {main} 10: 15000300; Memory 32 (fun1).  summary: 15000303 32
    sum = { Time = 15000300, Memory = 32 } },
  { file = "xdebug-plantuml/cachegrind.out.25145", line = 9120, what = "summary",
    message = "summary: does not match the cost lines: Time 40273 written, 39865 summed",
    -- summary: 40273
    sum = { Time = 39865 } },
  { file = "cachegrind-studio/no-cfl.out", line = 20, what = "summary",
    message = "summary: does not match the cost lines: Time_(10ns) 1040 written, 400 summed, "
      .. "Memory_(bytes) 2560 written, 1536 summed",
    -- by hand: Repo->find 320/512 + {main} 80/1024; summary: 1040 2560 is
    -- {main}'s inclusive cost (80 + 960, 1024 + 1536)
    sum = { ["Time_(10ns)"] = 400, ["Memory_(bytes)"] = 1536 } },
  { file = "pyprof2calltree-combustion/profile.callgrind", line = 3, what = "summary",
    message = "summary: does not match the cost lines: ns 6440400100 written, 6440400600 summed",
    -- summary: 6440400100 (smaller than the cost lines)
    sum = { ns = 6440400600 } },
  { file = "qt-creator/inlinedFunctions.out", line = 17, what = "summary",
    message = "summary: does not match the cost lines: Ir 820 written, 804 summed",
    -- by hand: main 1+1+2, Something::Inlined() 400, func1 400; summary: 820
    sum = { Ir = 804 } },
}

-- Totals of files with neither summary: nor totals:, by hand or by the scan.
local NO_HEADER_TOTALS = {
  -- by hand: main 20, func1 100, func2 700
  ["speedscope/callgrind.example.log"] = { Instructions = 820 },
  ["speedscope/callgrind.name-compression.log"] = { Instructions = 820 },
  -- by hand: main 20/15000, func1 100/15000, func2 700/8000
  ["speedscope/callgrind.multiple-event-types.log"] = { ["Time_(10ns)"] = 820, ["Memory_(bytes)"] = 38000 },
  -- by hand: alpha, delta, gamma, beta 10 each
  ["speedscope/callgrind.cfn-reset.log"] = { Instructions = 40 },
  -- by hand: {main} `1 40 8` is the only complete self-cost line
  ["cachegrind-studio/truncated.out"] = { ["Time_(10ns)"] = 40, ["Memory_(bytes)"] = 8 },
  -- by hand: 8766488 + 256712 + 43158495 + 248929 + 0
  ["jruby-callgrind-printer/example1.callgrind.out"] = { process_time = 52430624 },
  -- by hand: 4740 + 2583 + 51923 (the other four blocks hold only calls)
  ["nytprof-callgrind-ticksdiff/test01.callgrind"] = { Ticks = 59246 },
  -- by the scan (1568 cost lines, 13 columns after `instr line`)
  ["klee-map2check/run.istats"] = { Icov = 264, Forks = 0, Ireal = 0, Itime = 0,
    I = 141891, UCdist = 0, Rtime = 0, States = 0, Iuncov = 1299, Q = 531, Qiv = 1,
    Qv = 530, Qtime = 29867634 },
  -- by hand: 1100 + 10 + 10 + six lines of 0
  ["pprof/pprof.cpu.callgrind"] = { ["cpu(ms)"] = 1120 },
  -- by hand: line1000 1000 + 100, line2001 10, line3002 10, the rest 0
  ["pprof/pprof.cpu.call_tree.callgrind"] = { ["cpu(ms)"] = 1120 },
  -- by hand: 62 + 31 + 4, the rest 0
  ["pprof/pprof.heap.callgrind"] = { ["inuse_space(MB)"] = 97 },
  -- gungraun's exp_map: Ir..DLmw = 1..9
  ["gungraun/callgrind.valid.minimal_main.out"] = { Ir = 1, Dr = 2, Dw = 3, I1mr = 4,
    D1mr = 5, D1mw = 6, ILmr = 7, DLmr = 8, DLmw = 9 },
}

---------------------------------------------------------------------------

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
      -- negative cost -300 (FORMAT.md: costs are signed; speedscope reads it
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

    it("refuses the empty gungraun/callgrind.empty.out: no events: line", function()
      local rel = "gungraun/callgrind.empty.out"
      assert.are.same({ nil, path(rel) .. ": no events: line: not a callgrind profile", "format" },
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
