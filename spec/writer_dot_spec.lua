-- One writer for every output (issue 42, point 1): the SVG and PNG that
-- Graphviz draws for prof:write_dot go through the core's atomic writer
-- like every other file. Graphviz runs without a shell, reading the DOT
-- text from an unnamed file and writing into the writer's temporary, so:
-- a device stays a device, a link stays a link (a dangling one makes its
-- target), nothing planted under a name a temporary could take is
-- followed, a FIFO no process reads fails after CG_FIFO_WAIT_MS (3 s)
-- instead of hanging, and a writer killed at any point (Graphviz running
-- or not) leaves no temporary and no Graphviz behind.
--
-- Before: write_dot("null.svg", {format = "svg"}) on a character device
-- left a regular file of 4,601 bytes; a link became a regular file (its
-- target kept the old bytes); two links planted as PATH.tmp.N.T and
-- PATH.tmp.N.T.dot made a run as root write over two victim files; a
-- FIFO without a reader blocked for ever; a killed write_dot left
-- PATH.tmp.N.T.dot behind.

local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq

local lab = H.lab("spec/writer_dot_spec.lua")
setup(function()
  lab:open()
  lab:need("dot")
end)
teardown(function() lab:close() end)

-- The names in a directory (hidden ones too), sorted.
local entries = require("spec.support.files").entries

-- What a path is: "file", "link", "fifo", "char", "dir" or "none".
local function kind_of(path)
  local p = assert(io.popen("stat -c %F " .. shq(path) .. " 2>/dev/null"))
  local s = p:read("a")
  p:close()
  if s == "" then return "none" end
  if s:find("symbolic link") then return "link" end
  if s:find("fifo") then return "fifo" end
  if s:find("character") then return "char" end
  if s:find("directory") then return "dir" end
  return "file"
end

local n = 0
local function fresh_dir()
  n = n + 1
  local dir = lab.dir .. "/d" .. n
  lab:run("mkdir " .. shq(dir))
  return dir
end

local SMALL = "events: Ir\nfl=a.c\nfn=main\n1 5\ncfn=f\ncalls=2 1\n1 3\nfn=f\n1 3\n"
local prof = assert(callgrind.parse(SMALL, "small"))
local VICTIM = "the victim's bytes\n"

describe("prof:write_dot to what is not a regular file", function()
  it("writes a character device in place: it stays a device", function()
    local dir = fresh_dir()
    local is_root = lab:run("id -u"):match("^0") ~= nil
    local null = dir .. "/null.svg"
    if is_root then
      lab:run("mknod " .. shq(null) .. " c 1 3")
    else
      lab:run("ln -s /dev/null " .. shq(null))
    end
    local was = kind_of(null)
    for _, format in ipairs({ "svg", "png", "dot" }) do
      assert.is_true(prof:write_dot(null, "Ir", { format = format }))
      assert.are.equal(was, kind_of(null))
    end
    assert.are.equal("char", kind_of("/dev/null"))
    assert.are.same({ "null.svg" }, entries(dir))
  end)

  it("replaces the file a link names, and keeps the link", function()
    local dir = fresh_dir()
    H.write_file(dir .. "/target.svg", "old\n")
    lab:run("ln -s target.svg " .. shq(dir .. "/g.svg"))
    assert.is_true(prof:write_dot(dir .. "/g.svg", "Ir", { format = "svg" }))
    assert.are.equal("link", kind_of(dir .. "/g.svg"))
    assert.truthy(H.read_file(dir .. "/target.svg"):find("<svg", 1, true))
    assert.are.same({ "g.svg", "target.svg" }, entries(dir))
  end)

  it("makes the file a dangling link names, and keeps the link (every writer)", function()
    local dir = fresh_dir()
    local writers = {
      svg = function(p) return prof:write_dot(p, "Ir", { format = "svg" }) end,
      dot = function(p) return prof:write_dot(p, "Ir") end,
      flame = function(p) return prof:write_flamegraph(p, "Ir") end,
      folded = function(p) return prof:write_folded(p, "Ir") end,
      pprof = function(p) return prof:write_pprof(p) end,
      html = function(p) return prof:write_html(p) end,
      callgrind = function(p) return prof:write(p) end,
      text = function(p) return callgrind.write_file_atomic(p, "text\n") end,
    }
    local want = {}
    for name, write in pairs(writers) do
      lab:run(("ln -s sub/%s.target %s"):format(name, shq(dir .. "/" .. name)))
      lab:run("mkdir -p " .. shq(dir .. "/sub"))
      assert.is_true(write(dir .. "/" .. name))
      assert.are.equal("link", kind_of(dir .. "/" .. name))
      assert.are.equal("file", kind_of(dir .. "/sub/" .. name .. ".target"))
      want[#want + 1] = name
    end
    want[#want + 1] = "sub"
    table.sort(want)
    assert.are.same(want, entries(dir))
  end)

  it("fails on a FIFO no process reads, after 3 s, naming it; the FIFO stays", function()
    local dir = fresh_dir()
    local fifo = dir .. "/g.svg"
    lab:run("mkfifo " .. shq(fifo))
    local t0 = os.time()
    local ok, err, kind = prof:write_dot(fifo, "Ir", { format = "svg" })
    assert.is_nil(ok)
    assert.are.equal(fifo .. ": a FIFO that no process reads (waited 3 s for a reader)", err)
    assert.are.equal("io", kind)
    -- (3 s and Graphviz's run: a minute on a machine under load)
    assert.is_true(os.time() - t0 <= 60, "write_dot on a FIFO no process reads took " .. os.time() - t0 .. " s")
    assert.are.equal("fifo", kind_of(fifo))
    assert.are.same({ "g.svg" }, entries(dir))
  end)

  it("writes a FIFO whose reader comes late, every byte", function()
    local dir = fresh_dir()
    local fifo, out = dir .. "/g.svg", dir .. "/read"
    lab:run("mkfifo " .. shq(fifo))
    -- (then a mark that cat has ended, waited for up to 60 s)
    local done = lab.dir .. "/late-reader.done"
    assert.is_true(os.execute("(sleep 0.3; cat " .. shq(fifo) .. " > " .. shq(out) .. "; touch " .. shq(done)
      .. ") &"))
    assert.is_true(prof:write_dot(fifo, "Ir", { format = "svg" }))
    local deadline = os.time() + 60
    while not os.execute("test -e " .. shq(done)) and os.time() < deadline do os.execute("sleep 0.05") end
    assert.is_true(os.execute("test -e " .. shq(done)), "the FIFO's reader did not end within 60 s of the write")
    assert.truthy(H.read_file(out):find("</svg>", 1, true))
    assert.are.equal("fifo", kind_of(fifo))
  end)
end)

describe("names planted where a temporary could be", function()
  -- every name the old write_dot or the old fallback could have taken
  -- (PATH.tmp.N.T and PATH.tmp.N.T.dot for the next seconds, .NAME.tmp.PID.N)
  -- every name the old write_dot or the old fallback could have taken:
  -- PATH.tmp.N.T and PATH.tmp.N.T.dot (N its calls in the process, T
  -- the time) for the next seconds, .NAME.tmp.PID.N; a third of them
  -- FIFOs, the rest links to victim. The names (with PID for the pid)
  -- and the shell command that plants them, run by the writing process
  -- itself ($PPID: its pid).
  local function plant(dir, target, victim)
    local names, now = {}, os.time()
    for counter = 1, 6 do
      for t = now - 1, now + 4 do
        names[#names + 1] = ("%s.tmp.%d.%d"):format(target, counter, t)
        names[#names + 1] = ("%s.tmp.%d.%d.dot"):format(target, counter, t)
      end
    end
    for k = 0, 9 do names[#names + 1] = (".%s.tmp.PID.%d"):format(target, k) end
    local fifos, links = {}, {}
    for i, name in ipairs(names) do
      local list = i % 3 == 0 and fifos or links
      list[#list + 1] = '"' .. name:gsub("PID", "$PPID") .. '"'
    end
    return names, ("cd %s && mkfifo %s && for f in %s; do ln -s %s \"$f\" || exit 1; done"):format(shq(dir),
      table.concat(fifos, " "), table.concat(links, " "), shq(victim))
  end

  it("never follows a link or opens a FIFO planted under a name a temporary could take", function()
    local dir = fresh_dir()
    local victim = lab.dir .. "/victim" .. n
    H.write_file(victim, VICTIM)
    local names, cmd = plant(dir, "g.svg", victim)
    -- (timeout: the old writer opened a planted FIFO and waited for ever)
    local out = H.fresh_lua(([[
      local callgrind = require "callgrind"
      assert(os.execute(%q))
      local f = assert(io.open("/proc/self/stat"))
      print(f:read("a"):match("^(%%d+)"))
      f:close()
      local prof = assert(callgrind.parse(%q, "small"))
      print(prof:write_dot(%q, "Ir", { format = "svg" }))
      print(prof:write_dot(%q, "Ir", { format = "png" }))
      print(prof:write_dot(%q, "Ir"))
    ]]):format(cmd, SMALL, dir .. "/g.svg", dir .. "/g.svg", dir .. "/g.svg"), "timeout 60")
    local pid = out:match("^(%d+)\n")
    assert.are.equal(pid .. "\n" .. ("true\n"):rep(3), out)
    assert.are.equal(VICTIM, H.read_file(victim))
    assert.are.equal("file", kind_of(dir .. "/g.svg"))
    for i, name in ipairs(names) do
      names[i] = name:gsub("PID", pid)
      assert.are.equal(i % 3 == 0 and "fifo" or "link", kind_of(dir .. "/" .. names[i]))
    end
    names[#names + 1] = "g.svg"
    table.sort(names)
    assert.are.same(names, entries(dir))
  end)

  describe("where the system has no O_TMPFILE and the random source repeats itself", function()
    -- open_shim: no O_TMPFILE, so the temporary is named; random_shim:
    -- getrandom gives zeros, so the first name tried is
    -- .NAME.tmp.0000000000000000 and the second .NAME.tmp.9e3779b97f4a7c15
    local shims
    setup(function()
      lab:need("gcc")
      local src = lab:progs_dir() .. "/../shim/"
      local open_so, rand_so = lab.dir .. "/open_shim.so", lab.dir .. "/random_shim.so"
      lab:run(("gcc -shared -fPIC -o %s %s -ldl"):format(shq(open_so), shq(src .. "open_shim.c")), "gcc (open shim)")
      lab:run(("gcc -shared -fPIC -o %s %s"):format(shq(rand_so), shq(src .. "random_shim.c")), "gcc (random shim)")
      shims = H.preload(open_so .. ":" .. rand_so)
    end)

    it("skips the names taken, writes every output, and follows nothing", function()
      local dir = fresh_dir()
      local victim = lab.dir .. "/victim" .. n
      H.write_file(victim, VICTIM)
      local planted = {}
      for _, target in ipairs({ "g.svg", "g.png", "g.dot", "p.out", "t.txt" }) do
        local a, b = ("%s/.%s.tmp.0000000000000000"):format(dir, target),
          ("%s/.%s.tmp.9e3779b97f4a7c15"):format(dir, target)
        lab:run("ln -s " .. shq(victim) .. " " .. shq(a))
        lab:run("mkfifo " .. shq(b))
        planted[#planted + 1] = a
        planted[#planted + 1] = b
      end
      local out = H.fresh_lua(([[
        local callgrind = require "callgrind"
        local prof = assert(callgrind.parse(%q, "small"))
        print(prof:write_dot(%q, "Ir", { format = "svg" }))
        print(prof:write_dot(%q, "Ir", { format = "png" }))
        print(prof:write_dot(%q, "Ir"))
        print(prof:write(%q))
        print(callgrind.write_file_atomic(%q, "text\n"))
      ]]):format(SMALL, dir .. "/g.svg", dir .. "/g.png", dir .. "/g.dot", dir .. "/p.out", dir .. "/t.txt"),
        "CGTEST_OPEN_LOG=/dev/null " .. shims)
      assert.are.equal(("true\n"):rep(5), out)
      assert.are.equal(VICTIM, H.read_file(victim))
      for i, p in ipairs(planted) do assert.are.equal(i % 2 == 1 and "link" or "fifo", kind_of(p)) end
      assert.truthy(H.read_file(dir .. "/g.svg"):find("</svg>", 1, true))
      assert.are.equal("\137PNG", H.read_file(dir .. "/g.png"):sub(1, 4))
      assert.are.equal("text\n", H.read_file(dir .. "/t.txt"))
      assert.are.equal(15, #entries(dir))
    end)
  end)
end)

describe("a writer killed", function()
  -- a stand-in for Graphviz: one bash process (no child of its own) that
  -- says its pid, reads the DOT text, waits FAKEDOT_WAIT seconds and
  -- writes an SVG
  local fakedot
  setup(function()
    fakedot = lab.dir .. "/fakedot"
    H.write_file(fakedot, table.concat({
      "#!/bin/bash",
      'echo $$ > "$FAKEDOT_PID"',
      "while read -r _; do :; done",
      'read -t "$FAKEDOT_WAIT" <> "$FAKEDOT_FIFO"',
      "printf '<svg>fake</svg>\\n'", "" }, "\n"))
    lab:run("chmod +x " .. shq(fakedot) .. " && mkfifo " .. shq(lab.dir .. "/never"))
  end)

  -- Runs chunk in lua5.4, sends sig once the fake dot has started (or
  -- after delay seconds when no fake dot is used), and returns the exit
  -- status, the fake dot's pid and whether it still runs.
  -- The fake dot waits for a line on the FIFO `never` for up to 60 s: after
  -- SIGINT the shell writes it one (the writer waits for Graphviz, then
  -- stops); after SIGKILL or SIGTERM none (the writer's death takes it
  -- along), so that "dot alive" after up to 10 s is the writer's fault,
  -- not a slow machine's.
  local function run_and_kill(chunk, sig, wait_dot, delay)
    local script = ("package.path = %q package.cpath = %q\n"):format(package.path, package.cpath) .. chunk
    n = n + 1
    local pidfile = lab.dir .. "/fakedot" .. n .. ".pid"
    local sh = ([[
      exec 2>/dev/null
      FAKEDOT_PID=%s FAKEDOT_WAIT=%d FAKEDOT_FIFO=%s lua5.4 -e %s &
      pid=$!
      i=0
      if [ %s = yes ]; then
        while [ ! -s %s ]; do i=$((i + 1)); [ $i -gt 500 ] && break; sleep 0.01; done
        sleep 0.05
      else
        sleep %s
      fi
      kill -%s $pid
      # SIGINT: the fake dot is let go (it reads a line from the FIFO), the
      # writer then sees the interrupt once its wait for it is over
      if [ %s = INT ] && [ %s = yes ]; then timeout 30 sh -c 'echo go > "$1"' sh %s; fi
      wait $pid
      echo "status $?"
      # alive: not gone and not a zombie (killed, its new parent not
      # reaping), still after up to 10 s
      if [ -s %s ]; then
        dot=$(cat %s)
        i=0
        while [ -r /proc/$dot/stat ] && ! grep -q ') Z' /proc/$dot/stat && [ $i -lt 1000 ]; do
          i=$((i + 1)); sleep 0.01
        done
        if [ -r /proc/$dot/stat ] && ! grep -q ') Z' /proc/$dot/stat; then echo "dot alive"; kill -9 $dot; fi
      fi
    ]]):format(shq(pidfile), 60, shq(lab.dir .. "/never"), shq(script),
      wait_dot and "yes" or "no", shq(pidfile), delay or 0, sig, sig, wait_dot and "yes" or "no",
      shq(lab.dir .. "/never"), shq(pidfile), shq(pidfile))
    local p = assert(io.popen(sh))
    local said = p:read("a")
    p:close()
    return said
  end

  for _, sig in ipairs({ "KILL", "TERM", "INT" }) do
    it("by SIG" .. sig .. " while Graphviz runs leaves the old file, no temporary and no Graphviz", function()
      local dir = fresh_dir()
      local target = dir .. "/g.svg"
      H.write_file(target, "old\n")
      local said = run_and_kill(([[
        local callgrind = require "callgrind"
        local prof = assert(callgrind.parse(%q, "small"))
        print(prof:write_dot(%q, "Ir", { format = "svg", dot_command = %q }))
      ]]):format(SMALL, target, fakedot), sig, true)
      -- SIGINT: lua5.4's handler stops the chunk at its next instruction,
      -- once the wait for the child is over (the child, killed too in a
      -- terminal's process group, is not here: it runs on and is waited for)
      if sig == "INT" then
        assert.truthy(said:match("^status 1\n"), said)
        assert.are.equal("<svg>fake</svg>\n", H.read_file(target))
      else
        assert.are.equal(("status %d\n"):format(sig == "KILL" and 137 or 143), said)
        assert.are.equal("old\n", H.read_file(target))
      end
      assert.are.same({ "g.svg" }, entries(dir))
    end)
  end

  it("at random points, over and over, in every writer, leaves no temporary", function()
    local dir = fresh_dir()
    local chunk = ([[
      local callgrind = require "callgrind"
      local prof = assert(callgrind.load("spec/corpus/gprof2dot/googlecode-issue34.callgrind"))
      local d = %q
      local small = assert(callgrind.parse(%q, "small"))
      while true do
        assert(prof:write(d .. "/p.out"))
        assert(prof:write_dot(d .. "/g.svg", nil, { format = "svg" }))
        assert(prof:write_dot(d .. "/g.dot"))
        assert(prof:write_flamegraph(d .. "/f.svg"))
        assert(prof:write_folded(d .. "/s.folded"))
        assert(prof:write_pprof(d .. "/p.pb.gz"))
        assert(small:write_html(d .. "/r.html"))
        assert(callgrind.write_file_atomic(d .. "/t.txt", string.rep("x", 1 << 22)))
      end
    ]]):format(dir, SMALL)
    local allowed = { ["p.out"] = true, ["g.svg"] = true, ["g.dot"] = true, ["f.svg"] = true,
      ["s.folded"] = true, ["p.pb.gz"] = true, ["r.html"] = true, ["t.txt"] = true }
    -- 4 kills in make test, 16 with CALLGRIND_WRITER=full (make check-long)
    math.randomseed(42)
    for _ = 1, os.getenv("CALLGRIND_WRITER") == "full" and 16 or 4 do
      local said = run_and_kill(chunk, math.random() < 0.5 and "KILL" or "TERM", false,
        string.format("%.2f", 0.3 + 1.2 * math.random()))
      assert.truthy(said:match("^status 1[34][37]\n$"), said)
      for _, name in ipairs(entries(dir)) do
        assert.is_true(allowed[name] or false, "left behind: " .. name)
      end
    end
  end)
end)
