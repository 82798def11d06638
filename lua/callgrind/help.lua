--- `callgrind.help()`: the objects of the library and, for each, its
-- methods and fields with one line each and the options they take; one
-- method or function in full (its options' types, defaults and meanings),
-- from callgrind.api (the one declaration, which also makes
-- docs/reference.md and the LuaLS types).
-- @module callgrind.help
local api = require "callgrind.api"

local ipairs, getmetatable, pairs, rawget, type = ipairs, getmetatable, pairs, rawget, type
local string_format, string_rep, table_concat = string.format, string.rep, table.concat

local M = {}

--- The objects (callgrind.api's).
M.objects = api.objects

local by_name = {}
for _, o in ipairs(M.objects) do by_name[o.name] = o end

-- The object a value is: the module, a handle, or one of the Lua layer's
-- tables, by its metatable's __name ("callgrind.Profile" -> Profile).
local function object_of(x)
  if type(x) == "string" then return by_name[x] or by_name[x:match("^callgrind%.(.*)$") or ""] end
  if type(x) == "table" and rawget(x, "load") and rawget(x, "parse") and rawget(x, "help") then
    return by_name.callgrind
  end
  local mt = getmetatable(x)
  local name = type(mt) == "table" and type(mt.__name) == "string" and mt.__name:match("^callgrind%.(.*)$")
  return name and by_name[name]
end

-- The name an entry declares ("prof:top(n ...)" -> "top", "fn.name" ->
-- "name", "groups[i]" -> nil).
local function name_of(e) return e[1]:match("^[%w_]+[.:]([%w_]+)") end

local function option_names(e)
  local names = {}
  for i, o in ipairs(api.options[e.opts]) do names[i] = o[1] end
  return table_concat(names, ", ")
end

local function entry_lines(o)
  local w = 0
  for _, e in ipairs(o.entries) do if #e[1] > w then w = #e[1] end end
  local out = {}
  for _, e in ipairs(o.entries) do
    out[#out + 1] = "  " .. e[1] .. string_rep(" ", w - #e[1]) .. "  " .. e[2]
    if e.opts and #api.options[e.opts] > 0 then
      out[#out + 1] = "  " .. string_rep(" ", w + 2) .. "  opts: " .. option_names(e)
    end
  end
  return out
end

-- One entry in full: signature, meaning, returns, options, failures.
local function entry_text(e)
  local out = { e[1], "  " .. e[2] }
  if e[3] then out[#out + 1] = (e[1]:find("(", 1, true) and "  returns " or "  type ") .. e[3] end
  if e.deprecated then out[#out + 1] = "  deprecated: use " .. e.deprecated end
  local opts = e.opts and api.options[e.opts]
  if opts and #opts > 0 then
    out[#out + 1] = "  options:"
    local w = 0
    for _, o in ipairs(opts) do if #o[1] > w then w = #o[1] end end
    for _, o in ipairs(opts) do
      out[#out + 1] = string_format("    %s%s  %s%s: %s", o[1], string_rep(" ", w - #o[1]), o[2],
        o[3] and (" = " .. o[3]) or "", o[4])
    end
  end
  if e.errors then out[#out + 1] = "  fails with nil, message, kind: " .. table_concat(e.errors, ", ") end
  return table_concat(out, "\n")
end

-- Where a function value is: the entries whose method or module function
-- it is (methods tables of the core and of the Lua layer's objects).
local function entries_of_function(f)
  local found = {}
  local ok, callgrind = pcall(require, "callgrind")
  local tables = {}
  if ok then
    tables.callgrind = callgrind
    for class, t in pairs(callgrind.methods) do tables[class] = t end
  end
  for _, o in ipairs(M.objects) do
    local t = tables[o.name]
    if not t and package.loaded["callgrind.model.query"] then
      local q = package.loaded["callgrind.model.query"]
      t = ({ Selection = q.Selection, Edges = q.Edges, Groups = q.Groups })[o.name]
    end
    if t then
      for _, e in ipairs(o.entries) do
        local name = name_of(e)
        if name and rawget(t, name) == f then found[#found + 1] = e end
      end
    end
  end
  return found
end

-- The entries a name stands for: "top" (every object's top), "prof:top",
-- "Profile.top", "Profile:top", "callgrind.load".
local function entries_named(s)
  local class, name = s:match("^([%w_]+)[.:]([%w_]+)$")
  local found = {}
  for _, o in ipairs(M.objects) do
    for _, e in ipairs(o.entries) do
      local n = name_of(e)
      if n and ((not class and n == s) or (class and n == name and (class == o.name or class == o.var))) then
        found[#found + 1] = e
      end
    end
  end
  return found
end

-- Every name help knows, for the "did you mean" of a name it does not.
local function known_names()
  local names = {}
  for _, o in ipairs(M.objects) do
    names[#names + 1] = o.name
    for _, e in ipairs(o.entries) do names[#names + 1] = name_of(e) end
  end
  return names
end

local function entries_text(found)
  local out = {}
  for i, e in ipairs(found) do out[i] = entry_text(e) end
  return table_concat(out, "\n\n")
end

--- The help text: the objects (no argument); one object's methods and
-- fields with the options each takes (a Profile, Function, ... or its
-- name); or one method or function in full, by name ("top", "prof:top",
-- "callgrind.load") or given itself (`prof.top`). The REPL shows the
-- string it returns; a script prints it.
-- @treturn string
-- @usage print(callgrind.help(prof))
function M.text(x)
  local args = require("callgrind.args")
  if x == nil then
    local out = { "callgrind: read callgrind-format profiles. Objects (callgrind.help(x) for one; "
      .. "callgrind.help(\"top\") for a method):" }
    for _, o in ipairs(M.objects) do
      out[#out + 1] = string_format("  %-11s %s", o.name, o.what)
    end
    return table_concat(out, "\n")
  end
  local o = object_of(x)
  if o then
    local out = { string_format("%s: %s", o.name, o.what) }
    for _, l in ipairs(entry_lines(o)) do out[#out + 1] = l end
    out[#out + 1] = string_format("(callgrind.help(\"%s:NAME\") shows one in full)", o.var)
    return table_concat(out, "\n")
  end
  if type(x) == "function" then
    local found = entries_of_function(x)
    if #found > 0 then return entries_text(found) end
    args.fail("help", 1, "no help for this function: not a function of the library; try callgrind.help()", 3)
  end
  if type(x) == "string" then
    local found = entries_named(x)
    if #found > 0 then return entries_text(found) end
    local close = args.closest(x:match("[%w_]+$") or x, known_names())
    args.fail("help", 1, string_format("no help for '%s'%s; try callgrind.help()", x,
      #close > 0 and ("; did you mean " .. table_concat(close, ", ") .. "?") or ""), 3)
  end
  args.fail("help", 1, string_format("no help for %s; try callgrind.help()", type(x)), 3)
end

return M
