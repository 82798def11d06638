--- Running a command under `valgrind --tool=callgrind` and loading what it
-- wrote: `callgrind.run(argv [, opts])`.
--
-- The run is made as repeatable as the machine allows: address space
-- randomisation is off (`setarch -R`, where it works), the cache
-- simulation has a fixed geometry (I1 and D1 32 KiB 8-way, LL 8 MiB 16-way,
-- 64-byte lines) instead of the host CPU's, stdin is /dev/null unless given,
-- and LD_PRELOAD is unset unless `opts.env` sets it. What still varies: the
-- environment's size (it shifts the stack: pass `env` to pin variables),
-- the program's own sources of variation (time, pids, hash seeds: Lua 5.4
-- seeds its string hashes from the clock and an address, so a profile of
-- `lua5.4` itself varies a little between runs), and valgrind's version.
-- @module callgrind.run
local M = {}

local error, ipairs, pairs, tostring, type = error, ipairs, pairs, tostring, type
local io_open, os_execute, os_remove, os_tmpname = io.open, os.execute, os.remove, os.tmpname
local string_format, table_concat, table_sort = string.format, table.concat, table.sort

--- The cache geometry `cache_sim` uses (valgrind's option syntax: size,
-- associativity, line size).
M.cache_geometry = { "--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64" }

-- Quotes a string for sh.
local function shq(s)
  return "'" .. (tostring(s):gsub("'", [['\'']])) .. "'"
end

local function read_all(path)
  local f = io_open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write_all(path, s)
  local f, err = io_open(path, "wb")
  if not f then return nil, err end
  local ok, werr = f:write(s)
  f:close()
  if not ok then return nil, werr end
  return true
end

-- Runs sh code; true when it exits 0, else false and the exit code.
local function sh(code)
  local ok, how, n = os_execute(code)
  if ok then return true, 0 end
  if how == "signal" then return false, 128 + n end
  return false, n
end

local function exists(cmd)
  return (sh("command -v " .. shq(cmd) .. " >/dev/null 2>&1"))
end

-- The setarch prefix that turns address randomisation off, or "" (cached:
-- the probe runs once per process).
local setarch_prefix
local function setarch()
  if setarch_prefix == nil then
    setarch_prefix = ""
    for _, p in ipairs { "setarch -R", "setarch \"$(uname -m)\" -R" } do
      if sh(p .. " true >/dev/null 2>&1") then
        setarch_prefix = p .. " "
        break
      end
    end
  end
  return setarch_prefix
end

-- The last n non-empty lines of a text.
local function last_lines(text, n)
  local lines = {}
  for l in (text or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  local first = #lines - n + 1
  if first < 1 then first = 1 end
  return table_concat(lines, "\n", first)
end

local function list_dir(dir)
  local names = {}
  local p = io.popen("ls -1 " .. shq(dir) .. " 2>/dev/null")
  if p then
    for name in p:lines() do names[#names + 1] = name end
    p:close()
  end
  table_sort(names)
  return names
end

local function check_opts(argv, opts)
  if type(argv) ~= "table" or type(argv[1]) ~= "string" then
    error("bad argument #1 to 'run' (array of strings expected: { program, args... })", 3)
  end
  for i, a in ipairs(argv) do
    if type(a) ~= "string" and type(a) ~= "number" then
      error("bad argument #1 to 'run' (argv[" .. i .. "] is a " .. type(a) .. ")", 3)
    end
  end
  if opts ~= nil and type(opts) ~= "table" then error("bad argument #2 to 'run' (table expected)", 3) end
  opts = opts or {}
  local tc = opts.toggle_collect
  if tc ~= nil and type(tc) ~= "string" and type(tc) ~= "table" then
    error("bad argument #2 to 'run' (opts.toggle_collect must be a function name or a list of them)", 3)
  end
  if opts.env ~= nil and type(opts.env) ~= "table" then
    error("bad argument #2 to 'run' (opts.env must be a table)", 3)
  end
  if opts.args ~= nil and type(opts.args) ~= "table" then
    error("bad argument #2 to 'run' (opts.args must be an array of strings)", 3)
  end
  if opts.timeout ~= nil and (type(opts.timeout) ~= "number" or opts.timeout <= 0) then
    error("bad argument #2 to 'run' (opts.timeout must be a positive number of seconds)", 3)
  end
  if opts.stdin ~= nil and type(opts.stdin) ~= "string" then
    error("bad argument #2 to 'run' (opts.stdin must be a string)", 3)
  end
  return opts
end

-- valgrind's options for opts.
local function valgrind_options(opts, dir)
  local o = { "--tool=callgrind", "--callgrind-out-file=" .. dir .. "/callgrind.out.%p",
    "--log-file=" .. dir .. "/valgrind.%p.log" }
  local function yes(opt, v) if v ~= nil then o[#o + 1] = opt .. "=" .. (v and "yes" or "no") end end
  local tc = opts.toggle_collect
  if type(tc) == "string" then tc = { tc } end
  for _, name in ipairs(tc or {}) do o[#o + 1] = "--toggle-collect=" .. name end
  local atstart = opts.collect_atstart
  if atstart == nil and tc then atstart = false end
  yes("--collect-atstart", atstart)
  if opts.cache_sim then
    o[#o + 1] = "--cache-sim=yes"
    for _, g in ipairs(M.cache_geometry) do o[#o + 1] = g end
  end
  if opts.branch_sim then o[#o + 1] = "--branch-sim=yes" end
  yes("--dump-instr", opts.dump_instr)
  yes("--collect-jumps", opts.collect_jumps)
  yes("--separate-threads", opts.separate_threads)
  yes("--trace-children", opts.trace_children)
  for _, a in ipairs(opts.args or {}) do o[#o + 1] = tostring(a) end
  return o
end

-- The files of the run, grouped by process: { { base, names... }, ... }
local function profile_files(dir)
  local by_pid, pids, all = {}, {}, {}
  for _, name in ipairs(list_dir(dir)) do
    local pid = name:match("^callgrind%.out%.(%d+)")
    if pid then
      if not by_pid[pid] then
        by_pid[pid] = true
        pids[#pids + 1] = pid
      end
      all[#all + 1] = dir .. "/" .. name
    end
  end
  table_sort(pids, function(a, b) return tonumber(a) < tonumber(b) end)
  return pids, all
end

-- Loads the run's files: one file with callgrind.load(path); several
-- (threads, dumps, children) with callgrind.files per process and one
-- callgrind.load of the list. Returns the profile or nil, a message, and
-- the files loaded.
local function load_files(callgrind, dir, pids, all)
  if #all == 1 then
    local prof, err = callgrind.load(all[1])
    return prof, err, all
  end
  if not callgrind.files then
    return nil, string_format("this run wrote %d files (%s) and this version of callgrind cannot load several "
      .. "files as one profile", #all, table_concat(all, ", "))
  end
  local list = {}
  for _, pid in ipairs(pids) do
    local files, err = callgrind.files(dir .. "/callgrind.out." .. pid)
    if not files then return nil, err end
    for _, f in ipairs(files) do list[#list + 1] = f end
  end
  local prof, err = callgrind.load(list)
  return prof, err, list
end

--- Runs a command under `valgrind --tool=callgrind` and loads its profile.
-- @tparam table argv `{ program, arg1, ... }` (the program is looked up on
--   PATH unless it has a `/`)
-- @tparam[opt] table opts
--   `toggle_collect` (a function name or list: only those functions and
--   what they call are counted; `collect_atstart` then defaults to false),
--   `collect_atstart`, `cache_sim` and `branch_sim` (fixed cache geometry,
--   `run.cache_geometry`), `dump_instr`, `collect_jumps`,
--   `separate_threads`, `trace_children` (booleans), `env` (variables to
--   set; `false` unsets one), `cwd`, `stdin` (a string), `timeout`
--   (seconds), `keep` (a directory to keep the files in, created if needed;
--   the callgrind.out.* files of an earlier run there are removed first;
--   else they go to a temporary directory that is removed), `valgrind` (the executable),
--   `args` (more valgrind options), `allow_failure` (a non-zero exit is
--   not an error)
-- @return Profile and info `{ command, status, stdout, stderr, messages,
--   files, dir }`, or nil, a message and info (when valgrind ran)
-- @usage local prof, info = assert(callgrind.run({ "./prog", "arg" }, { toggle_collect = "work" }))
function M.run(argv, opts)
  opts = check_opts(argv, opts)
  local callgrind = require "callgrind"
  local valgrind = opts.valgrind or "valgrind"
  if not exists(valgrind) then
    return nil, string_format("valgrind not found: '%s' is not an executable on PATH; install valgrind "
      .. "(Debian/Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind)", valgrind)
  end
  local prog = tostring(argv[1])
  local found
  if prog:find("/", 1, true) then
    local path = prog
    if opts.cwd and prog:sub(1, 1) ~= "/" then path = opts.cwd .. "/" .. prog end
    found = sh("test -f " .. shq(path) .. " && test -x " .. shq(path))
  else
    found = exists(prog)
  end
  if not found then return nil, "program not found: " .. prog end

  local reserved, dir
  if opts.keep then
    dir = tostring(opts.keep)
    if not sh("mkdir -p " .. shq(dir)) then return nil, "cannot create the directory " .. dir end
    for _, name in ipairs(list_dir(dir)) do
      if name:match("^callgrind%.out%.") or name:match("^valgrind%.%d+%.log$") then os_remove(dir .. "/" .. name) end
    end
  else
    reserved = os_tmpname()
    dir = reserved .. ".d"
    if not sh("mkdir -m 700 " .. shq(dir)) then
      os_remove(reserved)
      return nil, "cannot create the directory " .. dir
    end
  end
  if dir:sub(1, 1) ~= "/" then
    local p = io.popen("pwd")
    dir = p:read("l") .. "/" .. dir
    p:close()
  end
  local function cleanup()
    if reserved then
      sh("rm -rf " .. shq(dir))
      os_remove(reserved)
    end
  end

  local vopts = valgrind_options(opts, dir)
  local words = { valgrind }
  for _, o in ipairs(vopts) do words[#words + 1] = o end
  for _, a in ipairs(argv) do words[#words + 1] = tostring(a) end
  local quoted = {}
  for i, w in ipairs(words) do quoted[i] = shq(w) end
  local env = { "unset LD_PRELOAD;" }
  local names = {}
  for k in pairs(opts.env or {}) do names[#names + 1] = k end
  table_sort(names)
  for _, k in ipairs(names) do
    local v = opts.env[k]
    if v == false then
      env[#env + 1] = "unset " .. k .. ";"
    else
      env[#env + 1] = "export " .. k .. "=" .. shq(v) .. ";"
    end
  end
  local stdin = "/dev/null"
  if opts.stdin then
    stdin = dir .. "/stdin"
    local ok, err = write_all(stdin, opts.stdin)
    if not ok then
      cleanup()
      return nil, err
    end
  end
  local timeout = opts.timeout and string_format("timeout -k 5 %g ", opts.timeout) or ""
  local command = setarch() .. timeout .. table_concat(quoted, " ")
  local code = table_concat(env, " ") .. (opts.cwd and ("cd " .. shq(opts.cwd) .. " && ") or "")
    .. command .. " <" .. shq(stdin) .. " >" .. shq(dir .. "/stdout") .. " 2>" .. shq(dir .. "/stderr")
  local _, status = sh(code)

  local pids, all = profile_files(dir)
  local logs = {}
  for _, name in ipairs(list_dir(dir)) do
    if name:match("^valgrind%.%d+%.log$") then logs[#logs + 1] = read_all(dir .. "/" .. name) or "" end
  end
  local info = {
    command = command, status = status, files = all, dir = opts.keep and dir or nil,
    stdout = read_all(dir .. "/stdout") or "", stderr = read_all(dir .. "/stderr") or "",
    messages = table_concat(logs),
  }
  local err
  if opts.timeout and status == 124 then
    err = string_format("timed out after %g s: %s", opts.timeout, prog)
  elseif #all == 0 then
    local said = last_lines(info.messages .. "\n" .. info.stderr, 5)
    if status ~= 0 then
      err = string_format("valgrind failed (exit status %d):\n%s", status, said)
    else
      err = "no profile written: valgrind exited with status 0 but wrote no callgrind.out file in " .. dir
    end
  elseif status ~= 0 and not opts.allow_failure then
    err = string_format("%s exited with status %d (opts.allow_failure accepts that)", prog, status)
    local tail = last_lines(info.stderr, 5)
    if tail ~= "" then err = err .. "; its stderr ends:\n" .. tail end
  end
  local prof
  if not err then
    local loaded
    prof, err, loaded = load_files(callgrind, dir, pids, all)
    if loaded then info.files = loaded end
  end
  cleanup()
  if not prof then return nil, err, info end
  return prof, info
end

return M
