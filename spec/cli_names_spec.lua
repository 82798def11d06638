-- callgrind-lua names a profile as the user did: given `slow.out`, the
-- name valgrind was given, for its thread files slow.out-01 and
-- slow.out-02, every title and message says slow.out, never its first
-- file.
local H = require "spec.support.helpers"
local F = require "spec.support.files"
local run = require("spec.support.cli").run

local BODY = H.read_file("spec/fixtures/report.callgrind")

describe("callgrind-lua's titles", function()
  local dir, name
  setup(function()
    dir = F.tmpdir()
    name = dir .. "/slow-thr.out"
    for t = 1, 2 do
      H.write_file(string.format("%s-%02d", name, t), string.format("pid: 7\ncmd: slow\nthread: %d\n%s", t, BODY))
    end
    H.write_file(dir .. "/limits.lua", 'return { Ir = "5%" }\n')
  end)
  teardown(function() F.remove(dir) end)

  local function says(out, what)
    assert.is_truthy(out:find(name, 1, true), what .. " does not name " .. name)
    assert.is_falsy(out:find(name .. "-01", 1, true), what .. " names the first file")
  end

  it("of diff and check end with old: and new: as given", function()
    local code, out = run("diff", name, name)
    assert.are.equal(0, code)
    assert.are.equal("old: " .. name .. "\nnew: " .. name .. "\n", out:match("old: .*$"))
    code, out = run("check", dir .. "/limits.lua", name, name)
    assert.are.equal(0, code)
    assert.are.equal("old: " .. name .. "\nnew: " .. name .. "\n", out:match("old: .*$"))
  end)

  it("of dot, flame and report, and a report's diff", function()
    local code, out = run("dot", name)
    assert.are.equal(0, code)
    assert.is_truthy(out:find('label="' .. name .. ': 2,600 Ir"', 1, true))
    says(out, "dot")
    code, out = run("flame", name, "-o", "-")
    assert.are.equal(0, code)
    assert.is_truthy(out:find(name .. ": 2,600 Ir", 1, true))
    says(out, "flame")
    code, out = run("report", name, "-o", "-")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("<title>callgrind report: " .. name .. "</title>", 1, true))
    says(out, "report")
    code, out = run("report", name, "--old", name, "-o", "-")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("<title>callgrind diff: " .. name .. " -&gt; " .. name .. "</title>", 1, true))
    says(out, "report --old")
  end)
end)
