-- The layout of the C core (csrc/): its folders stand on floors, and an
-- include only points down; no include cycle; no C file over 1,000 lines and
-- no function over 80, except those CONTRIBUTING.md lists under
-- "## Exceptions to the size rules"; and inside profiler/, its files stand
-- in layers: a file's includes and its object's symbols only point down.

-- The floors of csrc/, lowest first. A file may include a header of its own
-- folder or of a folder on a lower floor: never one of another folder on its
-- own floor, never one higher up. `lua`: its files may include Lua's headers.
local floors = {
  { "base", why = "types, limits, status codes and memory: what every other floor uses" },
  { "scan", why = "the line scanner: one for the reader's loader and the model's cursor" },
  { "model", why = "the profile as loaded, its cursor (the scanner again), its queries and graph" },
  { "reader", "writer", why = "bytes into the model, the model out to files: each needs the model, not the other" },
  { "profiler", lua = true, why = "the Lua debug hook and its Lua face; its files are written by the binding above" },
  { "binding", lua = true, why = "Lua <-> C only: every floor below made callable, and luaopen_callgrind_core" },
}

-- The layers of csrc/profiler/, lowest first, by file stem (a .c and its
-- .h). A file may include its own header or one of a lower layer, and its
-- object file may use only symbols that objects of lower layers define:
-- never one of another file of its own layer, never one of a layer above.
-- A reader starts at the bottom and never meets a name from above.
local profiler_layers = {
  { "cg_prof_map", "cg_prof_lua54", "cg_prof_signal", "cg_prof_names",
    why = "the hash maps, the Lua 5.4 shortcuts, SIGINT and SIGTERM, the standard library's names: "
      .. "nothing of the profiler" },
  { "cg_prof_base", "cg_prof_describe", why = "the data (the state's and its records' types), finding the "
    .. "state, the allocator and the collector handed over; and apart, the names the writer gives functions" },
  { "cg_prof_records", why = "what the engines charge: a function's lines, the call edges, the stack nodes" },
  { "cg_prof_fold", why = "functions: a slot per value seen, a record per definition, the freed folded in" },
  { "cg_prof_direct", "cg_prof_collect",
    why = "the two engines, the counting interpreter's and the debug hook, neither using the other" },
  { "cg_prof_state", why = "the state's life, the engine a start chooses, that engine's start and stop" },
  { "cg_prof", "cg_prof_exit", why = "the Lua face: the core's prof_* functions; and apart, a whole run's "
    .. "start and its profile written at the end in C" },
}

local MAX_FILE_LINES, MAX_FUNCTION_LINES = 1000, 80
local WHOLE_FILE = "(whole file)"

local read = require("spec.support.helpers").read_file

local function ls(pattern)
  local p = assert(io.popen("ls " .. pattern .. " 2>/dev/null"))
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  table.sort(out)
  return out
end

local function count_lines(s)
  local _, n = s:gsub("\n", "")
  return n + ((s ~= "" and s:sub(-1) ~= "\n") and 1 or 0)
end

-- The C text with comments, string and character literals and preprocessor
-- lines blanked (newlines kept, so line numbers hold).
local function code_only(s)
  local out, i, n = {}, 1, #s
  local function blank(a, b) out[#out + 1] = s:sub(a, b):gsub("[^\n]", " ") end
  local line_start = true
  while i <= n do
    local c = s:sub(i, i)
    if line_start and s:match("^[ \t]*#", i) then
      local j = i
      repeat
        local e = s:find("\n", j, true) or n + 1
        local continued = s:sub(e - 1, e - 1) == "\\"
        j = e + 1
      until not continued or j > n
      blank(i, j - 2)
      out[#out + 1] = j - 1 <= n and "\n" or ""
      i = j
    elseif s:sub(i, i + 1) == "/*" then
      local e = select(2, s:find("*/", i + 2, true)) or n
      blank(i, e)
      i = e + 1
    elseif s:sub(i, i + 1) == "//" then
      local e = (s:find("\n", i, true) or n + 1) - 1
      blank(i, e)
      i = e + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and s:sub(j, j) ~= c do
        j = j + (s:sub(j, j) == "\\" and 2 or 1)
      end
      blank(i, j)
      i = j + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
    line_start = out[#out] == "\n"
  end
  return table.concat(out)
end

-- The functions defined in a C text: { name =, first =, last =, lines = }.
-- A function runs from the first line of its declaration (after the last
-- top-level `;`, `}` or preprocessor line) to its closing brace.
local function functions(s)
  local code = code_only(s)
  local found, depth, line = {}, 0, 1
  local decl_first, decl_text = nil, ""
  local open
  for i = 1, #code do
    local c = code:sub(i, i)
    if c == "\n" then
      line = line + 1
    elseif depth == 0 and c == "{" then
      local sig = decl_text:gsub("%s+$", "")
      if sig:sub(-1) == ")" then
        -- the name before the last top-level parenthesis group (its parameters)
        local d, k = 0, #sig
        repeat
          local ch = sig:sub(k, k)
          if ch == ")" then d = d + 1 elseif ch == "(" then d = d - 1 end
          k = k - 1
        until d == 0 or k < 1
        open = { name = sig:sub(1, k):match("([%a_][%w_]*)%s*$") or "?", first = decl_first or line }
      end
      depth = 1
    elseif depth > 0 then
      if c == "{" then
        depth = depth + 1
      elseif c == "}" then
        depth = depth - 1
        if depth == 0 then
          if open then
            open.last = line
            open.lines = line - open.first + 1
            found[#found + 1] = open
            open = nil
          end
          decl_first, decl_text = nil, ""
        end
      end
    elseif c == ";" then
      decl_first, decl_text = nil, ""
    elseif c:match("%S") then
      decl_first = decl_first or line
      decl_text = decl_text .. c
    else
      decl_text = decl_text .. c
    end
  end
  return found
end

-- Every file of csrc/: path, folder, name, text.
local function sources()
  local files = {}
  for _, path in ipairs(ls("csrc/*/*.c csrc/*/*.h")) do
    local folder, name = path:match("^csrc/([^/]+)/([^/]+)$")
    files[#files + 1] = { path = path, folder = folder, name = name, text = read(path) }
  end
  return files
end

-- The `#include "..."` lines of a text: { name =, line = }.
local function includes(text)
  local out, n = {}, 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local name = line:match('^%s*#%s*include%s*"([^"]+)"')
    if name then out[#out + 1] = { name = name, line = n } end
  end
  return out
end

-- The floor of each folder (its index in floors) and whether it may use Lua.
local function floor_of()
  local at, lua = {}, {}
  for k, f in ipairs(floors) do
    for _, folder in ipairs(f) do
      at[folder], lua[folder] = k, f.lua or false
    end
  end
  return at, lua
end

-- Headers by name: the file of csrc/ each names; names given twice listed.
local function headers(files)
  local by_name, twice = {}, {}
  for _, f in ipairs(files) do
    if f.name:match("%.h$") then
      if by_name[f.name] then twice[#twice + 1] = f.name .. ": " .. by_name[f.name].path .. ", " .. f.path end
      by_name[f.name] = f
    end
  end
  return by_name, twice
end

-- Why an include of file `to` (in csrc/) from file `from` breaks the floors,
-- or nil when it does not.
local function floor_problem(from, to, at)
  local a, b = at[from.folder], at[to.folder]
  -- (a folder on no floor is the first spec's failure)
  if from.folder == to.folder or not a or not b then return nil end
  if b > a then
    return ("runs up a floor, %s (%d) -> %s (%d)"):format(from.folder, a, to.folder, b)
  elseif b == a then
    return ("runs sideways on floor %d, %s -> %s"):format(a, from.folder, to.folder)
  end
end

-- The layer of each profiler file stem (its index in profiler_layers).
local function layer_of()
  local at = {}
  for k, l in ipairs(profiler_layers) do
    for _, stem in ipairs(l) do at[stem] = k end
  end
  return at
end

-- Why file stem `from` of profiler/ using stem `to` (an include, a symbol)
-- breaks the layers, or nil when it does not.
local function layer_problem(from, to, at)
  local a, b = at[from], at[to]
  -- (a stem in no layer is the first spec's failure)
  if from == to or not a or not b then return nil end
  if b > a then
    return ("uses a layer above, %s (%d) -> %s (%d)"):format(from, a, to, b)
  elseif b == a then
    return ("uses its own layer %d, %s -> %s"):format(a, from, to)
  end
end

-- The symbols each object file of dir defines and uses ({ [stem] = { name = true } }
-- twice), from nm; nil when there is none or no nm.
local function object_symbols(dir)
  local defined, used, any = {}, {}, false
  for _, o in ipairs(ls(dir .. "/*.o")) do
    local stem = o:match("([^/]+)%.o$")
    defined[stem], used[stem] = {}, {}
    local p = assert(io.popen("nm " .. o .. " 2>/dev/null"))
    for line in p:lines() do
      local kind, name = line:match("^%s*%x*%s+(%a)%s+(%S+)$")
      if kind == "U" then
        used[stem][name] = true
      elseif kind and kind:match("[TDBR]") then
        defined[stem][name] = true
      end
      any = true
    end
    p:close()
  end
  if any then return defined, used end
end

-- What breaks the layers in the objects' symbols: "stem: name: why".
local function symbol_problems(defined, used, at)
  local bad = {}
  for from, names in pairs(used) do
    for name in pairs(names) do
      for to, defs in pairs(defined) do
        local why = defs[name] and layer_problem(from, to, at)
        if why then bad[#bad + 1] = ("%s.o: %s: %s"):format(from, name, why) end
      end
    end
  end
  table.sort(bad)
  return bad
end

-- The include cycles of files (each a list of paths, the first again last).
local function cycles(files, by_name)
  local edges = {}
  for _, f in ipairs(files) do
    edges[f.path] = {}
    for _, inc in ipairs(includes(f.text)) do
      local to = by_name[inc.name]
      if to then table.insert(edges[f.path], to.path) end
    end
  end
  local found, state, stack = {}, {}, {}
  local function visit(p)
    state[p] = "open"
    stack[#stack + 1] = p
    for _, q in ipairs(edges[p]) do
      if state[q] == "open" then
        local cycle, from = {}, nil
        for k, s in ipairs(stack) do if s == q then from = k end end
        for k = from, #stack do cycle[#cycle + 1] = stack[k] end
        cycle[#cycle + 1] = q
        found[#found + 1] = table.concat(cycle, " -> ")
      elseif not state[q] then
        visit(q)
      end
    end
    stack[#stack] = nil
    state[p] = "done"
  end
  for _, f in ipairs(files) do
    if not state[f.path] then visit(f.path) end
  end
  return found
end

-- CONTRIBUTING.md's exceptions: { ["file function"] = { lines =, reason = } }
-- (function WHOLE_FILE: the file's own length).
local function exceptions(text)
  local section = ("\n" .. text .. "\n#"):match("\n## Exceptions to the size rules\n(.-)\n#")
  assert(section, "CONTRIBUTING.md has no '## Exceptions to the size rules'")
  local rows = {}
  for line in section:gmatch("[^\n]+") do
    local cells = {}
    for cell in line:gmatch("|([^|]*)") do cells[#cells + 1] = cell:match("^%s*(.-)%s*$"):gsub("`", "") end
    -- a row: | file | function | lines | reason |
    if #cells >= 4 and cells[3]:match("^[%d,]+$") then
      rows[cells[1] .. " " .. cells[2]] = { lines = tonumber((cells[3]:gsub(",", ""))), reason = cells[4] }
    end
  end
  return rows
end

-- What breaks the size rules: the C files over MAX_FILE_LINES and the
-- functions over MAX_FUNCTION_LINES that `allowed` does not list at that size
-- or more, and the rows of `allowed` no longer needed.
local function size_problems(files, allowed)
  local problems, used = {}, {}
  local function check(key, lines, max, what)
    if lines <= max then return end
    local row = allowed[key]
    if not row then
      problems[#problems + 1] = ("%s is %d lines, over %d, and not an exception"):format(what, lines, max)
    elseif lines > row.lines then
      problems[#problems + 1] = ("%s is %d lines, more than the %d its exception says"):format(what, lines, row.lines)
    end
    used[key] = true
  end
  for _, f in ipairs(files) do
    check(f.path .. " " .. WHOLE_FILE, count_lines(f.text), MAX_FILE_LINES, f.path)
    for _, fn in ipairs(functions(f.text)) do
      check(f.path .. " " .. fn.name, fn.lines, MAX_FUNCTION_LINES, ("%s:%d: %s()"):format(f.path, fn.first, fn.name))
    end
  end
  for key in pairs(allowed) do
    if not used[key] then problems[#problems + 1] = "the exception for " .. key .. " is not needed (any more)" end
  end
  table.sort(problems)
  return problems
end

describe("csrc/", function()
  local files = sources()
  local at, may_use_lua = floor_of()
  local by_name = headers(files)

  it("has its files in folders, each on a floor", function()
    assert.is_true(#files > 0)
    local lost = {}
    for _, f in ipairs(files) do
      if not f.folder or not at[f.folder] then lost[#lost + 1] = f.path end
    end
    assert.are.same({}, lost)
    assert.are.same({}, ls("csrc/*.[ch]"))
  end)

  it("gives each header a name of its own, so an include names one file", function()
    local _, twice = headers(files)
    assert.are.same({}, twice)
  end)

  it("has no include that runs up a floor, or sideways to another folder of its floor", function()
    local bad = {}
    for _, f in ipairs(files) do
      for _, inc in ipairs(includes(f.text)) do
        local to = by_name[inc.name]
        local why = to and floor_problem(f, to, at)
        if why then bad[#bad + 1] = ("%s:%d: %s: %s"):format(f.path, inc.line, inc.name, why) end
      end
    end
    assert.are.same({}, bad)
  end)

  it("includes Lua's headers only on the floors that may use Lua", function()
    local bad = {}
    for _, f in ipairs(files) do
      for _, inc in ipairs(includes(f.text)) do
        if not may_use_lua[f.folder] and inc.name:match("^l[%a]*%.h$") and not by_name[inc.name] then
          bad[#bad + 1] = ("%s:%d: %s"):format(f.path, inc.line, inc.name)
        end
      end
    end
    assert.are.same({}, bad)
  end)

  it("has no include cycle between files", function()
    assert.are.same({}, cycles(files, by_name))
  end)

  it("has its profiler files each in one layer", function()
    local layer, lost = layer_of(), {}
    for _, f in ipairs(files) do
      local stem = f.folder == "profiler" and f.name:match("^(.*)%.[ch]$")
      if stem and not layer[stem] then lost[#lost + 1] = f.path end
    end
    assert.are.same({}, lost)
  end)

  it("has no profiler file including a header of its own layer or above (but its own)", function()
    local layer, bad = layer_of(), {}
    for _, f in ipairs(files) do
      for _, inc in ipairs(f.folder == "profiler" and includes(f.text) or {}) do
        local to = by_name[inc.name]
        local why = to and to.folder == "profiler"
          and layer_problem(f.name:match("^(.*)%.[ch]$"), to.name:match("^(.*)%.h$"), layer)
        if why then bad[#bad + 1] = ("%s:%d: %s: %s"):format(f.path, inc.line, inc.name, why) end
      end
    end
    assert.are.same({}, bad)
  end)

  it("has no profiler object using a symbol defined in its own layer or above (nm)", function()
    local dir = (os.getenv("CALLGRIND_BUILD") or "build") .. "/obj/profiler"
    local defined, used = object_symbols(dir)
    if not defined then pending("no objects in " .. dir .. " (make), or no nm") return end
    -- every source built, after its last change (else the symbols are old ones)
    local stale = {}
    for _, f in ipairs(files) do
      local stem = f.folder == "profiler" and f.name:match("^(.*)%.c$")
      if stem and not (defined[stem] and os.execute(("test %s/%s.o -nt %s"):format(dir, stem, f.path))) then
        stale[#stale + 1] = f.path .. " (make)"
      end
    end
    assert.are.same({}, stale)
    assert.are.same({}, symbol_problems(defined, used, layer_of()))
  end)

  it("has no C file over 1,000 lines and no function over 80, but the listed exceptions", function()
    local allowed = exceptions(read("CONTRIBUTING.md"))
    assert.are.same({}, size_problems(files, allowed))
  end)
end)

describe("the layout checks of csrc/", function()
  -- the checks themselves, on made-up files: each fails where it should
  local at = floor_of()

  it("see an include from a lower floor to a higher one, and one sideways", function()
    local model, binding, reader = { folder = "model" }, { folder = "binding" }, { folder = "reader" }
    local writer = { folder = "writer" }
    assert.are.equal("runs up a floor, model (3) -> binding (6)", floor_problem(model, binding, at))
    assert.are.equal("runs sideways on floor 4, reader -> writer", floor_problem(reader, writer, at))
    assert.is_nil(floor_problem(binding, model, at))
    assert.is_nil(floor_problem(model, model, at))
  end)

  it("see a profiler file using one of a layer above, or another of its own layer", function()
    local layer = layer_of()
    assert.are.equal("uses a layer above, cg_prof_records (3) -> cg_prof_fold (4)",
      layer_problem("cg_prof_records", "cg_prof_fold", layer))
    assert.are.equal("uses its own layer 5, cg_prof_collect -> cg_prof_direct",
      layer_problem("cg_prof_collect", "cg_prof_direct", layer))
    assert.is_nil(layer_problem("cg_prof_fold", "cg_prof_records", layer))
    assert.is_nil(layer_problem("cg_prof_state", "cg_prof_state", layer))
    -- from nm's words: a symbol used from above is named, one from below is not
    local defined = { cg_prof_records = { cg_prof_grow = true }, cg_prof_fold = { cg_prof_define = true } }
    local used = { cg_prof_records = { cg_prof_define = true }, cg_prof_fold = { cg_prof_grow = true } }
    assert.are.same(
      { "cg_prof_records.o: cg_prof_define: uses a layer above, cg_prof_records (3) -> cg_prof_fold (4)" },
      symbol_problems(defined, used, layer))
  end)

  it("see a cycle of includes", function()
    local files = {
      { path = "csrc/model/a.h", name = "a.h", text = '#include "b.h"\n' },
      { path = "csrc/model/b.h", name = "b.h", text = '#include "c.h"\n' },
      { path = "csrc/model/c.h", name = "c.h", text = '#include "a.h"\n' },
      { path = "csrc/model/d.c", name = "d.c", text = '#include "a.h"\n' },
    }
    local by_name = headers(files)
    assert.are.same({ "csrc/model/a.h -> csrc/model/b.h -> csrc/model/c.h -> csrc/model/a.h" },
      cycles(files, by_name))
  end)

  it("count a function from its declaration to its closing brace, past comments, strings and macros", function()
    local text = table.concat({
      "/* a comment { with braces } */",
      "#define BRACE {",
      "static const int t[] = { 1, 2 };",
      "typedef struct S { int x; } S;",
      "",
      "#if defined(__GNUC__)",
      "__attribute__((noinline))",
      "#endif",
      "static int f(int a,",
      "             int b)",
      "{",
      '    const char *s = "}";',
      "    if (a) {",
      "        return '{';",
      "    }",
      "    return b;",
      "}",
      "int g(void) { return 0; }",
    }, "\n") .. "\n"
    assert.are.same({
      { name = "f", first = 7, last = 17, lines = 11 },
      { name = "g", first = 18, last = 18, lines = 1 },
    }, functions(text))
  end)

  it("see a file or a function over its size unless listed, and a listed one no longer needed", function()
    local body = { "int big(void)", "{" }
    for k = 1, 80 do body[#body + 1] = "    (void)" .. k .. ";" end
    body[#body + 1] = "}"
    local text = table.concat(body, "\n") .. "\n" .. string.rep("\n", 1000)
    local files = { { path = "csrc/model/x.c", text = text } }
    assert.are.same({
      "csrc/model/x.c is 1083 lines, over 1000, and not an exception",
      "csrc/model/x.c:1: big() is 83 lines, over 80, and not an exception",
    }, size_problems(files, {}))
    assert.are.same({}, size_problems(files, {
      ["csrc/model/x.c (whole file)"] = { lines = 1083 }, ["csrc/model/x.c big"] = { lines = 83 } }))
    assert.are.same({ "csrc/model/x.c:1: big() is 83 lines, more than the 82 its exception says" },
      size_problems(files, {
        ["csrc/model/x.c (whole file)"] = { lines = 1083 }, ["csrc/model/x.c big"] = { lines = 82 } }))
    assert.are.same({ "the exception for csrc/model/y.c f is not needed (any more)" },
      size_problems({}, { ["csrc/model/y.c f"] = { lines = 90 } }))
  end)

  it("read CONTRIBUTING.md's table of exceptions", function()
    local rows = exceptions(table.concat({
      "# Contributing", "", "## Exceptions to the size rules", "", "One sentence.", "",
      "| file | function | lines | reason |", "| --- | --- | --- | --- |",
      "| `csrc/a/b.c` | `f` | 1,234 | why |", "", "## Next", "| `csrc/c.c` | `g` | 99 | not this one |",
    }, "\n"))
    assert.are.same({ ["csrc/a/b.c f"] = { lines = 1234, reason = "why" } }, rows)
  end)
end)
