-- callgrind-lua annotate FILE SOURCE shows the source file's text beside
-- the costs when the file can be read (as callgrind_annotate does): found
-- as the profile names it, beside the profile, or under --root.
local H = require "spec.support.helpers"
local F = require "spec.support.files"
local run = require("spec.support.cli").run

-- main's lines 1, 3 and 4 cost 3, 5 (and a call to work of 40) and 2 Ir
local PROFILE = "events: Ir\nfl=m.c\nfn=main\n1 3\n3 5\ncfn=work\ncalls=1 1\n3 40\n4 2\nfn=work\n9 40\n"
local SOURCE = "int main(void)\n{\n  work();\n  return 0;\n}\n"

describe("callgrind-lua annotate FILE SOURCE", function()
  local dir
  setup(function()
    dir = F.tmpdir()
    H.write_file(dir .. "/m.out", PROFILE)
    H.write_file(dir .. "/m.c", SOURCE)
    assert(os.execute("mkdir " .. H.shq(dir .. "/elsewhere")))
    H.write_file(dir .. "/elsewhere/m.out", PROFILE)
  end)
  teardown(function() F.remove(dir) end)

  local LISTING = table.concat({
    "-- line 1 ----------------------------------------",
    " 3 (  6.0%)  int main(void)",
    "          .  {",
    " 5 ( 10.0%)    work();",
    "40 ( 80.0%)  => work (1 call)",
    " 2 (  4.0%)    return 0;",
    "          .  }", "" }, "\n")

  it("prints each line's text beside its cost when the source is beside the profile", function()
    local code, out = run("annotate", dir .. "/m.out", "m.c")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("\n-- Ir of m.c (source: " .. dir .. "/m.c)\n" .. LISTING, 1, true), out)
  end)

  it("finds it under --root, and says why there is no text when it cannot be read", function()
    local code, out = run("annotate", dir .. "/elsewhere/m.out", "m.c", "--root", dir)
    assert.are.equal(0, code)
    assert.is_truthy(out:find("\n-- Ir of m.c (source: " .. dir .. "/m.c)\n" .. LISTING, 1, true), out)
    code, out = run("annotate", dir .. "/elsewhere/m.out", "m.c")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("\n-- Ir of m.c\n-- cannot open m.c\n 3 (  6.0%)  line 1  main\n", 1, true), out)
  end)
end)
