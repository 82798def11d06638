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

-- The profile -lcallgrind.start writes at exit names the C functions
-- itself (cg_prof_names.c): it guesses which library to open first from
-- the profiled state (the table that holds the function now, looked for
-- under the name it was called by first), but the names are always those
-- of a fresh library. Here the script moved functions between the
-- standard tables, so the guess is wrong for two of them; the pure
-- libraries opened in the profiled state itself (os, math) leave its
-- tables as the script left them.
local MOVED = [[
local fmt, rep = string.format, string.rep
os.difftime = fmt             -- called as os.difftime: the guess says os
string.format = nil
math.rep = rep                -- called as math.rep: the guess says math
local s = os.difftime("%d", 12) .. math.rep("a", 2)
local profiler = require "callgrind.profiler"
-- a nested profile's Lua writer names through the same table, in the
-- running program: the script's tables stay as it left them
local _, n = profiler.profile(function() return os.time() + #tostring(1) end)
io.write(s, " ", tostring(os.difftime == fmt and string.format == nil and math.rep == rep
  and n > 0), "\n")
]]

describe("the names of -lcallgrind.start's profile", function()
  for _, engine in ipairs(helpers.engines()) do
    it("are a fresh library's when the script moved standard functions (" .. engine[1] .. ")", function()
      local dir = (helpers.run("mktemp -d", "mktemp"):gsub("%s+$", ""))
      helpers.write_file(dir .. "/moved.lua", MOVED)
      local out = helpers.run((PRELOAD .. "CALLGRIND_OUT=%s LUA_PATH_5_4=%s LUA_CPATH_5_4=%s %s -lcallgrind.start %s")
        :format(shq(dir .. "/out"), shq(package.path), shq(package.cpath), shq(engine[2]),
          shq(dir .. "/moved.lua")), engine[2])
      assert.are.equal("12aa true\n", out)
      local prof = helpers.load(dir .. "/out")
      local names = {}
      for f in prof:functions() do
        if f.file == "[C]" then names[f.name] = true end
      end
      helpers.run("rm -rf " .. shq(dir), "rm")
      -- (not os.difftime nor math.rep: the names the script gave them)
      local seen = {}
      for _, name in ipairs({ "io.write", "math.rep", "os.difftime", "os.time", "string.format",
        "string.rep", "tostring" }) do
        seen[#seen + 1] = names[name] and name or nil
      end
      assert.are.same({ "io.write", "os.time", "string.format", "string.rep", "tostring" }, seen)
    end)
  end
end)
