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
-- args and util are loaded where first used: the writer that
-- callgrind.start loads at a program's end needs neither (parsing them
-- was a third of what that writer cost)
local args = setmetatable({}, { __index = function(_, k) return require("callgrind.args")[k] end })
local util = setmetatable({}, { __index = function(_, k) return require("callgrind.util")[k] end })
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

-- what until_exit and callgrind.start arm with the core alone (the
-- running profiles, check_free): this module is the writer they load at
-- the program's end
local exit = require "callgrind.profiler.exit"
local check_free = exit.check_free

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

-- function -> { { "module.field", module }, ... } over package.loaded, for
-- the functions of the set only (a profile's: the modules' other functions
-- took memory for nothing)
local function loaded_names(set)
  local names = {}
  for modname, mod in pairs(package.loaded) do
    if type(modname) == "string" and type(mod) == "table" then
      for k, v in pairs(mod) do
        if set[v] and type(k) == "string" and k:match("^[%a_][%w_]*$") then
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
-- The lines of want[source] (a set) are read at the first call for a
-- source, by the core (prof_source_lines), and kept in cache: reading
-- every file whole into a string and finding its newlines in Lua cost a
-- third of writing a profile.
local function source_line(source, n, cache, want)
  local lines = cache[source]
  if lines == nil then
    lines = core.prof_source_lines(source, want[source] or { [n] = true })
    cache[source] = lines
  end
  return lines[n]
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
-- files loaded otherwise. A file is matched against package.path's
-- templates, and only the loaded names a template gives it are searched
-- for (a search for every loaded name opened files by the hundred).
local function module_finder()
  local by_file, by_sub, templates = {}, nil, nil
  -- the loaded names by the text a template's "?" stands for ("a.b":
  -- "a/b"), and the templates as { before "?", after it } (nil when one
  -- has several "?": then every loaded name is searched for)
  local function index()
    by_sub, templates = {}, {}
    for name in pairs(package.loaded) do
      if type(name) == "string" then
        local sub = name:gsub("%.", "/")
        by_sub[sub] = by_sub[sub] or {}
        table.insert(by_sub[sub], name)
      end
    end
    for t in package.path:gmatch("[^;]+") do
      local pre, post = t:match("^([^?]*)%?([^?]*)$")
      if pre then
        templates[#templates + 1] = { pre, post }
      elseif t:find("?", 1, true) then
        templates = nil
        break
      end
    end
  end
  return function(file)
    if by_file[file] ~= nil or type(package.path) ~= "string" then return by_file[file] or nil end
    if not by_sub then index() end
    local cands = {}
    for _, t in ipairs(templates or {}) do
      local pre, post = t[1], t[2]
      if #file >= #pre + #post and file:sub(1, #pre) == pre and file:sub(#file - #post + 1) == post then
        for _, name in ipairs(by_sub[file:sub(#pre + 1, #file - #post)] or {}) do cands[#cands + 1] = name end
      end
    end
    if not templates then
      for _, names in pairs(by_sub) do
        for _, name in ipairs(names) do cands[#cands + 1] = name end
      end
    end
    local best = false
    for _, name in ipairs(cands) do
      if (not best or name < best) and package.searchpath(name, package.path) == file then best = name end
    end
    by_file[file] = best
    return best or nil
  end
end

-- The short name Lua gives a source (lobject.c's luaO_chunkid, LUA_IDSIZE
-- 60), for a function the profile describes after it was collected.
local function chunkid(source)
  local c = source:sub(1, 1)
  if c == "=" then return source:sub(2, 60) end
  if c == "@" then
    return #source <= 60 and source:sub(2) or "..." .. source:sub(-56)
  end
  local nl = source:find("\n", 1, true)
  if not nl and #source < 45 then return '[string "' .. source .. '"]' end
  local n = math.min(nl and nl - 1 or #source, 45)
  return '[string "' .. source:sub(1, n) .. '..."]'
end

-- A description of a Lua function collected while profiling ({ source,
-- linedefined, lastlinedefined, what }, cg_prof_fold.c) read as getinfo's
-- fields (a metatable: the profile is written inside a finalizer at exit,
-- where nothing is collected, and a table per function would add up)
local DESCRIBED = { __index = function(d, k)
  if k == "source" then return d[1] end
  if k == "linedefined" then return d[2] end
  if k == "lastlinedefined" then return d[3] end
  if k == "what" then return d[4] end
  if k == "short_src" then return chunkid(d[1]) end
end }

-- Per function: name, file, line defined. Several functions defined on one
-- line share its declared name only in appearance: it goes to the one its
-- call sites call by that name, else to the one that ends last (the
-- outer); the others are anonymous.
local function describe(data)
  local wanted = {}
  for _, info in ipairs(data.info) do
    if type(info[1]) == "function" then wanted[info[1]] = true end
  end
  local loaded, cache, module_of = loaded_names(wanted), {}, module_finder()
  wanted = nil -- luacheck: ignore 311 (its memory goes before the rest)
  local c_module = {}
  -- mod is a C module (package.searchpath finds it on package.cpath)
  local function is_c_module(mod)
    if c_module[mod] == nil then
      c_module[mod] = type(package.cpath) == "string" and package.searchpath(mod, package.cpath) ~= nil
    end
    return c_module[mod]
  end
  local fns, count, on_line = {}, {}, {}
  -- each function's getinfo (a function collected while profiling: its
  -- description), and the definition lines to read, by source
  local ds, want = {}, {}
  for i, info in ipairs(data.info) do
    local func = info[1]
    local d = type(func) == "table" and setmetatable(func, DESCRIBED) or getinfo(func, "S")
    ds[i] = d
    if d.what == "Lua" then
      want[d.source] = want[d.source] or {}
      want[d.source][d.linedefined] = true
    end
  end
  for i, info in ipairs(data.info) do
    local func, callname = info[1], info[2]
    local d = ds[i]
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
        local line = source_line(d.source, d.linedefined, cache, want)
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
  local st, why = STACKS[self], nil
  if not st then st, why = require("callgrind.export.stackrec").of(self) end
  if not st then
    error("prof:stacks: " .. (why or "this profile has no stacks (profile it with stacks = true, "
      .. "or with CALLGRIND_STACKS=1: FILE.stacks beside FILE)"), 2)
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
-- each), its width, the event's column, the Function handles by our
-- index (nil where the profile has none), the record's path (a loaded
-- profile's FILE.stacks) and the number of functions; nil for a profile
-- without stacks. Raises for an unknown event.
core.internal.stack_trie = function(prof, ev)
  local st = STACKS[prof] or require("callgrind.export.stackrec").of(prof)
  if not st then return nil end
  local col = event_column(st, ev)
  if not col then error("no event " .. tostring(ev)) end
  return st.data, 2 + #st.events, col, st.fns, st.source, st.nfn
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
    STACKS[prof] = { data = data.stacks, events = data.events, fns = handles(prof, fns), nfn = #fns }
  end
  return prof, text
end

-- The total of each event of the data (the sum of its lines).
local function data_total(data)
  local nev, total = #data.events, 0
  for _, lines in ipairs(data.lines) do
    for k = 2, #lines, nev + 1 do total = total + lines[k] end
  end
  return total
end

---------------------------------------------------------------------------
-- Nesting: a profile inside a running one
---------------------------------------------------------------------------

-- A `profile` while the profiler runs pauses the outer profile
-- (core.prof_pause: what it collected so far, its open frames closed),
-- runs the inner one alone (its numbers are those of a profile of its
-- own), then restarts the outer one with the frames from the inner
-- call's frame down, before it returns. The outer profile is then every
-- segment added up, the inner profile's costs grafted where it ran
-- (a call of the function profiled from `profile`, whose inclusive cost
-- the open frames take too). What the segments count twice is taken
-- out: a frame open across a pause closes in both segments (one call
-- too many), the restarted segment's frames below the outer profile's
-- first frame were never the outer profile's, and a call the inner
-- profile makes of a function open in the outer one is a recursion
-- there (its edge keeps its count, not its cost, as the collector's
-- edges do). A coroutine suspended across the pause is not restarted:
-- its frames are lost to the outer profile.
--
-- NEST[i]: the running profiles, outermost first: { opts, base (the
-- depth, counted from the bottom of the stack, of the last frame that is
-- not the profile's), parts = { { data, inner, fn, stack }, ... } }.
-- (callgrind.profiler.exit keeps it: callgrind.start pushes its profile
-- before this module is loaded)
local NEST = exit.nest

-- The depth of the frame at level (of the caller of depth_of): the
-- frames from it to the bottom of the stack.
local depth_of = exit.depth_of

-- The frames from level (of the caller) to the bottom, bottom first:
-- { func, line } each, line as the collector takes it (the current line;
-- the line defined with lines = false; 0 for a C function).
local function open_stack(level, lines)
  local frames, n = {}, level + 1
  while true do
    local d = getinfo(n, "fSl")
    if not d then break end
    local line = lines == false and d.linedefined or d.currentline
    frames[#frames + 1] = { func = d.func, line = (line and line > 0) and line or 0 }
    n = n + 1
  end
  local out, m = {}, #frames
  for i = 1, m do out[i] = frames[m + 1 - i] end
  return out
end

-- The data of the innermost running profile, its segments merged (the
-- context leaves NEST).
local function unnest(data)
  local ctx = table.remove(NEST)
  if not data or not ctx or #ctx.parts == 0 then return data end
  if type(data.stacks) == "number" then data.stacks = core.prof_live_stacks() end
  -- (parsed only when a profile was nested: the writer at a program's
  -- end seldom needs it)
  return require("callgrind.profiler.merge").merge(ctx, data)
end

-- A profile of fn inside the running one (see NEST), runs times (nil:
-- once): the part (its inner data each run) and the results of the last
-- run, { ok, data, fn's results... }, its data the worst of the runs
-- (the largest first total). The outer profile is paused: the caller
-- restarts it (restart).
local function nested(fn, opts, runs)
  local ctx = NEST[#NEST]
  if not ctx then
    error("callgrind.profiler.profile: the profiler is already running (started outside callgrind.profiler)", 3)
  end
  local part = { fn = fn, data = core.prof_pause(), inner = {} }
  ctx.parts[#ctx.parts + 1] = part
  -- the outer profile's stacks need the inner one's
  local run_opts = opts
  if ctx.opts.stacks and not opts.stacks then
    run_opts = setmetatable({ stacks = true }, { __index = opts })
  end
  local worst, results
  for _ = 1, runs or 1 do
    -- the stack: profile, nested, this, pcall, prof_run, fn
    local inner = { opts = run_opts, base = depth_of(1) + 2, parts = {} }
    NEST[#NEST + 1] = inner
    local r = table.pack(pcall(core.prof_run, fn, run_opts))
    if NEST[#NEST] == inner then
      local data = unnest(r[1] and r[2] or nil)
      if r[1] then r[2] = data end
    end
    if not r[1] then return part, r end
    part.inner[#part.inner + 1] = r[2]
    r.total = data_total(r[2])
    if not worst or r.total > worst.total then worst = r end
    results = r
  end
  results.worst = worst
  return part, results, run_opts
end

-- Restarts the outer profile paused by nested, from the frame that
-- called `profile` down (profile tail-calls this: its frame is gone),
-- then returns ... (ok), or raises the error ... (not ok).
local function restart(part, ok, ...)
  local ctx = NEST[#NEST]
  part.stack = open_stack(2, ctx.opts.lines)
  -- a tail call: prof_resume's level 1 is the caller of profile
  return core.prof_resume(ctx.opts, 1, ok, ...)
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
  NEST[#NEST + 1] = { opts = opts or {}, base = 0, parts = {} }
  return core.prof_start(opts, 2)
end

--- Stops the profiler.
-- @return the Profile of what ran since `start`, and its callgrind-format
--   text (what `lua5.4 -lcallgrind.start` writes)
-- @usage local prof, text = profiler.stop()
M.stop = core.prof_stopper(function(data)
  if not data then error("callgrind.profiler.stop: the profiler is not running", 3) end
  return build(unnest(data))
end)


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
  local runs
  if opts.runs ~= nil then
    runs = args.count(opts.runs, "profile", 2)
    if runs < 1 then args.fail("profile", 2, "option 'runs' must be at least 1") end
  end
  if core.prof_running() then
    -- nested (see NEST): the outer profile restarts as this returns
    local part, r, run_opts = nested(fn, opts, runs)
    if not r[1] then return restart(part, false, r[2]) end
    local list = {}
    if runs then
      for i, d in ipairs(part.inner) do list[i] = data_total(d) end
    end
    local data = runs and r.worst[2] or r[2]
    if run_opts ~= opts then
      -- stacks only where asked for
      data = setmetatable({ stacks = false }, { __index = data })
    end
    local prof = build(data)
    if runs then
      local min, max = math.huge, -math.huge
      for _, t in ipairs(list) do
        if t < min then min = t end
        if t > max then max = t end
      end
      return restart(part, true, prof, { min = min, max = max, totals = list })
    end
    return restart(part, true, prof, table.unpack(r, 3, r.n))
  end
  check_free("profile", opts)
  local worst, totals = nil, {}
  local last
  for i = 1, runs or 1 do
    -- the stack: profile, pcall, prof_run, fn
    local ctx = { opts = opts, base = depth_of(1) + 2, parts = {} }
    NEST[#NEST + 1] = ctx
    last = table.pack(pcall(core.prof_run, fn, opts))
    if NEST[#NEST] == ctx then
      local data = unnest(last[1] and last[2] or nil)
      if last[1] then last[2] = data end
    end
    if not last[1] then error(last[2], 0) end
    totals[i] = data_total(last[2])
    if not worst or totals[i] > worst.total then worst = { data = last[2], total = totals[i] } end
  end
  if not runs then return (build(last[2])), table.unpack(last, 3, last.n) end
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

-- Writes the stack record of data to path (the profile's text gives the
-- digest it names; fns are describe's), as write_atomic writes (built in
-- the core: csrc/writer/cg_stackrec.c).
local function write_record(path, data, fns, text)
  local files, names = {}, {}
  for i, fn in ipairs(fns) do files[i], names[i] = safe(fn.file), safe(fn.name) end
  local digest = text:match("# end digest=fnv1a64:(%x+)\n$")
  return written(path, core.internal.write_stack_record(path, data.stacks, data.events, files, names, digest))
end

-- One line on stderr: the profile was not written, and why.
local complain = exit.complain

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
--   with `stacks = true` the stack record goes to `out .. ".stacks"` (the
--   tree of the run's stacks, each node once: docs/format.md), with
--   `stacks = "folded"` the folded stacks of `Instr` to `out .. ".folded"`
-- @return an object that writes the file when collected (keep it: the
--   Lua state's closing collects it)
-- @usage local keep = profiler.until_exit{ out = "script.callgrind" }
function M.until_exit(opts)
  opts = args.options(opts, "until_exit", 1, "until_exit")
  -- a tail call: arm takes this frame's place, so check_free's error
  -- (level 3) names the caller's line
  return exit.arm(opts)
end

-- Writes the profile at the program's end (what callgrind.profiler.exit
-- armed calls, once): data nil when the profiler was stopped before,
-- why the cause then; sig "SIGTERM" when that signal ends the run
-- (said on stderr, since the process then ends without a message of its
-- own); out the file, nil for callgrind.out.<pid>; stacks the option
-- (true: the stack record FILE.stacks, "folded": folded text FILE.folded).
function core.internal.exit_write(data, why, sig, out, stacks)
    data = unnest(data)
    local path = out or ("callgrind.out." .. (data and data.pid or core.prof_pid()))
    if not data then return complain(path, why or "the profiler was stopped before the end") end
    local ok, text, fns = pcall(function()
      local fns = describe(data)
      return to_text(data, command_line(), fns), data.stacks and fns
    end)
    if not ok then return complain(path, "error while writing: " .. tostring(text)) end
    local wok, err = write_atomic(path, text)
    if not wok then return complain(path, err) end
    if sig then io.stderr:write(("callgrind.profiler: %s: profile written to %s\n"):format(sig, path)) end
    if fns then
      -- stacks = "folded": the folded text; else the stack record
      local folded = stacks == "folded"
      local spath = path .. (folded and ".folded" or ".stacks")
      local fok
      if folded then
        fok, wok, err = pcall(write_folded, spath, data, folded_names(fns))
      else
        fok, wok, err = pcall(write_record, spath, data, fns, text)
      end
      if not fok then
        complain(spath, "error while writing: " .. tostring(wok))
      elseif not wok then
        complain(spath, err)
      end
    end
end

return M
