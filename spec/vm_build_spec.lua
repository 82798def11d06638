-- make vm (tools/vm_build.sh) on a Lua source whose lua.h names another
-- release than its files are: a message saying which release and which
-- patches there are (exit 2), before anything is compiled; and the
-- counting interpreter's string-hash seed: fixed unless
-- CALLGRIND_LUA_RANDOM_SEED=1 (0 or empty keep it fixed).
local H = require "spec.support.helpers"
local F = require "spec.support.files"

local VM = os.getenv("CALLGRIND_VM") or "build/bin/callgrind-lua5.4"

-- The orig tarball make vm fetched for the installed lua5.4, or nil.
local function lua_tarball()
  local p = io.popen("ls build/vm/deb-*/lua5.4_*.orig.tar.* 2>/dev/null")
  local path = p:read("l")
  p:close()
  return path
end

-- tools/vm_build.sh on LUA_SRC=dir: its exit status and what it said.
local function build(src, out)
  local p = assert(io.popen(("LUA_SRC=%s sh tools/vm_build.sh %s cc 2>&1; echo \"rc=$?\""):format(H.shq(src),
    H.shq(out))))
  local text = p:read("a")
  p:close()
  local rc = tonumber(text:match("rc=(%d+)\n$"))
  return rc, text:gsub("rc=%d+\n$", "")
end

describe("make vm on a Lua source whose lua.h names another release", function()
  local dir, rel
  setup(function()
    local tarball = lua_tarball()
    if not tarball then return end
    dir = F.tmpdir()
    assert(os.execute(("mkdir %s/src && tar -xf %s -C %s/src --strip-components=1"):format(H.shq(dir),
      H.shq(tarball), H.shq(dir))))
    rel = H.read_file(dir .. "/src/src/lua.h"):match('#define LUA_VERSION_RELEASE%s+"(%d+)"')
  end)
  teardown(function() if dir then F.remove(dir) end end)

  -- lua.h edited to name the other supported release of 5.4
  local function other()
    return rel == "4" and "7" or "4"
  end

  it("says so when LUA_VERSION_RELEASE and LUA_VERSION_RELEASE_NUM disagree", function()
    if not dir then pending("no Lua source tarball under build/vm (make vm from Debian's source)") return end
    local h = dir .. "/src/src/lua.h"
    local text = H.read_file(h)
    H.write_file(h, (text:gsub('(#define LUA_VERSION_RELEASE%s+)"%d+"', '%1"' .. other() .. '"')))
    local rc, out = build(dir .. "/src", dir .. "/b1")
    H.write_file(h, text)
    assert.are.equal(2, rc, out)
    assert.are.equal(("make vm: the Lua source's lua.h names two releases: LUA_VERSION_RELEASE says 5.4.%s, "
      .. "LUA_VERSION_RELEASE_NUM 5.4.%s; supported releases: 5.4.4 5.4.7 (csrc/vm/lua-<release>.patch)\n")
      :format(other(), rel), out)
  end)

  it("says so when lua.h names a release whose patch does not apply to the files", function()
    if not dir then pending("no Lua source tarball under build/vm (make vm from Debian's source)") return end
    local h = dir .. "/src/src/lua.h"
    local text = H.read_file(h)
    H.write_file(h, (text:gsub('(#define LUA_VERSION_RELEASE%s+)"%d+"', '%1"' .. other() .. '"')
      :gsub("(LUA_VERSION_NUM %* 100 %+ )%d+", "%1" .. other())))
    local rc, out = build(dir .. "/src", dir .. "/b2")
    H.write_file(h, text)
    assert.are.equal(2, rc, out)
    assert.are.equal(("make vm: the Lua source's lua.h says release 5.4.%s, but csrc/vm/lua-5.4.%s.patch does not "
      .. "apply to its files (another release's files, or changed ones); supported releases: 5.4.4 5.4.7; give "
      .. "the source of one (LUA_SRC=DIR|TARBALL)\n"):format(other(), other()), out)
    -- nothing was compiled
    assert.is_falsy(io.open(dir .. "/b2/vm/src/src/lvm.o"))
  end)
end)

describe("the counting interpreter's string-hash seed", function()
  it("is fixed unset, empty or 0, and Lua's random one with CALLGRIND_LUA_RANDOM_SEED=1", function()
    if not F.have(VM) then pending("no counting interpreter: make vm") return end
    local dir = F.tmpdir()
    local script = dir .. "/order.lua"
    H.write_file(script, "local t = {} for i = 1, 40 do t['k' .. i] = i end\n"
      .. "local o = {} for k in pairs(t) do o[#o + 1] = k end print(table.concat(o, ' '))\n")
    local function orders(env)
      local seen, n = {}, 0
      for _ = 1, 5 do
        local out = H.run(("env %s %s %s"):format(env, H.shq(VM), H.shq(script)))
        if not seen[out] then seen[out], n = true, n + 1 end
      end
      return n, next(seen)
    end
    local n, fixed = orders("-u CALLGRIND_LUA_RANDOM_SEED")
    assert.are.equal(1, n)
    for _, env in ipairs({ "CALLGRIND_LUA_RANDOM_SEED=0", "CALLGRIND_LUA_RANDOM_SEED=" }) do
      local m, order = orders(env)
      assert.are.equal(1, m, env)
      assert.are.equal(fixed, order, env)
    end
    assert.is_true(orders("CALLGRIND_LUA_RANDOM_SEED=1") > 1, "the random seed gave one order in 5 processes")
    F.remove(dir)
  end)
end)
