--- Reports for people: aligned tables like callgrind_annotate's, and a
-- profile summary. Numbers get thousands separators; long C++ names are
-- shortened in tables (the data keeps them whole).
-- @module callgrind.model.report
local core = require "callgrind.core"
local query = require "callgrind.model.query"
local show = require "callgrind.model.show"
local args = require "callgrind.args"
local util = require "callgrind.util"

local Profile, Selection = core.methods.Profile, query.Selection

local ipairs, tostring = ipairs, tostring
local string_format, string_rep, table_concat = string.format, string.rep, table.concat

local M = {}

--- 1234567 -> "1,234,567" (show.commas)
M.commas = show.commas

--- Shortens a long (C++) name (show.shorten)
M.shorten = show.shorten

-- Pads s to width w (right-aligned numbers, left-aligned text).
local function rpad(s, w) return string_rep(" ", w - #s) .. s end
local function lpad(s, w) return s .. string_rep(" ", w - #s) end


--- Renders an aligned table of the selection's functions.
-- @tparam[opt] table opts `events` (array, default the first event) or
--   `event`; `kind` "self" (default) or "inclusive"; `width` of the name
--   column (default 60); `percent` (default true); `file`, `object`
--   columns (default true; no object column for a Lua profile); `limit`, the number of rows (default all:
--   `tostring(sel)` prints 25 and counts the rest)
-- @treturn string
-- @usage print(prof:top(10, "Ir"):report({ events = { "Ir", "Dr" } }))
function Selection:report(opts)
  opts = args.options(opts, "report", 1, "sel_report")
  local prof = self.profile
  -- a selection made by top/sort reports what it was sorted by
  local events = {}
  for i, ev in ipairs(opts.events or { opts.event or self.event or prof.events[1] }) do
    events[i] = args.event(prof, ev, "report", 1)
  end
  local kind = args.kind(opts.kind or self.kind, "report", 1)
  local width = opts.width or 60
  local show_pct = opts.percent ~= false
  -- a Lua profile has no objects: no column of "?"
  local show_object = opts.object == true or (opts.object == nil and not show.is_lua(prof))
  local totals = {}
  for i, ev in ipairs(events) do totals[i] = prof:total(ev) end
  -- cells
  local header, rows = {}, {}
  for i, ev in ipairs(events) do
    header[i] = (kind == "inclusive" and "incl " or "self ") .. tostring(ev)
  end
  local shown = opts.limit and math.min(opts.limit, #self) or #self
  for r = 1, shown do
    local fn = self[r]
    local row = {}
    for i, ev in ipairs(events) do
      local v = kind == "inclusive" and fn:inclusive(ev) or fn:self(ev)
      row[i] = show_pct and show.cost(v, totals[i]) or M.commas(v)
    end
    row.name = M.shorten(util.printable(fn.name), width)
    row.file = util.printable(fn.file or "?")
    row.object = util.printable(fn.object or "?")
    rows[r] = row
  end
  local widths = {}
  for i = 1, #events do
    local w = #header[i]
    for _, row in ipairs(rows) do if #row[i] > w then w = #row[i] end end
    widths[i] = w
  end
  local lines = {}
  local name_w = #"function"
  for _, row in ipairs(rows) do if #row.name > name_w then name_w = #row.name end end
  local file_w = #"file"
  for _, row in ipairs(rows) do if #row.file > file_w then file_w = #row.file end end
  local function line(cells, name, file, object)
    local parts = {}
    for i = 1, #events do parts[i] = rpad(cells[i], widths[i]) end
    local last = show_object and object or (opts.file ~= false and file or nil)
    parts[#parts + 1] = last == nil and name or lpad(name, name_w)
    if opts.file ~= false then
      parts[#parts + 1] = show_object and lpad(file, file_w) or file
    end
    if show_object then parts[#parts + 1] = object end
    return (table_concat(parts, "  "):gsub("%s+$", ""))
  end
  lines[1] = line(header, "function", "file", "object")
  for _, row in ipairs(rows) do lines[#lines + 1] = line(row, row.name, row.file, row.object) end
  if shown < #self then
    lines[#lines + 1] = string_format("... %s more functions (sel:report() prints them all)", M.commas(#self - shown))
  end
  return table_concat(lines, "\n")
end

query.selection_mt.__tostring = function(sel)
  return sel:report({ limit = show.LIMIT })
end

-- Rows of fn:callee_functions() / fn:caller_functions().
query.edges_mt.__tostring = function(e)
  local ev = e.profile.events[1]
  local total = ev and e.profile:total(ev) or 0
  local costs = {}
  for i, row in ipairs(e.rows) do costs[row] = ev and e:cost(i, ev) or 0 end
  return string_format("%s of %s\n", e.direction == "callee" and "callees" or "callers", util.printable(e.of.name))
    .. show.table({
      { "calls", cell = function(row) return M.commas(row.count) end },
      { tostring(ev or "cost"), cell = function(row) return show.cost(costs[row], total) end },
      { "function", left = true, cell = function(row) return row.fn.name end },
    }, e.rows, { limit = show.LIMIT, noun = "functions", more = "e.rows has them all" })
end

query.edge_row_mt.__tostring = function(row)
  return string_format("%s (%s call%s)", row.fn.name, M.commas(row.count), row.count == 1 and "" or "s")
end

-- Rows of prof:group().
query.group_mt.__tostring = function(rows)
  local total = rows.profile:total(rows.event)
  return show.table({
    { tostring(rows.event), cell = function(row) return show.cost(row.cost, total) end },
    { rows.by, left = true, cell = function(row) return row.key == nil and "(none)" or row.key end },
  }, rows, { limit = show.LIMIT, noun = rows.by == "file" and "files" or "objects",
    more = "index the rows for all" })
end

query.group_row_mt.__tostring = function(row)
  return string_format("%s  %s", row.key == nil and "(none)" or row.key, M.commas(row.cost))
end

--- A few lines about the profile: header, events, totals, parts,
-- warnings.
-- @treturn string
-- @usage print(prof:summary())
function Profile:summary()
  local out = {}
  local function add(fmt, ...) out[#out + 1] = string_format(fmt, ...) end
  add("profile   %s", util.printable(self.name))
  if self.creator then add("creator   %s", util.printable(self.creator)) end
  if self.cmd then add("command   %s", util.printable(self.cmd)) end
  if self.pid then add("pid       %d", self.pid) end
  add("version   %d", self.version)
  add("events    %s", #self.events > 0 and table_concat(self.events, " ") or "(none)")
  local derived = self:derived_events()
  if #derived > 0 then add("derived   %s", table_concat(derived, " ")) end
  local totals = self:totals()
  local t = {}
  for _, e in ipairs(self.events) do t[#t + 1] = e .. " " .. M.commas(totals[e]) end
  if #t > 0 then add("totals    %s", table_concat(t, ", ")) end
  local nf, nc = 0, 0
  for _ in self:functions() do nf = nf + 1 end
  for _ in self:calls() do nc = nc + 1 end
  add("size      %s functions, %s calls", M.commas(nf), M.commas(nc))
  local merged = require("callgrind.model.load").merged(self)
  if merged then add("merged    %s", util.printable(merged)) end
  for part in self:parts() do
    local bits = { string_format("part %d", part.number) }
    if part.thread then bits[#bits + 1] = "thread " .. util.printable(tostring(part.thread)) end
    if part.desc and part.desc.Trigger then bits[#bits + 1] = "trigger " .. util.printable(part.desc.Trigger) end
    if part.summary then
      local s = {}
      for _, e in ipairs(part.events) do s[#s + 1] = e .. " " .. M.commas(part.summary[e]) end
      bits[#bits + 1] = "summary " .. table_concat(s, ", ")
    end
    add("          %s", table_concat(bits, "; "))
  end
  -- callgrind's summary: a few counts above its cost lines is a note
  local w, notes = show.notable_warnings(self)
  if #w > 0 then
    add("warnings  %d", #w)
    for i = 1, math.min(#w, 5) do add("          %s", util.printable(tostring(w[i]))) end
    if #w > 5 then add("          ...") end
  end
  for _, n in ipairs(notes) do add("note      %s", util.printable(n)) end
  return table_concat(out, "\n")
end

return M
