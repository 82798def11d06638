--- A minimal reader of pprof's profile.proto for the specs, apart from
-- the library's writer: the file gunzipped by gzip, the protobuf decoded
-- here (sample 2 { location_id 1, value 2 }, location 4 { id 1, line 4
-- { function_id 1 } }, function 5 { id 1, name 2 }, string_table 6,
-- comment 13).
local H = require "spec.support.helpers"

local M = {}

local function varint(s, i)
  local v, shift = 0, 0
  while true do
    local b = s:byte(i)
    v = v | ((b & 0x7f) << shift)
    i = i + 1
    if b < 0x80 then return v, i end
    shift = shift + 7
  end
end

-- the fields of a message: { [field] = { values... } }, bytes as strings
local function fields(s)
  local out, i = {}, 1
  while i <= #s do
    local tag
    tag, i = varint(s, i)
    local f, wt, v = tag >> 3, tag & 7, nil
    if wt == 0 then v, i = varint(s, i)
    elseif wt == 2 then
      local n
      n, i = varint(s, i)
      v = s:sub(i, i + n - 1)
      i = i + n
    elseif wt == 1 then v = s:sub(i, i + 7); i = i + 8
    elseif wt == 5 then v = s:sub(i, i + 3); i = i + 4
    else error("wire type " .. wt) end
    out[f] = out[f] or {}
    out[f][#out[f] + 1] = v
  end
  return out
end

-- a repeated integer field's values: one varint, or packed
local function ints(v)
  if type(v) == "number" then return { v } end
  local out, i = {}, 1
  while i <= #v do out[#out + 1], i = varint(v, i) end
  return out
end

--- A pprof file decoded: its samples, each `{ names = { leaf first },
-- values = { one per sample type } }` (a location's function name), and
-- its comments.
-- @usage local samples, comments = P.read("p.pb.gz")
function M.read(path)
  local p = assert(io.popen("gzip -dc " .. H.shq(path)))
  local pb = fields(p:read("a"))
  p:close()
  local strings = pb[6] or {}
  local fn_name, loc_fn = {}, {}
  for _, f in ipairs(pb[5] or {}) do
    local ff = fields(f)
    fn_name[ff[1][1]] = strings[(ff[2] and ff[2][1] or 0) + 1]
  end
  for _, l in ipairs(pb[4] or {}) do
    local lf = fields(l)
    loc_fn[lf[1][1]] = fn_name[fields(lf[4][1])[1][1]]
  end
  local samples = {}
  for _, smp in ipairs(pb[2] or {}) do
    local sf = fields(smp)
    local names, vals = {}, {}
    for _, v in ipairs(sf[1] or {}) do for _, x in ipairs(ints(v)) do names[#names + 1] = loc_fn[x] end end
    for _, v in ipairs(sf[2] or {}) do for _, x in ipairs(ints(v)) do vals[#vals + 1] = x end end
    samples[#samples + 1] = { names = names, values = vals }
  end
  local comments = {}
  for _, v in ipairs(pb[13] or {}) do
    for _, x in ipairs(ints(v)) do comments[#comments + 1] = strings[x + 1] end
  end
  return samples, comments
end

--- A pprof file -> the flat (leaf) value of each function name in the
-- first sample type, the total, and the comments.
-- @usage local flat, total, comments = P.flat("p.pb.gz")
function M.flat(path)
  local samples, comments = M.read(path)
  local flat, total = {}, 0
  for _, smp in ipairs(samples) do
    local leaf, v = smp.names[1], smp.values[1]
    flat[leaf] = (flat[leaf] or 0) + v
    total = total + v
  end
  return flat, total, comments
end

--- A pprof file -> the cumulative value of each function name in the
-- first sample type: the sum over the samples whose stack names it at
-- least once (what go tool pprof's cum column is).
-- @usage local cum = P.cum("p.pb.gz")
function M.cum(path)
  local cum = {}
  for _, smp in ipairs((M.read(path))) do
    local seen = {}
    for _, name in ipairs(smp.names) do
      if not seen[name] then
        seen[name] = true
        cum[name] = (cum[name] or 0) + smp.values[1]
      end
    end
  end
  return cum
end

--- go tool pprof -top's rows of a file: name -> { flat, cum } (every
-- node: -nodecount and the fractions opened wide), and the total.
-- @usage local rows, total = P.go_top("p.pb.gz")
function M.go_top(path)
  local out = H.run("cd /tmp && HOME=${HOME:-/tmp} go tool pprof -top -nodecount=1000000 -nodefraction=0 "
    .. "-edgefraction=0 " .. H.shq(path) .. " 2>&1", "go tool pprof")
  local rows = {}
  local total = tonumber(out:match(" of (%d+) total"))
  for line in out:gmatch("[^\n]+") do
    local flat, cum, name = line:match("^%s*(%-?%d+)%s+%S+%%%s+%S+%%%s+(%-?%d+)%s+%S+%%%s+(.-)%s*$")
    if flat then rows[name] = { tonumber(flat), tonumber(cum) } end
  end
  return rows, total, out
end

return M
