-- The counting interpreter (make vm: build/bin/callgrind-lua5.4, issue 29):
-- its engine gives what the hook engine gives, function by function, line
-- by line, call by call and stack by stack, and what a count hook counts,
-- with debug.sethook left to the user's own hook; a script gives
-- the same numbers in two processes; Debian's lpeg loads into it; an
-- unsupported Lua release is refused by name. make test builds it first,
-- so these run in CI; they are pending only when it could not be built.
local callgrind = require "callgrind"
local helpers = require "spec.support.helpers"

local shq = helpers.shq
local VM = os.getenv("CALLGRIND_VM") or "build/bin/callgrind-lua5.4"

local function have_vm() return helpers.have_vm(VM) end

local function tmpdir()
  return (helpers.run("mktemp -d", "mktemp"):gsub("%s+$", ""))
end

-- Runs the counting interpreter with this process's module paths; its
-- stdout. LD_PRELOAD is kept: under make check-asan, cpath names the ASan
-- build.
local function vm_run(args, env)
  local cmd = ("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s %s %s %s 2>&1"):format(shq(package.path),
    shq(package.cpath), env or "", shq(VM), args)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local ok = p:close()
  assert(ok, cmd .. "\n" .. out)
  return out
end

-- every cost line and call of a profile, as comparable tables
local function calls_of(prof)
  local t = {}
  for c in prof:calls() do
    t[#t + 1] = ("%s:%s -> %s:%s line %s x%d = %d"):format(c.caller.file, c.caller.name, c.callee.file,
      c.callee.name, tostring(c.line), c.count, c:cost("Instr"))
  end
  table.sort(t)
  return t
end

describe("the counting interpreter (make vm)", function()
  if not have_vm() then
    pending("the counting interpreter could not be built (make vm): " .. VM .. " is missing")
    return
  end

  it("its engine gives the hook engine's profile on a varied workload, and a count hook's total", function()
    local dir = tmpdir()
    vm_run(shq("spec/fixtures/lua/vm_work.lua") .. " " .. shq(dir))
    -- the hook engine too on 5.4.7, whose counter (lua_State.hookcount)
    -- counts for a count hook alone: the profiler keeps a rare one set
    local others = { "count", "hook" }
    for _, mode in ipairs { "lines", "funcs", "stacks" } do
      local vm = assert(callgrind.load(dir .. "/" .. mode .. ".vm"))
      assert.are.equal("vm", vm.engine)
      for _, other in ipairs(others) do
        local hook = assert(callgrind.load(dir .. "/" .. mode .. "." .. other))
        assert.are.equal("hook", hook.engine)
        assert.are.same(helpers.instr_lines(hook), helpers.instr_lines(vm))
        assert.are.same(calls_of(hook), calls_of(vm))
        assert.are.equal(hook:total("Instr"), vm:total("Instr"))
      end
      -- coroutines (one closed while suspended), C calling Lua, tail calls
      -- (of another function, a vararg one), errors and metamethods are in it
      for _, name in ipairs { "coroutine.resume", "table.sort", "tail", "deep", "pcall", "xpcall",
                              "string.gsub", "fib", "va", "tva", "tb", "coroutine.close" } do
        assert.is_truthy(vm:func(name), name)
      end
    end
    assert.are.equal(helpers.read_file(dir .. "/stacks.count.folded"), helpers.read_file(dir .. "/stacks.vm.folded"))
    assert.is_true(#helpers.read_file(dir .. "/stacks.vm.folded") > 0)
    -- debug.sethook stays the user's: the vm engine starts over the user's
    -- hook and leaves it in place, and the user's hook changes nothing
    -- under work() (the script's own lines around it ran more instructions)
    assert.are.equal("nil nil 0", helpers.read_file(dir .. "/nouser.hooks"))
    local seen = tonumber(helpers.read_file(dir .. "/user.hooks"):match("^user user (%d+)$"))
    assert.is_true(seen > 5000)
    local function under_work(file)
      local t = {}
      for line in helpers.read_file(file):gmatch("[^\n]+") do
        if line:find(";work", 1, true) then t[#t + 1] = line end
      end
      return t
    end
    local user_stacks = under_work(dir .. "/user.vm.folded")
    assert.is_true(#user_stacks > 20)
    assert.are.same(under_work(dir .. "/nouser.vm.folded"), user_stacks)
    local function without_script(t)
      for k in pairs(t) do
        if k:find("main chunk", 1, true) or k:find("sethook", 1, true) then t[k] = nil end
      end
      return t
    end
    local user = assert(callgrind.load(dir .. "/user.vm"))
    local nouser = assert(callgrind.load(dir .. "/nouser.vm"))
    assert.are.same(without_script(helpers.instr_lines(nouser)), without_script(helpers.instr_lines(user)))
    local counted, total, engine = helpers.read_file(dir .. "/totals"):match("^(%d+) (%d+) (%a+)$")
    assert.are.equal("vm", engine)
    assert.are.equal(counted, total)
    assert.is_true(tonumber(total) > 5000)
    helpers.run("rm -rf " .. shq(dir))
  end)

  it("gives the same numbers in two processes on a pairs-heavy script (a fixed string-hash seed)", function()
    local dir = tmpdir()
    local script = dir .. "/pairs.lua"
    -- where pairs stops depends on the order it walks the keys in
    helpers.write_file(script, [[
local found = 0
for round = 1, 30 do
  local t = {}
  for i = 1, 40 do t["key" .. i .. "_" .. round] = i end
  for k, v in pairs(t) do
    found = found + 1
    if v == 17 then break end
  end
end
print(found)
]])
    local outs, totals = {}, {}
    for i = 1, 2 do
      local out = ("%s/p%d.out"):format(dir, i)
      outs[i] = vm_run("-lcallgrind.start " .. shq(script), "CALLGRIND_OUT=" .. shq(out))
      local prof = assert(callgrind.load(out))
      assert.are.equal("vm", prof.engine)
      totals[i] = helpers.instr_lines(prof)
    end
    assert.are.equal(outs[1], outs[2])
    assert.are.same(totals[1], totals[2])
    -- the random seed (CALLGRIND_LUA_RANDOM_SEED) walks in other orders
    local seen = {}
    for _ = 1, 6 do
      seen[vm_run(shq(script), "CALLGRIND_LUA_RANDOM_SEED=1")] = true
    end
    assert.is_true(next(seen, next(seen)) ~= nil, "the random seed gave one order in 6 processes")
    helpers.run("rm -rf " .. shq(dir))
  end)

  it("is a drop-in lua5.4: the same package paths, and Debian's lpeg loads and gives the same results", function()
    local probe = "print(_VERSION, package.path, package.cpath)"
    assert.are.equal(helpers.run("lua5.4 -e " .. shq(probe), "lua5.4"),
      helpers.run(shq(VM) .. " -e " .. shq(probe), VM))
    local body = [[
local lpeg = require "lpeg"
local num = lpeg.C(lpeg.R("09") ^ 1) / tonumber
local list = lpeg.Ct(num * ("," * num) ^ 0)
print(lpeg.version(), table.concat(list:match("12,5,800,7"), " "), lpeg.match(lpeg.P"ab" ^ 1 * -1, "ababab"))
]]
    local stock = helpers.run("lua5.4 -e " .. shq(body), "lua5.4")
    assert.are.equal("12 5 800 7\t7", (stock:gsub("^[^\t]*\t", "")):gsub("\n$", ""))
    assert.are.equal(stock, helpers.run(shq(VM) .. " -e " .. shq(body), VM))
  end)

  it("reads and writes nothing it should not under memcheck: coroutines, errors and profiles around them", function()
    -- valgrind's memcheck on the interpreter itself (make check's memcheck
    -- runs Debian's lua5.4): a coroutine resumed before any profile once
    -- read the VM's flag that the first profile sets. (Not under make
    -- check-asan: its preloaded ASan and valgrind exclude each other.)
    if os.getenv("LD_PRELOAD") then return end
    local out = vm_run("spec/fixtures/lua/vm_edges.lua",
      "valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite")
    assert.is_truthy(out:find("\nok\n", 1, true) or out:find("^ok\n"), out)
    assert.is_truthy(out:find("ERROR SUMMARY: 0 errors", 1, true), out)
  end)

  it("concatenates past a __concat metamethod that moves the stack, profiled or not", function()
    -- Debian 12's lua5.4 (the fix of CVE-2022-33099 it applies) pops the operands from
    -- where the stack was before the metamethod ran: a coroutine's small
    -- stack, grown by the metamethod's recursion, left L->top in the freed
    -- one (a crash, or a live closure collected; make fuzz-lua found it).
    -- Lua 5.4.7 pops from the stack's top as it is; the 5.4.4 patch does
    -- so too.
    local prog = [[
      local function deep(n) if n == 0 then return 0 end return 1 + deep(n - 1) end
      local t = setmetatable({}, { __concat = function(a, b) deep(5000) return "x" .. #tostring(b) end })
      local function run()
        return coroutine.wrap(function()
          local s = "a" .. "b" .. t .. "cd"
          collectgarbage()
          return s .. "!"
        end)()
      end
      print(run())
      local callgrind = require "callgrind"
      local got
      local prof = callgrind.profile(function() got = run() end, { stacks = true })
      print(got, prof.engine)
    ]]
    assert.are.equal("abx2!\nabx2!\tvm\n", vm_run("-e " .. shq(prog)))
  end)

  -- A C function's frame makes its stack's node only when it calls Lua
  -- (csrc/vm/: cgjoinC, luaD_cgresolve): string.len, which runs no Lua,
  -- has a node of cost 0 in the hook engine's stack record and none in the
  -- counting interpreter's, while table.sort, which calls cmp, has one in
  -- both; the stacks that cost something are the same in both records.
  it("makes no stack for a C function that runs no Lua, and one for a C function that calls Lua", function()
    local dir = tmpdir()
    local prog = dir .. "/leaves.lua"
    local f = assert(io.open(prog, "w"))
    f:write([[
      local function cmp(a, b) return a > b end
      local function work()
        local n = 0
        for i = 1, 20 do n = n + string.len(("x"):rep(i)) end
        local t = { 3, 1, 2 }
        table.sort(t, cmp)
        return n + t[1]
      end
      print(work())
    ]])
    f:close()
    -- FILE.stacks of a run: its nodes as "parent-path;name cost" lines
    -- (costs 0 too), sorted
    local function nodes(path)
      local text = assert(helpers.read_file(path))
      local fns, paths, out = {}, {}, {}
      local body = assert(text:match("\nfunctions: %d+\n(.-)nodes: %d+\n"))
      for name in body:gmatch("[^\t\n]*\t([^\n]*)\n") do fns[#fns + 1] = name end
      local i = 0
      for d, fn, cost in text:match("\nnodes: %d+\n(.*)# end"):gmatch("(%d+) (%d+) (%d+)\n") do
        i = i + 1
        local up = i - tonumber(d)
        paths[i] = (up > 0 and paths[up] .. ";" or "") .. fns[tonumber(fn)]
        out[#out + 1] = paths[i] .. " " .. cost
      end
      table.sort(out)
      return out
    end
    local env = "CALLGRIND_STACKS=1 CALLGRIND_OUT=" .. shq(dir .. "/vm.out")
    assert.are.equal("213\n", vm_run("-lcallgrind.start " .. shq(prog), env))
    local hook = helpers.run(("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s CALLGRIND_STACKS=1 CALLGRIND_OUT=%s lua5.4 "
      .. "-lcallgrind.start %s 2>&1"):format(shq(package.path), shq(package.cpath), shq(dir .. "/hook.out"),
      shq(prog)), "lua5.4")
    assert.are.equal("213\n", hook)
    local vm, hk = nodes(dir .. "/vm.out.stacks"), nodes(dir .. "/hook.out.stacks")
    local function with(list, pat, cost)
      local got = {}
      for _, l in ipairs(list) do
        if l:find(pat) and (cost == nil or l:match(" (%d+)$") == cost) then got[#got + 1] = l end
      end
      return got
    end
    assert.are.same({}, with(vm, ";string%.len "))
    assert.are.equal(1, #with(hk, ";work;string%.len ", "0"), table.concat(hk, "\n"))
    assert.are.equal(1, #with(vm, ";work;table%.sort;cmp "))
    assert.are.equal(1, #with(hk, ";work;table%.sort;cmp "))
    local function costly(list)
      local got = {}
      for _, l in ipairs(list) do if not l:find(" 0$") then got[#got + 1] = l end end
      return got
    end
    assert.are.same(costly(hk), costly(vm))
  end)

  -- A stack's count in the VM's 32-byte node is 64 bits (csrc/vm/: CgNode,
  -- cgcharge), checked past 2^32 (about 9 s: make check-long). spin(n)
  -- runs n + 5 instructions (luac -l: LOADI, MOVE, LOADI, FORPREP, n
  -- FORLOOPs, RETURN0); its stack's count is checked against that sum and
  -- against its self cost in the profile, which the per-pc counts give.
  if os.getenv("CALLGRIND_VM_LONG") == "full" then
    it("keeps a stack's count past 2^32 instructions (make check-long)", function()
      local calls = { 1 << 31, 1 << 31 }
      local prog = ([[
        local function spin(n) for _ = 1, n do end end
        local callgrind = require "callgrind"
        local prof = callgrind.profile(function() for _, n in ipairs({ %s }) do spin(n) end end,
          { stacks = true })
        print(prof.engine, prof:func("spin"):self("Instr"))
        io.write((prof:folded("Instr")))
      ]]):format(table.concat(calls, ", "))
      local want = 0
      for _, n in ipairs(calls) do want = want + n + 5 end
      local out = vm_run("-e " .. shq(prog))
      local engine, self = out:match("^(%S+)\t(%d+)\n")
      assert.are.equal("vm", engine)
      assert.are.equal(want, tonumber(self))
      assert.are.equal(want, tonumber(out:match("\n[^\n]*;spin (%d+)\n")), out)
    end)
  end

  it("runs a script under callgrind-lua exec, with its arguments, profile and exit code", function()
    local dir = tmpdir()
    local script = dir .. "/s.lua"
    helpers.write_file(script, [[
local function f(n) if n < 2 then return n end return f(n - 1) + f(n - 2) end
print(f(10), ...)
os.exit(tonumber((...)) == 3 and 3 or 0)
]])
    local out = dir .. "/s.out"
    local p = io.popen(("CALLGRIND_VM=%s CALLGRIND_OUT=%s lua5.4 bin/callgrind-lua exec %s 3 'b c'; echo rc=$?")
      :format(shq(VM), shq(out), shq(script)))
    local text = p:read("a")
    p:close()
    assert.are.equal("55\t3\tb c\nrc=3\n", text)
    local prof = assert(callgrind.load(out))
    assert.are.equal("vm", prof.engine)
    local n = 0
    for c in prof:func("f"):callers() do n = n + c.count end
    assert.are.equal(177, n)
    helpers.run("rm -rf " .. shq(dir))
  end)

  it("refuses an unsupported Lua release, naming the supported ones", function()
    local dir = tmpdir()
    helpers.run(("mkdir -p %s/src/src"):format(shq(dir)))
    helpers.write_file(dir .. "/src/src/lua.h", [[
#define LUA_VERSION_MAJOR	"5"
#define LUA_VERSION_MINOR	"4"
#define LUA_VERSION_RELEASE	"9"
]])
    local p = io.popen(("LUA_SRC=%s sh tools/vm_build.sh %s 2>&1; echo rc=$?"):format(shq(dir .. "/src"),
      shq(dir .. "/build")))
    local out = p:read("a")
    p:close()
    assert.is_truthy(out:find("unsupported Lua release 5.4.9; supported releases: 5.4.4 5.4.7", 1, true), out)
    assert.is_truthy(out:find("rc=2", 1, true), out)
    helpers.run("rm -rf " .. shq(dir))
  end)
end)

describe("the profiler's engine", function()
  it("is the hook on a stock lua5.4 (engine = \"vm\" refused there), the clock on the counting one", function()
    local on_vm = pcall(callgrind.profile, print, { engine = "vm" })
    local prof = callgrind.profile(function() return 1 end)
    assert.are.equal(on_vm and "vm" or "hook", prof.engine)
    assert.are.equal("hook", callgrind.profile(print, { engine = "hook" }).engine)
    local ok, err = pcall(callgrind.profile, print, { engine = "vm" })
    if not on_vm then
      assert.is_false(ok)
      assert.is_truthy(err:find("not the counting interpreter", 1, true), err)
    end
    ok, err = pcall(callgrind.profile, print, { engine = "jit" })
    assert.is_false(ok)
    assert.is_truthy(err:find('"vm" or "hook"', 1, true), err)
  end)
end)
