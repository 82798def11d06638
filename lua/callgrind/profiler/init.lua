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
  local st = opts and opts.stacks
  if type(st) == "string" and st ~= "folded" then
    error(format("callgrind.profiler.%s: option 'stacks' must be true, false or \"folded\", got %q", fname, st), 3)
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
-- too many), and the restarted segment's frames below the outer
-- profile's first frame were never the outer profile's.
--
-- NEST[i]: the running profiles, outermost first: { opts, base (the
-- depth, counted from the bottom of the stack, of the last frame that is
-- not the profile's), parts = { { data, inner, fn, stack }, ... } }.
local NEST = {}

-- The depth of the frame at level (of the caller of depth_of): the
-- frames from it to the bottom of the stack.
local function depth_of(level)
  local n = level + 1
  while getinfo(n + 1, "l") do n = n + 1 end
  return n - level
end

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

-- The merged data of a profile's segments (see NEST), the last one's
-- data given. Functions are matched by their value.
local function merge(ctx, last)
  local nev = #last.events
  local stride = 4 + nev
  local out = { events = last.events, pid = last.pid, engine = last.engine, info = {}, lines = {}, edges = {} }
  local id_of = {}
  local function fid(func, name)
    local id = id_of[func]
    if not id then
      id = #out.info + 1
      id_of[func] = id
      out.info[id] = { func, name }
      out.lines[id] = {}
    elseif name and not out.info[id][2] then
      out.info[id][2] = name
    end
    return id
  end
  local line_cost = {}   -- id -> line -> costs
  local edges, order = {}, {}   -- "caller line callee" -> { caller, line, callee, count, costs }
  local function edge(caller, line, callee)
    local key = caller .. " " .. line .. " " .. callee
    local e = edges[key]
    if not e then
      e = { caller, line, callee, 0 }
      for j = 1, nev do e[4 + j] = 0 end
      edges[key] = e
      order[#order + 1] = key
    end
    return e
  end
  -- the trie of stacks: "parent fn" -> node
  local stacks = ctx.opts.stacks and {} or nil
  local nodes = {}
  local function node(parent, f)
    local key = parent .. " " .. f
    local x = stacks[key]
    if not x then
      x = #nodes // (2 + nev) + 1
      stacks[key] = x
      nodes[#nodes + 1] = parent
      nodes[#nodes + 1] = f
      for _ = 1, nev do nodes[#nodes + 1] = 0 end
    end
    return x
  end
  local function add(d, skip, prefix)
    local ids = {}
    for i, info in ipairs(d.info) do ids[i] = fid(info[1], info[2]) end
    for i, lines in ipairs(d.lines) do
      local id = ids[i]
      local t = line_cost[id] or {}
      line_cost[id] = t
      for k = 1, #lines, nev + 1 do
        local c = t[lines[k]]
        if not c then
          c = {}
          for j = 1, nev do c[j] = 0 end
          t[lines[k]] = c
        end
        for j = 1, nev do c[j] = c[j] + lines[k + j] end
      end
    end
    local ed = d.edges
    for k = 1, #ed, stride do
      local e = edge(ids[ed[k]], ed[k + 1], ids[ed[k + 2]])
      e[4] = e[4] + ed[k + 3]
      for j = 1, nev do e[4 + j] = e[4 + j] + ed[k + 3 + j] end
    end
    if stacks and type(d.stacks) == "table" then
      local width, map, depth = 2 + nev, {}, {}
      for x = 1, #d.stacks // width do
        local b = (x - 1) * width
        local p, f = d.stacks[b + 1], ids[d.stacks[b + 2]]
        depth[x] = p > 0 and depth[p] + 1 or 1
        if depth[x] > skip then
          local parent = p > 0 and map[p] or prefix
          map[x] = node(parent, f)
          local at = (map[x] - 1) * width
          for j = 1, nev do nodes[at + 2 + j] = nodes[at + 2 + j] + d.stacks[b + 2 + j] end
        end
      end
    end
    return ids
  end
  local function total(d)
    local t = {}
    for j = 1, nev do t[j] = 0 end
    for _, lines in ipairs(d.lines) do
      for k = 1, #lines, nev + 1 do
        for j = 1, nev do t[j] = t[j] + lines[k + j] end
      end
    end
    return t
  end
  local segments = {}
  for _, p in ipairs(ctx.parts) do segments[#segments + 1] = p.data end
  segments[#segments + 1] = last
  local base = ctx.base
  for i, seg in ipairs(segments) do
    -- after a pause, the segment's first frames are the stack of the
    -- split: those from base + 1 were closed before too, those below are
    -- not the profile's
    local split = ctx.parts[i - 1]
    add(seg, split and base or 0, 0)
    if split then
      local st = split.stack
      for d = 2, #st do
        local e = edge(fid(st[d - 1].func), st[d - 1].line, fid(st[d].func))
        e[4] = e[4] - 1
        if d <= base + 1 then
          for j = 1, nev do e[4 + j] = 0 end
        end
      end
    end
    local part = ctx.parts[i]
    if part then
      -- the inner profile's costs where it ran: a call from the frame
      -- that called profile (the top of the split's stack)
      local st = part.stack
      local prefix = 0
      if stacks then
        for d = base + 1, #st do prefix = node(prefix, fid(st[d].func)) end
      end
      local tot, active = {}, {}
      for j = 1, nev do tot[j] = 0 end
      for _, inner in ipairs(part.inner) do
        add(inner, 0, prefix)
        local t = total(inner)
        for j = 1, nev do tot[j] = tot[j] + t[j] end
      end
      for d = base + 1, #st do
        local f = fid(st[d].func)
        if d >= base + 2 and not active[f] then
          local e = edge(fid(st[d - 1].func), st[d - 1].line, f)
          for j = 1, nev do e[4 + j] = e[4 + j] + tot[j] end
        end
        active[f] = true
      end
      local top, f = st[#st], fid(part.fn)
      local e = edge(fid(top.func), top.line, f)
      e[4] = e[4] + #part.inner
      if not active[f] then
        for j = 1, nev do e[4 + j] = e[4 + j] + tot[j] end
      end
    end
  end
  for id, t in pairs(line_cost) do
    local ls = {}
    for line in pairs(t) do ls[#ls + 1] = line end
    sort(ls)
    local arr = out.lines[id]
    for _, line in ipairs(ls) do
      local c = t[line]
      local any = false
      for j = 1, nev do any = any or c[j] ~= 0 end
      if any then
        arr[#arr + 1] = line
        for j = 1, nev do arr[#arr + 1] = c[j] end
      end
    end
  end
  for _, key in ipairs(order) do
    local e = edges[key]
    if e[4] > 0 then
      for j = 1, stride do out.edges[#out.edges + 1] = e[j] end
    end
  end
  if stacks then out.stacks = nodes end
  return out
end

-- The data of the innermost running profile, its segments merged (the
-- context leaves NEST).
local function unnest(data)
  local ctx = table.remove(NEST)
  if not data or not ctx or #ctx.parts == 0 then return data end
  if type(data.stacks) == "number" then data.stacks = core.prof_live_stacks() end
  return merge(ctx, data)
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
--   with `stacks = true` the stack record goes to `out .. ".stacks"` (the
--   tree of the run's stacks, each node once: docs/format.md), with
--   `stacks = "folded"` the folded stacks of `Instr` to `out .. ".folded"`
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
      local folded = opts.stacks == "folded"
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
  -- the profile's frames: those above the caller of until_exit, or of
  -- the require of callgrind.start
  local base, level = nil, 2
  while true do
    local d = getinfo(level, "f")
    if not d then break end
    if d.func == require then base = depth_of(level) - 1 end
    level = level + 1
  end
  NEST[#NEST + 1] = { opts = opts, base = base or depth_of(3) - 1, parts = {} }
  core.prof_start(opts, 0, core.prof_stopper(write, true))
  return sentinel
end

return M
