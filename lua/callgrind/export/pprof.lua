--- pprof's profile.proto (read by `go tool pprof`, speedscope, Perfetto,
-- Pyroscope, Parca, Grafana), gzip-compressed: one sample type per event,
-- a function and a location per profile function (with its file and first
-- line), and a sample per stack: exact where the profile has stacks (a
-- Lua profile made with `stacks = true`, or the FILE.stacks or
-- FILE.folded beside its file: every stack kept unless a threshold is given, so that flat and
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


-- The bytes of a varint.
local function varint_len(n)
  if n >= 0 and n < 128 then return 1 end
  if n < 0 then return 10 end
  local k = 1
  while n >= 128 do n = n >> 7; k = k + 1 end
  return k
end

-- A frame's location list is kept for its children to extend when it is
-- shorter than CACHE_LOCS bytes or its depth a multiple of CHECKPOINT;
-- another is made from its nearest kept ancestor's (fewer than
-- CHECKPOINT steps up), so that a deep recursion's lists take time and
-- memory linear in the output (the kept ones 1/CHECKPOINT of it), not
-- in the sum of every frame's depth.
local CACHE_LOCS, CHECKPOINT = 256, 64

--- The profile.proto bytes (not compressed) of a profile, or nil and the
-- size its samples would take when that is over max_bytes (computed
-- before any sample is made: a sample lists every location of its stack,
-- so a recursion n deep takes about n^2/2 of them).
-- @tparam table events event names
-- @tparam[opt] number threshold nil: every exact stack, or 0.0001 of an estimate
-- @tparam[opt] boolean collapse as `prof:folded`'s collapse_recursion
-- @tparam[opt] integer max_bytes the most bytes of samples (default no limit)
-- @tparam[opt] function sink given the bytes in pieces of about a
--   megabyte, as they are made (then encode returns true): what is sunk
--   is not kept
-- @usage local bytes = pprof.encode(prof, { "Ir" }, 1e-4)
function M.encode(prof, events, threshold, collapse, max_bytes, sink)
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
  local out, pending = {}, 0
  -- each field in order; with a sink, handed on every megabyte or so
  local function emit(bytes)
    out[#out + 1] = bytes
    pending = pending + #bytes
    if sink and pending >= 1048576 then
      sink(table_concat(out))
      out, pending = {}, 0
    end
  end
  for _, ev in ipairs(events) do
    emit(field_bytes(1, field_varint(1, str(ev)) .. field_varint(2, str(UNITS[ev] or "count"))))
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
    if how:sub(1, #stacks.ESTIMATED) ~= stacks.ESTIMATED and threshold and threshold > 0 then
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
  -- the size of the samples first: a frame's locations are its
  -- function's and its parent's (loclen), a sample their bytes and its
  -- values'
  local loclen, size = { [0] = 0 }, 0
  for id = 1, n do
    local l = varint_len(mfunc[id]) + loclen[mparent[id]]
    loclen[id] = l
    local vl, any = 0, false
    for e = 1, nev do
      local x = vals[e][id]
      if x and x ~= 0 then any = true; vl = vl + varint_len(x) else vl = vl + 1 end
    end
    if any then
      local body = 1 + varint_len(l) + l + 1 + varint_len(vl) + vl
      size = size + 1 + varint_len(body) + body
    end
  end
  if max_bytes and size > max_bytes then return nil, size end
  -- the samples: locations leaf first (this frame's, then its parent's)
  local enc, used, seen, zero = { [0] = "" }, {}, {}, small[0]
  local key1, key2 = varint(1 << 3 | 2), varint(2 << 3 | 2)
  local values, parts, depth = {}, {}, { [0] = 0 }
  for id = 1, n do
    depth[id] = depth[mparent[id]] + 1
    local f = mfunc[id]
    if not seen[f] then seen[f] = true; used[#used + 1] = f end
    local locs = enc[mparent[id]]
    if locs then
      locs = varint(f) .. locs
    else
      -- up to the nearest ancestor whose list is kept
      local k, up = 0, id
      while not enc[up] do
        k = k + 1
        parts[k] = varint(mfunc[up])
        up = mparent[up]
      end
      parts[k + 1] = enc[up]
      locs = table_concat(parts, "", 1, k + 1)
    end
    if #locs < CACHE_LOCS or depth[id] % CHECKPOINT == 0 then enc[id] = locs end
    local any = false
    for e = 1, nev do
      local x = vals[e][id]
      if x and x ~= 0 then any = true; values[e] = varint(x) else values[e] = zero end
    end
    if any then
      local vs = table_concat(values, "", 1, nev)
      emit(field_bytes(2, key1 .. varint(#locs) .. locs .. key2 .. varint(#vs) .. vs))
    end
  end
  -- each function's first line, all in one call (a file without line
  -- numbers has every cost line walked)
  local first_lines = internal.first_lines(prof)
  for _, id in ipairs(used) do
    local fn = names[id] and { name = names[id] } or internal.function_at(prof, id)
    local first = not names[id] and first_lines[id] or 0
    -- Location { id, line: Line { function_id, line } }
    emit(field_bytes(4, field_varint(1, id) .. field_bytes(4, field_varint(1, id)
      .. field_varint(2, first))))
    -- Function { id, name, system_name, filename, start_line }
    local name = str(fn.name)
    emit(field_bytes(5, field_varint(1, id) .. field_varint(2, name) .. field_varint(3, name)
      .. field_varint(4, str(fn.file or fn.object or "")) .. field_varint(5, first)))
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
  for i = 1, #strings do emit(field_bytes(6, strings[i])) end
  emit(tail)
  if sink then
    sink(table_concat(out))
    return true
  end
  return table_concat(out)
end

--- The most bytes of samples `prof:write_pprof` makes by default (256
-- MiB, as `stacks.MAX_BYTES`): past it, it fails before making them.
M.MAX_BYTES = stacks.MAX_BYTES

--- Writes the profile as pprof's gzip-compressed profile.proto, whole or
-- not at all: one sample type per event, one sample per stack (exact where
-- the profile has stacks, all of them by default; else estimated as in
-- `prof:folded`; the values add up to the profile's totals). Each sample
-- lists its whole stack, so a deep recursion's samples grow as the square
-- of its depth: their size is computed first, and past `max_bytes` it
-- fails with kind "memory", naming the size (and collapse_recursion when
-- that would bring it under).
-- @tparam string path
-- @tparam[opt] table opts `events` (names; default the base events),
--   `threshold` (default 0 for exact stacks, else 0.0001),
--   `collapse_recursion` (as `prof:folded`'s), `max_bytes` (default 256
--   MiB)
-- @return true, or nil, "path: reason", "io" (or "memory")
-- @usage assert(prof:write_pprof("prof.pb.gz"))
-- @usage -- then: go tool pprof -top prof.pb.gz
function Profile:write_pprof(path, opts)
  args.check_type(path, "string", "write_pprof", 1)
  opts = args.options(opts, "write_pprof", 2, "pprof")
  -- nil: every exact stack, or the estimate's default threshold
  local threshold = opts.threshold ~= nil and stacks.threshold(opts.threshold, "write_pprof", 2) or nil
  local max = opts.max_bytes == nil and M.MAX_BYTES or args.count(opts.max_bytes, "write_pprof", 2)
  local events = opts.events or self.events
  if #events == 0 then error("write_pprof: the profile has no events", 2) end
  for _, ev in ipairs(events) do
    if internal.event_problem(self, ev) then args.event(self, ev, "write_pprof", 2) end
  end
  local names = {}
  for i, ev in ipairs(events) do names[i] = type(ev) == "number" and self.events[ev] or ev end
  -- compressed as they are made: the samples of a deep recursion can be
  -- hundreds of megabytes, their gzip a few
  local gz, err = internal.gzip_stream()
  if not gz then return nil, "write_pprof: " .. err, "io" end
  local ok, size = M.encode(self, names, threshold, opts.collapse_recursion, max, gz)
  if not ok then
    -- collapse_recursion named only when it would bring the size under
    -- (max_bytes 0: the size alone, no sample made)
    local collapse = false
    if not opts.collapse_recursion then
      local fits, csize = M.encode(self, names, threshold, true, 0)
      collapse = fits ~= nil or csize <= max
    end
    return nil, stacks.too_big("write_pprof", "pprof samples", size, max, collapse), "memory"
  end
  return require("callgrind.util").write_file(path, gz())
end

return M
