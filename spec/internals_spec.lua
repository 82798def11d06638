-- docs/internals.md, the reference of the internal modules, is made by
-- tools/gen_internals.lua from the comment above each function
-- (spec/types_spec.lua checks that the committed file is current). Here:
-- every function those modules export has its comment and a usage line,
-- every metatable they export (a table with a __name) its comment,
-- every usage line is Lua, and a usage that says `EXPR --> VALUE` gives
-- that value, with the modules under the short names the document uses
-- and `prof` the profile spec/fixtures/report.callgrind.
local gen = dofile("tools/gen_internals.lua")
local callgrind = require "callgrind"

local MODULES = gen.modules()

local function env()
  local e = setmetatable({
    callgrind = callgrind,
    prof = assert(callgrind.load("spec/fixtures/report.callgrind")),
  }, { __index = _G })
  for _, m in ipairs(MODULES) do
    if rawget(e, m.short) == nil then e[m.short] = require(m.name) end
  end
  return e
end

describe("the internal modules' reference", function()
  it("lists the modules that export functions, and each module once", function()
    local names, shorts = {}, {}
    for _, m in ipairs(MODULES) do
      names[m.name] = true
      assert.is_nil(shorts[m.short], m.short .. " twice")
      shorts[m.short] = true
    end
    for _, name in ipairs({ "callgrind.util", "callgrind.args", "callgrind.check.limits", "callgrind.check.diff",
      "callgrind.export.stacks", "callgrind.export.pprof", "callgrind.model.load", "callgrind.model.report" }) do
      assert.is_true(names[name], name)
    end
    -- documented elsewhere (the API), or an old name of another module
    for _, name in ipairs({ "callgrind", "callgrind.profiler", "callgrind.diff", "callgrind.check",
      "callgrind.baseline", "callgrind.check.luassert" }) do
      assert.is_nil(names[name], name)
    end
  end)

  it("has every exported function, each with its comment and a usage", function()
    local n = 0
    for _, m in ipairs(MODULES) do
      local t = require(m.name)
      for _, f in ipairs(m.functions) do
        n = n + 1
        if f.same_as then
          assert.are.equal(t[f.name], require(f.same_as.module)[f.same_as.name], f.qualified)
        else
          assert.is_table(f.doc, f.qualified .. " (" .. m.path .. ") has no --- comment above it")
          assert.is_true(#f.doc.text > 0 and f.doc.text[1] ~= "", f.qualified .. " has no description")
          assert.is_true(#f.doc.usage > 0, f.qualified .. " (" .. m.path .. ":" .. f.line .. ") has no @usage")
        end
      end
    end
    assert.is_true(n >= 100, n .. " functions")
  end)

  it("has the metatables the modules export, each with its comment", function()
    local n, names = 0, {}
    for _, m in ipairs(MODULES) do
      for _, t in ipairs(m.metatables) do
        n = n + 1
        names[t.qualified] = true
        assert.are.equal(rawget(require(m.name)[t.name], "__name"), t.type)
        assert.is_table(t.doc, t.qualified .. " (" .. m.path .. ") has no --- comment above it")
        assert.is_true(#t.doc.text > 0 and t.doc.text[1] ~= "", t.qualified .. " has no description")
      end
    end
    -- a module that exports metatables and no function is listed too
    assert.is_true(names["tree.node_mt"] and names["diff.row_mt"] and names["query.selection_mt"], "node_mt")
    assert.is_true(n >= 9, n .. " metatables")
  end)

  it("has usage lines that are Lua", function()
    for _, m in ipairs(MODULES) do
      for _, f in ipairs(m.functions) do
        for _, u in ipairs(f.doc and f.doc.usage or {}) do
          -- one that says a value is an expression
          local expr = u:match("^(.-)%s*%-%->")
          local ok, err = load(expr and "return " .. expr or u, "=" .. f.qualified)
          assert.is_truthy(ok, err)
        end
      end
    end
  end)

  it("has no comment that starts inside another (a function's comment split by code put above it)", function()
    local p = assert(io.popen("find lua -name '*.lua' | LC_ALL=C sort"))
    for path in p:lines() do
      local start
      local n = 0
      for line in io.lines(path) do
        n = n + 1
        if line:match("^%s*%-%-") then
          start = start or n
          -- "--- text" starts a comment; a banner of dashes does not
          assert.is_false(n > start and line:match("^%s*%-%-%-") ~= nil and not line:match("^%s*%-%-%-%-"),
            path .. ":" .. n .. " starts a --- comment inside the one of line " .. start)
        else
          start = nil
        end
      end
    end
    p:close()
  end)

  local checked = 0
  for _, m in ipairs(MODULES) do
    for _, f in ipairs(m.functions) do
      for _, u in ipairs(f.doc and f.doc.usage or {}) do
        local expr, want = u:match("^(.-)%s*%-%->%s*(.-)%s*$")
        if expr then
          checked = checked + 1
          it("gives what " .. f.qualified .. "'s usage says: " .. u, function()
            local e = env()
            local get = assert(load("return " .. expr, "=" .. f.qualified, "t", e))
            local value = assert(load("return " .. want, "=" .. f.qualified .. " -->", "t", e))
            assert.are.same(value(), get())
          end)
        end
      end
    end
  end

  it("checks the values of at least 25 usages", function()
    assert.is_true(checked >= 25, checked .. " usages say a value")
  end)
end)
