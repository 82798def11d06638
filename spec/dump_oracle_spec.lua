-- The dump oracle: a deterministic program run once under callgrind, and
-- run again with --dump-every-bb=N, gives many files whose sum is the one
-- run.  Summed over the parts (callgrind.files + a multi-file
-- callgrind.load), the dumped run must give exactly what the single run
-- gives: the total and the sum of the parts' `totals:` lines; the self cost
-- of every function (and of every function in each thread, with
-- --separate-threads=yes); the cost of every cost line, keyed by function,
-- file, line and address; the count and inclusive cost of every call site,
-- keyed by caller, callee, site (file, line, address) and target (line,
-- address); with --collect-jumps=yes the count of every jump.  No
-- hand-checked number: the single run is the truth.  Where the reader gets
-- a relative position wrong, the dumps (which cut the run where a call has
-- no cost of its own in a part) read differently from the single run.
--
-- Two numbers valgrind's writer (callgrind/dump.c, fprint_bbcc) cannot keep
-- across dumps, compared as "at most the single run's": a jcnd='s
-- executions (a part writes a jump only when it was followed there, so the
-- executions of a part without one are lost), and, in runs that do not
-- collect everything (--toggle-collect, --collect-atstart=no), call counts
-- (a part writes a call only when it cost something there, so calls made
-- while collection was off are lost in such a part, but counted in the
-- single run).  Their costs are exact.
--
-- Runs: spec/fixtures/progs/cgdump.c (nested calls, recursion, a thread)
-- built with -O0 -g and -O2 -g; the counting interpreter
-- (build/bin/callgrind-lua5.4, make vm) running spec/fixtures/progs/cgdump.lua;
-- options --separate-threads=yes, --dump-instr=yes, --dump-line=no,
-- --compress-pos=no, --collect-jumps=yes, --combine-dumps=yes,
-- --cache-sim=yes, --toggle-collect=FN and --collect-atstart=no with client
-- requests; always --fair-sched=yes (see cgdump.c).  Both runs of a pair
-- have the same command, environment and directory (those move ld.so's and
-- libc's counts), so everything is compared exactly; a change of the
-- system between them (apt-get rewriting /etc/ld.so.cache) shows as a
-- difference in ld.so.  valgrind 3.19 checks --dump-every-bb only when its
-- scheduler runs a thread again (about every 5,300 blocks with a system
-- call now and then): any interval below that dumps at every chance.
--
-- The command line reads the same dumped files: `top --raw` and
-- `hot --raw` must give the single run's numbers as the library computes
-- them, `tree` the single run's tree, and `top` on each file of a dumped
-- run what the library reads from the same files.  Last, the oracle must
-- be able to fail: read with position_rule = "kcachegrind" (a calls=
-- line's position moves the base), the dumps and the single run disagree
-- for some run (the cache simulation's and the interpreter's here).
--
-- Default: 11 pairs of runs, 15 to 30 s.  CALLGRIND_DUMP_ORACLE=full adds
-- more intervals for every run, the interpreter at three more and two
-- more option sets (33 pairs, 85 to 110 s).  Needs gcc and valgrind (the spec fails
-- without them); without the counting interpreter its runs are pending.
-- It prints nothing.

local callgrind = require "callgrind"
local H = require "spec.support.helpers"
local CLI = require "spec.support.cli"

local shq = H.shq

local FULL = os.getenv("CALLGRIND_DUMP_ORACLE") == "full"
local VM = os.getenv("CALLGRIND_VM") or "build/bin/callgrind-lua5.4"

local lab = H.lab("spec/dump_oracle_spec.lua")

-- The programs: a command run in the scratch directory (the same for both
-- runs of a pair), the functions `hot` is asked about and the one `tree`
-- starts from.
local PROGS = {
  o0 = { cflags = "-O0", args = "300", hot = { "middle", "main" }, tree = "main" },
  o2 = { cflags = "-O2", args = "300", hot = { "middle", "main" }, tree = "main" },
  toggle = { cflags = "-O0 -DCG_TOGGLE", args = "300", hot = { "middle", "main" }, tree = "main" },
  lua = { vm = true, args = "14", hot = { "luaV_execute", "luaD_precall" }, tree = "main" },
}

-- The runs: a program, callgrind's options for both runs, the intervals of
-- the dumped runs (and the more of CALLGRIND_DUMP_ORACLE=full).
local RUNS = {
  { name = "O0", prog = "o0", opts = "", every = { 1, 20000 }, more = { 3000, 8000, 60000 } },
  { name = "O0 with --separate-threads=yes", prog = "o0", opts = "--separate-threads=yes",
    every = { 1 }, more = { 8000, 20000 } },
  { name = "O2 with --dump-instr=yes --compress-pos=no", prog = "o2", opts = "--dump-instr=yes --compress-pos=no",
    every = { 1 }, more = { 8000, 20000 } },
  { name = "O2 with --dump-instr=yes --dump-line=no", prog = "o2", opts = "--dump-instr=yes --dump-line=no",
    every = { 8000 }, more = { 1, 20000 } },
  { name = "O0 with --collect-jumps=yes --dump-instr=yes", prog = "o0", opts = "--collect-jumps=yes --dump-instr=yes",
    every = { 1 }, more = { 8000, 20000 } },
  { name = "O2 with --collect-jumps=yes --separate-threads=yes --combine-dumps=yes", prog = "o2",
    opts = "--collect-jumps=yes --separate-threads=yes --combine-dumps=yes", every = { 1 }, more = { 8000 } },
  { name = "O0 with --toggle-collect=middle", prog = "o0", opts = "--toggle-collect=middle",
    every = { 1 }, more = { 8000 }, hot = { "middle" }, tree = "middle", lax_counts = true },
  { name = "O0 with --collect-atstart=no and a client request", prog = "toggle", opts = "--collect-atstart=no",
    every = { 1 }, more = { 8000 }, lax_counts = true },
  -- the misses (I1mr ... DLmw, Bcm, Bim) depend on how the two threads
  -- took turns in the one simulated cache and predictor, which the OS's
  -- scheduling moves under --fair-sched=yes (a few counts from run to
  -- run, dumped or not): the counts of what ran are compared
  { name = "O0 with --cache-sim=yes --branch-sim=yes", prog = "o0", opts = "--cache-sim=yes --branch-sim=yes",
    every = { 1 }, more = { 8000 }, events = { "Ir", "Dr", "Dw", "Bc", "Bi" } },
  { name = "the counting interpreter", prog = "lua", opts = "", every = { 1 }, more = { 30000, 100000, 300000 } },
}
if FULL then
  RUNS[#RUNS + 1] = { name = "O2 with --dump-instr=yes --separate-threads=yes --compress-strings=no",
    prog = "o2", opts = "--dump-instr=yes --separate-threads=yes --compress-strings=no", every = { 1, 8000 } }
  RUNS[#RUNS + 1] = { name = "the counting interpreter with --dump-instr=yes --collect-jumps=yes",
    prog = "lua", opts = "--dump-instr=yes --collect-jumps=yes", every = { 1, 100000 } }
  for _, r in ipairs(RUNS) do
    for _, n in ipairs(r.more or {}) do r.every[#r.every + 1] = n end
  end
end

---------------------------------------------------------------------------
-- Building and running
---------------------------------------------------------------------------

local commands = {}   -- program -> its command line (for sh, run in lab.dir)

local function build(name, prog)
  local src = lab:progs_dir()
  if prog.vm then
    local cwd = lab:run("pwd", "pwd"):gsub("%s+$", "")
    local vm = VM:sub(1, 1) == "/" and VM or (cwd .. "/" .. VM)
    commands[name] = shq(vm) .. " " .. shq(src .. "/cgdump.lua") .. " " .. prog.args
    return
  end
  local exe = "cgdump-" .. name
  lab:run(("gcc -g %s -pthread -I %s -o %s %s"):format(prog.cflags, shq(src), shq(lab.dir .. "/" .. exe),
    shq(src .. "/cgdump.c")), "gcc (building spec/fixtures/progs/cgdump.c " .. prog.cflags .. ")")
  commands[name] = "./" .. exe .. " " .. prog.args
end

local function have_vm() return H.have_vm(VM) end

-- The files of one valgrind run, by tag (cached: the last spec reads them
-- all again).
local done = {}

local function callgrind_run(r, every)
  local tag = ("%s-%s"):format(r.prog, r.opts:gsub("[^%w]+", ""))
  tag = tag .. (every and ("-every" .. every) or "-single")
  if done[tag] then return done[tag] end
  -- --fair-sched=yes: see cgdump.c (no run's cost depends on it)
  local opts = "--fair-sched=yes " .. r.opts .. (every and (" --dump-every-bb=" .. every) or "")
  local out = lab:callgrind_cmd(tag, opts, commands[r.prog])
  local files = assert(callgrind.files(out))
  assert.is_true(#files >= 1, "valgrind wrote no file for " .. out)
  done[tag] = { base = out, files = files }
  return done[tag]
end

local function load(files, opts)
  return callgrind.load(#files == 1 and files[1] or files, opts)
end

---------------------------------------------------------------------------
-- What a profile says, keyed so that a single run and its dumps compare
---------------------------------------------------------------------------

local function fkey(fn)
  return table.concat({ fn.name, fn.file or "?", fn.object or "?" }, " | ")
end

local function pos(file, line, addr)
  return ("%s:%s%s"):format(file or "?", line and tostring(line) or "-",
    addr and ("@0x%x"):format(addr) or "")
end

-- { events, totals, written, fns, lines, calls, jumps }: each a map from
-- a key to an array of integers (costs in event order; a call's count
-- first, a jump's count and executions).  Keys name the thread when
-- by_thread (a run with --separate-threads=yes).
local function facts(prof, by_thread, only)
  local evs = only or prof.events
  local f = { events = table.concat(evs, " "), totals = {}, written = {}, fns = {}, lines = {},
    calls = {}, jumps = {} }
  local function add(map, key, v)
    local o = map[key]
    if not o then map[key] = v; return end
    for i = 1, #v do o[i] = o[i] + v[i] end
  end
  local function costs(t, into)
    into = into or {}
    for _, ev in ipairs(evs) do into[#into + 1] = t[ev] or 0 end
    return into
  end
  local function th(part) return by_thread and (" [thread " .. tostring(part.thread) .. "]") or "" end
  f.totals.total = costs(prof:totals())
  local parts = {}
  for part in prof:parts() do
    parts[#parts + 1] = part
    add(f.written, "sum of totals:", costs((assert(part.written_totals, "a part without totals:"))))
  end
  for fn in prof:functions() do
    local k = fkey(fn)
    add(f.fns, k, costs(fn:self()))
    if by_thread then
      for _, part in ipairs(parts) do
        local v, any = {}, false
        for i, ev in ipairs(evs) do
          v[i] = fn:self(ev, part)
          any = any or v[i] ~= 0
        end
        if any then add(f.fns, k .. th(part), v) end
      end
    end
  end
  for l in prof:lines() do
    add(f.lines, fkey(l.fn) .. " " .. pos(l.file, l.line, l.addr) .. th(l.part), costs(l:cost()))
  end
  f.calls0 = 0
  for c in prof:calls() do
    if c.count == 0 then f.calls0 = f.calls0 + 1 end
    local k = ("%s -> %s at %s to %s%s"):format(fkey(c.caller), fkey(c.callee), pos(c.file, c.line, c.addr),
      pos(nil, c.target_line, c.target_addr), th(c.part))
    add(f.calls, k, costs(c:cost(), { c.count }))
  end
  for j in prof:jumps() do
    local k = ("%s %s -> %s at %s to %s%s"):format(j.conditional and "jcnd" or "jump", fkey(j.from), fkey(j.to),
      pos(j.file, j.line, j.addr), pos(j.target_file, j.target_line, j.target_addr), th(j.part))
    add(f.jumps, k, { j.count, j.executed })
  end
  return f
end

local SECTIONS = { "totals", "written", "fns", "lines", "calls", "jumps" }

-- Whether a dumped run's values (y) match the single run's (x): equal, but
-- where atmost[i], y[i] only at most x[i] (a missing value is 0).
local function matches(x, y, atmost)
  for i = 1, math.max(#x, #y) do
    local a, b = x[i] or 0, y[i] or 0
    if atmost and atmost[i] then
      if b > a or b < 0 then return false end
    elseif a ~= b then
      return false
    end
  end
  return true
end

-- The differences between the facts of a single run and of its dumps, as
-- strings.  The
-- executions of a jcnd= (its second value) are at most the single run's;
-- so are call counts when lax_counts (see the header).
local function differences(want, got, lax_counts)
  local out = {}
  local atmost = { jumps = { [2] = true }, calls = lax_counts and { [1] = true } or nil }
  if want.events ~= got.events then
    out[#out + 1] = ("events: %s, dumped %s"):format(want.events, got.events)
  end
  for _, sec in ipairs(SECTIONS) do
    local a, b = want[sec], got[sec]
    local keys = {}
    for k in pairs(a) do keys[#keys + 1] = k end
    for k in pairs(b) do if a[k] == nil then keys[#keys + 1] = k end end
    for _, k in ipairs(keys) do
      local x, y = a[k] or {}, b[k] or {}
      if not matches(x, y, atmost[sec]) then
        out[#out + 1] = ("%s: %s: single {%s}, dumped {%s}"):format(sec, k, table.concat(x, " "),
          table.concat(y, " "))
      end
    end
  end
  return out
end

---------------------------------------------------------------------------
-- The command line
---------------------------------------------------------------------------

local function cli(...)
  local code, out, err = CLI.run(...)
  assert.are.equal(0, code, table.concat({ ... }, " ") .. ": " .. err)
  return out
end

local function pct(v, total) return total ~= 0 and 100 * v / total or 0 end

-- `top --raw` rows of every function with a self cost, sorted.
local function top_rows(text)
  local rows = {}
  for l in text:gmatch("[^\n]+") do
    if not l:match("^0\t") then rows[#rows + 1] = l end
  end
  table.sort(rows)
  return rows
end

local function top_expected(prof, ev)
  local rows, total = {}, prof:total(ev)
  for fn in prof:functions() do
    local v = fn:self(ev)
    if v ~= 0 then
      rows[#rows + 1] = ("%d\t%.2f\t%s\t%s\t%s"):format(v, pct(v, total), fn.name, fn.file or "", fn.object or "")
    end
  end
  table.sort(rows)
  return rows
end

-- `hot --raw` rows with each row's callees sorted, sorted; without the
-- callees' counts when lax.
local function hot_rows(text, lax)
  local rows = {}
  for l in text:gmatch("[^\n]+") do
    local head, calls = l:match("^(.*\t)([^\t]*)$")
    local list = {}
    for c in calls:gmatch("[^,]+") do list[#list + 1] = lax and (c:gsub("%(%d+%)$", "")) or c end
    table.sort(list)
    rows[#rows + 1] = head .. table.concat(list, ",")
  end
  table.sort(rows)
  return rows
end

-- What `hot --raw` must say of fn, from the library's lines and calls:
-- per (file, line), the self cost, that plus the calls made there, and
-- the callees with their counts.
local function hot_expected(prof, fn, ev, lax)
  local by, order = {}, {}
  local function row(file, line)
    local k = (file or "") .. "\0" .. tostring(line)
    if not by[k] then
      by[k] = { file = file, line = line, self = 0, cost = 0, callees = {} }
      order[#order + 1] = k
    end
    return by[k]
  end
  for l in fn:lines() do
    local r = row(l.file, l.line)
    r.self, r.cost = r.self + l:cost(ev), r.cost + l:cost(ev)
  end
  for c in fn:calls() do
    local r = row(c.file or fn.file, c.line)
    r.cost = r.cost + c:cost(ev)
    r.callees[c.callee.name] = (r.callees[c.callee.name] or 0) + c.count
  end
  local rows, total = {}, prof:total(ev)
  for _, k in ipairs(order) do
    local r = by[k]
    local list = {}
    for name, n in pairs(r.callees) do list[#list + 1] = lax and name or ("%s(%d)"):format(name, n) end
    table.sort(list)
    rows[#rows + 1] = ("%d\t%.2f\t%d\t%s\t%s\t%s"):format(r.cost, pct(r.cost, total), r.self, r.file or "",
      r.line and tostring(r.line) or "", table.concat(list, ","))
  end
  table.sort(rows)
  return rows
end

-- A tree's lines without the drawing, sorted (siblings of equal cost may
-- come in either order); without call counts when lax.
local function tree_lines(text, lax)
  local rows = {}
  for l in text:gmatch("[^\n]+") do
    l = l:gsub("[│├└─]", ""):gsub("%s+", " ")
    if lax then l = l:gsub("%[[%d,]+ calls?", "[") end
    rows[#rows + 1] = l
  end
  table.sort(rows)
  return rows
end

local function same_rows(what, want, got)
  local miss = {}
  local seen = {}
  for _, r in ipairs(got) do seen[r] = (seen[r] or 0) + 1 end
  for _, r in ipairs(want) do
    if (seen[r] or 0) > 0 then seen[r] = seen[r] - 1 else miss[#miss + 1] = "missing: " .. r end
  end
  for r, n in pairs(seen) do
    for _ = 1, n do miss[#miss + 1] = "extra:   " .. r end
  end
  H.report(what, miss)
end

-- The command line on a dumped run against the library on the single run.
local function check_cli(r, single_prof, dumped)
  local prog = PROGS[r.prog]
  local ev = single_prof.events[1]
  same_rows("top --raw of the dumped run vs the library on the single run",
    top_expected(single_prof, ev), top_rows(cli("top", dumped.base, "1000000", "--raw")))
  for _, name in ipairs(r.hot or prog.hot) do
    local fn = assert(single_prof:func(name))
    same_rows("hot --raw " .. name .. " of the dumped run vs the library on the single run",
      hot_expected(single_prof, fn, ev, r.lax_counts),
      hot_rows(cli("hot", dumped.base, name, "--raw", "--top", "1000000"), r.lax_counts))
  end
  local root = r.tree or prog.tree
  local want = cli("tree", callgrind_run(r).base, root)
  local got = cli("tree", dumped.base, root)
  assert.are.same(tree_lines(want, r.lax_counts), tree_lines(got, r.lax_counts))
  local incl = assert(single_prof:func(root)):inclusive(ev)
  local shown = assert(got:match("\n([%d,]+) %(100%.0%%%)"), "no root line in tree's output:\n" .. got)
  assert.are.equal(H.commify(incl), shown)
  -- each file of the dumped run as the command line opens it, against the
  -- library's load of the same files
  for _, f in ipairs(dumped.files) do
    local list = assert(callgrind.files(f))
    local prof = assert(load(#list > 0 and list or { f }))
    same_rows("top --raw " .. f .. " vs the library", top_expected(prof, ev),
      top_rows(cli("top", f, "1000000", "--raw")))
    prof:close()
  end
end

---------------------------------------------------------------------------
-- The specs
---------------------------------------------------------------------------

-- A profile loads without a warning, but for callgrind 3.19's summary: a
-- few Ir above its totals: with --cache-sim=yes (docs/format.md).
local function no_warnings(prof)
  local left = {}
  for _, w in ipairs(prof:warnings()) do
    if not tostring(w):find(": summary: does not match the cost lines", 1, true) then left[#left + 1] = w end
  end
  assert.are.same({}, left)
end

local function needs_vm(r)
  return PROGS[r.prog].vm and not have_vm()
end

describe("the dump oracle (--dump-every-bb)", function()
  setup(function()
    lab:open()
    lab:need("gcc")
    lab:need("valgrind")
    for name, prog in pairs(PROGS) do
      if not prog.vm or have_vm() then build(name, prog) end
    end
  end)
  teardown(function() lab:close() end)

  for _, r in ipairs(RUNS) do
    for _, every in ipairs(r.every) do
      it(("sums the dumps of %s at --dump-every-bb=%d to the single run"):format(r.name, every), function()
        if needs_vm(r) then
          pending("the counting interpreter is missing (make vm): " .. VM)
          return
        end
        local by_thread = r.opts:find("separate-threads=yes", 1, true) ~= nil
        local single, dumped = callgrind_run(r), callgrind_run(r, every)
        -- the run was dumped, and calls ran across the dumps
        assert.is_true(#dumped.files >= 2 or r.opts:find("combine", 1, true) ~= nil,
          "only " .. #dumped.files .. " file(s)")
        local sp = assert(load(single.files))
        local dp = assert(load(dumped.files))
        no_warnings(sp)
        no_warnings(dp)
        local want, got = facts(sp, by_thread, r.events), facts(dp, by_thread, r.events)
        if every < 5000 then assert.is_true(got.calls0 > 0, "no calls=0 line: no call ran across a dump") end
        -- the single run's own totals: line is its total
        assert.are.same(want.totals.total, want.written["sum of totals:"])
        H.report(r.name .. " at --dump-every-bb=" .. every .. ", single vs dumped",
          (differences(want, got, r.lax_counts)))
        check_cli(r, sp, dumped)
        sp:close()
        dp:close()
      end)
    end
  end

  it("fails when a calls= line's position moves the base (position_rule = \"kcachegrind\")", function()
    local broken, seen = {}, 0
    for _, r in ipairs(RUNS) do
      if not needs_vm(r) then
        local by_thread = r.opts:find("separate-threads=yes", 1, true) ~= nil
        local single = callgrind_run(r)
        local opts = { position_rule = "kcachegrind" }
        local sp, serr = load(single.files, opts)
        for _, every in ipairs(r.every) do
          seen = seen + 1
          local dp, derr = load(callgrind_run(r, every).files, opts)
          local what = ("%s at %d"):format(r.name, every)
          if not sp or not dp then
            broken[#broken + 1] = what .. ": " .. tostring(serr or derr)
          else
            local diffs = differences(facts(sp, by_thread, r.events), facts(dp, by_thread, r.events), r.lax_counts)
            if #diffs > 0 then broken[#broken + 1] = ("%s: %d difference(s)"):format(what, #diffs) end
          end
          if dp then dp:close() end
        end
        if sp then sp:close() end
      end
    end
    assert.is_true(seen > 0)
    assert.is_true(#broken > 0, "every run's dumps sum to the single run under the kcachegrind rule too"
      .. (have_vm() and "" or " (the counting interpreter's run, which always breaks it, is missing: make vm)"))
  end)
end)
