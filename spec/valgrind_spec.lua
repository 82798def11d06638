-- End-to-end check against valgrind's own reader.
--
-- Builds the small C program in spec/fixtures/progs (two .c files plus
-- threads, recursion, mutual recursion, a loop, libc calls and an inline
-- function from a header), profiles it with `valgrind --tool=callgrind` under
-- several option sets, and compares what callgrind.load reads with what
-- `callgrind_annotate --threshold=100` prints for the same file.
--
-- This spec never skips: without gcc, valgrind or callgrind_annotate every
-- test fails with a message saying so.
--
-- How callgrind_annotate (3.19) works, as far as the comparison relies on it:
--
-- * Its "PROGRAM TOTALS" row is the file's `summary:` line as written (its
--   `totals:` line when there is no summary): it sums nothing itself.
-- * Each "file:function" row is self cost, keyed by the source file in force
--   at the cost line (fl=, or fi=/fe= for inlined code) and the function name.
--   The object is printed as " [object]" after the name, but is not part of
--   the key, and rows that only exist through fi=/fe= have no object at all.
--   The library's equivalent is the sum of line:cost(ev) over prof:lines()
--   grouped by (line.file, line.fn.name).
-- * A file without debug info is "???": rows read "???:0x0000000000001100"
--   or "???:(below main)"; the library keeps "???" as the file name.
-- * Numbers have thousands separators; "." means the event never occurred.
-- * It strips `pwd` + "/" from the front of file names.  We run it with cwd
--   "/", where that prefix is "//", which no file name starts with, so its
--   names are the names as written, as the library's are.
--
-- Its bugs we compare around, not into:
--
-- * `calls=0 ...`: it tests `$curr_call_counter > 0`, so the call-cost line
--   after a calls=0 (callgrind writes them for calls that span a dump
--   boundary) is booked as self cost of the current file:function.  We find
--   those lines by scanning the file ourselves (scan_file) and subtract them
--   from its rows before comparing.
-- * Multi-part files (--combine-dumps=yes): it reads the header only up to the
--   first `events:`, warns that the later part headers are malformed, adds up
--   the bodies of all parts anyway, and prints the LAST part's summary as
--   PROGRAM TOTALS.  So we split the file into one file per part ourselves
--   (split_parts) and compare each part with the library's lines of that part.
--   Every part is compared, not only the first: part 2+ is where relative
--   positions restart and where names defined in an earlier part are used by
--   id only, which is what a multi-part reader gets wrong.  The split files
--   write such names out in full, "(N) name", so each stands alone.
-- * callgrind 3.19 with --cache-sim=yes writes a `summary:` a few Ir, I1mr
--   and ILmr above its `totals:` (docs/format.md).  PROGRAM TOTALS then shows that
--   summary, which is no sum of anything in the file; there the library's
--   total must equal the `totals:` line and the sum of callgrind_annotate's
--   rows instead.

local H = require "spec.support.helpers"

local shq, read_file, words = H.shq, H.read_file, H.words
local commify, report, load = H.commify, H.report, H.load

-- report()'s legend for the comparisons with callgrind_annotate.
local VS = "callgrind_annotate vs library"

-- The scratch directory, the fixture program, valgrind and callgrind_annotate.
local lab = H.lab("spec/valgrind_spec.lua")

local function write_file(path, s)
  local f = assert(io.open(path, "wb"))
  assert(f:write(s))
  assert(f:close())
end

---------------------------------------------------------------------------
-- What a profile file says by itself (read without the library)
---------------------------------------------------------------------------

-- Name-line keys and the id table each uses (fl/fi/fe/cfi/cfl/jfi share one).
local ID_TABLE = H.ID_TABLE

-- events:, positions:, part:, thread:, summary: and totals: lines (summed
-- over parts), and the cost of every call-cost line that follows a calls=0,
-- keyed as callgrind_annotate keys it ("file:function" of the last fn=, fi=
-- or fe= line, the file being the fl=/fi=/fe= in force).
local function scan_file(path)
  local w = { summary = {}, totals = {}, threads = {}, parts = {}, calls0 = {}, ncalls0 = 0 }
  local names = { ob = {}, fl = {}, fn = {} }
  local npos, file, fn, curname, after_calls0 = 1, nil, nil, nil, false
  local function add(into, values)
    for i, v in ipairs(values) do
      local ev = assert(w.events and w.events[i], path .. ": costs before events:")
      into[ev] = (into[ev] or 0) + assert(math.tointeger(tonumber(v)), v)
    end
  end
  for l in io.lines(path) do
    local hk, hv = l:match("^(%a+):%s*(.-)%s*$")
    if hk then
      if hk == "events" then
        local evs = words(hv)
        if w.events then
          assert(table.concat(w.events, " ") == hv, path .. ": parts with different events:")
        end
        w.events = evs
      elseif hk == "positions" then
        npos = #words(hv)
      elseif hk == "summary" or hk == "totals" then
        add(w[hk], words(hv))
      elseif hk == "thread" then
        w.threads[#w.threads + 1] = tonumber(hv)
      elseif hk == "part" then
        w.parts[#w.parts + 1] = tonumber(hv)
      end
    else
      local k, v = l:match("^(%a+)=(.*)$")
      if k then
        if ID_TABLE[k] then
          local id, name = v:match("^%((%d+)%)%s*(.*)$")
          if id then
            local tab = names[ID_TABLE[k]]
            if name == "" then name = assert(tab[id], path .. ": undefined id in " .. l) else tab[id] = name end
          else
            name = v
          end
          if k == "fl" then
            file = name
          elseif k == "fi" or k == "fe" then
            file = name
            curname = file .. ":" .. tostring(fn)
          elseif k == "fn" then
            fn = name
            curname = tostring(file) .. ":" .. fn
          end
        elseif k == "calls" then
          after_calls0 = tonumber(v:match("^%s*(%d+)")) == 0
        end
      elseif after_calls0 and l:match("^[%d%+%-%*]") then
        local t = words(l)
        local costs = table.move(t, npos + 1, #t, 1, {})
        local into = w.calls0[curname] or {}
        w.calls0[curname] = into
        add(into, costs)
        w.ncalls0 = w.ncalls0 + 1
        after_calls0 = false
      end
    end
  end
  return w
end

-- Splits a multi-part file into one file per part (see the header comment):
-- the lines before the first part: line, then that part's lines, with every
-- name given by id only written out as "(N) name".
local function split_parts(path, outprefix)
  local pre, parts, cur = {}, {}, nil
  local names = { ob = {}, fl = {}, fn = {} }
  for l in io.lines(path) do
    local pn = l:match("^part:%s*(%d+)")
    if pn then
      cur = { number = tonumber(pn), lines = {} }
      parts[#parts + 1] = cur
    end
    local k, id, name = l:match("^(%a+)=%((%d+)%)%s*(.*)$")
    if k and ID_TABLE[k] then
      local tab = names[ID_TABLE[k]]
      if name == "" then
        l = k .. "=(" .. id .. ") " .. assert(tab[id], path .. ": undefined id in " .. l)
      else
        tab[id] = name
      end
    end
    local into = cur and cur.lines or pre
    into[#into + 1] = l
  end
  for _, part in ipairs(parts) do
    part.path = outprefix .. "." .. part.number
    write_file(part.path, table.concat(pre, "\n") .. "\n" .. table.concat(part.lines, "\n") .. "\n")
  end
  return parts
end

---------------------------------------------------------------------------
-- The library's side
---------------------------------------------------------------------------

local function part_number(p)
  if type(p) == "number" then return p end
  return p and p.number
end

-- Self cost per "file:function" (line.file, line.fn.name), and the sum of
-- all of it, over every line or only the lines of one part.
local self_memo = setmetatable({}, { __mode = "k" })
local function library_self(prof, partno)
  local memo = self_memo[prof] or {}
  self_memo[prof] = memo
  local which = partno or "all"
  if memo[which] then return memo[which][1], memo[which][2] end
  local rows, sum = {}, {}
  for _, ev in ipairs(prof.events) do sum[ev] = 0 end
  for line in prof:lines() do
    if partno == nil or part_number(line.part) == partno then
      local key = tostring(line.file) .. ":" .. tostring(line.fn.name)
      local row = rows[key]
      if not row then
        row = {}
        rows[key] = row
      end
      for _, ev in ipairs(prof.events) do
        local c = line:cost(ev)
        row[ev] = (row[ev] or 0) + c
        sum[ev] = sum[ev] + c
      end
    end
  end
  memo[which] = { rows, sum }
  return rows, sum
end

---------------------------------------------------------------------------
-- The cases (each profiled once per run, on first use, by lab:callgrind)
---------------------------------------------------------------------------

-- A "unit" is one input of callgrind_annotate and what the library must say
-- about it: { label, path (what callgrind_annotate reads), prof, part (nil:
-- the whole profile, else a part number), written (scan_file of path) }.
local CASES = {
  {
    label = "--dump-instr=yes --collect-jumps=yes",
    make = function(self) return { self:single("instr", "--dump-instr=yes --collect-jumps=yes") } end,
  },
  {
    label = "--cache-sim=yes --branch-sim=yes",
    make = function(self) return { self:single("cache", "--cache-sim=yes --branch-sim=yes") } end,
  },
  {
    label = "--compress-strings=no --compress-pos=no",
    make = function(self) return { self:single("plain", "--compress-strings=no --compress-pos=no") } end,
  },
  {
    -- N is a fifth of the run's basic blocks (from the Timerange of the
    -- first profile), which gives 4 to 6 parts whatever libc costs at startup.
    label = "--combine-dumps=yes --dump-every-bb=N, part by part",
    make = function(self, cases)
      local first = cases[1]:units()[1].path
      local bbs = assert(tonumber(read_file(first):match("\ndesc: Timerange: Basic block %d+ %- (%d+)")),
        "no Timerange in " .. first)
      local every = math.max(1000, bbs // 5)
      self.options = "--combine-dumps=yes --dump-every-bb=" .. every
      local path = lab:callgrind("combined", self.options)
      local prof = load(path)
      self.prof, self.path = prof, path
      local units = {}
      for _, part in ipairs(split_parts(path, path)) do
        units[#units + 1] = {
          label = "part " .. part.number, path = part.path, prof = prof, part = part.number,
          written = scan_file(part.path),
        }
      end
      assert(#units >= 3, ("--dump-every-bb=%d gave %d part(s), expected 3 or more"):format(every, #units))
      return units
    end,
  },
  {
    label = "--separate-threads=yes, file by file",
    options = "--separate-threads=yes",
    make = function()
      local base = lab:callgrind("threads", "--separate-threads=yes")
      local files = {}
      for f in lab:run("ls " .. shq(base) .. "-*", "ls"):gmatch("[^\n]+") do files[#files + 1] = f end
      table.sort(files)
      assert(#files >= 3, "--separate-threads=yes wrote " .. #files .. " file(s), expected main + 2 workers")
      local units = {}
      for _, f in ipairs(files) do
        units[#units + 1] = { label = f:match("[^/]*$"), path = f, prof = load(f), written = scan_file(f) }
      end
      return units
    end,
  },
}

local Case = {}
Case.__index = Case
function Case:single(tag, options)
  local path = lab:callgrind(tag, options)
  self.options = options
  return { label = tag, path = path, prof = load(path), written = scan_file(path) }
end
function Case:units()
  if not self._units then self._units = self:make(CASES) end
  return self._units
end
for _, c in ipairs(CASES) do setmetatable(c, Case) end

local annotated = {}
local function annotate_unit(unit)
  annotated[unit.path] = annotated[unit.path] or lab:annotate(unit.path)
  return annotated[unit.path]
end

---------------------------------------------------------------------------
-- The comparisons
---------------------------------------------------------------------------

local function compare_self(unit, mismatches)
  local a = annotate_unit(unit)
  local lib = library_self(unit.prof, unit.part)
  local calls0 = unit.written.calls0
  local keys, seen = {}, {}
  for k in pairs(a.rows) do if not seen[k] then seen[k] = true; keys[#keys + 1] = k end end
  for k in pairs(lib) do if not seen[k] then seen[k] = true; keys[#keys + 1] = k end end
  for _, key in ipairs(keys) do
    local diffs = {}
    for _, ev in ipairs(a.events) do
      local booked = calls0[key] and calls0[key][ev] or 0
      local want = (a.rows[key] and a.rows[key][ev] or 0) - booked
      local got = lib[key] and lib[key][ev] or 0
      if want ~= got then
        diffs[#diffs + 1] = ("%s %s%s vs %s"):format(ev, commify(want),
          booked ~= 0 and (" (its row minus " .. commify(booked) .. " after calls=0)") or "",
          commify(got))
      end
    end
    if #diffs > 0 then
      mismatches[#mismatches + 1] = ("%s: %s%s%s: %s"):format(unit.label, key,
        a.rows[key] and "" or " (not in callgrind_annotate)",
        lib[key] and "" or " (not in the library)", table.concat(diffs, ", "))
    end
  end
end

-- Returns the library's total for a unit: prof:totals() for a whole file,
-- the sum of its lines for one part.
local function library_total(unit)
  if unit.part then
    local _, sum = library_self(unit.prof, unit.part)
    return sum
  end
  return unit.prof:totals()
end

local function compare_totals(unit, mismatches)
  local a = annotate_unit(unit)
  local w = unit.written
  local got = library_total(unit)
  local rowsum = {}
  for key, row in pairs(a.rows) do
    for ev, n in pairs(row) do
      rowsum[ev] = (rowsum[ev] or 0) + n - (w.calls0[key] and w.calls0[key][ev] or 0)
    end
  end
  local function check(ev, what, want, have)
    if want ~= have then
      mismatches[#mismatches + 1] = ("%s: %s: %s %s, library %s"):format(
        unit.label, ev, what, commify(want), commify(have))
    end
  end
  for _, ev in ipairs(a.events) do
    local have = got[ev] or 0
    if w.summary[ev] and w.totals[ev] and w.summary[ev] ~= w.totals[ev] then
      -- PROGRAM TOTALS echoes a summary: that callgrind wrote off by a few
      -- (see the header comment): compare with the totals: line instead.
      assert(a.program[ev] == w.summary[ev], "PROGRAM TOTALS is not the summary: line")
      check(ev, "totals: line (summary: " .. commify(w.summary[ev]) .. " is off)", w.totals[ev], have)
    else
      check(ev, "PROGRAM TOTALS", a.program[ev], have)
    end
    check(ev, "sum of its file:function rows", rowsum[ev] or 0, have)
  end
end

---------------------------------------------------------------------------
-- The spec
---------------------------------------------------------------------------

describe("callgrind.load on fresh valgrind profiles", function()
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  it("finds gcc, valgrind and callgrind_annotate (it never skips)", function() lab:need_tools() end)

  for _, case in ipairs(CASES) do
    it("matches callgrind_annotate's PROGRAM TOTALS with " .. case.label, function()
      local mismatches = {}
      for _, unit in ipairs(case:units()) do compare_totals(unit, mismatches) end
      report(case.options, mismatches, VS)
    end)

    it("matches callgrind_annotate's self cost per file:function with " .. case.label, function()
      local mismatches = {}
      for _, unit in ipairs(case:units()) do compare_self(unit, mismatches) end
      report(case.options, mismatches, VS)
    end)
  end

  it("profiles recursion, mutual recursion and inlined header code in the fixture program", function()
    -- Guards the comparisons above: they only mean something if the profile
    -- has these (fib'2 from --separate-recs, fi=/fe= for the header).
    local prof = CASES[1]:units()[1].prof
    local names, inlined = {}, {}
    for fn in prof:functions() do names[fn.name] = fn end
    for _, n in ipairs { "main", "fib", "fib'2", "is_even", "is_odd", "checksum", "worker" } do
      assert.is_truthy(names[n], "no function " .. n .. " in the profile")
    end
    assert.is_truthy(names["is_even'2"] or names["is_odd'2"], "no is_even'2 / is_odd'2")
    for line in prof:lines() do
      if tostring(line.file):match("/cgprog%.h$") then
        inlined[line.fn.name] = tostring(line.fn.file)
      end
    end
    for _, n in ipairs { "loop_sum", "checksum", "worker" } do
      assert.is_truthy(inlined[n], "no inlined cgprog.h line in " .. n)
      assert.matches("/cg%a+%.c$", inlined[n])
    end
  end)

  it("gives each function a self cost equal to the sum of its lines on every profile", function()
    -- fn:self() is summed while loading, fn:lines() parses again: two paths.
    local bad = {}
    for _, case in ipairs(CASES) do
      local seen = {}
      for _, unit in ipairs(case:units()) do
        local prof = unit.prof
        if not seen[prof] then
          seen[prof] = true
          for fn in prof:functions() do
            local sum = {}
            for line in fn:lines() do
              assert.are.equal(fn, line.fn)
              for _, ev in ipairs(prof.events) do sum[ev] = (sum[ev] or 0) + line:cost(ev) end
            end
            for _, ev in ipairs(prof.events) do
              if fn:self(ev) ~= (sum[ev] or 0) then
                bad[#bad + 1] = ("%s: %s:%s %s: self %s, lines %s"):format(unit.label, tostring(fn.file),
                  fn.name, ev, commify(fn:self(ev)), commify(sum[ev] or 0))
              end
            end
          end
        end
      end
    end
    report("fn:self vs fn:lines", bad, "fn:self() vs the sum of fn:lines()")
  end)

  it("names code without debug info ???:NAME as callgrind_annotate does", function()
    local unit = CASES[1]:units()[1]
    local a = annotate_unit(unit)
    local lib = library_self(unit.prof)
    local unknown = 0
    for key in pairs(a.rows) do
      if key:match("^%?%?%?:") then
        unknown = unknown + 1
        assert.is_truthy(lib[key], key .. " is in callgrind_annotate's output but not the library's")
      end
    end
    assert.is_true(unknown > 0, "expected ???:NAME rows (startup code without debug info)")
  end)

  it("lists the events in the file's events: order with --cache-sim=yes --branch-sim=yes", function()
    local unit = CASES[2]:units()[1]
    assert.are.same(unit.written.events, unit.prof.events)
    assert.are.same(annotate_unit(unit).events, unit.prof.events)
    assert.is_true(#unit.prof.events >= 9, "expected cache and branch events")
  end)

  it("reads every part with --combine-dumps=yes", function()
    local case = CASES[4]
    local units = case:units()
    local w = scan_file(case.path)
    local numbers = {}
    for part in case.prof:parts() do numbers[#numbers + 1] = part.number end
    assert.are.same(w.parts, numbers)
    assert.are.equal(#units, #numbers)
    assert.is_true(#numbers >= 3)
    local sum = {}
    for _, unit in ipairs(units) do
      for ev, n in pairs(annotate_unit(unit).program) do sum[ev] = (sum[ev] or 0) + n end
    end
    assert.are.same(sum, case.prof:totals())
    -- the calls=0 lines (calls across a dump boundary) are calls, not self cost
    local zero = 0
    for call in case.prof:calls() do
      if call.count == 0 then zero = zero + 1 end
    end
    assert.is_true(w.ncalls0 > 0, "expected calls=0 lines with --dump-every-bb")
    assert.are.equal(w.ncalls0, zero)
  end)

  it("sets part.thread in each file with --separate-threads=yes", function()
    local threads = {}
    for _, unit in ipairs(CASES[5]:units()) do
      local parts = {}
      for part in unit.prof:parts() do parts[#parts + 1] = part end
      assert.are.equal(1, #parts, unit.label)
      assert.are.equal(1, #unit.written.threads, unit.label)
      assert.are.equal(unit.written.threads[1], tonumber(parts[1].thread), unit.label .. ": part.thread")
      threads[#threads + 1] = tonumber(parts[1].thread)
    end
    table.sort(threads)
    assert.are.same({ 1, 2, 3 }, threads)
  end)
end)
