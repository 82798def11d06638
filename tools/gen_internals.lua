--- Makes docs/internals.md: the reference of the internal modules'
-- functions (util, args, the checks, the exports ...), from the `---`
-- comment above each definition and its `@usage` line. tools/gen_docs.lua
-- adds it to what `make docs` writes; spec/types_spec.lua checks that the
-- committed file is what this makes, and spec/internals_spec.lua that
-- every function has its comment and usage, and runs the usages.
--
-- `dofile "tools/gen_internals.lua"` returns { modules = fn, markdown = fn,
-- anchor = fn }.

local here = (arg and arg[0] or ""):match("^(.*)/tools/[^/]*$") or "."

local M = {}

-- Modules documented elsewhere: the API (docs/reference.md from api.lua),
-- luassert's own table, and the command line's entry (README, `callgrind
-- --help`).
local ELSEWHERE = {
  ["callgrind"] = "docs/reference.md",
  ["callgrind.profiler"] = "docs/reference.md",
  ["callgrind.check.luassert"] = "docs/reference.md (assert)",
  ["callgrind.luassert"] = "docs/reference.md (assert)",
  ["callgrind.start"] = "README.md (profiling Lua)",
  -- a busted helper: requiring it hooks the running busted (its purpose)
  ["callgrind.busted"] = "docs/ci.md (every test a budget)",
}

local function read_lines(path)
  local lines = {}
  for l in io.lines(path) do lines[#lines + 1] = l end
  return lines
end

-- The comment block ending just above line i (nil if it does not start
-- with "---"): its lines without the comment marks.
local function comment_above(lines, i)
  local first = i
  while first > 1 and lines[first - 1]:match("^%s*%-%-") do first = first - 1 end
  if first == i or not lines[first]:match("^%s*%-%-%-") then return nil end
  local out = {}
  for k = first, i - 1 do out[#out + 1] = (lines[k]:gsub("^%s*%-%-%-?%s?", "")) end
  return out
end

-- "@tparam[opt] TYPE NAME TEXT" or "@param[opt] NAME TEXT" as a list item's
-- text: "`NAME` (TYPE, optional): TEXT".
local function render_param(tag, rest)
  local opt, body = rest:match("^(%[opt%])%s*(.*)$")
  body = body or rest
  local ty
  if tag == "tparam" then ty, body = body:match("^(%S+)%s*(.*)$") end
  local name, text = body:match("^(%S+)%s*(.*)$")
  local what = {}
  if ty then what[#what + 1] = ty end
  if opt then what[#what + 1] = "optional" end
  return string.format("`%s`%s%s", name or "?", #what > 0 and " (" .. table.concat(what, ", ") .. ")" or "",
    text and text ~= "" and (": " .. text) or "")
end

-- Splits a comment's lines into its text, parameters, returns and usages.
local function parse_comment(c)
  local doc = { text = {}, params = {}, returns = {}, usage = {} }
  local last
  for _, l in ipairs(c) do
    local tag, rest = l:match("^@(%w+)%s*(.*)$")
    if tag == "usage" then
      last = doc.usage; last[#last + 1] = rest
    elseif tag == "tparam" or tag == "param" then
      last = doc.params; last[#last + 1] = render_param(tag, rest)
    elseif tag == "treturn" or tag == "return" then
      last = doc.returns; last[#last + 1] = rest
    elseif tag then
      last = nil  -- @module, @function: nothing to show
    elseif last and last ~= doc.text and l:match("^%s") then
      -- an indented line goes on with the tag above it
      last[#last] = last[#last] .. " " .. l:match("^%s*(.-)$")
    else
      last = doc.text; doc.text[#doc.text + 1] = l
    end
  end
  return doc
end

-- The definitions in one file: name -> { line, params, doc } for
-- `function M.name(...)`, `M.name = function(...)`, `M.name = { ...` and
-- `M.name = local` (the local's own definition, and its comment when the
-- export has none); params is nil for a table.
local function definitions(lines)
  local locals = {}
  for i, l in ipairs(lines) do
    local name, params = l:match("^local function ([%w_]+)%s*%((.-)%)")
    if not name then name, params = l:match("^function ([%w_]+)%s*%((.-)%)") end
    if not name then name = l:match("^local ([%w_]+)%s*=%s*{") end
    if name then locals[name] = { line = i, params = params } end
  end
  local defs = {}
  for i, l in ipairs(lines) do
    local name, params = l:match("^function M%.([%w_]+)%s*%((.-)%)")
    if not name then name, params = l:match("^M%.([%w_]+)%s*=%s*function%s*%((.-)%)") end
    if not name then name = l:match("^M%.([%w_]+)%s*=%s*{") end
    local line = i
    if not name then
      local n, target = l:match("^M%.([%w_]+)%s*=%s*([%w_]+)%s*$")
      if n and locals[target] then name, params, line = n, locals[target].params, locals[target].line end
    end
    if name and not defs[name] then
      local c = comment_above(lines, i) or comment_above(lines, line)
      defs[name] = { line = line, params = params, doc = c and parse_comment(c) }
    end
  end
  return defs
end

-- The short name a module goes by in its usages ("callgrind.check.limits"
-- -> "check", its users' name for it; otherwise the last component).
local SHORT = { ["callgrind.check.limits"] = "check", ["callgrind.encode"] = "export" }
local function short_name(mod)
  return SHORT[mod] or mod:match("([%w_]+)$")
end

--- The internal modules in file order, each { name, path, short, text =
-- { lines }, functions = { { name, module, qualified, params, doc, line,
-- same_as } ... }, metatables = { { name, qualified, type, doc, line }
-- ... } }, requiring each (package.path must reach lua/). A function
-- that a module takes from another (`M.escape = util.fold_escape`) has
-- no doc but `same_as`: the defining module's entry. The metatables are
-- the exported tables with a `__name` (the type their values print as).
function M.modules()
  local p = assert(io.popen("cd '" .. here .. "' && find lua/callgrind -name '*.lua' | LC_ALL=C sort"))
  local paths = {}
  for path in p:lines() do paths[#paths + 1] = path end
  p:close()
  local files, defined = {}, {}
  for _, path in ipairs(paths) do
    local name = path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
    if not ELSEWHERE[name] then
      local lines = read_lines(here .. "/" .. path)
      local e = { name = name, path = path, lines = lines, defs = definitions(lines), t = require(name) }
      files[#files + 1] = e
      if next(e.defs) then defined[e.t] = true end
    end
  end
  local out, owner = {}, {}
  for _, e in ipairs(files) do
    local name, path, lines, defs, t = e.name, e.path, e.lines, e.defs, e.t
    -- a module that only returns another (an old name) is that one; one
    -- that only takes functions from others (model.report) is listed
    local exports = false
    if type(t) == "table" and not defined[t] then
      for _, v in pairs(t) do exports = exports or type(v) == "function" end
      if exports then defined[t] = true end
    end
    if type(t) == "table" and (next(defs) or exports) then
      local mod = { name = name, path = path, short = short_name(name), functions = {}, metatables = {} }
      local top = 1
      while lines[top] and lines[top]:match("^%-%-") do top = top + 1 end
      mod.text = parse_comment(comment_above(lines, top) or {}).text
      local names = {}
      for k, v in pairs(t) do
        if type(v) == "function" then names[#names + 1] = k end
      end
      table.sort(names, function(a, b)
        local la, lb = defs[a] and defs[a].line or math.huge, defs[b] and defs[b].line or math.huge
        if la ~= lb then return la < lb end
        return a < b
      end)
      for _, k in ipairs(names) do
        local d = defs[k]
        local f = { name = k, module = name, value = t[k], params = d and d.params, doc = d and d.doc,
          line = d and d.line }
        if d and not owner[f.value] then owner[f.value] = f end
        f.qualified = mod.short .. "." .. k
        mod.functions[#mod.functions + 1] = f
      end
      for k, v in pairs(t) do
        if type(v) == "table" and rawget(v, "__name") then
          local d = defs[k]
          mod.metatables[#mod.metatables + 1] = { name = k, qualified = mod.short .. "." .. k,
            type = rawget(v, "__name"), doc = d and d.doc, line = d and d.line or math.huge }
        end
      end
      table.sort(mod.metatables, function(a, b)
        if a.line ~= b.line then return a.line < b.line end
        return a.name < b.name
      end)
      if #mod.functions > 0 or #mod.metatables > 0 then out[#out + 1] = mod end
    end
  end
  for _, mod in ipairs(out) do
    for _, f in ipairs(mod.functions) do
      local o = owner[f.value]
      if o and o ~= f and not f.doc then f.same_as = o end
    end
  end
  return out
end

--- The anchor GitHub makes of a heading: lower case, letters, digits,
-- "_" and "-" kept, spaces made "-" (gen_docs.lua's links too).
function M.anchor(s)
  return (s:lower():gsub("[^%w_%- ]", ""):gsub(" ", "-"))
end
local anchor = M.anchor

local function heading(f)
  local params = f.params or f.same_as and f.same_as.params
  return string.format("%s(%s)", f.qualified, params or "...")
end

--- The text of docs/internals.md.
function M.markdown()
  local mods = M.modules()
  local out = {
    "# Internal modules",
    "",
    "<!-- Generated by tools/gen_docs.lua (tools/gen_internals.lua) from the comments in lua/callgrind/:",
    "     do not edit; run `make docs` after changing them. -->",
    "",
    "The library's public surface is in [reference.md](reference.md). The modules below are",
    "what it is built from: the helpers the command line, the checks and the exports share.",
    "They are not API: a release may change them without notice. They are listed so that a",
    "reader of the code, or a contributor, finds what each function does and how it is called.",
    "",
    "Each entry's text is the comment above the function's definition; its usage line is",
    "checked by spec/internals_spec.lua (it must compile, and where it says `--> value` it",
    "must give that value). A module's metatables (the tables it exports with a `__name`)",
    "follow its functions, each with the type its values print as.",
    "",
    "## Contents",
    "",
  }
  for _, m in ipairs(mods) do
    local nf, nm = #m.functions, #m.metatables
    out[#out + 1] = string.format("- [%s](#%s) (`%s`): %d function%s%s", m.name, anchor(m.name), m.path,
      nf, nf == 1 and "" or "s", nm > 0 and string.format(", %d metatable%s", nm, nm == 1 and "" or "s") or "")
  end
  out[#out + 1] = ""
  for _, m in ipairs(mods) do
    out[#out + 1] = "## " .. m.name
    out[#out + 1] = ""
    out[#out + 1] = string.format("`%s`, required as `local %s = require \"%s\"`.", m.path, m.short, m.name)
    if #m.text > 0 then
      out[#out + 1] = ""
      for _, l in ipairs(m.text) do out[#out + 1] = l end
    end
    out[#out + 1] = ""
    for _, f in ipairs(m.functions) do
      out[#out + 1] = "### `" .. heading(f) .. "`"
      out[#out + 1] = ""
      if f.same_as then
        out[#out + 1] = string.format("The same function as [`%s`](#%s).", f.same_as.qualified,
          anchor(heading(f.same_as)))
      elseif not f.doc then
        out[#out + 1] = "(no comment)"
      else
        local d = f.doc
        for _, l in ipairs(d.text) do out[#out + 1] = l end
        if #d.params > 0 then
          out[#out + 1] = ""
          for _, pl in ipairs(d.params) do out[#out + 1] = "- " .. pl end
        end
        if #d.returns > 0 then
          out[#out + 1] = ""
          for _, r in ipairs(d.returns) do out[#out + 1] = "- returns: " .. r end
        end
        for _, u in ipairs(d.usage) do
          out[#out + 1] = ""
          out[#out + 1] = "```"
          out[#out + 1] = u
          out[#out + 1] = "```"
        end
      end
      out[#out + 1] = ""
    end
    for _, t in ipairs(m.metatables) do
      out[#out + 1] = "### `" .. t.qualified .. "`"
      out[#out + 1] = ""
      out[#out + 1] = string.format("A metatable (`__name` `%s`).", t.type)
      out[#out + 1] = ""
      for _, l in ipairs(t.doc and t.doc.text or { "(no comment)" }) do out[#out + 1] = l end
      out[#out + 1] = ""
    end
  end
  while out[#out] == "" do out[#out] = nil end
  return table.concat(out, "\n") .. "\n"
end

return M
