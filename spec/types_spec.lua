-- The LuaLS definitions in types/ and docs/reference.md are made from
-- lua/callgrind/api.lua's declaration by tools/gen_docs.lua, and
-- docs/internals.md from the internal modules' comments: the committed
-- files must be what it makes now, and they must say what api says.
local gen = dofile("tools/gen_docs.lua")
local help = require "callgrind.api"

local REGEN = "regenerate them: make docs (lua5.4 tools/gen_docs.lua)"

local read = require("spec.support.helpers").read_file_if

describe("the types files", function()
  local files = gen.files()

  it("and docs/reference.md, docs/internals.md and docs/cli.md are the ones tools/gen_docs.lua makes", function()
    local n = 0
    for path, text in pairs(files) do
      n = n + 1
      assert.are.equal(text, read(path), path .. " differs from what tools/gen_docs.lua makes: " .. REGEN)
    end
    assert.are.equal(6, n)
  end)

  it("are Lua that loads, one module each", function()
    for path, text in pairs(files) do
      if path:match("%.lua$") then assert.is_truthy(load(text, "=" .. path), path) end
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
    assert.is_truthy(all:find("---@class callgrind.FunctionTreeOptions\n"
      .. "---@field depth? integer levels below the root\n"
      .. "---@field direction? \"callees\"|\"callers\" walk down to callees or up to callers\n"
      .. "---@field ev? string|integer the event (the positional ev wins)\n"
      .. "---@field relative? boolean the threshold and the percentages are shares of the root function's inclusive "
      .. "cost, not of the total\n"
      .. "---@field threshold? number leave out entries below this fraction of the profile's total\n", 1, true))
    assert.is_truthy(all:find("---@param name string\n---@param file? string\n---@param object? string\n"
      .. "---@return callgrind.Function?\n---@return string?\n---@return callgrind.ErrorKind?\n"
      .. "function Profile:func(name, file, object) end", 1, true))
  end)

  it("put the luassert assertions on luassert's own class, so assert.cost_at_most completes", function()
    local text = files["types/callgrind/luassert.lua"]
    assert.is_truthy(text:find("---@class luassert\nlocal luassert = {}\n", 1, true))
    for _, a in ipairs({ "cost_at_most", "calls_at_most", "no_regression", "within_baseline" }) do
      assert.is_truthy(text:find("function luassert." .. a .. "(", 1, true), a)
      assert.is_not_nil(require("callgrind.check.luassert")[a], a)
    end
  end)
end)

describe("docs/reference.md", function()
  local ref = read("docs/reference.md")

  it("names every function, method and field api declares, and every option", function()
    for _, o in ipairs(help.objects) do
      for _, e in ipairs(o.entries) do
        assert.is_truthy(ref:find("`" .. e[1]:gsub("|", "\\|") .. "`", 1, true), e[1] .. " is not in docs/reference.md")
      end
    end
    for set, list in pairs(help.options) do
      for _, opt in ipairs(list) do
        assert.is_truthy(ref:find("| `" .. opt[1] .. "` |", 1, true), set .. "." .. opt[1])
      end
    end
  end)
end)

describe("README.md", function()
  it("says how to point an editor at the types", function()
    assert.is_truthy(read("README.md"):find('"workspace.library"', 1, true))
  end)
end)
