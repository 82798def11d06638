--- The spread of a Lua script's counts across fresh processes:
-- `callgrind.spread(script_or_argv, n [, opts])`.
--
-- Each of the n runs is `lua5.4 -lcallgrind.start script args...` in a
-- process of its own (the module paths of this process passed on), so
-- what changes from process to process changes here too: Lua 5.4 seeds
-- its string hashes per process, which reorders `pairs`, and with it the
-- work of code that depends on the order. `opts.runs` of
-- `callgrind.profile` repeats a function in one process, with one seed,
-- and cannot show that spread. Size a tolerance from this one.
-- @module callgrind.check.spread
local args = require "callgrind.args"
local util = require "callgrind.util"
local loader = require "callgrind.model.load"
local commas = require("callgrind.model.report").commas

local ipairs, pairs, tostring, type = ipairs, pairs, tostring, type
local math_max, math_min, string_format, table_concat, table_sort =
  math.max, math.min, string.format, table.concat, table.sort
local shq, sh = util.shq, util.sh

local M = {}

local function check_args(script, n, opts)
  local argv = script
  if type(script) == "string" then argv = { script } end
  if type(argv) ~= "table" or type(argv[1]) ~= "string" then
    args.fail("spread", 1, "a script's path or { script, args... } expected", 4)
  end
  for i, a in ipairs(argv) do
    if type(a) ~= "string" and type(a) ~= "number" then
      args.fail("spread", 1, "argv[" .. i .. "] is a " .. type(a), 4)
    end
    if tostring(a):find("\0", 1, true) then args.fail("spread", 1, "argv[" .. i .. "] contains a NUL byte", 4) end
  end
  if math.type(n) ~= "integer" or n < 2 then
    args.fail("spread", 2, "a whole number of runs, 2 or more, expected, got " .. args.show(n), 4)
  end
  opts = args.options(opts, "spread", 3, "spread", 4)
  return argv, opts
end

-- The environment of each run, as sh words.
local function env_words(opts, out)
  local words = {
    "LUA_PATH_5_4=" .. shq(package.path), "LUA_CPATH_5_4=" .. shq(package.cpath),
    "CALLGRIND_OUT=" .. shq(out), "CALLGRIND_LINES=" .. (opts.lines == false and "0" or "1"),
    "CALLGRIND_STACKS=0", "CALLGRIND_EVENTS=Instr",
  }
  return table_concat(words, " ")
end

-- Runs the script once; the profile, or nil and a message.
local function one_run(argv, opts, dir, i)
  local out = string_format("%s/run.%d.out", dir, i)
  local words = { shq(opts.lua or "lua5.4"), "-lcallgrind.start", shq(util.argpath(argv[1])) }
  for k = 2, #argv do words[#words + 1] = shq(tostring(argv[k])) end
  local log = dir .. "/stderr"
  local ok, status = sh(env_words(opts, out) .. " " .. table_concat(words, " ") .. " </dev/null >/dev/null 2>"
    .. shq(log))
  if not ok then
    local tail = (util.read_file(log) or ""):gsub("%s+$", "")
    return nil, string_format("%s exited with status %d in run %d%s", argv[1], status, i,
      tail ~= "" and (": " .. tail) or "")
  end
  local prof, err = loader.load(out)
  os.remove(out)
  return prof, err
end

-- Self costs by function (name and file), and the total.
local function costs(prof, ev)
  local t = {}
  for fn in prof:functions() do
    local key = fn.name .. "\0" .. tostring(fn.file or "")
    t[key] = (t[key] or 0) + fn:self(ev)
  end
  return t, prof:total(ev)
end

local function report(r, name)
  local out = { string_format("%s over %d processes of %s: min %s, max %s (spread %s, %.2f%% of min)", r.event, r.runs,
    name, commas(r.min), commas(r.max), commas(r.max - r.min), r.spread_pct) }
  if #r.functions == 0 then
    out[#out + 1] = "no function's self cost varies"
  else
    out[#out + 1] = "functions whose self " .. r.event .. " varies:"
    local rows = { { "min", "max", "spread", "function" } }
    for i, f in ipairs(r.functions) do
      if i > (r.top or 10) then break end
      rows[#rows + 1] = { commas(f.min), commas(f.max), commas(f.max - f.min),
        f.name .. (f.file and f.file ~= "" and (" (" .. f.file .. ")") or "") }
    end
    local w = { 0, 0, 0 }
    for _, row in ipairs(rows) do
      for c = 1, 3 do w[c] = math_max(w[c], #row[c]) end
    end
    for _, row in ipairs(rows) do
      out[#out + 1] = string_format("  %" .. w[1] .. "s  %" .. w[2] .. "s  %" .. w[3] .. "s  %s", row[1], row[2],
        row[3], row[4])
    end
  end
  return table_concat(out, "\n")
end

--- Profiles a Lua script n times, each in a fresh process (`lua5.4
-- -lcallgrind.start`), and says how much its counts vary.
-- @param script a script's path, or `{ script, args... }`
-- @tparam integer n the number of runs (2 or more)
-- @tparam[opt] table opts `lua` (the interpreter, default "lua5.4"),
--   `lines` (default true), `top` (functions in the text, default 10)
-- @return `{ event, runs, totals, min, max, spread_pct, functions, text }`
--   (`functions`: those whose self cost varies, `{ name, file, min, max }`,
--   the widest spread first; `text`: a report), or nil, a message, a kind
-- @usage local s = assert(callgrind.spread("bench.lua", 10)); print(s.text)
function M.spread(script, n, opts)
  local argv
  argv, opts = check_args(script, n, opts)
  if not util.file_exists(argv[1]) then return nil, "script not found: " .. argv[1], "io" end
  local reserved = os.tmpname()
  local dir = reserved .. ".d"
  if not sh("mkdir -m 700 " .. shq(dir)) then
    os.remove(reserved)
    return nil, "cannot create the directory " .. dir, "io"
  end
  local ev = "Instr"
  local runs, totals, keys = {}, {}, {}
  local err
  for i = 1, n do
    local prof
    prof, err = one_run(argv, opts, dir, i)
    if not prof then break end
    runs[i], totals[i] = costs(prof, ev)
    for k in pairs(runs[i]) do keys[k] = true end
  end
  sh("rm -rf " .. shq(dir))
  os.remove(reserved)
  if err then return nil, err, "io" end
  local r = { event = ev, runs = n, totals = totals, min = math.huge, max = 0, functions = {}, top = opts.top }
  for _, t in ipairs(totals) do r.min, r.max = math_min(r.min, t), math_max(r.max, t) end
  r.spread_pct = r.min > 0 and (r.max - r.min) * 100 / r.min or 0
  for k in pairs(keys) do
    local lo, hi = math.huge, 0
    for i = 1, n do
      local v = runs[i][k] or 0
      lo, hi = math_min(lo, v), math_max(hi, v)
    end
    if hi ~= lo then
      local name, file = k:match("^(.-)%z(.*)$")
      r.functions[#r.functions + 1] = { name = name, file = file ~= "" and file or nil, min = lo, max = hi }
    end
  end
  table_sort(r.functions, function(a, b)
    if a.max - a.min ~= b.max - b.min then return a.max - a.min > b.max - b.min end
    return a.name < b.name
  end)
  r.text = report(r, argv[1])
  r.top = nil
  return r
end

return M
