-- Atomic writes: prof:write(path) and callgrind.write_file_atomic go to a
-- temporary file in the target's directory, synced and renamed over the
-- target. A full disk (a file-size limit in a child shell), a killed
-- writer or any other failure leaves the old file whole and no temporary
-- file behind.

local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq

local lab = H.lab("spec/writer_atomic_spec.lua")
setup(function() lab:open() end)
teardown(function() lab:close() end)

-- The names in a directory (hidden ones too), sorted.
local entries = require("spec.support.files").entries

local n = 0
local function fresh_dir()
  n = n + 1
  local dir = lab.dir .. "/d" .. n
  lab:run("mkdir " .. shq(dir))
  return dir
end

local OLD = "the old file, whole\n"
local BIG = "spec/corpus/gprof2dot/googlecode-issue34.callgrind"   -- 1.3 MB

-- A chunk that loads BIG and writes it to arg target, printing what
-- prof:write returned (the child runs under a file-size limit).
local function write_chunk(target)
  return ([[
    local callgrind = require "callgrind"
    local prof = assert(callgrind.load(%q))
    print(prof:write(%q))
  ]]):format(BIG, target)
end

describe("prof:write to a path", function()
  it("replaces the file whole (same bytes as written to an open file)", function()
    local dir = fresh_dir()
    local target = dir .. "/p.out"
    H.write_file(target, OLD)
    local prof = assert(callgrind.load("spec/fixtures/parts.callgrind"))
    assert.is_true(prof:write(target))
    local f = assert(io.open(dir .. "/direct.out", "wb"))
    assert.is_true(prof:write(f))
    f:close()
    assert.are.equal(H.read_file(dir .. "/direct.out"), H.read_file(target))
    assert.are.same({ "direct.out", "p.out" }, entries(dir))
  end)

  it("keeps the mode of the file it replaces", function()
    local dir = fresh_dir()
    local target = dir .. "/p.out"
    H.write_file(target, OLD)
    lab:run("chmod 640 " .. shq(target))
    assert.is_true(assert(callgrind.load("spec/fixtures/parts.callgrind")):write(target))
    assert.are.equal("640", (lab:run("stat -c %a " .. shq(target)):gsub("%s+$", "")))
  end)

  it("leaves the old file whole and no temporary under a file-size limit (EFBIG)", function()
    local dir = fresh_dir()
    local target = dir .. "/p.out"
    H.write_file(target, OLD)
    -- 64 blocks (32 or 64 KB): far less than the 1.3 MB the profile takes
    local out = H.fresh_lua(write_chunk(target), "ulimit -f 64;")
    assert.are.equal("nil\t" .. target .. ": File too large\tio\n", out)
    assert.are.equal(OLD, H.read_file(target))
    assert.are.same({ "p.out" }, entries(dir))
  end)

  it("leaves no partial file where there was none", function()
    local dir = fresh_dir()
    local target = dir .. "/new.out"
    local out = H.fresh_lua(write_chunk(target), "ulimit -f 64;")
    assert.are.equal("nil\t" .. target .. ": File too large\tio\n", out)
    assert.are.same({}, entries(dir))
  end)

  it("leaves the old file whole and no temporary when the writer is killed mid-write", function()
    local dir = fresh_dir()
    local target = dir .. "/p.out"
    H.write_file(target, OLD)
    -- a profile of 2 million cost lines (about 30 MB written, a few tenths
    -- of a second); the child says when it starts writing and when it is
    -- done, and is killed 50 ms after it starts
    local chunk = ([[
      local callgrind = require "callgrind"
      local t = { "events: A B C", "fl=f.c" }
      for i = 1, 200 do
        t[#t + 1] = "fn=f" .. i
        for j = 1, 10000 do t[#t + 1] = j .. " " .. i .. " " .. j .. " 7" end
      end
      local prof = assert(callgrind.parse(table.concat(t, "\n") .. "\n", "big"))
      t = nil
      io.stdout:write("writing\n") io.stdout:flush()
      assert(prof:write(%q))
      io.stdout:write("done\n") io.stdout:flush()
    ]]):format(target)
    local script = ("package.path = %q package.cpath = %q\n"):format(package.path, package.cpath) .. chunk
    local log = dir .. "/../child-" .. n .. ".log"
    local sh = ([[
      exec 2>/dev/null
      lua5.4 -e %s > %s 2>&1 &
      pid=$!
      i=0
      while ! grep -q writing %s 2>/dev/null; do
        i=$((i + 1)); [ $i -gt 3000 ] && break; sleep 0.01
      done
      sleep 0.05
      kill -9 $pid
      wait $pid
      echo "status $?"
    ]]):format(shq(script), shq(log), shq(log))
    local p = assert(io.popen(sh))
    local status = p:read("a")
    p:close()
    assert.are.equal("status 137\n", status)
    assert.are.equal("writing\n", H.read_file(log), "the child was not killed mid-write")
    assert.are.equal(OLD, H.read_file(target))
    assert.are.same({ "p.out" }, entries(dir))
  end)
end)

describe("callgrind.write_file_atomic", function()
  it("writes text to a new file and replaces an old one", function()
    local dir = fresh_dir()
    local target = dir .. "/t.txt"
    assert.is_true(callgrind.write_file_atomic(target, "one\n"))
    assert.are.equal("one\n", H.read_file(target))
    assert.is_true(callgrind.write_file_atomic(target, ""))
    assert.are.equal("", H.read_file(target))
    assert.are.same({ "t.txt" }, entries(dir))
  end)

  it("returns nil, the reason and the kind 'io' when it cannot", function()
    assert.are.same({ nil, lab.dir .. "/none/t.txt: No such file or directory", "io" },
      { callgrind.write_file_atomic(lab.dir .. "/none/t.txt", "x") })
    assert.are.same({ nil, lab.dir .. "/: Is a directory", "io" },
      { callgrind.write_file_atomic(lab.dir .. "/", "x") })
  end)

  it("leaves the old file whole and no temporary under a file-size limit", function()
    local dir = fresh_dir()
    local target = dir .. "/t.txt"
    H.write_file(target, OLD)
    local out = H.fresh_lua(([[
      local callgrind = require "callgrind"
      print(callgrind.write_file_atomic(%q, string.rep("x", 1 << 20)))
    ]]):format(target), "ulimit -f 64;")
    assert.are.equal("nil\t" .. target .. ": File too large\tio\n", out)
    assert.are.equal(OLD, H.read_file(target))
    assert.are.same({ "t.txt" }, entries(dir))
  end)

  it("raises on misuse, naming the argument", function()
    assert.has_error(function() callgrind.write_file_atomic(1, "x") end,
      "bad argument #1 to 'write_file_atomic' (string expected, got 1)")
    assert.has_error(function() callgrind.write_file_atomic("x") end,
      "bad argument #2 to 'write_file_atomic' (string expected, got no value)")
  end)
end)

describe("atomic writes where the file system has no O_TMPFILE", function()
  -- spec/fixtures/shim/open_shim.c, preloaded: open(O_TMPFILE) fails with
  -- EOPNOTSUPP (and says so in a log), as on file systems without unnamed
  -- files; the writer falls back to .NAME.tmp.XXXXXXXXXXXXXXXX beside the
  -- target (16 random hex digits, created with O_EXCL)
  local shim, log
  setup(function()
    lab:need("gcc")
    shim = lab.dir .. "/open_shim.so"
    log = lab.dir .. "/open.log"
    lab:run(("gcc -shared -fPIC -o %s %s -ldl"):format(shq(shim),
      shq(lab:progs_dir() .. "/../shim/open_shim.c")), "gcc (building the open shim)")
  end)

  local function without_tmpfile(chunk, pre)
    H.write_file(log, "")
    return H.fresh_lua(chunk, (pre or "") .. " CGTEST_OPEN_LOG=" .. shq(log) .. " " .. H.preload(shim))
  end

  it("writes through a named temporary, keeps the mode, and leaves no temporary", function()
    local dir = fresh_dir()
    local target = dir .. "/t.txt"
    H.write_file(target, OLD)
    lab:run("chmod 640 " .. shq(target))
    local out = without_tmpfile(([[
      local callgrind = require "callgrind"
      print(callgrind.write_file_atomic(%q, "new\n"))
      print(callgrind.write_file_atomic(%q, "new too\n"))
    ]]):format(target, dir .. "/u.txt"))
    assert.are.equal("true\ntrue\n", out)
    -- both writes asked for an unnamed file first
    assert.are.equal(("O_TMPFILE refused in %s/\n"):rep(2):format(dir, dir), H.read_file(log))
    assert.are.equal("new\n", H.read_file(target))
    assert.are.equal("new too\n", H.read_file(dir .. "/u.txt"))
    assert.are.equal("640", (lab:run("stat -c %a " .. shq(target)):gsub("%s+$", "")))
    assert.are.same({ "t.txt", "u.txt" }, entries(dir))
  end)

  it("leaves the old file whole and removes its temporary under a file-size limit", function()
    local dir = fresh_dir()
    local target = dir .. "/t.txt"
    H.write_file(target, OLD)
    local out = without_tmpfile(([[
      local callgrind = require "callgrind"
      print(callgrind.write_file_atomic(%q, string.rep("x", 1 << 20)))
    ]]):format(target), "ulimit -f 64;")
    assert.are.equal("nil\t" .. target .. ": File too large\tio\n", out)
    assert.are.equal("O_TMPFILE refused in " .. dir .. "/\n", H.read_file(log))
    assert.are.equal(OLD, H.read_file(target))
    assert.are.same({ "t.txt" }, entries(dir))
  end)
end)


describe("a write to what is not a regular file", function()
  local prof = assert(callgrind.parse("events: Ir\nfl=a.c\nfn=main\n1 5\n", "small"))

  it("writes a FIFO in place, for the reader at its other end, and leaves it a FIFO", function()
    local dir = fresh_dir()
    local fifo, out = dir .. "/fifo", dir .. "/read"
    assert.is_true(os.execute("mkfifo " .. shq(fifo)))
    -- the reader, in the background: cat until the writer closes, then
    -- a mark that it has (waited for, up to 60 s: the machine may be busy)
    local done = lab.dir .. "/fifo-read.done"
    assert.is_true(os.execute("((cat " .. shq(fifo) .. " > " .. shq(out) .. "; touch " .. shq(done) .. ") &)"))
    assert.is_true(prof:write(fifo))
    local deadline = os.time() + 60
    while not os.execute("test -e " .. shq(done)) and os.time() < deadline do os.execute("sleep 0.05") end
    assert.is_true(os.execute("test -e " .. shq(done)), "cat did not end within 60 s of the write's end")
    assert.is_true(os.execute("test -p " .. shq(fifo)))
    local text = H.read_file(out)
    assert.are.equal(5, assert(callgrind.parse(text, "read")):total("Ir"))
    assert.are.same({ "fifo", "read" }, entries(dir))
  end)

  it("writes /dev/stdout in place: through a pipe, every byte and nothing replaced", function()
    local text = H.fresh_lua([[
      local callgrind = require "callgrind"
      local prof = assert(callgrind.parse("events: Ir\nfl=a.c\nfn=main\n1 5\n", "small"))
      io.stdout:setvbuf("no")
      assert(prof:write("/dev/stdout"))
      assert(callgrind.write_file_atomic("/dev/stdout", "and more\n"))]])
    assert.are.equal(5, assert(callgrind.parse(text:gsub("and more\n$", ""), "piped")):total("Ir"))
    assert.is_truthy(text:find("\nand more\n$"))
  end)

  it("replaces the file a link names, and keeps the link", function()
    local dir = fresh_dir()
    H.write_file(dir .. "/target", "old\n")
    assert.is_true(os.execute("ln -s target " .. shq(dir .. "/link")))
    assert.is_true(callgrind.write_file_atomic(dir .. "/link", "new\n"))
    assert.is_true(os.execute("test -L " .. shq(dir .. "/link")))
    assert.are.equal("new\n", H.read_file(dir .. "/target"))
    assert.are.same({ "link", "target" }, entries(dir))
  end)

  it("refuses a directory, naming it", function()
    local dir = fresh_dir()
    assert.are.same({ nil, dir .. ": Is a directory", "io" }, { prof:write(dir) })
    assert.are.same({ nil, dir .. ": Is a directory", "io" }, { callgrind.write_file_atomic(dir, "x") })
    assert.are.same({}, entries(dir))
  end)
end)
