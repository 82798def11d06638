-- callgrind-lua exec finds the counting interpreter beside itself: run
-- by its full path after `make install PREFIX=DIR`, from any directory
-- with nothing on PATH, it runs DIR/bin/callgrind-lua5.4.
local H = require "spec.support.helpers"
local F = require "spec.support.files"

local VM = (os.getenv("CALLGRIND_BUILD") or "build") .. "/bin/callgrind-lua5.4"

describe("callgrind-lua exec after make install PREFIX=DIR", function()
  it("runs DIR/bin/callgrind-lua5.4, beside the command, from any directory", function()
    if not F.have(VM) then pending("no counting interpreter: make vm") return end
    local dir = F.tmpdir()
    local build = os.getenv("CALLGRIND_BUILD") or "build"
    assert.is_true(os.execute(("make -s install PREFIX=%s BUILD=%s > /dev/null"):format(H.shq(dir), H.shq(build))))
    assert.is_truthy(io.open(dir .. "/bin/callgrind-lua5.4"))
    H.write_file(dir .. "/s.lua", "local s = 0 for i = 1, 100 do s = s + i end print(s)\n")
    -- PATH without DIR/bin and no Lua paths: only what the command finds itself
    local p = assert(io.popen(("cd / && env -u LUA_PATH -u LUA_PATH_5_4 -u LUA_CPATH -u LUA_CPATH_5_4 "
      .. "-u CALLGRIND_VM PATH=/usr/bin:/bin CALLGRIND_OUT=%s %s exec %s 2>&1; echo \"rc=$?\"")
      :format(H.shq(dir .. "/s.out"), H.shq(dir .. "/bin/callgrind-lua"), H.shq(dir .. "/s.lua"))))
    local out = p:read("a")
    p:close()
    assert.are.equal("5050\nrc=0\n", out)
    assert.is_truthy(H.read_file(dir .. "/s.out"):find("\nevents: Instr", 1, true))
    F.remove(dir)
  end)
end)

-- bin/callgrind-lua is a shell script and a Lua script: run as a command,
-- its shell part execs the counting interpreter for `exec` itself; run by
-- lua5.4 (as the shell part does for everything else), the Lua part does
-- it through callgrind.cli.exec. Both must choose the same interpreter
-- and give it the same module paths. The interpreter here is a stand-in
-- that prints its path, its arguments, and the package.path and cpath a
-- Lua 5.4 interpreter makes of its environment.
describe("callgrind-lua exec's shell part", function()
  local root = H.run("pwd", "pwd"):gsub("\n$", "")
  local shq = H.shq
  local dir
  setup(function() dir = F.tmpdir() end)
  teardown(function() F.remove(dir) end)

  local function fake_vm(path)
    H.write_file(path, "#!/bin/sh\necho \"vm $0 $*\"\necho \"raw $LUA_PATH_5_4\"\n"
      .. "exec lua5.4 -e 'print(package.path) print(package.cpath)'\n")
    assert(os.execute("chmod +x " .. shq(path)))
  end

  -- a checkout (its lua/ and build/ the real ones, linked) with a
  -- stand-in build/bin/callgrind-lua5.4, and an install tree PREFIX/bin,
  -- PREFIX/share/lua/5.4, PREFIX/lib/lua/5.4 with one beside the command
  local function layouts()
    local co, inst = dir .. "/checkout", dir .. "/prefix"
    assert(os.execute(("mkdir -p %s/bin %s/build/bin %s/bin %s/share/lua/5.4 %s/lib/lua/5.4")
      :format(shq(co), shq(co), shq(inst), shq(inst), shq(inst))))
    assert(os.execute(("ln -s %s/lua %s/lua && ln -s %s/lua/callgrind %s/share/lua/5.4/callgrind")
      :format(shq(root), shq(co), shq(root), shq(inst))))
    local build = os.getenv("CALLGRIND_BUILD") or "build"
    if build:sub(1, 1) ~= "/" then build = root .. "/" .. build end
    assert(os.execute(("ln -s %s/callgrind %s/build/callgrind && ln -s %s/callgrind %s/lib/lua/5.4/callgrind")
      :format(shq(build), shq(co), shq(build), shq(inst))))
    for _, d in ipairs({ co, inst }) do
      assert(os.execute(("cp %s/bin/callgrind-lua %s/bin/"):format(shq(root), shq(d))))
    end
    fake_vm(co .. "/build/bin/callgrind-lua5.4")
    fake_vm(inst .. "/bin/callgrind-lua5.4")
    return co, inst
  end

  -- the output and exit status of the command with env (words before it)
  -- from /, as a command (the shell part) or under lua5.4 (the Lua part)
  local function run(env, cmd, lua, args)
    local p = assert(io.popen(("cd / && env -u LUA_PATH -u LUA_PATH_5_4 -u LUA_CPATH -u LUA_CPATH_5_4 "
      .. "-u CALLGRIND_VM %s %s%s %s 2>&1; echo \"rc=$?\""):format(env, lua and "lua5.4 " or "", shq(cmd), args)))
    local out = p:read("a")
    p:close()
    return out
  end

  it("chooses the interpreter and module paths the Lua part chooses, and runs it at once", function()
    local co, inst = layouts()
    local sp = shq(dir .. "/s.lua")
    local cases = {
      { "", co .. "/bin/callgrind-lua", co .. "/build/bin/callgrind-lua5.4" },
      { "LUA_PATH_5_4='/x/?.lua;;' LUA_CPATH_5_4='/y/?.so'", co .. "/bin/callgrind-lua",
        co .. "/build/bin/callgrind-lua5.4" },
      { "LUA_PATH='/z/?.lua' LUA_CPATH_5_4=''", co .. "/bin/callgrind-lua", co .. "/build/bin/callgrind-lua5.4" },
      { "", inst .. "/bin/callgrind-lua", inst .. "/bin/callgrind-lua5.4" },
      { "CALLGRIND_VM=" .. shq(co .. "/build/bin/callgrind-lua5.4"), inst .. "/bin/callgrind-lua",
        co .. "/build/bin/callgrind-lua5.4" },
    }
    for i, c in ipairs(cases) do
      local sh, lua = run(c[1], c[2], false, "exec " .. sp .. " a b"), run(c[1], c[2], true, "exec " .. sp .. " a b")
      -- the variable as given: the shell part's is unexpanded (";;" where
      -- the default goes), the Lua part's is its package.path
      local raw = "\nraw [^\n]*\n"
      if i == 1 then
        assert.are.equal(("\nraw %s/lua/?.lua;%s/lua/?/init.lua;;\n"):format(co, co), sh:match(raw))
        assert.is_falsy(lua:match(raw):find(";;", 1, true))
      end
      sh, lua = sh:gsub(raw, "\n"), lua:gsub(raw, "\n")
      assert.are.equal(lua, sh)
      -- the interpreter meant, with the starter, the script, its words
      local vm, lpath, cpath = sh:match("^vm (%S+) %-lcallgrind%.start " .. dir:gsub("%p", "%%%0")
        .. "/s%.lua a b\n([^\n]*)\n([^\n]*)\nrc=0\n$")
      assert.are.equal(c[3], vm, sh)
      -- the command's own modules first, the core found through them
      local top = c[2]:match("^(.*)/bin/")
      local first = lpath:match("^[^;]*")
      assert.is_truthy(first == top .. "/lua/?.lua" or first == top .. "/share/lua/5.4/?.lua", lpath)
      assert.is_truthy(cpath:find("^" .. top:gsub("%p", "%%%0") .. "/"), cpath)
    end
    -- one that cannot run: the Lua part says so, for both
    assert(os.execute("chmod -x " .. shq(inst .. "/bin/callgrind-lua5.4")))
    local sh = run("", inst .. "/bin/callgrind-lua", false, "exec " .. sp)
    assert.are.equal(run("", inst .. "/bin/callgrind-lua", true, "exec " .. sp), sh)
    assert.is_truthy(sh:find("callgrind-lua exec: ", 1, true), sh)
    assert.is_truthy(sh:find("\nrc=1\n$"), sh)
    -- --help among the words: the command's help
    local help = run("", co .. "/bin/callgrind-lua", false, "exec " .. sp .. " --help")
    assert.are.equal(run("", co .. "/bin/callgrind-lua", true, "exec " .. sp .. " --help"), help)
    assert.is_truthy(help:find("exec", 1, true) and help:find("\nrc=0\n$"), help)
  end)
end)
