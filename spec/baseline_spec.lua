-- Named baselines (callgrind.check_within_baseline): saved on first use,
-- checked after, replaced on request, refused when they measure something
-- else; and a moved checkout still matches its baseline (real valgrind
-- runs of examples/perf/sortnum.c built in two directories).
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq

local OLD = table.concat({
  "events: Ir Dr", "cmd: /home/a/build/prog --fast",
  "ob=/home/a/build/prog", "fl=/home/a/src/main.c",
  "fn=main", "1 10 2", "cfn=parse", "calls=1 5", "2 100 20",
  "fn=parse", "5 100 20",
  "fl=/home/a/src/util.c", "fn=helper", "1 7 0", "",
}, "\n")
local NEW = table.concat({
  "events: Ir Dr", "cmd: /ci/b/build/prog --fast",
  "ob=/ci/b/build/prog", "fl=/ci/b/src/main.c",
  "fn=main", "1 10 2", "cfn=parse", "calls=1 5", "2 130 21",
  "fn=parse", "5 130 21",
  "fn=fresh", "6 4 0", "",
}, "\n")

local lab = H.lab("spec/baseline_spec.lua")
-- The checks in this process see none of the modes' variables (a CI job
-- sets CI); the specs of the modes set them in child processes.
local HIDDEN = { CI = true, CALLGRIND_BASELINES = true, CALLGRIND_UPDATE_BASELINES = true,
  CALLGRIND_BASELINE_DIR = true, CALLGRIND_REPORT = true }
local getenv = os.getenv
setup(function()
  lab:open()
  os.getenv = function(k) if HIDDEN[k] then return nil end return getenv(k) end -- luacheck: ignore
end)
teardown(function()
  os.getenv = getenv -- luacheck: ignore
  lab:close()
end)

-- A Lua script for a child process, with this run's module paths made
-- absolute (the child runs elsewhere).
local PWD = H.run("pwd"):gsub("%s+$", "")
local function absolute(paths)
  return (paths:gsub("[^;]+", function(p) return p:sub(1, 1) == "/" and p or (PWD .. "/" .. p) end))
end
local FIB = PWD .. "/spec/fixtures/fib.callgrind"

local function child_script(name, body)
  local script = lab.dir .. "/" .. name
  H.write_file(script, ("package.path = %q\npackage.cpath = %q\n"):format(absolute(package.path),
    absolute(package.cpath)) .. body)
  return script
end

-- The command that runs a script with a controlled environment: none of
-- the modes' variables but those in env (LD_PRELOAD kept: under make
-- check-asan the core needs it).
local function lua_cmd(env, script, ...)
  local words = {}
  for i, a in ipairs { ... } do words[i] = shq(a) end
  return ("env -u CALLGRIND_UPDATE_BASELINES -u CALLGRIND_BASELINE_DIR -u CI -u CALLGRIND_BASELINES "
    .. "-u CALLGRIND_REPORT %s lua5.4 %s %s"):format(env, shq(script), table.concat(words, " "))
end

-- Runs it in dir: stdout and stderr.
local function lua_in(dir, env, script, ...)
  local p = assert(io.popen(("cd %s && %s 2>&1"):format(shq(dir), lua_cmd(env, script, ...))))
  local out = p:read("a")
  p:close()
  return out
end

local n = 0
local function fresh_dir()
  n = n + 1
  return lab.dir .. "/b" .. n
end

describe("callgrind.check_within_baseline", function()
  local old = assert(callgrind.parse(OLD, "old"))
  local new = assert(callgrind.parse(NEW, "new"))

  it("saves the profile on first use and passes with a notice", function()
    local dir = fresh_dir()
    assert.are.same({ true, "baseline parse saved (first run): " .. dir .. "/parse.callgrind (Ir 117, Dr 22)", true },
      { callgrind.check_within_baseline("parse", old, { Ir = "5%" }, { dir = dir }) })
    local saved = H.load(dir .. "/parse.callgrind")
    assert.are.same({ Ir = 117, Dr = 22 }, saved:totals())
    assert.are.equal(110, saved:func("main"):inclusive("Ir"))
  end)

  it("passes the same numbers, and fails a regression with the story and the way to accept it", function()
    local dir = fresh_dir()
    assert.is_true((callgrind.check_within_baseline("parse", old, { Ir = "5%" }, { dir = dir })))
    local ok, msg = callgrind.check_within_baseline("parse", old, { Ir = "5%" }, { dir = dir })
    assert.is_true(ok)
    assert.are.equal("within the limits", msg:match("^[^\n]*"))
    ok, msg = callgrind.check_within_baseline("parse", new, { Ir = "5%" }, { dir = dir })
    assert.is_false(ok)
    assert.are.equal(table.concat({
      "1 limit exceeded:",
      "  Ir (total): 117 -> 144 +27 (+23.1%), limit +5%",
      "event  old  new        change",
      "   Ir  117  144  +27 (+23.1%)",
      "biggest changes in Ir (self):",
      "  old  new        change  function",
      "  100  130  +30 (+30.0%)  parse (/ci/b/src/main.c; /ci/b/build/prog)",
      -- the baseline's object is relative to the program's build directory
      "    7    0  -7 (-100.0%)  helper (/home/a/src/util.c; prog)",
      "    0    4      +4 (new)  fresh (/ci/b/src/main.c; /ci/b/build/prog)",
      "matched 2 functions: 94.0% of the old Ir, 97.2% of the new",
      "old: " .. dir .. "/parse.callgrind",
      "new: " .. dir .. "/parse.new.callgrind",
      "accept the new numbers: CALLGRIND_BASELINES=update (or opts.update = true) replaces "
        .. dir .. "/parse.callgrind",
    }, "\n"), msg)
    assert.are.same({ Ir = 144, Dr = 23 }, H.load(dir .. "/parse.new.callgrind"):totals())
  end)

  it("replaces the baseline with opts.update", function()
    local dir = fresh_dir()
    callgrind.check_within_baseline("parse", old, {}, { dir = dir })
    assert.are.same({ true, "baseline parse updated: " .. dir .. "/parse.callgrind (Ir 144, Dr 23)", true },
      { callgrind.check_within_baseline("parse", new, { Ir = "5%" }, { dir = dir, update = true }) })
    assert.are.equal(144, H.load(dir .. "/parse.callgrind"):total("Ir"))
  end)

  it("takes the directory from CALLGRIND_BASELINE_DIR and updates with CALLGRIND_BASELINES=update", function()
    local dir = fresh_dir()
    local script = child_script("env.lua", [[
local callgrind = require "callgrind"
local prof = assert(callgrind.load(arg[1]))
print(callgrind.check_within_baseline("fib", prof, { Ir = "5%" }))
print((require("callgrind.check.baseline").dir()))
]])
    -- run from the scratch directory (no .busted above it): the default
    -- directory is relative to it
    assert.are.equal("true\tbaseline fib saved (first run): " .. dir .. "/fib.callgrind (Ir 205)\ttrue\n"
      .. dir .. "\n", lua_in(lab.dir, "CALLGRIND_BASELINE_DIR=" .. shq(dir), script, FIB))
    assert.are.equal("true\tbaseline fib updated: " .. dir .. "/fib.callgrind (Ir 205)\ttrue\n" .. dir .. "\n",
      lua_in(lab.dir, "CALLGRIND_UPDATE_BASELINES=1 CALLGRIND_BASELINE_DIR=" .. shq(dir), script, FIB))
    assert.are.equal("true\tbaseline fib updated: " .. dir .. "/fib.callgrind (Ir 205)\ttrue\n" .. dir .. "\n",
      lua_in(lab.dir, "CALLGRIND_BASELINES=update CALLGRIND_BASELINE_DIR=" .. shq(dir), script, FIB))
    assert.are.equal("true\tbaseline fib saved (first run): spec/baselines/fib.callgrind (Ir 205)\ttrue\n"
      .. "spec/baselines\n", lua_in(lab.dir, "CALLGRIND_UPDATE_BASELINES=0", script, FIB))
    assert.are.equal(205, H.load(lab.dir .. "/spec/baselines/fib.callgrind"):total("Ir"))
  end)

  it("finds spec/baselines beside the nearest .busted above the working directory", function()
    local root = lab.dir .. "/proj"
    lab:run(("mkdir -p %s/src/deeper && touch %s/.busted"):format(shq(root), shq(root)), "a project")
    local script = child_script("root.lua", [[
local callgrind = require "callgrind"
local prof = assert(callgrind.load(arg[1]))
print(callgrind.check_within_baseline("fib", prof, { Ir = "5%" }))
print(require("callgrind.check.baseline").dir())
]])
    assert.are.equal("true\tbaseline fib saved (first run): " .. root .. "/spec/baselines/fib.callgrind (Ir 205)"
      .. "\ttrue\n" .. root .. "/spec/baselines\tthe project root, holding .busted: " .. root .. "\n",
      lua_in(root .. "/src/deeper", "", script, FIB))
    -- from the root itself, the same file
    assert.are.equal("true\twithin the limits\n", lua_in(root, "", script, FIB):match("^[^\n]*\n"))
    assert.are.equal(205, H.load(root .. "/spec/baselines/fib.callgrind"):total("Ir"))
  end)

  describe("in CI", function()
    local script
    setup(function()
      script = child_script("ci.lua", [[
local callgrind = require "callgrind"
local prof = assert(callgrind.load(arg[1]))
local ok, msg = callgrind.check_within_baseline("fib", prof, { Ir = "5%" }, { dir = arg[2] })
print(ok)
print(msg)
]])
    end)

    for _, env in ipairs { "CI=1", "CI=true", "CALLGRIND_BASELINES=require", "CI=0 CALLGRIND_BASELINES=require" } do
      it("fails on a missing baseline with " .. env .. ", saying where it looked and how to create it", function()
        local dir = fresh_dir()
        local why = env:find("require", 1, true) and "CALLGRIND_BASELINES=require" or "CI is set"
        assert.are.equal("false\nbaseline fib is missing: no file " .. dir .. "/fib.callgrind (the directory is "
          .. "from opts.dir)\n" .. why .. ", so a missing baseline fails instead of being saved: record it with "
          .. "CALLGRIND_BASELINES=update (or opts.update = true) and commit it\n",
          lua_in(lab.dir, env, script, FIB, dir))
        assert.is_nil(io.open(dir .. "/fib.callgrind"))
      end)
    end

    it("raises on a CALLGRIND_BASELINES it does not know, at the caller's line", function()
      assert.matches("^lua5.4: " .. script:gsub("%p", "%%%0") .. ":5: CALLGRIND_BASELINES=updat: expected update, "
        .. "require or save\n", lua_in(lab.dir, "CALLGRIND_BASELINES=updat", script, FIB, fresh_dir()))
    end)

    it("saves it with CI=0 or CI=false, and records it with CALLGRIND_BASELINES=update", function()
      local dir = fresh_dir()
      assert.are.equal("true\nbaseline fib saved (first run): " .. dir .. "/fib.callgrind (Ir 205)\n",
        lua_in(lab.dir, "CI=false", script, FIB, dir))
      os.remove(dir .. "/fib.callgrind")
      assert.are.equal("true\nbaseline fib saved (first run): " .. dir .. "/fib.callgrind (Ir 205)\n",
        lua_in(lab.dir, "CI=0", script, FIB, dir))
      os.remove(dir .. "/fib.callgrind")
      assert.are.equal("true\nbaseline fib updated: " .. dir .. "/fib.callgrind (Ir 205)\n",
        lua_in(lab.dir, "CI=1 CALLGRIND_BASELINES=update", script, FIB, dir))
      assert.are.equal("true\nwithin the limits\n",
        lua_in(lab.dir, "CI=1", script, FIB, dir):match("^[^\n]*\n[^\n]*\n"))
    end)
  end)

  it("compares a baseline of another command function by function, saying so; same_command fails", function()
    local dir = fresh_dir()
    callgrind.check_within_baseline("x", old, {}, { dir = dir })
    local path = dir .. "/x.callgrind"
    local renamed = assert(callgrind.parse(OLD:gsub("build/prog", "build/prog-O0"), "renamed"))
    local note = "note: baseline x is of another command: prog --fast; this profile ran "
      .. "/home/a/build/prog-O0 --fast (compared function by function; opts.same_command = true fails)"
    -- the program under another name matches as one program: every function
    assert.are.same({ true, note .. "\nwithin the limits\nevent  old  new  change\n   Ir  117  117       0\n"
      .. "matched 3 functions: 100.0% of the old Ir, 100.0% of the new\n"
      .. "old: " .. path .. "\nnew: renamed" }, { callgrind.check_within_baseline("x", renamed, { Ir = "5%" },
      { dir = dir }) })
    -- a regression under the new name fails with its numbers
    local slower = assert(callgrind.parse(NEW:gsub("/ci/b/build/prog", "/home/a/build/prog-O0"), "slower"))
    local ok, msg = callgrind.check_within_baseline("x", slower, { Ir = "5%" }, { dir = dir })
    assert.is_false(ok)
    assert.are.equal(note .. "\n1 limit exceeded:\n  Ir (total): 117 -> 144 +27 (+23.1%), limit +5%",
      msg:match("^[^\n]*\n[^\n]*\n[^\n]*"))
    ok, msg = callgrind.check_within_baseline("x", renamed, { Ir = "5%" }, { dir = dir, same_command = true })
    assert.is_false(ok)
    assert.are.equal("1 limit exceeded:\n  baseline x is of another command: prog --fast; this "
      .. "profile ran /home/a/build/prog-O0 --fast (opts.same_command)", msg:match("^[^\n]*\n[^\n]*"))
  end)

  it("reports a baseline of another event set", function()
    local dir = fresh_dir()
    callgrind.check_within_baseline("x", old, {}, { dir = dir })
    local ir_only = assert(callgrind.parse("events: Ir\ncmd: /home/a/build/prog --fast\nfn=main\n1 5\n", "ir"))
    local path = dir .. "/x.callgrind"
    local accept = "accept the new numbers: CALLGRIND_BASELINES=update (or opts.update = true) replaces " .. path
    assert.are.same({ false, "baseline x was recorded with events Ir Dr; this profile has Ir\n" .. accept },
      { callgrind.check_within_baseline("x", ir_only, {}, { dir = dir }) })
    -- the same command in another directory is the same command
    local _, msg = callgrind.check_within_baseline("x", assert(callgrind.parse(OLD:gsub("/home/a/", "/ci/b/"),
      "moved")), { Ir = "0%" }, { dir = dir })
    assert.are.equal("within the limits", msg:match("^[^\n]*"))
  end)

  it("refuses a baseline with lost data, naming the file and how to re-record it", function()
    local dir = fresh_dir()
    lab:run("mkdir -p " .. shq(dir), "mkdir")
    local path = dir .. "/cut.callgrind"
    local rerecord = "re-record it: CALLGRIND_BASELINES=update (or opts.update = true) writes " .. path
      .. " anew from this run"
    -- cut short: written by callgrind, with no totals: line
    H.write_file(path, "# callgrind format\ncreator: callgrind-3.22.0\nevents: Ir\nfn=main\n1 10\n")
    local prof = assert(callgrind.parse("events: Ir\nfn=main\n1 10\n", "p"))
    local ok, msg = callgrind.check_within_baseline("cut", prof, { Ir = "5%" }, { dir = dir })
    assert.is_false(ok)
    assert.are.equal("baseline cut is refused: " .. path .. " has lost data (1 warning):", msg:match("^[^\n]*"))
    assert.are.equal("  " .. assert(callgrind.load(path)):warnings("truncated")[1],
      msg:match("\n([^\n]*)\n"))
    assert.are.equal(rerecord, msg:match("[^\n]*$"))
    -- costs that do not add up to totals: (a file that lost lines)
    H.write_file(path, "events: Ir\nfn=main\n1 10\ntotals: 12\n")
    ok, msg = callgrind.check_within_baseline("cut", prof, { Ir = "5%" }, { dir = dir })
    assert.is_false(ok)
    assert.are.equal("baseline cut is refused: " .. path .. " has lost data (1 warning):", msg:match("^[^\n]*"))
    assert.are.equal(rerecord, msg:match("[^\n]*$"))
    -- re-recorded, it is taken
    assert.is_true((callgrind.check_within_baseline("cut", prof, {}, { dir = dir, update = true })))
    assert.is_true((callgrind.check_within_baseline("cut", prof, { Ir = "0%" }, { dir = dir })))
  end)

  it("refuses a baseline changed after it was written (its digest), whatever line changed", function()
    local dir = fresh_dir()
    local path = dir .. "/calls.callgrind"
    local prof = assert(callgrind.parse("events: Ir\nfl=a.c\nfn=main\n1 10\ncfn=f\ncalls=3 5\n2 400\nfn=f\n5 400\n",
      "p"))
    assert.is_true((callgrind.check_within_baseline("calls", prof, { Ir = "5%" }, { dir = dir, quiet = true })))
    local text = H.read_file(path)
    -- the changes a bit flip makes and no sum catches: a call's cost, a call count
    for _, edit in ipairs({ { "\n2 400\n", "\n2 40\n" }, { "calls=3 ", "calls=3000 " }, { "\n", "\n\n" } }) do
      local a = assert(text:find(edit[1], 1, true))
      H.write_file(path, text:sub(1, a - 1) .. edit[2] .. text:sub(a + #edit[1]))
      local changed = assert(callgrind.load(path)):warnings("changed")
      assert.are.equal(1, #changed, edit[2])
      assert.matches(": the file was changed after it was written: its digest %(last line%) does not match", changed[1])
      local ok, msg = callgrind.check_within_baseline("calls", prof, { Ir = "5%" }, { dir = dir })
      assert.is_false(ok)
      assert.are.equal("baseline calls is refused: " .. path .. " has lost data (1 warning):", msg:match("^[^\n]*"))
      assert.matches("CALLGRIND_BASELINES=update", msg)
    end
    -- as written, it loads clean
    H.write_file(path, text)
    assert.are.same({}, assert(callgrind.load(path)):warnings())
  end)

  it("keeps a profile of several parts' pid: lines numbered by process, the same bytes at every run", function()
    local function two(pid)
      return table.concat({ "events: Ir", "pid: " .. pid, "part: 1", "thread: 1", "fn=main", "1 5", "totals: 5",
        "pid: " .. pid, "part: 1", "thread: 2", "fn=work", "1 7", "totals: 7", "" }, "\n")
    end
    local dir = fresh_dir()
    assert.is_true((callgrind.check_within_baseline("t", assert(callgrind.parse(two(1234), "a")), {},
      { dir = dir, update = true })))
    local first = H.read_file(dir .. "/t.callgrind")
    assert.is_true((callgrind.check_within_baseline("t", assert(callgrind.parse(two(99), "b")), {},
      { dir = dir, update = true })))
    assert.are.equal(first, H.read_file(dir .. "/t.callgrind"))
    local _, pids = first:gsub("\npid: 1\n", "")
    assert.are.equal(2, pids)
    local baseline = require "callgrind.check.baseline"
    assert.are.equal("events: Ir\npid: 1\npid: 2\npid: 1\n",
      baseline.canonical("events: Ir\npid: 77\npid: 5\npid: 77\n"))
    assert.are.equal("events: Ir\n", baseline.canonical("events: Ir\npid: 77\n"))
  end)

  it("writes the same bytes for the same numbers: canonical order, no pid:, paths under the root relative", function()
    local root = assert(require("callgrind.check.baseline").root())
    local text = table.concat({
      "events: Ir", "pid: 1234", "cmd: " .. root .. "/build/prog --fast",
      "ob=" .. root .. "/build/prog", "fl=" .. root .. "/src/a.c",
      "fn=zeta", "1 5", "fn=alpha", "2 7", "cfn=zeta", "calls=1 1", "3 5",
      "fl=/usr/include/b.h", "fn=mid", "4 1", "",
    }, "\n")
    -- the same functions in another order, another pid
    local reordered = table.concat({
      "events: Ir", "pid: 99", "cmd: " .. root .. "/build/prog --fast",
      "ob=" .. root .. "/build/prog", "fl=/usr/include/b.h", "fn=mid", "4 1",
      "fl=" .. root .. "/src/a.c", "fn=alpha", "2 7", "cfn=zeta", "calls=1 1", "3 5", "fn=zeta", "1 5", "",
    }, "\n")
    local dir = fresh_dir()
    assert.is_true((callgrind.check_within_baseline("c", assert(callgrind.parse(text, "a")), {},
      { dir = dir, update = true })))
    local first = H.read_file(dir .. "/c.callgrind")
    assert.is_true((callgrind.check_within_baseline("c", assert(callgrind.parse(reordered, "b")), {},
      { dir = dir, update = true })))
    assert.are.equal(first, H.read_file(dir .. "/c.callgrind"))
    assert.is_nil(first:find("pid:", 1, true))
    assert.is_nil(first:find(root, 1, true))
    local back = H.load(dir .. "/c.callgrind")
    -- the program's own directory is its build directory: paths under it
    -- are relative to it, the others under the root to the root
    assert.are.equal("prog --fast", back.cmd)
    assert.are.equal("prog", back:func("alpha").object)
    assert.are.equal("src/a.c", back:func("alpha").file)
    assert.are.equal("/usr/include/b.h", back:func("mid").file)
    assert.are.same({ Ir = 13 }, back:totals())
  end)

  it("writes the same bytes wherever the program was built: paths relative to its build directory", function()
    lab:need_tools()
    local bytes = {}
    for _, name in ipairs { "build1", "build2" } do
      local build = lab.dir .. "/" .. name
      lab:run(("mkdir -p %s && cp examples/perf/sortnum.c %s/ && cd %s && gcc -g -O1 -o sortnum sortnum.c")
        :format(shq(build), shq(build), shq(build)), "build sortnum")
      local prof = assert(callgrind.run({ build .. "/sortnum", "500" }, { toggle_collect = "sort_numbers" }))
      assert.are.equal(build .. "/sortnum.c", prof:func("sort_numbers").file)
      local dir = fresh_dir()
      assert.is_true((callgrind.check_within_baseline("sortnum", prof, {}, { dir = dir, update = true })))
      bytes[#bytes + 1] = H.read_file(dir .. "/sortnum.callgrind")
      -- recorded again, unchanged
      assert.is_true((callgrind.check_within_baseline("sortnum", prof, {}, { dir = dir, update = true })))
      assert.are.equal(bytes[#bytes], H.read_file(dir .. "/sortnum.callgrind"))
    end
    assert.are.equal(bytes[1], bytes[2])
    assert.is_nil(bytes[1]:find(lab.dir, 1, true))
    assert.matches("\nfl=%(%d+%) sortnum%.c\n", bytes[1])
    assert.matches("\ncmd: sortnum 500\n", bytes[1])
  end)

  it("leaves no .new file when a check passes, an improvement included", function()
    local dir = fresh_dir()
    local keep = dir .. "/p.new.callgrind"
    assert.is_true((callgrind.check_within_baseline("p", old, {}, { dir = dir, quiet = true })))
    -- a failure keeps the new profile beside the baseline
    assert.is_false((callgrind.check_within_baseline("p", new, { Ir = "5%" }, { dir = dir })))
    assert.is_truthy(H.read_file(keep))
    -- a pass removes it
    assert.is_true((callgrind.check_within_baseline("p", old, { Ir = "5%" }, { dir = dir })))
    assert.is_nil(io.open(keep))
    -- an improvement beyond the limit passes, and leaves none
    assert.is_true((callgrind.check_within_baseline("p", new, {}, { dir = dir, update = true })))
    local ok, msg = callgrind.check_within_baseline("p", old, { Ir = "5%" }, { dir = dir })
    assert.is_true(ok)
    assert.matches("improved beyond the limits", msg, 1, true)
    assert.is_nil(io.open(keep))
  end)

  it("serializes concurrent updates: the file always loads whole and is one run's", function()
    local dir = fresh_dir()
    local a = lab.dir .. "/conc-a.callgrind"
    local b = lab.dir .. "/conc-b.callgrind"
    -- two profiles of many functions (a write takes a while)
    local function profile(path, cost)
      local t = { "events: Ir", "cmd: prog" }
      for i = 1, 2000 do t[#t + 1] = ("fn=f%d\n%d %d"):format(i, i, cost + i) end
      H.write_file(path, table.concat(t, "\n") .. "\n")
    end
    profile(a, 10)
    profile(b, 20)
    local script = child_script("conc.lua", [[
local callgrind = require "callgrind"
local prof = assert(callgrind.load(arg[1]))
for _ = 1, tonumber(arg[3]) do
  assert(callgrind.check_within_baseline("conc", prof, {}, { dir = arg[2], update = true, quiet = true }))
end
]])
    -- each run's file, alone
    local want = {}
    for _, p in ipairs { a, b } do
      local d = fresh_dir()
      assert.are.equal("", lua_in(lab.dir, "", script, p, d, 1))
      want[H.read_file(d .. "/conc.callgrind")] = p
    end
    local ROUNDS = 12
    local done = lab.dir .. "/conc.done"
    local cmd = ("cd %s && (%s & %s & wait) 2>&1; touch %s"):format(shq(lab.dir),
      lua_cmd("", script, a, dir, ROUNDS), lua_cmd("", script, b, dir, ROUNDS), shq(done))
    local pipe = assert(io.popen(cmd))
    local seen, checked = {}, 0
    -- read the baseline over and over while the two update it
    while not io.open(done) do
      local f = io.open(dir .. "/conc.callgrind", "rb")
      if f then
        local bytes = f:read("a")
        f:close()
        assert(want[bytes], "a baseline that is neither run's file (" .. #bytes .. " bytes)")
        seen[want[bytes]] = true
        local prof = assert(callgrind.parse(bytes, "conc"))
        assert.are.same({}, prof:warnings())
        checked = checked + 1
      end
    end
    assert.are.equal("", pipe:read("a"))
    assert.is_true((pipe:close()))
    assert.is_truthy(want[H.read_file(dir .. "/conc.callgrind")])
    assert.is_true(checked > 0)
    assert.is_true(seen[a] or seen[b])
    -- no temporary file left behind
    assert.are.equal("conc.callgrind\n", H.run("ls -A " .. shq(dir)))
  end)

  it("raises on misuse, naming the argument", function()
    assert.has_error(function() callgrind.check_within_baseline("a b", old, {}) end,
      "bad argument #1 to 'within_baseline' (name of letters, digits, '_', '-', '.' expected)")
    assert.has_error(function() callgrind.check_within_baseline("a", {}, {}) end,
      "bad argument #2 to 'within_baseline' (profile expected)")
    assert.has_error(function() callgrind.check_within_baseline("a", old, "5%") end,
      "bad argument #3 to 'within_baseline' (table of limits expected)")
  end)

  it("keeps matching after the checkout moves, and catches a 10% slower build there (not at 15%)", function()
    lab:need_tools()
    local function checkout(name, flags)
      local root = lab.dir .. "/" .. name
      lab:run(("mkdir -p %s/src && cp examples/perf/sortnum.c %s/src/ && cd %s && gcc -g -O1 %s -o sortnum "
        .. "src/sortnum.c"):format(shq(root), shq(root), shq(root), flags), "build a checkout")
      return root .. "/sortnum"
    end
    local dir = fresh_dir()
    local limits = { Ir = "5%", functions = { sort_numbers = { Ir = "5%" } } }
    local a = assert(callgrind.run({ checkout("a", ""), "2000" }, { toggle_collect = "sort_numbers" }))
    assert.is_true((callgrind.check_within_baseline("sortnum", a, limits, { dir = dir })))
    -- cp -r of the checkout, built again there
    lab:run(("cp -r %s %s"):format(shq(lab.dir .. "/a"), shq(lab.dir .. "/moved")), "cp -r")
    lab:run(("cd %s && gcc -g -O1 -o sortnum src/sortnum.c"):format(shq(lab.dir .. "/moved")), "rebuild")
    local moved = assert(callgrind.run({ lab.dir .. "/moved/sortnum", "2000" }, { toggle_collect = "sort_numbers" }))
    assert.are_not.equal(a:func("sort_numbers").file, moved:func("sort_numbers").file)
    local ok, msg = callgrind.check_within_baseline("sortnum", moved, limits, { dir = dir })
    assert(ok, msg)
    local slow = assert(callgrind.run({ checkout("slow", "-DSLOW"), "2000" }, { toggle_collect = "sort_numbers" }))
    ok, msg = callgrind.check_within_baseline("sortnum", slow, limits, { dir = dir })
    assert.is_false(ok)
    local old_ir, new_ir = a:total("Ir"), slow:total("Ir")
    local change = ("+%s (+%.1f%%)"):format(H.commify(new_ir - old_ir), (new_ir - old_ir) * 100 / old_ir)
    assert.are.equal(("2 limits exceeded:\n  Ir (total): %s -> %s %s, limit +5%%\n"
      .. "  Ir of sort_numbers (inclusive): %s -> %s %s, limit +5%%"):format(H.commify(old_ir), H.commify(new_ir),
      change, H.commify(old_ir), H.commify(new_ir), change), msg:match("^[^\n]*\n[^\n]*\n[^\n]*"))
    -- two runs compared directly: the ~10% slowdown fails at 5%, passes at 15%
    assert.is_false((callgrind.check_no_regression(a, slow, { Ir = "5%" })))
    assert.is_true((callgrind.check_no_regression(a, slow, { Ir = "15%" })))
    -- the same slowdown at 15% passes against the baseline too
    assert.is_true((callgrind.check_within_baseline("sortnum", slow, { Ir = "15%",
      functions = { sort_numbers = { Ir = "15%" } } }, { dir = dir })))
    -- matched by full paths, the moved build's functions are all new: the
    -- per-function limit has no old value to compare with
    local full = function(fn) return fn.name .. "|" .. tostring(fn.file) .. "|" .. tostring(fn.object) end
    local d = callgrind.diff(a, moved, { match = full })
    local row = d:functions("Ir")[1]
    assert.is_nil(row.old_fn and row.new_fn)
    assert.are.equal(0, callgrind.diff(a, moved):functions("Ir")[1].delta)
  end)
end)
