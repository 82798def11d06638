-- The Lua layer's floors: every module of lua/callgrind/ sits on a floor,
-- and a module requires only modules of its own floor or below, whether
-- at load time or inside a function (a lazy stub of init.lua counts as a
-- require), with no circle among them.

-- The floors, lowest first; a module's floor is the first pattern its
-- name matches.
local FLOORS = {
  { "base", "argument checks, helpers, the CSV/JSON encoder, the one declaration (api) and help built from it",
    { "^callgrind%.core$", "^callgrind%.args$", "^callgrind%.util$", "^callgrind%.encode$", "^callgrind%.api$",
      "^callgrind%.help$" } },
  { "model", "meaning over the core's model: events, inclusive cost, queries, trees, text", { "^callgrind%.model%." } },
  { "export", "every output made from the model: callgrind files, stacks, pictures, tables",
    { "^callgrind%.export%." } },
  { "check", "comparing and asserting: diffs, limits, baselines, the record, running valgrind",
    { "^callgrind%.check%." } },
  { "history", "the history store: runs by commit, steps, the trend page (reads records, baselines, profiles)",
    { "^callgrind%.history$", "^callgrind%.history%." } },
  { "profiler", "the Lua profiler's face", { "^callgrind%.profiler$", "^callgrind%.profiler%." } },
  { "face", "the library as users require it", { "^callgrind$", "^callgrind%.start$", "^callgrind%.busted$" } },
  { "cli", "the command line", { "^callgrind%.cli$", "^callgrind%.cli%." } },
  { "compat", "old module names kept one release (CHANGES.md)",
    { "^callgrind%.events$", "^callgrind%.diff$", "^callgrind%.check$", "^callgrind%.baseline$",
      "^callgrind%.record$", "^callgrind%.luassert$", "^callgrind%.run$" } },
}

local function floor_of(name)
  for i, f in ipairs(FLOORS) do
    for _, pat in ipairs(f[3]) do
      if name:match(pat) then return i end
    end
  end
end

local function module_name(path)
  return (path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", "."))
end

-- Every module's file, by name.
local function modules()
  local out = {}
  local p = assert(io.popen("find lua/callgrind -name '*.lua' | sort"))
  for path in p:lines() do out[module_name(path)] = path end
  p:close()
  out["callgrind.core"] = "(C)"
  return out
end

-- The callgrind modules a file's code requires: require "x", require("x"),
-- and the module names handed to init.lua's lazy stubs; comments are
-- left out.
local function requires_of(text)
  local out, seen = {}, {}
  local function add(name)
    if name:match("^callgrind") and not seen[name] then
      seen[name] = true
      out[#out + 1] = name
    end
  end
  for line in text:gmatch("[^\n]*") do
    local code = line:gsub("%-%-.*$", "")
    for name in code:gmatch("require%s*%(?%s*[\"']([%w_.]+)[\"']") do add(name) end
    if code:match("lazy") then
      for name in code:gmatch("[\"'](callgrind[%w_.]*)[\"']") do add(name) end
    end
  end
  return out
end

local read = require("spec.support.helpers").read_file

describe("lua/callgrind/", function()
  local mods = modules()
  local graph = {}
  for name, path in pairs(mods) do
    graph[name] = path == "(C)" and {} or requires_of(read(path))
  end

  it("has every module on a floor", function()
    for name in pairs(mods) do
      assert.is_not_nil(floor_of(name), name .. " is on no floor of spec/layout_lua_spec.lua")
    end
  end)

  it("requires only modules that exist", function()
    for name, reqs in pairs(graph) do
      for _, r in ipairs(reqs) do
        assert.is_not_nil(mods[r], name .. " requires " .. r .. ", which is no module")
      end
    end
  end)

  it("has no require that runs up a floor", function()
    local bad = {}
    for name, reqs in pairs(graph) do
      for _, r in ipairs(reqs) do
        local a, b = floor_of(name), floor_of(r)
        if a and b and b > a then
          bad[#bad + 1] = string.format("%s (%s) requires %s (%s)", name, FLOORS[a][1], r, FLOORS[b][1])
        end
      end
    end
    table.sort(bad)
    assert.are.same({}, bad)
  end)

  it("has no circle of requires", function()
    local state, cycle = {}, nil
    local function visit(n, stack)
      if cycle then return end
      state[n] = "open"
      stack[#stack + 1] = n
      for _, r in ipairs(graph[n] or {}) do
        if state[r] == "open" then
          local from
          for i, s in ipairs(stack) do if s == r then from = i end end
          cycle = table.concat(stack, " -> ", from) .. " -> " .. r
          return
        elseif not state[r] then
          visit(r, stack)
          if cycle then return end
        end
      end
      stack[#stack] = nil
      state[n] = "done"
    end
    local names = {}
    for n in pairs(graph) do names[#names + 1] = n end
    table.sort(names)
    for _, n in ipairs(names) do
      if not state[n] then visit(n, {}) end
    end
    assert.is_nil(cycle)
  end)

  it("finds requires in code, in lazy stubs and not in comments (the walker itself)", function()
    assert.are.same({ "callgrind.a", "callgrind.b.c", "callgrind.d" },
      requires_of('local a = require "callgrind.a"\n-- require "callgrind.x"\n'
        .. 'f(require("callgrind.b.c"))\nlazy_method("P", "m", "callgrind.d")\nlocal s = "callgrind.e"\n'))
  end)
end)
