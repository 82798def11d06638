-- opts.progress: called at least every 16 MB of input and at the end, with
-- (bytes done, total bytes); returning false cancels the load.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local MB16 = 16 * 1024 * 1024

local function recorder(ret)
  local calls = {}
  return calls, function(done, total)
    calls[#calls + 1] = { done, total }
    return ret
  end
end

describe("opts.progress", function()
  local big, size

  setup(function()
    -- 40 MB of cost lines: progress must come at least twice before the end
    big = os.tmpname()
    local f = assert(io.open(big, "wb"))
    f:write("events: Ir\nfn=main\n")
    local chunk = ("1 1\n"):rep(1024 * 1024)
    for _ = 1, 10 do f:write(chunk) end
    f:close()
    size = #H.read_file(big)
    assert.are.equal(19 + 40 * 1024 * 1024, size)
  end)

  teardown(function() os.remove(big) end)

  it("is called once, at the end, for a small file", function()
    local path = "spec/fixtures/parts.callgrind"
    local calls, fn = recorder()
    local prof = assert(callgrind.load(path, { progress = fn }))
    local n = #H.read_file(path)
    assert.are.same({ { n, n } }, calls)
    assert.are.equal(18, prof:total("Ir"))
  end)

  it("is called at least every 16 MB, never going back, and ends at the total", function()
    local calls, fn = recorder(true)
    local prof = assert(callgrind.load(big, { progress = fn }))
    assert.are.equal(10 * 1024 * 1024, prof:total("Ir"))
    assert.is_true(#calls >= 3, #calls .. " calls")
    local prev = 0
    for _, c in ipairs(calls) do
      assert.are.equal(size, c[2])
      assert.is_true(c[1] >= prev and c[1] - prev <= MB16 + 4, ("%d after %d"):format(c[1], prev))
      prev = c[1]
    end
    assert.are.same({ size, size }, calls[#calls])
    assert.is_true(size - calls[#calls - 1][1] <= MB16 + 4)
  end)

  it("is called while a compressed file is decompressed (its bytes taken, their total), and cancels it", function()
    local gz = big .. ".gz"
    H.run(("gzip -c %s > %s"):format(H.shq(big), H.shq(gz)), "gzip")
    local n = #H.read_file(gz)
    -- 40 MB of text: at 16 and 32 MB decompressed, then the load's own.
    -- (Its lines are all alike: gzip packs them 1,030 to 1, past the default
    -- limit of 1,000 times)
    local calls, fn = recorder(true)
    local prof = assert(callgrind.load(gz, { progress = fn, max_bytes = 1 << 30 }))
    assert.are.equal(10 * 1024 * 1024, prof:total("Ir"))
    assert.are.equal(n, calls[1][2])
    assert.are.equal(n, calls[2][2])
    assert.is_true(calls[1][1] > 0 and calls[1][1] < calls[2][1] and calls[2][1] <= n,
      calls[1][1] .. " " .. calls[2][1])
    assert.are.equal(size, calls[3][2])
    assert.are.same({ size, size }, calls[#calls])
    calls, fn = recorder(false)
    assert.are.same({ nil, gz .. ": load cancelled", "cancelled" },
      { callgrind.load(gz, { progress = fn, max_bytes = 1 << 30 }) })
    assert.are.same({ 1, n }, { #calls, calls[1][2] })
    os.remove(gz)
  end)

  it("counts the bytes of all files of a list, and of a parsed string", function()
    local paths = { "spec/fixtures/parts.callgrind", "spec/fixtures/inline.callgrind" }
    local n = #H.read_file(paths[1]) + #H.read_file(paths[2])
    local calls, fn = recorder()
    assert(callgrind.load(paths, { progress = fn }))
    assert.are.same({ { n, n } }, calls)
    calls, fn = recorder()
    local text = "events: Ir\nfn=a\n1 2\n"
    assert(callgrind.parse(text, "s", { progress = fn }))
    assert.are.same({ { #text, #text } }, calls)
  end)

  it("cancels the load when it returns false, naming the file", function()
    local calls, fn = recorder(false)
    assert.are.same({ nil, big .. ": load cancelled", "cancelled" }, { callgrind.load(big, { progress = fn }) })
    assert.are.equal(1, #calls)
    assert.are.same({ nil, "spec/fixtures/parts.callgrind: load cancelled", "cancelled" },
      { callgrind.load("spec/fixtures/parts.callgrind", { progress = function() return false end }) })
    assert.are.same({ nil, "s: load cancelled", "cancelled" },
      { callgrind.parse("events: Ir\n", "s", { progress = function() return false end }) })
  end)

  it("goes on when it returns nothing or anything but false", function()
    for _, r in ipairs { true, 0, "no" } do
      assert.is_not_nil(callgrind.load("spec/fixtures/parts.callgrind", { progress = function() return r end }))
    end
  end)

  it("lets an error it raises through, the load abandoned", function()
    assert.has_error(function()
      callgrind.load(big, { progress = function() error("stop here", 0) end })
    end, "stop here")
  end)

  it("must be a function", function()
    assert.has_error(function() callgrind.load(big, { progress = 5 }) end,
      "bad argument #2 to 'load' (option 'progress' must be function, got 5)")
  end)
end)
