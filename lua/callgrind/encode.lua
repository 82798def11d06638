--- CSV and JSON text of tables: the one encoder behind every `to_csv`
-- and `to_json` of the library. CSV is RFC 4180: a header row, fields with
-- commas, quotes or line breaks quoted, quotes doubled; numbers as
-- numbers; an absent value empty. JSON is an array of objects, keys in
-- column order; numbers as numbers, absent values null; strings escaped,
-- a byte that is not UTF-8 written as the code point of the same value,
-- `\u00XX`. Each kind of table declares its columns where it is defined
-- (`encode.methods`); the columns are listed in docs/reference.md.
-- @module callgrind.encode
local args = require "callgrind.args"

local ipairs, math_type, tonumber, tostring, type = ipairs, math.type, tonumber, tostring, type
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

-- A text cell a spreadsheet would take for a formula (=, +, -, @, a tab
-- or a carriage return first) gets a leading ' (numbers stay numbers).
local function csv_field(v)
  if v == nil then return "" end
  if type(v) == "number" then return number(v) end
  v = tostring(v)
  if v:find("^[=+%-@\t\r]") then v = "'" .. v end
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

-- The code points JSON text writes as \uXXXX though they are valid
-- UTF-8 (the same value to a reader, and no terminal or page obeys them):
-- C1 controls, the bidirectional formatting characters, U+2028, U+2029
-- (util.printable shows the same ones).
local function hidden(cp)
  return cp >= 0x80 and cp <= 0x9F or cp == 0x061C or cp == 0x200E or cp == 0x200F
    or cp >= 0x2028 and cp <= 0x202E or cp >= 0x2066 and cp <= 0x2069
end

--- A JSON string, quotes included: valid UTF-8 kept; control characters
-- (C0, DEL, C1), the bidirectional formatting characters (U+061C,
-- U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), U+2028 and U+2029 as
-- \uXXXX; each byte that is not part of valid UTF-8 as \u00XX.
-- @usage export.json_string('a"b\255') --> '"a\\"b\\u00ff"'
-- @usage export.json_string("rtl\u{202E}x") --> '"rtl\\u202ex"'
local function json_string(s)
  local out, i, n = {}, 1, #s
  while i <= n do
    local j = s:find('[%z\1-\31"\\\127-\255]', i)
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
        local cp = utf8.codepoint(chunk)
        out[#out + 1] = hidden(cp) and string_format("\\u%04x", cp) or chunk
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

--- JSON text (an array of objects) of columns and rows, and a newline.
-- @usage export.json({ "a" }, { { 1 } }) --> '[{"a":1}]\n'
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


--- Gives a kind of table its `to_csv` and `to_json` methods, from a
-- function `shape(self, opts, fname)` returning its columns and rows;
-- `spec` names its options set in callgrind.api (none by default).
-- @usage encode.methods(Groups, function(g) return { "key", "cost" }, rows end)
function M.methods(target, shape, spec)
  spec = spec or "none"
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
  return target
end

--- The events a shape's `opts.events` asks for (default the profile's
-- base events), checked.
-- @usage local evs = encode.events_of(prof, opts, fname)
function M.events_of(prof, opts, fname)
  local evs = {}
  for i, ev in ipairs(opts.events or prof.events) do evs[i] = args.event(prof, ev, fname, 1, 4) end
  return evs
end

return M
