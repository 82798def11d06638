--- How the library's values print at the REPL: an aligned-table renderer
-- that every printable result shares, the first rows of a long result with
-- a count of the rest, and cost tables in the profile's event order.
-- @module callgrind.show
local report = require "callgrind.report"

local getmetatable, ipairs, setmetatable, tostring = getmetatable, ipairs, setmetatable, tostring
local string_format, string_rep, table_concat = string.format, string.rep, table.concat

local M = {}

--- How many rows `tostring` of a long result shows.
M.LIMIT = 25

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
      local s = col.cell(rows[r])
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
    lines[#lines + 1] = string_format("... %s more %s%s", report.commas(n - shown), opts.noun or "rows",
      opts.more and (" (" .. opts.more .. ")") or "")
  end
  return table_concat(lines, "\n")
end

--- A number with thousands separators and, when total is not 0, its share
-- of it: "1,234 (12.3%)".
-- @usage show.cost(50, 200) --> "50 (25.0%)"
function M.cost(v, total)
  if not total or total == 0 then return report.commas(v) end
  return string_format("%s (%.1f%%)", report.commas(v), 100 * v / total)
end

return M
