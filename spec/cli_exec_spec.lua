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
