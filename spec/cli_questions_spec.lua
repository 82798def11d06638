-- callgrind-lua's everyday questions (issue 31, point 1): a function named
-- NAME, FILE:NAME or OBJECT:NAME (or --file/--object) on every command
-- that names one; callers of a small function shown with a threshold
-- relative to it; one threshold unit (percent); top --inclusive; hot;
-- --raw; -o - for standard output; errors in the command line's words;
-- exit codes 0, 1 and 2. Numbers are checked against the library's API.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"
local F = require "spec.support.files"

-- cli.main(argv) in-process: exit code, stdout, stderr
local run = require("spec.support.cli").run

-- Two functions named "main chunk" (a script and the module it requires),
-- and "small", 0.5% of the total, called from both.
local TEXT = table.concat({
  "version: 1", "creator: hand", "events: Ir",
  "fl=app.lua", "fn=main chunk", "1 100",
  "cfl=lib/mod.lua", "cfn=main chunk", "calls=1 1", "2 400",
  "cfl=util.lua", "cfn=small", "calls=3 1", "3 3",
  "fl=lib/mod.lua", "fn=main chunk", "1 395",
  "cfl=util.lua", "cfn=small", "calls=2 1", "2 2",
  "fl=util.lua", "fn=small", "5 3", "6 2",
  "fl=big.lua", "fn=big", "1 500", "" }, "\n")

local dir, path, prof

setup(function()
  dir = F.tmpdir()
  path = dir .. "/q.out"
  H.write_file(path, TEXT)
  prof = assert(callgrind.load(path))
end)
teardown(function() F.remove(dir) end)

describe("callgrind-lua names a function", function()
  it("lists the choices of an ambiguous name in FILE:NAME syntax, exit 2", function()
    local code, out, err = run("tree", path, "main chunk")
    assert.are.equal(2, code)
    assert.are.equal("", out)
    assert.are.equal("function main chunk is ambiguous: 2 functions of that name; give one of: "
      .. "app.lua:main chunk, lib/mod.lua:main chunk (or --file FILE, --object OBJECT)", err:match("^[^\n]+"))
    assert.are.equal(2, (run("hot", path, "main chunk")))
    assert.are.equal(2, (run("dot", path, "--root", "main chunk")))
  end)

  it("takes FILE:NAME (the file's last components do), and --file", function()
    local want = prof:func("main chunk", "lib/mod.lua")
    for _, args in ipairs({ { "lib/mod.lua:main chunk" }, { "mod.lua:main chunk" },
      { "main chunk", "--file", "lib/mod.lua" } }) do
      local code, out = run("tree", path, table.unpack(args))
      assert.are.equal(0, code, table.concat(args, " "))
      assert.are.equal(tostring(want:inclusive("Ir")) .. " (100.0%)  main chunk", out:match("\n([^\n]+)"))
    end
    local code, out = run("dot", path, "--root", "app.lua:main chunk")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("main chunk", 1, true))
    local _, _, err = run("tree", path, "nothere.lua:main chunk")
    assert.matches("^function nothere.lua:main chunk: not found", err)
  end)
end)

describe("callgrind-lua tree --callers", function()
  it("shows the callers of a 0.5% function: the threshold is a share of that function", function()
    local small = prof:func("small")
    assert.are.equal(0.005, small:inclusive("Ir") / prof:total("Ir"))
    local code, out = run("tree", path, "small", "--callers", "--depth", "1")
    assert.are.equal(0, code)
    local edges = small:caller_functions():sort("Ir")
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal("callers of small: Ir, depth 1, threshold 1% (percentages of small's inclusive cost)", lines[1])
    assert.are.equal("5 (100.0%)  small", lines[2])
    assert.are.equal(2, #edges)
    for i = 1, #edges do
      local v = edges:cost(i, "Ir")
      local want = ("^%d %%( ?%.1f%%%%%%)  .-─ main chunk  %%[%d calls?[^]]*%%]$"):format(v, 100 * v / 5,
        edges[i].count)
      assert.matches(want, lines[2 + i])
    end
    -- --threshold 50: a share of small, in percent; the caller under it is left out
    code, out = run("tree", path, "small", "--callers", "--depth", "1", "--threshold", "50")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("(1 more below 50%)", 1, true), out)
  end)
end)

describe("callgrind-lua top and hot", function()
  it("top --inclusive ranks by inclusive cost, as prof:top(n, ev, \"inclusive\")", function()
    local code, out = run("top", path, "3", "--inclusive", "--raw")
    assert.are.equal(0, code)
    local want = {}
    for _, fn in ipairs(prof:top(3, "Ir", "inclusive")) do
      want[#want + 1] = ("%d\t%.2f\t%s\t%s\t"):format(fn:inclusive("Ir"), 100 * fn:inclusive("Ir") / 1000, fn.name,
        fn.file)
    end
    assert.are.equal(table.concat(want, "\n") .. "\n", out)
    code, out = run("top", path, "3", "--inclusive")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("\ntop 3 functions by inclusive Ir\n", 1, true))
    assert.is_truthy(out:find("\n            503  50.3%  main chunk  (app.lua; ?)\n", 1, true))
  end)

  it("hot gives a function's hottest lines and call sites, numbers of fn:lines() and fn:calls()", function()
    local code, out = run("hot", path, "app.lua:main chunk", "--raw")
    assert.are.equal(0, code)
    -- line 2: the call into lib/mod.lua's main chunk (400), line 3: small (3), line 1: self 100;
    -- shares of the profile's total, as in top
    local fn = prof:func("main chunk", "app.lua")
    local by = {}
    for call in fn:calls() do by[call.line] = call:cost("Ir") end
    local total = prof:total("Ir")
    assert.are.equal(("%d\t%.2f\t0\tapp.lua\t2\tmain chunk(1)\n"):format(by[2], 100 * by[2] / total)
      .. ("100\t%.2f\t100\tapp.lua\t1\t\n"):format(100 * 100 / total)
      .. ("%d\t%.2f\t0\tapp.lua\t3\tsmall(3)\n"):format(by[3], 100 * by[3] / total), out)
    code, out = run("hot", path, "small", "--top", "1")
    assert.are.equal(0, code)
    assert.are.equal(table.concat({ "hottest lines of small (util.lua; ?): self 5, inclusive 5 Ir (% of the total "
      .. callgrind.format.commas(total) .. ")",
      "             Ir      %            self  line  (calls made there)",
      ("              3 %5.1f%%               3  util.lua:5"):format(300 / total), "(1 more line)", "" }, "\n"), out)
  end)
end)

describe("callgrind-lua outputs and errors", function()
  it("writes every output to standard output with -o -", function()
    local code, out = run("flame", path, "-o", "-")
    assert.are.equal(0, code)
    assert.are.equal(prof:flamegraph("Ir"), out)
    code, out = run("dot", path, "-o", "-")
    assert.are.equal(0, code)
    assert.are.equal(prof:dot("Ir"), out)
    code, out = run("folded", path, "-o", "-")
    assert.are.equal(0, code)
    assert.are.equal(prof:folded("Ir"), out)
    code, out = run("pprof", path, "-o", "-")
    assert.are.equal(0, code)
    assert.are.equal("\31\139", out:sub(1, 2))
  end)

  it("takes every threshold in percent", function()
    -- 0.3 is 0.3%: what the library gives for 0.003 (the estimate keeps
    -- every function's self cost whatever the threshold, so DOT's nodes
    -- below show the unit)
    local _, out = run("folded", path, "--threshold", "0.3")
    assert.are.equal(prof:folded("Ir", { threshold = 0.003 }), out)
    _, out = run("dot", path, "--node-threshold", "0.6")
    assert.are.equal(prof:dot("Ir", { node_threshold = 0.006 }), out)
    for _, cmd in ipairs({ "tree", "hot", "annotate", "flame", "dot", "pprof", "folded" }) do
      local _, help = run(cmd, "--help")
      assert.is_truthy(help:find("thresholds are percentages: --threshold 0.5 means 0.5%", 1, true), cmd)
      assert.is_truthy(help:find("exit status: 0 done, 1 a check failed or an input was bad, 2 a usage error", 1,
        true), cmd)
    end
  end)

  it("answers in the command line's words, never a Lua argument number", function()
    for _, args in ipairs({ { "flame", path, "--threshold", "1", "-o", dir .. "/x.svg", "--threshold", "100" },
      { "folded", path, "--threshold", "-1" }, { "dot", path, "--edge-threshold", "x" },
      { "pprof", path, "-o", "-", "--threshold", "200" }, { "tree", path, "small", "--threshold", "101" } }) do
      local code, _, err = run(table.unpack(args))
      assert.are.equal(2, code, table.concat(args, " "))
      assert.matches("^%-%-[%w-]+ takes a percentage from 0 to under 100", err)
      assert.is_falsy(err:find("bad argument", 1, true))
    end
  end)

  it("exits 0 when done, 1 on a bad input or a failed check, 2 on a usage error", function()
    assert.are.equal(0, (run("top", path)))
    local empty = dir .. "/empty.out"
    H.write_file(empty, "")
    local code, _, err = run("top", empty)
    assert.are.equal(1, code)
    assert.are.equal(empty .. ": empty file\n", err)
    assert.are.equal(1, (run("top", dir .. "/missing.out")))
    H.write_file(dir .. "/limits.lua", "return { Ir = \"1%\" }")
    H.write_file(dir .. "/more.out", (TEXT:gsub("1 500", "1 1000")))
    assert.are.equal(1, (run("check", dir .. "/limits.lua", path, dir .. "/more.out")))
    assert.are.equal(0, (run("check", dir .. "/limits.lua", path, path)))
    assert.are.equal(2, (run("top", path, "--frobnicate")))
    assert.are.equal(2, (run("frobnicate")))
    assert.are.equal(2, (run("tree", path, "nothere")))
    assert.are.equal(2, (run("flame", path)))
    local _, help = run("--help")
    assert.is_truthy(help:find("exit status: 0 done, 1 a check failed or an input was bad, 2 a usage error", 1, true))
  end)
end)

describe("callgrind-lua flame --old --title", function()
  it("keeps the diff's totals and legend after the title", function()
    local old = "spec/fixtures/moved-old.callgrind"
    local new = "spec/fixtures/moved-new.callgrind"
    local code, out = run("flame", new, "--old", old, "--title", "My build", "-o", "-")
    assert.are.equal(0, code)
    local d = callgrind.diff(callgrind.load(old), callgrind.load(new))
    local o, n = d:total("Ir")
    local head = ("My build: %d Ir -&gt; %d Ir (red: more, blue: less, purple: only in the new, "):format(o, n)
    assert.is_truthy(out:find(head, 1, true))
    assert.are.equal(d:flamegraph("Ir", { title = "My build" }), out)
  end)
end)

describe("callgrind-lua flame colours by object", function()
  it("gives three objects three colours far apart, the costliest first", function()
    local text = table.concat({ "events: Ir",
      "ob=/usr/bin/pigz", "fn=main", "1 50", "cob=/lib/libc.so.6", "cfn=memcpy", "calls=1 1", "2 30",
      "cob=/lib/ld.so", "cfn=_dl_start", "calls=1 1", "3 20",
      "ob=/lib/libc.so.6", "fn=memcpy", "1 30", "ob=/lib/ld.so", "fn=_dl_start", "1 20", "" }, "\n")
    local objs = dir .. "/objs.out"
    H.write_file(objs, text)
    local code, out = run("flame", objs, "-o", "-")
    assert.are.equal(0, code)
    local fill = {}
    for name, c in out:gmatch('<title>([^\n<]+)\n[^<]*</title><rect[^>]-fill="(#%x+)"') do fill[name] = c end
    local palette = require("callgrind.export.flame").PALETTE
    assert.are.same({ main = palette[1], memcpy = palette[2], _dl_start = palette[3] },
      { main = fill.main, memcpy = fill.memcpy, _dl_start = fill._dl_start })
    local function rgb(c) return tonumber(c:sub(2, 3), 16), tonumber(c:sub(4, 5), 16), tonumber(c:sub(6, 7), 16) end
    for i = 1, #palette do
      for j = i + 1, #palette do
        local r1, g1, b1 = rgb(palette[i])
        local r2, g2, b2 = rgb(palette[j])
        assert.is_true(math.sqrt((r1 - r2) ^ 2 + (g1 - g2) ^ 2 + (b1 - b2) ^ 2) > 60, palette[i] .. " " .. palette[j])
      end
    end
  end)
end)

describe("callgrind-lua top's head and columns", function()
  it("shows callgrind's summary a few counts above its cost lines as a note, and a larger gap as a warning", function()
    local function file(summary)
      local p = dir .. "/summary-" .. summary .. ".out"
      H.write_file(p, table.concat({ "version: 1", "creator: callgrind-3.19.0", "events: Ir",
        "summary: " .. summary, "fl=a.c", "fn=main", "1 100", "totals: 100", "" }, "\n"))
      return p
    end
    local code, out = run("top", file(102))
    assert.are.equal(0, code)
    assert.truthy(out:find("\nnote     " .. dir .. "/summary-102.out:4: summary: above the cost lines "
      .. "(callgrind counts a few more): Ir 102 written, 100 summed\n", 1, true), out)
    assert.is_nil(out:find("\nwarning", 1, true))
    code, out = run("top", file(150))
    assert.are.equal(0, code)
    assert.truthy(out:find("\nwarning  " .. dir .. "/summary-150.out:4: summary: does not match the cost lines: "
      .. "Ir 150 written, 100 summed\n", 1, true), out)
  end)

  it("has no object column for a Lua profile, whose functions have none", function()
    local p = dir .. "/lua.out"
    H.write_file(p, table.concat({ "version: 1", "creator: callgrind.lua profiler", "events: Instr",
      "fl=app.lua", "fn=work", "3 10", "" }, "\n"))
    local code, out = run("top", p)
    assert.are.equal(0, code)
    assert.truthy(out:find("function  (file)\n", 1, true), out)
    assert.truthy(out:find("  work  (app.lua)\n", 1, true), out)
  end)
end)
