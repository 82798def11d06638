--- `callgrind.help()`: the objects of the library and, for each, its
-- methods and fields with one line each, from callgrind.api (the one
-- declaration, which also makes docs/reference.md and the LuaLS types).
-- @module callgrind.help
local api = require "callgrind.api"

local ipairs, getmetatable, type = ipairs, getmetatable, type
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
  if type(x) == "table" and x.load and x.parse and x.help then return by_name.callgrind end
  local mt = getmetatable(x)
  local name = type(mt) == "table" and type(mt.__name) == "string" and mt.__name:match("^callgrind%.(.*)$")
  return name and by_name[name]
end

local function entry_lines(o)
  local w = 0
  for _, e in ipairs(o.entries) do if #e[1] > w then w = #e[1] end end
  local out = {}
  for i, e in ipairs(o.entries) do out[i] = "  " .. e[1] .. string_rep(" ", w - #e[1]) .. "  " .. e[2] end
  return out
end

--- The help text: the objects (no argument), or one object's methods and
-- fields (a Profile, Function, ... or its name). The REPL shows the
-- string it returns; a script prints it.
-- @treturn string
-- @usage print(callgrind.help(prof))
function M.text(x)
  if x == nil then
    local out = { "callgrind: read callgrind-format profiles. Objects (callgrind.help(x) for one):" }
    for _, o in ipairs(M.objects) do
      out[#out + 1] = string_format("  %-11s %s", o.name, o.what)
    end
    return table_concat(out, "\n")
  end
  local o = object_of(x)
  if not o then
    require("callgrind.args").fail("help", 1, string_format("no help for %s; try callgrind.help()",
      type(x) == "string" and ("'" .. x .. "'") or type(x)), 3)
  end
  local out = { string_format("%s: %s", o.name, o.what) }
  for _, l in ipairs(entry_lines(o)) do out[#out + 1] = l end
  return table_concat(out, "\n")
end

return M
