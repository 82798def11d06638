--- The stack record beside a profile: `lua5.4 -lcallgrind.start` with
-- `CALLGRIND_STACKS=1` (and `profiler.until_exit{ stacks = true }`) writes
-- the profile FILE and, beside it, `FILE.stacks`: the tree of the run's
-- call stacks, each distinct node once (its parent, its function, its own
-- cost per event), with the digest of the profile it belongs to
-- (docs/format.md, "The stack record"). `callgrind.load(FILE)` finds it:
-- `prof:stacks()`, `prof:folded()`, the flame graph, pprof and the report
-- read their exact stacks from it. A record whose profile digest is not
-- FILE's (another run's) is refused. Read in C
-- (csrc/reader/cg_stackrec_read.c), checked whole.
-- @module callgrind.export.stackrec
local core = require "callgrind.core"
local internal = core.internal

local setmetatable, type = setmetatable, type
local string_format = string.format

local M = {}

--- What is appended to a profile's path to name its record.
M.SUFFIX = ".stacks"

-- per profile: the record's stacks ({ data, events, fns, source }), or
-- false and the reason in WHY, a short one in SHORT (nil: no record)
local CACHE = setmetatable({}, { __mode = "k" })
local WHY = setmetatable({}, { __mode = "k" })
local SHORT = setmetatable({}, { __mode = "k" })

--- The path of a profile's record (its file's path and `.stacks`), or nil
-- for a profile that was not loaded from a file.
-- @usage local path = stackrec.path(prof)
function M.path(prof)
  local name = prof.name
  if type(name) ~= "string" or name:sub(1, 1) == "(" then return nil end
  return name .. M.SUFFIX
end

--- Whether a profile has a record beside it (readable or not).
-- @usage local has_record = stackrec.exists(prof)
function M.exists(prof)
  local path = M.path(prof)
  if not path then return false end
  local f = io.open(path, "rb")
  if not f then return false end
  f:close()
  return true
end

-- The record at path checked against prof: its stacks (as the profiler
-- keeps them: data, events, fns by the record's function index), or nil,
-- why it is refused and that in short.
local function load(prof, path)
  local rec, err, kind = internal.read_stack_record(path)
  if not rec then return nil, err, path .. (kind == "io" and " is unreadable" or " is damaged") end
  local digest = internal.profile_digest(prof)
  if digest ~= rec.profile then
    return nil, string_format("%s is another run's stack record: it belongs to the profile whose digest is %s, "
      .. "and %s's is %s", path, rec.profile, prof.name, digest or "none (it has no end line with a digest)"),
      path .. " is another run's"
  end
  local by = {}
  for f in prof:functions() do by[f.file .. "\0" .. f.name] = f end
  local fns = {}
  for i, file in ipairs(rec.files) do
    local fn = by[file .. "\0" .. rec.names[i]]
    if not fn then
      return nil, string_format("%s: its function %d (%s in %s) is not in %s", path, i, rec.names[i], file, prof.name),
        path .. " does not match the profile"
    end
    fns[i] = fn
  end
  for i, ev in ipairs(rec.events) do
    if prof.events[i] ~= ev then
      return nil, string_format("%s: its events (%s) are not %s's", path, table.concat(rec.events, " "), prof.name),
        path .. " does not match the profile"
    end
  end
  return { data = rec.stacks, events = rec.events, fns = fns, source = path, nfn = #rec.files }
end

--- The stacks of a profile's record, read once per profile: a table
-- `{ data =, events =, fns =, source =, nfn = }` (data: parent, function,
-- a cost per event, a node after another, parent 0 for none; fns: the
-- profile's Function of each of the record's nfn functions; source: the
-- record's path);
-- or nil, why the record is refused (unreadable, cut short, changed,
-- another run's: "PATH[:LINE]: reason") and that in short ("PATH is
-- another run's"); nil alone when there is none.
-- @usage local st, why = stackrec.of(prof)
function M.of(prof)
  local st = CACHE[prof]
  if st ~= nil then return st or nil, WHY[prof], SHORT[prof] end
  if not M.exists(prof) then
    CACHE[prof] = false
    return nil
  end
  local why, short
  st, why, short = load(prof, M.path(prof))
  CACHE[prof], WHY[prof], SHORT[prof] = st or false, why, short
  return st, why, short
end

--- The folded text of a record (`frame;frame;frame cost` lines, one a
-- node with a cost in ev, in the order the profiler made its nodes: what
-- it writes as FILE.folded with `CALLGRIND_STACKS=folded`, byte for
-- byte), built in C from the record without the profile; out given: written
-- there (whole or not at all) instead.
-- @tparam string path the record
-- @param[opt] ev an event name or column (default the first)
-- @return the text (true when out is given), or nil, "path: reason", kind
-- @usage local text, err = stackrec.folded("callgrind.out.stacks")
function M.folded(path, ev, out, max_bytes)
  return internal.stack_record_folded(path, ev or 1, out, max_bytes)
end

return M
