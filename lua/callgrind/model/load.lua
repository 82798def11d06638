--- The one loader of the Lua layer: `callgrind.load`, `callgrind.parse`
-- and `callgrind.files` (the C core reads; every loaded profile gets its
-- derived events here), and `open`, the resolution of names the command
-- line uses (a name is its thread and dump files). Every module that loads
-- a profile (the face, the profiler, running valgrind, baselines, the
-- command line) loads it through this one.
--
-- Files of different runs (a different `pid:` where both give one, or a
-- different `cmd:`) are never summed silently: `load` and `files` refuse
-- them (kind "runs", the message lists the runs and how to pick one)
-- unless `opts.merge` is true.
-- @module callgrind.model.load
local core = require "callgrind.core"
local args = require "callgrind.args"
local events = require "callgrind.model.events"

local ipairs, type, tostring, tonumber = ipairs, type, tostring, tonumber
local io_open, string_format, table_concat = io.open, string.format, table.concat

local M = {}

-- Every loaded profile gets its derived events (file formulas, presets).
local function attach(prof, ...)
  if prof then events.attach(prof) end
  return prof, ...
end

-- Whether the file at path can be read and gives no byte (a /proc file's
-- size is 0 but it reads whole; a directory opens but its read fails).
local function is_empty(path)
  local f = io_open(path, "rb")
  if not f then return false end
  local ok, byte, err = pcall(f.read, f, 1)
  f:close()
  return ok and byte == nil and err == nil
end

-- The run a part or file belongs to, as a table { pid, cmd, files }.
-- Two runs differ when both give a pid and the pids differ, or both give a
-- command and the commands differ.
local function differ(a, b)
  return (a.pid and b.pid and a.pid ~= b.pid) or (a.cmd and b.cmd and a.cmd ~= b.cmd) or false
end

-- Groups items { pid, cmd, file } into runs: a list of { pid, cmd, files }.
local function group_runs(items)
  local runs = {}
  for _, it in ipairs(items) do
    local found
    for _, r in ipairs(runs) do
      if not differ(r, it) then found = r break end
    end
    if not found then
      found = { pid = it.pid, cmd = it.cmd, files = {} }
      runs[#runs + 1] = found
    end
    found.pid, found.cmd = found.pid or it.pid, found.cmd or it.cmd
    local files = found.files
    if it.file and files[#files] ~= it.file then files[#files + 1] = it.file end
  end
  return runs
end

--- The message refusing several runs (what `load.runs` gives): each run's
-- pid, command and first files, and the two ways on.
-- @usage error(load.runs_message(load.runs(prof)))
local function runs_message(runs)
  local lines = { string_format("files of %d different runs, not summed:", #runs) }
  for _, r in ipairs(runs) do
    local files = r.files
    local shown = #files > 3 and { files[1], files[2], "... " .. (#files - 2) .. " more" } or files
    lines[#lines + 1] = string_format("  pid %s, command %s: %s", r.pid and tostring(r.pid) or "?",
      r.cmd or "?", table_concat(shown, ", "))
  end
  lines[#lines + 1] = "load one run's files (for instance " .. (runs[1].files[1] or "?")
    .. "), or pass merge = true (the command line: --merge) to sum the runs"
  return table_concat(lines, "\n")
end
M.runs_message = runs_message

--- The runs a profile's parts come from: a list of `{ pid, cmd, files }`
-- (one entry unless files of different runs were merged).
-- @usage if #load.runs(prof) > 1 then print("merged") end
function M.runs(prof)
  local items = {}
  for part in prof:parts() do
    items[#items + 1] = { pid = part.pid, cmd = part.cmd, file = part.file }
  end
  return group_runs(items)
end

--- What a profile merged from files of different runs says it is (nil
-- for one run): "2 runs summed (pid 1 cmd a; pid 2 cmd b)".
-- @usage print(load.merged(prof))
function M.merged(prof)
  local runs = M.runs(prof)
  if #runs < 2 then return nil end
  local each = {}
  for i, r in ipairs(runs) do
    if i > 4 then each[#each + 1] = "..." break end
    each[i] = string_format("pid %s: %s", r.pid and tostring(r.pid) or "?", r.cmd or "?")
  end
  return string_format("%d runs summed (%s)", #runs, table_concat(each, "; "))
end

-- The pid: and cmd: of a file's header (its first 64 KiB, up to the first
-- cost line); nothing for a compressed file.
local function header_of(path)
  local f = io_open(path, "rb")
  if not f then return {} end
  local head = f:read(65536) or ""
  f:close()
  local b1, b2 = head:byte(1, 2)
  if (b1 == 0x1f and b2 == 0x8b) or (b1 == 0x28 and b2 == 0xb5) or (b1 == 0xfd and b2 == 0x37) then return {} end
  head = "\n" .. head
  local stop = head:find("\nfn=") or #head
  head = head:sub(1, stop)
  local pid = head:match("\npid:%s*(%d+)")
  return { pid = pid and math.tointeger(tonumber(pid)), cmd = head:match("\ncmd:%s*([^\n]*)"), file = path }
end

-- A profile loaded from several files, refused when they are of
-- different runs (unless opts.merge).
local function check_runs(prof, opts)
  if not prof or (opts and opts.merge) then return prof end
  local runs = M.runs(prof)
  if #runs > 1 then
    prof:close()
    return nil, runs_message(runs), "runs"
  end
  return prof
end

--- Loads a profile from a file, or from several files as one profile.
-- @usage local prof = assert(load.load("callgrind.out.1234"))
function M.load(path, opts)
  args.options(opts, "load", 2, "load")
  local prof, err, kind = core.load(path, opts)
  if not prof then
    -- an empty file says so (the core's words are about a missing events: line)
    if type(path) == "string" and kind == "format" and is_empty(path) then
      return nil, path .. ": empty file", "format"
    end
    return nil, err, kind
  end
  if type(path) == "table" then
    local p2, err2, kind2 = check_runs(prof, opts)
    if not p2 then return nil, err2, kind2 end
  end
  return attach(prof)
end

--- The files one valgrind run wrote for a name (refused when they are of
-- different runs, unless opts.merge).
-- @usage local paths = load.files("callgrind.out.1234")
function M.files(path, opts)
  args.options(opts, "files", 2, "files")
  local list, err, kind = core.files(path)
  if not list or #list < 2 or (opts and opts.merge) then return list, err, kind end
  local items = {}
  for i, p in ipairs(list) do items[i] = header_of(p) end
  local runs = group_runs(items)
  if #runs > 1 then return nil, runs_message(runs), "runs" end
  return list
end

--- The profile of some names, as the command line opens them: each name
-- is its run's thread and dump files (`files`), whether or not the name
-- itself exists; an empty file beside its siblings is left out, an empty
-- file alone is "empty file"; files of different runs are refused unless
-- opts.merge. Returns the profile and the files it was loaded from, or nil,
-- a message and a kind.
-- @usage local prof = assert(load.open({ "callgrind.out.1234" }))
function M.open(names, opts)
  if type(names) == "string" then names = { names } end
  local list, seen = {}, {}
  local function add(p)
    if not seen[p] then seen[p] = true; list[#list + 1] = p end
  end
  for _, name in ipairs(names) do
    local found, err, kind = M.files(name, opts and { merge = opts.merge } or nil)
    if not found then
      -- a directory that cannot be read: the name itself says why
      if kind ~= "io" then return nil, err, kind end
      found = {}
    end
    if #found > 0 then
      for _, p in ipairs(found) do add(p) end
    elseif is_empty(name) then
      return nil, name .. ": empty file", "format"
    else
      add(name)   -- no events: line near its start, or missing: the load says why
    end
  end
  if #list == 0 then return nil, "no profile given", "io" end
  local prof, err, kind = M.load(#list == 1 and list[1] or list, opts)
  if not prof then return nil, err, kind end
  return prof, list
end

--- Loads a profile from a string.
-- @usage local prof = assert(load.parse("events: Ir\nfn=main\n1 5\n"))
function M.parse(text, name, opts)
  if type(name) == "table" and opts == nil then
    args.options(name, "parse", 2, "parse")
  else
    args.options(opts, "parse", 3, "parse")
  end
  return attach(core.parse(text, name, opts))
end

return M
