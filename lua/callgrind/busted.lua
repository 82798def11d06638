--- A busted helper: every test a budget. `busted --helper=callgrind.busted`
-- (or `helper = "callgrind.busted"` in `.busted`) profiles each test's
-- body, and what it calls, with the engine the interpreter offers
-- (`callgrind.profile`: the counting interpreter's on
-- build/bin/callgrind-lua5.4, the debug hook's on lua5.4), and names the
-- profile by busted's full test name (the `describe` blocks' names and
-- the `it`'s, as the output handlers print it). `before_each`,
-- `after_each`, `setup`, `teardown` and `finally` run outside the
-- profile: they are not counted.
--
-- Each test's counts (every event of its profile) go to the record
-- (`CALLGRIND_RECORD`: one line per test and event, check `"busted"`),
-- and are checked against the suite's baseline: one file per spec file,
-- `NAME.busted` (NAME: the spec file's name without `.lua`) in the
-- baseline directory of `callgrind.check.baseline` (`CALLGRIND_BASELINE_DIR`,
-- else `spec/baselines` under the `.busted` directory), holding each
-- test's profile under a `test: FULL NAME` line, written whole or not at
-- all. The modes are the baselines' (`CALLGRIND_BASELINES=update`
-- re-records, `CI` or `CALLGRIND_BASELINES=require` fails a missing one,
-- else it is saved with a notice on stderr). A test over its budget
-- fails as a busted failure naming the test, the counts and the
-- functions that moved most (every output handler shows it).
--
-- Limits: `{ Instr = "5%" }` by default for every test;
-- `CALLGRIND_BUSTED_LIMIT=10%` or `setup{ limits = ... }` for all,
-- `setup{ tests = { ["full name"] = limits } }` per test (a test that
-- walks `pairs` changes from process to process: size its tolerance with
-- `callgrind.spread`). `CALLGRIND_BUSTED_TABLE=1` (or `setup{ table =
-- true }`) prints a table of every test's counts on stderr at the end.
-- @module callgrind.busted
-- @usage busted --helper=callgrind.busted spec
local busted = require "busted"
local callgrind = require "callgrind"
local baseline = require "callgrind.check.baseline"
local limits = require "callgrind.check.limits"
local record = require "callgrind.check.record"
local loader = require "callgrind.model.load"
local write = require "callgrind.export.write"
local core = require "callgrind.core"
local util = require "callgrind.util"

local ipairs, pairs, tostring, type = ipairs, pairs, tostring, type
local format, concat, sort = string.format, table.concat, table.sort

local M = {}

local config = { limits = nil, tests = {}, table = nil }

local function set(v) return v ~= nil and v ~= "" and v ~= "0" and v ~= "false" end

--- Sets the helper's options: `limits` (for every test), `tests`
-- (limits by full test name), `table` (print the counts at the end),
-- `dir` (the baselines' directory), `opts` (the options of
-- `callgrind.profile`). Call it from a helper file of your own that
-- requires this one.
-- @usage require("callgrind.busted").setup{ tests = { ["stringx splits"] = { Instr = "10%" } } }
function M.setup(opts)
  for k, v in pairs(opts or {}) do config[k] = v end
  return M
end

-- The limits of a test.
local function limits_of(name)
  if config.tests[name] then return config.tests[name] end
  if config.limits then return config.limits end
  local env = os.getenv("CALLGRIND_BUSTED_LIMIT")
  return { Instr = (env and env ~= "") and env or "5%" }
end

-- busted's full name of a test (as its output handlers make it), and
-- the file of its spec.
local function names_of(element)
  local names, parent = { element.name or element.descriptor }, busted.parent(element)
  local file
  while parent do
    if parent.descriptor == "file" then
      file = parent.name
      break
    end
    if parent.name or parent.descriptor then table.insert(names, 1, parent.name or parent.descriptor) end
    parent = busted.parent(parent)
  end
  return concat(names, " "), file or "spec"
end

---------------------------------------------------------------------------
-- The suites' baseline files
---------------------------------------------------------------------------

local suites = {}   -- spec file -> { path, tests = { name -> text }, order, dirty }

local function suite_path(file)
  local dir = config.dir or baseline.dir()
  local base = util.basename(file):gsub("%.lua$", "")
  return dir .. "/" .. base .. ".busted", dir
end

-- Parses a suite file: test name -> canonical callgrind text.
local function parse_suite(text)
  local tests, order, name, lines = {}, {}, nil, nil
  local function flush()
    if name then
      tests[name] = concat(lines, "\n") .. "\n"
      order[#order + 1] = name
    end
  end
  for line in text:gmatch("([^\n]*)\n") do
    local n = line:match("^test: (.*)$")
    if n then
      flush()
      name, lines = n, {}
    elseif name then
      lines[#lines + 1] = line
    end
  end
  flush()
  return tests, order
end

local function suite(file)
  local s = suites[file]
  if s then return s end
  local path, dir = suite_path(file)
  s = { path = path, dir = dir, tests = {}, order = {} }
  local text = util.file_exists(path) and util.read_file(path)
  if text then s.tests, s.order = parse_suite(text) end
  suites[file] = s
  return s
end

local function write_suite(s)
  if not s.dirty then return end
  os.execute("mkdir -p " .. util.shq(util.argpath(s.dir)))
  local out = { "# callgrind.busted baselines: each test's profile under its full name\n" }
  for _, name in ipairs(s.order) do
    out[#out + 1] = "test: " .. name .. "\n"
    out[#out + 1] = s.tests[name]
  end
  local lock <close>, lerr = core.internal.lock(s.dir)
  local ok, err = nil, lerr
  if lock then ok, err = write.write_file_atomic(s.path, concat(out)) end
  if not ok then io.stderr:write("callgrind.busted: baselines not written: ", tostring(err), "\n") end
  s.dirty = false
end

-- The canonical text of a profile (as a baseline keeps it).
local function text_of(prof)
  local f = assert(io.tmpfile())
  assert(prof:write(f))
  f:seek("set")
  local text = f:read("a")
  f:close()
  return baseline.canonical(text, baseline.root() or baseline.cwd())
end

local function keep(s, name, text)
  if not s.tests[name] then s.order[#s.order + 1] = name end
  s.tests[name] = text
  s.dirty = true
end

---------------------------------------------------------------------------
-- Each test
---------------------------------------------------------------------------

local results = {}   -- { name, file, counts = { ev -> n }, status }

-- Checks a test's profile; ok, message, the baseline's profile or nil.
local function check(name, file, prof)
  local s = suite(file)
  local mode = baseline.mode()
  local lim = limits_of(name)
  if mode == "update" then
    keep(s, name, text_of(prof))
    return true
  end
  local old = s.tests[name]
  if not old then
    if mode == "require" then
      local why = set(os.getenv("CI")) and os.getenv("CALLGRIND_BASELINES") ~= "require" and "CI is set"
        or "CALLGRIND_BASELINES=require"
      return false, format("baseline of test '%s' is missing: no entry in %s\n%s, so a missing baseline fails "
        .. "instead of being saved: record it with CALLGRIND_BASELINES=update and commit it", name, s.path, why)
    end
    keep(s, name, text_of(prof))
    io.stderr:write(format("callgrind.busted: baseline of test '%s' saved (first run): %s\n", name, s.path))
    return true
  end
  local base, err = loader.parse(old, s.path .. " (test: " .. name .. ")")
  if not base then
    return false, format("baseline of test '%s' does not load: %s\nre-record it: CALLGRIND_BASELINES=update", name,
      tostring(err))
  end
  local ok, msg = limits.compare(base, prof, lim, { hint = "accept the new numbers: CALLGRIND_BASELINES=update "
    .. "re-records " .. s.path }, { check = "busted", name = name, fname = "busted", no_record = true })
  return ok, msg, base
end

local function on_test(prof, name, file)
  local counts = {}
  for _, ev in ipairs(prof.events) do counts[ev] = prof:total(ev) end
  local ok, msg, base = check(name, file, prof)
  results[#results + 1] = { name = name, file = file, counts = counts, events = prof.events, ok = ok }
  if record.path() then
    for _, ev in ipairs(prof.events) do
      record.add { check = "busted", name = name, event = ev, new = counts[ev],
        old = base and base:total(ev) or nil, status = ok and "pass" or "fail",
        message = not ok and msg or nil, where = file }
    end
  end
  if not ok then
    busted.fail(format("callgrind: test '%s' is over its budget:\n%s", name, msg), 0)
  end
end

local wrapped = setmetatable({}, { __mode = "k" })

busted.subscribe({ "test", "start" }, function(element)
  if wrapped[element] or type(element.run) ~= "function" then return nil, true end
  local body = element.run
  local name, file = names_of(element)
  element.run = function()
    local prof = callgrind.profile(body, config.opts)
    on_test(prof, name, file)
  end
  wrapped[element] = body
  return nil, true
end)

busted.subscribe({ "file", "end" }, function(file)
  local s = suites[file.name]
  if s then write_suite(s) end
  return nil, true
end)

--- The table of every test's counts so far (what `CALLGRIND_BUSTED_TABLE=1`
-- prints at the end).
-- @usage print(require("callgrind.busted").table())
function M.table()
  local evs, seen = {}, {}
  for _, r in ipairs(results) do
    for _, ev in ipairs(r.events) do
      if not seen[ev] then seen[ev] = true; evs[#evs + 1] = ev end
    end
  end
  local rows = { concat(evs, "\t") .. "\ttest" }
  local sorted = { table.unpack(results) }
  sort(sorted, function(a, b) return a.name < b.name end)
  for _, r in ipairs(sorted) do
    local cells = {}
    for i, ev in ipairs(evs) do cells[i] = r.counts[ev] and tostring(r.counts[ev]) or "-" end
    rows[#rows + 1] = concat(cells, "\t") .. "\t" .. r.name .. (r.ok and "" or "  (over its budget)")
  end
  return concat(rows, "\n") .. "\n"
end

busted.subscribe({ "suite", "end" }, function()
  for _, s in pairs(suites) do write_suite(s) end
  if config.table or set(os.getenv("CALLGRIND_BUSTED_TABLE")) then
    io.stderr:write("callgrind.busted: each test's counts\n", M.table())
  end
  return nil, true
end)

return M
