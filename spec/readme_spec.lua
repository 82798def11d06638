-- Runs every ```lua block of the README and checks what it prints against
-- its "--> " comments, in order. Printed values are joined by two spaces;
-- an expectation ending in "..." matches a prefix.
local function blocks(text)
  local out = {}
  for code in text:gmatch("```lua\n(.-)```") do out[#out + 1] = code end
  return out
end

local function expectations(code)
  local exp = {}
  for line in code:gmatch("[^\n]*") do
    local e = line:match("%-%->%s(.*)$")
    if e then exp[#exp + 1] = e end
  end
  return exp
end

local function run(code)
  local printed = {}
  local env = setmetatable({
    callgrind = require("callgrind"),  -- later examples assume the first one's require
    print = function(...)
      local t = table.pack(...)
      for i = 1, t.n do t[i] = tostring(t[i]) end
      -- a value printed over several lines is several expected lines
      for line in (table.concat(t, "  ", 1, t.n) .. "\n"):gmatch("(.-)\n") do printed[#printed + 1] = line end
    end,
  }, { __index = _G })
  local chunk = assert(load(code, "=README", "t", env))
  chunk()
  return printed
end

describe("the README", function()
  local f = assert(io.open("README.md"))
  local text = f:read("a")
  f:close()
  local list = blocks(text)

  it("has Lua examples", function()
    assert.is_true(#list >= 5)
  end)

  for i, code in ipairs(list) do
    it("example " .. i .. " prints what its comments say", function()
      local printed = run(code)
      local exp = expectations(code)
      assert.are.equal(#exp, #printed)
      for k, e in ipairs(exp) do
        local prefix = e:match("^(.-)%.%.%.$")
        if prefix then
          assert.are.equal(prefix, printed[k]:sub(1, #prefix))
        else
          assert.are.equal(e, printed[k])
        end
      end
    end)
  end
end)

describe("the version", function()
  it("is the same in the library and both rockspecs", function()
    local v = require("callgrind")._VERSION
    local f = assert(io.open("rockspecs/callgrind-" .. v .. "-1.rockspec"))
    local spec = f:read("a")
    f:close()
    assert.are.equal(v .. "-1", spec:match('version = "([^"]+)"'))
    assert.is_truthy(spec:find('tag = "v' .. v .. '"', 1, true))
  end)
end)

describe("the rockspecs", function()
  it("build every C file of csrc/, and nothing else", function()
    local ls = assert(io.popen("ls csrc/*/*.c"))
    local want = {}
    for path in ls:lines() do want[#want + 1] = path end
    ls:close()
    table.sort(want)
    for _, name in ipairs({ "callgrind-scm-1", "callgrind-" .. require("callgrind")._VERSION .. "-1" }) do
      local f = assert(io.open("rockspecs/" .. name .. ".rockspec"))
      local listed = {}
      for path in f:read("a"):match("sources = (%b{})"):gmatch('"([^"]+)"') do listed[#listed + 1] = path end
      f:close()
      table.sort(listed)
      assert.are.same(want, listed)
    end
  end)

  it("install every Lua module of lua/callgrind/ and its folders under its name, and the command line", function()
    local ls = assert(io.popen("find lua/callgrind -name '*.lua'"))
    local want = {}
    for path in ls:lines() do
      -- lua/callgrind/check/diff.lua -> callgrind.check.diff; X/init.lua -> X
      local m = path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
      want[#want + 1] = m .. " = " .. path
    end
    ls:close()
    table.sort(want)
    for _, name in ipairs({ "callgrind-scm-1", "callgrind-" .. require("callgrind")._VERSION .. "-1" }) do
      local f = assert(io.open("rockspecs/" .. name .. ".rockspec"))
      local text = f:read("a")
      f:close()
      local listed = {}
      for mod, path in text:gmatch('%["(callgrind[%w_.]*)"%] = "([^"]+%.lua)"') do
        listed[#listed + 1] = mod .. " = " .. path
      end
      table.sort(listed)
      assert.are.same(want, listed)
      assert.truthy(text:find('bin = { ["callgrind-lua"] = "bin/callgrind-lua" }', 1, true), name)
    end
  end)
end)
