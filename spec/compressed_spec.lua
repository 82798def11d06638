-- Compressed input: gzip, zstd and xz copies (made here with the gzip,
-- zstd and xz tools) of real profiles load to the same model as the plain
-- file; broken streams give clean errors.
local callgrind = require "callgrind"
local D = require "spec.support.dump"
local H = require "spec.support.helpers"

local TOOLS = { gz = "gzip -c", zst = "zstd -q -c", xz = "xz -c" }
local KIND = { gz = "gzip", zst = "zstd", xz = "xz" }

-- the dump with its path written as <path> (the paths differ)
local function model(path)
  return (D.dump_file(path):gsub(path:gsub("%W", "%%%0"), "<path>"))
end

describe("a compressed profile", function()
  local dir

  setup(function()
    dir = os.tmpname() .. ".d"
    assert(os.execute("mkdir " .. H.shq(dir)))
  end)

  teardown(function() os.execute("rm -rf " .. H.shq(dir)) end)

  local function compress(src, ext, name)
    local out = dir .. "/" .. name .. "." .. ext
    H.run(("%s %s > %s"):format(TOOLS[ext], H.shq(src), H.shq(out)), TOOLS[ext])
    return out
  end

  for _, rel in ipairs { "valgrind/concord.cgout", "gprof2dot/xapian.callgrind",
                         "pprof/pprof.cpu.callgrind" } do
    for _, ext in ipairs { "gz", "zst", "xz" } do
      it("loads the " .. KIND[ext] .. " copy of " .. rel .. " to the same model as the plain file", function()
        local plain = "spec/corpus/" .. rel
        local packed = compress(plain, ext, (rel:gsub("/", "_")))
        assert.are.equal(model(plain), model(packed))
        assert.are.equal(H.read_file(packed):sub(1, 2) == "\31\139", ext == "gz")
      end)
    end
  end

  it("loads a gzip file of several members (gzip a; gzip b; cat) as their text joined", function()
    local a = compress("spec/fixtures/parts.callgrind", "gz", "a")
    local both = dir .. "/both.gz"
    H.run(("cat %s %s > %s"):format(H.shq(a), H.shq(a), H.shq(both)))
    local text = H.read_file("spec/fixtures/parts.callgrind")
    local want = assert(callgrind.parse(text .. text, "x"))
    local got = assert(callgrind.load(both))
    assert.are.same(want:totals(), got:totals())
  end)

  for _, ext in ipairs { "gz", "zst", "xz" } do
    it("refuses a truncated " .. KIND[ext] .. " stream", function()
      local full = H.read_file(compress("spec/corpus/valgrind/concord.cgout", ext, "cut"))
      local cut = dir .. "/cut2." .. ext
      local f = assert(io.open(cut, "wb"))
      f:write(full:sub(1, #full // 2))
      f:close()
      assert.are.same({ nil, cut .. ": " .. KIND[ext] .. ": unexpected end of stream (truncated?)", "truncated" },
        { callgrind.load(cut) })
      assert.are.same({ nil, cut .. ": " .. KIND[ext] .. ": unexpected end of stream (truncated?)", "truncated" },
        { callgrind.load(cut, { lenient = true }) })
    end)

    it("refuses a corrupted " .. KIND[ext] .. " stream, saying why", function()
      local full = H.read_file(compress("spec/corpus/valgrind/concord.cgout", ext, "bad"))
      local bad = dir .. "/bad2." .. ext
      local mid = #full // 2
      local f = assert(io.open(bad, "wb"))
      f:write(full:sub(1, mid - 1), string.char(full:byte(mid) ~ 0xff), full:sub(mid + 1))
      f:close()
      local prof, err = callgrind.load(bad)
      assert.is_nil(prof)
      -- the reason is the decompressing library's own words
      local prefix = bad .. ": " .. KIND[ext] .. ": "
      assert.are.equal(prefix, err:sub(1, #prefix))
      assert.is_true(#err > #prefix + 5, err)
    end)
  end

  it("refuses the gzip of an empty file: no events: line", function()
    local empty = dir .. "/empty"
    io.open(empty, "wb"):close()
    local gz = compress(empty, "gz", "empty")
    assert.are.same({ nil, gz .. ": no events: line: not a callgrind profile", "format" },
      { callgrind.load(gz) })
  end)

  it("refuses the gzip of garbage at its first line, and trailing garbage after a stream", function()
    local junk = dir .. "/junk"
    local f = assert(io.open(junk, "wb"))
    f:write("\1\2\3 not a profile\n")
    f:close()
    local gz = compress(junk, "gz", "junk")
    assert.are.same({ nil, gz .. ":1: expected a cost, name or header line, found '\\x01\\x02\\x03 not a profile'",
      "format" },
      { callgrind.load(gz) })
    local tail = dir .. "/tail.gz"
    f = assert(io.open(tail, "wb"))
    f:write(H.read_file(gz), "more")
    f:close()
    assert.are.same({ nil, tail .. ": gzip: trailing garbage after the stream", "format" },
      { callgrind.load(tail) })
  end)

  it("stops at opts.max_bytes of text, whatever the format", function()
    for _, ext in ipairs { "gz", "zst", "xz" } do
      local packed = compress("spec/fixtures/parts.callgrind", ext, "limit")   -- 331 bytes of text
      assert.are.same({ nil, packed .. ": decompressed size exceeds 330 bytes (opts.max_bytes)", "memory" },
        { callgrind.load(packed, { max_bytes = 330 }) })
      assert.are.equal(18, callgrind.load(packed, { max_bytes = 331 }):total("Ir"))
    end
  end)

  it("is only the magic bytes: a file that starts with them but is no stream is refused", function()
    local fake = dir .. "/fake"
    local f = assert(io.open(fake, "wb"))
    f:write("\31\139 events: Ir\n")
    f:close()
    local prof, err = callgrind.load(fake)
    assert.is_nil(prof)
    assert.are.equal(fake .. ": gzip: ", err:sub(1, #fake + 8))
  end)
end)

-- The two cases that build the core again, apart (about 15 s of make
-- test's time): in make check-long (CALLGRIND_BUILDS=full).
local BUILDS = os.getenv("CALLGRIND_BUILDS") == "full"

if BUILDS then describe("a build without a compression library (make NO_ZSTD=1 NO_LZMA=1)", function()
  local lab = H.lab("spec/compressed_spec.lua")
  local dir, plain, copies, cpath, why_not

  setup(function()
    lab:open()
    dir = lab.dir
    plain = "spec/fixtures/parts.callgrind"
    copies = {}
    for _, ext in ipairs { "gz", "zst", "xz" } do
      copies[ext] = dir .. "/parts." .. ext
      H.run(("%s %s > %s"):format(TOOLS[ext], H.shq(plain), H.shq(copies[ext])), TOOLS[ext])
    end
    -- the module built apart, unoptimized (faster to build), into dir
    local ok, err = pcall(H.run, ("make --no-print-directory BUILD=%s CFLAGS=-O0 NO_ZSTD=1 NO_LZMA=1 all"):format(
      H.shq(dir .. "/build")), "make NO_ZSTD=1 NO_LZMA=1", dir)
    if ok then cpath = dir .. "/build/?.so" else why_not = err end
  end)

  teardown(function() lab:close() end)

  it("refuses zstd and xz files, naming the library, and reads gzip and plain ones", function()
    if not cpath then
      pending("the build could not run: " .. tostring(why_not))
      return
    end
    local out = H.fresh_lua(([[
      package.cpath = %q
      local callgrind = require 'callgrind'
      for _, path in ipairs { %q, %q, %q, %q } do
        local p, e = callgrind.load(path)
        print(p and p:total("Ir") or e)
      end
      -- the libraries left out are not in the process
      for l in io.lines("/proc/self/maps") do
        if l:find("libzstd.so", 1, true) or l:find("liblzma.so", 1, true) then print(l) end
      end
    ]]):format(cpath, plain, copies.gz, copies.zst, copies.xz))
    assert.are.equal(table.concat({
      "18", "18",
      copies.zst .. ": zstd input needs a build with libzstd",
      copies.xz .. ": xz input needs a build with liblzma", "" }, "\n"), out)
  end)
end) end

describe("the compression libraries, opened at their first use", function()
  local lab = H.lab("spec/compressed_spec.lua")
  local dir, plain, copies

  setup(function()
    lab:open()
    dir = lab.dir
    plain = "spec/fixtures/parts.callgrind"
    copies = {}
    for _, ext in ipairs { "gz", "zst", "xz" } do
      copies[ext] = dir .. "/parts." .. ext
      H.run(("%s %s > %s"):format(TOOLS[ext], H.shq(plain), H.shq(copies[ext])), TOOLS[ext])
    end
  end)

  teardown(function() lab:close() end)

  it("are not in a process that loaded the core, and each comes with the first file of its format", function()
    -- loading the three cost -lcallgrind.start most of what loading the
    -- core did (spec/profiler_start_spec.lua counts the instructions)
    local out = H.fresh_lua(([[
      local function mapped()
        local seen = {}
        for l in io.lines("/proc/self/maps") do
          for _, lib in ipairs { "libz.so", "libzstd.so", "liblzma.so" } do
            if l:find("/" .. lib, 1, true) then seen[lib] = true end
          end
        end
        local t = {}
        for _, lib in ipairs { "libz.so", "libzstd.so", "liblzma.so" } do
          if seen[lib] then t[#t + 1] = lib end
        end
        return "[" .. table.concat(t, " ") .. "]"
      end
      require "callgrind.core"
      local callgrind = require 'callgrind'
      print(mapped())
      for _, path in ipairs { %q, %q, %q } do
        print(assert(callgrind.load(path)):total("Ir"), mapped())
      end
    ]]):format(copies.gz, copies.zst, copies.xz))
    assert.are.equal("[]\n18\t[libz.so]\n18\t[libz.so libzstd.so]\n18\t[libz.so libzstd.so liblzma.so]\n", out)
  end)

  if BUILDS then it("says which library could not be opened (a build that names one that is not there)", function()
    -- the module built apart, unoptimized (faster to build), into dir
    H.run(("make --no-print-directory BUILD=%s 'CFLAGS=-O0 -DCG_ZSTD_SO=\\\"libcgnone.so.9\\\"' all")
      :format(H.shq(dir .. "/build")), "make CG_ZSTD_SO", dir)
    local out = H.fresh_lua(([[
      package.cpath = %q
      local callgrind = require 'callgrind'
      for _, path in ipairs { %q, %q } do
        local p, e = callgrind.load(path)
        print(p and p:total("Ir") or e)
      end
    ]]):format(dir .. "/build/?.so", copies.zst, copies.gz))
    assert.are.equal(copies.zst .. ": zstd: libzstd (libcgnone.so.9) could not be loaded: libcgnone.so.9: "
      .. "cannot open shared object file: No such file or directory\n18\n", out)
  end) end
end)
