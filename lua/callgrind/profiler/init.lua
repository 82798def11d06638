--- A profiler for Lua code itself: deterministic counts of Lua VM
-- instructions (event `Instr`) per function, per source line and per call
-- site, collected by a C debug hook (csrc/profiler/cg_prof_collect.c), and
-- returned as a Profile like any loaded one. Optional events: `Time`
-- (nanoseconds, the hook's own time left out) and `Alloc` (bytes allocated).
--
-- The profiler owns the debug hook while it runs: it refuses to start when
-- a hook is already set (it does not chain), and `stop` raises when the
-- hook was replaced meanwhile; but the counting interpreter's engine
-- (`vm`, Instr only) has a hook of its own and leaves debug.sethook free.
-- @module callgrind.profiler
local core = require "callgrind.core"
local args = require "callgrind.args"
local util = require "callgrind.util"
-- callgrind.model.load is required where a profile is built: parsing it
-- (and callgrind.api, which only an options check loads) was half of what
-- `-lcallgrind.start` cost a script that does nothing

local M = {}

local error, ipairs, pairs, tostring, type = error, ipairs, pairs, tostring, type
local concat, sort = table.concat, table.sort
local format = string.format
local getinfo = debug.getinfo
local std_name = core.prof_std_name

local LONG_NAMES = {
  Instr = "Lua VM instructions",
  Time = "Time (ns)",
  Alloc = "Bytes allocated",
}


local function check_free(fname, opts)
  if core.prof_running() then
    error("callgrind.profiler." .. fname .. ": the profiler is already running", 3)
  end
  if debug.gethook() and not core.prof_own_hook(opts) then
    error("callgrind.profiler." .. fname .. ": a debug hook is already set (debug.sethook); "
      .. "the profiler does not chain hooks: remove it first", 3)
  end
end

---------------------------------------------------------------------------
-- Names users recognise
---------------------------------------------------------------------------

-- The names of a function (see docs/profiling-lua.md, "What the numbers
-- mean"). A C function of Lua's standard library has its standard name
-- (core.prof_std_name: read from a new Lua state, so that no module
-- loaded and no change to the standard tables renames it). Any other
-- function found in package.loaded is "module.field" ("field" for _G),
-- taken from its own module where it has one: for a Lua function the
-- module whose file (package.searchpath) is its chunk, for a C function
-- a C module (found on package.cpath); else from every module. Among
-- several, the shortest, then the first in byte order.

-- function -> { { "module.field", module }, ... } over package.loaded
local function loaded_names()
  local names = {}
  for modname, mod in pairs(package.loaded) do
    if type(modname) == "string" and type(mod) == "table" then
      for k, v in pairs(mod) do
        if type(k) == "string" and type(v) == "function" and k:match("^[%a_][%w_]*$") then
          local t = names[v]
          if not t then
            t = {}
            names[v] = t
          end
          t[#t + 1] = { modname == "_G" and k or (modname .. "." .. k), modname }
        end
      end
    end
  end
  return names
end

-- The shortest, then the first in byte order, of the names cands whose
-- module passes mine (every name when none does, or without mine).
local function pick(cands, mine)
  local best
  for pass = mine and 1 or 2, 2 do
    for _, c in ipairs(cands) do
      local name = c[1]
      if (pass == 2 or mine(c[2])) and (not best or #name < #best or (#name == #best and name < best)) then
        best = name
      end
    end
    if best then return best end
  end
end

-- Line n of a chunk's source: the file of "@path", the text of a string
-- chunk; nil when unavailable ("=name", unreadable file, no such line).
-- The text and where its lines start are kept per source (a plain find of
-- each newline: splitting every file into strings cost more than the rest
-- of writing a profile).
local function source_line(source, n, cache)
  local src = cache[source]
  if src == nil then
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
    src = false
    if text then
      local starts, find, pos = { 1 }, string.find, 1
      while true do
        local nl = find(text, "\n", pos, true)
        if not nl then break end
        pos = nl + 1
        starts[#starts + 1] = pos
      end
      src = { text = text, starts = starts }
    end
    cache[source] = src
  end
  local first = src and src.starts[n]
  if not first then return nil end
  local after = src.starts[n + 1]
  return src.text:sub(first, after and after - 2 or #src.text)
end

local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
  repeat return then true until while]]):gmatch("%a+") do KEYWORDS[w] = true end

-- A name a person would call a function: not a keyword, not punctuation.
local function is_name(s)
  return s ~= nil and s:find("[%w_]") ~= nil and not KEYWORDS[s]
end

-- The name a definition line gives its function, as written:
-- `function Parser:next(`, `local function parse(`, `M.encode = function(`,
-- `["encode"] = function(`; a key that is no identifier keeps its brackets
-- (`["("]`, `["for"]`: luacheck's handlers of those tokens).
local function declared_name(line)
  local name = line:match("function%s+([%a_][%w_%.:]*)%s*%(")
    or line:match("([%a_][%w_%.]*)%s*=%s*function%s*%(")
  if name and not KEYWORDS[name] then return name end
  local key = line:match("%[%s*\"([^\"]+)\"%s*%]%s*=%s*function%s*%(")
    or line:match("%[%s*'([^']+)'%s*%]%s*=%s*function%s*%(")
  if key then
    if key:match("^[%a_][%w_]*$") and not KEYWORDS[key] then return key end
    return '["' .. key .. '"]'
  end
end

-- The last part of a path ("a/b/c.lua" -> "c.lua").
local function base_name(path)
  return path:match("([^/]*)$")
end

-- The module a file was required as: the name in package.loaded whose
-- package.searchpath is that file (require's Lua searcher names the
-- chunk after the same path), the first by name; nil for the script and
-- files loaded otherwise. Built once per describe, when a main chunk
-- asks.
local function module_finder()
  local by_file
  return function(file)
    if not by_file then
      by_file = {}
      local names = {}
      for name in pairs(package.loaded) do
        if type(name) == "string" then names[#names + 1] = name end
      end
      table.sort(names)
      for _, name in ipairs(names) do
        local path = type(package.path) == "string" and package.searchpath(name, package.path)
        if path and not by_file[path] then by_file[path] = name end
      end
    end
    return by_file[file]
  end
end

-- Per function: name, file, line defined. Several functions defined on one
-- line share its declared name only in appearance: it goes to the one its
-- call sites call by that name, else to the one that ends last (the
-- outer); the others are anonymous.
local function describe(data)
  local loaded, cache, module_of = loaded_names(), {}, module_finder()
  local c_module = {}
  -- mod is a C module (package.searchpath finds it on package.cpath)
  local function is_c_module(mod)
    if c_module[mod] == nil then
      c_module[mod] = type(package.cpath) == "string" and package.searchpath(mod, package.cpath) ~= nil
    end
    return c_module[mod]
  end
  local fns, count, on_line = {}, {}, {}
  for i, info in ipairs(data.info) do
    local func, callname = info[1], info[2]
    local d = getinfo(func, "S")
    local fn = { line = d.linedefined, last = d.lastlinedefined, callname = callname }
    if d.what == "C" then
      local cands = loaded[func]
      fn.name, fn.file, fn.line = std_name(func)
        or (cands and pick(cands, #cands > 1 and is_c_module or nil))
        or (is_name(callname) and callname) or "anonymous C function", "[C]", 0
    else
      fn.file = d.source:sub(1, 1) == "@" and d.source:sub(2) or d.short_src
      if d.what == "main" then
        -- a required module's main chunk is named after its module (the
        -- script's stays "main chunk")
        local module = d.source:sub(1, 1) == "@" and module_of(fn.file)
        fn.name, fn.main = module and ("main chunk (" .. module .. ")") or "main chunk", true
      else
        local line = source_line(d.source, d.linedefined, cache)
        local decl = line and declared_name(line)
        local cands, g = loaded[func], nil
        if cands then
          local own = #cands > 1 and d.source:sub(1, 1) == "@" and module_of(fn.file)
          g = pick(cands, own and function(mod) return mod == own end or nil)
        end
        if g and not (decl and decl:find(":", 1, true)) then
          fn.name = g
        else
          fn.decl = decl
          local key = fn.file .. "\0" .. fn.line
          on_line[key] = on_line[key] or {}
          on_line[key][#on_line[key] + 1] = fn
        end
      end
    end
    fns[i] = fn
  end
  for _, group in pairs(on_line) do
    local owner = group[1]
    if #group > 1 then
      owner = nil
      for _, fn in ipairs(group) do
        local short = fn.decl and fn.decl:match("([^.:]+)$")
        if fn.callname and fn.callname == short then owner = fn end
      end
      if not owner then
        for _, fn in ipairs(group) do
          if not owner or fn.last > owner.last then owner = fn
          elseif fn.last == owner.last then owner = false; break end
        end
      end
    end
    for _, fn in ipairs(group) do
      local short = fn.decl and fn.decl:match("([^.:]+)$")
      if fn == owner and fn.decl then
        fn.name = fn.decl
      elseif is_name(fn.callname) and (fn == owner or fn.callname ~= short) then
        fn.name = fn.callname
      else
        fn.name = "anonymous@" .. base_name(fn.file) .. ":" .. fn.line
      end
    end
  end
  for _, fn in ipairs(fns) do
    local key = fn.file .. "\0" .. fn.name
    if not fn.main and fn.file ~= "[C]" then count[key] = (count[key] or 0) + 1 end
  end
  -- two prototypes of one file with one name: each gets its line
  -- ("fib:12"), and those defined on one line a number ("f:3#2"); the
  -- same name in two files stays as it is (two functions all the same)
  local seen = {}
  for _, fn in ipairs(fns) do
    if not fn.main and fn.file ~= "[C]" and count[fn.file .. "\0" .. fn.name] > 1 then
      if not fn.name:find("^anonymous@") then fn.name = fn.name .. ":" .. fn.line end
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

-- A name as the writer writes it, made safe (csrc/writer/cg_emit.h): a
-- control byte, and a blank at the start or end, as the text \xHH. The
-- loaded profile has its names so; the stacks find their functions by it.
local function safe(s)
  s = s:gsub("[%c\127]", function(c) return format("\\x%02x", c:byte()) end)
  return (s:gsub("^ ", "\\x20"):gsub(" $", "\\x20"))
end

-- Writes the data as callgrind format through the library's one writer
-- (the core's emitter): per function its line costs, and per call site
-- cfi=/cfn=/calls= with the inclusive cost. The writer gives a function
-- id per (file, name), so no viewer merges functions of two files, and
-- makes names safe.
local function to_text(data, cmd, fns)
  fns = fns or describe(data)
  local events = data.events
  local nev = #events
  local e = core.internal.emitter(true, "callgrind.lua profiler")
  local event_lines = {}
  for i, ev in ipairs(events) do event_lines[i] = { name = ev, long_name = LONG_NAMES[ev] } end
  -- desc: Engine: vm (the counting interpreter's clock) or hook (prof.engine)
  e:part { pid = data.pid, cmd = cmd, positions = { "line" }, events = events, event_lines = event_lines,
    desc = data.engine and { { "Engine", data.engine } } or nil }
  -- each caller's calls in order of line, then callee: sorted as one
  -- number per call (line, callee and the call's index in 23, 20 and 20
  -- bits) where they fit, a comparison in Lua costing 20 times more
  local calls = {}
  local ed, stride = data.edges, 4 + nev
  local packed = #ed // stride < 2 ^ 20 and #fns < 2 ^ 20
  for k = 1, #ed, stride do
    local caller = ed[k]
    packed = packed and ed[k + 1] >= 0 and ed[k + 1] < 2 ^ 23
    calls[caller] = calls[caller] or {}
    calls[caller][#calls[caller] + 1] = k
  end
  local function by_site(x, y)
    if ed[x + 1] ~= ed[y + 1] then return ed[x + 1] < ed[y + 1] end
    return ed[x + 2] < ed[y + 2]
  end
  local function sort_calls(mine)
    if not packed then return sort(mine, by_site) end
    for j, k in ipairs(mine) do mine[j] = ed[k + 1] << 40 | ed[k + 2] << 20 | (k - 1) // stride end
    sort(mine)
    for j, v in ipairs(mine) do mine[j] = (v & 0xfffff) * stride + 1 end
  end
  local totals = {}
  for j = 1, nev do totals[j] = 0 end
  for i, fn in ipairs(fns) do
    local lines, mine = data.lines[i], calls[i]
    if #lines > 0 or mine then
      e:fn(nil, fn.file, fn.name)
      e:lines(lines, nev, totals)
      if mine then
        sort_calls(mine)
        for _, k in ipairs(mine) do
          local callee = fns[ed[k + 2]]
          e:call(nil, callee.file, callee.name, ed[k + 3], callee.line, ed[k + 1],
            nev == 1 and ed[k + 4] or { table.unpack(ed, k + 4, k + 3 + nev) })
        end
      end
    end
  end
  e:totals(totals)
  return assert(e:finish())
end

---------------------------------------------------------------------------
-- Stacks (opts.stacks): kept beside the Profile, in memory only
---------------------------------------------------------------------------

local STACKS = setmetatable({}, { __mode = "k" })

-- The Function handles of the written functions, by our index.
local function handles(prof, fns)
  local by = {}
  for f in prof:functions() do by[f.file .. "\0" .. f.name] = f end
  local t = {}
  for i, fn in ipairs(fns) do t[i] = by[safe(fn.file) .. "\0" .. safe(fn.name)] end
  return t
end

local Profile = core.methods.Profile

-- The column of event ev (a name or an index; nil: the first) in the
-- recorded stacks st, or nil when st has no such event.
local function event_column(st, ev)
  if ev == nil then return 1 end
  for i, name in ipairs(st.events) do
    if name == ev or i == ev then return i end
  end
  return nil
end

--- The profile's call stacks (a Lua profile made with `stacks = true`):
-- iterates `frames, cost` per distinct stack whose own cost in `ev` is not
-- 0, frames the Function handles from the outermost to the one that ran
-- (a coroutine's stack continues the stack of the resume that runs it);
-- the costs add up to the total. Raises for a profile without stacks.
-- @param[opt] ev an event name or index (default the first)
-- @usage for frames, cost in prof:stacks("Instr") do print(#frames, cost) end
function Profile:stacks(ev)
  local st = STACKS[self]
  if not st then
    error("prof:stacks: this profile has no stacks (profile it with stacks = true)", 2)
  end
  local col = event_column(st, ev)
  if not col then
    args.fail("stacks", 1, format("no event %s; events: %s", args.show(ev), concat(st.events, ", ")))
  end
  local data, width, fns = st.data, 2 + #st.events, st.fns
  -- a stack's frames, by walking up its parents (a new array each time)
  local function frames(node)
    local rev = {}
    while node > 0 do
      rev[#rev + 1] = fns[data[(node - 1) * width + 2]]
      node = data[(node - 1) * width + 1]
    end
    local f, m = {}, #rev
    for i = 1, m do f[i] = rev[m + 1 - i] end
    return f
  end
  local node, n = 0, #data // width
  return util.iterator(function()
    while node < n do
      node = node + 1
      local cost = data[(node - 1) * width + 2 + col]
      if cost ~= 0 then return frames(node), cost end
    end
  end, "stacks (frames, cost)")
end

-- The recorded trie for callgrind.export.stacks (a floor below: it finds
-- it in core.internal): data (parent, function, cost per event, a node
-- each), its width, the event's column and the Function handles by our
-- index; nil for a profile without stacks. Raises for an unknown event.
core.internal.stack_trie = function(prof, ev)
  local st = STACKS[prof]
  if not st then return nil end
  local col = event_column(st, ev)
  if not col then error("no event " .. tostring(ev)) end
  return st.data, 2 + #st.events, col, st.fns
end

core.internal.stacks_method = Profile.stacks

-- The names of the functions as folded frames, by our index: escaped as
-- prof:folded escapes them (stacks.escape: `\\`, `\;`, `\n`, `\r`). The
-- core writes the folded stacks of Instr with them (prof_write_folded:
-- `frame;frame;frame cost`, outermost first, a line per stack with a
-- cost), what until_exit writes beside the profile when asked for stacks.
local function folded_names(fns)
  local names, escape = {}, util.fold_escape
  for i, fn in ipairs(fns) do names[i] = escape(fn.name) end
  return names
end

-- data -> Profile, text
local function build(data)
  local fns = describe(data)
  local text = to_text(data, nil, fns)
  local prof = assert(require("callgrind.model.load").parse(text, "(lua profile)"))
  if data.stacks then
    STACKS[prof] = { data = data.stacks, events = data.events, fns = handles(prof, fns) }
  end
  return prof, text
end

---------------------------------------------------------------------------
-- The API
---------------------------------------------------------------------------

--- Starts profiling the running code (the calling function and the ones
-- that called it are on the profile's stack from here on).
-- @tparam[opt] table opts `time = true` adds event `Time`, `alloc = true`
--   event `Alloc`; `count_hook = true` counts with a count hook (slower,
--   the same numbers); `lines = false` collects functions and calls only
--   (faster); `stacks = true` records every distinct call stack
--   (`prof:stacks`)
-- @usage profiler.start(); work(); local prof = profiler.stop()
function M.start(opts)
  args.options(opts, "start", 1, "profiler")
  check_free("start", opts)
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

-- The total of each event of the data (the sum of its lines).
local function data_total(data)
  local nev, total = #data.events, 0
  for _, lines in ipairs(data.lines) do
    for k = 2, #lines, nev + 1 do total = total + lines[k] end
  end
  return total
end

--- Runs fn() under the profiler.
-- @tparam function fn
-- @tparam[opt] table opts as for `start`, plus `runs = N`: runs fn N times
--   (each profiled alone) and returns the Profile of the run with the
--   largest `Instr` total, then `{ min =, max =, totals = { run 1, ... } }`
--   (the `Instr` totals) instead of fn's results. The N runs share this
--   process and its string-hash seed: the spread is one process's only
--   (`callgrind.spread` runs a script in fresh processes)
-- @return the Profile of what ran inside fn, then fn's results; an error in
--   fn stops the profiler and is raised again
-- @usage local prof, result = profiler.profile(function() return work() end)
-- @usage local prof, spread = profiler.profile(work, { runs = 5 }); print(spread.max - spread.min)
function M.profile(fn, opts)
  args.check_type(fn, "function", "profile", 1)
  opts = args.options(opts, "profile", 2, "profile")
  check_free("profile", opts)
  if opts.runs == nil then return finish(core.prof_run(fn, opts)) end
  local runs = args.count(opts.runs, "profile", 2)
  if runs < 1 then args.fail("profile", 2, "option 'runs' must be at least 1") end
  local worst, totals = nil, {}
  for i = 1, runs do
    local data = core.prof_run(fn, opts)
    totals[i] = data_total(data)
    if not worst or totals[i] > worst.total then worst = { data = data, total = totals[i] } end
  end
  local min, max = totals[1], totals[1]
  for _, t in ipairs(totals) do
    if t < min then min = t end
    if t > max then max = t end
  end
  return (build(worst.data)), { min = min, max = max, totals = totals }
end

--- True while the profiler runs.
-- @usage if profiler.running() then ... end
function M.running()
  return core.prof_running()
end

-- What a core write returned: true, or nil and the cause (without the
-- path it starts with).
local function written(path, ok, err)
  if ok then return true end
  local plain = path .. ": "
  if err:sub(1, #plain) == plain then err = err:sub(#plain + 1) end
  return nil, err
end

-- Writes text to path whole or not at all (the core's atomic write: a
-- temporary file in the same directory, renamed into place).
-- @return true, or nil and the cause (without the path)
local function write_atomic(path, text)
  return written(path, core.write_file_atomic(path, text))
end

-- Writes the folded stacks of data to path as write_atomic writes
-- (built in the core: the names are folded_names').
local function write_folded(path, data, names)
  return written(path, core.prof_write_folded(path, data.stacks, 2 + #data.events, names))
end

-- One line on stderr: the profile was not written, and why.
local function complain(path, cause)
  io.stderr:write(("callgrind.profiler: no profile written to %s: %s\n")
    :format(path, (tostring(cause):gsub("%s*\n%s*", " "))))
end

--- Profiles the rest of the program and writes the callgrind file when it
-- ends: normally, by `os.exit` (wrapped for this), or with an error. What
-- `lua5.4 -lcallgrind.start script.lua` does. Only what is called after
-- this returns is profiled (the script's main chunk, not its loader). The
-- file is written to a temporary name and renamed into place; when it
-- cannot be written (the hook was replaced, the disk is full, the path is
-- not writable, an error while writing) one line on stderr says why and
-- no file is left.
-- @tparam[opt] table opts as for `start`, plus `out`: the file (default
--   `$CALLGRIND_OUT`, else `callgrind.out.<pid>` in the current directory);
--   with `stacks = true` the folded stacks of `Instr` go to `out .. ".folded"`
-- @return an object that writes the file when collected (keep it: the
--   Lua state's closing collects it)
-- @usage local keep = profiler.until_exit{ out = "script.callgrind" }
function M.until_exit(opts)
  opts = args.options(opts, "until_exit", 1, "until_exit")
  -- a tail call: exit_writer takes this frame's place, so check_free's
  -- error (level 3) names the caller's line
  return core.internal.exit_writer(opts)
end

-- until_exit's work, its options checked: callgrind.start, whose options
-- are right by construction, calls it directly, so that a profiled script
-- does not pay for loading callgrind.api
function core.internal.exit_writer(opts)
  check_free("until_exit", opts)
  local out = opts.out or os.getenv("CALLGRIND_OUT")
  local exit = os.exit
  local done = false
  -- sig: "SIGTERM" when that signal ends the run (said on stderr, since
  -- the process then ends without a message of its own)
  local function write(data, why, sig)
    if done then return end
    done = true
    local path = out or ("callgrind.out." .. (data and data.pid or core.prof_pid()))
    if not data then return complain(path, why or "the profiler was stopped before the end") end
    local ok, text, names = pcall(function()
      local fns = describe(data)
      return to_text(data, command_line(), fns), data.stacks and folded_names(fns)
    end)
    if not ok then return complain(path, "error while writing: " .. tostring(text)) end
    local wok, err = write_atomic(path, text)
    if not wok then return complain(path, err) end
    if sig then io.stderr:write(("callgrind.profiler: %s: profile written to %s\n"):format(sig, path)) end
    if names then
      local fok
      fok, wok, err = pcall(write_folded, path .. ".folded", data, names)
      if not fok then
        complain(path .. ".folded", "error while writing: " .. tostring(wok))
      elseif not wok then
        complain(path .. ".folded", err)
      end
    end
  end
  -- check_free made the collector's state, so it is finalized after the
  -- sentinel (finalizers run newest first)
  local sentinel = setmetatable({}, { __gc = core.prof_stopper(function(data, why) write(data, why) end, true) })
  -- os.exit ends the process without closing the Lua state: wrap it
  rawset(os, "exit", core.prof_stopper(function(data, why, ...)
    write(data, why)
    return exit(...)
  end, true))
  -- SIGINT: the script's "interrupted!" error, then the writing at the
  -- exit; SIGTERM: this stopper writes, then the signal ends the process
  core.prof_start(opts, 0, core.prof_stopper(write, true))
  return sentinel
end

return M
