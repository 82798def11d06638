-- The LuaLS definitions in types/ and README.md's reference are made from
-- lua/callgrind/help.lua's table by tools/gen_types.lua: the committed files
-- must be what it makes now, and they must say what help says.
local gen = dofile("tools/gen_types.lua")
local help = require "callgrind.help"

local REGEN = "regenerate them: make types (lua5.4 tools/gen_types.lua)"

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

describe("the types files", function()
  local files = gen.files()

  it("are the ones tools/gen_types.lua makes from help.lua", function()
    local n = 0
    for path, text in pairs(files) do
      n = n + 1
      assert.are.equal(text, read(path), path .. " differs from what help.lua makes: " .. REGEN)
    end
    assert.are.equal(3, n)
  end)

  it("are Lua that loads, one module each", function()
    for path, text in pairs(files) do
      assert.is_truthy(load(text, "=" .. path), path)
    end
    assert.is_truthy(files["types/callgrind/init.lua"]:find("^%-%-%-@meta callgrind\n"))
    assert.is_truthy(files["types/callgrind/profiler.lua"]:find("^%-%-%-@meta callgrind%.profiler\n"))
    assert.is_truthy(files["types/callgrind/luassert.lua"]:find("^%-%-%-@meta callgrind%.luassert\n"))
  end)

  it("declare every function and method help knows, with its parameters", function()
    local all = files["types/callgrind/init.lua"] .. files["types/callgrind/profiler.lua"]
      .. files["types/callgrind/luassert.lua"]
    local count = 0
    for _, o in ipairs(help.objects) do
      for _, e in ipairs(o.entries) do
        local sep, name = e[1]:match("^[%w_]+([.:])([%w_]+)%(")
        if name then
          count = count + 1
          assert.is_truthy(all:find(sep .. name .. "(", 1, true), e[1] .. " is not declared")
        end
      end
    end
    assert.is_true(count >= 79, count .. " functions")
    -- an option table of its own, optional fields
    assert.is_truthy(all:find("---@class callgrind.FunctionTreeOptions\n---@field depth? integer\n"
      .. "---@field direction? \"callees\"|\"callers\"\n---@field ev? string|integer\n"
      .. "---@field threshold? number\n", 1, true))
    assert.is_truthy(all:find("---@param name string\n---@param file? string\n---@param object? string\n"
      .. "---@return callgrind.Function?\n---@return string?\nfunction Profile:func(name, file, object) end", 1, true))
  end)

  it("put the luassert assertions on luassert's own class, so assert.cost_at_most completes", function()
    local text = files["types/callgrind/luassert.lua"]
    assert.is_truthy(text:find("---@class luassert\nlocal luassert = {}\n", 1, true))
    for _, a in ipairs({ "cost_at_most", "calls_at_most", "no_regression", "within_baseline" }) do
      assert.is_truthy(text:find("function luassert." .. a .. "(", 1, true), a)
      assert.is_not_nil(require("callgrind.luassert")[a], a)
    end
  end)
end)

describe("README.md", function()
  local readme = read("README.md")

  it("has the reference help.lua makes", function()
    assert.are.equal(gen.readme(readme), readme, "README.md's reference differs from help.lua: " .. REGEN)
  end)

  it("names every function help knows", function()
    for _, o in ipairs(help.objects) do
      for _, e in ipairs(o.entries) do
        assert.is_truthy(readme:find(e[1], 1, true), e[1] .. " is not in README.md")
      end
    end
  end)

  it("says how to point an editor at the types", function()
    assert.is_truthy(readme:find('"workspace.library"', 1, true))
  end)
end)
