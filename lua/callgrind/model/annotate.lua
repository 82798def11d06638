--- Source annotation: the cost of each line of one source file, the calls
-- made from each line with their inclusive cost, and, with the source text
-- at hand, a listing like `callgrind_annotate --auto=yes`.
-- @module callgrind.model.annotate
local core = require "callgrind.core"
local args = require "callgrind.args"
local util = require "callgrind.util"
local encode = require "callgrind.encode"
local show = require "callgrind.model.show"
local internal = core.internal

local Profile = core.methods.Profile

local io_open, ipairs, pairs, setmetatable, tostring, type = io.open, ipairs, pairs, setmetatable, tostring, type
local string_format, table_concat, table_sort = string.format, table.concat, table.sort

local M = {}

local Annotation = {}
local annotation_mt = { __index = Annotation, __name = "callgrind.Annotation" }
local row_mt = { __name = "callgrind.AnnotatedLine" }
M.Annotation = Annotation
-- ann.flie: an error that names the closest fields (args.strict); the
-- fields of a listing read with its source may be nil
args.strict(annotation_mt, Annotation, "Annotation", { profile = true, event = true, total = true, lines = true,
  source = true, source_error = true })

-- The source files of a profile's cost lines, sorted (kept in its state
-- table).
local STATE = "callgrind.model.annotate"

local function files_of(prof)
  local state = internal.state(prof)
  local list = state[STATE]
  if not list then
    list = {}
    if prof.events[1] then
      for file in pairs(internal.file_costs(prof, 1)) do
        if file then list[#list + 1] = file end
      end
    end
    table_sort(list)
    state[STATE] = list
  end
  return list
end

local basename = util.basename

-- The one file of the profile that name means: the path as written, else a
-- path ending in "/" .. name, else a path with name's base name.
local function resolve(prof, name)
  local files = files_of(prof)
  for _, f in ipairs(files) do
    if f == name then return f end
  end
  local tries = {
    function(f) return #f > #name and f:sub(-#name - 1) == "/" .. name end,
    function(f) return basename(f) == basename(name) end,
  }
  for _, try in ipairs(tries) do
    local found = {}
    for _, f in ipairs(files) do
      if try(f) then found[#found + 1] = f end
    end
    if #found == 1 then return found[1] end
    if #found > 1 then
      args.fail("annotate", 1, string_format("'%s' matches %d files: %s", name, #found, table_concat(found, ", ")), 3)
    end
  end
  args.fail("annotate", 1, string_format("no source file of the profile matches '%s'", name), 3)
end

-- The lines of the source file, found as written or under root: root ..
-- the path, then root .. each shorter tail of the path.
local function read_source(path, root)
  local candidates = {}
  if root then
    local rel = path:gsub("^/+", "")
    while rel do
      candidates[#candidates + 1] = root .. "/" .. rel
      rel = rel:match("^[^/]+/(.*)$")
    end
  else
    candidates[1] = path
  end
  for _, c in ipairs(candidates) do
    local f = io_open(c, "r")
    if f then
      local lines = {}
      for l in f:lines() do lines[#lines + 1] = l end
      f:close()
      return lines, c
    end
  end
  return nil, string_format("cannot open %s%s", path, root and (" under " .. root) or "")
end

-- Calls made from each line of path, per callee: line -> array of
-- { fn = callee, count =, cost = }, costliest first; a cost is capped at
-- the callee's inclusive cost, as in call trees, and a function's calls to
-- itself are left out.
local function calls_by_line(fns, path, ev)
  local by_line = {}
  for _, fn in ipairs(fns) do
    for call in fn:calls() do
      -- a function's calls to itself are inside the cost of the call
      -- that entered it, as callgrind_annotate leaves them out too
      if call.file == path and call.line and call.callee ~= fn then
        local per = by_line[call.line] or {}
        by_line[call.line] = per
        local row = per[call.callee]
        if not row then
          row = { fn = call.callee, count = 0, cost = 0 }
          per[call.callee] = row
          per[#per + 1] = row
        end
        row.count = row.count + call.count
        row.cost = row.cost + call:cost(ev)
      end
    end
  end
  for _, per in pairs(by_line) do
    for i = 1, #per do
      local row = per[i]
      per[row.fn] = nil
      -- a recursive call's raw cost counts nested calls again
      local inc = row.fn:inclusive(ev)
      if row.cost > inc then row.cost = inc end
    end
    table_sort(per, function(a, b)
      if a.cost ~= b.cost then return a.cost > b.cost end
      return a.fn.index < b.fn.index
    end)
  end
  return by_line
end

--- Cost per source line of one file (of the cost lines whose file it is,
-- fi=/fe= aware), with the functions that touch each line and the calls
-- made from it.
-- @tparam string file the path as the profile wrote it, a tail of it
--   ("src/parser.c"), or a base name ("parser.c"), as long as one file of
--   the profile matches (more than one: an error that lists them)
-- @param[opt] ev event (default: the first)
-- @tparam[opt] table opts `source = true` reads the file as written, or
--   `source = "dir"` looks for it under dir; then each row has `text`
--   (and the annotation `lines`, every line of the file)
-- @treturn Annotation an array of rows `{ line =, cost =, functions = {
--   Function... }, calls = { { fn =, count =, cost = }... }, text = }` in
--   line order (line 0: cost lines with no line number), with `file`,
--   `event`, `total`; `tostring` prints the listing
-- @usage print(prof:annotate("cgmain.c", "Ir", { source = "spec/fixtures/progs" }))
function Profile:annotate(file, ev, opts)
  args.check_type(file, "string", "annotate", 1)
  if type(ev) == "table" and opts == nil then ev, opts = nil, ev end
  ev = args.event_or_first(self, ev, "annotate", 2)
  opts = args.options(opts, "annotate", 3, "annotate")
  local path = resolve(self, file)
  local costs, fns = internal.annotate(self, path, ev)
  local a = setmetatable({ profile = self, file = path, event = ev, total = self:total(ev) }, annotation_mt)
  local touching, seen = {}, {}
  for line, cost in pairs(costs) do
    local list = {}
    for i in pairs(fns[line]) do
      local fn = internal.function_at(self, i)
      list[#list + 1] = fn
      if not seen[fn] then seen[fn] = true; touching[#touching + 1] = fn end
    end
    table_sort(list, function(x, y) return x.index < y.index end)
    a[#a + 1] = setmetatable({ line = line, cost = cost, functions = list }, row_mt)
  end
  table_sort(a, function(x, y) return x.line < y.line end)
  table_sort(touching, function(x, y) return x.index < y.index end)
  local calls = calls_by_line(touching, path, ev)
  for _, row in ipairs(a) do row.calls = calls[row.line] or {} end
  if opts.source then
    local lines, where = read_source(path, opts.source ~= true and opts.source or nil)
    if lines then
      a.lines, a.source = lines, where
      for _, row in ipairs(a) do row.text = lines[row.line] end
    else
      a.source_error = where
    end
  end
  return a
end

-- The n costliest rows of an annotation, costliest first (ties: by line).
local function costliest(a, n)
  local rows = {}
  for i, row in ipairs(a) do rows[i] = row end
  table_sort(rows, function(x, y)
    if x.cost ~= y.cost then return x.cost > y.cost end
    return x.line < y.line
  end)
  for i = #rows, n + 1, -1 do rows[i] = nil end
  return rows
end

--- The n costliest lines, costliest first, as an Annotation (its listing
-- shows them, with their source and calls, in line order).
-- @tparam integer n
-- @treturn Annotation
-- @usage print(prof:annotate("cgmain.c", { source = "spec/fixtures/progs" }):top(2))
function Annotation:top(n)
  n = args.count(n, "top", 1)
  local a = setmetatable({}, annotation_mt)
  for k, v in pairs(self) do
    if type(k) ~= "number" then a[k] = v end
  end
  for i, row in ipairs(costliest(self, n)) do a[i] = row end
  return a
end

--- The annotated listing. With the source: every line within `context`
-- lines (default 3) of a line with cost, its cost or `.`, and under a line
-- that calls, `=>` lines with the calls' inclusive cost; gaps are marked
-- `-- line N --`. Without it: one line per row, with the functions there.
-- `limit` shows only that many lines with cost, the costliest, and says
-- how many more there are (`tostring` shows 25).
-- @tparam[opt] table opts `context`, `limit`
-- @treturn string
-- @usage print(prof:annotate("cgmain.c", { source = "spec/fixtures/progs" }):report({ context = 1 }))
function Annotation:report(opts)
  opts = args.options(opts, "report", 1, "ann_report")
  local context = args.count(opts.context == nil and 3 or opts.context, "report", 1)
  local rows = self
  if opts.limit ~= nil and args.count(opts.limit, "report", 1) < #self then
    rows = costliest(self, opts.limit)
    table_sort(rows, function(x, y) return x.line < y.line end)
  end
  local out = { string_format("-- %s of %s%s", tostring(self.event), self.file,
    self.source and self.source ~= self.file and (" (source: " .. self.source .. ")") or "") }
  if self.source_error then out[#out + 1] = "-- " .. self.source_error end
  local function finish()
    if rows ~= self then
      out[#out + 1] = string_format("... %s more line%s with cost (the %d costliest shown; ann:report() prints "
        .. "them all, ann:top(n) the n costliest)", show.commas(#self - #rows), #self - #rows == 1 and "" or "s",
        #rows)
    end
    return table_concat(out, "\n")
  end
  local cost_of, cells = {}, {}
  for _, row in ipairs(rows) do cost_of[row.line] = row end
  local function cell(v) return show.cost(v, self.total) end
  local w = 1
  for _, row in ipairs(rows) do
    local c = cell(row.cost)
    cells[row] = c
    if #c > w then w = #c end
    for _, call in ipairs(row.calls) do if #cell(call.cost) > w then w = #cell(call.cost) end end
  end
  local function pad(s) return string.rep(" ", w - #s) .. s end
  local function add_calls(row)
    for _, call in ipairs(row.calls) do
      out[#out + 1] = string_format("%s  => %s (%s call%s)", pad(cell(call.cost)), call.fn.name,
        show.commas(call.count), call.count == 1 and "" or "s")
    end
  end
  if not self.lines then
    for _, row in ipairs(rows) do
      local names = {}
      for i, fn in ipairs(row.functions) do names[i] = fn.name end
      out[#out + 1] = string_format("%s  line %d  %s", pad(cells[row]), row.line, table_concat(names, ", "))
      add_calls(row)
    end
    return finish()
  end
  local lines, show_line = self.lines, {}
  for _, row in ipairs(rows) do
    for l = row.line - context, row.line + context do
      if l >= 1 and l <= #lines then show_line[l] = true end
    end
  end
  local gap = true
  for l = 1, #lines do
    if show_line[l] then
      if gap then out[#out + 1] = string_format("-- line %d ----------------------------------------", l) end
      gap = false
      local row = cost_of[l]
      out[#out + 1] = (row and pad(cells[row]) or pad(".")) .. "  " .. lines[l]
      if row then add_calls(row) end
    else
      gap = true
    end
  end
  local beyond = {}
  for _, row in ipairs(rows) do
    if row.line == 0 or row.line > #lines then beyond[#beyond + 1] = row end
  end
  if #beyond > 0 then
    out[#out + 1] = "-- lines the file does not have (line 0: no line number) ----------"
    for _, row in ipairs(beyond) do
      out[#out + 1] = string_format("%s  line %d", pad(cells[row]), row.line)
      add_calls(row)
    end
  end
  return finish()
end

annotation_mt.__tostring = function(a) return a:report({ limit = show.LIMIT }) end

-- CSV and JSON: `line, EV, functions` (the names joined by "; ").
encode.methods(Annotation, function(a)
  local rows = {}
  for i, r in ipairs(a) do
    local names = {}
    for k, fn in ipairs(r.functions) do names[k] = fn.name end
    rows[i] = { r.line, r.cost, table_concat(names, "; ") }
  end
  return { "line", tostring(a.event), "functions" }, rows
end)


function row_mt.__tostring(row)
  local names = {}
  for i, fn in ipairs(row.functions) do names[i] = fn.name end
  return string_format("line %d: %s  %s%s", row.line, show.commas(row.cost), table_concat(names, ", "),
    row.text and ("  | " .. row.text) or "")
end

return M
