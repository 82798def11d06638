-- The load's large arrays (csrc/base/cg_mem.c): from 64 KiB on, the text, the
-- functions, their self costs, the calls, their numbers and the blocks lie
-- in address space reserved for each, grow in place by steps made resident
-- at once, move to a larger reservation when they outgrow it, and go back
-- to the heap when they shrink below 64 KiB. The profiles here are made so
-- that every one of those arrays passes 64 KiB (and, in the larger, 1 MiB),
-- and their numbers are computed as they are written.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local BIG = 2 ^ 40               -- costs of 6 varint bytes: the calls' numbers pass 1 MiB

-- n functions f1..fn, each with a cost line and a call to the next; the
-- expected totals, calls and costs alongside.
local function make(n)
  local t, want = { "events: Ir Dr Dw\nfl=a.c\n" }, { Ir = 0, Dr = 0, Dw = 0, ncalls = 0, count = 0 }
  for i = 1, n do
    local ir, dr, dw = i % 7 + 1, i % 3, i % 5
    local count = i % 4 + 1
    t[#t + 1] = ("fn=f%d\n1 %d %d %d\ncfn=f%d\ncalls=%d 1\n2 %d %d %d\n"):format(
      i, ir, dr, dw, i % n + 1, count, BIG + i, BIG, i)
    want.Ir, want.Dr, want.Dw = want.Ir + ir, want.Dr + dr, want.Dw + dw
    want.ncalls, want.count = want.ncalls + 1, want.count + count
  end
  return table.concat(t), want
end

local function check(prof, n, want)
  local t = prof:totals()
  assert.are.same({ want.Ir, want.Dr, want.Dw }, { t.Ir, t.Dr, t.Dw })
  local nfn = 0
  for _ in prof:functions() do nfn = nfn + 1 end
  assert.are.equal(n, nfn)
  local ncalls, count = 0, 0
  for call in prof:calls() do
    ncalls, count = ncalls + 1, count + call.count
  end
  assert.are.same({ want.ncalls, want.count }, { ncalls, count })
  -- a function and a call from the middle and from the end of the arrays
  for _, i in ipairs { n // 2, n } do
    local fn = assert(prof:func("f" .. i))
    assert.are.same({ Ir = i % 7 + 1, Dr = i % 3, Dw = i % 5 }, fn:self())
    local call = fn:calls()()
    assert.are.equal("f" .. (i % n + 1), call.callee.name)
    assert.are.same({ BIG + i, BIG, i }, { call:cost("Ir"), call:cost("Dr"), call:cost("Dw") })
  end
end

local function vm_size()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmSize:%s+(%d+) kB")
    if kb then return tonumber(kb) * 1024 end
  end
end

describe("the large arrays of a load", function()
  -- 2,500 functions: the calls (24 bytes each) pass 64 KiB while they grow
  -- (2,731 of them) and fall back under it, to the heap, when trimmed to
  -- their number; 60,000: every array passes 1 MiB
  for _, n in ipairs { 2500, 60000 } do
    describe(("of %d functions"):format(n), function()
      local path, text, want

      setup(function()
        text, want = make(n)
        path = os.tmpname()
        H.write_file(path, text)
      end)

      teardown(function() os.remove(path) end)

      it("hold every function, call and cost, with one thread and with two", function()
        check(assert(callgrind.load(path, { threads = 1 })), n, want)
        check(assert(callgrind.load(path)), n, want)
      end)

      it("hold them when the text comes from a pipe, growing as it comes", function()
        -- (LD_PRELOAD kept: under make check-asan the core needs it)
        local p = assert(io.popen(("cat %s | lua5.4 -e %s 2>&1"):format(H.shq(path), H.shq(([[
          package.path = %q; package.cpath = %q
          local p = assert(require("callgrind").load("/dev/stdin"))
          local n = 0
          for _ in p:calls() do n = n + 1 end
          print(p:total("Ir"), p:total("Dr"), p:total("Dw"), n)]]):format(package.path, package.cpath)))))
        local out = p:read("a")
        p:close()
        assert.are.same({ tostring(want.Ir), tostring(want.Dr), tostring(want.Dw), tostring(want.ncalls) },
          H.words(out))
      end)

      it("hold them when the text is decompressed", function()
        local gz = path .. ".gz"
        H.run(("gzip -c %s > %s"):format(H.shq(path), H.shq(gz)), "gzip")
        local prof = assert(callgrind.load(gz))
        os.remove(gz)
        check(prof, n, want)
        assert.are.equal(#text, select(2, prof:memory()))
      end)
    end)
  end

  it("take the address space they need alone where eight times as much is not to be had", function()
    -- AddressSanitizer's own reservations do not fit under any ulimit -v
    -- (and its builds keep the arrays on the heap)
    if (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) then return end
    local path = os.tmpname()
    local text, want = make(60000)
    H.write_file(path, text)
    -- 200 MB: the model and Lua fit, six reservations of 64 MiB do not
    local p = assert(io.popen(("ulimit -v 200000 && lua5.4 -e %s 2>&1"):format(H.shq(([[
      package.path = %q; package.cpath = %q
      local p = assert(require("callgrind").load(%q))
      print(p:total("Ir"), p:total("Dr"), p:total("Dw"))]]):format(package.path, package.cpath, path)))))
    local out = p:read("a")
    p:close()
    os.remove(path)
    assert.are.same({ tostring(want.Ir), tostring(want.Dr), tostring(want.Dw) }, H.words(out))
  end)

  it("give all their address space back when the profile is freed", function()
    local path = os.tmpname()
    H.write_file(path, (make(60000)))
    local prof = assert(callgrind.load(path))
    prof:close()
    collectgarbage()
    local before = vm_size()
    -- each load reserves 64 MiB or more for each of six arrays: twenty
    -- loads that left even one behind would be 1.25 GiB (the sanitizers'
    -- allocators keep some 100 MiB of their own)
    for _ = 1, 20 do
      prof = assert(callgrind.load(path))
      prof:close()
    end
    collectgarbage()
    os.remove(path)
    local grown = vm_size() - before
    assert.is_true(grown < 512 * 1024 * 1024, ("address space grew by %d bytes"):format(grown))
  end)
end)
