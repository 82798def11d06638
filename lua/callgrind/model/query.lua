--- Queries: selections of functions that answer the same questions as the
-- profile (top, sort, filter, sum, report), aggregated callers and callees,
-- grouping by file or object, and per-line annotation of a source file.
-- @module callgrind.model.query
local core = require "callgrind.core"
local args = require "callgrind.args"
local util = require "callgrind.util"
local encode = require "callgrind.encode"
local internal = core.internal

local Profile, Function = core.methods.Profile, core.methods.Function

local ipairs, pairs, setmetatable, tostring, type = ipairs, pairs, setmetatable, tostring, type
local math_abs = math.abs
local string_format, table_sort = string.format, table.sort

local M = {}

local Selection = {}
--- The metatable of a Selection (an array of Functions with the query
-- methods); report.lua gives it `tostring`, a table of the functions.
local selection_mt = { __index = Selection, __name = "callgrind.Selection" }
M.Selection = Selection
M.selection_mt = selection_mt
-- sel.nmae: an error that names the closest methods (args.strict)
args.strict(selection_mt, Selection, "Selection", { profile = true, event = true, kind = true })

local function new_selection(prof, list)
  list.profile = prof
  return setmetatable(list, selection_mt)
end

local value = util.value

-- Sorts fns (in place) by value, largest first; ties by name, then index,
-- so the order is the same on every run.
local function sort_by(fns, values)
  table_sort(fns, function(a, b)
    local x, y = values[a], values[b]
    if x ~= y then return x > y end
    if a.name ~= b.name then return a.name < b.name end
    return a.index < b.index
  end)
end

--- A selection of the given functions (an array of this profile's
-- Function handles), in that order.
-- @usage prof:select({ prof:func("main"), prof:func("fib") })
function Profile:select(fns)
  args.functions(fns, self, "select", 1, "fns")
  local list = {}
  for i, fn in ipairs(fns) do list[i] = fn end
  return new_selection(self, list)
end

--- All functions, as a selection (first-seen order).
-- @usage local sel = prof:all()
function Profile:all()
  local list = {}
  for fn in self:functions() do list[#list + 1] = fn end
  return new_selection(self, list)
end

-- Does fn match a name pattern and the file/object patterns of opts?
local function matches(fn, pattern, opts)
  local plain = opts and opts.plain
  if pattern and not fn.name:find(pattern, 1, plain) then return false end
  if opts then
    if opts.file and not (fn.file and fn.file:find(opts.file, 1, plain)) then return false end
    if opts.object and not (fn.object and fn.object:find(opts.object, 1, plain)) then return false end
  end
  return true
end


-- Levenshtein distance, with a cap (args.distance)
local distance = args.distance

--- The names of a profile's functions closest to a name: those that
-- contain it or that it contains (a clone such as `parse.isra.0`, a
-- cycle's `parse'2`), then those within an edit distance of a third of
-- its length (at least 2), nearest first; at most n (default 3).
-- @usage query.closest_names(prof, "hlper") --> { "helper" }
function M.closest_names(prof, name, n)
  n = n or 3
  local max = math.max(2, #name // 3)
  local scored, seen = {}, {}
  for fn in prof:functions() do
    local other = fn.name
    if not seen[other] and other ~= name then
      seen[other] = true
      local d
      if other:find(name, 1, true) or name:find(other, 1, true) then
        d = -1 / (1 + math_abs(#other - #name))  -- containing: before any edit
      else
        d = distance(name, other, max)
      end
      if d then scored[#scored + 1] = { name = other, d = d } end
    end
  end
  table_sort(scored, function(a, b)
    if a.d ~= b.d then return a.d < b.d end
    return a.name < b.name
  end)
  local out = {}
  for i = 1, math.min(n, #scored) do out[i] = scored[i].name end
  return out
end

local function check_find_args(pattern, opts)
  args.check_type(pattern, "string", "find", 1, true, 3)
  opts = args.options(opts, "find", 2, "find", 3)
  -- a pattern that is not one: the user's argument error, not Lua's raw one
  if not opts.plain then
    for _, p in ipairs({ { pattern, 1, "" }, { opts.file, 2, "opts.file: " }, { opts.object, 2, "opts.object: " } }) do
      local ok, err = pcall(string.find, "", p[1] or "")
      if not ok then
        local why = tostring(err):match("malformed pattern %((.*)%)") or tostring(err)
        args.fail("find", p[2], string.format("%smalformed pattern %s: %s", p[3], args.show(p[1]), why), 3)
      end
    end
  end
end

--- Functions whose name matches a Lua pattern (or plain text with
-- `{plain = true}`), optionally only in files / objects matching patterns.
-- @tparam[opt] string pattern nil matches every name
-- @tparam[opt] table opts `plain`, `file`, `object`
-- @usage prof:find("^parse", { file = "parser%.c$" })
function Profile:find(pattern, opts)
  check_find_args(pattern, opts)
  local list = {}
  for fn in self:functions() do
    if matches(fn, pattern, opts) then list[#list + 1] = fn end
  end
  return new_selection(self, list)
end

--- The same, within this selection.
-- @usage sel:find("alloc")
function Selection:find(pattern, opts)
  check_find_args(pattern, opts)
  local list = {}
  for _, fn in ipairs(self) do
    if matches(fn, pattern, opts) then list[#list + 1] = fn end
  end
  return new_selection(self.profile, list)
end

--- A new selection sorted by cost, largest first.
-- @param[opt] ev event (default: the first event), or a comparison
--   function(a, b) for table.sort
-- @tparam[opt] string kind "self" (default) or "inclusive"
-- @usage sel:sort("Ir", "inclusive")
function Selection:sort(ev, kind)
  local list = {}
  for i, fn in ipairs(self) do list[i] = fn end
  if type(ev) == "function" then
    table_sort(list, ev)
    return new_selection(self.profile, list)
  end
  ev = args.event_or_first(self.profile, ev, "sort", 1)
  kind = args.kind(kind, "sort", 2)
  local values = {}
  for _, fn in ipairs(list) do values[fn] = value(fn, ev, kind) end
  sort_by(list, values)
  local sel = new_selection(self.profile, list)
  sel.event, sel.kind = ev, kind
  return sel
end

--- The n costliest functions of the selection.
-- @usage sel:top(10, "Ir", "inclusive")
function Selection:top(n, ev, kind)
  n = args.count(n, "top", 1)
  ev = args.event_or_first(self.profile, ev, "top", 2)
  kind = args.kind(kind, "top", 3)
  local sorted = self:sort(ev, kind)
  local list = {}
  for i = 1, math.min(n, #sorted) do list[i] = sorted[i] end
  local sel = new_selection(self.profile, list)
  sel.event, sel.kind = sorted.event, sorted.kind
  return sel
end

--- The n costliest functions of the profile. Uses the core's arrays of
-- costs, so it creates handles only for the n it returns.
-- @usage prof:top(15, "Ir", "inclusive")
function Profile:top(n, ev, kind)
  n = args.count(n, "top", 1)
  ev = args.event_or_first(self, ev, "top", 2)
  kind = args.kind(kind, "top", 3)
  local values = kind == "inclusive" and self:inclusive_all(ev) or internal.self_all(self, ev)
  -- a min-heap of the n best indices so far
  local heap, size = {}, 0
  local names = {}
  local function name(i)
    local s = names[i]
    if not s then s = internal.function_at(self, i).name; names[i] = s end
    return s
  end
  local function better(i, j) -- is function i ranked before function j?
    local x, y = values[i], values[j]
    if x ~= y then return x > y end
    local a, b = name(i), name(j)
    if a ~= b then return a < b end
    return i < j
  end
  local function down(k)
    while true do
      local l, r, m = 2 * k, 2 * k + 1, k
      if l <= size and better(heap[m], heap[l]) then m = l end
      if r <= size and better(heap[m], heap[r]) then m = r end
      if m == k then return end
      heap[k], heap[m] = heap[m], heap[k]
      k = m
    end
  end
  for i = 1, n > 0 and #values or 0 do
    if size < n then
      size = size + 1
      heap[size] = i
      local k = size
      while k > 1 do
        local p = k // 2
        if better(heap[p], heap[k]) then heap[p], heap[k] = heap[k], heap[p]; k = p else break end
      end
    elseif better(i, heap[1]) then
      heap[1] = i
      down(1)
    end
  end
  table_sort(heap, better)
  local list = {}
  for k, i in ipairs(heap) do list[k] = internal.function_at(self, i) end
  local sel = new_selection(self, list)
  sel.event, sel.kind = ev, kind
  return sel
end

--- A new selection of the functions for which pred(fn) is true.
-- @usage sel:filter(function(fn) return fn:self("Ir") > 1000 end)
function Selection:filter(pred)
  args.check_type(pred, "function", "filter", 1)
  local list = {}
  for _, fn in ipairs(self) do
    if pred(fn) then list[#list + 1] = fn end
  end
  return new_selection(self.profile, list)
end

--- Drops noise: functions whose object or file matches a pattern.
-- @tparam table opts `object`, `file` (Lua patterns), `plain`
-- @usage prof:all():without({ object = "libc%.so" })
function Selection:without(opts)
  args.check_type(opts, "table", "without", 1)
  args.options(opts, "without", 1, "find")
  local plain = opts.plain
  return self:filter(function(fn)
    if opts.object and fn.object and fn.object:find(opts.object, 1, plain) then return false end
    if opts.file and fn.file and fn.file:find(opts.file, 1, plain) then return false end
    return true
  end)
end

--- Keeps the functions whose cost is at least a fraction of the profile's
-- total.
-- @tparam number fraction e.g. 0.01 for 1%
-- @usage prof:all():above(0.01, "Ir", "inclusive")
function Selection:above(fraction, ev, kind)
  args.check_type(fraction, "number", "above", 1)
  ev = args.event_or_first(self.profile, ev, "above", 2)
  kind = args.kind(kind, "above", 3)
  local limit = fraction * self.profile:total(ev)
  return self:filter(function(fn) return value(fn, ev, kind) >= limit end)
end

--- The sum of the selection's costs. Inclusive costs overlap (a caller's
-- includes its callees'), so summing them is rarely what you want.
-- @usage prof:find("^str"):sum("Ir")
function Selection:sum(ev, kind)
  ev = args.event_or_first(self.profile, ev, "sum", 1)
  kind = args.kind(kind, "sum", 2)
  local s = 0
  for _, fn in ipairs(self) do s = s + value(fn, ev, kind) end
  return s
end

--- Functions of the selection as a plain array (a copy).
function Selection:list()
  local out = {}
  for i, fn in ipairs(self) do out[i] = fn end
  return out
end

local Edges = {}
--- The metatable of `fn:callee_functions()` and `fn:caller_functions()`:
-- calls aggregated per function, an array of rows.
local edges_mt = { __name = "callgrind.Edges" }
M.Edges = Edges
M.edges_mt = edges_mt
--- The metatable of one row of those: `{ fn, count, calls }`.
M.edge_row_mt = { __name = "callgrind.EdgeRow" }

--- The metatable of `prof:group(by)`: rows of self cost by file or
-- object; report.lua gives it and its rows their printouts.
M.group_mt = { __name = "callgrind.Groups" }
--- The metatable of one row of a group: `{ key, cost }`.
M.group_row_mt = { __name = "callgrind.GroupRow" }

local function aggregate(fn, iter, other)
  local rows, by = {}, {}
  for call in iter do
    local f = call[other]
    local row = by[f]
    if not row then
      row = setmetatable({ fn = f, count = 0, calls = {} }, M.edge_row_mt)
      by[f] = row
      rows[#rows + 1] = row
    end
    row.count = row.count + call.count
    row.calls[#row.calls + 1] = call
  end
  return setmetatable({ profile = fn.profile, rows = rows, of = fn, direction = other }, edges_mt)
end

--- Outgoing calls aggregated per callee: rows `{ fn =, count =, calls = }`
-- with `row.cost(ev)` summed over call sites, first-seen order.
-- @usage for _, r in ipairs(fn:callee_functions():sort("Ir")) do print(r.fn.name, r.count) end
function Function:callee_functions()
  return aggregate(self, self:calls(), "callee")
end

--- Incoming calls aggregated per caller (same rows).
-- @usage fn:caller_functions():sort("Ir")
function Function:caller_functions()
  return aggregate(self, self:callers(), "caller")
end

-- The inclusive cost of a row's calls, summed over its call sites.
local function edge_cost(row, ev)
  local s = 0
  for _, call in ipairs(row.calls) do s = s + call:cost(ev) end
  return s
end

--- Rows sorted by the cost of their calls, largest first (a new Edges).
function Edges:sort(ev)
  ev = args.event_or_first(self.profile, ev, "sort", 1)
  local rows, values = {}, {}
  for i, r in ipairs(self.rows) do
    rows[i] = r
    values[r] = edge_cost(r, ev)
  end
  table_sort(rows, function(a, b)
    if values[a] ~= values[b] then return values[a] > values[b] end
    if a.fn.name ~= b.fn.name then return a.fn.name < b.fn.name end
    return a.fn.index < b.fn.index
  end)
  return setmetatable({ profile = self.profile, rows = rows, of = self.of, direction = self.direction }, edges_mt)
end

--- The cost of row i's calls.
function Edges:cost(i, ev)
  local row = self.rows[i]
  if not row then args.fail("cost", 1, string_format("row index %s out of range 1..%d", tostring(i), #self.rows)) end
  return edge_cost(row, args.event_or_first(self.profile, ev, "cost", 2))
end

--- Number of rows.
function edges_mt.__len(e) return #e.rows end
local edges_fields = { profile = true, rows = true, of = true, direction = true, event = true }
args.strict(edges_mt, Edges, "Edges", edges_fields)
local edges_strict = edges_mt.__index
function edges_mt.__index(e, k)
  if type(k) == "number" then return e.rows[k] end
  return edges_strict(e, k)
end

-- Rows of a grouping: { key =, cost = } sorted by cost.
local function sorted_rows(prof, by, ev, costs)
  local rows = setmetatable({ profile = prof, by = by, event = ev }, M.group_mt)
  for k, v in pairs(costs) do
    rows[#rows + 1] = setmetatable({ key = k ~= false and k or nil, cost = v }, M.group_row_mt)
  end
  table_sort(rows, function(a, b)
    if a.cost ~= b.cost then return a.cost > b.cost end
    return tostring(a.key) < tostring(b.key)
  end)
  return rows
end

--- Self cost grouped by source file (of the cost lines: inlined code
-- counts in its own file) or by object, largest first.
-- @tparam string by "file" or "object"
-- @return array of `{ key =, cost = }` (key nil for lines without a file /
--   functions without an object)
-- @usage for _, r in ipairs(prof:group("file", "Ir")) do print(r.key, r.cost) end
function Profile:group(by, ev)
  ev = args.event_or_first(self, ev, "group", 2)
  if by == "file" then
    return sorted_rows(self, by, ev, internal.file_costs(self, ev))
  elseif by == "object" then
    local costs, self_all = {}, internal.self_all(self, ev)
    for i, v in ipairs(self_all) do
      local obj = internal.function_at(self, i).object
      if obj == nil then obj = false end
      costs[obj] = (costs[obj] or 0) + v
    end
    return sorted_rows(self, by, ev, costs)
  end
  args.fail("group", 1, string_format("expected \"file\" or \"object\", got %s", args.show(by)))
end

M.Groups = {}
args.strict(M.group_mt, M.Groups, "Groups", { profile = true, by = true, event = true })

-- CSV and JSON: a Selection's columns are `name, file, object`, then per
-- event `EV` (self) and `EV.inclusive`; a group's `BY` ("file" or
-- "object") and `EV`; callers' and callees' `name, file, object, calls`,
-- then per event `EV` (the calls' inclusive cost).
encode.methods(Selection, function(sel, opts, fname)
  local prof = sel.profile
  local evs = encode.events_of(prof, opts, fname)
  local columns = { "name", "file", "object" }
  for _, ev in ipairs(evs) do
    columns[#columns + 1] = tostring(ev)
    columns[#columns + 1] = tostring(ev) .. ".inclusive"
  end
  local rows = {}
  for i, fn in ipairs(sel) do
    local row = { fn.name, fn.file, fn.object }
    for k, ev in ipairs(evs) do
      row[2 + 2 * k] = fn:self(ev)
      row[3 + 2 * k] = fn:inclusive(ev)
    end
    rows[i] = row
  end
  return columns, rows
end, "export_events")

-- Groups --------------------------------------------------------------------

encode.methods(M.Groups, function(g)
  local rows = {}
  for i, r in ipairs(g) do rows[i] = { r.key, r.cost } end
  return { g.by, tostring(g.event) }, rows
end)

-- Callers and callees ------------------------------------------------------

encode.methods(Edges, function(e, opts, fname)
  local evs = encode.events_of(e.profile, opts, fname)
  local columns = { "name", "file", "object", "calls" }
  for _, ev in ipairs(evs) do columns[#columns + 1] = tostring(ev) end
  local rows = {}
  for i, r in ipairs(e.rows) do
    local row = { r.fn.name, r.fn.file, r.fn.object, r.count }
    for k, ev in ipairs(evs) do
      local s = 0
      for _, call in ipairs(r.calls) do s = s + call:cost(ev) end
      row[4 + k] = s
    end
    rows[i] = row
  end
  return columns, rows
end, "export_events")


return M
