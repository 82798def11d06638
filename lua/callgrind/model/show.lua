--- How the library's values print at the REPL: an aligned-table renderer
-- that every printable result shares, the first rows of a long result with
-- a count of the rest, and cost tables in the profile's event order.
-- @module callgrind.model.show
local encode = require "callgrind.encode"
local util = require "callgrind.util"

local getmetatable, ipairs, setmetatable, tonumber, tostring = getmetatable, ipairs, setmetatable, tonumber,
  tostring
local string_format, string_rep, table_concat = string.format, string.rep, table.concat

local M = {}

--- 1234567 -> "1,234,567"
-- @usage show.commas(-1234) --> "-1,234"
function M.commas(n)
  local s = tostring(n)
  local sign, digits = s:match("^(-?)(%d+)$")
  if not digits then return s end
  local out = digits:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  if out:sub(1, 1) == "," then out = out:sub(2) end
  return sign .. out
end

--- Shortens a long (C++) name to at most width characters: template
-- arguments collapse to <...>, then the middle is cut.
-- @usage show.shorten("std::vector<int, std::allocator<int> >::push_back(int const&)", 40)
function M.shorten(name, width)
  width = width or 60
  if #name <= width then return name end
  -- collapse template arguments, innermost first, until it fits
  local s, prev = name, nil
  while #s > width and s ~= prev do
    prev = s
    s = s:gsub("<[^<>]*>", "<...>", 1)
    s = s:gsub("<%.%.%.>", "\1", 1)
  end
  s = s:gsub("\1", "<...>")
  if #s > width then
    local keep = width - 3
    local head = keep - keep // 3
    s = s:sub(1, head) .. "..." .. s:sub(#s - (keep - head) + 1)
  end
  return s
end

--- How many rows `tostring` of a long result shows.
M.LIMIT = 25

--- The creator: line of the library's Lua profiler.
M.LUA_CREATOR = "callgrind.lua profiler"

--- True for a profile the library's Lua profiler made (its creator:
-- line): functions of Lua chunks, no objects, nothing inlined.
-- @usage show.is_lua(prof) --> false
function M.is_lua(prof)
  return prof.creator == M.LUA_CREATOR
end

--- Gives t the profile's cost-table metatable: `tostring(t)` then prints
-- "Ir 1,234  Dr 56" in the profile's event order.
-- @return t
-- @usage show.costs(prof, { Ir = 3 })
function M.costs(prof, t)
  return setmetatable(t, getmetatable(prof:totals()))
end

--- Renders rows as an aligned table.
-- @tparam table columns array of `{ title, cell = function(row) -> string,
--   left = true for text columns }`
-- @tparam table rows array of rows
-- @tparam[opt] table opts `limit` (number of rows, nil: all), `noun`
--   (what a row is, for the "... N more" line), `more` (how to get them
--   all, for that line)
-- @treturn string
-- @usage show.table({ { "n", cell = tostring } }, { 1, 2 })
function M.table(columns, rows, opts)
  opts = opts or {}
  local n = #rows
  local shown = opts.limit and opts.limit < n and opts.limit or n
  local cells, widths = {}, {}
  for c, col in ipairs(columns) do widths[c] = #col[1] end
  for r = 1, shown do
    local line = {}
    for c, col in ipairs(columns) do
      local s = util.printable(col.cell(rows[r]))
      line[c] = s
      if #s > widths[c] then widths[c] = #s end
    end
    cells[r] = line
  end
  local function render(line)
    local out = {}
    for c, col in ipairs(columns) do
      local s, pad = line[c], string_rep(" ", widths[c] - #line[c])
      if c == #columns and col.left then out[c] = s
      else out[c] = col.left and (s .. pad) or (pad .. s) end
    end
    return (table_concat(out, "  "):gsub("%s+$", ""))
  end
  local head = {}
  for c, col in ipairs(columns) do head[c] = col[1] end
  local lines = { render(head) }
  for r = 1, shown do lines[#lines + 1] = render(cells[r]) end
  if shown < n then
    lines[#lines + 1] = string_format("... %s more %s%s", M.commas(n - shown), opts.noun or "rows",
      opts.more and (" (" .. opts.more .. ")") or "")
  end
  return table_concat(lines, "\n")
end

--- A number with thousands separators and, when total is not 0, its share
-- of it, padded to five places so that a column of them lines up:
-- "1,234 ( 12.3%)".
-- @usage show.cost(50, 200) --> "50 ( 25.0%)"
function M.cost(v, total)
  if not total or total == 0 then return M.commas(v) end
  return string_format("%s (%5.1f%%)", M.commas(v), 100 * v / total)
end

-- prof:warnings(): one a line; CSV and JSON `file, line, message`.
local Warnings = {}
--- The metatable of `prof:warnings()`: `tostring` one warning a line,
-- `to_csv`, `to_json`.
M.warnings_mt = { __index = Warnings, __name = "callgrind.Warnings" }
require("callgrind.args").strict(M.warnings_mt, Warnings, "Warnings")
encode.methods(Warnings, function(list)
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

--- How many counts callgrind's `summary:` may be above its cost lines,
-- per event, and still be the known quirk (docs/format.md: callgrind
-- counts a few instructions after its last cost line).
M.SUMMARY_TOLERANCE = 10

-- A "mismatch" warning of a file callgrind wrote whose summary: is above
-- the cost lines by at most SUMMARY_TOLERANCE in every event.
local function tolerated(prof, w)
  if not (prof.creator or ""):find("^callgrind%-") then return false end
  local list = w:match(": summary: does not match the cost lines: (.*)$")
  if not list or list:find("...", 1, true) then return false end
  local n = 0
  for written, summed in list:gmatch("%S+ (%-?%d+) written, (%-?%d+) summed") do
    local d = tonumber(written) - tonumber(summed)
    if d <= 0 or d > M.SUMMARY_TOLERANCE then return false end
    n = n + 1
  end
  return n > 0
end

--- The warnings worth showing by default, and the notes: a `summary:`
-- of callgrind a few counts above its cost lines (callgrind's known
-- quirk) is a note, not a warning. `prof:warnings("mismatch")` still has
-- every mismatch.
-- @return Warnings, and an array of notes
-- @usage local warnings, notes = show.notable_warnings(prof)
function M.notable_warnings(prof)
  local shown, notes = {}, {}
  for _, w in ipairs(prof:warnings()) do
    w = tostring(w)
    if tolerated(prof, w) then
      notes[#notes + 1] = w:gsub(": summary: does not match the cost lines: ", ": summary: above the cost lines "
        .. "(callgrind counts a few more): ", 1)
    else
      shown[#shown + 1] = w
    end
  end
  return M.warnings(shown), notes
end

--- Gives a warnings array its metatable.
-- @usage show.warnings(prof:warnings())
function M.warnings(list)
  return setmetatable(list, M.warnings_mt)
end

return M
