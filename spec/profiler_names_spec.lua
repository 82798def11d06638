-- A function's name in a Lua profile does not depend on what else is
-- loaded (issue 41, point 5): a C function of the standard library keeps
-- its standard name when a module aliases it under a shorter name that
-- sorts first, or when the standard tables themselves get another name
-- for it; a module's Lua function keeps its own module's name. Under both
-- engines, each in a process of its own.
local helpers = require "spec.support.helpers"

local shq = helpers.shq
-- helpers.run unsets LD_PRELOAD; the profiled interpreters keep it: under
-- make check-asan cpath names the ASan build, which needs libasan first
local PRELOAD = os.getenv("LD_PRELOAD") and ("LD_PRELOAD=" .. shq(os.getenv("LD_PRELOAD")) .. " ") or ""
local VM = os.getenv("CALLGRIND_VM") or "build/bin/callgrind-lua5.4"

local function have_vm() return helpers.have_vm(VM) end

-- zmod is a module of a file of its own: its function's own module is zmod
local ZMOD = [[
local M = {}
function M.work(t) t[#t + 1] = "z" return t end
return M
]]

-- Profiles the same work before and after the aliases exist; prints the
-- names of each profile (sorted, one line each), then the engine.
local SCRIPT = [[
local dir = ...
package.path = dir .. "/?.lua;" .. package.path
local profiler = require "callgrind.profiler"
local zmod = require "zmod"
local function work()
  local t = {}
  table.insert(t, string.format("%d", 1))
  t[#t + 1] = tostring(#t)
  zmod.work(t)
  return t
end
local engine
local function names()
  local prof = profiler.profile(work)
  engine = prof.engine
  local t = {}
  for f in prof:functions() do t[#t + 1] = f.name end
  table.sort(t)
  return table.concat(t, " ")
end
local before = names()
-- "a" sorts before every standard table, and its names are shorter
package.loaded.a = { push = table.insert, fmt = string.format, s = tostring, w = zmod.work }
string.f = string.format
rawset(_G, "T", tostring)
print(before)
print(names())
print(engine)
]]

local function run(lua)
  local dir = (helpers.run("mktemp -d", "mktemp"):gsub("%s+$", ""))
  helpers.write_file(dir .. "/zmod.lua", ZMOD)
  helpers.write_file(dir .. "/names.lua", SCRIPT)
  local out = helpers.run((PRELOAD .. "LUA_PATH_5_4=%s LUA_CPATH_5_4=%s %s %s %s"):format(shq(package.path),
    shq(package.cpath), shq(lua), shq(dir .. "/names.lua"), shq(dir)), lua)
  helpers.run("rm -rf " .. shq(dir), "rm")
  local lines = {}
  for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

for _, engine in ipairs({ { "hook", "lua5.4" }, { "vm", VM } }) do
  local name, lua = engine[1], engine[2]
  describe("the names of a Lua profile under the " .. name .. " engine", function()
    it("are the standard library's and the own module's, whatever else aliases them", function()
      if name == "vm" and not have_vm() then
        pending("no " .. VM .. " (make vm)")
        return
      end
      local lines = run(lua)
      assert.are.equal(name, lines[3])
      assert.are.equal("string.format table.insert tostring work zmod.work", lines[1])
      assert.are.equal(lines[1], lines[2])
    end)
  end)
end
