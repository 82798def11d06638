--- Limits and the checks behind the assertions, for any test framework:
-- each returns `ok, message` (the message says what was measured, actual
-- against the limit and by how much, and, where it applies, how to accept
-- new numbers). `callgrind.luassert` turns them into luassert assertions.
--
-- Limits, per event: `"5%"` (a relative limit on the increase), a number
-- (an absolute upper bound on the new value), or both as
-- `{ "5%", 2e6 }` / `{ increase = "5%", max = 2e6 }`. In a table of limits
-- for `no_regression`, `functions = { parse = { Ir = "2%" } }` adds
-- limits per function (inclusive cost unless `kind = "self"`), and the
-- name `"*"` gives one limit to every function. A decrease beyond a
-- relative limit is reported as an improvement, not a failure (unless
-- `fail_on_improvement = true`).
--
-- A profile with lost data (a truncation warning, lines skipped by a
-- lenient load) fails every check unless `allow_warnings = true`.
-- @module callgrind.check
local diff = require "callgrind.diff"
local report = require "callgrind.report"
local query = require "callgrind.query"

local error, ipairs, pairs, tostring, type = error, ipairs, pairs, tostring, type
local math_abs, string_format, table_concat, table_sort = math.abs, string.format, table.concat, table.sort

local commas, describe_fn = report.commas, diff.describe_fn

local M = {}

--- The warnings of a profile that mean costs were lost: a file cut short
-- (kind "truncated") or lines dropped by a lenient load ("skipped"). The
-- other kinds (mismatch, unknown, name, formula) lose no cost.
-- @usage for _, w in ipairs(check.lossy_warnings(prof)) do print(w) end
function M.lossy_warnings(prof)
  local out = prof:warnings("truncated")
  for _, w in ipairs(prof:warnings("skipped")) do out[#out + 1] = w end
  return out
end

local function warnings_problem(profs, allow)
  if allow then return nil end
  for _, prof in ipairs(profs) do
    local w = M.lossy_warnings(prof)
    if #w > 0 then
      local shown = {}
      for i = 1, math.min(#w, 3) do shown[i] = "  " .. w[i] end
      return string_format("%s has %d warning%s that lose costs (allow_warnings = true accepts them):\n%s",
        prof.name, #w, #w == 1 and "" or "s", table_concat(shown, "\n"))
    end
  end
  return nil
end

--- Parses one limit: `"5%"`, a number, `{ "5%", 2e6 }` or
-- `{ increase = "5%", max = 2e6 }`.
-- @return `{ increase = percent or nil, max = number or nil }`, or nil and
--   a message
-- @usage check.parse_limit("5%").increase --> 5.0
function M.parse_limit(spec)
  local t = type(spec)
  if t == "number" then return { max = spec } end
  if t == "string" then
    local n = spec:match("^%s*(%d+%.?%d*)%s*%%%s*$")
    if not n then return nil, string_format("limit '%s' is not a percentage like \"5%%\"", spec) end
    return { increase = tonumber(n) }
  end
  if t == "table" then
    local out = {}
    for _, k in ipairs { 1, 2, "increase", "max" } do
      local one, err = M.parse_limit(spec[k])
      if not one then return nil, err end
      out.increase = out.increase or one.increase
      out.max = out.max or one.max
    end
    if out.increase == nil and out.max == nil then return nil, "empty limit table" end
    return out
  end
  if spec == nil then return {} end
  return nil, "limit must be \"N%\", a number or a table, got " .. t
end

--- A profile's name for messages; a file that is gone (callgrind.run
-- removes its temporary files) says so.
-- @usage check.file_of(prof) --> "spec/fixtures/fib.callgrind"
function M.file_of(prof)
  local name = prof.name
  if name:find("/", 1, true) then
    local f = io.open(name, "rb")
    if not f then return name .. " (removed; callgrind.run's keep option keeps the files)" end
    f:close()
  end
  return name
end
local file_of = M.file_of

local function pct(x) return string_format("%+.1f%%", x) end

-- "(+42.1%)" over a bound.
local function over(v, limit)
  if limit == 0 then return "" end
  return " (" .. pct((v - limit) * 100.0 / math_abs(limit)) .. ")"
end

local function is_function(x) return type(x) == "userdata" and x.profile ~= nil and x.name ~= nil end
local function is_profile(x) return type(x) == "userdata" and type(x.events) == "table" end

--- The cost of a Function (inclusive by default, or self), a Selection
-- (sum) or a Profile (total) against an upper bound.
-- @return ok, message (for a failure: what is over and by how much; for a
--   pass: the value within the limit), profile of the target
-- @usage local ok, msg = check.cost_at_most(2e6, prof:func("parse"), "Ir")
function M.cost_at_most(limit, target, ev, kind, opts)
  if type(limit) ~= "number" then error("bad argument #1 to 'cost_at_most' (number expected)", 2) end
  if ev == nil then error("bad argument #3 to 'cost_at_most' (event name expected)", 2) end
  if kind ~= nil and kind ~= "self" and kind ~= "inclusive" then
    error("bad argument #4 to 'cost_at_most' (expected \"self\" or \"inclusive\", got " .. tostring(kind) .. ")", 2)
  end
  local what, v, prof
  if is_function(target) then
    kind = kind or "inclusive"
    prof = target.profile
    v = kind == "inclusive" and target:inclusive(ev) or target:self(ev)
    what = string_format("%s of %s (%s)", ev, target.name, kind)
  elseif getmetatable(target) == query.selection_mt then
    kind = kind or "self"
    prof = target.profile
    v = target:sum(ev, kind)
    local names = {}
    for i, fn in ipairs(target) do
      if i > 3 then names[#names + 1] = "..." break end
      names[i] = fn.name
    end
    what = string_format("%s of %d function%s (%s; %s, summed)", ev, #target, #target == 1 and "" or "s",
      table_concat(names, ", "), kind)
  elseif is_profile(target) then
    prof = target
    v = target:total(ev)
    what = string_format("%s of the whole profile", ev)
  else
    error("bad argument #2 to 'cost_at_most' (Function, Selection or Profile expected, got " .. type(target) .. ")", 2)
  end
  local problem = warnings_problem({ prof }, opts and opts.allow_warnings)
  local where = "profile: " .. file_of(prof)
  if problem then return false, problem end
  if v > limit then
    return false, string_format("%s: %s > %s%s\n%s", what, commas(v), commas(math.floor(limit)), over(v, limit),
      where)
  end
  return true, string_format("%s: %s <= %s\n%s", what, commas(v), commas(math.floor(limit)), where)
end

--- The number of calls into a function (the sum of its incoming calls'
-- counts) against an upper bound.
-- @usage local ok, msg = check.calls_at_most(100, prof:func("malloc"))
function M.calls_at_most(limit, fn, opts)
  if type(limit) ~= "number" then error("bad argument #1 to 'calls_at_most' (number expected)", 2) end
  if not is_function(fn) then
    error("bad argument #2 to 'calls_at_most' (Function expected, got " .. type(fn) .. ")", 2)
  end
  local n, sites = 0, 0
  for call in fn:callers() do
    n = n + call.count
    sites = sites + 1
  end
  local problem = warnings_problem({ fn.profile }, opts and opts.allow_warnings)
  if problem then return false, problem end
  local what = string_format("calls into %s", describe_fn(fn))
  local where = string_format("(%d call site%s)\nprofile: %s", sites, sites == 1 and "" or "s", file_of(fn.profile))
  if n > limit then
    return false, string_format("%s: %s > %s%s %s", what, commas(n), commas(math.floor(limit)), over(n, limit), where)
  end
  return true, string_format("%s: %s <= %s %s", what, commas(n), commas(math.floor(limit)), where)
end

-- The event limits of a limits table, in a stable order (the profile's
-- events first).
local function event_limits(limits, prof, fname)
  local out = {}
  local order = {}
  for i, ev in ipairs(prof:all_events()) do order[ev] = i end
  for ev, spec in pairs(limits) do
    if type(ev) == "string" and ev ~= "functions" and ev ~= "kind" and ev ~= "allow_warnings"
      and ev ~= "fail_on_improvement" then
      local l, err = M.parse_limit(spec)
      if not l then error(string_format("bad argument #3 to '%s' (%s: %s)", fname, ev, err), 3) end
      l.event = ev
      out[#out + 1] = l
    end
  end
  table_sort(out, function(a, b)
    local x, y = order[a.event] or math.huge, order[b.event] or math.huge
    if x ~= y then return x < y end
    return a.event < b.event
  end)
  return out
end

-- Checks one value against one limit. Returns "fail", "improved" or nil,
-- and the line that says so.
local function judge(label, old, new, l, fail_on_improvement)
  local p = diff.percent(old, new)
  local change = diff.change(old, new)
  if l.max and new > l.max then
    return "fail", string_format("%s: %s > %s%s (limit), was %s", label, commas(new), commas(math.floor(l.max)),
      over(new, l.max), commas(old))
  end
  if l.increase then
    if (p == nil and new > old) or (p and p > l.increase) then
      return "fail", string_format("%s: %s -> %s %s, limit +%g%%", label, commas(old), commas(new), change,
        l.increase)
    elseif p and p < -l.increase then
      return fail_on_improvement and "fail" or "improved",
        string_format("%s: %s -> %s %s, beyond -%g%%", label, commas(old), commas(new), change, l.increase)
    end
  end
  return nil
end

--- Compares two profiles against limits.
-- @param old Profile (the reference)
-- @param new Profile
-- @tparam table limits e.g. `{ Ir = "5%", Dr = { "10%", 2e6 }, functions = { parse = { Ir = "2%" } } }`
-- @tparam[opt] table opts `match` (as for `diff`), `allow_warnings`,
--   `fail_on_improvement`, `kind` of the per-function values
--   ("inclusive"), `hint` (a line on how to accept new numbers), `top`
--   (movers shown, default 5)
-- @return ok, message: on failure the limits broken, the old/new/change
--   table, the biggest movers, the profiles and the hint; on success the
--   improvements, if any
-- @usage local ok, msg = check.no_regression(old, new, { Ir = "5%" })
function M.no_regression(old, new, limits, opts)
  if not is_profile(old) then error("bad argument #1 to 'no_regression' (profile expected)", 2) end
  if not is_profile(new) then error("bad argument #2 to 'no_regression' (profile expected)", 2) end
  if type(limits) ~= "table" then error("bad argument #3 to 'no_regression' (table of limits expected)", 2) end
  opts = opts or {}
  local allow = opts.allow_warnings or limits.allow_warnings
  local fail_imp = opts.fail_on_improvement or limits.fail_on_improvement
  local kind = opts.kind or limits.kind or "inclusive"
  local d = diff.diff(old, new, { match = opts.match })
  local evl = event_limits(limits, old, "no_regression")
  local fails, improved = {}, {}
  local problem = warnings_problem({ old, new }, allow)
  if problem then fails[#fails + 1] = problem end
  local shown = {}
  for _, l in ipairs(evl) do
    local ok = pcall(d.total, d, l.event)
    if not ok then
      fails[#fails + 1] = string_format("event %s: not in both profiles (old: %s; new: %s)", l.event,
        table_concat(old.events, " "), table_concat(new.events, " "))
    else
      shown[#shown + 1] = l.event
      local o, n = d:total(l.event)
      local verdict, line = judge(l.event .. " (total)", o, n, l, fail_imp)
      if verdict == "fail" then fails[#fails + 1] = line elseif verdict then improved[#improved + 1] = line end
    end
  end
  -- per function
  local fl = limits.functions
  if fl ~= nil and type(fl) ~= "table" then
    error("bad argument #3 to 'no_regression' (functions must be a table)", 2)
  end
  local names = {}
  for name in pairs(fl or {}) do names[#names + 1] = name end
  table_sort(names)
  for _, name in ipairs(names) do
    local fevl = event_limits(fl[name], old, "no_regression")
    for _, l in ipairs(fevl) do
      if pcall(d.total, d, l.event) then
        local rows = d:functions(l.event, kind)
        local found = false
        for _, r in ipairs(rows) do
          if name == "*" or r.name == name then
            found = true
            if name ~= "*" or (r.old_fn and r.new_fn) then
              local verdict, line = judge(string_format("%s of %s (%s)", l.event, r.name, kind), r.old, r.new, l,
                fail_imp)
              if verdict == "fail" then fails[#fails + 1] = line elseif verdict then improved[#improved + 1] = line end
            end
          end
        end
        if not found then fails[#fails + 1] = string_format("function %s: in neither profile", name) end
      end
    end
  end
  local out = {}
  if #fails > 0 then
    out[#out + 1] = string_format("%d limit%s exceeded:", #fails, #fails == 1 and "" or "s")
    for _, f in ipairs(fails) do out[#out + 1] = "  " .. f end
  else
    out[#out + 1] = "within the limits"
  end
  if #improved > 0 then
    out[#out + 1] = string_format("improved beyond the limits (%d):", #improved)
    for _, f in ipairs(improved) do out[#out + 1] = "  " .. f end
  end
  if #shown > 0 then out[#out + 1] = d:report({ events = shown, top = opts.top }) end
  out[#out + 1] = "old: " .. file_of(old)
  out[#out + 1] = "new: " .. file_of(new)
  if opts.hint and (#fails > 0 or #improved > 0) then out[#out + 1] = opts.hint end
  return #fails == 0, table_concat(out, "\n")
end

return M
