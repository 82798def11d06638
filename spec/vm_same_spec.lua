-- The counting interpreter changes nothing but the counting: real programs
-- nobody here wrote give the same output under it as under Debian's
-- lua5.4. luacheck (Debian lua-check, pure Lua) over this repository, and
-- busted running one of our own spec files. (The whole suite under it:
-- make test-vm. Penlight's own tests: make vm-compare.)
local helpers = require "spec.support.helpers"

local shq = helpers.shq
local VM = os.getenv("CALLGRIND_VM") or "build/bin/callgrind-lua5.4"

-- stdout and stderr of a command, and whether it exited 0
local function capture(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

describe("the counting interpreter gives real programs' own output", function()
  if not io.open(VM, "rb") then
    pending("the counting interpreter could not be built (make vm): " .. VM .. " is missing")
    return
  end

  it("luacheck over lua/ and spec/: the same report, warning for warning", function()
    -- luacheck's modules are installed for 5.1 only, and are plain Lua
    local script = "package.path = '/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;' .. package.path; "
      .. "require 'luacheck.main'"
    -- (the options after /dev/null, the script lua runs once -e is done:
    -- luacheck reads them from arg and exits first)
    local args = " /dev/null --codes --no-color --formatter plain --std lua54 lua spec"
    local want, ok1 = capture("lua5.4 -e " .. shq(script) .. args)
    local got, ok2 = capture(shq(VM) .. " -e " .. shq(script) .. args)
    assert.are.equal(ok1, ok2)
    -- a real report: this repository's own luacheck settings are not
    -- used here (--std lua54 alone: busted's globals in spec/ are
    -- undefined), so there is something to say
    assert.is_truthy(want:find("\nspec/[%w_]+%.lua:%d+:%d+: %(W113%) accessing undefined variable 'it'"), want)
    assert.are.equal(want, got)
  end)

  it("busted running a spec file: the same results", function()
    local spec = "spec/util_spec.lua"
    -- busted's summary ends with the time taken: everything else is equal
    local function run(lua)
      local out, ok = capture(("busted --lua=%s -o TAP %s"):format(shq(lua), spec))
      return (out:gsub("\n# [^\n]*seconds[^\n]*", "")), ok
    end
    local want, ok1 = run("lua5.4")
    local got, ok2 = run(VM)
    assert.is_true(ok1, want)
    assert.is_true(ok2, got)
    assert.is_truthy(want:find("^ok 1 ") or want:find("\nok 1 ", 1, true), want)
    assert.are.equal(want, got)
  end)
end)
