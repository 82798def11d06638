--- pprof's profile.proto (read by `go tool pprof`, speedscope, Perfetto,
-- Pyroscope, Parca, Grafana), gzip-compressed: one sample type per event,
-- a function and a location per profile function (with its file and first
-- line), and a sample per stack: exact where the profile has stacks (a
-- Lua profile made with `stacks = true`, or the FILE.folded beside its
-- file: every stack kept unless a threshold is given, so that flat and
-- cum are the stacks' own), else the estimated stacks of `prof:folded`,
-- whose values add up to the profile's totals. A comment per sample type
-- says which. The protobuf is encoded here (no dependency); the gzip is
-- zlib's, in the core.
-- @module callgrind.export.pprof
local core = require "callgrind.core"
local args = require "callgrind.args"
local stacks = require "callgrind.export.stacks"
local internal = core.internal

local Profile = core.methods.Profile

local ipairs, pairs = ipairs, pairs
local string_char, table_concat = string.char, table.concat

local M = {}

-- Protobuf: varints, keys, length-delimited fields.
local small = {}
for i = 0, 127 do small[i] = string_char(i) end

--- A protobuf varint: seven bits a byte, low first, the high bit set on
-- all but the last; a negative integer takes ten bytes (two's complement).
-- @usage pprof.varint(300) --> "\172\2"
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


--- The profile.proto bytes (not compressed) of a profile.
-- @tparam table events event names
-- @tparam[opt] number threshold nil: every exact stack, or 0.0001 of an estimate
-- @usage local bytes = pprof.encode(prof, { "Ir" }, 1e-4)
function M.encode(prof, events, threshold, collapse)
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
  -- per event. Merged frame ids in creation order (parents first); a
  -- frame's key is its merged parent and its function.
  local nev = #events
  local key_of, mparent, mfunc, vals, n = {}, {}, {}, {}, 0
  local width = 1 << 31      -- function indices are below 2^31 (CG_MAX_FUNCS)
  -- a frame that is no function of the profile (a name of a FILE.folded
  -- several functions share): its index past the functions -> its name
  local names, hows = {}, {}
  for e, ev in ipairs(events) do
    local parent, func, _, self, extra, how = stacks.frames(prof, ev, threshold, collapse)
    for i, name in pairs(extra) do names[i] = name end
    if how ~= stacks.ESTIMATED and threshold and threshold > 0 then
      how = how .. string.format(", the stacks below %.4g%% of the total merged into their caller", 100 * threshold)
    end
    hows[e] = how
    local map, v = {}, {}
    vals[e] = v
    for k = 1, #parent do
      local pk = parent[k]
      local pm = pk == 0 and 0 or map[pk]
      local key = pm * width + func[k]
      local id = key_of[key]
      if not id then
        n = n + 1
        id = n
        key_of[key], mparent[id], mfunc[id] = id, pm, func[k]
      end
      map[k] = id
      v[id] = (v[id] or 0) + self[k]
    end
    -- a negative self cost (a profile of memory freed, say) has no place
    -- in the stacks (stacks.correct draws it as 0); pprof's values can be
    -- negative, so it is a sample of its own, a stack of that function
    -- alone, and flat stays exact
    local self_all = internal.self_all(prof, ev)
    for f = 1, #self_all do
      if self_all[f] < 0 then
        local id = key_of[f]
        if not id then
          n = n + 1
          id = n
          key_of[f], mparent[id], mfunc[id] = id, 0, f
        end
        v[id] = (v[id] or 0) + self_all[f]
      end
    end
  end
  -- the samples: locations leaf first (this frame's, then its parent's)
  local enc, used, seen, zero = { [0] = "" }, {}, {}, small[0]
  local key1, key2 = varint(1 << 3 | 2), varint(2 << 3 | 2)
  local values = {}
  for id = 1, n do
    local f = mfunc[id]
    if not seen[f] then seen[f] = true; used[#used + 1] = f end
    local locs = varint(f) .. enc[mparent[id]]
    enc[id] = locs
    local any = false
    for e = 1, nev do
      local x = vals[e][id]
      if x and x ~= 0 then any = true; values[e] = varint(x) else values[e] = zero end
    end
    if any then
      local vs = table_concat(values, "", 1, nev)
      out[#out + 1] = field_bytes(2, key1 .. varint(#locs) .. locs .. key2 .. varint(#vs) .. vs)
    end
  end
  for _, id in ipairs(used) do
    local fn = names[id] and { name = names[id] } or internal.function_at(prof, id)
    local first = 0
    if not names[id] then
      for line in fn:lines() do
        if line.line then first = line.line; break end
      end
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
  local comment = field_varint(13, str("callgrind: " .. tostring(prof.name)))
  for e, ev in ipairs(events) do
    comment = comment .. field_varint(13, str(ev .. ": " .. hows[e]))
  end
  local period_type = field_bytes(11, field_varint(1, str(events[1])) .. field_varint(2, str(UNITS[events[1]]
    or "count")))
  local tail = period_type .. field_varint(12, 1) .. comment
    .. field_varint(14, str(events[1]))
  for i = 1, #strings do out[#out + 1] = field_bytes(6, strings[i]) end
  out[#out + 1] = tail
  return table_concat(out)
end

--- Writes the profile as pprof's gzip-compressed profile.proto, whole or
-- not at all: one sample type per event, one sample per stack (exact where
-- the profile has stacks, all of them by default; else estimated as in
-- `prof:folded`; the values add up to the profile's totals).
-- @tparam string path
-- @tparam[opt] table opts `events` (names; default the base events),
--   `threshold` (default 0 for exact stacks, else 0.0001),
--   `collapse_recursion` (as `prof:folded`'s)
-- @return true, or nil, "path: reason", "io"
-- @usage assert(prof:write_pprof("prof.pb.gz"))
-- @usage -- then: go tool pprof -top prof.pb.gz
function Profile:write_pprof(path, opts)
  args.check_type(path, "string", "write_pprof", 1)
  opts = args.options(opts, "write_pprof", 2, "pprof")
  -- nil: every exact stack, or the estimate's default threshold
  local threshold = opts.threshold ~= nil and stacks.threshold(opts.threshold, "write_pprof", 2) or nil
  local events = opts.events or self.events
  if #events == 0 then error("write_pprof: the profile has no events", 2) end
  for _, ev in ipairs(events) do
    if internal.event_problem(self, ev) then args.event(self, ev, "write_pprof", 2) end
  end
  local names = {}
  for i, ev in ipairs(events) do names[i] = type(ev) == "number" and self.events[ev] or ev end
  local bytes = M.encode(self, names, threshold, opts.collapse_recursion)
  local gz, err = internal.gzip(bytes)
  if not gz then return nil, "write_pprof: " .. err, "io" end
  return require("callgrind.util").write_file(path, gz)
end

return M
