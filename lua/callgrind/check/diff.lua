--- Comparing two profiles: `callgrind.diff(old, new [, opts])`.
--
-- Functions are matched across the two profiles by a key that survives
-- moving the checkout or building in another directory: by default the
-- function's name, plus its file and object with their directories
-- dropped (`sort_numbers`, `sortnum.c`, `sortnum`), where each profile's
-- own program (the executable its `cmd:` runs) counts as one object, so
-- two builds of a program under different names (`pigz-O0`, `pigz-O2`)
-- match. `opts.match` takes another key: "name", "name+file",
-- "name+file+object" (the default), or `function(fn) return key end`. Two
-- different functions of one profile that get the same key are not
-- summed: each keeps its own row (matched by name, full file and full
-- object) and `d.collisions` says so. `d:matched(ev)` says how many
-- functions matched and what share of each side's cost they hold; below
-- half of either side, `d:warnings()` says why and how to match better.
-- @module callgrind.check.diff
local args = require "callgrind.args"
local util = require "callgrind.util"
local encode = require "callgrind.encode"
local show = require "callgrind.model.show"
local report = require "callgrind.model.report"

local ipairs, pairs, setmetatable, tostring, type = ipairs, pairs, setmetatable, tostring, type
local math_abs, string_format, string_rep, table_concat, table_sort = math.abs, string.format, string.rep,
  table.concat, table.sort

local commas = report.commas

local M = {}

local Diff = {}
local diff_mt = { __index = Diff, __name = "callgrind.Diff" }
M.Diff = Diff

--- The default match key: name, file and object without directories.
-- @usage diff.default_key(prof:func("main")) --> "main\0main.c\0prog"
function M.default_key(fn)
  return fn.name .. "\0" .. util.basename(fn.file) .. "\0" .. util.basename(fn.object)
end

--- A profile's own program: the basename of the executable its `cmd:`
-- runs when an object of the profile has that name, else the object of its
-- `main`; nil when neither tells (a Lua profile, a file without objects).
-- @usage diff.program(prof) --> "prog"
function M.program(prof)
  local exe = prof.cmd and util.basename(prof.cmd:match("^%s*(%S+)"))
  local main
  for fn in prof:functions() do
    local ob = fn.object and util.basename(fn.object)
    if ob and ob == exe then return ob end
    if fn.name == "main" and ob then main = main or ob end
  end
  return main
end

-- The keys opts.match names, as functions of (fn, program).
local KEYS = {
  name = function(fn) return fn.name end,
  ["name+file"] = function(fn) return fn.name .. "\0" .. util.basename(fn.file) end,
  ["name+file+object"] = function(fn, program)
    local ob = util.basename(fn.object)
    if program and ob == program then ob = "(program)" end
    return fn.name .. "\0" .. util.basename(fn.file) .. "\0" .. ob
  end,
}
M.KEYS = { "name", "name+file", "name+file+object" }

-- The match function of opts.match for one profile.
local function matcher(match, prof)
  if type(match) == "function" then return match end
  local key = KEYS[match or "name+file+object"]
  if not key then
    args.fail("diff", 3, string_format("opts.match must be a function or one of: %s; got %s",
      table_concat(M.KEYS, ", "), args.show(match)), 4)
  end
  local program = M.program(prof)
  return function(fn) return key(fn, program) end
end

local function full_key(fn)
  return "\1" .. fn.name .. "\0" .. tostring(fn.file) .. "\0" .. tostring(fn.object)
end

--- A function as messages name it: `name (file; object)`.
-- @usage diff.describe_fn(prof:func("main")) --> "main (main.c; prog)"
function M.describe_fn(fn)
  local where = {}
  if fn.file then where[#where + 1] = fn.file end
  if fn.object then where[#where + 1] = fn.object end
  if #where == 0 then return fn.name end
  return fn.name .. " (" .. table_concat(where, "; ") .. ")"
end
local describe_fn = M.describe_fn

-- key -> function of one profile. Functions whose keys collide are told
-- apart by name, file and object with directories dropped and the
-- program as one object (so they still match across two builds), and by
-- their full names where even that collides.
local function index(prof, match, side, collisions)
  local program = M.program(prof)
  local function apart(fn) return "\1" .. KEYS["name+file+object"](fn, program) end
  local by, clash = {}, {}
  for fn in prof:functions() do
    local k = match(fn)
    if type(k) ~= "string" then
      args.fail("diff", 3, string_format("opts.match returned %s for %s, string expected", type(k), describe_fn(fn)),
        3)
    end
    if by[k] then
      clash[k] = clash[k] or { by[k] }
      clash[k][#clash[k] + 1] = fn
    else
      by[k] = fn
    end
  end
  local keys, keyof = {}, {}
  for k, fn in pairs(by) do keyof[fn] = k end
  for k in pairs(clash) do keys[#keys + 1] = k end
  table_sort(keys)
  for _, k in ipairs(keys) do
    local names, seen = {}, {}
    by[k] = nil
    for _, fn in ipairs(clash[k]) do
      local a = apart(fn)
      seen[a] = (seen[a] or 0) + 1
    end
    for i, fn in ipairs(clash[k]) do
      names[i] = describe_fn(fn)
      local a = apart(fn)
      if seen[a] > 1 then a = full_key(fn) end
      by[a] = fn
      keyof[fn] = a
    end
    collisions[#collisions + 1] = string_format("%s profile: %d functions share the key of %s, compared "
      .. "apart: %s", side, #names, clash[k][1].name, table_concat(names, ", "))
  end
  return by, keyof
end

local function has_event(prof, ev)
  return (pcall(prof.total, prof, ev))
end

local function check_event(d, ev, fname)
  if ev == nil then
    args.fail(fname, 1, "an event is needed (the old profile's: " .. table.concat(d.old.events, " ") .. ")", 3)
  end
  if not has_event(d.old, ev) then
    args.fail(fname, 1, string_format("unknown event %s in the old profile", args.show(ev)), 3)
  end
  if not has_event(d.new, ev) then
    args.fail(fname, 1, string_format("unknown event %s in the new profile", args.show(ev)), 3)
  end
end

--- Compares two profiles.
-- @param old Profile
-- @param new Profile
-- @tparam[opt] table opts `match = function(fn) return key end`
-- @return a Diff: `d.old`, `d.new`, `d.collisions` (array of messages),
--   `d:total(ev)`, `d:movers(ev [, kind])`, `d:report(opts)`,
--   `tostring(d)`
-- @usage local d = callgrind.diff(old, new); print(d:total("Ir"))
function M.diff(old, new, opts)
  args.profile(old, "diff", 1)
  args.profile(new, "diff", 2)
  opts = args.options(opts, "diff", 3, "diff")
  local collisions = {}
  local d = setmetatable({ old = old, new = new, collisions = collisions, match = opts.match or "name+file+object" },
    diff_mt)
  d.old_by, d.old_key = index(old, matcher(opts.match, old), "old", collisions)
  d.new_by, d.new_key = index(new, matcher(opts.match, new), "new", collisions)
  return d
end

--- The totals of an event in both profiles.
-- @return old, new
-- @usage local old, new = d:total("Ir")
function Diff:total(ev)
  check_event(self, ev, "total")
  return self.old:total(ev), self.new:total(ev)
end

-- The first event both profiles have.
local function common_event(d)
  for _, ev in ipairs(d.old.events) do
    if has_event(d.new, ev) then return ev end
  end
end

--- How much the match found: `{ functions = n, old = x, new = y,
-- old_total =, new_total =, old_share =, new_share = }`, n the functions
-- matched on both sides, x and y their self cost in ev on each side and
-- the shares those costs' fractions of each side's total (1 for a total
-- of 0). The default event: the first both profiles have.
-- @usage local m = d:matched("Ir"); print(m.functions, m.old_share)
function Diff:matched(ev)
  if ev == nil then ev = common_event(self) end
  if ev == nil then return { functions = 0, old = 0, new = 0, old_total = 0, new_total = 0, old_share = 1,
    new_share = 1 } end
  check_event(self, ev, "matched")
  local n, o, nw = 0, 0, 0
  for k, fo in pairs(self.old_by) do
    local fnew = self.new_by[k]
    if fnew then
      n = n + 1
      o = o + fo:self(ev)
      nw = nw + fnew:self(ev)
    end
  end
  local ot, nt = self.old:total(ev), self.new:total(ev)
  return { functions = n, old = o, new = nw, old_total = ot, new_total = nt,
    old_share = ot == 0 and 1 or o / ot, new_share = nt == 0 and 1 or nw / nt, event = ev }
end

-- The objects that hold most of a profile's self cost in ev (basenames).
local function main_objects(prof, ev)
  local by = {}
  for fn in prof:functions() do
    local ob = util.basename(fn.object)
    if ob ~= "" then by[ob] = (by[ob] or 0) + fn:self(ev) end
  end
  local best, bv = nil, -1
  for ob, v in pairs(by) do
    if v > bv or (v == bv and ob < best) then best, bv = ob, v end
  end
  return best
end

--- What makes this comparison doubtful: less than half of either side's
-- cost matched, with the likely cause and the option that fixes it.
-- @return an array of messages (empty when the match is good)
-- @usage for _, w in ipairs(d:warnings()) do print(w) end
function Diff:warnings(ev)
  local m = self:matched(ev)
  local out = {}
  if m.old_share >= 0.5 and m.new_share >= 0.5 then return out end
  local cause, fix = "", ""
  if m.event then
    local a, b = main_objects(self.old, m.event), main_objects(self.new, m.event)
    if a and b and a ~= b then
      cause = string_format(": the objects differ (%s vs %s)", a, b)
      fix = "; match = \"name+file\" (--match name+file) compares them function by function"
    elseif self.match ~= "name" then
      fix = "; match = \"name\" (--match name) matches by name alone"
    end
  end
  out[1] = string_format("only %.1f%% of the old cost and %.1f%% of the new matched function by function "
    .. "(%d functions)%s%s", 100 * m.old_share, 100 * m.new_share, m.functions, cause, fix)
  return out
end

--- The change of one value, as a percentage of the old one (nil when the
-- old one is 0 and the new one is not).
-- @usage diff.percent(200, 230) --> 15.0
function M.percent(old, new)
  if old == new then return 0.0 end
  if old == 0 then return nil end
  return (new - old) * 100.0 / math_abs(old)
end

--- A row of d:movers prints as one line: old, new, the change, the function.
M.row_mt = { __name = "callgrind.DiffRow" }
function M.row_mt.__tostring(r)
  return string_format("%s -> %s, %s  %s", show.commas(r.old), show.commas(r.new), M.change(r.old, r.new),
    M.describe_fn(r.new_fn or r.old_fn))
end

--- Every function of either profile (missing on one side = 0), largest
-- absolute change first (ties by name).
-- @param ev event (base or derived, known to both profiles)
-- @tparam[opt] string kind "self" (default) or "inclusive"
-- @return array of rows `{ name, key, old, new, delta, percent, old_fn, new_fn }`
-- @usage for _, r in ipairs(d:movers("Ir")) do print(r.name, r.delta) end
function Diff:movers(ev, kind)
  check_event(self, ev, "movers")
  kind = args.kind(kind, "movers", 2)
  local rows, seen = {}, {}
  local function add(k)
    if seen[k] then return end
    seen[k] = true
    local o, n = self.old_by[k], self.new_by[k]
    local ov, nv = util.value(o, ev, kind), util.value(n, ev, kind)
    rows[#rows + 1] = setmetatable({ name = (o or n).name, key = k, old = ov, new = nv, delta = nv - ov,
      percent = M.percent(ov, nv), old_fn = o, new_fn = n }, M.row_mt)
  end
  for fn in self.old:functions() do add(self.old_key[fn]) end
  for fn in self.new:functions() do add(self.new_key[fn]) end
  table_sort(rows, function(a, b)
    local x, y = math_abs(a.delta), math_abs(b.delta)
    if x ~= y then return x > y end
    if a.name ~= b.name then return a.name < b.name end
    return a.key < b.key
  end)
  return setmetatable(rows, M.functions_mt)
end

--- d:movers under its name before 0.2.0, kept one release (CHANGES.md).
-- @usage d:functions("Ir")
function Diff:functions(ev, kind)
  return self:movers(ev, kind)
end

--- "+1,234 (+5.2%)", "-3 (-0.1%)", "+7 (new)", "0".
-- @usage diff.change(100, 110) --> "+10 (+10.0%)"
function M.change(old, new)
  local delta = new - old
  if delta == 0 then return "0" end
  local sign = delta > 0 and "+" or ""
  local p = M.percent(old, new)
  return sign .. commas(delta) .. " (" .. (p and string_format("%+.1f%%", p) or "new") .. ")"
end

-- Right-aligned columns.
local function table_text(rows, left_last)
  local widths = {}
  for _, r in ipairs(rows) do
    for i, c in ipairs(r) do
      if not widths[i] or #c > widths[i] then widths[i] = #c end
    end
  end
  local out = {}
  for _, r in ipairs(rows) do
    local cells = {}
    for i, c in ipairs(r) do
      if left_last and i == #r then
        cells[i] = c
      else
        cells[i] = string_rep(" ", widths[i] - #c) .. c
      end
    end
    out[#out + 1] = (table_concat(cells, "  "):gsub("%s+$", ""))
  end
  return out
end

--- An aligned table: old, new and change of the totals per event, then the
-- functions that changed most.
-- @tparam[opt] table opts `events` (default: the base events of the old
--   profile that the new one has), `event` the movers are ranked by
--   (default the first of `events`), `kind` ("self"), `top` (default 5; 0
--   for none)
-- @treturn string
-- @usage print(d:report({ events = { "Ir" }, top = 3 }))
function Diff:report(opts)
  opts = args.options(opts, "report", 1, "d_report")
  local evs = opts.events
  if not evs then
    evs = {}
    for _, ev in ipairs(self.old.events) do
      if has_event(self.new, ev) then evs[#evs + 1] = ev end
    end
  end
  local rows = { { "event", "old", "new", "change" } }
  for _, ev in ipairs(evs) do
    local o, n = self:total(ev)
    rows[#rows + 1] = { ev, commas(o), commas(n), M.change(o, n) }
  end
  local lines = table_text(rows)
  local top = opts.top or 5
  local ev = opts.event or evs[1]
  if top > 0 and ev then
    local kind = args.kind(opts.kind, "report", 1)
    local movers = { { "old", "new", "change", "function" } }
    for _, r in ipairs(self:movers(ev, kind)) do
      if #movers > top or r.delta == 0 then break end
      movers[#movers + 1] = { commas(r.old), commas(r.new), M.change(r.old, r.new),
        describe_fn(r.new_fn or r.old_fn) }
    end
    if #movers > 1 then
      lines[#lines + 1] = string_format("biggest changes in %s (%s):", ev, kind)
      for _, l in ipairs(table_text(movers, true)) do lines[#lines + 1] = "  " .. l end
    end
  end
  -- the first few collisions; d.collisions has them all
  for i, c in ipairs(self.collisions) do
    if i > 3 then
      lines[#lines + 1] = string_format("(and %d more keys shared by several functions, in d.collisions)",
        #self.collisions - 3)
      break
    end
    lines[#lines + 1] = c
  end
  local m = self:matched(ev)
  lines[#lines + 1] = string_format("matched %s function%s: %.1f%% of the old %s, %.1f%% of the new",
    commas(m.functions), m.functions == 1 and "" or "s", 100 * m.old_share, tostring(m.event or "cost"),
    100 * m.new_share)
  for _, w in ipairs(self:warnings(ev)) do lines[#lines + 1] = "warning: " .. w end
  return table_concat(lines, "\n")
end

diff_mt.__tostring = function(d) return d:report() end
-- an unknown field or method is an error naming the closest (a misspelt
-- d:movrs() or d.nwe at the REPL)
args.strict(diff_mt, Diff, "Diff", { old = true, new = true, collisions = true, match = true, old_by = true,
  old_key = true, new_by = true, new_key = true })

-- d:functions() rows: printed as a table; CSV and JSON `name, file,
-- object, old, new, delta, percent`.
local DiffRows = {}
encode.methods(DiffRows, function(list)
  local rows = {}
  for i, r in ipairs(list) do
    local fn = r.new_fn or r.old_fn
    rows[i] = { r.name, fn and fn.file, fn and fn.object, r.old, r.new, r.delta, r.percent }
  end
  return { "name", "file", "object", "old", "new", "delta", "percent" }, rows
end)

--- The printout of `d:functions()`: old, new, change and function, the
-- first 25 rows.
function DiffRows.text(list)
  return show.table({
    { "old", cell = function(r) return show.commas(r.old) end },
    { "new", cell = function(r) return show.commas(r.new) end },
    { "change", cell = function(r) return M.change(r.old, r.new) end },
    { "function", left = true, cell = function(r) return M.describe_fn(r.new_fn or r.old_fn) end },
  }, list, { limit = show.LIMIT, noun = "functions", more = "the array has them all" })
end

--- The metatable of `d:movers()`: an array of rows that prints as a
-- table (old, new, the change, the function; the first rows only).
M.functions_mt = { __name = "callgrind.DiffRows", __index = DiffRows, __tostring = DiffRows.text }
args.strict(M.functions_mt, DiffRows, "DiffRows")

-- The diff's flame graph (callgrind.export.flame), loaded on first use.
function Diff.flamegraph(...) return require("callgrind.export.flame").diff_flamegraph(...) end
function Diff.write_flamegraph(...) return require("callgrind.export.flame").write_diff_flamegraph(...) end
-- The diff's HTML report (callgrind.export.html), loaded on first use.
function Diff.html(...) return require("callgrind.export.html").diff_html(...) end
function Diff.write_html(...) return require("callgrind.export.html").write_diff_html(...) end

return M
