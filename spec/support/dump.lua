--- A canonical text dump of a loaded profile, for comparing two loaders.
--
-- Used by spec/model_dump_spec.lua (which compares today's loads with the
-- stored dumps in spec/fixtures/dumps/) and by `lua5.4 spec/support/dump.lua
-- write` (which writes those stored dumps). The dump lists, one item a line:
-- the header, events, parts, functions with self costs, calls, cost lines,
-- jumps, totals and warnings. A section longer than `EXACT` lines is stored
-- as its line count, a 64-bit FNV-1a digest of its text and its first
-- `EXACT` lines, which keeps the stored dumps of big files small.
-- @module spec.support.dump

local M = {}

--- Sections longer than this are stored as count + digest + head.
M.EXACT = 40

local function v(x)
  if x == nil then return "-" end
  if math.type(x) == "integer" then return string.format("%d", x) end
  return tostring(x)
end

local function costs(prof, t)
  local out = {}
  for i, ev in ipairs(prof.events) do out[i] = v(t[ev]) end
  return table.concat(out, " ")
end

local function event_map(prof, t)
  if t == nil then return "-" end
  local out = {}
  for _, ev in ipairs(prof.events) do
    if t[ev] ~= nil then out[#out + 1] = ev .. "=" .. v(t[ev]) end
  end
  return table.concat(out, " ")
end

local function fname(fn) return fn and v(fn.index) or "-" end

local function part_line(part)
  local desc = {}
  for k, val in pairs(part.desc or {}) do desc[#desc + 1] = k .. "=" .. val end
  table.sort(desc)
  return table.concat({ "part", v(part.index), v(part.number), v(part.pid), v(part.thread),
    v(part.cmd), "events:" .. table.concat(part.events, ","),
    "desc:" .. table.concat(desc, ";") }, "\t")
end

-- The dump as an array of sections: { name, lines }.
local function sections(prof)
  local hdr = { "name\t" .. v(prof.name), "version\t" .. v(prof.version),
    "creator\t" .. v(prof.creator), "cmd\t" .. v(prof.cmd), "pid\t" .. v(prof.pid),
    "events\t" .. table.concat(prof.events, " ") }
  local parts = {}
  for part in prof:parts() do
    parts[#parts + 1] = part_line(part)
    parts[#parts + 1] = "  summary " .. event_map(prof, part.summary)
    parts[#parts + 1] = "  totals " .. event_map(prof, part.written_totals)
  end
  local function pi(part) return part and v(part.index) or "-" end
  local fns = {}
  for fn in prof:functions() do
    fns[#fns + 1] = table.concat({ v(fn.index), v(fn.name), v(fn.file), v(fn.object),
      costs(prof, fn:self()) }, "\t")
  end
  local calls = {}
  for c in prof:calls() do
    calls[#calls + 1] = table.concat({ fname(c.caller), fname(c.callee), v(c.count), v(c.file),
      v(c.line), v(c.addr), v(c.target_line), v(c.target_addr), pi(c.part),
      costs(prof, c:cost()) }, "\t")
  end
  local lines = {}
  for l in prof:lines() do
    lines[#lines + 1] = table.concat({ fname(l.fn), v(l.file), v(l.line), v(l.addr), pi(l.part),
      costs(prof, l:cost()) }, "\t")
  end
  local jumps = {}
  for j in prof:jumps() do
    jumps[#jumps + 1] = table.concat({ fname(j.from), fname(j.to), v(j.file), v(j.line), v(j.addr),
      v(j.target_file), v(j.target_line), v(j.target_addr), v(j.conditional), v(j.count),
      v(j.executed), pi(j.part) }, "\t")
  end
  return {
    { "header", hdr }, { "parts", parts }, { "functions", fns }, { "calls", calls },
    { "lines", lines }, { "jumps", jumps }, { "totals", { costs(prof, prof:totals()) } },
    { "warnings", prof:warnings() },
  }
end

--- 64-bit FNV-1a of a string, as 16 hex digits.
function M.digest(s)
  local h = -3750763034362895579 -- 0xcbf29ce484222325
  for i = 1, #s do
    h = (h ~ s:byte(i)) * 1099511628211
  end
  return string.format("%016x", h)
end

--- The dump of a profile, or of a failed load (`nil, err`), as one string.
-- @param prof a Profile, or nil
-- @param err the load's message when prof is nil
function M.dump(prof, err)
  if not prof then return "error\t" .. tostring(err) .. "\n" end
  local out = {}
  for _, sec in ipairs(sections(prof)) do
    local name, ls = sec[1], sec[2]
    if #ls > M.EXACT then
      out[#out + 1] = ("== %s %d digest %s"):format(name, #ls, M.digest(table.concat(ls, "\n")))
      for i = 1, M.EXACT do out[#out + 1] = ls[i] end
    else
      out[#out + 1] = ("== %s %d"):format(name, #ls)
      for _, l in ipairs(ls) do out[#out + 1] = l end
    end
  end
  return table.concat(out, "\n") .. "\n"
end

--- Loads a file and dumps it: strictly, and when that fails, leniently too.
-- @param path the profile file
-- @param opts more load options (`threads`, `chunk`), or nil
function M.dump_file(path, opts)
  local callgrind = require "callgrind"
  local strict, lenient = { lenient = false }, { lenient = true }
  for k, x in pairs(opts or {}) do strict[k], lenient[k] = x, x end
  local prof, err = callgrind.load(path, strict)
  local s = M.dump(prof, err)
  if prof then prof:close() else
    local lprof, lerr = callgrind.load(path, lenient)
    s = s .. "== lenient\n" .. M.dump(lprof, lerr)
    if lprof then lprof:close() end
  end
  return s
end

--- Every input the stored dumps cover: { key, path } pairs. The key names
-- the dump file: spec/fixtures/dumps/KEY.dump.
-- @param root the repository root ("." from there)
function M.inputs(root)
  root = root or "."
  local list = {}
  local function add(prefix, dir, filter)
    local p = io.popen("cd " .. dir .. " 2>/dev/null && find . -type f | LC_ALL=C sort")
    for f in p:lines() do
      f = f:gsub("^%./", "")
      if not filter or filter(f) then
        list[#list + 1] = { prefix .. f:gsub("/", "__"), dir .. "/" .. f }
      end
    end
    p:close()
  end
  add("fixture__", root .. "/spec/fixtures", function(f)
    return not f:find("/") and f:find("%.callgrind$")
  end)
  add("fuzz__", root .. "/spec/fixtures/fuzz")
  add("corpus__", root .. "/spec/corpus", function(f)
    -- profile data, not the oracle outputs next to them
    return not (f:find("%.exp$") or f:find("%.md$") or f:find("%.snap%.expected$")
      or f:find("exp_stacks$") or f:find("PROVENANCE") or f:find("exp_map$"))
  end)
  return list
end

-- `lua5.4 spec/support/dump.lua write`: (re)writes the stored dumps.
if arg and arg[0] and arg[0]:find("dump%.lua$") and arg[1] == "write" then
  package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
  package.cpath = "build/?.so;" .. package.cpath
  os.execute("mkdir -p spec/fixtures/dumps")
  for _, item in ipairs(M.inputs(".")) do
    local f = assert(io.open("spec/fixtures/dumps/" .. item[1] .. ".dump", "wb"))
    f:write(M.dump_file(item[2]))
    f:close()
  end
end

return M
