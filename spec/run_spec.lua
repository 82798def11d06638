-- callgrind.run against real valgrind runs of examples/perf/sortnum.c and
-- /bin/sh, checked with valgrind run directly and callgrind_annotate; every
-- failure path with its exact message.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq

local lab = H.lab("spec/run_spec.lua")
local exe

setup(function()
  lab:open()
  lab:need_tools()
  exe = lab.dir .. "/sortnum"
  lab:run(("gcc -g -O1 -o %s examples/perf/sortnum.c"):format(shq(exe)), "gcc (examples/perf/sortnum.c)")
end)
teardown(function() lab:close() end)

-- self Ir per function, by name
local function self_costs(prof, ev)
  local t = {}
  for fn in prof:functions() do
    local v = fn:self(ev)
    if v ~= 0 then t[fn.name] = (t[fn.name] or 0) + v end
  end
  return t
end

describe("callgrind.check.run", function()
  it("gives identical Ir totals and per-function costs on two runs of the same program", function()
    local a = assert(callgrind.run({ exe, "3000" }))
    local b = assert(callgrind.run({ exe, "3000" }))
    assert.are.equal(a:total("Ir"), b:total("Ir"))
    assert.are.same(self_costs(a, "Ir"), self_costs(b, "Ir"))
  end)

  it("counts only the toggled function and what it calls, as valgrind run by hand does", function()
    local prof, info = assert(callgrind.run({ exe, "2000" }, { toggle_collect = "sort_numbers" }))
    local out = lab.dir .. "/toggle.out"
    lab:run(("setarch -R valgrind -q --tool=callgrind --toggle-collect=sort_numbers --collect-atstart=no "
      .. "--callgrind-out-file=%s %s 2000 >/dev/null"):format(shq(out), shq(exe)), "valgrind")
    local a = lab:annotate(out)
    assert.are.equal(a.program.Ir, prof:total("Ir"))
    local rows = {}
    for k, row in pairs(a.rows) do
      if row.Ir ~= 0 then rows[k:match("([^:]*)$")] = row.Ir end
    end
    assert.are.same(rows, self_costs(prof, "Ir"))
    assert.are.same({ "sift", "sort_numbers" }, (function()
      local names = {}
      for name in pairs(self_costs(prof, "Ir")) do names[#names + 1] = name end
      table.sort(names)
      return names
    end)())
    -- and the full run's inclusive cost of sort_numbers is that total
    local full = assert(callgrind.run({ exe, "2000" }))
    assert.are.equal(prof:total("Ir"), full:func("sort_numbers"):inclusive("Ir"))
    assert.matches("--toggle-collect=sort_numbers' '--collect-atstart=no'", info.command, 1, true)
  end)

  it("leaves collection on at the start with collect_atstart, so the toggled function is what is left out", function()
    local inside = assert(callgrind.run({ exe, "2000" }, { toggle_collect = "sort_numbers" }))
    local outside = assert(callgrind.run({ exe, "2000" }, { toggle_collect = "sort_numbers", collect_atstart = true }))
    local full = assert(callgrind.run({ exe, "2000" }))
    assert.is_nil((outside:func("sort_numbers")))
    assert.is_nil((outside:func("sift")))
    assert.are.equal(full:total("Ir"), inside:total("Ir") + outside:total("Ir"))
  end)

  it("returns the command line, exit status, output, valgrind's messages and the files it kept", function()
    local keep = lab.dir .. "/kept"
    local prof, info = assert(callgrind.run({ exe, "100" }, { keep = keep }))
    local native = lab:run(shq(exe) .. " 100", "sortnum")
    assert.are.equal(native, info.stdout)
    assert.are.equal("", info.stderr)
    assert.are.equal(0, info.status)
    assert.matches("Callgrind, a call-graph generating cache profiler", info.messages, 1, true)
    assert.are.equal(1, #info.files)
    assert.matches("^" .. keep:gsub("%p", "%%%0") .. "/callgrind%.out%.%d+$", info.files[1])
    assert.are.equal(info.files[1], prof.name)
    assert.are.equal(info.files[1], prof.name)
    assert.are.equal(keep, info.dir)
    assert.is_true(io.open(info.files[1]) ~= nil)
    local setarch = os.execute("setarch -R true >/dev/null 2>&1") and "setarch -R " or ""
    assert.are.equal(setarch .. "'valgrind' '--tool=callgrind' '--callgrind-out-file=" .. keep
      .. "/callgrind.out.%p' '--log-file=" .. keep .. "/valgrind.%p.log' '" .. exe .. "' '100'", info.command)
  end)

  it("simulates caches of a fixed geometry and branches with cache_sim and branch_sim", function()
    local prof = assert(callgrind.run({ exe, "100" }, { cache_sim = true, branch_sim = true }))
    assert.are.same({ "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim" },
      prof.events)
    local part = prof:parts()()
    assert.are.equal("32768 B, 64 B, 8-way associative", part.desc["I1 cache"])
    assert.are.equal("32768 B, 64 B, 8-way associative", part.desc["D1 cache"])
    assert.are.equal("8388608 B, 64 B, 16-way associative", part.desc["LL cache"])
  end)

  it("writes instruction addresses and jumps with dump_instr and collect_jumps", function()
    local prof = assert(callgrind.run({ exe, "100" }, { dump_instr = true, collect_jumps = true }))
    local line = prof:func("sort_numbers"):lines()()
    assert.is_number(line.addr)
    assert.is_truthy(prof:jumps()())
    local plain = assert(callgrind.run({ exe, "100" }))
    assert.is_nil(plain:func("sort_numbers"):lines()().addr)
    assert.is_nil(plain:jumps()())
  end)

  it("passes env, cwd and stdin to the program", function()
    local prof, info = assert(callgrind.run({ "sh", "-c", "echo \"$GREETING\"; pwd; cat; echo \"${HOME-unset}\"" },
      { env = { GREETING = "hello there", HOME = false }, cwd = lab.dir, stdin = "from stdin\n" }))
    assert.are.equal("hello there\n" .. lab.dir .. "\nfrom stdin\nunset\n", info.stdout)
    assert.is_true(prof:total("Ir") > 0)
  end)

  it("passes extra valgrind options with args", function()
    local prof = assert(callgrind.run({ exe, "100" }, { args = { "--dump-line=no", "--dump-instr=yes" } }))
    local line = prof:func("sort_numbers"):lines()()
    assert.is_nil(line.line)
    assert.is_number(line.addr)
  end)

  describe("fails with the reason", function()
    it("when valgrind is not installed", function()
      assert.are.same({ nil, "valgrind not found: 'no-such-valgrind' is not an executable on PATH; install valgrind "
        .. "(Debian/Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind)", "valgrind" },
        { callgrind.run({ exe }, { valgrind = "no-such-valgrind" }) })
    end)

    it("when the program is not found", function()
      assert.are.same({ nil, "program not found: ./no/such/program", "io" }, { callgrind.run({ "./no/such/program" }) })
      assert.are.same({ nil, "program not found: no-such-program-on-path", "io" },
        { callgrind.run({ "no-such-program-on-path" }) })
    end)

    it("when the program exits non-zero, unless allow_failure", function()
      local prof, err, kind, info = callgrind.run({ "sh", "-c", "echo one >&2; echo two >&2; exit 3" })
      assert.is_nil(prof)
      assert.are.equal("valgrind", kind)
      assert.are.equal("sh exited with status 3 (opts.allow_failure accepts that); its stderr ends:\none\ntwo", err)
      assert.are.equal(3, info.status)
      local ok, info2 = callgrind.run({ "sh", "-c", "exit 3" }, { allow_failure = true })
      assert.is_true(ok:total("Ir") > 0)
      assert.are.equal(3, info2.status)
    end)

    it("when valgrind itself fails, with its last lines", function()
      local prof, err, _, info = callgrind.run({ exe }, { args = { "--no-such-option" } })
      assert.is_nil(prof)
      assert.are.equal("valgrind failed (exit status 1):\nvalgrind: Unknown option: --no-such-option\n"
        .. "valgrind: Use --help for more information or consult the user manual.", err)
      assert.are.equal(1, info.status)
    end)

    it("when no profile was written", function()
      local keep = lab.dir .. "/none"
      local prof, err = callgrind.run({ exe, "10" }, { keep = keep, args = { "--callgrind-out-file=/dev/null" } })
      assert.is_nil(prof)
      assert.are.equal("no profile written: valgrind exited with status 0 but wrote no callgrind.out file in " .. keep,
        err)
    end)

    it("when the program runs past the timeout", function()
      local prof, err = callgrind.run({ "sleep", "20" }, { timeout = 1 })
      assert.is_nil(prof)
      assert.are.equal("timed out after 1 s (terminated): sleep", err)
    end)

    it("when the program ignores SIGTERM past the timeout: killed", function()
      -- the trap must be set before the timeout: under load valgrind may
      -- take more than a second to start sh, so the timeout doubles until
      -- sh has said it is set (1 s on a quiet machine)
      local ready = lab.dir .. "/trap.ready"
      local timeout, set, prof, err, kind = 1 / 2, false
      repeat
        timeout = timeout * 2
        os.remove(ready)
        prof, err, kind = callgrind.run({ "sh", "-c", "trap '' TERM; echo set > \"$1\"; sleep 20; sleep 1",
          "sh", ready }, { timeout = timeout })
        local f = io.open(ready)
        if f then f:close(); set = true end
      until set or timeout >= 16
      assert(set, "sh under valgrind never set its trap within a timeout of 16 s")
      assert.is_nil(prof)
      assert.are.equal(("timed out after %g s (killed): sh ignored SIGTERM and got SIGKILL 5 s later"):format(timeout),
        err)
      assert.are.equal("valgrind", kind)
    end)

    it("when the program leaves processes running", function()
      local pidfile = lab.dir .. "/left.pid"
      -- the child is valgrind's fork until it execs sleep: wait for that,
      -- so the name the message gives is known
      local prof, err, kind, info = callgrind.run({ "sh", "-c", "sleep 30 & p=$!; "
        .. "while [ \"$(cat /proc/$p/comm 2>/dev/null)\" != sleep ]; do sleep 0.1; done; echo $p > \"$1\"",
        "sh", pidfile })
      local pid = H.read_file(pidfile):match("%d+")
      finally(function() os.execute("kill " .. pid .. " 2>/dev/null") end)
      assert.is_nil(prof)
      assert.are.equal("valgrind", kind)
      assert.are.equal(("sh left 1 process running after it exited (ended now; not in the profile: wait for "
        .. "them, or trace_children = true and wait):\n  %s sleep"):format(pid), err)
      assert.are.same({ pid .. " sleep" }, info.left_running)
    end)
  end)

  describe("keeps every descendant under the runner", function()
    -- forks a child that leaves the session (setsid) and sleeps; the
    -- child writes its pid to argv[1]; the parent then sleeps argv[2] s
    local daemon
    local function build()
      if daemon then return daemon end
      local src = lab.dir .. "/daemon.c"
      H.write_file(src, [[
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    pid_t p = fork();
    if (p == 0) {
        FILE *f;
        setsid();
        f = fopen(argv[1], "w");
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
        sleep(30);
        return 0;
    }
    while (access(argv[1], F_OK) != 0)
        usleep(10000);
    if (argc > 2)
        sleep((unsigned)atoi(argv[2]));
    return 0;
}
]])
      daemon = lab.dir .. "/daemon"
      lab:run(("gcc -O1 -o %s %s"):format(shq(daemon), shq(src)), "gcc (daemon.c)")
      return daemon
    end
    local function alive(pid) return os.execute("kill -0 " .. pid .. " 2>/dev/null") == true end

    it("reports and ends a child that called setsid() and outlived the program", function()
      local prog, pidfile = build(), lab.dir .. "/setsid-left.pid"
      os.remove(pidfile)
      local prof, err, kind, info = callgrind.run({ prog, pidfile })
      local pid = H.read_file(pidfile):match("%d+")
      finally(function() os.execute("kill -9 " .. pid .. " 2>/dev/null") end)
      assert.is_nil(prof)
      assert.are.equal("valgrind", kind)
      assert.matches("^" .. prog:gsub("%p", "%%%0") .. " left 1 process running after it exited %(ended now", err)
      assert.are.equal(1, #info.left_running)
      assert.are.equal(pid, info.left_running[1]:match("^%d+"))
      assert.is_false(alive(pid))
    end)

    it("times out and kills a child that called setsid()", function()
      local prog, pidfile = build(), lab.dir .. "/setsid-timeout.pid"
      -- the child must have started before the timeout: under load
      -- valgrind may take more than a second to reach main, so the
      -- timeout doubles until it has (1 s on a quiet machine)
      local timeout, pid, prof, err = 1 / 2, nil
      repeat
        timeout = timeout * 2
        os.remove(pidfile)
        prof, err = callgrind.run({ prog, pidfile, "30" }, { timeout = timeout })
        local f = io.open(pidfile)
        if f then pid = f:read("a"):match("%d+"); f:close() end
      until pid or timeout >= 16
      assert(pid, "the program never started its child within a timeout of 16 s")
      finally(function() os.execute("kill -9 " .. pid .. " 2>/dev/null") end)
      assert.is_nil(prof)
      assert.are.equal(("timed out after %g s (terminated): %s"):format(timeout, prog), err)
      assert.is_false(alive(pid))
    end)
  end)

  describe("when its caller is killed with SIGKILL", function()
    -- ignores SIGTERM, forks a child that does too, writes where its
    -- stdout goes (the run's temporary directory) to argv[1], and waits
    local function build()
      local src = lab.dir .. "/stubborn.c"
      H.write_file(src, [[
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    char out[4096];
    ssize_t n;
    FILE *f;
    (void)argc;
    signal(SIGTERM, SIG_IGN);
    if (fork() == 0) {
        for (;;)
            pause();
    }
    n = readlink("/proc/self/fd/1", out, sizeof out - 1);
    out[n < 0 ? 0 : n] = 0;
    f = fopen(argv[1], "w");
    fprintf(f, "%s\n", out);
    fclose(f);
    for (;;)
        pause();
}
]])
      local prog = lab.dir .. "/stubborn"
      lab:run(("gcc -O1 -o %s %s"):format(shq(prog), shq(src)), "gcc (stubborn.c)")
      return prog
    end

    -- the processes whose command line names s (read here: a grep would
    -- name s in its own)
    local function processes_naming(s)
      local out = {}
      local p = assert(io.popen("ls /proc"))
      for pid in p:lines() do
        local f = pid:match("^%d+$") and io.open("/proc/" .. pid .. "/cmdline", "rb")
        if f then
          local cmd = f:read("a") or ""
          f:close()
          if cmd:find(s, 1, true) then out[#out + 1] = pid end
        end
      end
      p:close()
      return out
    end

    local read_maybe = H.read_file_if

    -- waits up to `limit` seconds for ok() to hold (an event, polled)
    local function wait_for(ok, limit)
      local deadline = os.time() + limit
      while not ok() do
        if os.time() > deadline then return false end
        os.execute("sleep 0.05")
      end
      return true
    end

    it("ends valgrind and every process of the run, and removes its temporary directory", function()
      local prog, ready = build(), lab.dir .. "/stubborn.ready"
      local script = ("package.path = %q package.cpath = %q\n"):format(package.path, package.cpath)
        .. ("require('callgrind').run({ %q, %q })"):format(prog, ready)
      local caller = H.run("lua5.4 -e " .. shq(script) .. " >/dev/null 2>&1 & echo $!"):match("%d+")
      finally(function()
        for _, pid in ipairs(processes_naming(prog)) do os.execute("kill -9 " .. pid .. " 2>/dev/null") end
      end)
      assert.is_true(wait_for(function() return (read_maybe(ready) or ""):match("\n") ~= nil end, 120),
        "the program under valgrind never wrote " .. ready)
      local dir = read_maybe(ready):match("^(.*)/stdout\n$")
      assert.truthy(dir, read_maybe(ready))
      -- valgrind running the program, and its child
      assert.is_true(#processes_naming(prog) >= 2)
      os.execute("kill -9 " .. caller)
      -- (the supervisor checks every 10 ms and gives SIGKILL 1 s after
      -- SIGTERM: a few seconds; 60 s of a machine under load)
      local gone = wait_for(function()
        return #processes_naming(prog) == 0 and not read_maybe(dir .. "/stdout")
      end, 60)
      assert.are.same({}, processes_naming(prog), "processes of the run left 60 s after its caller was killed")
      assert.is_true(gone, "the run's temporary directory was left 60 s after its caller was killed: " .. dir)
      -- the directory and the name reserved beside it (os.tmpname)
      assert.is_true(os.execute("test ! -e " .. shq(dir)))
      assert.is_true(os.execute("test ! -e " .. shq(dir:match("^(.*)%.d$"))))
    end)
  end)

  it("passes every path so that it cannot read as an option", function()
    -- a fresh lua5.4 in dir (LD_PRELOAD kept: under make check-asan the
    -- cpath names the ASan build), and what it printed
    local function lua_in(dir, script, env)
      local p = assert(io.popen("cd " .. shq(dir) .. " && " .. (env or "") .. " lua5.4 -e " .. shq(script)
        .. " 2>&1"))
      local out = p:read("a")
      p:close()
      return out
    end
    local here = H.run("pwd"):gsub("%s+$", "")
    local work = lab.dir .. "/dash"
    assert(os.execute("mkdir -p " .. shq(work .. "/-C")))
    -- keep and cwd starting with "-", relative to the working directory
    local function absolute(path) return (path:gsub("%f[^;\0]([^;/][^;]*)", here .. "/%1")) end
    local script = ("package.path = %q package.cpath = %q\n"):format(absolute(package.path), absolute(package.cpath))
      .. [[local prof, info = assert(require("callgrind").run({ "true" }, { keep = "--version", cwd = "-C" }))
io.write(info.dir, "\n", prof:total("Ir") > 0 and "ran" or "empty")]]
    local out = lua_in(work, script)
    assert.are.equal(work .. "/--version\nran", out)
    assert.matches("^callgrind%.out%.%d+\n", H.run("ls " .. shq(work .. "/--version")))
    -- a baseline directory starting with "-"
    script = ("package.path = %q package.cpath = %q\n"):format(absolute(package.path), absolute(package.cpath))
      .. [[local callgrind = require "callgrind"
local prof = assert(callgrind.parse("events: Ir\nfn=main\n1 5\n", "p"))
io.write(tostring(callgrind.check_within_baseline("b", prof, { Ir = "5%" }, { dir = "--version", quiet = true })))]]
    -- (not in CI's baseline mode, where a missing baseline fails)
    assert.are.equal("true", lua_in(work, script, "env -u CI -u CALLGRIND_BASELINES"))
    assert.is_truthy(H.read_file(work .. "/--version/b.callgrind"))
    -- a program path starting with "-" is not read as valgrind's option
    lab:run("mkdir -p " .. shq(work .. "/-bin") .. " && cp /bin/true " .. shq(work .. "/-bin/true"), "cp true")
    script = ("package.path = %q package.cpath = %q\n"):format(absolute(package.path), absolute(package.cpath))
      .. [[local prof, err = require("callgrind").run({ "-bin/true" })
io.write(prof and "ran" or err)]]
    assert.are.equal("ran", lua_in(work, script))
  end)

  it("starts the program from a fixed environment: its count does not move with the caller's", function()
    -- the caller's environment with n more variables of 1 KiB
    local function total(n, opts)
      local vars = {}
      for i = 1, n do vars[i] = ("CALLER_VAR_%d=%s"):format(i, ("x"):rep(1024)) end
      local out = H.fresh_lua(("local p = assert(require('callgrind').run({ %q, '100' }, %s)) io.write(p:total('Ir'))")
        :format(exe, opts), "env " .. table.concat(vars, " "))
      return assert(tonumber(out), out)
    end
    assert.are.equal(total(0, "nil"), total(100, "nil"))
    -- the caller's environment, kept, moves it: the spec would see that
    assert.are_not.equal(total(0, "{ env_clear = false }"), total(100, "{ env_clear = false }"))
    -- what the program sees: PATH and what opts.env adds
    local _, info = assert(callgrind.run({ "sh", "-c", "env | sort" }, { env = { GREETING = "hi" } }))
    local names = {}
    for name in info.stdout:gmatch("([%w_]+)=[^\n]*") do names[#names + 1] = name end
    -- PWD is sh's; valgrind adds its own (its preload, GLIBCXX_FORCE_NEW
    -- ...; Debian's valgrind LD_LIBRARY_PATH=/usr/lib/debug)
    local allowed = { GREETING = true, PATH = true, PWD = true, TMPDIR = true, VALGRIND_LIB = true, LD_PRELOAD = true,
      GLIBCPP_FORCE_NEW = true, GLIBCXX_FORCE_NEW = true, LD_LIBRARY_PATH = true }
    for _, name in ipairs(names) do assert.is_true(allowed[name] ~= nil, name) end
    assert.matches("GREETING=hi\n", info.stdout, 1, true)
    -- env_clear = false: the caller's environment, opts.env added
    local home = os.getenv("HOME") or ""
    _, info = assert(callgrind.run({ "sh", "-c", "echo \"$HOME $GREETING\"" },
      { env_clear = false, env = { GREETING = "hi" } }))
    assert.are.equal(home .. " hi\n", info.stdout)
  end)

  it("raises on misuse, naming the argument", function()
    assert.has_error(function() callgrind.run("prog") end,
      "bad argument #1 to 'run' (array of strings expected: { program, args... })")
    assert.has_error(function() callgrind.run({ exe }, { toggle_collect = 5 }) end,
      "bad argument #2 to 'run' (option 'toggle_collect' must be string or table, got 5)")
    assert.has_error(function() callgrind.run({ exe }, { timeot = 5 }) end,
      "bad argument #2 to 'run' (unknown option 'timeot'; options: allow_failure, args, branch_sim, cache_sim, "
      .. "collect_atstart, collect_jumps, cwd, dump_instr, env, env_clear, keep, separate_threads, stdin, timeout, "
      .. "toggle_collect, trace_children, valgrind)")
    for _, t in ipairs { 0, -1, 0 / 0, math.huge } do
      assert.has_error(function() callgrind.run({ exe }, { timeout = t }) end,
        "bad argument #2 to 'run' (opts.timeout must be a positive finite number of seconds, got " .. tostring(t)
        .. ")")
    end
  end)

  it("refuses environment keys that are not variable names (they would run as shell)", function()
    local pwned = lab.dir .. "/pwned"
    for _, key in ipairs { "X=1; touch " .. pwned .. "; Y", "1X", "A-B", "", "$(touch " .. pwned .. ")" } do
      assert.has_error(function() callgrind.run({ exe }, { env = { [key] = "v" } }) end,
        "bad argument #2 to 'run' (opts.env key '" .. key .. "' is not a variable name (letters, digits and _, "
        .. "not starting with a digit))")
    end
    assert.is_nil(io.open(pwned))
    assert.has_error(function() callgrind.run({ exe }, { env = { [1] = "v" } }) end,
      "bad argument #2 to 'run' (opts.env key 1 is not a variable name (letters, digits and _, not starting with a "
      .. "digit))")
  end)

  it("refuses a NUL byte in any path, argument or value", function()
    local cases = {
      { { exe .. "\0x" }, nil, "argv[1] contains a NUL byte: '" .. exe .. "\\0x'", 1 },
      { { exe, "a\0b" }, nil, "argv[2] contains a NUL byte: 'a\\0b'", 1 },
      { { exe }, { cwd = "/tmp\0/x" }, "opts.cwd contains a NUL byte: '/tmp\\0/x'", 2 },
      { { exe }, { keep = "k\0" }, "opts.keep contains a NUL byte: 'k\\0'", 2 },
      { { exe }, { valgrind = "valgrind\0" }, "opts.valgrind contains a NUL byte: 'valgrind\\0'", 2 },
      { { exe }, { args = { "--x\0" } }, "opts.args[1] contains a NUL byte: '--x\\0'", 2 },
      { { exe }, { env = { A = "v\0w" } }, "opts.env.A contains a NUL byte: 'v\\0w'", 2 },
      { { exe }, { toggle_collect = { "f\0" } }, "opts.toggle_collect[1] contains a NUL byte: 'f\\0'", 2 },
    }
    for _, c in ipairs(cases) do
      assert.has_error(function() callgrind.run(c[1], c[2]) end,
        ("bad argument #%d to 'run' (%s)"):format(c[4], c[3]))
    end
  end)

  it("gives each run sharing one keep directory a directory of its own", function()
    local keep = lab.dir .. "/shared-keep"
    local a, ia = assert(callgrind.run({ exe, "10" }, { keep = keep }))
    local b, ib = assert(callgrind.run({ exe, "20" }, { keep = keep }))
    assert.are.equal(keep, ia.dir)
    assert.matches("^" .. keep:gsub("%p", "%%%0") .. "/run%.%w+$", ib.dir)
    assert.are.equal(1, #ia.files)
    assert.are.equal(1, #ib.files)
    assert.are.equal(ib.dir, ib.files[1]:match("^(.*)/"))
    -- each profile is its own run's: the second did more work
    assert.is_true(b:total("Ir") > a:total("Ir"))
    -- another run's profile landing in keep while this one runs is not this run's
    local fib = H.read_file("spec/fixtures/fib.callgrind")
    H.write_file(lab.dir .. "/fib.callgrind", fib)
    local c, ic = assert(callgrind.run({ "sh", "-c", 'cp "$1" "$2/callgrind.out.424242"', "sh",
      lab.dir .. "/fib.callgrind", keep }, { keep = keep }))
    assert.are_not.equal(ib.dir, ic.dir)
    assert.are.same({ ic.files[1] }, ic.files)
    assert.is_nil(c:func("fib"))
    assert.is_truthy(io.open(keep .. "/callgrind.out.424242"))
  end)
end)
