--- Named baselines: profiles kept as callgrind files (written by
-- `prof:write`) in a directory, and checked against with limits.
--
-- The directory is `opts.dir`, else the environment variable
-- `CALLGRIND_BASELINE_DIR`, else `spec/baselines` under the project root:
-- the nearest directory, from the working directory upward, that holds a
-- `.busted` file; else `spec/baselines` under the working directory.
-- Baseline NAME is the file `NAME.callgrind` there.
--
-- Modes: by default the first check of a name saves the profile and
-- passes with a notice. With `CI` set (to anything but "", "0" or
-- "false") or `CALLGRIND_BASELINES=require`, a missing baseline fails
-- instead, saying where it was looked for and how to create it.
-- `CALLGRIND_BASELINES=update` (or the older `CALLGRIND_UPDATE_BASELINES=1`,
-- or `opts.update = true`) replaces baselines with the new profiles.
--
-- A baseline is written canonically (`prof:write`), with the paths under
-- the program's build directory (the directory of the executable it ran)
-- or the project root (the `.busted` directory, else the working
-- directory) made relative to it and no `pid:` line (several parts keep
-- theirs numbered 1, 2... by process, as KCachegrind labels parts by
-- them), so re-recording the same numbers gives the same bytes. It is written to a temporary file in the
-- same directory, synced and renamed into place, under an exclusive lock
-- (`flock(2)`) on the directory: concurrent updaters never mix files,
-- and a reader sees the old file or the new one, whole.
-- A baseline with lost data (cut short, or costs that do not add up to
-- `totals:`) is refused. When a check fails, the new profile is kept
-- beside the baseline as `NAME.new.callgrind`; a passing check removes it.
-- @module callgrind.check.baseline
local args = require "callgrind.args"
local check = require "callgrind.check.limits"
local record = require "callgrind.check.record"
local util = require "callgrind.util"
local loader = require "callgrind.model.load"
local write = require "callgrind.export.write"
local commas = require("callgrind.model.report").commas

local ipairs, type = ipairs, type
local string_format, table_concat = string.format, table.concat

local M = {}

local shq, exists, basename = util.shq, util.file_exists, util.basename

local function set(v) return v ~= nil and v ~= "" and v ~= "0" and v ~= "false" end

--- The working directory (as `pwd` says).
-- @usage print(baseline.cwd())
function M.cwd()
  local p = io.popen("pwd 2>/dev/null")
  local dir = p and p:read("l")
  if p then p:close() end
  return dir or "."
end

--- The project root: the nearest directory, from the working directory
-- upward, that holds a `.busted` file; nil when there is none.
-- @usage print(baseline.root())
function M.root()
  local dir = M.cwd()
  while dir and dir ~= "" do
    if exists(dir .. "/.busted") then return dir end
    if dir == "/" then break end
    dir = dir:match("^(.*)/[^/]*$")
    if dir == "" then dir = "/" end
  end
  return nil
end

--- The directory baselines are kept in, and where it came from (for
-- messages).
-- @tparam[opt] table opts `dir`
-- @return the directory, and how it was found
-- @usage print(baseline.dir())  -- /home/me/project/spec/baselines  the .busted directory's
function M.dir(opts)
  if opts and opts.dir then return opts.dir, "opts.dir" end
  local env = os.getenv("CALLGRIND_BASELINE_DIR")
  if env and env ~= "" then return env, "$CALLGRIND_BASELINE_DIR" end
  local root = M.root()
  if root then
    if root == M.cwd() then return "spec/baselines", "the project root, holding .busted: " .. root end
    return root .. "/spec/baselines", "the project root, holding .busted: " .. root
  end
  return "spec/baselines", "the working directory (no .busted in it or above it)"
end

--- The file of baseline NAME.
-- @usage baseline.path("parse", { dir = "perf" }) --> "perf/parse.callgrind"
function M.path(name, opts)
  return (M.dir(opts)) .. "/" .. name .. ".callgrind"
end

--- The mode: "update" (`opts.update`, `CALLGRIND_BASELINES=update` or
-- `CALLGRIND_UPDATE_BASELINES` set to anything but "", "0", "false"),
-- "require" (`CALLGRIND_BASELINES=require`, or `CI` set to anything but
-- "", "0", "false") or "save" (a missing baseline is saved).
-- @usage if baseline.mode() == "require" then print("CI: baselines must exist") end
function M.mode(opts)
  if opts and opts.update ~= nil then
    if opts.update then return "update" end
  else
    local b = os.getenv("CALLGRIND_BASELINES")
    if b == "update" or set(os.getenv("CALLGRIND_UPDATE_BASELINES")) then return "update" end
    if b == "require" then return "require" end
    if b ~= nil and b ~= "" and b ~= "save" then
      error(string_format("CALLGRIND_BASELINES=%s: expected update, require or save", b), check.user_level())
    end
  end
  if set(os.getenv("CI")) then return "require" end
  return "save"
end

--- Is updating on (`M.mode(opts) == "update"`)?
-- @usage if baseline.updating() then print("replacing baselines") end
function M.updating(opts)
  return M.mode(opts) == "update"
end

-- A command with the directories of its words dropped: a moved checkout
-- runs the same command.
local function plain_cmd(cmd)
  if cmd == nil then return nil end
  local words = {}
  for w in cmd:gmatch("%S+") do words[#words + 1] = w:match("([^/]*)$") end
  return table_concat(words, " ")
end


-- The match key for profiles of two commands: as diff's default, with
-- each profile's own program (the first word of its command) read as
-- one object, so build/prog-O2 and build/prog-O0 compare function by
-- function.
local function program_key(old, new)
  local prog = {}
  for _, p in ipairs { old, new } do prog[p] = basename(p.cmd and p.cmd:match("^%s*(%S+)")) end
  return function(fn)
    local ob = basename(fn.object)
    if ob ~= "" and ob == prog[fn.profile] then ob = "\1program" end
    return fn.name .. "\0" .. basename(fn.file) .. "\0" .. ob
  end
end

local NAME_LINE = { ob = true, cob = true, fl = true, fi = true, fe = true, cfi = true, cfl = true }

-- The program's build directory in a written profile's text: the
-- directory of the executable it ran (cmd:'s first word when absolute,
-- else the absolute ob= path of that name); nil when there is none.
local function build_dir(text)
  local prog = text:match("^cmd:%s*(%S+)") or text:match("\ncmd:%s*(%S+)")
  if not prog then return nil end
  if prog:sub(1, 1) == "/" then return prog:match("^(.+)/[^/]*$") end
  local name = prog:match("([^/]*)$")
  for path in text:gmatch("\nc?ob=[^\n/]*(/[^\n]*)") do
    local dir, base = path:match("^(.+)/([^/]*)$")
    if base == name then return dir end
  end
  return nil
end

--- A written profile's text made canonical for a baseline: no `pid:`
-- lines (several parts: each process numbered 1, 2... in order), and
-- the paths (in `ob=`, `fl=`, `fi=`, `fe=` ... and `cmd:`)
-- under the program's build directory (the directory of the executable
-- it ran) or under root made relative to it (the longer one first), so
-- the same numbers give the same bytes wherever the program was built.
-- @usage text = baseline.canonical(text, "/home/me/project")
function M.canonical(text, root)
  local prefixes = {}
  for _, dir in ipairs { build_dir(text), root } do
    if dir and dir ~= "/" then prefixes[#prefixes + 1] = dir:gsub("/+$", "") .. "/" end
  end
  table.sort(prefixes, function(a, b) return #a > #b end)
  local function rel(path)
    for _, prefix in ipairs(prefixes) do
      if path:sub(1, #prefix) == prefix and #path > #prefix then return path:sub(#prefix + 1) end
    end
    return path
  end
  -- pid: lines: none for one part; for several, each process numbered 1,
  -- 2... in order (the writer's default), for KCachegrind labels parts by
  -- them
  local npid, pids = 0, {}
  for pid in text:gmatch("\npid:%s*(%d+)") do
    npid = npid + 1
    if not pids[pid] then pids[#pids + 1] = pid; pids[pid] = #pids end
  end
  local out = {}
  for line in (text .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do
    local key, rest = line:match("^(%a+)=(.*)$")
    if key and NAME_LINE[key] then
      local id, path = rest:match("^(%(%d+%) )(.*)$")
      if id then
        line = key .. "=" .. id .. rel(path)
      elseif rest:sub(1, 1) ~= "(" then
        line = key .. "=" .. rel(rest)
      end
    elseif line:match("^cmd:") then
      line = line:gsub("%S+", function(w) return rel(w) end)
    elseif line:match("^pid:") then
      local pid = line:match("^pid:%s*(%d+)")
      line = npid > 1 and pid and ("pid: " .. pids[pid]) or nil
    elseif line:match("^# end digest=") then
      line = nil
    end
    if line then out[#out + 1] = line end
  end
  -- the body changed: its digest is made anew
  local body = table_concat(out, "\n") .. "\n"
  if text:match("\n# end digest=fnv1a64:%x+\n?$") then
    return body .. require("callgrind.core").internal.digest_line(body)
  end
  return body
end

--- Writes a profile to path for a baseline: `prof:write`'s canonical
-- text made canonical for a baseline too (`M.canonical`), written
-- atomically (`callgrind.write_file_atomic`: a temporary file in the same
-- directory, synced, renamed into place; on any failure the old file
-- stays whole and no temporary file is left).
-- @return true, or nil, a message and a kind
-- @usage assert(baseline.write(prof, "spec/baselines/parse.callgrind"))
function M.write(prof, path, root)
  local f, ferr = io.tmpfile()
  if not f then return nil, "a temporary file: " .. tostring(ferr), "io" end
  local ok, err, kind = prof:write(f)
  local text
  if ok then
    f:seek("set")
    text = f:read("a")
  end
  f:close()
  if not ok then return nil, path .. ": " .. tostring(err), kind end
  return write.write_file_atomic(path, M.canonical(text, root))
end

-- The lost data of a baseline: its lossy warnings.
local function lost_data(base)
  return check.lossy_warnings(base)
end

local function save(name, prof, path, opts, how, ctx)
  local dir = M.dir(opts)
  -- a profile that lost costs, or over an absolute bound, is no baseline
  local ok, msg = check.compare(prof, prof, ctx.limits, opts, { fname = "within_baseline", no_record = true })
  if not ok then return false, string_format("baseline %s not saved:\n%s", name, msg) end
  local wok, err = M.write(prof, path, ctx.root)
  if not wok then return false, string_format("baseline %s not saved: %s", name, err) end
  os.remove(dir .. "/" .. name .. ".new.callgrind")
  local totals = {}
  for _, ev in ipairs(prof.events) do totals[#totals + 1] = ev .. " " .. commas(prof:total(ev)) end
  return true, string_format("baseline %s %s: %s (%s)", name, how, path, table_concat(totals, ", ")), true
end


--- Checks a profile against baseline NAME with limits (as for
-- `check.no_regression`); saves it on first use or when updating (see the
-- module's modes).
-- @tparam string name letters, digits, `_`, `-`, `.`
-- @param prof Profile
-- @tparam table limits e.g. `{ Ir = "5%" }`
-- @tparam[opt] table opts `dir`, `update`, `same_command` (a baseline of
--   another command fails instead of being compared with a note), `quiet`
--   (for the assertion: no notice on stderr), and the options of
--   `check.no_regression` (`match`, `allow_warnings`, `top` ...)
-- @return ok, message, saved (true when the baseline was written)
-- @usage local ok, msg = baseline.check("parse", prof, { Ir = "5%" })
function M.check(name, prof, limits, opts)
  local F = "within_baseline"
  if type(name) ~= "string" or not name:match("^[%w_%-%.]+$") then
    args.fail(F, 1, "name of letters, digits, '_', '-', '.' expected", check.user_level())
  end
  if type(prof) ~= "userdata" or type(prof.events) ~= "table" then
    args.fail(F, 2, "profile expected", check.user_level())
  end
  if type(limits) ~= "table" then args.fail(F, 3, "table of limits expected", check.user_level()) end
  opts = args.options(opts, F, 4, "within_baseline", check.user_level())
  check.limits(limits, prof, F)  -- a limit that means nothing raises before any file is touched
  local mode = M.mode(opts)
  local dir, found = M.dir(opts)
  local path = dir .. "/" .. name .. ".callgrind"
  local root = M.root() or M.cwd()
  local ctx = { limits = limits, root = root }
  local function finish(ok, msg, saved, extra)
    if record.path() and (saved or extra) then
      local rec = extra or {}
      rec.check, rec.name, rec.status = F, name, ok and "pass" or "fail"
      rec.message = rec.message or msg
      rec.profile, rec.old_profile = prof.name, path
      rec.where = check.caller_where()
      record.add(rec)
    end
    return ok, msg, saved
  end
  if not os.execute("mkdir -p " .. shq(util.argpath(dir))) then
    return finish(false, "baseline " .. name .. ": cannot create the directory " .. dir, nil, {})
  end
  local lock <close>, lerr = require("callgrind.core").internal.lock(dir)
  if not lock then return finish(false, "baseline " .. name .. ": cannot lock " .. lerr, nil, {}) end
  local accept = string_format("accept the new numbers: CALLGRIND_BASELINES=update (or opts.update = true) "
    .. "replaces %s", path)
  if mode == "update" then return finish(save(name, prof, path, opts, "updated", ctx)) end
  if not exists(path) then
    if mode == "require" then
      local why = set(os.getenv("CI")) and os.getenv("CALLGRIND_BASELINES") ~= "require" and "CI is set"
        or "CALLGRIND_BASELINES=require"
      return finish(false, string_format("baseline %s is missing: no file %s (the directory is from %s)\n"
        .. "%s, so a missing baseline fails instead of being saved: record it with CALLGRIND_BASELINES=update "
        .. "(or opts.update = true) and commit it", name, path, found, why), nil, {})
    end
    return finish(save(name, prof, path, opts, "saved (first run)", ctx))
  end
  local rerecord = string_format("re-record it: CALLGRIND_BASELINES=update (or opts.update = true) writes %s "
    .. "anew from this run", path)
  local base, err = loader.load(path)
  if not base then
    return finish(false, string_format("baseline %s does not load: %s\n%s", name, err, rerecord), nil, {})
  end
  local lost = lost_data(base)
  if #lost > 0 then
    return finish(false, string_format("baseline %s is refused: %s has lost data (%d warning%s):\n  %s\n%s", name,
      path, #lost, #lost == 1 and "" or "s", table_concat(lost, "\n  ", 1, math.min(#lost, 3)), rerecord), nil, {})
  end
  local be, pe = table_concat(base.events, " "), table_concat(prof.events, " ")
  if be ~= pe then
    return finish(false, string_format("baseline %s was recorded with events %s; this profile has %s\n%s", name, be,
      pe, accept), nil, {})
  end
  local cctx = { check = F, name = name, fname = F }
  if plain_cmd(base.cmd) ~= plain_cmd(prof.cmd) then
    local line = string_format("baseline %s is of another command: %s; this profile ran %s", name,
      tostring(base.cmd), tostring(prof.cmd))
    if opts.same_command then
      cctx.fails = { line .. " (opts.same_command)" }
    else
      cctx.notes = { "note: " .. line .. " (compared function by function; opts.same_command = true fails)" }
    end
  end
  local copts = setmetatable({ hint = accept }, { __index = opts })
  if cctx.notes and opts.match == nil then copts.match = program_key(base, prof) end
  local ok, msg = check.compare(base, prof, limits, copts, cctx)
  local keep = dir .. "/" .. name .. ".new.callgrind"
  if ok then
    -- a passing check leaves no new profile (nor an earlier failure's)
    os.remove(keep)
  else
    -- the new profile, beside the baseline (the run's own file is often
    -- a temporary one)
    local line = "\nnew: " .. check.file_of(prof) .. "\n"
    local at = msg:find(line, 1, true)
    if at and M.write(prof, keep, root) then
      msg = msg:sub(1, at - 1) .. "\nnew: " .. keep .. "\n" .. msg:sub(at + #line)
    end
  end
  return ok, msg
end

return M
