-- A file read while it loads (csrc/reader/cg_source.c, csrc/reader/cg_prescan.c): with two
-- threads, a big plain file is read in part when the load starts (its first
-- 64 KiB), and the load's second thread reads the rest, in pieces of eight
-- chunks, while the loader starts on the first chunks. The model is that of
-- the file read whole; a read that fails, or finds the file shorter or longer
-- than when it was opened, fails the load with "path: reason".
-- (`chunk = n` makes a load of any size read so; spec/prescan_spec.lua's file
-- of 4 MB does by default.)
local callgrind = require "callgrind"
local internal = require("callgrind.core").internal
local D = require "spec.support.dump"
local H = require "spec.support.helpers"

local function read_ahead(prof) return (select(4, internal.load_stats(prof))) end

describe("a file read while it loads", function()
  local lab = H.lab("spec/readahead_spec.lua")
  local path, other, size, shim

  -- n functions, each with 3 cost lines and a call: 100 bytes a function
  local function make(file, n, tag)
    local t = { "events: Ir Dr\n" }
    for i = 1, n do
      t[#t + 1] = ("fn=%s%d\n%d 1 2\n+1 %d 1\ncfn=%s%d\ncalls=2 7\n+1 %d 3\n+2 1 1\n"):format(
        tag, i, i, i % 9, tag, i % n + 1, i % 5 + 1)
    end
    H.write_file(file, table.concat(t))
    return #table.concat(t)
  end

  setup(function()
    lab:open()
    path, other = lab.dir .. "/a.out", lab.dir .. "/b.out"
    size = make(path, 5000, "f")
    make(other, 3000, "g")
    shim = lab.dir .. "/read_shim.so"
    lab:need("gcc")
    lab:run(("gcc -shared -fPIC -o %s %s -ldl"):format(H.shq(shim),
      H.shq(lab:progs_dir() .. "/../shim/read_shim.c")), "gcc (building the read shim)")
  end)

  teardown(function() lab:close() end)

  it("makes the model of the file read whole, in chunks of 1, 4 and 16 KiB", function()
    assert.is_true(size > 4 * 65536, size)
    local one = assert(callgrind.load(path, { threads = 1 }))
    assert.are.equal(0, read_ahead(one))
    local want = D.dump(one)
    for _, chunk in ipairs({ 1024, 4096, 16384 }) do
      local prof = assert(callgrind.load(path, { chunk = chunk }))
      assert.are.equal(1, read_ahead(prof), "chunk " .. chunk)
      assert.are.equal(want, D.dump(prof), "chunk " .. chunk)
    end
    -- f7: 1 + 7 % 9 + 1 Ir of its own lines; its call: 7 % 5 + 1 Ir
    local f7 = callgrind.load(path, { chunk = 1024 }):func("f7")
    assert.are.same({ 9, 4 }, { f7:self("Ir"), f7:self("Dr") })
    assert.are.equal(3, f7:calls()():cost("Ir"))
  end)

  it("reads each of several files so, each in its turn", function()
    local want = D.dump(assert(callgrind.load({ path, other }, { threads = 1 })))
    local prof = assert(callgrind.load({ path, other }, { chunk = 4096 }))
    assert.are.equal(2, read_ahead(prof))
    assert.are.equal(want, D.dump(prof))
  end)

  it("reads a compressed file whole (its text is the decompressed one)", function()
    local gz = lab.dir .. "/a.out.gz"
    lab:run(("gzip -c %s > %s"):format(H.shq(path), H.shq(gz)), "gzip")
    local prof = assert(callgrind.load(gz, { chunk = 4096 }))
    assert.are.equal(0, read_ahead(prof))
    -- (the dump names the file)
    assert.are.equal(D.dump(assert(callgrind.load(path, { threads = 1 }))), (D.dump(prof):gsub("a%.out%.gz", "a.out")))
  end)

  -- in a process whose read(2) fails or ends at an offset of the file
  -- (spec/fixtures/shim/read_shim.c, preloaded); file (default path) of
  -- min bytes (default size)
  local function load_with(mode, at, opts, file, min)
    return H.fresh_lua(("local callgrind = require 'callgrind' "
      .. "local p, e = callgrind.load(%q, %s) print(p and 'loaded' or e)")
        :format(file or path, opts or "{ chunk = 4096 }"),
      ("CGTEST_READ=%s CGTEST_READ_AT=%d CGTEST_READ_MIN=%d %s"):format(mode, at, min or size, H.preload(shim)))
  end

  it("fails with the read's error, in the first 64 KiB or after, with one thread or two", function()
    assert.are.equal("loaded\n", load_with("eio", size + 1))
    for _, at in ipairs({ 1000, 200000 }) do
      assert.are.equal(path .. ": Input/output error\n", load_with("eio", at), "at " .. at)
      assert.are.equal(path .. ": Input/output error\n", load_with("eio", at, "{ threads = 1 }"), "at " .. at)
    end
  end)

  -- one thread, and a file under 4 MB by default, read the file whole
  -- before the load starts: the same check there
  it("fails when the file ends before the size it had when opened, or goes on past it, read by any path", function()
    local msg = ("%s: the file changed size while it was read (%d bytes when opened)\n"):format(path, size)
    for _, opts in ipairs { "{ chunk = 4096 }", "{ threads = 1 }", "{}" } do
      for _, at in ipairs { 1000, 200000 } do
        assert.are.equal(msg, load_with("eof", at, opts), opts .. " at " .. at)
      end
      assert.are.equal(msg, load_with("more", 0, opts), opts)
    end
  end)

  it("fails so for a compressed file cut short or written on while it is read", function()
    local gz = lab.dir .. "/cut.out.gz"
    lab:run(("gzip -c %s > %s"):format(H.shq(path), H.shq(gz)), "gzip")
    local n = #H.read_file(gz)
    local msg = ("%s: the file changed size while it was read (%d bytes when opened)\n"):format(gz, n)
    for _, opts in ipairs { "{ threads = 1 }", "{}" } do
      assert.are.equal(msg, load_with("eof", n // 2, opts, gz, n), opts)
      assert.are.equal(msg, load_with("more", 0, opts, gz, n), opts)
    end
  end)
end)
