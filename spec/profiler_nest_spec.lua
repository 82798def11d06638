-- A profile inside a running one (callgrind.profile nested, see NEST in
-- lua/callgrind/profiler/init.lua): the outer profile's numbers against
-- the same code profiled without nesting (the inner call a plain call),
-- under both engines, each in a process of its own.
local helpers = require "spec.support.helpers"
-- helpers.run unsets LD_PRELOAD; the profiled interpreters keep it: under
-- make check-asan cpath names the ASan build, which needs libasan first
local PRELOAD = os.getenv("LD_PRELOAD") and ("LD_PRELOAD=" .. helpers.shq(os.getenv("LD_PRELOAD")) .. " ") or ""

local shq = helpers.shq
local VM = os.getenv("CALLGRIND_VM") or "build/bin/callgrind-lua5.4"

-- f is open in the outer profile when the inner one (of h) calls it
-- again: in a plain profile that inner call of f is a recursion, its
-- cost already in the open f's, so its edge has its count and no cost.
local SCRIPT = [[
local cg = require "callgrind"
local NEST = arg[1] == "nest"
local function work(n) local s = 0 for i = 1, n do s = s + i end return s end
local f
local function h() f(1) return work(20) end
local function call(fn)
  local r
  if NEST then r = cg.profile(fn) else r = fn() end
  return r
end
function f(d) work(100) if d == 0 then call(h) end return d end
local prof = cg.profile(function() f(0) end)
for fn in prof:functions() do
  print("fn", fn.name, fn:self("Instr"), fn:inclusive("Instr"))
  local cs = fn:callee_functions()
  for i = 1, #cs do print("edge", fn.name .. ">" .. cs[i].fn.name, cs[i].count, cs:cost(i, "Instr")) end
end
print("total", "all", prof:total("Instr"))
]]

-- What the script printed: fns[name] = { self, inclusive }, edges["a>b"] = { count, cost }, total.
local function run(lua, mode, dir)
  local out = helpers.run((PRELOAD .. "LUA_PATH_5_4=%s LUA_CPATH_5_4=%s %s %s %s"):format(shq(package.path),
    shq(package.cpath), shq(lua), shq(dir .. "/nest.lua"), mode), lua)
  local r = { fns = {}, edges = {} }
  for kind, name, a, b in out:gmatch("(%a+)\t([^\t\n]+)\t(%d+)\t?(%d*)\n") do
    if kind == "fn" then r.fns[name] = { tonumber(a), tonumber(b) }
    elseif kind == "edge" then r.edges[name] = { tonumber(a), tonumber(b) }
    else r.total = tonumber(a) end
  end
  assert(r.total, out)
  return r
end

for _, engine in ipairs({ { "hook", "lua5.4" }, { "vm", VM } }) do
  local name, lua = engine[1], engine[2]
  describe("a nested profile under the " .. name .. " engine", function()
    it("leaves the outer profile the numbers of the same code without nesting: a function open in both "
      .. "counts its cost once", function()
      if name == "vm" and not helpers.have_vm(VM) then
        pending("no " .. VM .. " (make vm)")
        return
      end
      local dir = (helpers.run("mktemp -d", "mktemp"):gsub("%s+$", ""))
      helpers.write_file(dir .. "/nest.lua", SCRIPT)
      local plain, nested = run(lua, "plain", dir), run(lua, "nest", dir)
      helpers.run("rm -rf " .. shq(dir), "rm")
      -- the recursion: its count, and no cost, as without nesting
      assert.are.same({ 1, 0 }, plain.edges["h>f"])
      assert.are.same(plain.edges["h>f"], nested.edges["h>f"])
      -- the calls below and the self costs of the code are the same
      for _, e in ipairs({ "call>h", "h>work", "f>work" }) do
        assert.are.same(plain.edges[e], nested.edges[e], e)
      end
      for _, fn in ipairs({ "f", "h", "work" }) do
        assert.are.equal(plain.fns[fn][1], nested.fns[fn][1], fn)
      end
      assert.are.same(plain.fns.h, nested.fns.h)
      assert.are.same(plain.fns.work, nested.fns.work)
      -- what the nested run has more is the profiler's own work, under
      -- f (through call): f's inclusive cost differs by the totals' difference
      local extra = nested.total - plain.total
      assert.is_true(extra > 0)
      assert.are.equal(plain.fns.f[2] + extra, nested.fns.f[2])
      assert.are.equal(plain.edges["f>call"][2] + extra, nested.edges["f>call"][2])
    end)
  end)
end
