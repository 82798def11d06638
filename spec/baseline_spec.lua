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
setup(function() lab:open() end)
teardown(function() lab:close() end)

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
      "    7    0  -7 (-100.0%)  helper (/home/a/src/util.c; /home/a/build/prog)",
      "    0    4      +4 (new)  fresh (/ci/b/src/main.c; /ci/b/build/prog)",
      "old: " .. dir .. "/parse.callgrind",
      "new: " .. dir .. "/parse.new.callgrind",
      "accept the new numbers: CALLGRIND_UPDATE_BASELINES=1 (or opts.update = true) replaces "
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

  it("takes the directory from CALLGRIND_BASELINE_DIR and updates with CALLGRIND_UPDATE_BASELINES=1", function()
    local dir = fresh_dir()
    local pwd = H.run("pwd"):gsub("%s+$", "")
    local function absolute(paths)
      return (paths:gsub("[^;]+", function(p) return p:sub(1, 1) == "/" and p or (pwd .. "/" .. p) end))
    end
    local script = lab.dir .. "/env.lua"
    local f = assert(io.open(script, "w"))
    f:write(([[
package.path = %q
package.cpath = %q
local callgrind = require "callgrind"
local prof = assert(callgrind.load(arg[1]))
print(callgrind.check_within_baseline("fib", prof, { Ir = "5%%" }))
print(require("callgrind.baseline").dir())
]]):format(absolute(package.path), absolute(package.cpath)))
    f:close()
    -- run from the scratch directory: the default directory is relative
    local fib = pwd .. "/spec/fixtures/fib.callgrind"
    -- (LD_PRELOAD kept: under make check-asan the core needs it)
    local function lua(env)
      local p = assert(io.popen(("cd %s && env -u CALLGRIND_UPDATE_BASELINES -u CALLGRIND_BASELINE_DIR %s lua5.4 %s %s "
        .. "2>&1"):format(shq(lab.dir), env, shq(script), shq(fib))))
      local out = p:read("a")
      p:close()
      return out
    end
    assert.are.equal("true\tbaseline fib saved (first run): " .. dir .. "/fib.callgrind (Ir 205)\ttrue\n"
      .. dir .. "\n", lua("CALLGRIND_BASELINE_DIR=" .. shq(dir)))
    assert.are.equal("true\tbaseline fib updated: " .. dir .. "/fib.callgrind (Ir 205)\ttrue\n" .. dir .. "\n",
      lua("CALLGRIND_UPDATE_BASELINES=1 CALLGRIND_BASELINE_DIR=" .. shq(dir)))
    assert.are.equal("true\tbaseline fib saved (first run): spec/baselines/fib.callgrind (Ir 205)\ttrue\n"
      .. "spec/baselines\n", lua("CALLGRIND_UPDATE_BASELINES=0"))
    assert.are.equal(205, H.load(lab.dir .. "/spec/baselines/fib.callgrind"):total("Ir"))
  end)

  it("reports a baseline of another event set or another command", function()
    local dir = fresh_dir()
    callgrind.check_within_baseline("x", old, {}, { dir = dir })
    local ir_only = assert(callgrind.parse("events: Ir\ncmd: /home/a/build/prog --fast\nfn=main\n1 5\n", "ir"))
    local path = dir .. "/x.callgrind"
    local accept = "accept the new numbers: CALLGRIND_UPDATE_BASELINES=1 (or opts.update = true) replaces " .. path
    assert.are.same({ false, "baseline x was recorded with events Ir Dr; this profile has Ir\n" .. accept },
      { callgrind.check_within_baseline("x", ir_only, {}, { dir = dir }) })
    local other = assert(callgrind.parse(OLD:gsub("%-%-fast", "--slow"), "other"))
    assert.are.same({ false, "baseline x is of another command: /home/a/build/prog --fast; this profile ran "
      .. "/home/a/build/prog --slow\n" .. accept }, { callgrind.check_within_baseline("x", other, {}, { dir = dir }) })
    -- the same command in another directory is the same command
    assert.is_true((callgrind.check_within_baseline("x", assert(callgrind.parse(OLD:gsub("/home/a/", "/ci/b/"),
      "moved")), { Ir = "0%" }, { dir = dir })))
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
