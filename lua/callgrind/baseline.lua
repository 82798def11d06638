--- Named baselines: profiles kept as callgrind files (written by
-- `prof:write`) in a directory, and checked against with limits.
--
-- The directory is `opts.dir`, else the environment variable
-- `CALLGRIND_BASELINE_DIR`, else `spec/baselines` (relative to the
-- current directory). Baseline NAME is the file `NAME.callgrind` there.
-- The first check of a name saves the profile and passes with a notice;
-- `CALLGRIND_UPDATE_BASELINES=1` in the environment (or `opts.update =
-- true`) replaces the baseline with the new profile. When a check fails
-- or finds an improvement, the new profile is kept beside the baseline as
-- `NAME.new.callgrind`, to open in callgrind_annotate or KCachegrind.
-- @module callgrind.baseline
local check = require "callgrind.check"
local commas = require("callgrind.report").commas

local error, ipairs, type = error, ipairs, type
local os_getenv, string_format, table_concat = os.getenv, string.format, table.concat

local M = {}

--- The directory baselines are kept in.
-- @tparam[opt] table opts `dir`
-- @usage print(baseline.dir()) --> spec/baselines (unless CALLGRIND_BASELINE_DIR is set)
function M.dir(opts)
  local dir = opts and opts.dir or os_getenv("CALLGRIND_BASELINE_DIR")
  if dir == nil or dir == "" then dir = "spec/baselines" end
  return dir
end

--- The file of baseline NAME.
-- @usage baseline.path("parse") --> spec/baselines/parse.callgrind
function M.path(name, opts)
  return M.dir(opts) .. "/" .. name .. ".callgrind"
end

--- Is updating on (`opts.update`, or `CALLGRIND_UPDATE_BASELINES` set to
-- anything but "" and "0")?
-- @usage if baseline.updating() then print("replacing baselines") end
function M.updating(opts)
  if opts and opts.update ~= nil then return opts.update and true or false end
  local v = os_getenv("CALLGRIND_UPDATE_BASELINES")
  return v ~= nil and v ~= "" and v ~= "0"
end

local function shq(s) return "'" .. s:gsub("'", [['\'']]) .. "'" end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- A command with the directories of its words dropped: a moved checkout
-- runs the same command.
local function plain_cmd(cmd)
  if cmd == nil then return nil end
  local words = {}
  for w in cmd:gmatch("%S+") do words[#words + 1] = w:match("([^/]*)$") end
  return table_concat(words, " ")
end

local function save(name, prof, path, opts, how)
  local dir = M.dir(opts)
  if not os.execute("mkdir -p " .. shq(dir)) then return false, "cannot create the directory " .. dir end
  -- a profile that lost costs, or over an absolute bound, is no baseline
  local ok, msg = check.no_regression(prof, prof, opts.limits or {}, opts)
  if not ok then return false, string_format("baseline %s not saved:\n%s", name, msg) end
  local wok, err = prof:write(path)
  if not wok then return false, string_format("baseline %s not saved: %s", name, err) end
  os.remove(dir .. "/" .. name .. ".new.callgrind")
  local totals = {}
  for _, ev in ipairs(prof.events) do totals[#totals + 1] = ev .. " " .. commas(prof:total(ev)) end
  return true, string_format("baseline %s %s: %s (%s)", name, how, path, table_concat(totals, ", ")), true
end

--- Checks a profile against baseline NAME with limits (as for
-- `check.no_regression`); saves it on first use or when updating.
-- @tparam string name letters, digits, `_`, `-`, `.`
-- @param prof Profile
-- @tparam table limits e.g. `{ Ir = "5%" }`
-- @tparam[opt] table opts `dir`, `update`, and the options of
--   `check.no_regression` (`match`, `allow_warnings`, `top` ...)
-- @return ok, message, saved (true when the baseline was written)
-- @usage local ok, msg = baseline.check("parse", prof, { Ir = "5%" })
function M.check(name, prof, limits, opts)
  if type(name) ~= "string" or not name:match("^[%w_%-%.]+$") then
    error("bad argument #1 to 'within_baseline' (name of letters, digits, '_', '-', '.' expected)", 2)
  end
  if type(prof) ~= "userdata" or type(prof.events) ~= "table" then
    error("bad argument #2 to 'within_baseline' (profile expected)", 2)
  end
  if type(limits) ~= "table" then error("bad argument #3 to 'within_baseline' (table of limits expected)", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("bad argument #4 to 'within_baseline' (table expected)", 2) end
  opts = setmetatable({ limits = limits }, { __index = opts or {} })
  local path = M.path(name, opts)
  if M.updating(opts) then return save(name, prof, path, opts, "updated") end
  if not exists(path) then return save(name, prof, path, opts, "saved (first run)") end
  local callgrind = require "callgrind"
  local base, err = callgrind.load(path)
  if not base then return false, string_format("baseline %s does not load: %s", name, err) end
  local accept = string_format("accept the new numbers: CALLGRIND_UPDATE_BASELINES=1 (or opts.update = true) "
    .. "replaces %s", path)
  local be, pe = table_concat(base.events, " "), table_concat(prof.events, " ")
  if be ~= pe then
    return false, string_format("baseline %s was recorded with events %s; this profile has %s\n%s", name, be, pe,
      accept)
  end
  if plain_cmd(base.cmd) ~= plain_cmd(prof.cmd) then
    return false, string_format("baseline %s is of another command: %s; this profile ran %s\n%s", name,
      tostring(base.cmd), tostring(prof.cmd), accept)
  end
  local ok, msg = check.no_regression(base, prof, limits, setmetatable({ hint = accept }, { __index = opts }))
  if not ok or msg:find("\nimproved beyond the limits", 1, true) then
    -- the new profile, beside the baseline (the run's own file is often
    -- a temporary one)
    local keep = M.dir(opts) .. "/" .. name .. ".new.callgrind"
    local line = "\nnew: " .. check.file_of(prof) .. "\n"
    local at = msg:find(line, 1, true)
    if at and prof:write(keep) then
      msg = msg:sub(1, at - 1) .. "\nnew: " .. keep .. "\n" .. msg:sub(at + #line)
    end
  end
  return ok, msg
end

return M
