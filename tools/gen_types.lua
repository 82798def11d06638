#!/usr/bin/env lua5.4
--- Makes the LuaLS definition files (types/callgrind/*.lua, `---@meta`)
-- and README.md's "Reference at a glance" from one table,
-- lua/callgrind/help.lua's. Run `make types` (or `lua5.4 tools/gen_types.lua
-- [DIR]`, DIR default ".") after changing help.lua; spec/types_spec.lua
-- checks that the committed files are what this makes.
--
-- As a module (`dofile "tools/gen_types.lua"`) it returns `files()`:
-- { [relative path] = content }, and `readme(text)`: text with its help
-- block replaced.

-- Finds the library of the checkout this script is in.
local here = (arg and arg[0] or ""):match("^(.*)/tools/[^/]*$") or "."
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. package.path
package.cpath = here .. "/build/?.so;" .. package.cpath
local help = require "callgrind.help"

local M = {}

-- Splits s at top-level commas (not inside (), {}, <> or []).
local function split_top(s)
  local out, depth, start = {}, 0, 1
  for i = 1, #s do
    local c = s:sub(i, i)
    if c == "(" or c == "{" or c == "<" or c == "[" then depth = depth + 1
    elseif c == ")" or c == "}" or c == ">" or c == "]" then depth = depth - 1
    elseif c == "," and depth == 0 then
      out[#out + 1] = s:sub(start, i - 1):match("^%s*(.-)%s*$")
      start = i + 1
    end
  end
  local last = s:sub(start):match("^%s*(.-)%s*$")
  if last ~= "" then out[#out + 1] = last end
  return out
end

-- "owner.name(a, b [, c])" -> owner, sep, name, { { name, optional }... }
local function parse_signature(sig)
  local owner, sep, name, params = sig:match("^([%w_]+)([.:])([%w_]+)%((.*)%)$")
  if not owner then return nil end
  params = params:gsub("{ path, %.%.%. }", "paths")
  local list, depth = {}, 0
  for token in (params .. ","):gmatch("([^,]*),") do
    -- "[" before the name opens it (optional), after it the next one's
    local before, pname, after = token:match("^([%s%[]*)([^%s%[%]]*)(.*)$")
    depth = depth + select(2, before:gsub("%[", ""))
    if pname ~= "" then list[#list + 1] = { pname, depth > 0 } end
    depth = depth + select(2, after:gsub("%[", "")) - select(2, token:gsub("%]", ""))
  end
  return owner, sep, name, list
end

local function camel(s)
  return (s:gsub("^%l", string.upper):gsub("_(%l)", string.upper))
end

local MODULE_LEVEL = { callgrind = true, profiler = true, assert = true }

local function class_of(o)
  return o.class or ("callgrind." .. o.name)
end

-- The options classes: one per options table, named after its first user.
local function option_classes()
  local names, order = {}, {}
  for _, o in ipairs(help.objects) do
    for _, e in ipairs(o.entries) do
      if e.opts and not names[e.opts] then
        local _, _, fname = parse_signature(e[1])
        local cname = "callgrind." .. (MODULE_LEVEL[o.name] and "" or o.name) .. camel(fname) .. "Options"
        names[e.opts] = cname
        order[#order + 1] = e.opts
      end
    end
  end
  return names, order
end

local function emit_options(out, opts, cname)
  out[#out + 1] = "---@class " .. cname
  local keys = {}
  for k in pairs(opts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do out[#out + 1] = ("---@field %s? %s"):format(k, opts[k]) end
  out[#out + 1] = ""
end

-- One object: its class with fields, then its functions or methods.
local function emit_object(out, o, opt_names)
  local class, var = class_of(o), o.name == "callgrind" and "callgrind" or class_of(o):match("([%w_]+)$")
  out[#out + 1] = "--- " .. o.what
  out[#out + 1] = "---@class " .. class
  local fns = {}
  for _, e in ipairs(o.entries) do
    if e[1]:find("(", 1, true) then
      fns[#fns + 1] = e
    else
      local idx = e[1]:match("^[%w_]+%[(%w+)%]$")
      if idx then
        out[#out + 1] = ("---@field [integer] %s %s"):format(e[3] or "any", e[2])
      else
        local field = e[1]:match("^[%w_]+%.([%w_]+)$")
        out[#out + 1] = ("---@field %s %s %s"):format(field, e[3] or "any", e[2])
      end
    end
  end
  out[#out + 1] = ("local %s = {}"):format(var)
  out[#out + 1] = ""
  -- a second entry of the same function (callgrind.load of a list) is an
  -- overload of the first
  local overloads, seen = {}, {}
  for _, e in ipairs(fns) do
    local _, _, fname = parse_signature(e[1])
    if seen[fname] then
      local list = overloads[fname] or {}
      list[#list + 1] = e
      overloads[fname] = list
    end
    seen[fname] = true
  end
  local function param_type(e, pname)
    return (e.params and e.params[pname]) or (pname == "opts" and e.opts and opt_names[e.opts])
      or help.params[pname] or "any"
  end
  local done = {}
  for _, e in ipairs(fns) do
    local _, sep, fname, params = parse_signature(e[1])
    if not done[fname] then
      done[fname] = true
      out[#out + 1] = "--- " .. e[2]
      local names = {}
      for _, p in ipairs(params) do
        local pname, optional = p[1], p[2]
        if pname == "..." then
          out[#out + 1] = "---@param ... " .. (help.params.ev or "any")
        else
          out[#out + 1] = ("---@param %s%s %s"):format(pname, optional and "?" or "", param_type(e, pname))
        end
        names[#names + 1] = pname
      end
      if e[3] and e[3] ~= "nil" then
        -- an iterator's type is one value, its own returns and all
        local returns = e[3]:find("^fun%(") and { e[3] } or split_top(e[3])
        for _, r in ipairs(returns) do out[#out + 1] = "---@return " .. r end
      end
      for _, other in ipairs(overloads[fname] or {}) do
        local _, _, _, oparams = parse_signature(other[1])
        local ps = {}
        for _, p in ipairs(oparams) do
          ps[#ps + 1] = ("%s%s: %s"):format(p[1], p[2] and "?" or "", param_type(other, p[1]))
        end
        out[#out + 1] = ("---@overload fun(%s%s)%s"):format(sep == ":" and "self, " or "",
          table.concat(ps, ", "), (other[3] and other[3] ~= "nil") and (": " .. other[3]) or "")
      end
      out[#out + 1] = ("function %s%s%s(%s) end"):format(var, sep, fname, table.concat(names, ", "))
      out[#out + 1] = ""
    end
  end
  return var
end

local HEADER = "-- Generated by tools/gen_types.lua from lua/callgrind/help.lua: do not edit;\n"
  .. "-- run `make types` after changing help.lua.\n"

--- The definition files: { [path relative to the checkout] = content }.
function M.files()
  local opt_names, opt_order = option_classes()
  local files = {}
  local main = { "---@meta callgrind", HEADER }
  main[#main + 1] = "---@alias callgrind.ErrorKind " .. table.concat((function()
    local q = {}
    for i, k in ipairs(help.error_kinds) do q[i] = '"' .. k .. '"' end
    return q
  end)(), "|")
  main[#main + 1] = ""
  for _, opts in ipairs(opt_order) do emit_options(main, opts, opt_names[opts]) end
  local module_var
  for _, o in ipairs(help.objects) do
    if o.name == "profiler" then
      local out = { "---@meta callgrind.profiler", HEADER }
      local var = emit_object(out, o, opt_names)
      out[#out + 1] = "return " .. var
      files["types/callgrind/profiler.lua"] = table.concat(out, "\n") .. "\n"
    elseif o.name == "assert" then
      local out = { "---@meta callgrind.luassert", HEADER,
        "-- The assertions go onto luassert's own class, so `assert.` completes them.", "" }
      local var = emit_object(out, o, opt_names)
      out[#out + 1] = "return " .. var
      files["types/callgrind/luassert.lua"] = table.concat(out, "\n") .. "\n"
    else
      local v = emit_object(main, o, opt_names)
      if o.name == "callgrind" then module_var = v end
    end
  end
  main[#main + 1] = ("return %s"):format(module_var)
  files["types/callgrind/init.lua"] = table.concat(main, "\n") .. "\n"
  return files
end

--- README.md's text with its reference block made anew.
function M.readme(text)
  local block = help.markdown()
  local a, b = text:find("<!%-%- help:begin %-%->\n")
  local c = text:find("<!%-%- help:end %-%->", b, false)
  assert(a and c, "README.md has no <!-- help:begin --> ... <!-- help:end --> block")
  return text:sub(1, b) .. block .. text:sub(c)
end

local function write(path, s)
  local tmp = path .. ".tmp"
  local f = assert(io.open(tmp, "wb"))
  assert(f:write(s))
  assert(f:close())
  assert(os.rename(tmp, path))
end

if not pcall(debug.getlocal, 4, 1) then  -- run as a script, not dofile'd
  local dir = arg[1] or "."
  os.execute("mkdir -p '" .. dir .. "/types/callgrind'")
  local paths = {}
  for path, s in pairs(M.files()) do
    write(dir .. "/" .. path, s)
    paths[#paths + 1] = path
  end
  local f = assert(io.open(dir .. "/README.md", "rb"))
  local readme = f:read("a")
  f:close()
  write(dir .. "/README.md", M.readme(readme))
  table.sort(paths)
  print("wrote " .. table.concat(paths, ", ") .. " and README.md's reference")
end

return M
