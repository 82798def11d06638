--- Tables out: every table the library prints can also be had as CSV
-- (RFC 4180: a header row, fields with commas, quotes or line breaks
-- quoted, quotes doubled; numbers as numbers; an absent value empty) and
-- as JSON (an array of objects, keys in column order; numbers as numbers,
-- absent values null; strings escaped, a byte that is not UTF-8 written as
-- the code point of the same value, `\u00XX`). The columns:
--
-- - Selection (`prof:top()`, `prof:find()` ...): `name, file, object`,
--   then per event `EV` (self) and `EV.inclusive`;
-- - `prof:group(by, ev)`: `BY` ("file" or "object"), `EV`;
-- - callers / callees (`fn:caller_functions()`): `name, file, object,
--   calls`, then per event `EV` (the calls' inclusive cost);
-- - an annotation: `line, EV, functions` (the names joined by "; ");
-- - `d:functions()`: `name, file, object, old, new, delta, percent`;
-- - `prof:warnings()`: `file, line, message`.
-- @module callgrind.export
local args = require "callgrind.args"
local query = require "callgrind.query"
local show = require "callgrind.show"
require "callgrind.report"
local annotate = require "callgrind.annotate"
local diff = require "callgrind.diff"

local ipairs, math_type, setmetatable, tonumber, tostring, type = ipairs, math.type, setmetatable, tonumber,
  tostring, type
local string_format, table_concat = string.format, table.concat

local M = {}

-- A number as text: integers as they are, floats with the fewest digits
-- that read back the same, and a ".0" when they have no point.
local function number(v)
  if math_type(v) == "integer" then return string_format("%d", v) end
  local s = string_format("%.15g", v)
  if tonumber(s) ~= v then s = string_format("%.17g", v) end
  if not s:find("[.eni]") then s = s .. ".0" end
  return s
end

-- CSV --------------------------------------------------------------------

local function csv_field(v)
  if v == nil then return "" end
  if type(v) == "number" then return number(v) end
  v = tostring(v)
  if v:find('[,"\r\n]') then return '"' .. v:gsub('"', '""') .. '"' end
  return v
end

--- CSV text of columns (names) and rows (arrays of values, nil allowed).
-- @usage export.csv({ "a", "b" }, { { 1, "x,y" } }) --> 'a,b\r\n1,"x,y"\r\n'
function M.csv(columns, rows)
  local out = {}
  local line = {}
  for i, c in ipairs(columns) do line[i] = csv_field(c) end
  out[1] = table_concat(line, ",")
  for r, row in ipairs(rows) do
    line = {}
    for i = 1, #columns do line[i] = csv_field(row[i]) end
    out[r + 1] = table_concat(line, ",")
  end
  return table_concat(out, "\r\n") .. "\r\n"
end

-- JSON -------------------------------------------------------------------

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r",
  ["\t"] = "\\t" }

-- A JSON string: valid UTF-8 kept, other bytes as \u00XX.
local function json_string(s)
  local out, i, n = {}, 1, #s
  while i <= n do
    local j = s:find('[%z\1-\31"\\\128-\255]', i)
    if not j then out[#out + 1] = s:sub(i); break end
    if j > i then out[#out + 1] = s:sub(i, j - 1) end
    local c = s:byte(j)
    if c < 128 then
      out[#out + 1] = ESC[string.char(c)] or string_format("\\u%04x", c)
      i = j + 1
    else
      local len = c >= 0xF0 and c < 0xF5 and 4 or c >= 0xE0 and c < 0xF0 and 3 or c >= 0xC2 and c < 0xE0 and 2 or 0
      local chunk = len > 0 and s:sub(j, j + len - 1)
      if chunk and #chunk == len and utf8.len(chunk) == 1 then
        out[#out + 1] = chunk
        i = j + len
      else
        out[#out + 1] = string_format("\\u%04x", c)
        i = j + 1
      end
    end
  end
  return '"' .. table_concat(out) .. '"'
end
M.json_string = json_string

local function json_value(v)
  if v == nil then return "null" end
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    return number(v)
  end
  if type(v) == "boolean" then return tostring(v) end
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = json_value(x) end
    return "[" .. table_concat(parts, ",") .. "]"
  end
  return json_string(tostring(v))
end

--- JSON text (an array of objects) of columns and rows.
-- @usage export.json({ "a" }, { { 1 } }) --> '[{"a":1}]'
function M.json(columns, rows)
  local keys = {}
  for i, c in ipairs(columns) do keys[i] = json_string(c) .. ":" end
  local out = {}
  for r, row in ipairs(rows) do
    local fields = {}
    for i = 1, #columns do fields[i] = keys[i] .. json_value(row[i]) end
    out[r] = "{" .. table_concat(fields, ",") .. "}"
  end
  return "[" .. table_concat(out, ",\n") .. "]\n"
end

-- The two methods of a kind of table, from a function giving its columns
-- and rows (and, in JSON, values a CSV field cannot hold).
local function methods(target, name, shape, spec)
  spec = spec or {}
  target.to_csv = function(self, opts)
    opts = args.options(opts, "to_csv", 1, spec)
    local columns, rows = shape(self, opts, "to_csv")
    return M.csv(columns, rows)
  end
  target.to_json = function(self, opts)
    opts = args.options(opts, "to_json", 1, spec)
    local columns, rows = shape(self, opts, "to_json")
    return M.json(columns, rows)
  end
  M[name] = target
end

-- The events asked for (default the base events), checked.
local function events_of(prof, opts, fname)
  local evs = opts.events or prof.events
  for _, ev in ipairs(evs) do args.event(prof, ev, fname, 1, 4) end
  return evs
end

-- Selection ---------------------------------------------------------------

methods(query.Selection, "Selection", function(sel, opts, fname)
  local prof = sel.profile
  local evs = events_of(prof, opts, fname)
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
end, { events = "table" })

-- Groups --------------------------------------------------------------------

methods(query.Groups, "Groups", function(g)
  local rows = {}
  for i, r in ipairs(g) do rows[i] = { r.key, r.cost } end
  return { g.by, tostring(g.event) }, rows
end)

-- Callers and callees ------------------------------------------------------

methods(query.Edges, "Edges", function(e, opts, fname)
  local evs = events_of(e.profile, opts, fname)
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
end, { events = "table" })

-- Annotations ---------------------------------------------------------------

methods(annotate.Annotation, "Annotation", function(a)
  local rows = {}
  for i, r in ipairs(a) do
    local names = {}
    for k, fn in ipairs(r.functions) do names[k] = fn.name end
    rows[i] = { r.line, r.cost, table_concat(names, "; ") }
  end
  return { "line", tostring(a.event), "functions" }, rows
end)

-- A diff's functions ----------------------------------------------------------

local DiffRows = {}
methods(DiffRows, "DiffRows", function(list)
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
    { "change", cell = function(r) return diff.change(r.old, r.new) end },
    { "function", left = true, cell = function(r) return diff.describe_fn(r.new_fn or r.old_fn) end },
  }, list, { limit = show.LIMIT, noun = "functions", more = "the array has them all" })
end

-- Warnings ------------------------------------------------------------------

local Warnings = {}
--- The metatable of `prof:warnings()`: `tostring` one warning a line,
-- `to_csv`, `to_json`.
M.warnings_mt = { __index = Warnings, __name = "callgrind.Warnings" }
methods(Warnings, "Warnings", function(list)
  local rows = {}
  for i, w in ipairs(list) do
    local file, line, msg = w:match("^(.-):(%d+): (.*)$")
    rows[i] = file and { file, math.tointeger(tonumber(line)), msg } or { nil, nil, w }
  end
  return { "file", "line", "message" }, rows
end)
M.warnings_mt.__tostring = function(list)
  if #list == 0 then return "no warnings" end
  return table_concat(list, "\n")
end

--- Gives a warnings array its metatable.
-- @usage export.warnings(prof:warnings())
function M.warnings(list)
  return setmetatable(list, M.warnings_mt)
end

return M
