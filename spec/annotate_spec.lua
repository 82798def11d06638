-- prof:annotate: which file a name means, the rows, the calls per line,
-- and the annotated source against callgrind_annotate --auto=yes on a
-- valgrind profile of the fixture program.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local function load(name) return assert(callgrind.load("spec/fixtures/" .. name)) end

describe("prof:annotate", function()
  local prof = load("files.callgrind")

  it("takes the path as written, a tail of it, or a base name when one file matches", function()
    assert.are.equal("/src/app/lib/parser.c", prof:annotate("/src/app/lib/parser.c").file)
    assert.are.equal("/src/app/lib/parser.c", prof:annotate("lib/parser.c").file)
    assert.are.equal("/src/app/lib/parser.c", prof:annotate("parser.c").file)
    assert.are.equal("/src/app/a/util.c", prof:annotate("a/util.c").file)
    assert.are.equal("/src/app/b/util.c", prof:annotate("app/b/util.c").file)
  end)

  it("lists the files when a name matches more than one, and says when none does", function()
    assert.has_error(function() prof:annotate("util.c") end,
      "bad argument #1 to 'annotate' ('util.c' matches 2 files: /src/app/a/util.c, /src/app/b/util.c)")
    assert.has_error(function() prof:annotate("lexer.c") end,
      "bad argument #1 to 'annotate' (no source file of the profile matches 'lexer.c')")
  end)

  it("gives each line its cost, its functions and the calls made from it", function()
    local a = prof:annotate("parser.c", "Ir")
    assert.are.equal(2, #a)
    assert.are.same({ 4, 10, "main" }, { a[1].line, a[1].cost, a[1].functions[1].name })
    assert.are.same({}, a[1].calls)
    -- line 5: self 3; helper called twice (40); main's call to itself is
    -- inside the call that entered main and is left out
    assert.are.same({ 5, 3 }, { a[2].line, a[2].cost })
    assert.are.equal(1, #a[2].calls)
    assert.are.same({ "helper", 2, 40 }, { a[2].calls[1].fn.name, a[2].calls[1].count, a[2].calls[1].cost })
    assert.are.equal(table.concat({
      "-- Ir of /src/app/lib/parser.c",
      "10 ( 16.9%)  line 4  main",
      " 3 (  5.1%)  line 5  main",
      "40 ( 67.8%)  => helper (2 calls)",
    }, "\n"), tostring(a))
    assert.are.equal("line 4: 10  main", tostring(a[1]))
  end)

  it("says what is wrong with its arguments", function()
    assert.has_error(function() prof:annotate(1) end, "bad argument #1 to 'annotate' (string expected, got 1)")
    assert.has_error(function() prof:annotate("parser.c", "Irr") end,
      "bad argument #2 to 'annotate' (unknown event 'Irr'; events: Ir)")
    assert.has_error(function() prof:annotate("parser.c", "Ir", { source = 3 }) end,
      "bad argument #3 to 'annotate' (option 'source' must be boolean or string, got 3)")
    assert.has_error(function() prof:annotate("parser.c", "Ir", { sorce = true }) end,
      "bad argument #3 to 'annotate' (unknown option 'sorce'; options: source)")
  end)
end)

describe("prof:annotate with the source on a valgrind profile of the fixture program", function()
  local lab = H.lab("spec/annotate_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  -- callgrind_annotate --auto=yes's listing of one file: line number ->
  -- cost, and the => lines after each line as "line N: callee (Nx) cost".
  local function annotated(path, file)
    local out = lab:run("cd / && callgrind_annotate --auto=yes --show-percs=no --threshold=100 "
      .. H.shq(path), "callgrind_annotate --auto=yes")
    local start = assert(out:find("-- Auto-annotated source: " .. file .. "\n", 1, true), "no listing of " .. file)
    local body = out:sub(start):match("^[^\n]*\n[^\n]*\n[^\n]*\n\n(.-)\n%-%-%-%-%-") or out:sub(start)
    local costs, calls, n = {}, {}, 0
    for l in body:gmatch("[^\n]+") do
      local mark = l:match("^%-%- line (%d+) %-")
      local c, callee, x = l:match("^%s*([%d,]+)  => .*:([^:]-) %((%d+)x%)$")
      if mark then
        n = tonumber(mark) - 1
      elseif c then
        calls[#calls + 1] = ("line %d: %s (%sx) %s"):format(n, callee, x, (c:gsub(",", "")))
      else
        local cost = l:match("^%s*([%d,]+)  ") or l:match("^%s*(%.)  ") or l:match("^%s*(%.)$")
        if cost then
          n = n + 1
          if cost ~= "." then costs[n] = tonumber((cost:gsub(",", ""))) end
        end
      end
    end
    return costs, calls
  end

  it("gives every line of cgmain.c callgrind_annotate's cost and => lines", function()
    local path = lab:callgrind("annotate", "")
    local prof = H.load(path)
    local file = lab:progs_dir() .. "/cgmain.c"
    local want_costs, want_calls = annotated(path, file)
    local a = prof:annotate("cgmain.c", "Ir", { source = lab:progs_dir() })
    assert.are.equal(file, a.file)
    local costs, calls = {}, {}
    for _, row in ipairs(a) do
      costs[row.line] = row.cost
      assert.are.equal(a.lines[row.line], row.text)
      for _, c in ipairs(row.calls) do
        calls[#calls + 1] = ("line %d: %s (%dx) %d"):format(row.line, c.fn.name, c.count, c.cost)
      end
    end
    table.sort(calls)
    table.sort(want_calls)
    assert.is_true(#want_calls > 10, #want_calls .. " => lines")
    assert.are.same(want_costs, costs)
    assert.are.same(want_calls, calls)
    -- the listing: the line, its cost, and its calls under it
    local text = tostring(a)
    assert.is_truthy(text:find("\n%s*28,605 %(%s*[%d.]+%%%)  => fib %(1 call%)\n"))
    -- the first line with a cost is fib's "{" on line 10: three lines of
    -- context before it
    assert.is_truthy(text:find("\n%-%- line 7 %-+\n"))
    assert.is_truthy(tostring(a:report({ context = 8 })):find("\n%-%- line 2 %-+\n"))
  end)
end)
