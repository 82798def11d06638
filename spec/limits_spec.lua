-- Out of memory: a child lua5.4 loads a profile too big for its address
-- space limit; the load raises "not enough memory" (caught by pcall), and
-- the same Lua state then parses a small profile. The child uses the same
-- module files as this run (made absolute), so it tests this checkout, the
-- sanitizer build or the installed rock alike.

local H = require "spec.support.helpers"

local shq, read_file = H.shq, H.read_file

local function read_cmd(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok, how, code = p:close()
  return out, ok, how, code
end

local CWD = (read_cmd("pwd"):gsub("\n$", ""))

-- package.path/cpath with every relative entry made absolute.
local function absolute(path)
  local t = {}
  for entry in path:gmatch("[^;]+") do
    t[#t + 1] = entry:sub(1, 1) == "/" and entry or (CWD .. "/" .. entry)
  end
  return table.concat(t, ";")
end

local CHILD = [[
package.path = %q
package.cpath = %q
local callgrind = require "callgrind"
local ok, err = pcall(callgrind.load, %q)
print("big", ok, err)
collectgarbage("collect")
local prof = assert(callgrind.parse("events: Ir\nfn=main\n1 5\n2 7\n", "small"))
print("small", prof:total("Ir"), prof:func("main"):self("Ir"))
]]

describe("out of memory", function()
  local dir

  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. shq(dir)))
  end)

  teardown(function()
    os.execute("rm -rf " .. shq(dir))
  end)

  it("raises 'not enough memory' from a load and leaves the Lua state usable", function()
    -- 10^6 distinct functions: about 130 MB of model for a 15 MB file
    local big = dir .. "/big.out"
    local f = assert(io.open(big, "wb"))
    f:write("events: Ir\n")
    local t = {}
    for i = 1, 1000000 do
      t[#t + 1] = "fn=f" .. i .. "\n1 1\n"
      if #t == 10000 then
        f:write(table.concat(t))
        t = {}
      end
    end
    f:close()
    local script = dir .. "/child.lua"
    f = assert(io.open(script, "wb"))
    f:write(CHILD:format(absolute(package.path), absolute(package.cpath), big))
    f:close()
    local lua = arg and arg[-1] or "lua5.4"
    local limit
    if (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) then
      -- AddressSanitizer reserves terabytes of address space: cap single
      -- allocations instead of the address space. The model's largest block
      -- here is 32-48 MB and its growth steps differ between machines: cap
      -- well below it
      limit = "ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=8:detect_leaks=0 "
    else
      limit = "ulimit -v 120000 && "
    end
    -- stderr apart: AddressSanitizer warns there about the failed malloc
    local errfile = dir .. "/stderr"
    local out = read_cmd(limit .. shq(lua) .. " " .. shq(script) .. " 2>" .. shq(errfile))
    local err = read_file(errfile)
    assert.are.equal("big\tfalse\tnot enough memory\nsmall\t12\t12\n", out, "stderr: " .. err)
  end)
end)
