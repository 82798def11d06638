-- The README's examples run in spec/docs_spec.lua with every document's;
-- here: its size, the version and the rockspecs, which its set-up names.

describe("README.md", function()
  -- it sells and starts; the reference and the notes are in docs/
  it("is at most 300 lines, its sections each listed in its contents", function()
    local text = require("spec.support.helpers").read_file("README.md")
    local n = select(2, text:gsub("\n", "\n"))
    assert.is_true(n <= 300, "README.md has " .. n .. " lines")
    local contents = text:match("\n## Contents\n(.-)\n## ")
    assert.is_string(contents, "README.md has no contents")
    for title in text:gmatch("\n## ([^\n]+)") do
      if title ~= "Contents" then
        local anchor = title:lower():gsub("[^%w%s%-]", ""):gsub("%s", "-")
        assert.is_truthy(contents:find("(#" .. anchor .. ")", 1, true), "contents lack " .. title)
      end
    end
  end)
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
  -- the Makefile builds the rock (build.type = "make"): the C files are
  -- its wildcard, the modules every file of lua/callgrind/
  for _, name in ipairs({ "callgrind-scm-1", "callgrind-" .. require("callgrind")._VERSION .. "-1" }) do
    it(name .. " builds and installs through the Makefile's rock-build and rock-install", function()
      local f = assert(io.open("rockspecs/" .. name .. ".rockspec"))
      local text = f:read("a")
      f:close()
      local env = {}
      assert(load(text, name, "t", env))()
      assert.are.equal("make", env.build.type)
      local mk = assert(io.open("Makefile")):read("a")
      for _, target in ipairs({ env.build.build_target, env.build.install_target }) do
        assert.is_truthy(mk:find("\n" .. target:gsub("%-", "%%-") .. ":"), target)
      end
      -- every directory rock-install uses is given
      for _, v in ipairs({ "LUADIR", "LIBDIR", "BINDIR" }) do
        assert.are.equal("$(" .. v .. ")", env.build.install_variables[v])
      end
      assert.are.same({ "types" }, env.build.copy_directories)
    end)
  end
end)
