-- callgrind-lua check: a limits file that is not Lua, returns no table,
-- names an event neither profile has or a limit that means nothing is a
-- usage mistake (exit 2, the usage after the message); a regression is
-- exit 1, reported once per function and event even where "*" and the
-- function's own limit both apply.
local H = require "spec.support.helpers"
local F = require "spec.support.files"
local run = require("spec.support.cli").run
local callgrind = require "callgrind"

local OLD = "spec/fixtures/report.callgrind"

describe("callgrind-lua check", function()
  local dir, new
  setup(function()
    dir = F.tmpdir()
    -- main's own cost 100 -> 200: main's inclusive Ir 1,300 -> 1,400 (+7.7%)
    new = dir .. "/new.out"
    H.write_file(new, (H.read_file(OLD):gsub("\n1 100 10\n", "\n1 200 10\n")))
  end)
  teardown(function() F.remove(dir) end)

  local function limits(name, text)
    local path = dir .. "/" .. name
    H.write_file(path, text)
    return path
  end

  it("reports a function under its own limit only, not again under *", function()
    local path = limits("both.lua", 'return { functions = { ["*"] = { Ir = "1%" }, main = { Ir = "2%" } } }\n')
    local code, out = run("check", path, OLD, new)
    assert.are.equal(1, code)
    assert.are.equal(table.concat({ "1 limit exceeded:",
      "  Ir of main (inclusive): 1,300 -> 1,400 +100 (+7.7%), limit +2%" }, "\n"),
      out:match("^([^\n]*\n[^\n]*)"))
    -- the library the same; "*" still judges main on an event main has no limit of its own for
    local ok, msg = callgrind.check_no_regression(callgrind.load(OLD), callgrind.load(new),
      { functions = { ["*"] = { Ir = "1%", Dr = "0%" }, main = { Ir = "50%" } } })
    assert.is_true(ok, msg)
    ok, msg = callgrind.check_no_regression(callgrind.load(OLD), callgrind.load(new),
      { functions = { ["*"] = { Ir = "1%" }, main = { Dr = "0%" } } })
    assert.is_false(ok)
    assert.are.equal("1 limit exceeded:\n  Ir of main (inclusive): 1,300 -> 1,400 +100 (+7.7%), limit +1%",
      msg:match("^([^\n]*\n[^\n]*)"))
  end)

  it("calls a misspelt event a usage error (exit 2), with the events there are and the closest", function()
    local path = limits("irr.lua", 'return { Irr = "5%" }\n')
    local code, out, err = run("check", path, OLD, new)
    assert.are.equal(2, code)
    assert.are.equal("", out)
    assert.are.equal(path .. ": unknown event Irr (the profiles have: Ir Dr); did you mean Ir?",
      err:match("^[^\n]+"))
    assert.is_truthy(err:find("\nusage: callgrind-lua check LIMITS OLD NEW\n", 1, true))
    path = limits("fdr.lua", 'return { functions = { main = { dr = "5%" } } }\n')
    local _
    code, _, err = run("check", path, OLD, new)
    assert.are.equal(2, code)
    assert.are.equal(path .. ": functions.main: unknown event dr (the profiles have: Ir Dr); did you mean Dr?",
      err:match("^[^\n]+"))
  end)

  it("exits 2 on a limits file with a syntax error, that raises or returns no table, as on a bad value", function()
    local cases = {
      { "syntax.lua", "return { Ir = \n",
        "the limits file is not Lua: " .. dir .. "/syntax.lua:2: unexpected symbol near <eof>" },
      { "raises.lua", "local t\nreturn t.Ir\n",
        "the limits file raised an error: " .. dir .. "/raises.lua:2: attempt to index a nil value (local 't')" },
      { "number.lua", "return 42\n", dir .. "/number.lua: returns number, a table of limits expected" },
      { "value.lua", 'return { Ir = "abc" }\n', "Ir: limit 'abc' is not a percentage like \"5%\"" },
    }
    for _, c in ipairs(cases) do
      local code, out, err = run("check", limits(c[1], c[2]), OLD, new)
      assert.are.equal(2, code, c[1])
      assert.are.equal("", out, c[1])
      assert.are.equal(c[3], err:match("^[^\n]+"), c[1])
    end
    -- a limits file that is not there is a missing input: 1
    local code, _, err = run("check", dir .. "/none.lua", OLD, new)
    assert.are.equal(1, code)
    assert.are.equal(dir .. "/none.lua: No such file or directory\n", err)
  end)
end)
