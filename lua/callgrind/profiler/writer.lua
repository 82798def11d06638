--- The Lua profiler's writer: the names users recognise, the callgrind
-- text, the stack record or folded text beside it, and the write at a
-- program's end. callgrind.profiler uses it for the profiles it returns;
-- callgrind.profiler.exit loads it alone when a program ends (the API's
-- module is then never parsed: parsing is most of what a profiled empty
-- script costs).
-- @module callgrind.profiler.writer
local core = require "callgrind.core"
-- util is loaded where first used (the folded names alone need it)
local util = setmetatable({}, { __index = function(_, k) return require("callgrind.util")[k] end })

local M = {}

local ipairs, pairs, tostring, type = ipairs, pairs, tostring, type
local concat, sort = table.concat, table.sort
local format = string.format
local getinfo = debug.getinfo
local std_name = core.prof_std_name

local LONG_NAMES = {
  Instr = "Lua VM instructions",
  Time = "Time (ns)",
  Alloc = "Bytes allocated",
}

-- the running profiles (NEST) and the one line on stderr (complain)
local exit = require "callgrind.profiler.exit"
local NEST = exit.nest

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

--- Per function of the profiler's data (core.prof_stop's): its name,
-- file and line defined, as the profile names it. Several functions
-- defined on one line share its declared name only in appearance: it goes
-- to the one its call sites call by that name, else to the one that ends
-- last (the outer); the others are anonymous.
-- @usage local fns = writer.describe(data)
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

--- A name as the writer writes it, made safe (csrc/writer/cg_emit.h): a
-- control byte, and a blank at the start or end, as the text \xHH. The
-- loaded profile has its names so; the stacks find their functions by it.
-- @usage writer.safe(" a\tb") --> "\\x20a\\x09b"
local function safe(s)
  s = s:gsub("[%c\127]", function(c) return format("\\x%02x", c:byte()) end)
  return (s:gsub("^ ", "\\x20"):gsub(" $", "\\x20"))
end

--- The data as callgrind-format text, through the library's one writer
-- (the core's emitter): per function its line costs, and per call site
-- cfi=/cfn=/calls= with the inclusive cost. The writer gives a function
-- id per (file, name), so no viewer merges functions of two files, and
-- makes names safe. cmd: the command line it names (or nil); fns:
-- describe's (nil: described here).
-- @usage local text = writer.to_text(data, nil, writer.describe(data))
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

--- The data of the innermost running profile, its segments merged when
-- a profile was nested in it (its context leaves the running profiles).
-- @usage data = writer.unnest(core.prof_stop())
local function unnest(data)
  local ctx = table.remove(NEST)
  if not data or not ctx or #ctx.parts == 0 then return data end
  if type(data.stacks) == "number" then data.stacks = core.prof_live_stacks() end
  -- (parsed only when a profile was nested: the writer at a program's
  -- end seldom needs it)
  return require("callgrind.profiler.merge").merge(ctx, data)
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
  -- the end line only (a search from the start tries every byte)
  local digest = text:match("# end digest=fnv1a64:(%x+)\n$", math.max(1, #text - 63))
  return written(path, core.internal.write_stack_record(path, data.stacks, data.events, files, names, digest))
end

-- One line on stderr: the profile was not written, and why.
local complain = exit.complain

--- Writes the profile at the program's end (what callgrind.profiler.exit
-- armed calls, once): data nil when the profiler was stopped before,
-- why the cause then; sig "SIGTERM" when that signal ends the run
-- (said on stderr, since the process then ends without a message of its
-- own); out the file, nil for callgrind.out.<pid>; stacks the option
-- (true: the stack record FILE.stacks, "folded": folded text FILE.folded).
-- Failures are one line on stderr, never an error.
-- @usage writer.exit_write(core.prof_stop(), nil, nil, "script.callgrind", true)
function M.exit_write(data, why, sig, out, stacks)
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

M.describe = describe
M.to_text = to_text
M.safe = safe
M.unnest = unnest

return M
