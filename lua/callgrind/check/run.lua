--- Running a command under `valgrind --tool=callgrind` and loading what it
-- wrote: `callgrind.run(argv [, opts])`.
--
-- The run is made as repeatable as the machine allows: address space
-- randomisation is off (`setarch -R`, where it works), the cache
-- simulation has a fixed geometry (I1 and D1 32 KiB 8-way, LL 8 MiB 16-way,
-- 64-byte lines) instead of the host CPU's, stdin is /dev/null unless given,
-- and the program starts from a fixed environment (`env_clear`, the
-- default: PATH, TMPDIR and VALGRIND_LIB when set, and `opts.env`; the
-- size of the caller's environment moves the dynamic loader's count).
-- Every process of the run stays under a supervisor that is a child
-- subreaper (Linux), so a child that calls setsid() is still timed out,
-- reported as left running and ended; the supervisor dies with its caller,
-- ending every process of the run and removing its temporary directory
-- first. What still varies: the program's
-- own sources of variation (time, pids, hash seeds: Lua 5.4 seeds its
-- string hashes per process, so a profile of `lua5.4` itself varies a
-- little between runs), the length of PATH, and valgrind's version.
-- @module callgrind.check.run
local args = require "callgrind.args"
local util = require "callgrind.util"
local loader = require "callgrind.model.load"

local M = {}

local ipairs, pairs, tostring, type = ipairs, pairs, tostring, type
local os_remove, os_tmpname = os.remove, os.tmpname
local string_format, table_concat, table_sort = string.format, table.concat, table.sort
local sh, shq, exists = util.sh, util.shq, util.command_exists

--- The cache geometry `cache_sim` uses (valgrind's option syntax: size,
-- associativity, line size).
M.cache_geometry = { "--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64" }

-- Seconds between SIGTERM and SIGKILL when opts.timeout runs out.
local KILL_AFTER = 5


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


-- A string for the command line: no NUL (sh would cut it there).
local function no_nul(s, what, n)
  if type(s) == "string" and s:find("\0", 1, true) then
    args.fail("run", n, what .. " contains a NUL byte: " .. args.show((s:gsub("\0", "\\0"))), 4)
  end
end

local function check_opts(argv, opts)
  if type(argv) ~= "table" or type(argv[1]) ~= "string" then
    args.fail("run", 1, "array of strings expected: { program, args... }", 3)
  end
  for i, a in ipairs(argv) do
    if type(a) ~= "string" and type(a) ~= "number" then
      args.fail("run", 1, "argv[" .. i .. "] is a " .. type(a), 3)
    end
    no_nul(a, "argv[" .. i .. "]", 1)
  end
  opts = args.options(opts, "run", 2, "run", 3)
  local tc = opts.toggle_collect
  if type(tc) == "table" then
    for i, name in ipairs(tc) do
      if type(name) ~= "string" then
        args.fail("run", 2, "opts.toggle_collect[" .. i .. "] must be a function name", 3)
      end
      no_nul(name, "opts.toggle_collect[" .. i .. "]", 2)
    end
  else
    no_nul(tc, "opts.toggle_collect", 2)
  end
  for k, v in pairs(opts.env or {}) do
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
      args.fail("run", 2, "opts.env key " .. args.show(k) .. " is not a variable name (letters, digits and _, "
        .. "not starting with a digit)", 3)
    end
    if v ~= false and type(v) ~= "string" and type(v) ~= "number" then
      args.fail("run", 2, "opts.env." .. k .. " must be a string, a number or false (unset), got " .. args.show(v), 3)
    end
    no_nul(v, "opts.env." .. k, 2)
  end
  for i, a in ipairs(opts.args or {}) do
    if type(a) ~= "string" then args.fail("run", 2, "opts.args[" .. i .. "] must be a string", 3) end
    no_nul(a, "opts.args[" .. i .. "]", 2)
  end
  for _, k in ipairs { "cwd", "keep", "valgrind" } do no_nul(opts[k], "opts." .. k, 2) end
  local t = opts.timeout
  if t ~= nil and not (t > 0 and t < math.huge) then
    args.fail("run", 2, "opts.timeout must be a positive finite number of seconds, got " .. tostring(t), 3)
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

-- Loads the run's files: one file with loader.load(path); several
-- (threads, dumps, children) with loader.files per process and one
-- loader.load of the list. Returns the profile or nil, a message, and
-- the files loaded.
local function load_files(dir, pids, all)
  if #all == 1 then
    local prof, err, kind = loader.load(all[1])
    return prof, err, kind, all
  end
  local list = {}
  for _, pid in ipairs(pids) do
    local files, err, kind = loader.files(dir .. "/callgrind.out." .. pid)
    if not files then return nil, err, kind or "io" end
    for _, f in ipairs(files) do list[#list + 1] = f end
  end
  -- the processes of one command line (trace_children): one run's files
  -- each, summed on purpose
  local prof, err, kind = loader.load(list, #pids > 1 and { merge = true } or nil)
  return prof, err, kind, list
end

-- The processes of a session other than its leader, as "pid name": from
-- /proc (Linux), else from ps.
local function session_processes(sid)
  local out = {}
  local p = io.popen("cat /proc/[0-9]*/stat 2>/dev/null")
  local text = p and p:read("a") or ""
  if p then p:close() end
  for line in text:gmatch("[^\n]+") do
    -- pid (name) state ppid pgrp session ...; the name may hold ") "
    local pid, name, rest = line:match("^(%d+) %((.*)%) (.*)$")
    local s = rest and rest:match("^%S+ %S+ %S+ (%d+)")
    if s == sid and pid ~= sid then out[#out + 1] = pid .. " " .. name end
  end
  if text == "" then
    p = io.popen("ps -e -o pid=,sid=,comm= 2>/dev/null")
    for line in p and p:lines() or function() end do
      local pid, s, name = line:match("^%s*(%d+)%s+(%d+)%s+(.*)$")
      if s == sid and pid ~= sid then out[#out + 1] = pid .. " " .. name end
    end
    if p then p:close() end
  end
  table_sort(out, function(a, b) return tonumber(a:match("%d+")) < tonumber(b:match("%d+")) end)
  return out
end

-- The variables a cleared environment (opts.env_clear, the default)
-- keeps from the caller's: PATH, so the same programs are found, and,
-- when set, TMPDIR and VALGRIND_LIB (where valgrind writes its temporary
-- files and finds its tools).
local KEPT = { "PATH", "TMPDIR", "VALGRIND_LIB" }
local DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

-- The environment of the run as sh code: a prefix run before `cd` (the
-- caller's environment changed: env_clear = false) and one put before the
-- command (`env -i` and the variables: env_clear, the default).
local function environment(opts)
  local names, vars = {}, {}
  if opts.env_clear == false then
    local out = { "unset LD_PRELOAD;" }
    for k in pairs(opts.env or {}) do names[#names + 1] = k end
    table_sort(names)
    for _, k in ipairs(names) do
      local v = opts.env[k]
      out[#out + 1] = v == false and ("unset " .. k .. ";") or ("export " .. k .. "=" .. shq(v) .. ";")
    end
    return table_concat(out, " ") .. " ", ""
  end
  for _, k in ipairs(KEPT) do
    local v = os.getenv(k)
    if v and v ~= "" then vars[k] = v end
  end
  vars.PATH = vars.PATH or DEFAULT_PATH
  for k, v in pairs(opts.env or {}) do
    if v == false then vars[k] = nil else vars[k] = tostring(v) end
  end
  for k in pairs(vars) do names[#names + 1] = k end
  table_sort(names)
  local words = { "env -i" }
  for _, k in ipairs(names) do words[#words + 1] = shq(k .. "=" .. vars[k]) end
  return "", table_concat(words, " ") .. " "
end

-- The supervisor's report (core.internal.supervise): status, timed out,
-- killed, the processes left running ("pid name").
local function parse_report(report)
  local left = {}
  for pid, name in report:gmatch("\nleft (%d+) ([^\n]*)") do left[#left + 1] = pid .. " " .. name end
  table_sort(left, function(a, b) return tonumber(a:match("%d+")) < tonumber(b:match("%d+")) end)
  return tonumber(report:match("status (%d+)")) or 255, report:match("timeout 1") ~= nil,
    report:match("killed 1") ~= nil, left
end

-- Where no subreaper can keep the children (not Linux): the command in a
-- session of its own under timeout(1); what that session still runs after
-- it exits is reported (a child that leaves the session is not seen).
local function run_in_session(code_for, command, opts, dir)
  local timeout = opts.timeout and string_format("timeout -k %d %g ", KILL_AFTER, opts.timeout) or ""
  local code = code_for(timeout .. command)
  local sidfile = dir .. "/.sid"
  if exists("setsid") then
    code = "setsid -w sh -c " .. shq("echo $$ >" .. shq(sidfile) .. "; " .. code)
  end
  local started = os.time()
  local _, status = sh(code)
  local elapsed = os.time() - started
  local sid = util.read_file(sidfile)
  os_remove(sidfile)
  local left = sid and session_processes(sid:match("%d+")) or {}
  local timed = opts.timeout and (status == 124 or (status == 128 + 9 and elapsed >= opts.timeout))
  return status, timed, timed and status ~= 124, left
end

--- Runs a command under `valgrind --tool=callgrind` and loads its profile.
-- @tparam table argv `{ program, arg1, ... }` (the program is looked up on
--   PATH unless it has a `/`)
-- @tparam[opt] table opts
--   `toggle_collect` (a function name or list: only those functions and
--   what they call are counted; `collect_atstart` then defaults to false),
--   `collect_atstart`, `cache_sim` and `branch_sim` (fixed cache geometry,
--   `run.cache_geometry`), `dump_instr`, `collect_jumps`,
--   `separate_threads`, `trace_children` (booleans), `env_clear` (default
--   true: the program's environment is PATH (the caller's, or
--   /usr/local/bin:/usr/bin:/bin), TMPDIR and VALGRIND_LIB when the caller
--   sets them, and `env`; false: the caller's, LD_PRELOAD unset), `env`
--   (variables to add, keys matching `^[%a_][%w_]*$`; `false` unsets
--   one), `cwd`, `stdin` (a string), `timeout` (seconds, positive and
--   finite: every process of the run gets SIGTERM, then SIGKILL 5 s
--   later), `keep` (a directory to
--   keep the files in: created for this run, or, when it exists already, a
--   fresh `run.XXXXXX` directory is made in it, so runs sharing one `keep`
--   never see each other's files; `info.dir` says which), `valgrind` (the
--   executable), `args` (more valgrind options), `allow_failure` (a
--   non-zero exit is not an error). A NUL byte in any path, argument or
--   value is an argument error.
-- @return Profile and info `{ command, status, stdout, stderr, messages,
--   files, dir, left_running }`, or nil, a message, a kind (`"valgrind"`
--   for a failed run: valgrind missing or failing, a non-zero exit, a
--   timeout, processes left running; `"io"`; or the load's kind) and info
--   (when valgrind ran). The program runs in a session of its own: the
--   processes of that session still running after it exits are a failure
--   ("left N processes running"), listed in `info.left_running`, and are
--   ended (SIGTERM, SIGKILL 5 s later). On Linux every descendant is kept
--   under a supervisor (PR_SET_CHILD_SUBREAPER), so one that calls
--   setsid() or double-forks is seen too; elsewhere the program runs in a
--   session of its own and what leaves the session is not seen. A path
--   starting with `-` (keep, cwd) is passed as `./-...`.
-- @usage local prof, info = assert(callgrind.run({ "./prog", "arg" }, { toggle_collect = "work" }))
function M.run(argv, opts)
  opts = check_opts(argv, opts)
  local valgrind = opts.valgrind or "valgrind"
  if not exists(valgrind) then
    return nil, string_format("valgrind not found: '%s' is not an executable on PATH; install valgrind "
      .. "(Debian/Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind)", valgrind), "valgrind"
  end
  local prog = tostring(argv[1])
  local found
  if prog:find("/", 1, true) then
    local path = prog
    if opts.cwd and prog:sub(1, 1) ~= "/" then path = opts.cwd .. "/" .. prog end
    local q = shq(util.argpath(path))
    found = sh("test -f " .. q .. " && test -x " .. q)
  else
    found = exists(prog)
  end
  if not found then return nil, "program not found: " .. prog, "io" end

  local reserved, dir
  if opts.keep then
    -- a directory this run creates is its own; in one that exists (an
    -- earlier run's, or another run's now) the run takes a fresh one
    dir = opts.keep
    local parent = dir:match("^(.*)/[^/]+/*$")
    if parent and parent ~= "" then sh("mkdir -p " .. shq(util.argpath(parent))) end
    if not sh("mkdir " .. shq(util.argpath(dir)) .. " 2>/dev/null") then
      local p = io.popen("mktemp -d " .. shq(util.argpath(dir .. "/run.XXXXXX")) .. " 2>/dev/null")
      local made = p and p:read("l")
      if p then p:close() end
      if not made or made == "" then return nil, "cannot create a directory in " .. dir, "io" end
      dir = made
    end
  else
    reserved = os_tmpname()
    dir = reserved .. ".d"
    if not sh("mkdir -m 700 " .. shq(dir)) then
      os_remove(reserved)
      return nil, "cannot create the directory " .. dir, "io"
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
  -- a program path (it has a /) that starts with "-" is no option of valgrind's
  if prog:find("/", 1, true) then words[#vopts + 2] = util.argpath(prog) end
  local quoted = {}
  for i, w in ipairs(words) do quoted[i] = shq(w) end
  local stdin = "/dev/null"
  if opts.stdin then
    stdin = dir .. "/stdin"
    local ok, err = util.write_file(stdin, opts.stdin)
    if not ok then
      cleanup()
      return nil, err, "io"
    end
  end
  local command = setarch() .. table_concat(quoted, " ")
  local prefix, clean = environment(opts)
  local function code_for(cmd)
    return prefix .. (opts.cwd and ("cd " .. shq(util.argpath(opts.cwd)) .. " && ") or "") .. "exec " .. clean .. cmd
      .. " <" .. shq(stdin) .. " >" .. shq(dir .. "/stdout") .. " 2>" .. shq(dir .. "/stderr")
  end
  -- a temporary directory of its own goes with the supervisor when the
  -- caller dies (nothing of a `keep` directory does)
  local report = require("callgrind.core").internal.supervise(code_for(command), opts.timeout, KILL_AFTER,
    reserved and dir or nil, reserved)
  local status, timed, killed, left
  if report then
    status, timed, killed, left = parse_report(report)
  else
    status, timed, killed, left = run_in_session(code_for, command, opts, dir)
  end
  local pids, all = profile_files(dir)
  local logs = {}
  for _, name in ipairs(list_dir(dir)) do
    if name:match("^valgrind%.%d+%.log$") then logs[#logs + 1] = util.read_file(dir .. "/" .. name) or "" end
  end
  local info = {
    command = command, status = status, files = all, dir = opts.keep and dir or nil,
    stdout = util.read_file(dir .. "/stdout") or "", stderr = util.read_file(dir .. "/stderr") or "",
    messages = table_concat(logs), left_running = left,
  }
  local err, kind
  if timed and not killed then
    err, kind = string_format("timed out after %g s (terminated): %s", opts.timeout, prog), "valgrind"
  elseif timed then
    err, kind = string_format("timed out after %g s (killed): %s ignored SIGTERM and got SIGKILL %d s later",
      opts.timeout, prog, KILL_AFTER), "valgrind"
  elseif #all == 0 then
    local said = last_lines(info.messages .. "\n" .. info.stderr, 5)
    if status ~= 0 then
      err = string_format("valgrind failed (exit status %d):\n%s", status, said)
    else
      err = "no profile written: valgrind exited with status 0 but wrote no callgrind.out file in " .. dir
    end
    kind = "valgrind"
  elseif status ~= 0 and not opts.allow_failure then
    err = string_format("%s exited with status %d (opts.allow_failure accepts that)", prog, status)
    local tail = last_lines(info.stderr, 5)
    if tail ~= "" then err = err .. "; its stderr ends:\n" .. tail end
    kind = "valgrind"
  elseif #left > 0 then
    err = string_format("%s left %d process%s running after it exited (ended now; not in the profile: wait for "
      .. "them, or trace_children = true and wait):\n  %s", prog, #left, #left == 1 and "" or "es",
      table_concat(left, "\n  "))
    kind = "valgrind"
  end
  local prof
  if not err then
    local loaded
    prof, err, kind, loaded = load_files(dir, pids, all)
    if loaded then info.files = loaded end
  end
  cleanup()
  if not prof then return nil, err, kind or "format", info end
  return prof, info
end

return M
