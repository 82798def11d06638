--- pprof's profile.proto (read by `go tool pprof`, speedscope, Perfetto,
-- Pyroscope, Parca, Grafana), gzip-compressed: one sample type per event,
-- a function and a location per profile function (with its file and first
-- line), and a sample per stack: exact where the profile has stacks, else
-- the estimated stacks of `prof:folded`, whose values add up to the
-- profile's totals. The protobuf is encoded here (no dependency); the
-- gzip is zlib's, in the core.
-- @module callgrind.pprof
local core = require "callgrind.core"
local args = require "callgrind.args"
local stacks = require "callgrind.stacks"
local internal = core.internal

local Profile = core.methods.Profile

local ipairs = ipairs
local string_char, table_concat = string.char, table.concat

local M = {}

-- Protobuf: varints, keys, length-delimited fields.
local small = {}
for i = 0, 127 do small[i] = string_char(i) end

local function varint(n)
  if n >= 0 and n < 128 then return small[n] end
  local b = {}
  repeat
    local byte = n & 0x7f
    n = n >> 7                    -- logical shift: negatives take 10 bytes
    if n ~= 0 then byte = byte | 0x80 end
    b[#b + 1] = byte
  until n == 0
  return string_char(table.unpack(b))
end
M.varint = varint

local function field_varint(field, n)
  if n == 0 then return "" end
  return varint(field << 3) .. varint(n)
end

local function field_bytes(field, s)
  return varint(field << 3 | 2) .. varint(#s) .. s
end

-- Units pprof knows for the events it can name.
local UNITS = { Time = "nanoseconds", Alloc = "bytes" }

local OPTS = { events = "table", threshold = "number" }

--- The profile.proto bytes (not compressed) of a profile.
-- @tparam table events event names
-- @usage local bytes = pprof.encode(prof, { "Ir" }, 1e-4)
function M.encode(prof, events, threshold)
  local strings, string_ids = { "" }, { [""] = 0 }
  local function str(s)
    local id = string_ids[s]
    if not id then
      id = #strings
      strings[id + 1] = s
      string_ids[s] = id
    end
    return id
  end
  local out = {}
  for _, ev in ipairs(events) do
    out[#out + 1] = field_bytes(1, field_varint(1, str(ev)) .. field_varint(2, str(UNITS[ev] or "count")))
  end
  -- merge the events' trees by path: a stack is one sample with a value
  -- per event
  local nev = #events
  local top = { kids = {}, order = {} }
  for e, ev in ipairs(events) do
    local tree = stacks.tree(prof, ev, threshold)
    local function merge(nd, into)
      for _, kid in ipairs(nd.children) do
        local i = kid.i or kid.fn.index
        local m = into.kids[i]
        if not m then
          m = { fn = kid.fn, i = i, kids = {}, order = {}, values = {} }
          into.kids[i] = m
          into.order[#into.order + 1] = m
        end
        m.values[e] = (m.values[e] or 0) + kid.self
        merge(kid, m)
      end
    end
    merge(tree, top)
  end
  local used, zero = {}, small[0]
  local function emit(nd, enc)
    for _, m in ipairs(nd.order) do
      local fn = m.fn
      if not used[fn] then used[fn] = true; used[#used + 1] = fn end
      -- the locations, leaf first: this one, then the parent's
      local locs = varint(m.i) .. enc
      local values, any, mv = {}, false, m.values
      for e = 1, nev do
        local v = mv[e]
        if v and v ~= 0 then any = true; values[e] = varint(v) else values[e] = zero end
      end
      if any then
        local vs = table_concat(values)
        out[#out + 1] = field_bytes(2, varint(1 << 3 | 2) .. varint(#locs) .. locs .. varint(2 << 3 | 2)
          .. varint(#vs) .. vs)
      end
      emit(m, locs)
    end
  end
  emit(top, "")
  for _, fn in ipairs(used) do
    local id = fn.index
    local first = 0
    for line in fn:lines() do
      if line.line then first = line.line; break end
    end
    -- Location { id, line: Line { function_id, line } }
    out[#out + 1] = field_bytes(4, field_varint(1, id) .. field_bytes(4, field_varint(1, id)
      .. field_varint(2, first)))
    -- Function { id, name, system_name, filename, start_line }
    local name = str(fn.name)
    out[#out + 1] = field_bytes(5, field_varint(1, id) .. field_varint(2, name) .. field_varint(3, name)
      .. field_varint(4, str(fn.file or fn.object or "")) .. field_varint(5, first))
  end
  -- the comment, period type; default_sample_type the first event
  local comment = str("callgrind: " .. tostring(prof.name))
  local period_type = field_bytes(11, field_varint(1, str(events[1])) .. field_varint(2, str(UNITS[events[1]]
    or "count")))
  local tail = period_type .. field_varint(12, 1) .. field_varint(13, comment)
    .. field_varint(14, str(events[1]))
  for i = 1, #strings do out[#out + 1] = field_bytes(6, strings[i]) end
  out[#out + 1] = tail
  return table_concat(out)
end

--- Writes the profile as pprof's gzip-compressed profile.proto, whole or
-- not at all: one sample type per event, one sample per stack (exact where
-- the profile has stacks, else estimated as in `prof:folded`; the values
-- add up to the profile's totals).
-- @tparam string path
-- @tparam[opt] table opts `events` (names; default the base events),
--   `threshold` (as `prof:folded`'s)
-- @return true, or nil, "path: reason", "io"
-- @usage assert(prof:write_pprof("prof.pb.gz"))
-- @usage -- then: go tool pprof -top prof.pb.gz
function Profile:write_pprof(path, opts)
  args.check_type(path, "string", "write_pprof", 1)
  opts = args.options(opts, "write_pprof", 2, OPTS)
  local threshold = stacks.threshold(opts.threshold, "write_pprof", 2)
  local events = opts.events or self.events
  if #events == 0 then error("write_pprof: the profile has no events", 2) end
  for _, ev in ipairs(events) do
    if internal.event_problem(self, ev) then args.event(self, ev, "write_pprof", 2) end
  end
  local names = {}
  for i, ev in ipairs(events) do names[i] = type(ev) == "number" and self.events[ev] or ev end
  local bytes = M.encode(self, names, threshold)
  return require("callgrind.atomic").write(path, internal.gzip(bytes))
end

return M
