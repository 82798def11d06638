-- Inclusive cost (docs/format.md, "Inclusive cost") on real valgrind profiles.
--
-- Builds the fixture program in spec/fixtures/progs (as spec/valgrind_spec.lua
-- does), profiles it with `valgrind --tool=callgrind` with the default
-- options and with --dump-instr=yes, and checks fn:inclusive(ev),
-- fn:inclusive_bounds(ev), prof:inclusive_all(ev), prof:cycles() and fn:cycle() against
--
-- * numbers computed here from the profile's calls, with our own search for
--   strongly connected components (an iterative Tarjan, below), so that the
--   library's components and sums are checked, not reused;
-- * numbers computed from the file's text alone (scan_calls), for the
--   recursion checks;
-- * what `callgrind_annotate --inclusive=yes --threshold=100` prints.
--
-- With C(f) the strongly connected component of f: A(f) is the sum of the
-- calls into f from outside C(f), B(f) is self(f) plus the calls from f to
-- outside C(f), E(f) the calls into f from any other function, I(C) the
-- larger of the sums of A and of B over C's members; the lower bound is
-- max(A(f), B(f)) and inclusive(f) = max(B(f), min(E(f), I(C(f)))).
--
-- How callgrind_annotate (3.19) computes its inclusive column, as far as the
-- comparison relies on it (read from its source, read_input_file):
--
-- * It keys everything by "file:function", the file being the one in force
--   at the line (fl=, or fi=/fe= for inlined code); objects are not part of
--   the key.  A call's callee key is cfi=/cfl= (else that same current file)
--   and cfn=: the library finds the callee Function by the same rule.
-- * Each call-cost line adds its cost to cfn_totals[callee key].  With
--   --inclusive=yes, every key that ever was a callee then prints
--   cfn_totals[key]: the sum of ALL calls into it.  For a function outside
--   any cycle that is exactly A(f).  A key that never was a callee prints
--   its self cost plus the calls made from its lines (its own key's lines:
--   inlined lines go to another key), which is at most B(f).  So for every
--   function outside a cycle, inclusive(f) = max(annotate's value, B(f)).
-- * For a recursive function it counts the recursive calls again: the row
--   of fib'2 sums every call into fib'2, fib'2's own calls included.
--
-- Functions the per-function comparison skips (counted and named in the
-- failure message when anything differs):
--
-- * functions in a cycle (fn:cycle() ~= nil): there callgrind_annotate is
--   known to be wrong; the recursion tests below show how;
-- * functions whose "file:function" key is ambiguous: two Functions with the
--   same file and name in different objects (libc and ld.so are built from
--   the same sources: fstat, mmap, mprotect, __sigsetjmp, ...), or another
--   function's inlined lines (fi=/fe=) under the same key, since then
--   callgrind_annotate's row is a sum over several functions;
-- * callees of calls=0 lines: callgrind_annotate books their cost as self
--   cost of the caller (it tests `$curr_call_counter > 0`), so their A is
--   short.  callgrind writes calls=0 only for calls that span a dump
--   boundary; these single-part profiles have none, and the spec says so
--   if that ever changes.
-- Multi-part files are not used here (callgrind_annotate adds up all parts
-- and prints the last part's summary); see spec/valgrind_spec.lua.
--
-- This spec never skips: without gcc, valgrind or callgrind_annotate every
-- test fails with a message saying so.

local H = require "spec.support.helpers"

local words, commify, report = H.words, H.commify, H.report

-- The scratch directory, the fixture program, valgrind and callgrind_annotate
-- (shared with spec/valgrind_spec.lua).
local lab = H.lab("spec/inclusive_spec.lua")

---------------------------------------------------------------------------
-- What the file's text says about calls (read without the library)
---------------------------------------------------------------------------

-- Every call-cost line of a single-part file as { caller = fn name,
-- callee = cfn name, count = n, cost = { ev = n } }, plus the events: and
-- summary: lines.  Only function names are kept: the recursion tests use it
-- for fib, is_even and friends, whose names are unique in the profile (they
-- check that).
local function scan_calls(path)
  local r = { calls = {}, summary = {} }
  local fnames = {}
  local npos, fn, cfn, count = 1, nil, nil, nil
  local function name_of(v)
    local id, name = v:match("^%((%d+)%)%s*(.*)$")
    if not id then return v end
    if name == "" then return assert(fnames[id], path .. ": undefined function id " .. id) end
    fnames[id] = name
    return name
  end
  local function costs(values)
    local t = {}
    for i, v in ipairs(values) do
      local ev = assert(r.events and r.events[i], path .. ": costs before events:")
      t[ev] = assert(math.tointeger(tonumber(v)), v)
    end
    return t
  end
  for l in io.lines(path) do
    local hk, hv = l:match("^(%a+):%s*(.-)%s*$")
    if hk then
      if hk == "events" then
        r.events = words(hv)
      elseif hk == "positions" then
        npos = #words(hv)
      elseif hk == "summary" then
        r.summary = costs(words(hv))
      end
    else
      local k, v = l:match("^(%a+)=(.*)$")
      if k == "fn" then
        fn = name_of(v)
      elseif k == "cfn" then
        cfn = name_of(v)
      elseif k == "jfn" then
        name_of(v) -- may define an id
      elseif k == "calls" then
        count = assert(math.tointeger(tonumber(v:match("^%s*(%d+)"))), l)
      elseif not k and count and l:match("^[%d%+%-%*]") then
        local t = words(l)
        r.calls[#r.calls + 1] = {
          caller = fn, callee = cfn, count = count,
          cost = costs(table.move(t, npos + 1, #t, 1, {})),
        }
        count = nil
      end
    end
  end
  return r
end

-- Sum of the raw calls from caller to callee (names; nil means any caller).
local function raw_sum(raw, caller, callee, ev)
  local cost, count = 0, 0
  for _, c in ipairs(raw.calls) do
    if c.callee == callee and (caller == nil or c.caller == caller) then
      cost = cost + (c.cost[ev] or 0)
      count = count + c.count
    end
  end
  return cost, count
end

---------------------------------------------------------------------------
-- Our own reading of the call graph
---------------------------------------------------------------------------

local function key_of(fn)
  return tostring(fn.file) .. ":" .. fn.name
end

local function label_of(fn)
  return ("%s [%s]"):format(key_of(fn), tostring(fn.object))
end

-- Strongly connected components of the call graph, by an iterative Tarjan:
-- returns comp (Function -> component number), members (number -> array of
-- Functions, in function order) and cyclic (number -> true when the
-- component has more than one function or a function calling itself).
local function components(prof)
  local fns = {}
  for fn in prof:functions() do fns[#fns + 1] = fn end
  local succ = {}
  for _, fn in ipairs(fns) do
    local s = {}
    for call in fn:calls() do s[#s + 1] = call.callee end
    succ[fn] = s
  end
  local index, low, onstack, stack = {}, {}, {}, {}
  local comp, ncomp, counter = {}, 0, 0
  for _, root in ipairs(fns) do
    if not index[root] then
      local work = { { root, 1 } }
      counter = counter + 1
      index[root], low[root] = counter, counter
      stack[#stack + 1] = root
      onstack[root] = true
      while #work > 0 do
        local top = work[#work]
        local v, i = top[1], top[2]
        local w = succ[v][i]
        if w then
          top[2] = i + 1
          if not index[w] then
            counter = counter + 1
            index[w], low[w] = counter, counter
            stack[#stack + 1] = w
            onstack[w] = true
            work[#work + 1] = { w, 1 }
          elseif onstack[w] and index[w] < low[v] then
            low[v] = index[w]
          end
        else
          work[#work] = nil
          if low[v] == index[v] then
            ncomp = ncomp + 1
            repeat
              local x = table.remove(stack)
              onstack[x] = nil
              comp[x] = ncomp
            until x == v
          end
          local parent = work[#work]
          if parent and low[v] < low[parent[1]] then low[parent[1]] = low[v] end
        end
      end
    end
  end
  local members, cyclic = {}, {}
  for _, fn in ipairs(fns) do
    local k = comp[fn]
    members[k] = members[k] or {}
    table.insert(members[k], fn)
  end
  for _, fn in ipairs(fns) do
    local k = comp[fn]
    if #members[k] > 1 then cyclic[k] = true end
    for _, w in ipairs(succ[fn]) do
      if w == fn then cyclic[k] = true end
    end
  end
  return comp, members, cyclic
end

-- A(f) and B(f) of docs/format.md from the profile's calls and our components.
local function ab(fn, comp, ev)
  local a, b = 0, fn:self(ev)
  for call in fn:callers() do
    if comp[call.caller] ~= comp[fn] then a = a + call:cost(ev) end
  end
  for call in fn:calls() do
    if comp[call.callee] ~= comp[fn] then b = b + call:cost(ev) end
  end
  return a, b
end

-- docs/format.md's lower bound and estimate of f, from the profile's calls and
-- our components (members: component -> functions).
local component_sums = setmetatable({}, { __mode = "k" })
local function bounds(fn, comp, members, ev)
  local a, b = ab(fn, comp, ev)
  local list = members[comp[fn]]
  local memo = component_sums[list] or {}
  component_sums[list] = memo
  if not memo[ev] then
    local sa, sb = 0, 0
    for _, m in ipairs(list) do
      local ma, mb = ab(m, comp, ev)
      sa, sb = sa + ma, sb + mb
    end
    memo[ev] = { sa, sb }
  end
  local sa, sb = memo[ev][1], memo[ev][2]
  local e = 0
  for call in fn:callers() do
    if call.caller ~= fn then e = e + call:cost(ev) end
  end
  return math.max(a, b), math.max(b, math.min(e, math.max(sa, sb)))
end

-- B(f) as the brief of this spec words it for a function outside a cycle:
-- self plus every call out of f to another function.
local function self_plus_calls_out(fn, ev)
  local b = fn:self(ev)
  for call in fn:calls() do
    if call.callee ~= fn then b = b + call:cost(ev) end
  end
  return b
end

local function callers_sum(fn, ev)
  local a, n = 0, 0
  for call in fn:callers() do
    a = a + call:cost(ev)
    n = n + 1
  end
  return a, n
end

---------------------------------------------------------------------------
-- Building and profiling (each step once per run, on first use)
---------------------------------------------------------------------------

local PROFILES = {
  { label = "the default options", tag = "default", options = "" },
  { label = "--dump-instr=yes", tag = "instr", options = "--dump-instr=yes" },
}

-- Loads (once) what the tests of one profile need.
local function profile(p)
  if p.prof then return p end
  local out = p.cmd and lab:callgrind_cmd(p.tag, p.options, p.cmd()) or lab:callgrind(p.tag, p.options)
  local prof = H.load(out)
  local parts = 0
  for _ in prof:parts() do parts = parts + 1 end
  assert(parts == 1, out .. ": expected a single-part file")
  p.path, p.prof = out, prof
  p.raw = scan_calls(out)
  p.comp, p.members, p.cyclic = components(prof)
  return p
end

local annotated = {}
local function annotate_of(p)
  annotated[p.path] = annotated[p.path] or lab:annotate(p.path, true)
  return annotated[p.path]
end

-- The one Function of a name (the recursion tests rely on unique names).
local function the_func(prof, name)
  local fn, err = prof:func(name)
  assert(fn, ("prof:func(%q): %s"):format(name, tostring(err)))
  return fn
end

-- "file:function" keys that name exactly one Function and hold no other
-- function's (inlined) lines: key -> Function, and key -> reason for the
-- others.
local function unambiguous_keys(prof)
  local owner, why = {}, {}
  for fn in prof:functions() do
    local k = key_of(fn)
    if owner[k] then
      why[k] = "two functions with this file and name (objects " .. tostring(owner[k].object)
        .. " and " .. tostring(fn.object) .. ")"
    else
      owner[k] = fn
    end
  end
  for line in prof:lines() do
    local k = tostring(line.file) .. ":" .. line.fn.name
    if owner[k] and owner[k] ~= line.fn and not why[k] then
      why[k] = "also holds inlined lines of " .. label_of(line.fn)
    end
  end
  for k in pairs(why) do owner[k] = nil end
  return owner, why
end

-- Every function's lower bound and estimate against bounds() above, and
-- prof:inclusive_all against fn:inclusive.
local function check_formula(p, label)
  local prof, comp, members = p.prof, p.comp, p.members
  local bad = {}
  for _, ev in ipairs(prof.events) do
    local all = prof:inclusive_all(ev)
    local nfn = 0
    for fn in prof:functions() do
      nfn = nfn + 1
      local lower, est = bounds(fn, comp, members, ev)
      local llower, lest = fn:inclusive_bounds(ev)
      local inc = fn:inclusive(ev)
      if llower ~= lower or lest ~= est or inc ~= est or all[fn.index] ~= inc then
        bad[#bad + 1] = ("%s %s: lower %s estimate %s here; library lower %s estimate %s inclusive %s "
          .. "inclusive_all %s"):format(label_of(fn), ev, commify(lower), commify(est), commify(llower),
            commify(lest), commify(inc), tostring(all[fn.index]))
      end
    end
    assert.are.equal(nfn, #all, "prof:inclusive_all(" .. ev .. ") has one entry per function")
  end
  report(label, bad)
end

-- self <= inclusive <= the larger of the total and the summary: line, for
-- every function and cycle.
local function check_range(p, label)
  local prof = p.prof
  local bad = {}
  for _, ev in ipairs(prof.events) do
    local top = math.max(prof:total(ev), p.raw.summary[ev] or 0)
    for fn in prof:functions() do
      local s, inc = fn:self(ev), fn:inclusive(ev)
      if not (s <= inc and inc <= top) then
        bad[#bad + 1] = ("%s %s: self %s inclusive %s total %s"):format(label_of(fn), ev,
          commify(s), commify(inc), commify(top))
      end
    end
    for cycle in prof:cycles() do
      local s, inc = 0, cycle:inclusive(ev)
      for _, fn in ipairs(cycle.members) do s = s + fn:self(ev) end
      if not (s <= inc and inc <= top) then
        bad[#bad + 1] = ("%s %s: members' self %s inclusive %s total %s"):format(tostring(cycle), ev,
          commify(s), commify(inc), commify(top))
      end
    end
  end
  report(label, bad)
end

-- Compares every function outside a cycle with callgrind_annotate
-- --inclusive=yes: inclusive = max(annotate's value, self + calls out).
-- Returns the number compared, the reasons for the ones skipped, and the
-- set of the functions compared (mismatches fail the test).
local function compare_outside_cycles(p, label)
  local prof = p.prof
  local a = annotate_of(p)
  assert.are.same(prof.events, a.events)
  local owner, why = unambiguous_keys(prof)
  local zero_callee = {}
  for call in prof:calls() do
    if call.count == 0 then zero_callee[call.callee] = true end
  end
  local bad, compared, skipped, compared_fns = {}, 0, {}, {}
  for fn in prof:functions() do
    local k = key_of(fn)
    if fn:cycle() then
      skipped[#skipped + 1] = label_of(fn) .. ": in a cycle"
    elseif owner[k] ~= fn then
      skipped[#skipped + 1] = label_of(fn) .. ": " .. tostring(why[k])
    elseif zero_callee[fn] then
      skipped[#skipped + 1] = label_of(fn) .. ": callee of a calls=0 line"
    elseif not a.rows[k] then
      bad[#bad + 1] = label_of(fn) .. ": no row in callgrind_annotate's output"
    else
      compared = compared + 1
      compared_fns[fn] = true
      for _, ev in ipairs(prof.events) do
        local shown = a.rows[k][ev]
        local A, ncallers = callers_sum(fn, ev)
        local b = self_plus_calls_out(fn, ev)
        local inc = fn:inclusive(ev)
        if inc ~= math.max(shown, b) then
          bad[#bad + 1] = ("%s %s: inclusive %s, but callgrind_annotate %s and self + calls out %s")
            :format(label_of(fn), ev, commify(inc), commify(shown), commify(b))
        end
        -- what callgrind_annotate prints: the callers' sum, or at
        -- most self + calls out for a function nobody calls
        if ncallers > 0 and shown ~= A then
          bad[#bad + 1] = ("%s %s: callgrind_annotate %s, callers' sum %s")
            :format(label_of(fn), ev, commify(shown), commify(A))
        elseif ncallers == 0 and shown > b then
          bad[#bad + 1] = ("%s %s: uncalled, callgrind_annotate %s above self + calls out %s")
            :format(label_of(fn), ev, commify(shown), commify(b))
        end
      end
    end
  end
  if #bad > 0 then
    bad[#bad + 1] = ("(compared %d functions, skipped %d: %s)"):format(compared, #skipped,
      table.concat(skipped, "; "))
  end
  report(label, bad)
  return compared, skipped, compared_fns, zero_callee
end

---------------------------------------------------------------------------
-- The spec
---------------------------------------------------------------------------

describe("inclusive cost on fresh valgrind profiles of the fixture program", function()
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  it("finds gcc, valgrind and callgrind_annotate (it never skips)", function() lab:need_tools() end)

  for _, P in ipairs(PROFILES) do
    describe("with " .. P.label, function()
      it("finds the same cycles as an independent search of the call graph", function()
        local p = profile(P)
        local prof, comp, members, cyclic = p.prof, p.comp, p.members, p.cyclic
        local want = {}
        for k in pairs(cyclic) do
          local names = {}
          for _, fn in ipairs(members[k]) do names[#names + 1] = label_of(fn) end
          table.sort(names)
          want[#want + 1] = table.concat(names, ", ")
        end
        table.sort(want)
        local got = {}
        for cycle in prof:cycles() do
          local names = {}
          for _, fn in ipairs(cycle.members) do
            names[#names + 1] = label_of(fn)
            assert.are.equal(cycle, fn:cycle(), label_of(fn) .. ": fn:cycle() is not its cycle")
          end
          table.sort(names)
          got[#got + 1] = table.concat(names, ", ")
        end
        table.sort(got)
        assert.are.same(want, got)
        for fn in prof:functions() do
          assert.are.equal(cyclic[comp[fn]] == true, fn:cycle() ~= nil, label_of(fn) .. ": fn:cycle()")
        end
      end)

      it("gives every function docs/format.md's lower bound max(A, B) and estimate max(B, min(E, I(C)))", function()
        check_formula(profile(P), P.label)
      end)

      it("equals max(callgrind_annotate's inclusive, self + calls out) for every function outside a cycle",
        function()
          local p = profile(P)
          local prof = p.prof
          local compared, skipped, compared_fns, zero_callee = compare_outside_cycles(p, P.label)
          -- every function is compared or skipped for a reason above; the
          -- ones skipped for a cycle are exactly the recursion levels
          local total = 0
          for _ in prof:functions() do total = total + 1 end
          assert.are.equal(total, compared + #skipped)
          local in_cycle = {}
          for _, s in ipairs(skipped) do
            local name = s:match("^[^:]*:(.-) %[[^%]]*%]: in a cycle$")
            if name then in_cycle[#in_cycle + 1] = name end
          end
          table.sort(in_cycle)
          assert.are.same({ "fib'2", "is_even'2", "is_odd'2" }, in_cycle)
          -- and the fixture's own functions, with the thread entry, are compared
          local want = {}
          for _, name in ipairs { "main", "fib", "is_even", "is_odd", "loop_sum", "checksum", "run_threads",
            "worker", "start_thread", "clone", "(below main)" } do
            want[name] = 0
          end
          for fn in prof:functions() do
            if want[fn.name] then
              want[fn.name] = want[fn.name] + 1
              assert.is_truthy(compared_fns[fn], label_of(fn) .. " was not compared")
            end
          end
          -- (below main) twice: the program's _start (???) and libc's
          assert.are.same({ main = 1, fib = 1, is_even = 1, is_odd = 1, loop_sum = 1, checksum = 1, run_threads = 1,
            worker = 1, start_thread = 1, clone = 1, ["(below main)"] = 2 }, want)
          assert.are.same({}, zero_callee, "no calls=0 lines in a single-part profile")
        end)

      it("keeps self <= inclusive <= the program's total for every function and cycle", function()
        check_range(profile(P), P.label)
      end)

      it("gives the thread entry clone, which callgrind_annotate puts below its self cost, self + calls out",
        function()
          -- A new thread starts inside clone(), after the system call, with
          -- no call edge: callgrind books the child's run of clone (and its
          -- call to start_thread) to clone, while the calls into clone only
          -- hold the parent's part.  Every function whose callers' sum is
          -- below its self cost was entered without a call edge like that.
          local p = profile(P)
          local prof = p.prof
          local a = annotate_of(p)
          local owner = unambiguous_keys(prof)
          local found, names = {}, {}
          for fn in prof:functions() do
            local A, n = callers_sum(fn, "Ir")
            if n > 0 and A < fn:self("Ir") then
              found[#found + 1] = fn
              names[#names + 1] = label_of(fn)
            end
          end
          local clone
          for _, fn in ipairs(found) do
            if fn.name == "clone" or fn.name == "clone3" then clone = fn end
          end
          assert.is_truthy(clone, "no clone among the functions entered without a call edge: "
            .. table.concat(names, "; "))
          for _, fn in ipairs(found) do
            assert.is_nil(fn:cycle(), label_of(fn))
            for _, ev in ipairs(prof.events) do
              local A = callers_sum(fn, ev)
              local B = self_plus_calls_out(fn, ev)
              local lower, estimate = fn:inclusive_bounds(ev)
              assert.are.equal(B, lower, label_of(fn) .. " lower bound " .. ev)
              assert.are.equal(B, estimate, label_of(fn) .. " estimate " .. ev)
              assert.are.equal(B, fn:inclusive(ev), label_of(fn) .. " inclusive " .. ev)
              if ev == "Ir" then
                assert.is_true(B > A, label_of(fn) .. ": B > A")
                assert.is_true(A < fn:self(ev), label_of(fn) .. ": A below self")
              end
              if owner[key_of(fn)] == fn then
                -- callgrind_annotate prints the too-low callers' sum
                assert.are.equal(A, a.rows[key_of(fn)][ev], label_of(fn) .. ": callgrind_annotate " .. ev)
              end
            end
          end
          -- clone's key is unambiguous: callgrind_annotate's number was checked
          assert.are.equal(clone, owner[key_of(clone)])
          assert.is_true(a.rows[key_of(clone)].Ir < clone:self("Ir"))
        end)

      it("counts fib's recursion once where callgrind_annotate counts fib'2 again", function()
        local p = profile(P)
        local prof, raw = p.prof, p.raw
        local a = annotate_of(p)
        local fib, fib2 = the_func(prof, "fib"), the_func(prof, "fib'2")
        local main, worker = the_func(prof, "main"), the_func(prof, "worker")
        -- the shape: fib'2 calls itself and is a cycle alone; fib is in none
        assert.is_nil(fib:cycle())
        local cycle = fib2:cycle()
        assert.is_truthy(cycle, "fib'2 is not in a cycle")
        assert.are.same({ fib2 }, cycle.members:list())
        local self_call = false
        for call in fib2:calls() do
          assert.are.equal(fib2, call.callee, "fib'2 calls only itself")
          self_call = true
        end
        assert.is_true(self_call)
        local callers = {}
        for call in fib:callers() do callers[call.caller] = true end
        assert.are.same({ [main] = true, [worker] = true }, callers)
        -- call counts of fib(15) from main and fib(8), fib(9) from the two
        -- workers: 1 + 2 calls into fib, each calling fib'2 twice, and
        -- 2F(n+1) - 1 calls in all for fib(n): 1973 + 67 + 109 = 2149.
        assert.are.equal(1, select(2, raw_sum(raw, "main", "fib", "Ir")))
        assert.are.equal(2, select(2, raw_sum(raw, "worker", "fib", "Ir")))
        assert.are.equal(3, select(2, raw_sum(raw, nil, "fib", "Ir")))
        assert.are.equal(6, select(2, raw_sum(raw, "fib", "fib'2", "Ir")))
        assert.are.equal(2140, select(2, raw_sum(raw, "fib'2", "fib'2", "Ir")))
        for _, ev in ipairs(prof.events) do
          local from_main = raw_sum(raw, "main", "fib", ev)
          local from_worker = raw_sum(raw, "worker", "fib", ev)
          local into_fib2 = raw_sum(raw, "fib", "fib'2", ev)
          local recursive = raw_sum(raw, "fib'2", "fib'2", ev)
          -- fib: what main and the workers paid for their calls, and also
          -- its own cost plus its calls into the recursion, counted once
          assert.are.equal(from_main + from_worker, fib:inclusive(ev), "fib " .. ev)
          assert.are.equal(fib:self(ev) + into_fib2, fib:inclusive(ev), "fib " .. ev)
          -- fib'2 and its cycle: the calls into it from fib
          assert.are.equal(into_fib2, fib2:inclusive(ev), "fib'2 " .. ev)
          assert.are.equal(into_fib2, cycle:inclusive(ev), "cycle of fib'2 " .. ev)
          assert.are.equal(fib2:self(ev), fib2:inclusive(ev), "fib'2 calls nothing else: " .. ev)
          -- callgrind_annotate gets fib right but adds fib'2's calls to
          -- itself to fib'2's row: more than fib, its only way in, costs
          assert.are.equal(fib:inclusive(ev), a.rows[key_of(fib)][ev], "callgrind_annotate fib " .. ev)
          assert.are.equal(into_fib2 + recursive, a.rows[key_of(fib2)][ev], "callgrind_annotate fib'2 " .. ev)
          if ev == "Ir" then
            assert.is_true(a.rows[key_of(fib2)][ev] > fib:inclusive(ev))
          end
        end
      end)

      it("counts the is_even/is_odd cycle once where callgrind_annotate counts is_even'2 and is_odd'2 again",
        function()
          local p = profile(P)
          local prof, raw = p.prof, p.raw
          local a = annotate_of(p)
          local main = the_func(prof, "main")
          local even, odd = the_func(prof, "is_even"), the_func(prof, "is_odd")
          local even2, odd2 = the_func(prof, "is_even'2"), the_func(prof, "is_odd'2")
          -- the shape: main -> is_even -> is_odd -> is_even'2 <-> is_odd'2
          assert.is_nil(even:cycle())
          assert.is_nil(odd:cycle())
          local cycle = even2:cycle()
          assert.is_truthy(cycle, "is_even'2 is not in a cycle")
          assert.are.equal(cycle, odd2:cycle())
          assert.are.same({ [even2] = true, [odd2] = true },
            { [cycle.members[1]] = true, [cycle.members[2] or false] = true })
          assert.are.equal(2, #cycle.members)
          local callers = {}
          for call in even:callers() do callers[call.caller] = true end
          assert.are.same({ [main] = true }, callers)
          -- is_even(0..39) from main: 40 calls, 39 of them call is_odd, 38
          -- of those is_even'2, and 1 + 2 + ... + 39 = 780 calls below
          -- main's 40: 820 in all.
          assert.are.equal(40, select(2, raw_sum(raw, "main", "is_even", "Ir")))
          assert.are.equal(39, select(2, raw_sum(raw, "is_even", "is_odd", "Ir")))
          assert.are.equal(38, select(2, raw_sum(raw, "is_odd", "is_even'2", "Ir")))
          assert.are.equal(820 - 40 - 39 - 38, select(2, raw_sum(raw, "is_even'2", "is_odd'2", "Ir"))
            + select(2, raw_sum(raw, "is_odd'2", "is_even'2", "Ir")))
          for _, ev in ipairs(prof.events) do
            local from_main = raw_sum(raw, "main", "is_even", ev)
            local into_cycle = raw_sum(raw, "is_odd", "is_even'2", ev)
            local even2_in = raw_sum(raw, nil, "is_even'2", ev)
            local odd2_in = raw_sum(raw, nil, "is_odd'2", ev)
            -- is_even: what main paid, and also its own cost, is_odd's and
            -- the calls into the cycle, counted once
            assert.are.equal(from_main, even:inclusive(ev), "is_even " .. ev)
            assert.are.equal(even:self(ev) + odd:self(ev) + into_cycle, even:inclusive(ev), "is_even " .. ev)
            -- the cycle as a whole: the calls into it, which is also its
            -- members' self cost (they call nothing outside it)
            assert.are.equal(into_cycle, cycle:inclusive(ev), "cycle " .. ev)
            assert.are.equal(even2:self(ev) + odd2:self(ev), cycle:inclusive(ev), "cycle " .. ev)
            -- is_even'2: the calls from outside the cycle, or itself
            assert.are.equal(math.max(into_cycle, even2:self(ev)), even2:inclusive(ev), "is_even'2 " .. ev)
            -- is_odd'2 is entered only from is_even'2, inside the cycle:
            -- its lower bound is its self cost, its estimate those calls
            -- (an upper bound: they may nest), never above the cycle's
            local odd2_from_even2 = raw_sum(raw, "is_even'2", "is_odd'2", ev)
            assert.are.equal(odd2:self(ev), (odd2:inclusive_bounds(ev)), "is_odd'2 lower " .. ev)
            assert.are.equal(math.max(odd2:self(ev), math.min(odd2_from_even2, into_cycle)), odd2:inclusive(ev),
              "is_odd'2 " .. ev)
            -- callgrind_annotate gets is_even right, but sums every call
            -- into is_even'2 and is_odd'2, the cycle's own calls included
            assert.are.equal(even:inclusive(ev), a.rows[key_of(even)][ev], "callgrind_annotate is_even " .. ev)
            assert.are.equal(even2_in, a.rows[key_of(even2)][ev], "callgrind_annotate is_even'2 " .. ev)
            assert.are.equal(odd2_in, a.rows[key_of(odd2)][ev], "callgrind_annotate is_odd'2 " .. ev)
            if ev == "Ir" then
              assert.is_true(a.rows[key_of(even2)][ev] > even:inclusive(ev))
              assert.is_true(a.rows[key_of(odd2)][ev] > cycle:inclusive(ev))
            end
          end
        end)
    end)
  end
end)

-- Interpreters and compilers: big cycles (the interpreter loop, the pass
-- manager), where the estimate matters. Each command is small: a second or
-- two under callgrind, but cc1's 14 s: it runs with
-- CALLGRIND_INCLUSIVE=full (make check-long, which CI runs).
local REAL = {
  { label = "python3 (json of lists)", tag = "python3", options = "", cmd = function()
    -- the interpreter itself, not a launcher script in front of it
    local exe = lab:run("python3 -c 'import sys; print(sys.executable)'", "python3"):gsub("%s+$", "")
    return H.shq(exe) .. " -S -c 'import json; print(sum(len(json.dumps(list(range(i)))) for i in range(60)))'"
  end },
  { label = "lua5.4 (table.sort and gsub with Lua callbacks)", tag = "lua", options = "", cmd = function()
    -- callbacks from C into Lua make the interpreter's C functions a cycle
    return "lua5.4 -e 'local t = {} for i = 1, 300 do t[i] = (i * 7919) % 1000 end "
      .. "table.sort(t, function(a, b) return a < b end) "
      .. "local function r(s) if #s > 40 then return s end "
      .. "return r((s:gsub(\"x\", function(c) return c .. \"y\" end)) .. \"x\") end print(#r(\"x\"))'"
  end },
  { label = "cc1 (gcc -O2 of the fixture's parity file)", tag = "cc1", options = "", cmd = function()
    local cc1 = lab:run("gcc -print-prog-name=cc1", "gcc"):gsub("%s+$", "")
    return ("%s -quiet -O2 -I %s %s -o /dev/null"):format(H.shq(cc1), H.shq(lab:progs_dir()),
      H.shq(lab:progs_dir() .. "/cgparity.c"))
  end },
}
if os.getenv("CALLGRIND_INCLUSIVE") ~= "full" then REAL[#REAL] = nil end

describe("inclusive cost on valgrind profiles of python3, lua5.4 and cc1", function()
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  for _, P in ipairs(REAL) do
    describe(P.label, function()
      it("has a cycle of more than ten functions whose estimate is above its lower bound", function()
        local p = profile(P)
        local big
        for cycle in p.prof:cycles() do
          if #cycle.members > 10 then big = cycle end
        end
        assert.is_truthy(big, "no cycle of more than ten functions")
        local above = 0
        for _, fn in ipairs(big.members) do
          local lower, est = fn:inclusive_bounds("Ir")
          if est > lower then above = above + 1 end
        end
        assert.is_true(above > 0)
      end)

      it("gives every function docs/format.md's lower bound and estimate", function()
        check_formula(profile(P), P.label)
      end)

      it("equals max(callgrind_annotate's inclusive, self + calls out) outside every cycle", function()
        local compared = compare_outside_cycles(profile(P), P.label)
        assert.is_true(compared > 20)
      end)

      it("keeps self <= inclusive <= the total", function()
        check_range(profile(P), P.label)
      end)
    end)
  end
end)
