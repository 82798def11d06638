-- callgrind-lua: the subcommands in-process (cli.main with a buffer for
-- output) and as a child process (bin/callgrind-lua).
local H = require "spec.support.helpers"

-- cli.main(argv) in-process: exit code, stdout, stderr
local run = require("spec.support.cli").run

local F = require "spec.support.files"
local tmpdir = F.tmpdir

local EXT = "spec/fixtures/extended.callgrind"

describe("callgrind-lua", function()
  it("top prints the summary and the top functions (examples/top.lua's output)", function()
    local code, out = run("top", "spec/fixtures/inline.callgrind", "2", "Dr")
    assert.are.equal(0, code)
    assert.are.equal(table.concat({
      "profile  spec/fixtures/inline.callgrind", "creator  ?", "command  ?", "totals   Ir 153, Dr 17",
      "size     3 functions, 2 calls, 1 part(s)", "", "top 2 functions by self Dr",
      "             Dr      %  function  (file; object)",
      "             10  58.8%  helper  (util.h; /bin/prog)",
      "              4  23.5%  strlen  (string.c; /lib/libc.so)", "" }, "\n"), out)
  end)

  it("tree draws the call tree below a function, or above it", function()
    local code, out = run("tree", EXT, "main")
    assert.are.equal(0, code)
    assert.are.equal(table.concat({
      "callees of main: Instructions, depth 3, threshold 1% (percentages of main's inclusive cost)",
      "820 (100.0%)  main", "400 ( 48.8%)  ├─ func1  [1 call]", "300 ( 36.6%)  │  └─ func2  [2 calls]",
      "400 ( 48.8%)  └─ func2  [3 calls]", "" }, "\n"), out)
    code, out = run("tree", EXT, "func2", "--callers", "--depth", "1")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("callers of func2", 1, true))
    local _, _, err = run("tree", EXT, "nothere")
    assert.are.equal("function nothere: not found: no function named 'nothere'", err:match("^[^\n]+"))
  end)

  it("annotate takes the source file as its second argument", function()
    local code, out = run("annotate", EXT, "file1.c")
    assert.are.equal(0, code)
    -- file1.c is not there to read: the costs per line, and why there is no text
    assert.is_truthy(out:find("\n-- Instructions of file1.c\n-- cannot open file1.c\n 20 (  2.4%)  line 16  main\n", 1,
      true))
  end)

  it("diff prints totals and movers", function()
    local code, out = run("diff", "spec/fixtures/moved-old.callgrind", "spec/fixtures/moved-new.callgrind")
    assert.are.equal(0, code)
    assert.are.equal("event  old  new        change", out:match("^[^\n]+"))
    assert.is_truthy(out:find("\n   Ir  117  144  +27 (+23.1%)\n", 1, true))
  end)

  it("folded, csv and dot write to stdout or to -o", function()
    local code, out = run("folded", EXT)
    assert.are.equal(0, code)
    -- main 820: func1 400 (func2 300 under it), func2 400, main keeps 20
    assert.are.equal("main 20\nmain;func1 100\nmain;func1;func2 300\nmain;func2 400\n", out)
    code, out = run("csv", EXT, "--top", "1")
    assert.are.equal(0, code)
    assert.are.equal("name,file,object,Instructions,Instructions.inclusive\r\nfunc2,file2.c,,700,700\r\n", out)
    code, out = run("csv", EXT, "--by", "file", "--json")
    assert.are.equal(0, code)
    assert.are.equal('[{"file":"file2.c","Instructions":700},\n{"file":"file1.c","Instructions":120}]\n', out)
    code, out = run("dot", EXT, "--root", "func1")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("f2 -> f3", 1, true))
    local dir = tmpdir()
    assert.are.equal(0, (run("folded", EXT, "-o", dir .. "/x.folded")))
    assert.are.equal("main 20\nmain;func1 100\nmain;func1;func2 300\nmain;func2 400\n", H.read_file(dir .. "/x.folded"))
    F.remove(dir)
  end)

  it("flame, dot and pprof write their files", function()
    local dir = tmpdir()
    assert.are.equal(0, (run("flame", EXT, "-o", dir .. "/f.svg")))
    assert.is_truthy(H.read_file(dir .. "/f.svg"):find("<title>func2\n400 Instructions (48.78%)</title>", 1, true))
    assert.are.equal(0, (run("flame", "spec/fixtures/moved-new.callgrind", "--old", "spec/fixtures/moved-old.callgrind",
      "-o", dir .. "/d.svg")))
    assert.is_truthy(H.read_file(dir .. "/d.svg"):find("red: more", 1, true))
    assert.are.equal(0, (run("pprof", EXT, "-o", dir .. "/p.pb.gz")))
    assert.are.equal("\31\139", H.read_file(dir .. "/p.pb.gz"):sub(1, 2))
    assert.are.equal(0, (run("dot", EXT, "-o", dir .. "/g.dot")))
    assert.are.equal("digraph callgraph {", H.read_file(dir .. "/g.dot"):match("^[^\n]+"))
    F.remove(dir)
  end)

  it("reads several files and compressed files as one profile", function()
    local dir = tmpdir()
    H.run("gzip -c " .. EXT .. " > " .. H.shq(dir .. "/e.gz"))
    local code, out = run("folded", dir .. "/e.gz")
    assert.are.equal(0, code)
    assert.are.equal("main 20\nmain;func1 100\nmain;func1;func2 300\nmain;func2 400\n", out)
    -- the same file twice: every cost doubled
    code, out = run("folded", EXT, dir .. "/e.gz")
    assert.are.equal(0, code)
    assert.are.equal("main 40\nmain;func1 200\nmain;func1;func2 600\nmain;func2 800\n", out)
    F.remove(dir)
  end)

  it("check exits 1 on a regression and 0 within the limits", function()
    local dir = tmpdir()
    H.write_file(dir .. "/tight.lua", 'return { Ir = "5%" }\n')
    H.write_file(dir .. "/loose.lua", 'return { Ir = "50%" }\n')
    local code, out = run("check", dir .. "/tight.lua", "spec/fixtures/moved-old.callgrind",
      "spec/fixtures/moved-new.callgrind")
    assert.are.equal(1, code)
    assert.are.equal("1 limit exceeded:", out:match("^[^\n]+"))
    code, out = run("check", dir .. "/loose.lua", "spec/fixtures/moved-old.callgrind",
      "spec/fixtures/moved-new.callgrind")
    assert.are.equal(0, code)
    assert.are.equal("within the limits", out:match("^[^\n]+"))
    H.write_file(dir .. "/bad.lua", "return 42\n")
    local _, err
    code, _, err = run("check", dir .. "/bad.lua", EXT, EXT)
    assert.are.equal(2, code)
    assert.are.equal(dir .. "/bad.lua: returns number, a table of limits expected", err:match("^[^\n]+"))
    F.remove(dir)
  end)

  it("has --help for each subcommand and says what is wrong with a command line", function()
    for _, name in ipairs({ "top", "tree", "annotate", "diff", "flame", "dot", "pprof", "folded", "csv", "check" }) do
      local code, out = run(name, "--help")
      assert.are.equal(0, code, name)
      assert.are.equal("usage: callgrind-lua " .. name, out:match("^usage: callgrind%-lua %S+"), name)
    end
    local code, out = run("--help")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("\n  flame ", 1, true))
    local _, err
    code, _, err = run("frobnicate")
    assert.are.equal(2, code)
    assert.are.equal("callgrind-lua: unknown command 'frobnicate'", err:match("^[^\n]+"))
    code, _, err = run("folded", EXT, "--threshold", "100")
    assert.are.equal(2, code)
    assert.are.equal("--threshold takes a percentage from 0 to under 100 (0.5 means 0.5%), got '100'",
      err:match("^[^\n]+"))
    code, _, err = run("flame", EXT)
    assert.are.equal(2, code)
    assert.are.equal("-o OUT.svg is needed", err:match("^[^\n]+"))
    code, _, err = run("folded", EXT, "--event", "Foo")
    assert.are.equal(2, code)
    assert.are.equal("unknown event Foo (this profile has: Instructions)", err:match("^[^\n]+"))
    code, _, err = run("folded", "spec/fixtures/none.callgrind")
    assert.are.equal(1, code)
    assert.are.equal("spec/fixtures/none.callgrind: No such file or directory\n", err)
    code, _, err = run("flame", EXT, "-o", "/nonexistent-dir/f.svg")
    assert.are.equal(1, code)
    assert.are.equal("/nonexistent-dir/f.svg: No such file or directory\n", err)
  end)

  it("runs as a program, with its exit code", function()
    local p = assert(io.popen("lua5.4 bin/callgrind-lua folded " .. EXT .. " 2>&1; echo \"exit $?\""))
    local out = p:read("a")
    p:close()
    -- stderr says which stacks the lines are
    local note = require("callgrind.export.stacks").describe(assert(require("callgrind").load(EXT)), "Instructions")
    assert.are.equal("callgrind-lua folded: Instructions: " .. note
      .. "\nmain 20\nmain;func1 100\nmain;func1;func2 300\nmain;func2 400\nexit 0\n", out)
    p = assert(io.popen("lua5.4 bin/callgrind-lua top 2>&1; echo \"exit $?\""))
    out = p:read("a")
    p:close()
    assert.are.equal("no profile given", out:match("^[^\n]+"))
    assert.are.equal("exit 2", out:match("exit %d+\n$"):sub(1, -2))
  end)
end)

describe("callgrind-lua flame of folded stacks", function()
  -- the <title>s of an SVG's frames, in order: "name\ncost Ev (share%)"
  local function titles(path)
    local t = {}
    for s in H.read_file(path):gmatch("<title>(.-)</title>") do t[#t + 1] = s end
    return t
  end

  it("draws a .folded file as its lines give the stacks, names unescaped", function()
    local dir = tmpdir()
    -- d costs 1 under a;c and 100 under b;c: what no call graph can tell
    H.write_file(dir .. "/x.folded", "main;a;c;d 1\nmain;a;c 2\n\nmain;b;c;d 100\r\nmain;b;c 2\nmain 3\nmain;x\\;y 0\n")
    assert.are.equal(0, (run("flame", dir .. "/x.folded", "-o", dir .. "/x.svg")))
    assert.are.same({ "all\n108 Instr (100.00%)", "main\n108 Instr (100.00%)", "a\n3 Instr (2.78%)",
      "c\n3 Instr (2.78%)", "d\n1 Instr (0.93%)", "b\n102 Instr (94.44%)", "c\n102 Instr (94.44%)",
      "d\n100 Instr (92.59%)" }, titles(dir .. "/x.svg"))
    assert.is_truthy(H.read_file(dir .. "/x.svg"):find(">" .. dir .. "/x.folded: 108 Instr<", 1, true))
    -- --event names what the counts count; a frame of no cost is not drawn
    H.write_file(dir .. "/y.folded", "main;x\\;y 3\nmain 1\n")
    assert.are.equal(0, (run("flame", dir .. "/y.folded", "--event", "samples", "-o", dir .. "/y.svg")))
    assert.are.same({ "all\n4 samples (100.00%)", "main\n4 samples (100.00%)", "x;y\n3 samples (75.00%)" },
      titles(dir .. "/y.svg"))
    F.remove(dir)
  end)

  it("names the file and line of a line that is not a folded stack", function()
    local dir = tmpdir()
    H.write_file(dir .. "/bad.folded", "main 1\nmain;f\n")
    local code, _, err = run("flame", dir .. "/bad.folded", "-o", dir .. "/b.svg")
    assert.are.equal(1, code)
    assert.are.equal(dir .. "/bad.folded:2: not a folded stack (frames, a blank and a count): main;f",
      err:match("^[^\n]+"))
    assert.is_false(require("callgrind.util").file_exists(dir .. "/b.svg"))
    F.remove(dir)
  end)

  -- a script with d called from two contexts, profiled with CALLGRIND_STACKS=how
  local function ctx_profile(dir, how, out)
    H.write_file(dir .. "/ctx.lua", table.concat({
      "local function d(n) local s = 0 for i = 1, n do s = s + i end return s end",
      "local function c(n) return d(n) + 1 end",
      "local function a() return c(1) + 1 end",
      "local function b() return c(100) + 1 end",
      "print(a() + b())", "" }, "\n"))
    -- LD_PRELOAD is kept (not H.run): under make check-asan, cpath names the ASan build
    assert.is_true(os.execute(("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s CALLGRIND_OUT=%s CALLGRIND_STACKS=%s "
      .. "lua5.4 -lcallgrind.start %s > /dev/null"):format(H.shq(package.path), H.shq(package.cpath), H.shq(out),
      how, H.shq(dir .. "/ctx.lua"))))
  end

  -- the frames a flame graph drew with their costs, and the d under a;c and b;c
  local function drawn_of(svg, d_under_a, d_under_b)
    local drawn = {}
    for name, cost in svg:gmatch("<title>(%a)\n(%d+) Instr") do drawn[#drawn + 1] = name .. "=" .. cost end
    assert.are.same({ "a=" .. drawn[1]:match("%d+"), "c=" .. drawn[2]:match("%d+"), "d=" .. d_under_a,
      "b=" .. drawn[4]:match("%d+"), "c=" .. drawn[5]:match("%d+"), "d=" .. d_under_b }, drawn)
  end

  it("draws a Lua profile's own stacks from its stack record FILE.stacks; another run's is refused", function()
    local dir = tmpdir()
    local out = dir .. "/p.cg"
    ctx_profile(dir, "1", out)
    assert.is_nil(io.open(out .. ".folded"))
    -- the stacks the profiler recorded, as folded text: d under a;c and under b;c
    local code, folded, err = run("folded", out)
    assert.are.equal(0, code)
    assert.are.equal("callgrind-lua folded: Instr: stacks from " .. out .. ".stacks (exact, all of them)\n", err)
    local d_under_a = tonumber(folded:match(";a;c;d (%d+)\n"))
    local d_under_b = tonumber(folded:match(";b;c;d (%d+)\n"))
    assert.is_true(d_under_b > 20 * d_under_a, folded)
    -- the record alone gives the same text
    local code2, folded2 = run("folded", out .. ".stacks")
    assert.are.equal(0, code2)
    assert.are.equal(folded, folded2)
    assert.are.equal(0, (run("flame", out, "-o", dir .. "/exact.svg")))
    local svg = H.read_file(dir .. "/exact.svg")
    assert.is_truthy(svg:find("(stacks from " .. out .. ".stacks)", 1, true))
    drawn_of(svg, d_under_a, d_under_b)
    -- the record of another run (the same script: another pid, another
    -- profile digest) is refused: the estimate is drawn, the title says why
    ctx_profile(dir, "1", dir .. "/q.cg")
    assert(os.rename(dir .. "/q.cg.stacks", out .. ".stacks"))
    assert.are.equal(0, (run("flame", out, "-o", dir .. "/est.svg")))
    svg = H.read_file(dir .. "/est.svg")
    assert.is_truthy(svg:find("(stacks estimated from the call graph; " .. out .. ".stacks is another run's)", 1,
      true), svg:sub(1, 2000))
    local est_d_under_a = tonumber(svg:match("<title>a\n.-<title>d\n(%d+) Instr"))
    assert.are_not.equal(d_under_a, est_d_under_a)
    local code3, _, err3 = run("folded", out)
    assert.are.equal(0, code3)
    assert.is_truthy(err3:find("the stack record was refused: " .. out .. ".stacks is another run's stack record", 1,
      true), err3)
    F.remove(dir)
  end)

  it("draws a Lua profile's own stacks from FILE.folded (CALLGRIND_STACKS=folded), when they add up", function()
    local dir = tmpdir()
    local out = dir .. "/p.cg"
    ctx_profile(dir, "folded", out)
    assert.is_nil(io.open(out .. ".stacks"))
    local folded = H.read_file(out .. ".folded")
    local d_under_a = tonumber(folded:match(";a;c;d (%d+)\n"))
    local d_under_b = tonumber(folded:match(";b;c;d (%d+)\n"))
    assert.is_true(d_under_b > 20 * d_under_a, folded)
    assert.are.equal(0, (run("flame", out, "-o", dir .. "/exact.svg")))
    local svg = H.read_file(dir .. "/exact.svg")
    assert.is_truthy(svg:find("(stacks from " .. out .. ".folded)", 1, true))
    drawn_of(svg, d_under_a, d_under_b)
    -- stacks of another run (a different total) are not used: the estimate is drawn
    H.write_file(out .. ".folded", "main chunk 5\n")
    assert.are.equal(0, (run("flame", out, "-o", dir .. "/est.svg")))
    svg = H.read_file(dir .. "/est.svg")
    assert.is_truthy(svg:find("(stacks estimated from the call graph", 1, true))
    local est_d_under_a = tonumber(svg:match("<title>a\n.-<title>d\n(%d+) Instr"))
    assert.are_not.equal(d_under_a, est_d_under_a)
    F.remove(dir)
  end)
end)

describe("make install PREFIX=DIR", function()
  it("installs the module folders, and DIR/bin/callgrind-lua finds them from any directory", function()
    local dir = tmpdir()
    local build = os.getenv("CALLGRIND_BUILD") or "build"
    assert.is_true(os.execute(("make -s install PREFIX=%s BUILD=%s > /dev/null"):format(H.shq(dir), H.shq(build))))
    assert.is_truthy(io.open(dir .. "/share/lua/5.4/callgrind/check/luassert.lua"))
    assert.is_truthy(io.open(dir .. "/share/lua/5.4/callgrind/export/flame.lua"))
    -- from another directory, with no LUA_PATH: the installed copy only
    local p = assert(io.popen(("cd / && env -u LUA_PATH -u LUA_PATH_5_4 -u LUA_CPATH -u LUA_CPATH_5_4 %s top %s 2>&1")
      :format(H.shq(dir .. "/bin/callgrind-lua"), H.shq(os.getenv("PWD") .. "/" .. EXT))))
    local out = p:read("a")
    p:close()
    assert.is_truthy(out:find("totals   Instructions 820", 1, true), out)
    F.remove(dir)
  end)
end)
