-- The profile -lcallgrind.start writes at a program's end is made in C
-- (csrc/profiler/cg_prof_exit.c, issue 43 point 3); the Lua writer
-- (callgrind.profiler.writer, which the API's profiles use) is the
-- reference. CALLGRIND_EXIT_LUA_OUT=FILE makes the exit also run the Lua
-- writer on the same data into FILE: the two must be equal byte for byte,
-- the profile and its stack record or folded text, for many programs
-- under both engines.
local H = require "spec.support.helpers"
local F = require "spec.support.files"
local G = require "spec.support.luagen"
local shq = H.shq

-- The bytes of a file, or nil when there is none.
local read = H.read_file_if

local engines = H.engines

-- Runs script (a path) under lua -lcallgrind.start in dir with env ("VAR=v
-- ..."); returns nil when the C writer's files and the Lua writer's are
-- equal, else what differs; and the C writer's profile.
local function differ(dir, lua, script, env, suffix)
  local c, l = dir .. "/c.out", dir .. "/l.out"
  for _, p in ipairs { c, l, c .. suffix, l .. suffix } do os.remove(p) end
  local cmd = ("env %s LUA_PATH_5_4=%s LUA_CPATH_5_4=%s CALLGRIND_OUT=%s CALLGRIND_EXIT_LUA_OUT=%s "
    .. "%s -lcallgrind.start %s >/dev/null 2>%s")
    :format(env or "", shq(package.path), shq(package.cpath), shq(c), shq(l), shq(lua), shq(script),
      shq(dir .. "/stderr"))
  os.execute(cmd)
  local stderr = read(dir .. "/stderr") or ""
  if stderr:find("callgrind.profiler:", 1, true) then return "stderr: " .. stderr end
  local a, b = read(c), read(l)
  if not a or a == "" then return "no profile from the C writer" end
  if a ~= b then
    local x, y = G.diff(a, b or "")
    return ("profile: C %s | Lua %s"):format(table.concat(x, "; "):sub(1, 400), table.concat(y, "; "):sub(1, 400))
  end
  if suffix ~= "" then
    local sa, sb = read(c .. suffix), read(l .. suffix)
    if not sa then return "no " .. suffix .. " from the C writer" end
    if sa ~= sb then return suffix .. " differs" end
  end
  return nil, a
end

-- The hand-written programs: a module required from a temporary
-- package.path, string chunks, the standard library's C functions and a
-- C module's (the core's), functions on one line, methods, anonymous
-- functions, recursion, coroutines, errors, os.exit.
local MODULE = [[
local M = {}
function M.encode(s) return (s:gsub(".", function(c) return c .. c end)) end
function M.twice(f, x) return f(f(x)) end
M["for"] = function(x) return x + 1 end
local Obj = {}
Obj.__index = Obj
function Obj.new(v) return setmetatable({ v = v }, Obj) end
function Obj:get() return self.v end
M.Obj = Obj
return M
]]

local PROGRAMS = {
  modules = [[
package.path = DIR .. "/mods/?.lua;" .. package.path
local load_module = require
local m = load_module "mymod"
local sub = load_module "pkg.sub"
print(m.encode("ab"), m.twice(m["for"], 1), m.Obj.new(3):get(), sub.f())
]],
  chunks = [[
local f = load("local x = 0 for i = 1, 10 do x = x + i end return x")
local g = load("return function(a) return a * 2 end", "=named")()
local h = load("local t = {}\nfor i = 1, 3 do t[i] = i end\nreturn #t", "@virtual/file.lua")
print(f(), g(4), h())
]],
  cfuncs = [[
local core = require "callgrind.core"
local t = {}
for i = 1, 20 do t[#t + 1] = string.format("%03d", (i * 7) % 20) end
table.sort(t)
print(table.concat(t, ","), select("#", pcall(error)), core.prof_pid() > 0, math.max(1, 2), tostring(nil))
local s = ("x"):rep(3):upper()
print(s, ipairs(t) ~= nil, next({}))
-- one of each library (the names are taken a library at a time)
io.write(utf8.char(72, 105), "\n")
print(debug.getinfo(1, "l").currentline, coroutine.running() ~= nil, os.time() > 0, math.atan(1, 1) > 0)
local load_module = require
print(package.searchpath("nothing.here", "") == nil, rawlen(t), load_module("string") == string)
]],
  oneline = [[
local a, b = function() return 1 end, function() return 2 end
local function c() return 3 end local function d() return 4 end
local t = { p = function() return a() end, q = function() return b() end }
local M = {} function M.x() return 5 end function M.y() return 6 end
print(a() + b() + c() + d() + t.p() + t.q() + M.x() + M.y())
]],
  methods = [[
local Account = {}
Account.__index = Account
function Account.new(b) return setmetatable({ balance = b }, Account) end
function Account:deposit(v) self.balance = self.balance + v end
function Account:get() return self.balance end
local acc = Account.new(10)
for i = 1, 5 do acc:deposit(i) end
local helpers = {
  ["add"] = function(x, y) return x + y end,
  ['sub'] = function(x, y) return x - y end,
  ["("] = function() return 0 end,
}
print(acc:get(), helpers.add(1, 2), helpers.sub(3, 1), helpers["("]())
]],
  anonymous = [[
local r = {}
for i = 1, 3 do r[i] = (function(x) return x * i end)(2) end
local apply = function(f, ...) return f(...) end
print(apply(function(...) return select("#", ...) end, 1, 2, 3), table.concat(r, " "))
local fs = {}
for i = 1, 2 do fs[i] = function() return i end end
print(fs[1]() + fs[2]())
]],
  recursion = [[
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function even(n) if n == 0 then return true end return odd(n - 1) end
function odd(n) if n == 0 then return false end return even(n - 1) end
local function count(n) if n == 0 then return 0 end return count(n - 1) end
print(fib(12), even(10), count(50))
]],
  coroutines = [[
local gen = coroutine.wrap(function()
  for i = 1, 3 do coroutine.yield(i) end
end)
local co = coroutine.create(function(a)
  local b = coroutine.yield(a + 1)
  return b * 2
end)
print(gen(), gen(), coroutine.resume(co, 1), coroutine.resume(co, 5))
]],
  errors = [[
local function bad(x) if x > 2 then error("too big: " .. x) end return x end
for i = 1, 4 do pcall(bad, i) end
print(xpcall(function() return bad(5) end, function(m) return "handled " .. m end))
local ok = pcall(function() local t = nil; return t.x end)
print(ok)
]],
  exit = [[
local function work(n) local s = 0 for i = 1, n do s = s + i end return s end
print(work(100))
os.exit(3)
]],
  raises = [[
local function inner() error("the end") end
local function outer() inner() end
outer()
]],
  proxied = [[
-- a module whose pairs are its __pairs metamethod's (the writer's pairs)
local function work() return 1 end
package.loaded.proxied = setmetatable({}, { __pairs = function() return next, { run = work }, nil end })
print(work())
]],
  dupnames = [[
local t = {}
function t.f() return 1 end
local u = {}
function u.f() return 2 end
local function g() return t.f() + u.f() end
print(g())
]],
}

describe("the profile written in C at the end (-lcallgrind.start)", function()
  local dir
  setup(function()
    dir = F.tmpdir()
    assert(os.execute("mkdir -p " .. shq(dir .. "/mods/pkg")))
    H.write_file(dir .. "/mods/mymod.lua", MODULE)
    H.write_file(dir .. "/mods/pkg/sub.lua", "local M = {}\nfunction M.f() return 'sub' end\nreturn M\n")
  end)
  teardown(function() F.remove(dir) end)

  -- { label, env, suffix }
  local MODES = {
    { "lines", "", "" },
    { "no lines", "CALLGRIND_LINES=0", "" },
    { "stack record", "CALLGRIND_STACKS=1", ".stacks" },
    { "folded", "CALLGRIND_STACKS=folded CALLGRIND_EVENTS=Instr,Alloc", ".folded" },
  }

  for _, e in ipairs(engines()) do
    it("equals the Lua writer's for the hand-written programs in each mode (" .. e[1] .. ")", function()
      local failures = {}
      local names = {}
      for name in pairs(PROGRAMS) do names[#names + 1] = name end
      table.sort(names)
      for _, name in ipairs(names) do
        local script = dir .. "/" .. name .. ".lua"
        H.write_file(script, ("local DIR = %q\n"):format(dir) .. PROGRAMS[name])
        for _, m in ipairs(MODES) do
          local why = differ(dir, e[2], script, m[2], m[3])
          if why then failures[#failures + 1] = name .. " (" .. m[1] .. "): " .. why end
        end
      end
      assert.are.same({}, failures)
    end)

    it("equals the Lua writer's for the fixture scripts (" .. e[1] .. ")", function()
      local failures = {}
      for _, f in ipairs { "work.lua", "vm_edges.lua", "vm_work.lua" } do
        local path = H.run("pwd", "pwd"):gsub("\n$", "") .. "/spec/fixtures/lua/" .. f
        local why = differ(dir, e[2], path, "CALLGRIND_STACKS=1", ".stacks")
        if why then failures[#failures + 1] = f .. ": " .. why end
      end
      assert.are.same({}, failures)
    end)

    it("equals the Lua writer's for generated programs (" .. e[1] .. ")", function()
      local failures = {}
      for seed = 1, 24 do
        local script = dir .. "/gen" .. seed .. ".lua"
        H.write_file(script, G.program(seed))
        local why = differ(dir, e[2], script, seed % 2 == 0 and "CALLGRIND_STACKS=folded" or "CALLGRIND_STACKS=1",
          seed % 2 == 0 and ".folded" or ".stacks")
        if why then failures[#failures + 1] = "seed " .. seed .. ": " .. why end
      end
      assert.are.same({}, failures)
    end)
  end

  it("names what the Lua writer names: a hand-checked profile", function()
    -- (the comparison above would pass if both writers were wrong alike)
    local script = dir .. "/hand.lua"
    H.write_file(script, ("local DIR = %q\n"):format(dir) .. PROGRAMS.oneline)
    local why, text = differ(dir, "lua5.4", script, "", "")
    assert.is_nil(why)
    -- the names by their ids, as the text gives them: by hand, from the
    -- rules of docs/profiling-lua.md (functions on one line: the one its
    -- call site calls by the declared name owns it, the others take the
    -- name they are called by)
    local names = {}
    for name in text:gmatch("\nc?fn=%(%d+%) ([^\n]+)") do names[#names + 1] = name end
    assert.are.same({ "main chunk", "a", "b", "c", "d", "p", "q", "M.x", "y", "print" }, names)
  end)
end)
