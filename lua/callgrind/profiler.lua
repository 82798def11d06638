--- A profiler for Lua code itself: deterministic counts of Lua VM
-- instructions (event `Instr`) per function, per source line and per call
-- site, collected by a C debug hook (csrc/profiler/cg_prof.c), and returned as a
-- Profile like any loaded one. Optional events: `Time` (nanoseconds, the
-- hook's own time left out) and `Alloc` (bytes allocated).
--
-- The profiler owns the debug hook while it runs: it refuses to start when
-- a hook is already set (it does not chain), and `stop` raises when the
-- hook was replaced meanwhile.
-- @module callgrind.profiler
local core = require "callgrind.core"

local M = {}

local error, ipairs, pairs, tostring, type = error, ipairs, pairs, tostring, type
local concat, sort = table.concat, table.sort
local format = string.format
local getinfo = debug.getinfo

local LONG_NAMES = {
  Instr = "Lua VM instructions",
  Time = "Time (ns)",
  Alloc = "Bytes allocated",
}

local OPTION_TYPES = { time = "boolean", alloc = "boolean", count_hook = "boolean", out = "string" }

-- Checks an options table; raises at the caller of the API function.
local function check_opts(opts, fname, argn, allowed)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    error(format("bad argument #%d to '%s' (table expected, got %s)", argn, fname, type(opts)), 3)
  end
  for k, v in pairs(opts) do
    local want = OPTION_TYPES[k]
    if not want or (k == "out" and not allowed.out) then
      error(format("bad argument #%d to '%s' (unknown option '%s')", argn, fname, tostring(k)), 3)
    end
    if type(v) ~= want then
      error(format("bad argument #%d to '%s' (option '%s' must be a %s, got %s)",
        argn, fname, k, want, type(v)), 3)
    end
  end
  return opts
end

local function check_free(fname)
  if core.prof_running() then
    error("callgrind.profiler." .. fname .. ": the profiler is already running", 3)
  end
  if debug.gethook() then
    error("callgrind.profiler." .. fname .. ": a debug hook is already set (debug.sethook); "
      .. "the profiler does not chain hooks: remove it first", 3)
  end
end

---------------------------------------------------------------------------
-- Names users recognise
---------------------------------------------------------------------------

-- function -> "module.field" (or "field" for _G) over package.loaded; the
-- shortest, then alphabetically first, where a function has several.
local function global_names()
  local names = {}
  for modname, mod in pairs(package.loaded) do
    if type(modname) == "string" and type(mod) == "table" then
      for k, v in pairs(mod) do
        if type(k) == "string" and type(v) == "function" and k:match("^[%a_][%w_]*$") then
          local name = modname == "_G" and k or (modname .. "." .. k)
          local old = names[v]
          if not old or #name < #old or (#name == #old and name < old) then names[v] = name end
        end
      end
    end
  end
  return names
end

-- The lines of a chunk's source: the file of "@path", the text of a string
-- chunk; nil when unavailable ("=name", unreadable file).
local function source_lines(source, cache)
  local lines = cache[source]
  if lines == nil then
    local text
    local c = source:sub(1, 1)
    if c == "@" then
      local f = io.open(source:sub(2), "rb")
      if f then
        text = f:read("a")
        f:close()
      end
    elseif c ~= "=" then
      text = source
    end
    lines = false
    if text then
      lines = {}
      for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    end
    cache[source] = lines
  end
  return lines or nil
end

-- The name a definition line gives its function, as written:
-- `function Parser:next(`, `local function parse(`, `M.encode = function(`.
local function declared_name(line)
  return line:match("function%s+([%a_][%w_%.:]*)%s*%(")
    or line:match("([%a_][%w_%.]*)%s*=%s*function%s*%(")
    or line:match("%[%s*[\"']([^\"']+)[\"']%s*%]%s*=%s*function%s*%(")
end

-- Per function: name, file, line defined.
local function describe(data)
  local globals, cache = global_names(), {}
  local fns, count = {}, {}
  for i, info in ipairs(data.info) do
    local func, callname = info[1], info[2]
    local d = getinfo(func, "S")
    local fn = { line = d.linedefined }
    if d.what == "C" then
      fn.name, fn.file, fn.line = globals[func] or callname or "?", "[C]", 0
    else
      fn.file = d.source:sub(1, 1) == "@" and d.source:sub(2) or d.short_src
      if d.what == "main" then
        fn.name, fn.main = "main chunk", true
      else
        local lines = source_lines(d.source, cache)
        local decl = lines and lines[d.linedefined] and declared_name(lines[d.linedefined])
        local g = globals[func]
        if g and not (decl and decl:find(":", 1, true)) then
          fn.name = g
        else
          fn.name = decl or callname or "anonymous"
        end
        count[fn.name] = (count[fn.name] or 0) + 1
      end
    end
    fns[i] = fn
  end
  -- two prototypes with one name: each gets its line ("fib:12"), and
  -- those defined on one line of one file a number ("anonymous:3#2")
  local seen = {}
  for _, fn in ipairs(fns) do
    if not fn.main and fn.file ~= "[C]" and count[fn.name] > 1 then
      fn.name = fn.name .. ":" .. fn.line
      local key = fn.file .. "\0" .. fn.name
      seen[key] = (seen[key] or 0) + 1
      if seen[key] > 1 then fn.name = fn.name .. "#" .. seen[key] end
    end
  end
  return fns
end

---------------------------------------------------------------------------
-- The callgrind-format text
---------------------------------------------------------------------------

-- The command line of the running script (from `arg`), or nil.
local function command_line()
  local a = rawget(_G, "arg")
  if type(a) ~= "table" then return nil end
  local i = 0
  while a[i - 1] ~= nil do i = i - 1 end
  local t = {}
  for j = i, #a do t[#t + 1] = tostring(a[j]) end
  return concat(t, " ")
end

-- Writes the data as callgrind format: fl=/fn= blocks with their line
-- costs, and per call site cfi=/cfn=/calls= with the inclusive cost.
local function to_text(data, cmd)
  local fns, events = describe(data), data.events
  local nev = #events
  local out = { "# callgrind format", "version: 1", "creator: callgrind.lua profiler",
    "pid: " .. data.pid }
  if cmd then out[#out + 1] = "cmd: " .. cmd end
  out[#out + 1] = "positions: line"
  for _, ev in ipairs(events) do out[#out + 1] = format("event: %s : %s", ev, LONG_NAMES[ev]) end
  out[#out + 1] = "events: " .. concat(events, " ")

  -- name compression: "(n) name" the first time, "(n)" after
  local ids = { fl = {}, fn = {} }
  local nids = { fl = 0, fn = 0 }
  local function ref(kind, name)
    local id = ids[kind][name]
    if id then return "(" .. id .. ")" end
    nids[kind] = nids[kind] + 1
    ids[kind][name] = nids[kind]
    return "(" .. nids[kind] .. ") " .. name
  end

  local calls = {}
  local e, stride = data.edges, 4 + nev
  for k = 1, #e, stride do
    local caller = e[k]
    calls[caller] = calls[caller] or {}
    calls[caller][#calls[caller] + 1] = k
  end
  local totals = {}
  for j = 1, nev do totals[j] = 0 end
  for i, fn in ipairs(fns) do
    local lines, mine = data.lines[i], calls[i]
    if #lines > 0 or mine then
      out[#out + 1] = "fl=" .. ref("fl", fn.file)
      out[#out + 1] = "fn=" .. ref("fn", fn.name)
      for k = 1, #lines, nev + 1 do
        out[#out + 1] = concat(lines, " ", k, k + nev)
        for j = 1, nev do totals[j] = totals[j] + lines[k + j] end
      end
      if mine then
        sort(mine, function(a, b)
          if e[a + 1] ~= e[b + 1] then return e[a + 1] < e[b + 1] end
          return e[a + 2] < e[b + 2]
        end)
        for _, k in ipairs(mine) do
          local callee = fns[e[k + 2]]
          out[#out + 1] = "cfi=" .. ref("fl", callee.file)
          out[#out + 1] = "cfn=" .. ref("fn", callee.name)
          out[#out + 1] = format("calls=%d %d", e[k + 3], callee.line)
          out[#out + 1] = e[k + 1] .. " " .. concat(e, " ", k + 4, k + 3 + nev)
        end
      end
    end
  end
  out[#out + 1] = "totals: " .. concat(totals, " ")
  out[#out + 1] = ""
  return concat(out, "\n")
end

-- data -> Profile, text
local function build(data)
  local text = to_text(data)
  local prof = assert(require("callgrind").parse(text, "(lua profile)"))
  return prof, text
end

---------------------------------------------------------------------------
-- The API
---------------------------------------------------------------------------

--- Starts profiling the running code (the calling function and the ones
-- that called it are on the profile's stack from here on).
-- @tparam[opt] table opts `time = true` adds event `Time`, `alloc = true`
--   event `Alloc`; `count_hook = true` counts with a count hook (slower,
--   the same numbers)
-- @usage profiler.start(); work(); local prof = profiler.stop()
function M.start(opts)
  check_opts(opts, "start", 1, {})
  check_free("start")
  return core.prof_start(opts, 2)
end

--- Stops the profiler.
-- @return the Profile of what ran since `start`, and its callgrind-format
--   text (what `lua5.4 -lcallgrind.start` writes)
-- @usage local prof, text = profiler.stop()
M.stop = core.prof_stopper(function(data)
  if not data then error("callgrind.profiler.stop: the profiler is not running", 3) end
  return build(data)
end)

local function finish(data, ...)
  return (build(data)), ...
end

--- Runs fn() under the profiler.
-- @tparam function fn
-- @tparam[opt] table opts as for `start`
-- @return the Profile of what ran inside fn, then fn's results; an error in
--   fn stops the profiler and is raised again
-- @usage local prof, result = profiler.profile(function() return work() end)
function M.profile(fn, opts)
  if type(fn) ~= "function" then
    error(format("bad argument #1 to 'profile' (function expected, got %s)", type(fn)), 2)
  end
  check_opts(opts, "profile", 2, {})
  check_free("profile")
  return finish(core.prof_run(fn, opts))
end

--- True while the profiler runs.
-- @usage if profiler.running() then ... end
function M.running()
  return core.prof_running()
end

--- Profiles the rest of the program and writes the callgrind file when it
-- ends: normally, by `os.exit` (wrapped for this), or with an error. What
-- `lua5.4 -lcallgrind.start script.lua` does. Only what is called after
-- this returns is profiled (the script's main chunk, not its loader).
-- @tparam[opt] table opts as for `start`, plus `out`: the file (default
--   `$CALLGRIND_OUT`, else `callgrind.out.<pid>` in the current directory)
-- @return an object that writes the file when collected (keep it: the
--   Lua state's closing collects it)
-- @usage local keep = profiler.until_exit{ out = "script.callgrind" }
function M.until_exit(opts)
  opts = check_opts(opts, "until_exit", 1, { out = true })
  check_free("until_exit")
  local out = opts.out or os.getenv("CALLGRIND_OUT")
  local exit = os.exit
  local done = false
  local function write(data)
    if done or not data then return end
    done = true
    local path = out or ("callgrind.out." .. data.pid)
    local f, err = io.open(path, "wb")
    if not f then
      io.stderr:write("callgrind.profiler: cannot write the profile: ", err, "\n")
      return
    end
    f:write(to_text(data, command_line()))
    f:close()
  end
  -- check_free made the collector's state, so it is finalized after the
  -- sentinel (finalizers run newest first)
  local sentinel = setmetatable({}, { __gc = core.prof_stopper(write) })
  -- os.exit ends the process without closing the Lua state: wrap it
  rawset(os, "exit", core.prof_stopper(function(data, ...)
    write(data)
    return exit(...)
  end))
  core.prof_start(opts, 0)
  return sentinel
end

return M
