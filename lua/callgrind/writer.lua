--- Writing profiles back out: `prof:write(path_or_file [, opts])` writes any
-- Profile as a callgrind-format file that callgrind_annotate, KCachegrind
-- and this library read back to the same functions, calls, lines, jumps,
-- parts and totals.
--
-- What a file says that the model does not keep is not written: comments,
-- `bb=` lines, position columns other than `instr` and `line`, and the
-- order of lines, calls and jumps inside a function (each function writes
-- its cost lines, then its calls, then its jumps).
-- @module callgrind.writer
local core = require "callgrind.core"
local events = require "callgrind.events"

local Profile = core.methods.Profile

local error, io_open, io_type, ipairs, pairs, setmetatable, tostring, type = error, io.open, io.type, ipairs, pairs,
  setmetatable, tostring, type
local string_format, table_concat = string.format, table.concat

local M = {}

-- An unsigned 64-bit number (a position or a count): decimal, or hex when
-- it is 2^63 or more (it reads back with the same bits).
local function u64(n)
  if n >= 0 then return tostring(n) end
  return string_format("0x%x", n)
end

-- Name compression: one id table per kind (objects, files, functions), as
-- the format has it. With compress off a name is written whole, unless it
-- would read as an id reference. An empty name is always written as is
-- (`(3) ` would read as a reference).
local function new_namer(compress)
  local ids = { ob = { n = 0 }, fl = { n = 0 }, fn = { n = 0 } }
  return function(kind, name)
    if name == "" or (not compress and not name:find("^%(%d+%)")) then return name end
    local t = ids[kind]
    local id = t[name]
    if id then return "(" .. id .. ")" end
    t.n = t.n + 1
    t[name] = t.n
    return "(" .. t.n .. ") " .. name
  end
end

-- Positions: which columns the profile has (from its first cost line,
-- call or jump), and a writer of them, relative to the previous cost line
-- of the part (`+N`, `-N`, `*`) when compressing.
local function position_columns(prof)
  local first = prof:lines()()
  if not first then first = prof:calls()() end
  if not first then first = prof:jumps()() end
  local cols = {}
  if first and first.addr ~= nil then cols[#cols + 1] = "addr" end
  if first and (first.line ~= nil or #cols == 0) then cols[#cols + 1] = "line" end
  return cols
end

local function relative(v, base)
  if base == 0 then return nil end -- the first line of a part: absolute
  if v == base then return "*" end
  if v >= 0 and base >= 0 then
    local d = v - base
    if d > 0 and d < 0x100000000 then return "+" .. d end
    if d < 0 and d > -0x100000000 then return tostring(d) end
  end
  return nil
end

local function absolute(col, v)
  if col == "addr" then return string_format("0x%x", v) end
  return u64(v)
end

-- The Writer: the state of one output file.
local Writer = {}
Writer.__index = Writer

function Writer:put(s)
  local out = self.out
  out[#out + 1] = s
  if #out >= 512 then
    local ok, err = self.f:write(table_concat(out))
    if not ok then self.err = self.err or err end
    self.out = {}
  end
end

-- The subposition fields of a line, call or jump (moving the base when
-- `move` is true).
function Writer:pos(item, fields, move)
  local cols, base, s = self.cols, self.base, {}
  for i, col in ipairs(cols) do
    local v = item[fields[i]] or 0
    local r = self.compress and relative(v, base[i])
    s[i] = r or absolute(col, v)
    if move then base[i] = v end
  end
  return table_concat(s, " ")
end

-- The positions of a target, always absolute (nothing moves).
function Writer:target(item, fields)
  local s = {}
  for i, col in ipairs(self.cols) do s[i] = absolute(col, item[fields[i]] or 0) end
  return table_concat(s, " ")
end

-- Costs in the part's event order, trailing zeros dropped (at least one).
function Writer:costs(t)
  local evs, s, last = self.part_events, {}, 1
  for i, ev in ipairs(evs) do
    local v = t[ev] or 0
    s[i] = tostring(v)
    if v ~= 0 then last = i end
  end
  if #evs == 0 then return "" end
  return " " .. table_concat(s, " ", 1, last)
end

function Writer:name_line(key, kind, name)
  self:put(key .. "=" .. self.name(kind, name) .. "\n")
end

-- Switches the source file of the following lines (fi=) when it changes.
function Writer:source_file(file)
  if file ~= nil and file ~= self.lfile then
    self:name_line("fi", "fl", file)
    self.lfile = file
  end
end

local LINE_POS = { "addr", "line" }
local TARGET_POS = { "target_addr", "target_line" }

local function field_names(cols, names)
  local f = {}
  for i, col in ipairs(cols) do f[i] = col == "addr" and names[1] or names[2] end
  return f
end

-- Everything of one function that belongs to one part.
function Writer:function_block(fn, pidx, filter)
  local lines, calls, jumps = {}, {}, {}
  for l in fn:lines() do
    if not filter or l.part.index == pidx then lines[#lines + 1] = l end
  end
  for c in fn:calls() do
    if not filter or c.part.index == pidx then calls[#calls + 1] = c end
  end
  for j in fn:jumps() do
    if not filter or j.part.index == pidx then jumps[#jumps + 1] = j end
  end
  if #lines + #calls + #jumps == 0 then return end
  if fn.object ~= nil and fn.object ~= self.ob then
    self:name_line("ob", "ob", fn.object)
    self.ob = fn.object
  end
  -- fl= again after an fi= (callgrind_annotate keeps the fi= file until
  -- the next fl=)
  if fn.file ~= nil and (fn.file ~= self.fl or self.lfile ~= self.fl) then
    self:name_line("fl", "fl", fn.file)
    self.fl = fn.file
  end
  self:name_line("fn", "fn", fn.name)
  self.lfile = self.fl
  local pos_fields, tgt_fields = self.pos_fields, self.tgt_fields
  for _, l in ipairs(lines) do
    self:source_file(l.file)
    self:put(self:pos(l, pos_fields, true) .. self:costs(l:cost()) .. "\n")
  end
  for _, c in ipairs(calls) do
    self:source_file(c.file)
    local callee = c.callee
    if callee.object ~= nil and callee.object ~= self.ob then self:name_line("cob", "ob", callee.object) end
    if callee.file ~= nil then self:name_line("cfi", "fl", callee.file) end
    self:name_line("cfn", "fn", callee.name)
    self:put("calls=" .. u64(c.count) .. " " .. self:target(c, tgt_fields) .. "\n")
    self:put(self:pos(c, pos_fields, true) .. self:costs(c:cost()) .. "\n")
  end
  for _, j in ipairs(jumps) do
    self:source_file(j.file)
    if j.target_file ~= nil and j.target_file ~= self.lfile then self:name_line("jfi", "fl", j.target_file) end
    if j.to ~= fn then self:name_line("jfn", "fn", j.to.name) end
    if j.conditional then
      self:put("jcnd=" .. u64(j.count) .. "/" .. u64(j.executed) .. " " .. self:target(j, tgt_fields) .. "\n")
    else
      self:put("jump=" .. u64(j.count) .. " " .. self:target(j, tgt_fields) .. "\n")
    end
    self:put(self:pos(j, pos_fields, true) .. "\n")
  end
  -- the sums this part's totals: line is written from (subsets, parts
  -- without one)
  local sums = self.sums
  for _, l in ipairs(lines) do
    for ev, v in pairs(l:cost()) do sums[ev] = (sums[ev] or 0) + v end
  end
end

local function cost_list(evs, t)
  local s = {}
  for i, ev in ipairs(evs) do s[i] = tostring(t[ev] or 0) end
  return table_concat(s, " ")
end

-- The event: lines: long names of base events, and formulas the file or
-- the user defined (presets are left out: every load defines them again).
local function event_lines(prof)
  local preset = {}
  for _, p in ipairs(events.presets) do preset[p.name] = p.long_name end
  local out = {}
  for _, ev in ipairs(prof.events) do
    local info = prof:event_info(ev)
    if info.long_name then out[#out + 1] = string_format("event: %s : %s\n", ev, info.long_name) end
  end
  for _, ev in ipairs(prof:derived_events()) do
    local info = prof:event_info(ev)
    if not (preset[ev] and preset[ev] == info.long_name) then
      out[#out + 1] = string_format("event: %s = %s%s\n", ev, info.formula,
        info.long_name and (" : " .. info.long_name) or "")
    end
  end
  return table_concat(out)
end

-- A part's desc: lines, sorted by type so the output is the same on every
-- run (a type written twice keeps both values, one a line).
local function desc_lines(desc)
  local types = {}
  for k in pairs(desc or {}) do types[#types + 1] = k end
  table.sort(types)
  local out = {}
  for _, k in ipairs(types) do
    for v in (tostring(desc[k]) .. "\n"):gmatch("([^\n]*)\n") do
      out[#out + 1] = string_format("desc: %s: %s\n", k, v)
    end
  end
  return table_concat(out)
end

local COL_NAME = { addr = "instr", line = "line" }

function Writer:part(prof, part, nparts, only)
  local bits = {}
  if part.pid then bits[#bits + 1] = "pid: " .. part.pid .. "\n" end
  if part.cmd then bits[#bits + 1] = "cmd: " .. part.cmd .. "\n" end
  bits[#bits + 1] = "part: " .. part.number .. "\n"
  if part.thread then bits[#bits + 1] = "thread: " .. part.thread .. "\n" end
  bits[#bits + 1] = desc_lines(part.desc)
  local cols = {}
  for i, c in ipairs(self.cols) do cols[i] = COL_NAME[c] end
  bits[#bits + 1] = "positions: " .. table_concat(cols, " ") .. "\n"
  if part.index == 1 then bits[#bits + 1] = event_lines(prof) end
  local evs = part.events
  self.part_events = evs
  if #evs > 0 then bits[#bits + 1] = "events: " .. table_concat(evs, " ") .. "\n" end
  if part.summary then bits[#bits + 1] = "summary: " .. cost_list(evs, part.summary) .. "\n" end
  self:put(table_concat(bits) .. "\n")
  self.base = { 0, 0 }
  self.sums = {}
  for fn in prof:functions() do
    if not only or only[fn] then self:function_block(fn, part.index, nparts > 1) end
  end
  -- as written when the whole profile is written (a mismatch stays a
  -- mismatch), else the sum of what was written
  local totals = (not only and part.written_totals) or self.sums
  if #evs > 0 then self:put("totals: " .. cost_list(evs, totals) .. "\n") end
end

local function check_selection(prof, fns)
  if type(fns) ~= "table" then
    error("bad argument #2 to 'write' (opts.functions must be a selection or an array of functions)", 3)
  end
  local only = {}
  for i, fn in ipairs(fns) do
    if type(fn) ~= "userdata" or fn.profile ~= prof then
      error("bad argument #2 to 'write' (opts.functions[" .. i .. "] is not a function of this profile)", 3)
    end
    only[fn] = true
  end
  return only
end

--- Writes the profile as a callgrind-format file.
-- The header comes in callgrind's own order (`# callgrind format`,
-- `version: 1`, `creator:`, `pid:`, `cmd:`, `part:`, `desc:`,
-- `positions:`, `event:`, `events:`, `summary:`), then per function its
-- cost lines, its calls (each `cfi=`/`cfn=` written again before `calls=`,
-- as KCachegrind needs, and followed by its inclusive cost line) and its
-- jumps; `totals:` ends each part. Several parts stay parts.
-- @param dest a path, or a file opened for writing (left open)
-- @tparam[opt] table opts `compress` (default true: `(N) name` ids and
--   relative positions; false writes every name and position whole, for
--   weak readers); `functions`: a selection or array of this profile's
--   functions, to write only those (their lines, jumps and calls out of
--   them; `totals:` is then their sum, `summary:` stays the run's)
-- @return true, or nil and "path: reason"
-- @usage assert(prof:write(os.tmpname()))
function Profile:write(dest, opts)
  local dtype = type(dest)
  if dtype ~= "string" and io_type(dest) ~= "file" then
    error("bad argument #1 to 'write' (path or open file expected, got " .. dtype .. ")", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then error("bad argument #2 to 'write' (table expected)", 2) end
  opts = opts or {}
  local only = opts.functions ~= nil and check_selection(self, opts.functions) or nil
  local f = dest
  if dtype == "string" then
    local err
    f, err = io_open(dest, "wb")
    if not f then return nil, err end
  end
  local cols = position_columns(self)
  local w = setmetatable({
    f = f, out = {}, compress = opts.compress ~= false, name = new_namer(opts.compress ~= false),
    cols = cols, pos_fields = field_names(cols, LINE_POS), tgt_fields = field_names(cols, TARGET_POS),
  }, Writer)
  w:put("# callgrind format\nversion: 1\n")
  if self.creator then w:put("creator: " .. self.creator .. "\n") end
  local parts = {}
  for part in self:parts() do parts[#parts + 1] = part end
  for i, part in ipairs(parts) do
    if i > 1 then w:put("\n") end
    w:part(self, part, #parts, only)
  end
  local ok, werr = f:write(table_concat(w.out))
  if ok and w.err then ok, werr = nil, w.err end
  if ok then ok, werr = f:flush() end
  if dtype == "string" then
    local cok, cerr = f:close()
    if ok and not cok then ok, werr = nil, cerr end
  end
  if not ok then return nil, (dtype == "string" and (dest .. ": ") or "") .. tostring(werr) end
  return true
end

return M
