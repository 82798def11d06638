-- docs/cli.md, the command line's reference, is made by tools/gen_docs.lua
-- (make docs) from the declaration that --help prints: the committed file
-- must be what it makes now, and hold every command's --help whole.
local cli = require "callgrind.cli"
local run = require("spec.support.cli").run
local H = require "spec.support.helpers"

describe("docs/cli.md", function()
  local doc = H.read_file("docs/cli.md")

  it("is what tools/gen_docs.lua makes from the command line's declaration", function()
    local gen = dofile("tools/gen_docs.lua")
    assert.are.equal(gen.cli_reference(), doc, "docs/cli.md is stale: regenerate it with make docs")
  end)

  it("holds --help and every command's --help as the command prints them", function()
    local code, help = run("--help")
    assert.are.equal(0, code)
    assert.is_truthy(doc:find("```text\n" .. help .. "```\n", 1, true))
    for _, name in ipairs(cli.commands()) do
      local usage
      code, usage = run(name, "--help")
      assert.are.equal(0, code, name)
      assert.is_truthy(doc:find("\n## " .. name .. "\n\n```text\n" .. usage .. "```\n", 1, true), name)
    end
  end)

  it("lists each environment variable and exit status", function()
    for _, v in ipairs(cli.environment()) do assert.is_truthy(doc:find("| `" .. v[1] .. "` |", 1, true), v[1]) end
    for _, e in ipairs(cli.exit_statuses()) do assert.is_truthy(doc:find("\n| " .. e[1] .. " | ", 1, true)) end
  end)

  it("is linked from the README", function()
    assert.is_truthy(H.read_file("README.md"):find("(docs/cli.md)", 1, true))
  end)
end)
