-- The README's examples run in spec/docs_spec.lua with every document's;
-- here: the version and the rockspecs, which the README's set-up names.

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
