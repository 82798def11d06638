--- The history store: every run's numbers by commit, branch and machine,
-- the commits where a series stepped, its trend as a page, and Bencher
-- Metric Format (`callgrind.history`, `callgrind-lua history`).
--
-- A store is SQLite (a file path or `sqlite:PATH`, the default) or
-- PostgreSQL (`postgresql://...`), one versioned schema
-- (callgrind.history.store) and the same answers from both. A run is one
-- commit on one line (a branch on a machine); each of its points is a
-- value of a series, named by what it measures:
--
-- - a record of checks (`CALLGRIND_RECORD`): `NAME/TARGET/EVENT` (the
--   baseline's or check's name, `total` or a function, the event; `/self`
--   for a self cost, `NAME/TARGET/calls` for calls);
-- - a profile or a baseline: `LABEL/total/EV`, and for each function
--   `LABEL/FUNCTION/EV/self` and `LABEL/FUNCTION/EV/inclusive`.
--
-- A series is "exact" (valgrind's counts, the counting interpreter's) or
-- "spread": Lua counts that vary between processes (a profile of the
-- hook engine, or `opts.spread` given). A step between consecutive
-- commits of a line is a change beyond `opts.tolerance` percent (default
-- 0: any change); for a spread series, also beyond the spread measured:
-- the commits' ranges (repeated adds of one commit widen them) each
-- widened by the series' widest relative spread (`opts.spread`, or
-- measured) no longer overlap.
-- @module callgrind.history
local args = require "callgrind.args"
local encode = require "callgrind.encode"
local util = require "callgrind.util"
local store = require "callgrind.history.store"

local error, ipairs, pairs, pcall, tonumber, tostring, type = error, ipairs, pairs, pcall, tonumber, tostring, type
local math_abs, math_type, string_format, table_concat, table_sort =
  math.abs, math.type, string.format, table.concat, table.sort
local int = store.int

local M = {}

--- The store used when none is given: `$CALLGRIND_HISTORY`, else
-- `callgrind-history.db` (SQLite) in the working directory.
-- @usage print(history.default_url())
function M.default_url()
  local v = os.getenv("CALLGRIND_HISTORY")
  if v and v ~= "" then return v end
  return "callgrind-history.db"
end

-- Context ------------------------------------------------------------------

local function env(name)
  local v = os.getenv(name)
  if v and v ~= "" then return v end
end

local function capture(cmd)
  local p = io.popen(cmd .. " 2>/dev/null")
  if not p then return nil end
  local out = p:read("a")
  p:close()
  out = out and out:gsub("%s+$", "")
  if out == "" then return nil end
  return out
end

-- days from 1970-01-01 of a civil date (Howard Hinnant's algorithm)
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local doy = (153 * (m + (m > 2 and -3 or 9)) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

--- A time as seconds since 1970 (UTC): an integer as it is, or ISO 8601
-- text (`2024-05-01T12:00:00+02:00`, `...Z`; no zone is UTC); nil for
-- anything else.
-- @usage history.parse_time("1970-01-02T00:00:00Z") --> 86400
function M.parse_time(v)
  if math_type(v) == "integer" then return v end
  if type(v) ~= "string" then return nil end
  if v:match("^%d+$") then return math.tointeger(tonumber(v)) end
  local y, mo, d, h, mi, s, rest = v:match("^(%d%d%d%d)-(%d%d)-(%d%d)[T ](%d%d):(%d%d):(%d%d)%.?%d*(.*)$")
  if not y then
    y, mo, d = v:match("^(%d%d%d%d)-(%d%d)-(%d%d)$")
    if not y then return nil end
    h, mi, s, rest = 0, 0, 0, ""
  end
  local off = 0
  if rest ~= "" and rest ~= "Z" then
    local sign, oh, om = rest:match("^([+-])(%d%d):?(%d%d)$")
    if not sign then return nil end
    off = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == "-" and -1 or 1)
  end
  return days_from_civil(tonumber(y), tonumber(mo), tonumber(d)) * 86400 + tonumber(h) * 3600
    + tonumber(mi) * 60 + tonumber(s) - off
end

--- A time as ISO 8601 text in UTC.
-- @usage history.iso_time(86400) --> "1970-01-02T00:00:00Z"
function M.iso_time(t)
  return os.date("!%Y-%m-%dT%H:%M:%SZ", t)
end

--- Where a run comes from: `{ commit, branch, machine, time }`, each
-- from opts, else the CI's variables (GitHub Actions, GitLab CI,
-- Buildkite, Jenkins, CircleCI), else git (`git log -1 --format=%H %cI`,
-- `git rev-parse --abbrev-ref HEAD`) in opts.dir, else the host
-- (`$CALLGRIND_MACHINE`, `uname -n`) and the clock. A commit git does not
-- know takes `$CI_COMMIT_TIMESTAMP` or the clock for its time.
-- @usage local c = history.context({ commit = "abc", branch = "main" })
function M.context(opts)
  opts = args.options(opts, "history.context", 1, "history_add")
  local cd = opts.dir and ("cd " .. util.shq(opts.dir) .. " && ") or ""
  local commit = opts.commit or env("GITHUB_SHA") or env("CI_COMMIT_SHA") or env("BUILDKITE_COMMIT")
    or env("GIT_COMMIT") or env("CIRCLE_SHA1")
  local time = opts.time ~= nil and M.parse_time(opts.time)
  if opts.time ~= nil and not time then
    return nil, "time " .. tostring(opts.time) .. ": not seconds since 1970 or ISO 8601 (2024-05-01T12:00:00Z)"
  end
  if not commit or not time then
    local ref = commit and util.shq(commit) or "HEAD"
    local line = capture(cd .. "git log -1 --format='%H %cI' " .. ref .. " --")
    local h, iso
    if line then h, iso = line:match("^(%x+) (%S+)$") end
    if h then
      commit = commit or h
      time = time or M.parse_time(iso)
    end
  end
  if not commit then return nil, "no commit: give one (--commit), or run in a git checkout or a CI job" end
  time = time or M.parse_time(env("CI_COMMIT_TIMESTAMP")) or os.time()
  local branch = opts.branch or env("GITHUB_HEAD_REF") or env("GITHUB_REF_NAME") or env("CI_COMMIT_REF_NAME")
    or env("BUILDKITE_BRANCH") or env("BRANCH_NAME") or env("CIRCLE_BRANCH")
    or capture(cd .. "git rev-parse --abbrev-ref HEAD") or "unknown"
  local machine = opts.machine or env("CALLGRIND_MACHINE") or capture("uname -n") or "unknown"
  return { commit = commit, branch = branch, machine = machine, time = time }
end

-- Points -------------------------------------------------------------------

-- A series' kind: "spread" for Lua counts that vary between processes.
local function series_kind(opts, varies)
  if opts.spread ~= nil or varies then return "spread" end
  return "exact"
end

local function check_value(v, name)
  local i = math_type(v) == "integer" and v or (type(v) == "number" and math.tointeger(v))
  if not i then error({ format = string_format("series %s: %s is not a whole count", name, tostring(v)) }, 0) end
  return i
end

-- Points of a record file's lines.
local function record_points(recs, opts, out)
  for _, r in ipairs(recs) do
    if type(r.new) == "number" then
      local name = (r.name or r.check or "check")
      local target = r.target or "total"
      local what = r.event or (r.kind == "calls" and "calls") or "value"
      local s = name .. "/" .. target .. "/" .. what .. (r.kind == "self" and "/self" or "")
      out[#out + 1] = { series = s, event = r.event or r.kind, value = check_value(r.new, s),
        lo = r.lo and check_value(r.lo, s), hi = r.hi and check_value(r.hi, s),
        kind = series_kind(opts, r.lo ~= nil) }
    end
  end
end

-- Points of a profile.
local function profile_points(prof, label, opts, out)
  local events = opts.events or prof.events
  local varies = prof.engine == "hook"
  local kind = series_kind(opts, varies)
  for _, ev in ipairs(events) do
    out[#out + 1] = { series = label .. "/total/" .. ev, event = ev, value = prof:total(ev), kind = kind }
  end
  local seen, fns = {}, {}
  for fn in prof:functions() do
    fns[#fns + 1] = fn
    seen[fn.name] = (seen[fn.name] or 0) + 1
  end
  for _, fn in ipairs(fns) do
    local name = fn.name
    if seen[name] > 1 then name = name .. " (" .. tostring(fn.file or fn.object or fn.index) .. ")" end
    for _, ev in ipairs(events) do
      local incl = fn:inclusive(ev)
      if incl ~= 0 or fn:self(ev) ~= 0 then
        out[#out + 1] = { series = label .. "/" .. name .. "/" .. ev .. "/self", event = ev, value = fn:self(ev),
          kind = kind }
        out[#out + 1] = { series = label .. "/" .. name .. "/" .. ev .. "/inclusive", event = ev, value = incl,
          kind = kind }
      end
    end
  end
end

local function label_of(path)
  return (util.basename(path):gsub("%.callgrind$", ""):gsub("%.gz$", ""))
end

-- The points a source gives, and a word for what it was.
local function points_of(source, opts)
  local out = {}
  if util.is_profile(source) then
    profile_points(source, opts.label or label_of(util.name_of(source)), opts, out)
    return out, "profile " .. util.name_of(source)
  end
  if type(source) == "table" and source.baseline then
    local path = require("callgrind.check.baseline").path(source.baseline, { dir = source.dir })
    local prof, err, kind = require("callgrind.model.load").load(path)
    if not prof then error({ [kind or "io"] = "baseline " .. source.baseline .. ": " .. err }, 0) end
    profile_points(prof, opts.label or source.baseline, opts, out)
    return out, "baseline " .. source.baseline
  end
  if type(source) == "table" and source.spread_pct and source.totals then
    -- a callgrind.spread result: its total's range
    local label = opts.label or "spread"
    local s = label .. "/total/" .. source.event
    local sorted = table.move(source.totals, 1, #source.totals, 1, {})
    table_sort(sorted)
    out[1] = { series = s, event = source.event, value = sorted[(#sorted + 1) // 2], lo = source.min,
      hi = source.max, kind = "spread" }
    return out, "spread"
  end
  if type(source) == "table" then
    record_points(source, opts, out)
    return out, "records"
  end
  -- a path: a record file (JSON lines) or a profile
  local head = util.read_file(source)
  if head == nil then
    local f, err = io.open(source, "rb")
    if f then f:close() end
    error({ io = err or (source .. ": cannot read") }, 0)
  end
  if head:match("^%s*{") then
    local recs, damaged = require("callgrind.check.record").read(source)
    if #recs == 0 and #damaged > 0 then error({ format = damaged[1] }, 0) end
    record_points(recs, opts, out)
    return out, "record " .. source
  end
  local prof, err, kind = require("callgrind.model.load").load(source)
  if not prof then error({ [kind or "format"] = err }, 0) end
  profile_points(prof, opts.label or label_of(source), opts, out)
  return out, "profile " .. source
end

-- The History object -------------------------------------------------------

local History = { __name = "callgrind.History" }
local methods = {}
History.__index = methods
History.__tostring = function(h)
  return h.st and ("callgrind.History: " .. h.url) or "callgrind.History (closed)"
end
--- The History's metatable (`callgrind.History`: a store opened by
-- `history.open`).
M.History = History

-- Runs f in protected mode: its value, or nil, a message and a kind from
-- an error table `{ kind = message }`.
local function guarded(f, ...)
  local ok, res, extra = pcall(f, ...)
  if ok then return res, extra end
  if type(res) == "table" then
    local k, v = next(res)
    if k ~= nil then return nil, v, k == "store" and "io" or k end
  end
  error(res, 0)
end

local function live(h, fname)
  if getmetatable(h) ~= History then args.fail(fname, 1, "a History expected, got " .. args.show(h), 3) end
  if not h.st then args.fail(fname, 1, "the history store is closed", 3) end
  return h.st
end

--- Opens a history store: a History, or nil, a message and "io".
-- @usage local hist = assert(history.open("sqlite:" .. os.tmpname()))
function M.open(url, opts)
  if url ~= nil then args.check_type(url, "string", "history.open", 1) end
  opts = args.options(opts, "history.open", 2, "history_open")
  url = url or M.default_url()
  local st, err, kind = store.open(url, { busy_ms = opts.busy_ms })
  if not st then return nil, err, kind end
  return setmetatable({ st = st, url = url }, History)
end

local function quote(st, s) return st:quote(s) end

-- The id of a row found or made: INSERT ... ON CONFLICT DO NOTHING, then
-- SELECT.
local function ensure(st, insert, select)
  st:exec(insert)
  return int(st:row(select)[1])
end

-- The pairs of points an add changed (store.lua's steps table): for the
-- points of `sids` at run `run` (line `line`, time `t`), each one's pair
-- with the point before it and the next point's pair with it, written
-- again (deleted, then inserted when store.STEP holds). The neighbours
-- are found by the points' key: the last point before, the first after.
local NEIGHBOURS = [[
SELECT p.series_id, p.value, p.lo, p.hi, b.run_id, b.value, b.lo, b.hi, a.t, a.run_id, a.value, a.lo, a.hi
FROM (SELECT p.series_id, p.line_id, p.value, p.lo, p.hi,
    (SELECT q.t FROM points q WHERE q.series_id = p.series_id AND q.line_id = p.line_id AND q.t <= p.t
      AND (q.t < p.t OR q.run_id < p.run_id) ORDER BY q.t DESC, q.run_id DESC LIMIT 1) AS bt,
    (SELECT q.run_id FROM points q WHERE q.series_id = p.series_id AND q.line_id = p.line_id AND q.t <= p.t
      AND (q.t < p.t OR q.run_id < p.run_id) ORDER BY q.t DESC, q.run_id DESC LIMIT 1) AS br,
    (SELECT q.t FROM points q WHERE q.series_id = p.series_id AND q.line_id = p.line_id AND q.t >= p.t
      AND (q.t > p.t OR q.run_id > p.run_id) ORDER BY q.t, q.run_id LIMIT 1) AS at,
    (SELECT q.run_id FROM points q WHERE q.series_id = p.series_id AND q.line_id = p.line_id AND q.t >= p.t
      AND (q.t > p.t OR q.run_id > p.run_id) ORDER BY q.t, q.run_id LIMIT 1) AS ar
  FROM points p WHERE p.series_id IN (%s) AND p.line_id = %d AND p.t = %d AND p.run_id = %d) p
LEFT JOIN points b ON b.series_id = p.series_id AND b.line_id = p.line_id AND b.t = p.bt AND b.run_id = p.br
LEFT JOIN points a ON a.series_id = p.series_id AND a.line_id = p.line_id AND a.t = p.at AND a.run_id = p.ar]]

local function update_steps(st, line, t, run, sids)
  local ids = {}
  for i, sid in ipairs(sids) do ids[i] = tostring(sid) end
  store.batches(ids, 400, function(values)
    local rows = st:rows(string_format(NEIGHBOURS, values, line, t, run))
    local later, pairs_ = {}, {}
    for _, r in ipairs(rows) do
      local sid, v, lo, hi = int(r[1]), int(r[2]), int(r[3]), int(r[4])
      if r[5] ~= nil then
        pairs_[#pairs_ + 1] = string_format("(%d, %d, %d, %d, %s, %d, %d, %d, %s, %s, %s)", sid, line, t, run,
          r[5], v, lo, hi, r[6], r[7], r[8])
      end
      if r[10] ~= nil then
        later[#later + 1] = string_format("(series_id = %d AND t = %s AND run_id = %s)", sid, r[9], r[10])
        pairs_[#pairs_ + 1] = string_format("(%d, %d, %s, %s, %d, %s, %s, %s, %d, %d, %d)", sid, line, r[9], r[10],
          run, r[11], r[12], r[13], v, lo, hi)
      end
    end
    st:exec(string_format("DELETE FROM steps WHERE series_id IN (%s) AND line_id = %d AND t = %d AND run_id = %d",
      values, line, t, run))
    if #later > 0 then
      st:exec(string_format("DELETE FROM steps WHERE line_id = %d AND (%s)", line, table_concat(later, " OR ")))
    end
    if #pairs_ > 0 then
      st:exec(string_format("WITH x (%s) AS (VALUES %s) INSERT INTO steps (%s) SELECT x.series_id, x.line_id, "
        .. "x.t, x.run_id, x.prev_run, x.value, x.lo, x.hi, x.pv, x.plo, x.phi FROM x JOIN series s "
        .. "ON s.id = x.series_id WHERE %s", store.STEP_COLUMNS, table_concat(pairs_, ","), store.STEP_COLUMNS,
        store.STEP))
    end
  end)
end

local function add(h, source, opts)
  local st = h.st
  local ctx, cerr = M.context({ commit = opts.commit, branch = opts.branch, machine = opts.machine,
    time = opts.time, dir = opts.dir })
  if not ctx then error({ not_found = cerr }, 0) end
  local points, what = points_of(source, opts)
  -- one value a series in one add: a name given twice with another value is bad data
  local by, list = {}, {}
  for _, p in ipairs(points) do
    local q = by[p.series]
    if q then
      if q.value ~= p.value and q.kind == "exact" then
        error({ format = string_format("series %s given twice with different values (%d and %d) in one add",
          p.series, q.value, p.value) }, 0)
      end
    else
      by[p.series] = p
      list[#list + 1] = p
    end
  end
  local spread = opts.spread and opts.spread / 100 or 0
  local summary = { commit = ctx.commit, branch = ctx.branch, machine = ctx.machine, time = ctx.time,
    added = 0, merged = 0, unchanged = 0, series = #list, source = what }
  st:transaction(function()
    local line = ensure(st, string_format("INSERT INTO lines (branch, machine) VALUES (%s, %s) "
      .. "ON CONFLICT (branch, machine) DO NOTHING", quote(st, ctx.branch), quote(st, ctx.machine)),
      string_format("SELECT id FROM lines WHERE branch = %s AND machine = %s", quote(st, ctx.branch),
        quote(st, ctx.machine)))
    local existing = st:row(string_format("SELECT id, t FROM runs WHERE commit_id = %s AND line_id = %d",
      quote(st, ctx.commit), line))
    local run, t
    if existing then
      run, t = int(existing[1]), int(existing[2])
      summary.again = true
    else
      st:exec(string_format("INSERT INTO runs (commit_id, line_id, t, added, source) VALUES (%s, %d, %d, %d, %s)",
        quote(st, ctx.commit), line, ctx.time, os.time(), quote(st, what)))
      run, t = int(st:row(string_format("SELECT id FROM runs WHERE commit_id = %s AND line_id = %d",
        quote(st, ctx.commit), line))[1]), ctx.time
    end
    summary.run, summary.time = run, t
    -- the series
    local rows = {}
    for i, p in ipairs(list) do
      rows[i] = string_format("(%s, %s, %s, %.17g)", quote(st, p.series), quote(st, p.event), quote(st, p.kind),
        p.kind == "spread" and spread or 0)
    end
    store.batches(rows, 400, function(values)
      st:exec("INSERT INTO series (name, event, kind, spread) VALUES " .. values .. " ON CONFLICT (name) DO NOTHING")
    end)
    local names, ids = {}, {}
    for i, p in ipairs(list) do names[i] = quote(st, p.series) end
    local sinfo = {}
    store.batches(names, 400, function(values)
      for _, r in ipairs(st:rows("SELECT id, name, kind, spread FROM series WHERE name IN (" .. values .. ")")) do
        ids[r[2]] = int(r[1])
        sinfo[r[2]] = { kind = r[3], spread = tonumber(r[4]) }
      end
    end)
    if spread > 0 then
      st:exec(string_format("UPDATE series SET spread = %.17g WHERE kind = 'spread' AND spread < %.17g "
        .. "AND name IN (%s)", spread, spread, table_concat(names, ",")))
    end
    -- what this run has already
    local have = {}
    if existing then
      for _, r in ipairs(st:rows("SELECT series_id, value, lo, hi, n FROM points WHERE run_id = " .. run)) do
        have[int(r[1])] = { value = int(r[2]), lo = int(r[3]), hi = int(r[4]), n = int(r[5]) }
      end
    end
    local new_rows, changed = {}, {}
    for _, p in ipairs(list) do
      local sid = ids[p.series]
      local kind = sinfo[p.series].kind
      local lo, hi = p.lo or p.value, p.hi or p.value
      if lo > p.value then lo = p.value end
      if hi < p.value then hi = p.value end
      local old = have[sid]
      if not old then
        new_rows[#new_rows + 1] = string_format("(%d, %d, %d, %d, %d, %d, %d, 1)", sid, line, t, run, p.value, lo, hi)
        changed[#changed + 1] = sid
        summary.added = summary.added + 1
      elseif kind == "exact" then
        if old.value ~= p.value then
          error({ conflict = string_format("commit %s on %s (%s) has %s = %d already; this add gives %d: "
            .. "an exact count cannot have two values (nothing was added)", ctx.commit, ctx.branch, ctx.machine,
            p.series, old.value, p.value) }, 0)
        end
        summary.unchanged = summary.unchanged + 1
      else
        local nlo, nhi = math.min(old.lo, lo), math.max(old.hi, hi)
        st:exec(string_format("UPDATE points SET lo = %d, hi = %d, n = n + 1 WHERE series_id = %d AND run_id = %d",
          nlo, nhi, sid, run))
        changed[#changed + 1] = sid
        local width = nlo > 0 and (nhi - nlo) / nlo or 0
        if width > (sinfo[p.series].spread or 0) then
          st:exec(string_format("UPDATE series SET spread = %.17g WHERE id = %d AND spread < %.17g", width, sid, width))
        end
        summary.merged = summary.merged + 1
      end
    end
    store.batches(new_rows, 400, function(values)
      st:exec("INSERT INTO points (series_id, line_id, t, run_id, value, lo, hi, n) VALUES " .. values)
    end)
    update_steps(st, line, t, run, changed)
  end)
  return summary
end

--- Adds a run's numbers: a record file, a profile file or Profile, `{
-- baseline = NAME [, dir = DIR] }`, an array of records, or a `callgrind.spread`
-- result. The commit, branch, machine and time come from opts, else the
-- CI's variables and git (`history.context`). Returns `{ run, commit,
-- branch, machine, time, series, added, merged, unchanged, again }`, or
-- nil, a message and a kind. A run added again (same commit, branch and
-- machine) is merged: an exact count with the same value is kept as it
-- is, with another refused (kind "conflict"); a spread series widens its
-- commit's range. Everything is one transaction.
-- @usage hist:add("checks.jsonl", { commit = "abc123", branch = "main" })
function methods.add(h, source, opts)
  live(h, "add")
  if source == nil then args.fail("add", 1, "a record file, a profile or { baseline = NAME } expected, got nil") end
  opts = args.options(opts, "add", 2, "history_add")
  return guarded(add, h, source, opts)
end

-- Line ids for opts.branch and opts.machine, as an SQL condition ("" for all).
local function line_filter(st, opts, col)
  local conds = {}
  if opts.branch then conds[#conds + 1] = "branch = " .. quote(st, opts.branch) end
  if opts.machine then conds[#conds + 1] = "machine = " .. quote(st, opts.machine) end
  if #conds == 0 then return "" end
  return " AND " .. col .. " IN (SELECT id FROM lines WHERE " .. table_concat(conds, " AND ") .. ")"
end

--- The names of the series, sorted (those matching `pattern`, a Lua
-- pattern, when given).
-- @usage for _, name in ipairs(hist:series()) do print(name) end
function methods.series(h, pattern)
  local st = live(h, "series")
  local out = {}
  for _, r in ipairs(st:rows("SELECT name FROM series ORDER BY name")) do
    if not pattern or r[1]:find(pattern) then out[#out + 1] = r[1] end
  end
  return out
end

local function closest(names, name)
  local ok, query = pcall(require, "callgrind.model.query")
  local best = {}
  if ok and query.closest then return query.closest(name, names) end
  for _, n in ipairs(names) do
    if n:find(name, 1, true) or name:find(n, 1, true) then best[#best + 1] = n end
    if #best >= 5 then break end
  end
  return best
end

local function show(h, name, opts)
  local st = h.st
  local s = st:row("SELECT id, kind, event, spread FROM series WHERE name = " .. quote(st, name))
  if not s then
    local near = closest(methods.series(h), name)
    error({ not_found = "no series " .. name .. " in " .. h.url
      .. (#near > 0 and ("; closest: " .. table_concat(near, ", ", 1, math.min(#near, 5))) or "") }, 0)
  end
  local out = { name = name, kind = s[2], event = s[3], spread_pct = tonumber(s[4]) * 100 }
  -- the lines apart (a few); the points in key order, as the key's index
  -- has them (PostgreSQL's holds their values: no sort, no visit to the
  -- rows), each one's commit looked up by its run's key: on PostgreSQL a
  -- subquery (a join made it hash every run, then sort: 0.73x the time,
  -- median of 15 pairs at 5 million points), on SQLite a join (its loop
  -- over the points looks each run up: show took 0.89x the CPU time of
  -- the subquery's, median of 15 pairs)
  local lines = {}
  st:each("SELECT id, branch, machine FROM lines", function(r) lines[int(r[1])] = { r[2], r[3] } end)
  local n = 0
  st:each(string_format("SELECT %s, p.line_id, p.t, p.value, p.lo, p.hi, p.n FROM points p%s "
    .. "WHERE p.series_id = %d%s ORDER BY p.line_id, p.t, p.run_id",
    st.kind == "postgres" and "(SELECT r.commit_id FROM runs r WHERE r.id = p.run_id)" or "r.commit_id",
    st.kind == "postgres" and "" or " JOIN runs r ON r.id = p.run_id", int(s[1]),
    line_filter(st, opts, "p.line_id")), function(r)
    local l = lines[tonumber(r[2])]
    n = n + 1
    -- (tonumber: PostgreSQL's integers come as text, an integer's text
    -- gives an integer)
    out[n] = { commit = r[1], branch = l[1], machine = l[2], time = tonumber(r[3]), value = tonumber(r[4]),
      lo = tonumber(r[5]), hi = tonumber(r[6]), n = tonumber(r[7]) }
  end)
  return out
end

--- A series: its points in commit order per line (branch, machine),
-- each `{ commit, branch, machine, time, value, lo, hi, n }`, with the
-- series' `name`, `kind`, `event` and `spread_pct`; or nil, a message
-- and "not_found" (naming the closest series).
-- @usage for _, p in ipairs(assert(hist:show("parse/total/Ir"))) do print(p.commit, p.value) end
function methods.show(h, name, opts)
  live(h, "show")
  args.check_type(name, "string", "show", 1)
  opts = args.options(opts, "show", 2, "history_show")
  return guarded(show, h, name, opts)
end

local function changes(h, opts)
  local st = h.st
  local tol = (opts.tolerance or 0) / 100
  local sql = string_format("SELECT x.series_id, x.line_id, x.run_id, x.prev_run, x.value, x.pv FROM steps x "
    .. "JOIN series s ON s.id = x.series_id WHERE %s%s", store.step_condition(tol), line_filter(st, opts, "x.line_id"))
  local rows = st:rows(sql)
  local series, runs, lines = {}, {}, {}
  for _, r in ipairs(st:rows("SELECT id, name, kind, event FROM series")) do
    series[int(r[1])] = { name = r[2], kind = r[3], event = r[4] }
  end
  local want = {}
  for _, r in ipairs(rows) do
    want[int(r[3])] = true
    want[int(r[4])] = true
  end
  local ids = {}
  for id in pairs(want) do ids[#ids + 1] = tostring(id) end
  store.batches(ids, 400, function(values)
    for _, r in ipairs(st:rows("SELECT id, commit_id, t FROM runs WHERE id IN (" .. values .. ")")) do
      runs[int(r[1])] = { commit = r[2], time = int(r[3]) }
    end
  end)
  for _, r in ipairs(st:rows("SELECT id, branch, machine FROM lines")) do
    lines[int(r[1])] = { branch = r[2], machine = r[3] }
  end
  local out = {}
  for _, r in ipairs(rows) do
    local s, run, prev, line = series[int(r[1])], runs[int(r[3])], runs[int(r[4])], lines[int(r[2])]
    if not opts.series or s.name:find(opts.series) then
      local before, after = int(r[6]), int(r[5])
      out[#out + 1] = { series = s.name, kind = s.kind, event = s.event, branch = line.branch,
        machine = line.machine, commit = run.commit, time = run.time, before_commit = prev.commit,
        before = before, after = after, delta = after - before,
        share = before ~= 0 and (after - before) * 100 / math_abs(before) or nil }
    end
  end
  table_sort(out, function(a, b)
    if a.time ~= b.time then return a.time < b.time end
    if a.commit ~= b.commit then return a.commit < b.commit end
    return a.series < b.series
  end)
  return out
end

--- The steps of every series (opts.series: those matching a Lua
-- pattern): where a line's value changed between consecutive commits
-- beyond `opts.tolerance` percent (default 0) and, for a spread series,
-- beyond its measured spread. Each `{ series, kind, event, branch,
-- machine, commit, time, before_commit, before, after, delta, share }`
-- (share: the change in percent of before), oldest first.
-- @usage for _, c in ipairs(assert(hist:changes())) do print(c.commit, c.series, c.share) end
function methods.changes(h, opts)
  live(h, "changes")
  opts = args.options(opts, "changes", 1, "history_changes")
  return guarded(changes, h, opts)
end

--- The changes as text: one line each (commit, series, before -> after,
-- share), or "no changes".
-- @usage print(history.changes_text(assert(hist:changes())))
function M.changes_text(list)
  if #list == 0 then return "no series stepped" end
  local commas = require("callgrind.model.report").commas
  local out = {}
  for _, c in ipairs(list) do
    out[#out + 1] = string_format("%s  %s  %s (%s): %s -> %s (%s)%s", c.commit:sub(1, 12), M.iso_time(c.time),
      util.printable(c.series), util.printable(c.branch), commas(c.before), commas(c.after),
      c.share and string_format("%+.2f%%", c.share) or "from 0", c.machine and ("  on " .. util.printable(c.machine))
      or "")
  end
  return table_concat(out, "\n")
end

local ARRAY = { __name = "callgrind.history.array" }
--- The metatable that marks a table as a JSON array even when empty.
M.ARRAY = ARRAY

-- JSON of a Lua value (tables with [1] as arrays, others as objects with
-- sorted keys), strings through encode.json_string.
local function json(v)
  local t = type(v)
  if t == "string" then return encode.json_string(v) end
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    if math_type(v) == "integer" then return string_format("%d", v) end
    return string_format("%.17g", v)
  end
  if t == "boolean" then return tostring(v) end
  if t ~= "table" then return "null" end
  if v[1] ~= nil or getmetatable(v) == ARRAY then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = json(x) end
    return "[" .. table_concat(parts, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table_sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = encode.json_string(tostring(k)) .. ":" .. json(v[k]) end
  return "{" .. table_concat(parts, ",") .. "}"
end
--- JSON of a Lua value: a table with [1] (or `history.ARRAY` as its
-- metatable) an array, else an object with sorted keys.
-- @usage history.json({ b = 1, a = { 2 } }) --> '{"a":[2],"b":1}'
M.json = json

local function bmf(h, opts)
  local st = h.st
  local where = opts.commit and ("r.commit_id = " .. quote(st, opts.commit)) or "1 = 1"
  local run = st:row("SELECT r.id, r.commit_id FROM runs r WHERE " .. where .. line_filter(st, opts, "r.line_id")
    .. " ORDER BY r.t DESC, r.id DESC LIMIT 1")
  if not run then
    error({ not_found = "no run" .. (opts.commit and (" of commit " .. opts.commit) or "") .. " in " .. h.url }, 0)
  end
  local out = {}
  for _, r in ipairs(st:rows("SELECT s.name, s.event, p.value, p.lo, p.hi FROM points p JOIN series s "
    .. "ON s.id = p.series_id WHERE p.run_id = " .. int(run[1]))) do
    local measure = (r[2] or "value"):lower()
    local m = { value = int(r[3]) }
    if int(r[4]) ~= int(r[3]) or int(r[5]) ~= int(r[3]) then
      m.lower_value, m.upper_value = int(r[4]), int(r[5])
    end
    out[r[1]] = { [measure] = m }
  end
  return json(out) .. "\n"
end

--- One run's points as Bencher Metric Format JSON (`{ "SERIES": {
-- "EVENT": { "value": N, "lower_value": N, "upper_value": N } } }`, the
-- event in lower case as Bencher's measure): opts.commit's run, else the
-- latest (of opts.branch and opts.machine).
-- @usage io.write(hist:bmf({ branch = "main" }))
function methods.bmf(h, opts)
  live(h, "bmf")
  opts = args.options(opts, "bmf", 1, "history_bmf")
  local text, err, kind = guarded(bmf, h, opts)
  if not text then error(err .. " (" .. kind .. ")", 2) end
  return text
end

--- Writes the Bencher Metric Format JSON to a file (atomically).
-- @usage assert(hist:write_bmf("bmf.json", { branch = "main" }))
function methods.write_bmf(h, path, opts)
  live(h, "write_bmf")
  args.check_type(path, "string", "write_bmf", 1)
  opts = args.options(opts, "write_bmf", 2, "history_bmf")
  local text, err, kind = guarded(bmf, h, opts)
  if not text then return nil, err, kind end
  return util.write_file(path, text)
end

--- The trend page: one self-contained HTML page, a chart per series
-- (opts.series: those matching a Lua pattern), steps marked; a click on
-- a point shows its commit and the series that moved there.
-- @usage local page = hist:html({ series = "/total/" })
function methods.html(h, opts)
  live(h, "html")
  opts = args.options(opts, "html", 1, "history_html")
  local text, err = guarded(require("callgrind.history.trend").page, h, opts, M)
  if not text then error(err, 2) end
  return text
end

--- Writes the trend page to a file (atomically).
-- @usage assert(hist:write_html("trend.html"))
function methods.write_html(h, path, opts)
  live(h, "write_html")
  args.check_type(path, "string", "write_html", 1)
  opts = args.options(opts, "write_html", 2, "history_html")
  local text, err, kind = guarded(require("callgrind.history.trend").page, h, opts, M)
  if not text then return nil, err, kind end
  return util.write_file(path, text)
end

--- Closes the store (also on garbage collection); idempotent.
-- @usage hist:close()
function methods.close(h)
  if h.st then
    h.st:close()
    h.st = nil
  end
end
History.__gc = methods.close
History.__close = methods.close

--- The store's kind ("sqlite" or "postgres") and schema version.
-- @usage print(hist:info().kind)
function methods.info(h)
  local st = live(h, "info")
  return { kind = st.kind, url = h.url, schema_version = st.version }
end

--- The History's methods (the trend page calls `series` through them).
M.methods = methods

--- A series' points without the argument checks (the trend page's).
-- @usage local s = history.show_series(hist, "parse/total/Ir", {})
M.show_series = show

--- Every step without the argument checks (the trend page's).
-- @usage local list = history.all_changes(hist, {})
M.all_changes = changes

return M
