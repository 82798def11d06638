-- The example scripts, run as a user runs them, on hand-checked fixtures.
local function run(args)
  local p = assert(io.popen("lua5.4 " .. args .. " 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

describe("examples/annotate.lua", function()
  it("reports inclusive costs, callee trees and a source file's lines", function()
    local out, code = run("examples/annotate.lua spec/fixtures/extended.callgrind --inclusive --tree=callee "
      .. "--source file1.c")
    assert.are.equal(0, code)
    assert.are.equal(table.concat({
      "profile   spec/fixtures/extended.callgrind",
      "version   1",
      "events    Instructions",
      "totals    Instructions 820",
      "size      3 functions, 3 calls",
      "          part 1",
      "",
      "-- functions by inclusive Instructions",
      "incl Instructions  function  file     object",
      "     820 (100.0%)  main      file1.c  ?",
      "     700 ( 85.4%)  func2     file2.c  ?",
      "     400 ( 48.8%)  func1     file1.c  ?",
      "",
      "-- callees of each function (inclusive Instructions of the calls)",
      "820  main",
      "    400  -> func1 (1 call)",
      "    400  -> func2 (3 calls)",
      "700  func2",
      "400  func1",
      "    300  -> func2 (2 calls)",
      "",
      -- by hand from the fixture: main's line 16 costs 20 and calls func1
      -- once (400) and func2 three times (400); func1's line 51 costs 100
      -- and calls func2 twice (300)
      "-- Instructions of file1.c",
      "-- cannot open file1.c",
      " 20 (  2.4%)  line 16  main",
      "400 ( 48.8%)  => func1 (1 call)",
      "400 ( 48.8%)  => func2 (3 calls)",
      "100 ( 12.2%)  line 51  func1",
      "300 ( 36.6%)  => func2 (2 calls)",
      "",
    }, "\n"), out)
  end)

  it("stops at the threshold and shows callers with --tree=caller", function()
    -- self: func2 700 (85.4%), func1 100 (97.6% with it), main 20
    local out = run("examples/annotate.lua spec/fixtures/extended.callgrind --threshold 90 --tree=caller")
    assert.is_truthy(out:find("700 ( 85.4%)  func2", 1, true))
    assert.is_truthy(out:find("100 ( 12.2%)  func1", 1, true))
    assert.is_nil(out:find("main      file1.c", 1, true))
    assert.is_truthy(out:find("    400  <- main (3 calls)\n    300  <- func1 (2 calls)", 1, true))
  end)

  it("says what is wrong with its arguments or the file", function()
    local out, code = run("examples/annotate.lua spec/fixtures/extended.callgrind --event Foo")
    assert.are.equal(2, code)
    assert.are.equal("unknown event Foo (this profile has: Instructions)", out:match("^[^\n]*"))
    out, code = run("examples/annotate.lua spec/fixtures/extended.callgrind --source nowhere.c")
    assert.are.equal(2, code)
    assert.is_truthy(out:find("\nno source file of the profile matches 'nowhere.c'\n", 1, true))
    out, code = run("examples/annotate.lua spec/fixtures/none.callgrind")
    assert.are.equal(1, code)
    assert.are.equal("spec/fixtures/none.callgrind: No such file or directory\n", out)
  end)
end)

describe("examples/top.lua", function()
  it("prints the summary and the top functions by self cost", function()
    local out, code = run("examples/top.lua spec/fixtures/inline.callgrind 2 Dr")
    assert.are.equal(0, code)
    assert.are.equal(table.concat({
      "profile  spec/fixtures/inline.callgrind",
      "creator  ?",
      "command  ?",
      "totals   Ir 153, Dr 17",
      "size     3 functions, 2 calls, 1 part(s)",
      "",
      "top 2 functions by self Dr",
      "             Dr      %  function  (file; object)",
      "             10  58.8%  helper  (util.h; /bin/prog)",
      "              4  23.5%  strlen  (string.c; /lib/libc.so)",
      "",
    }, "\n"), out)
  end)
end)
