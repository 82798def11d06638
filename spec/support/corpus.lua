-- What the corpus specs (spec/corpus_*_spec.lua) share: where the corpus
-- is, a scan of a file's cost lines outside the library, small helpers, and
-- the tables of files by what they hold. See spec/corpus_load_spec.lua for
-- how the expected values were worked out.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local read_file, words = H.read_file, H.words

---------------------------------------------------------------------------
-- Where the corpus is: spec/corpus, beside this file (its PROVENANCE.md
-- names each file's source and licence).

local function corpus_dir()
  local src = debug.getinfo(1, "S").source
  assert(src:sub(1, 1) == "@", "spec must be loaded from a file")
  local support_dir = src:sub(2):match("^(.*)/[^/]*$") or "."
  return support_dir .. "/../corpus"
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
local sorted_keys = H.sorted_keys

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


local M = {}
M.corpus_dir = corpus_dir
M.CORPUS = CORPUS
M.path = path
M.read_lines = read_lines
M.header_values = header_values
M.scan = scan
M.load = load
M.sorted_keys = sorted_keys
M.collect = collect
M.warnings_at = warnings_at
M.func = func
M.self_of = self_of
M.the_call = the_call
M.walk = walk
M.ORACLE_SUFFIXES = ORACLE_SUFFIXES
M.data_files = data_files
M.DATA_FILES = DATA_FILES
M.BROKEN = BROKEN
M.CUT = CUT
M.CLEAN = CLEAN
M.TOTALS_AGREE = TOTALS_AGREE
M.SUMMARY_AGREE = SUMMARY_AGREE
M.MISMATCH = MISMATCH
M.NO_HEADER_TOTALS = NO_HEADER_TOTALS
M.read_file = read_file
M.words = words
return M
