-- callgrind-lua's options where they apply: --lenient on every command
-- that reads a profile, --threshold on top and hot as their help says,
-- the percentage line only in the help of a command that takes one; a
-- directory given as FILE is called one.
local H = require "spec.support.helpers"
local F = require "spec.support.files"
local cli = require "callgrind.cli"
local run = require("spec.support.cli").run
local callgrind = require "callgrind"

local P = "spec/fixtures/report.callgrind"

describe("callgrind-lua --lenient", function()
  local dir, bad
  setup(function()
    dir = F.tmpdir()
    bad = dir .. "/bad.out"
    H.write_file(bad, "events: Ir\nfn=main\n1 5\nbogus line\n2 7\n")
  end)
  teardown(function() F.remove(dir) end)

  it("skips a bad line where a strict load fails, on every command that reads a profile", function()
    local code, _, err = run("csv", bad)
    assert.are.equal(1, code)
    assert.are.equal(bad .. ":4: expected a cost, name or header line, found 'bogus line'\n", err)
    local out
    code, out = run("csv", "--lenient", bad)
    assert.are.equal(0, code)
    -- the library's lenient load: main's 5 + 7
    assert.are.equal(12, callgrind.load(bad, { lenient = true }):func("main"):self("Ir"))
    assert.are.equal("name,file,object,Ir,Ir.inclusive\r\nmain,,,12,12\r\n", out)
    -- top shows the line it skipped
    code, out = run("top", bad, "--lenient")
    assert.are.equal(0, code)
    local warning = "\nwarning  " .. bad .. ":4: expected a cost, name or header line, found 'bogus line'\n"
    assert.is_truthy(out:find(warning, 1, true), out)
    for _, name in ipairs(cli.commands()) do
      local usage = cli.usage(name)
      -- (history reads records and profiles the library writes)
      if name == "exec" or name == "spread" or name == "history" then
        assert.is_falsy(usage:find("--lenient", 1, true), name)
      else
        assert.is_truthy(usage:find("\n  --lenient  skip a bad line", 1, true), name)
      end
    end
  end)
end)

describe("callgrind-lua --threshold", function()
  it("leaves out top's functions below a share of the total", function()
    -- self Ir: work 1,000 (76.9%), helper 200 (15.4%), main 100 (7.7%)
    local code, out = run("top", P, "--threshold", "10", "--raw")
    assert.are.equal(0, code)
    assert.are.equal("1000\t76.92\twork\tlib.c\tlibc.so\n200\t15.38\thelper\tlib.c\tlibc.so\n", out)
    code, out = run("top", P, "--threshold", "20")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("\ntop 15 functions by self Ir, from 20% of the total\n", 1, true))
    local last = "function  (file; object)\n          1,000  76.9%  work  (lib.c; libc.so)\n"
    assert.are.equal(last, out:sub(-#last))
  end)

  it("leaves out hot's lines below a share of the total", function()
    -- work's lines: 20 (1,000 self), 21 (200: the calls to helper)
    local code, out = run("hot", P, "work", "--threshold", "50", "--raw")
    assert.are.equal(0, code)
    assert.are.equal("1000\t76.92\t1000\tlib.c\t20\t\n", out)
    code, out = run("hot", P, "work", "--threshold", "50")
    assert.are.equal(0, code)
    assert.are.equal("(1 line below 50% of the total left out)\n", out:match("[^\n]*\n$"))
    code = run("hot", P, "work", "--threshold", "100")
    assert.are.equal(2, code)
  end)

  it("is in the help of the commands that take a percentage, and only theirs", function()
    for _, name in ipairs(cli.commands()) do
      local usage = cli.usage(name)
      local says = usage:find("thresholds are percentages", 1, true) ~= nil
      local takes = usage:find("--threshold PCT", 1, true) or usage:find("--node-threshold PCT", 1, true)
      assert.are.equal(takes ~= nil, says, name)
    end
    for _, name in ipairs({ "top", "hot" }) do
      assert.is_truthy(cli.usage(name):find("--threshold PCT", 1, true), name)
    end
  end)
end)

describe("callgrind-lua given a directory", function()
  it("says it is a directory, not an empty file", function()
    local dir = F.tmpdir()
    local code, _, err = run("top", dir)
    assert.are.equal(1, code)
    assert.are.equal(dir .. ": Is a directory\n", err)
    F.remove(dir)
  end)
end)
