-- Comparisons say what they matched: two builds of one program under
-- different executable names (sortnum-O0, sortnum-O2) match as one program
-- by default, every comparison says how many functions and what share of
-- each side's cost it matched, and one that matched less than half of a
-- side warns (a diff) or fails (a check), naming the cause and the fix. A
-- limit on a function the new profile lacks fails. Real valgrind runs of
-- examples/perf/sortnum.c built twice.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq
local lab = H.lab("spec/match_spec.lua")
local o0, o2

setup(function()
  lab:open()
  lab:need_tools()
  local exe0, exe2 = lab.dir .. "/sortnum-O0", lab.dir .. "/sortnum-O2"
  -- noinline keeps sort_numbers a function at -O2 too
  lab:run(("gcc -g -O0 -o %s examples/perf/sortnum.c"):format(shq(exe0)), "gcc -O0")
  lab:run(("gcc -g -O2 -fno-inline-functions -fno-inline-small-functions -o %s examples/perf/sortnum.c")
    :format(shq(exe2)), "gcc -O2")
  o0 = assert(callgrind.run({ exe0, "2000" }))
  o2 = assert(callgrind.run({ exe2, "2000" }))
end)
teardown(function() lab:close() end)

-- The share of a profile's Ir held by the functions whose (name, file)
-- the other profile has too: what a match by program must reach, worked
-- out here from the profiles alone.
local function share_by_name_and_file(a, b)
  local have = {}
  for fn in b:functions() do have[fn.name .. "\0" .. tostring(fn.file)] = true end
  local s = 0
  for fn in a:functions() do
    if have[fn.name .. "\0" .. tostring(fn.file)] then s = s + fn:self("Ir") end
  end
  return s / a:total("Ir")
end

describe("callgrind.diff of two builds of one program", function()
  it("matches the executables as one program by default", function()
    assert.are.equal("sortnum-O0", require("callgrind.check.diff").program(o0))
    assert.are.equal("sortnum-O2", require("callgrind.check.diff").program(o2))
    local d = callgrind.diff(o0, o2)
    local m = d:matched("Ir")
    assert.is_true(m.functions > 10, m.functions)
    -- the program's functions and libc's: what name and file alone match
    assert.are.equal(share_by_name_and_file(o0, o2), m.old_share)
    assert.are.equal(share_by_name_and_file(o2, o0), m.new_share)
    assert.is_true(m.old_share > 0.5 and m.new_share > 0.5)
    assert.are.same({}, d:warnings())
    assert.is_truthy(tostring(d):find("\nmatched " .. m.functions .. " functions: ", 1, true))
    -- sort_numbers is one row with both sides
    local row
    for _, r in ipairs(d:movers("Ir")) do if r.name == "sort_numbers" then row = r end end
    assert.is_truthy(row.old_fn and row.new_fn)
  end)

  it("warns when less than half of a side matched, naming the objects and the option that fixes it", function()
    -- matched by a key that keeps the executables apart: nothing of the program matches
    local d = callgrind.diff(o0, o2, { match = function(fn) return fn.name .. "\0" .. tostring(fn.object) end })
    local w = d:warnings()
    assert.are.equal(1, #w)
    assert.matches("^only %d+%.%d%% of the old cost and %d+%.%d%% of the new matched function by function "
      .. "%(%d+ functions%): the objects differ %(sortnum%-O0 vs sortnum%-O2%); match = \"name%+file\"", w[1])
    assert.is_truthy(tostring(d):find("\nwarning: only ", 1, true))
    -- and the key it names fixes it
    assert.are.same({}, callgrind.diff(o0, o2, { match = "name+file" }):warnings())
    assert.are.equal(callgrind.diff(o0, o2):matched("Ir").functions,
      callgrind.diff(o0, o2, { match = "name+file" }):matched("Ir").functions)
  end)

  it("is 100% matched and zero everywhere against itself", function()
    local d = callgrind.diff(o2, o2)
    local m = d:matched("Ir")
    assert.are.equal(1, m.old_share)
    assert.are.equal(1, m.new_share)
    for _, r in ipairs(d:movers("Ir")) do assert.are.equal(0, r.delta) end
  end)
end)

describe("a check", function()
  it("fails a comparison that matched less than half of a side, whatever the limits", function()
    local apart = function(fn) return fn.name .. "\0" .. tostring(fn.object) end
    local ok, msg = callgrind.check_no_regression(o0, o2, { Ir = "1000%" }, { match = apart })
    assert.is_false(ok)
    assert.is_truthy(msg:find("the objects differ (sortnum-O0 vs sortnum-O2)", 1, true), msg)
    -- matched by program (the default), the -O2 build passes a 5% limit: it is faster
    assert.is_true((callgrind.check_no_regression(o0, o2, { Ir = "5%" })))
  end)

  it("fails a limit on a function the new profile lacks, naming it and its closest names", function()
    local old = assert(callgrind.parse("events: Ir\nfl=m.lua\nfn=main\n1 1\ncfn=anonymous@m.lua:12\ncalls=1 1\n"
      .. "1 10\nfn=anonymous@m.lua:12\n12 10\n", "old"))
    -- one line added above it: the same function is now anonymous@m.lua:13
    local new = assert(callgrind.parse("events: Ir\nfl=m.lua\nfn=main\n1 1\ncfn=anonymous@m.lua:13\ncalls=1 1\n"
      .. "1 10\nfn=anonymous@m.lua:13\n13 10\n", "new"))
    local ok, msg = callgrind.check_no_regression(old, new, { functions = { ["anonymous@m.lua:12"] = { Ir = "5%" } } })
    assert.is_false(ok)
    assert.is_truthy(msg:find("function anonymous@m.lua:12: not in the new profile; closest names: "
      .. "anonymous@m.lua:13", 1, true), msg)
  end)
end)

describe("callgrind-lua diff and check", function()
  -- the two builds written as files, then compared from the shell
  local function files()
    local a, b = lab.dir .. "/o0.cg", lab.dir .. "/o2.cg"
    assert(o0:write(a))
    assert(o2:write(b))
    return a, b
  end

  it("say what they matched, and take --match", function()
    local a, b = files()
    local out = H.run("lua5.4 bin/callgrind-lua diff " .. shq(a) .. " " .. shq(b), "callgrind-lua diff")
    local m = callgrind.diff(o0, o2):matched("Ir")
    assert.is_truthy(out:find(("matched %d functions: %.1f%% of the old Ir, %.1f%% of the new"):format(m.functions,
      100 * m.old_share, 100 * m.new_share), 1, true), out)
    local by_name = H.run("lua5.4 bin/callgrind-lua diff --match name " .. shq(a) .. " " .. shq(b), "diff --match")
    local mn = callgrind.diff(o0, o2, { match = "name" }):matched("Ir")
    assert.is_truthy(by_name:find(("matched %d functions"):format(mn.functions), 1, true), by_name)
    local p = assert(io.popen("lua5.4 bin/callgrind-lua diff --match object " .. shq(a) .. " " .. shq(b) .. " 2>&1"))
    local err = p:read("a")
    local _, _, code = p:close()
    assert.are.equal(2, code)
    assert.is_truthy(err:find("--match takes name, name+file, name+file+object; got object", 1, true), err)
  end)
end)
