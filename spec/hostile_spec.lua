-- Input made to exhaust the reader (csrc/reader/cg_source.c,
-- cg_decompress.c, cg_load_names.c): a small compressed file that expands without
-- end, names built of names that double at each line, a FIFO with no writer
-- and /dev/zero. Each fails with a message in bounded memory (the children
-- run under `ulimit -v`), or can be cancelled from opts.progress.
local H = require "spec.support.helpers"

-- AddressSanitizer reserves terabytes of address space: no ulimit -v under
-- make check-asan (the limits still hold; the memory is not checked then)
local ASAN = (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) ~= nil

-- Runs body in a fresh lua5.4 with callgrind as `callgrind`, in at most kib
-- KiB of address space, for at most 60 s; what it printed.
local function child(body, kib)
  local limit = (not ASAN and kib) and ("ulimit -v %d; timeout 60"):format(kib) or "timeout 60"
  return H.fresh_lua("local callgrind = require 'callgrind'\n" .. body, limit)
end

describe("input made to exhaust the reader", function()
  local lab = H.lab("spec/hostile_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  describe("a decompression bomb", function()
    local dir, zst, xz, gz

    setup(function()
      dir = lab.dir
      -- 2 GiB of zeros in 66 KB of zstd (as in issue 21); 64 MiB in xz, gzip
      zst, xz, gz = dir .. "/bomb.zst", dir .. "/bomb.xz", dir .. "/bomb.gz"
      H.run(("head -c 2G /dev/zero | zstd -q -c > %s"):format(H.shq(zst)), "zstd")
      H.run(("head -c 64M /dev/zero | xz -c > %s"):format(H.shq(xz)), "xz")
      H.run(("head -c 64M /dev/zero | gzip -c > %s"):format(H.shq(gz)), "gzip")
    end)

    local function size(path) return #H.read_file(path) end

    it("stops at 1,000 times the compressed size by default, in bounded memory", function()
      local out = child(([[
        for _, path in ipairs { %q, %q } do print(select(2, callgrind.load(path))) end
      ]]):format(zst, xz), 400000)
      local msg = "%s: decompressed size exceeds %d bytes (opts.max_bytes)\tmemory\n"
      assert.are.equal(msg:format(zst, 1000 * size(zst))
        .. msg:format(xz, 1000 * size(xz)), out)
    end)

    it("stops at opts.max_bytes, for every format, a plain file and parse; a text of max_bytes loads", function()
      local out = child(([[
        for _, path in ipairs { %q, %q, %q } do print(select(2, callgrind.load(path, { max_bytes = 5000000 }))) end
      ]]):format(zst, xz, gz), 400000)
      assert.are.equal(("%s: decompressed size exceeds 5000000 bytes (opts.max_bytes)\tmemory\n"):format(zst)
        .. ("%s: decompressed size exceeds 5000000 bytes (opts.max_bytes)\tmemory\n"):format(xz)
        .. ("%s: decompressed size exceeds 5000000 bytes (opts.max_bytes)\tmemory\n"):format(gz), out)
      -- parts.callgrind is 331 bytes of text
      local small = dir .. "/parts.gz"
      H.run(("gzip -c spec/fixtures/parts.callgrind > %s"):format(H.shq(small)), "gzip")
      out = child(([[
        local p = callgrind.load(%q, { max_bytes = 331 }) print(p and p:total("Ir"))
        print(select(2, callgrind.load(%q, { max_bytes = 330 })))
        print(select(2, callgrind.load("spec/fixtures/parts.callgrind", { max_bytes = 330 })))
        print(callgrind.load("spec/fixtures/parts.callgrind", { max_bytes = 331 }):total("Ir"))
        local text = io.open("spec/fixtures/parts.callgrind"):read("a")
        print(select(2, callgrind.parse(text, "t", { max_bytes = 330 })))
        print(callgrind.parse(text, "t", { max_bytes = 331 }):total("Ir"))
      ]]):format(small, small))
      assert.are.equal("18\n" .. small .. ": decompressed size exceeds 330 bytes (opts.max_bytes)\tmemory\n"
        .. "spec/fixtures/parts.callgrind: size exceeds 330 bytes (opts.max_bytes)\tmemory\n18\n"
        .. "t: size exceeds 330 bytes (opts.max_bytes)\tmemory\n18\n", out)
    end)

    it("calls progress while it decompresses (compressed bytes taken, their total), and can be cancelled", function()
      for _, path in ipairs { zst, gz } do
        local out = child(([[
          local calls = {}
          local p, err = callgrind.load(%q, { max_bytes = 1 << 40, progress = function(done, total)
            calls[#calls + 1] = { done, total }
            return #calls < 3
          end })
          local ok = true
          for i, c in ipairs(calls) do
            ok = ok and c[2] == %d and c[1] > 0 and c[1] <= c[2] and (i == 1 or c[1] >= calls[i - 1][1])
          end
          print(err, #calls, ok)
        ]]):format(path, size(path)), 400000)
        assert.are.equal(path .. ": load cancelled\t3\ttrue\n", out)
      end
    end)

    it("must be given max_bytes as a whole number of at least 1", function()
      local callgrind = require "callgrind"
      for _, bad in ipairs { 0, -1, 1.5 } do
        local ok, err = pcall(callgrind.load, zst, { max_bytes = bad })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("option 'max_bytes' must be a whole number of at least 1", 1, true), err)
      end
      -- not a number at all: the one options check says so (callgrind.api's type)
      local ok, err = pcall(callgrind.load, zst, { max_bytes = "1" })
      assert.is_false(ok)
      assert.truthy(tostring(err):find(
        "bad argument #2 to 'load' (option 'max_bytes' must be number, got '1')", 1, true),
        err)
    end)
  end)

  describe("names made up of compression ids (--compress-mangled)", function()

    -- fn=(1) a, then fn=(k) (k-1)'(k-1) up to a name of 2^19 - 1 bytes, then
    -- n distinct names of half a megabyte each: (19)'(100+j). Returns the
    -- path, its size, and the line (1-based) where the names built pass
    -- the bound (16 times the input, plus 16 MiB), or nil when they do not.
    local function chain(n)
      local t, len = { "events: Ir\n", "fn=(1) a\n" }, { [1] = 1 }
      local built, lines = 0, {}
      for k = 2, 19 do
        t[#t + 1] = ("fn=(%d) (%d)'(%d)\n"):format(k, k - 1, k - 1)
        len[k] = 2 * len[k - 1] + 1
        lines[#t] = len[k] + 1          -- (with the byte a separator takes)
      end
      for j = 1, n do t[#t + 1] = ("fn=(%d) x%d\n"):format(100 + j, j) end
      for j = 1, n do
        t[#t + 1] = ("fn=(%d) (19)'(%d)\n"):format(100000 + j, 100 + j)
        lines[#t] = len[19] + 1 + #tostring(j) + 1 + 1
        t[#t + 1] = "1 1\n"
      end
      local text = table.concat(t)
      local path = lab.dir .. "/chain" .. n .. ".out"
      H.write_file(path, text)
      local bound, at = 16 * #text + (16 << 20), nil
      for i = 1, #t do
        if lines[i] then
          built = built + lines[i]
          if built > bound then at = i break end
        end
      end
      return path, #text, at, bound
    end

    it("fails past 16 times the input plus 16 MiB, at the line, in bounded memory", function()
      local path, size, at, bound = chain(3000)
      assert.is_true(size < 130000 and at ~= nil, size)
      local out = child(("print(select(2, callgrind.load(%q)))"):format(path), 300000)
      local want = "%s:%d: names made up of compressed ids (fn=(1)'(2)) exceed %d bytes"
        .. " (16 times the input, plus 16 MiB)\tmemory\n"
      assert.are.equal(want:format(path, at, bound), out)
    end)

    it("fails so even when loading leniently", function()
      local path, _, at = chain(3000)
      local out = child(("print(select(2, callgrind.load(%q, { lenient = true })))"):format(path), 300000)
      assert.are.equal(("%s:%d: "):format(path, at), out:sub(1, #path + #tostring(at) + 3))
    end)

    it("builds the names of a file within the bound", function()
      local path, _, at = chain(8)
      assert.is_nil(at)
      local out = child(([[
        local p = assert(callgrind.load(%q))
        local f = p:func("a" .. ("'a"):rep((1 << 18) - 1) .. "'x8")
        print(p:total("Ir"), f and #f.name)
      ]]):format(path), 400000)
      assert.are.equal(("8\t%d\n"):format((1 << 19) - 1 + 3), out)
    end)
  end)

  describe("a FIFO or character device", function()
    local fifo

    setup(function()
      fifo = lab.dir .. "/fifo"
      H.run("mkfifo " .. H.shq(fifo), "mkfifo")
    end)

    it("with no writer: progress is called while the load waits, and cancels it", function()
      local out = child(([[
        local calls = 0
        print(callgrind.load(%q, { progress = function(done, total)
          calls = calls + 1
          assert(done == 0 and total == 0)
          return calls < 4
        end }))
        print(calls)
      ]]):format(fifo))
      assert.are.equal(("nil\t%s: load cancelled\tcancelled\n4\n"):format(fifo), out)
    end)

    it("with a writer coming later: reads what it writes, with or without progress", function()
      local out = child(([[
        for _, opts in ipairs { { progress = function() end }, {} } do
          os.execute(%q)
          local p, err = callgrind.load(%q, opts)
          print(p and p:total("Ir") or err)
        end
      ]]):format(("(sleep 1; cat spec/fixtures/parts.callgrind > %s) &"):format(H.shq(fifo)), fifo))
      assert.are.equal("18\n18\n", out)
    end)

    it("/dev/zero: progress every 16 MiB with the bytes read, and cancel", function()
      local out = child([[
        local seen = {}
        print(callgrind.load("/dev/zero", { progress = function(done, total)
          seen[#seen + 1] = done .. "/" .. total
          return #seen < 3
        end }))
        print(table.concat(seen, " "))
      ]], 400000)
      assert.are.equal("nil\t/dev/zero: load cancelled\tcancelled\n16777216/0 33554432/0 50331648/0\n", out)
    end)

    it("a /proc file (size 0 by stat(2)) is read whole, as a stream", function()
      local callgrind = require "callgrind"
      assert.are.equal("/proc/self/maps:1: cost line before any events: line",
        select(2, callgrind.load("/proc/self/maps")))
      assert.are.equal("/proc/self/maps: size exceeds 10 bytes (opts.max_bytes)",
        select(2, callgrind.load("/proc/self/maps", { max_bytes = 10 })))
    end)

    it("/dev/zero: fails at opts.max_bytes, and without it in bounded memory", function()
      local out = child([[
        print(callgrind.load("/dev/zero", { max_bytes = 1 << 20 }))
      ]], 300000)
      assert.are.equal("nil\t/dev/zero: size exceeds 1048576 bytes (opts.max_bytes)\tmemory\n", out)
      if ASAN then return end
      -- the default, 16 GiB, is past the address space allowed: out of memory
      out = child([[
        print(pcall(callgrind.load, "/dev/zero"))
      ]], 1000000)
      assert.are.equal("false\tnot enough memory\n", out)
    end)
  end)
end)
