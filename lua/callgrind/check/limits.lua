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
-- name `"*"` gives one limit to every function (but on an event where a
-- function has a limit of its own: that one alone). A decrease beyond a
-- relative limit is reported as an improvement, not a failure (unless
-- `fail_on_improvement = true`).
--
-- A profile with lost data (a truncation warning, lines skipped by a
-- lenient load) fails every check unless `allow_warnings = true`.
--
-- A limit must mean something: NaN, an infinity, a negative number or a
-- string that is not a percentage is an argument error. Misuse raises at
-- the caller's line (the spec's, through the luassert assertions too),
-- naming the check called. A function that is not in the profile, given
-- as `{ prof, "name" }`, fails the check by name with the closest names
-- the profile has. With `CALLGRIND_RECORD` set, every check is recorded
-- (`callgrind.record`).
-- @module callgrind.check.limits
local args = require "callgrind.args"
local api = require "callgrind.api"
local diff = require "callgrind.check.diff"
local record = require "callgrind.check.record"
local report = require "callgrind.model.report"
local query = require "callgrind.model.query"
local util = require "callgrind.util"

local ipairs, math_type, pairs, tostring, type = ipairs, math.type, pairs, tostring, type
local debug_getinfo, math_abs, math_huge = debug.getinfo, math.abs, math.huge
local string_format, table_concat, table_sort = string.format, table.concat, table.sort

local describe_fn = diff.describe_fn

-- Thousands separators; a whole float too big for an integer (a count of
-- 2^63 or more) written out whole, not as 1.8e+19.
local function commas(v)
  if math_type(v) == "float" and v == math.floor(v) and math_abs(v) >= 2 ^ 53 and math_abs(v) < math_huge then
    local s = string_format("%.0f", math_abs(v))
    s = s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
    return (v < 0 and "-" or "") .. s
  end
  return report.commas(v)
end

local M = {}

-- Frames of the library and of luassert are not the user's.
local PARTS = { model = true, export = true, check = true, profiler = true, cli = true }
local function internal_source(src)
  local part = src:match("callgrind/([%w_]+)/[%w_]+%.lua$")
  return src:find("callgrind/[%w_]+%.lua$") ~= nil or PARTS[part] or src:find("luassert/[%w_/]+%.lua$") ~= nil
    or src:find("say/init%.lua$") ~= nil
end

--- The level, counted from the function that calls this one (as `error`
-- counts), of the first caller outside callgrind's modules and luassert:
-- the line of the user's code that called the check or the assertion.
-- @usage error(msg, check.user_level())
function M.user_level()
  local level = 2
  while true do
    local info = debug_getinfo(level + 1, "S")
    if not info then return 2 end
    if info.what ~= "C" and not internal_source(info.source) then return level end
    level = level + 1
  end
end

--- "file:line" of the user's call (the first caller outside callgrind's
-- modules and luassert), or nil.
-- @usage print(check.caller_where())
function M.caller_where()
  local info = debug_getinfo(M.user_level(), "Sl")
  if not info or info.currentline < 0 then return nil end
  return info.short_src .. ":" .. info.currentline
end
local user_where = M.caller_where

-- An argument error at the user's line.
local function bad(fname, n, msg)
  args.fail(fname, n, msg, M.user_level())
end

-- A limit that is a number: finite and not negative.
local function check_number(v, fname, n, what)
  if type(v) ~= "number" then
    bad(fname, n, string_format("%s must be a number, got %s", what, args.show(v)))
  end
  if v ~= v then bad(fname, n, what .. " is NaN: it would let every value pass") end
  if v == math_huge or v == -math_huge then bad(fname, n, string_format("%s must be finite, got %s", what, v)) end
  if v < 0 then bad(fname, n, string_format("%s must not be negative (a cost or count is never below 0), got %s",
    what, tostring(v))) end
  return v
end

--- The warnings of a profile that mean costs were lost: a file cut short
-- (kind "truncated"), lines dropped by a lenient load ("skipped"), cost
-- lines that do not add up to `totals:` ("lost"), a written file changed
-- after it was written ("changed": its digest does not match), call costs
-- callgrind never writes ("calls": above their part or the profile). The other
-- kinds (mismatch of `summary:`, unknown, name, formula) lose no cost.
-- @usage for _, w in ipairs(check.lossy_warnings(prof)) do print(w) end
function M.lossy_warnings(prof)
  local out = prof:warnings("truncated")
  for _, kind in ipairs { "skipped", "lost", "changed", "calls" } do
    for _, w in ipairs(prof:warnings(kind)) do out[#out + 1] = w end
  end
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

-- A percentage's number, or nil and a message.
local function percent_of(spec)
  local n = spec:match("^%s*(%d+%.?%d*)%s*%%%s*$") or spec:match("^%s*(%.%d+)%s*%%%s*$")
  if not n then return nil, string_format("limit '%s' is not a percentage like \"5%%\"", spec) end
  local v = tonumber(n)
  if v == math_huge then return nil, string_format("limit '%s' is not finite", spec) end
  return v
end

local function number_problem(v)
  if v ~= v then return "limit is NaN: it would let every value pass" end
  if v == math_huge or v == -math_huge then return "limit must be finite, got " .. tostring(v) end
  if v < 0 then return "limit must not be negative (a cost is never below 0), got " .. tostring(v) end
  return nil
end

--- Parses one limit: `"5%"`, a number, `{ "5%", 2e6 }` or
-- `{ increase = "5%", max = 2e6 }`. NaN, infinities, negative numbers and
-- strings that are not percentages are refused.
-- @return `{ increase = percent or nil, max = number or nil }`, or nil and
--   a message
-- @usage check.parse_limit("5%").increase --> 5
function M.parse_limit(spec)
  local t = type(spec)
  if t == "number" then
    local problem = number_problem(spec)
    if problem then return nil, problem end
    return { max = spec }
  end
  if t == "string" then
    local v, err = percent_of(spec)
    if not v then return nil, err end
    return { increase = v }
  end
  if t == "table" then
    local out = {}
    for k in pairs(spec) do
      if k ~= 1 and k ~= 2 and k ~= "increase" and k ~= "max" then
        return nil, string_format("unknown key %s in a limit (keys: 1, 2, increase, max)", args.show(k))
      end
    end
    for _, k in ipairs { 1, 2, "increase", "max" } do
      if type(spec[k]) == "table" then return nil, "a limit table inside a limit table" end
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

-- A limit as the record shows it.
local function limit_text(l)
  if l.increase and l.max then return string_format("%g%% and %s", l.increase, commas(math.floor(l.max))) end
  if l.increase then return string_format("%g%%", l.increase) end
  return l.max
end

--- A profile's name for messages (`util.name_of`); a file that is gone (callgrind.run
-- removes its temporary files) says so.
-- @usage check.file_of(prof) --> "spec/fixtures/report.callgrind"
function M.file_of(prof)
  local name, shown = prof.name, util.name_of(prof)
  if name:find("/", 1, true) then
    local f = io.open(name, "rb")
    if not f then return shown .. " (removed; callgrind.run's keep option keeps the files)" end
    f:close()
  end
  return shown
end
local file_of = M.file_of

local function pct(x) return string_format("%+.1f%%", x) end

-- "(+42.1%)" over a bound.
local function over(v, limit)
  if limit == 0 then return "" end
  return " (" .. pct((v - limit) * 100.0 / math_abs(limit)) .. ")"
end

local probe = require("callgrind.args").probe
local function is_function(x)
  return type(x) == "userdata" and probe(x, "profile") ~= nil and probe(x, "name") ~= nil
end
local is_profile = require("callgrind.util").is_profile

--- The names of a profile's functions closest to a name (query.closest_names).
M.closest_names = query.closest_names

--- The message for a function that is not in a profile: its name, the
-- closest names, and why a function goes missing.
-- @usage print(check.missing_function(prof, "parse"))
function M.missing_function(prof, name)
  local close = M.closest_names(prof, name)
  local near = #close > 0 and ("; closest names: " .. table_concat(close, ", ")) or ""
  if require("callgrind.model.show").is_lua(prof) then
    -- the Lua profiler inlines nothing: a name is missing because it is
    -- another name, or the function did not run while it counted
    return string_format("function %s is not in the profile %s%s\n(did it run while the profiler counted? a Lua "
      .. "function is named module.field, the name its definition gives (Parser:next), name:LINE for two of one "
      .. "file, or anonymous@file.lua:LINE)", name, file_of(prof), near)
  end
  return string_format("function %s is not in the profile %s%s\n(was it inlined? build with -fno-inline or "
    .. "mark it noinline; or left out of the collection? with toggle_collect only the named functions and what "
    .. "they call are counted)", name, file_of(prof), near)
end

-- The target of a check: a Function, a Selection, a Profile or
-- { prof, "name" }. Returns the target (or nil and the missing name and
-- its profile).
local function resolve(target, fname, n, want)
  if type(target) == "table" and getmetatable(target) == nil and target[1] ~= nil then
    local prof, name = target[1], target[2]
    if not is_profile(prof) or type(name) ~= "string" or target[3] ~= nil then
      bad(fname, n, "expected { profile, \"function name\" }")
    end
    local fn = prof:func(name)
    if fn then return fn end
    return nil, name, prof
  end
  if target == nil then
    bad(fname, n, want .. " expected, got nil (a function looked up with prof:func(name) that is not in the "
      .. "profile? pass { prof, \"name\" } to have it named, with the closest names)")
  end
  return target
end

-- Records a check when CALLGRIND_RECORD is set.
local function note(rec)
  if record.path() then
    rec.where = rec.where or user_where()
    record.add(rec)
  end
end

--- The cost of a Function (inclusive by default, or self), a Selection
-- (sum) or a Profile (total) against an upper bound; the target may also
-- be `{ prof, "name" }`, which fails by name (with the closest names) when
-- the profile has no such function.
-- @tparam number limit finite, not negative
-- @tparam[opt] table opts `allow_warnings`
-- @return ok, message (for a failure: what is over and by how much; for a
--   pass: the value within the limit)
-- @usage local ok, msg = check.cost_at_most(2e6, prof:func("parse"), "Ir")
function M.cost_at_most(limit, target, ev, kind, opts)
  local F = "cost_at_most"
  check_number(limit, F, 1, "limit")
  local missing, mprof
  target, missing, mprof = resolve(target, F, 2, "Function, Selection or Profile")
  opts = args.options(opts, F, 5, "check", M.user_level())
  if kind ~= nil and kind ~= "self" and kind ~= "inclusive" then
    bad(F, 4, "expected \"self\" or \"inclusive\", got " .. args.show(kind))
  end
  local prof = target and (is_profile(target) and target or target.profile) or mprof
  if type(prof) ~= "userdata" then
    bad(F, 2, "Function, Selection or Profile expected, got " .. args.show(target))
  end
  if ev == nil then bad(F, 3, "event name expected, got no value") end
  ev = args.event(prof, ev, F, 3, M.user_level())
  if missing then
    local msg = M.missing_function(prof, missing)
    note({ check = F, name = F, target = missing, event = ev, kind = kind or "inclusive", limit = limit,
      status = "fail", message = msg, profile = prof.name })
    return false, msg
  end
  local what, v, tname
  if is_function(target) then
    kind = kind or "inclusive"
    v = kind == "inclusive" and target:inclusive(ev) or target:self(ev)
    what = string_format("%s of %s (%s)", ev, target.name, kind)
    tname = target.name
  elseif getmetatable(target) == query.selection_mt then
    kind = kind or "self"
    v = target:sum(ev, kind)
    local names = {}
    for i, fn in ipairs(target) do
      if i > 3 then names[#names + 1] = "..." break end
      names[i] = fn.name
    end
    what = string_format("%s of %d function%s (%s; %s, summed)", ev, #target, #target == 1 and "" or "s",
      table_concat(names, ", "), kind)
    tname = string_format("%d function%s", #target, #target == 1 and "" or "s")
  elseif is_profile(target) then
    v = target:total(ev)
    what = string_format("%s of the whole profile", ev)
    kind, tname = "total", "total"
  else
    bad(F, 2, "Function, Selection or Profile expected, got " .. args.show(target))
  end
  local rec = { check = F, name = F, target = tname, event = ev, kind = kind, new = v, limit = limit,
    profile = prof.name }
  local problem = warnings_problem({ prof }, opts.allow_warnings)
  local where = "profile: " .. file_of(prof)
  if problem then
    rec.status, rec.message = "fail", problem
    note(rec)
    return false, problem
  end
  if v > limit then
    rec.status = "fail"
    note(rec)
    return false, string_format("%s: %s > %s%s\n%s", what, commas(v), commas(math.floor(limit)), over(v, limit),
      where)
  end
  rec.status = "pass"
  note(rec)
  return true, string_format("%s: %s <= %s\n%s", what, commas(v), commas(math.floor(limit)), where)
end

--- The number of calls into a function (the sum of its incoming calls'
-- counts, read as unsigned: a count of 2^63 or more is a float, never
-- negative) against an upper bound. The function may be given as
-- `{ prof, "name" }`.
-- @tparam[opt] table opts `allow_warnings`
-- @usage local ok, msg = check.calls_at_most(100, prof:func("malloc"))
function M.calls_at_most(limit, fn, opts)
  local F = "calls_at_most"
  check_number(limit, F, 1, "limit")
  local missing, mprof
  fn, missing, mprof = resolve(fn, F, 2, "Function")
  opts = args.options(opts, F, 3, "check", M.user_level())
  if missing then
    local msg = M.missing_function(mprof, missing)
    note({ check = F, name = F, target = missing, kind = "calls", limit = limit, status = "fail", message = msg,
      profile = mprof.name })
    return false, msg
  end
  if not is_function(fn) then bad(F, 2, "Function expected, got " .. args.show(fn)) end
  local n, sites = 0, 0
  for call in fn:callers() do
    local c = call.count
    local sum = n + c
    -- an integer sum past 2^63-1 wraps: add as floats instead
    if math_type(sum) == "integer" and sum < n then sum = (n + 0.0) + c end
    n = sum
    sites = sites + 1
  end
  local rec = { check = F, name = F, target = fn.name, kind = "calls", new = n, limit = limit,
    profile = fn.profile.name }
  local problem = warnings_problem({ fn.profile }, opts.allow_warnings)
  if problem then
    rec.status, rec.message = "fail", problem
    note(rec)
    return false, problem
  end
  local what = string_format("calls into %s", describe_fn(fn))
  local where = string_format("(%d call site%s)\nprofile: %s", sites, sites == 1 and "" or "s", file_of(fn.profile))
  if n > limit then
    rec.status = "fail"
    note(rec)
    return false, string_format("%s: %s > %s%s %s", what, commas(n), commas(math.floor(limit)), over(n, limit), where)
  end
  rec.status = "pass"
  note(rec)
  return true, string_format("%s: %s <= %s %s", what, commas(n), commas(math.floor(limit)), where)
end

-- the keys of a limits table that are not events
local LIMIT_OPTIONS = api.option_types("limits")

-- The event limits of a limits table, in a stable order (the profile's
-- events first). A limit that means nothing raises at the user's line.
local function event_limits(limits, prof, fname, where)
  local out = {}
  local order = {}
  for i, ev in ipairs(prof:all_events()) do order[ev] = i end
  for ev, spec in pairs(limits) do
    if type(ev) ~= "string" then
      bad(fname, 3, string_format("%s: limits are keyed by event names, got the key %s", where, args.show(ev)))
    end
    if not LIMIT_OPTIONS[ev] then
      local l, err = M.parse_limit(spec)
      if not l then bad(fname, 3, string_format("%s%s: %s", where == "limits" and "" or where .. ".", ev, err)) end
      l.event = ev
      out[#out + 1] = l
    end
  end
  table_sort(out, function(a, b)
    local x, y = order[a.event] or math_huge, order[b.event] or math_huge
    if x ~= y then return x < y end
    return a.event < b.event
  end)
  return out
end

-- Checks one value against one limit. Returns "fail", "improved" or
-- "pass", and the line that says so (nil for a pass).
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
  return "pass"
end

--- Checks a table of limits (as `no_regression` takes it) against a
-- profile's events, raising at the user's line on a limit that means
-- nothing.
-- @return the event limits, the function names (sorted) and their limits
-- @usage check.limits({ Ir = "5%" }, prof, "no_regression")
function M.limits(limits, prof, fname)
  local evl = event_limits(limits, prof, fname, "limits")
  local fl = limits.functions
  if fl ~= nil and type(fl) ~= "table" then bad(fname, 3, "functions must be a table") end
  local names = {}
  for name in pairs(fl or {}) do
    if type(name) ~= "string" then bad(fname, 3, "functions are keyed by function names, got " .. args.show(name)) end
    if type(fl[name]) ~= "table" then
      bad(fname, 3, string_format("functions.%s must be a table of limits, got %s", name, args.show(fl[name])))
    end
    names[#names + 1] = name
  end
  table_sort(names)
  local fevls = {}
  for _, name in ipairs(names) do fevls[name] = event_limits(fl[name], prof, fname, "functions." .. name) end

  return evl, names, fevls
end

--- Compares two profiles against limits, as `no_regression` does, with
-- the options unchecked (for `callgrind.baseline`): `ctx.check` and
-- `ctx.name` name the records, `ctx.fname` the argument errors,
-- `ctx.notes` are lines put first in the message.
-- @return ok, message
-- @usage local ok, msg = check.compare(old, new, { Ir = "5%" }, {}, { check = "within_baseline", name = "x" })
function M.compare(old, new, limits, opts, ctx)
  ctx = ctx or {}
  local fname = ctx.fname or "no_regression"
  local allow = opts.allow_warnings or limits.allow_warnings
  local fail_imp = opts.fail_on_improvement or limits.fail_on_improvement
  local kind = opts.kind or limits.kind or "inclusive"
  local evl, names, fevls = M.limits(limits, old, fname)

  local d = diff.diff(old, new, { match = opts.match })
  local fails, improved = {}, {}
  local fail_event
  local recs = {}
  local function rec(t)
    t.check, t.name, t.profile, t.old_profile = ctx.check or "no_regression", ctx.name or "no_regression",
      new.name, old.name
    recs[#recs + 1] = t
  end
  local function verdict_of(v, line, l, r)
    if v == "fail" then
      fails[#fails + 1] = line
      fail_event = fail_event or l.event
    elseif v == "improved" then
      improved[#improved + 1] = line
    end
    r.status = v == "improved" and "improved" or v
    r.limit = limit_text(l)
    r.diff_pct = diff.percent(r.old, r.new)
    rec(r)
  end
  for _, n in ipairs(ctx.fails or {}) do
    fails[#fails + 1] = n
    rec({ status = "fail", message = n })
  end
  local problem = warnings_problem({ old, new }, allow)
  if problem then
    fails[#fails + 1] = problem
    rec({ status = "fail", message = problem })
  end
  -- a comparison that matched less than half of either side compares
  -- nothing: it fails, saying why and how to match
  local first = evl[1] and evl[1].event
  for _, w in ipairs(first and pcall(d.total, d, first) and d:warnings(first) or d:warnings()) do
    fails[#fails + 1] = w
    rec({ status = "fail", message = w })
  end
  local shown = {}
  for _, l in ipairs(evl) do
    local ok = pcall(d.total, d, l.event)
    if not ok then
      local line = string_format("event %s: not in both profiles (old: %s; new: %s)", l.event,
        table_concat(old.events, " "), table_concat(new.events, " "))
      fails[#fails + 1] = line
      rec({ target = "total", event = l.event, kind = "total", limit = limit_text(l), status = "fail",
        message = line })
    else
      shown[#shown + 1] = l.event
      local o, n = d:total(l.event)
      local v, line = judge(l.event .. " (total)", o, n, l, fail_imp)
      verdict_of(v, line, l, { target = "total", event = l.event, kind = "total", old = o, new = n })
    end
  end
  -- per function; a function with a limit of its own on an event is
  -- judged by that one alone, not again by "*"
  local own = {}
  for _, name in ipairs(names) do
    if name ~= "*" then
      for _, l in ipairs(fevls[name]) do own[name .. "\0" .. l.event] = true end
    end
  end
  for _, name in ipairs(names) do
    for _, l in ipairs(fevls[name]) do
      if pcall(d.total, d, l.event) then
        local rows = d:movers(l.event, kind)
        local found = false
        for _, r in ipairs(rows) do
          if name ~= "*" and r.name == name and not r.new_fn then
            -- a limit on a function the new profile lacks fails: renamed,
            -- inlined or no longer run, its limit must not pass unseen
            found = true
            local close = M.closest_names(new, name)
            local line = string_format("function %s: not in the new profile%s (renamed, inlined, or no longer run?)",
              name, #close > 0 and ("; closest names: " .. table_concat(close, ", ")) or "")
            fails[#fails + 1] = line
            rec({ target = name, event = l.event, kind = kind, limit = limit_text(l), status = "fail", message = line })
          elseif name == "*" or r.name == name then
            found = true
            if name ~= "*" or (r.old_fn and r.new_fn and not own[r.name .. "\0" .. l.event]) then
              local v, line = judge(string_format("%s of %s (%s)", l.event, r.name, kind), r.old, r.new, l,
                fail_imp)
              if name ~= "*" or v ~= "pass" then
                verdict_of(v, line, l, { target = r.name, event = l.event, kind = kind, old = r.old, new = r.new })
              end
            end
          end
        end
        if not found then
          local close = M.closest_names(new, name)
          local line = string_format("function %s: in neither profile%s (inlined, or outside toggle_collect?)", name,
            #close > 0 and ("; closest names: " .. table_concat(close, ", ")) or "")
          fails[#fails + 1] = line
          rec({ target = name, event = l.event, kind = kind, limit = limit_text(l), status = "fail", message = line })
        end
      end
    end
  end
  local out = {}
  for _, n in ipairs(ctx.notes or {}) do out[#out + 1] = n end
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
  if #shown > 0 then
    -- the movers in the event of the first limit that failed
    local ev = fail_event
    if ev and not pcall(d.total, d, ev) then ev = nil end
    out[#out + 1] = d:report({ events = shown, top = opts.top, event = ev or shown[1] })
  end
  out[#out + 1] = "old: " .. file_of(old)
  out[#out + 1] = "new: " .. file_of(new)
  if opts.hint and (#fails > 0 or #improved > 0) then out[#out + 1] = opts.hint end
  if record.path() and not ctx.no_record then
    local where = user_where()
    for _, r in ipairs(recs) do
      r.where = where
      record.add(r)
    end
  end
  return #fails == 0, table_concat(out, "\n")
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
--   table, the biggest movers (in the event of the first limit that
--   failed), the profiles and the hint; on success the improvements, if any
-- @usage local ok, msg = check.no_regression(old, new, { Ir = "5%" })
function M.no_regression(old, new, limits, opts)
  local F = "no_regression"
  if not is_profile(old) then bad(F, 1, "profile expected, got " .. args.show(old)) end
  if not is_profile(new) then bad(F, 2, "profile expected, got " .. args.show(new)) end
  if type(limits) ~= "table" then bad(F, 3, "table of limits expected, got " .. args.show(limits)) end
  opts = args.options(opts, F, 4, "no_regression", M.user_level())
  if opts.kind ~= nil then args.kind(opts.kind, F, 4, M.user_level()) end
  return M.compare(old, new, limits, opts)
end

return M
