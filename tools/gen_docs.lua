#!/usr/bin/env lua5.4
--- Makes docs/reference.md and the LuaLS definition files
-- (types/callgrind/*.lua, `---@meta`) from the one declaration,
-- lua/callgrind/api.lua, and docs/internals.md from the internal modules'
-- comments (tools/gen_internals.lua), and docs/cli.md from the command
-- line's declaration (lua/callgrind/cli/init.lua). Run `make docs` (or `lua5.4
-- tools/gen_docs.lua [DIR]`, DIR default ".") after changing api.lua or
-- those comments; spec/types_spec.lua checks that the committed files
-- are what this makes.
--
-- As a module (`dofile "tools/gen_docs.lua"`) it returns `files()`:
-- { [relative path] = content }.

-- Finds the library of the checkout this script is in.
local here = (arg and arg[0] or ""):match("^(.*)/tools/[^/]*$") or "."
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. package.path
package.cpath = here .. "/build/?.so;" .. package.cpath
local api = require "callgrind.api"
local EXAMPLES = dofile(here .. "/tools/api_examples.lua")
local INTERNALS = dofile(here .. "/tools/gen_internals.lua")

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
  for _, o in ipairs(api.objects) do
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

local function emit_options(out, set, cname)
  out[#out + 1] = "---@class " .. cname
  local list = {}
  for _, o in ipairs(api.options[set]) do list[#list + 1] = o end
  table.sort(list, function(a, b) return a[1] < b[1] end)
  for _, o in ipairs(list) do out[#out + 1] = ("---@field %s? %s %s"):format(o[1], o[2], o[4]) end
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
      or api.params[pname] or "any"
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
          out[#out + 1] = "---@param ... " .. (api.params.ev or "any")
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

local HEADER = "-- Generated by tools/gen_docs.lua from lua/callgrind/api.lua: do not edit;\n"
  .. "-- run `make docs` after changing api.lua.\n"

--- The definition files: { [path relative to the checkout] = content }.
function M.files()
  local opt_names, opt_order = option_classes()
  local files = {}
  local main = { "---@meta callgrind", HEADER }
  main[#main + 1] = "---@alias callgrind.ErrorKind " .. table.concat((function()
    local q = {}
    for i, k in ipairs(api.error_kinds) do q[i] = '"' .. k[1] .. '"' end
    return q
  end)(), "|")
  main[#main + 1] = ""
  for _, opts in ipairs(opt_order) do emit_options(main, opts, opt_names[opts]) end
  local module_var
  for _, o in ipairs(api.objects) do
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
  files["docs/reference.md"] = M.reference()
  files["docs/internals.md"] = INTERNALS.markdown()
  files["docs/cli.md"] = M.cli_reference()
  return files
end


-- Markdown: a table cell (pipes escaped, no line breaks).
local function cell(s)
  return (tostring(s):gsub("|", "\\|"):gsub("\n", " "))
end

-- The anchor GitHub makes of a heading.
local anchor = INTERNALS.anchor

--- docs/cli.md: the command line's reference, from the declaration in
-- lua/callgrind/cli/init.lua that `--help` and `COMMAND --help` print.
function M.cli_reference()
  local cli = require "callgrind.cli"
  local out = { "# The command line: callgrind-lua", "",
    "<!-- Generated by tools/gen_docs.lua (make docs) from the declaration in lua/callgrind/cli/init.lua,",
    "     the one that `callgrind-lua --help` prints; spec/cli_docs_spec.lua fails when it is stale. -->", "",
    "`bin/callgrind-lua` in a checkout, `callgrind-lua` once installed (`make install`, luarocks). Each",
    "command's text below is what `callgrind-lua COMMAND --help` prints; the library's functions behind",
    "them are in [reference.md](reference.md).", "", "## Commands", "", "```text", (cli.help():gsub("\n$", "")),
    "```", "" }
  for _, name in ipairs(cli.commands()) do
    out[#out + 1] = "## " .. name
    out[#out + 1] = ""
    out[#out + 1] = "```text"
    out[#out + 1] = cli.usage(name) .. "```"   -- the usage ends with a line feed
    out[#out + 1] = ""
  end
  out[#out + 1] = "## Environment"
  out[#out + 1] = ""
  out[#out + 1] = "Beside those of `-lcallgrind.start` ([profiling-lua.md](profiling-lua.md)):"
  out[#out + 1] = ""
  out[#out + 1] = "| variable | meaning |"
  out[#out + 1] = "| --- | --- |"
  for _, v in ipairs(cli.environment()) do out[#out + 1] = string.format("| `%s` | %s |", v[1], cell(v[2])) end
  out[#out + 1] = ""
  out[#out + 1] = "## Exit status"
  out[#out + 1] = ""
  out[#out + 1] = "| status | meaning |"
  out[#out + 1] = "| --- | --- |"
  for _, e in ipairs(cli.exit_statuses()) do out[#out + 1] = string.format("| %d | %s |", e[1], cell(e[2])) end
  return table.concat(out, "\n") .. "\n"
end

-- The entries using each options set, in declaration order.
local function option_users()
  local users, order = {}, {}
  for _, o in ipairs(api.objects) do
    for _, e in ipairs(o.entries) do
      if e.opts then
        if not users[e.opts] then users[e.opts] = {}; order[#order + 1] = e.opts end
        local list = users[e.opts]
        list[#list + 1] = e[1]
      end
    end
  end
  return users, order
end

--- Runs f as on a developer's machine: CI's baseline mode (CI,
-- CALLGRIND_BASELINES: a missing baseline fails) hidden from os.getenv
-- while it runs, since the documents' examples show the local behaviour.
-- The names os.tmpname gives f are removed afterwards, and so is the
-- NAME.d directory an example makes beside one. Raises what f raises.
function M.as_developer(f)
  local getenv, tmpname = os.getenv, os.tmpname
  local made = {}
  rawset(os, "getenv", function(k)
    if k == "CI" or k == "CALLGRIND_BASELINES" or k == "CALLGRIND_UPDATE_BASELINES" then return nil end
    return getenv(k)
  end)
  rawset(os, "tmpname", function()
    local name = tmpname()
    made[#made + 1] = name
    return name
  end)
  local ok, err = pcall(f)
  rawset(os, "getenv", getenv)
  rawset(os, "tmpname", tmpname)
  for _, name in ipairs(made) do
    os.remove(name)
    os.execute("rm -rf '" .. (name .. ".d"):gsub("'", "'\\''") .. "'")
  end
  if not ok then error(err, 0) end
end

-- An object's example block: its setup, then each entry's statement
-- followed by what it prints ("--> " lines), run here from the
-- repository's root as spec/docs_spec.lua runs it.
local function example_block(o)
  local ex = EXAMPLES[o.name]
  if not ex then return nil end
  local stmts = {}
  for _, e in ipairs(o.entries) do
    if ex[e[1]] then stmts[#stmts + 1] = ex[e[1]] end
  end
  local printed, current = {}, 0
  local env = setmetatable({
    callgrind = require("callgrind"),
    __mark = function(k) current = k end,
    print = function(...)
      local t = table.pack(...)
      for i = 1, t.n do t[i] = tostring(t[i]) end
      for line in (table.concat(t, "  ", 1, t.n) .. "\n"):gmatch("(.-)\n") do
        local list = printed[current] or {}
        list[#list + 1] = line
        printed[current] = list
      end
    end,
  }, { __index = _G })
  local code = { ex.setup }
  for k, st in ipairs(stmts) do code[#code + 1] = "__mark(" .. k .. ")\n" .. st end
  M.as_developer(assert(load(table.concat(code, "\n"), "=" .. o.name .. " example", "t", env)))
  local out = { "```lua", ex.setup }
  for k, st in ipairs(stmts) do
    out[#out + 1] = st
    for _, line in ipairs(printed[k] or {}) do out[#out + 1] = "--> " .. line end
  end
  out[#out + 1] = "```"
  return table.concat(out, "\n")
end

--- docs/reference.md: every object, function, method and field, every
-- options set with each option's type, default and meaning, and the
-- error kinds.
function M.reference()
  local out = {
    "# Reference",
    "",
    "Generated by `tools/gen_docs.lua` from `lua/callgrind/api.lua`, the one declaration of the",
    "library's functions, options, returns and error kinds (`make docs`; a spec fails when this",
    "file is stale). `callgrind.help(x)` at the REPL prints the same lines for one object.",
    "Conventions that hold for every entry: [the API's conventions](design.md#api-conventions).",
    "",
    "## Contents",
    "",
  }
  for _, o in ipairs(api.objects) do
    out[#out + 1] = string.format("- [%s](#%s): %s", o.name, anchor(o.name), o.what)
  end
  out[#out + 1] = "- [Options](#options)"
  out[#out + 1] = "- [Error kinds](#error-kinds)"
  out[#out + 1] = ""
  local users, order = option_users()
  for _, o in ipairs(api.objects) do
    out[#out + 1] = "## " .. o.name
    out[#out + 1] = ""
    out[#out + 1] = o.what:sub(1, 1):upper() .. o.what:sub(2) .. "."
    out[#out + 1] = ""
    out[#out + 1] = "| | what it is | returns or type |"
    out[#out + 1] = "| --- | --- | --- |"
    for _, e in ipairs(o.entries) do
      local what = e[2]
      if e.opts then what = what .. string.format("; options: [%s](#options-%s)", e.opts, anchor(e.opts)) end
      if e.errors then what = what .. "; fails with " .. table.concat(e.errors, ", ") end
      if e.deprecated then what = "**deprecated**, use `" .. e.deprecated .. "`: " .. what end
      out[#out + 1] = string.format("| `%s` | %s | `%s` |", cell(e[1]), cell(what), cell(e[3] or "nil"))
    end
    out[#out + 1] = ""
    local block = example_block(o)
    if block then
      out[#out + 1] = "Examples (run by spec/docs_spec.lua; `-->` is what they print):"
      out[#out + 1] = ""
      out[#out + 1] = block
      out[#out + 1] = ""
    end
  end
  out[#out + 1] = "## Options"
  out[#out + 1] = ""
  out[#out + 1] = "Every options table is checked: an unknown key or a value of the wrong type is an argument"
  out[#out + 1] = "error that names the function and lists the options there are."
  out[#out + 1] = ""
  for _, set in ipairs(order) do
    out[#out + 1] = "### options " .. set
    out[#out + 1] = ""
    local names = {}
    for i, sig in ipairs(users[set]) do names[i] = "`" .. sig .. "`" end
    out[#out + 1] = "Taken by " .. table.concat(names, ", ") .. "."
    out[#out + 1] = ""
    out[#out + 1] = "| option | type | default | meaning |"
    out[#out + 1] = "| --- | --- | --- | --- |"
    for _, opt in ipairs(api.options[set]) do
      out[#out + 1] = string.format("| `%s` | `%s` | %s | %s |", opt[1], cell(opt[2]),
        opt[3] and cell(opt[3]) or "none", cell(opt[4]))
    end
    out[#out + 1] = ""
  end
  out[#out + 1] = "## Error kinds"
  out[#out + 1] = ""
  out[#out + 1] = "A recoverable failure returns `nil, message, kind`; misuse (a wrong argument) raises."
  out[#out + 1] = ""
  out[#out + 1] = "| kind | meaning |"
  out[#out + 1] = "| --- | --- |"
  for _, k in ipairs(api.error_kinds) do out[#out + 1] = string.format("| `%s` | %s |", k[1], cell(k[2])) end
  return table.concat(out, "\n") .. "\n"
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
  os.execute("mkdir -p '" .. dir .. "/types/callgrind' '" .. dir .. "/docs'")
  local paths = {}
  for path, s in pairs(M.files()) do
    write(dir .. "/" .. path, s)
    paths[#paths + 1] = path
  end
  table.sort(paths)
  print("wrote " .. table.concat(paths, ", "))
end

return M
