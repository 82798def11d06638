-- What a person sees at the REPL: every value prints readably, long
-- results print their first rows, help lists every method, errors name the
-- method called, and no private helper is reachable.
local callgrind = require "callgrind"
local query = require "callgrind.model.query"
local tree = require "callgrind.model.tree"
local annotate = require "callgrind.model.annotate"
local graph = require "callgrind.model.graph"
local help = require "callgrind.help"
local diff = require "callgrind.check.diff"

local function load(name) return assert(callgrind.load("spec/fixtures/" .. name)) end

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "no error")
  return (tostring(e):gsub("^[^:]*:%d+: ", ""))
end

describe("values at the REPL", function()
  it("print cost tables in the profile's event order, event lists and desc entries", function()
    local prof = load("parts.callgrind")
    assert.are.equal("Ir Dr Dw", tostring(prof.events))
    -- parts.callgrind: Ir 12 + 6, Dr 3 + 5, Dw 0 + 7
    assert.are.equal("Ir 18  Dr 8  Dw 7", tostring(prof:totals()))
    local parts = {}
    for part in prof:parts() do parts[#parts + 1] = part end
    assert.are.equal("I1 cache: \nTrigger: Program termination", tostring(parts[1].desc))
    assert.are.equal("Ir Dr", tostring(parts[1].events))
    -- part 2's columns are Dr Ir Dw; printed in the profile's order
    assert.are.equal("Ir 6  Dr 5  Dw 7", tostring(parts[2].summary))
    local big = assert(callgrind.parse("events: Ir Dr\nfn=main\n1 1234567 -42\n"))
    assert.are.equal("Ir 1,234,567  Dr -42", tostring(big:func("main"):self()))
    assert.are.equal("Ir 1,234,567  Dr 0", tostring(big:func("main"):inclusive()))  -- max(A = 0, B = -42)
    assert.are.equal("Ir 0", tostring(assert(callgrind.parse("events: Ir\n")):totals()))
  end)

  it("print cost tables and event lists of hundreds of events whole", function()
    local names, costs, want = {}, {}, {}
    for i = 1, 300 do
      names[i] = "Event" .. i
      costs[i] = tostring(1000 + i)
      want[i] = ("Event%d 1,%03d"):format(i, i)
    end
    local prof = assert(callgrind.parse("events: " .. table.concat(names, " ") .. "\nfn=main\n1 "
      .. table.concat(costs, " ") .. "\n"))
    assert.are.equal(table.concat(want, "  "), tostring(prof:totals()))
    assert.are.equal(table.concat(names, " "), tostring(prof.events))
    assert.are.equal("bad argument #1 to 'total' (unknown event 'Nope'; events: " .. table.concat(names, " ") .. ")",
      err_of(function() return prof:total("Nope") end))
    -- the printer of cost tables refuses a table that is not one
    assert.are.equal("bad argument #1 to '?' (not a cost table)", err_of(getmetatable(prof:totals()).__tostring, {}))
  end)

  it("print callers and callees, groups, cycles and event descriptions as tables", function()
    local prof = load("extended.callgrind")
    -- extended.callgrind: main calls func1 once (400) and func2 3 times (400)
    assert.are.equal(table.concat({
      "callees of main",
      "calls  Instructions  function",
      "    1  400 ( 48.8%)  func1",
      "    3  400 ( 48.8%)  func2",
    }, "\n"), tostring(prof:func("main"):callee_functions()))
    assert.are.equal("func2 (3 calls)", tostring(prof:func("main"):callee_functions()[2]))
    assert.are.equal(table.concat({
      "callers of func2",
      "calls  Instructions  function",
      "    3  400 ( 48.8%)  main",
      "    2  300 ( 36.6%)  func1",
    }, "\n"), tostring(prof:func("func2"):caller_functions():sort()))
    local inline = load("inline.callgrind")
    assert.are.equal(table.concat({
      "          Ir  file",   -- of 153: 107 + 40 + 6
      "107 ( 69.9%)  util.h",
      " 40 ( 26.1%)  string.c",
      "  6 (  3.9%)  main.c",
    }, "\n"), tostring(inline:group("file", "Ir")))
    assert.are.equal("util.h  107", tostring(inline:group("file", "Ir")[1]))
    local mutual = load("mutual.callgrind")
    local cycle = mutual:func("a"):cycle()
    assert.are.equal(table.concat({
      "    self Ir  function  file  object",
      "20 ( 15.9%)  a         ?     ?",
      "40 ( 31.7%)  b         ?     ?",
    }, "\n"), tostring(cycle.members))
  end)

  it("print a long selection's first 25 rows and say how many more there are", function()
    local parts = { "events: Ir\n" }
    for i = 1, 1000 do parts[#parts + 1] = ("fn=f%04d\n1 %d\n"):format(i, i) end
    local prof = assert(callgrind.parse(table.concat(parts), "many.out"))
    local text = tostring(prof:all())
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(27, #lines)
    assert.are.equal("... 975 more functions (sel:report() prints them all)", lines[27])
    assert.is_truthy(lines[26]:find("f0025", 1, true))
    local all = 0
    for _ in prof:all():report():gmatch("[^\n]+") do all = all + 1 end
    assert.are.equal(1001, all)
    -- and the same for groups and edges
    local edges = { "events: Ir\nfn=main\n1 1\n" }
    for i = 1, 30 do edges[#edges + 1] = ("cfn=g%02d\ncalls=1 1\n1 %d\n"):format(i, i) end
    local fanout = assert(callgrind.parse(table.concat(edges), "fanout.out"))
    local text_edges = tostring(fanout:func("main"):callee_functions())
    assert.are.equal("... 5 more functions (e.rows has them all)", text_edges:match("[^\n]*$"))
  end)

  it("never print a bare table address for what the API returns", function()
    local prof = load("parts.callgrind")
    local fn = prof:func("main") or prof:all()[1]
    local values = {
      prof, prof.events, prof:totals(), prof:all(), prof:top(3), prof:group("file"), prof:group("object"),
      fn, fn:self(), fn:inclusive(), fn:callee_functions(), fn:caller_functions(), fn:tree(),
      prof:event_info("Ir"), help.text(), help.text(prof),
    }
    for part in prof:parts() do
      values[#values + 1] = part
      values[#values + 1] = part.desc
      values[#values + 1] = part.events
      values[#values + 1] = part.summary
      values[#values + 1] = part.written_totals
      values[#values + 1] = part:totals()
    end
    for c in load("mutual.callgrind"):cycles() do values[#values + 1] = c; values[#values + 1] = c.members end
    local files = load("files.callgrind")
    values[#values + 1] = files:annotate("parser.c")
    values[#values + 1] = files:annotate("parser.c")[1]
    for i, v in ipairs(values) do
      assert.is_nil(tostring(v):find("table: 0x", 1, true), "value " .. i .. ": " .. tostring(v))
    end
  end)

  it("print every iterator as what it walks, and rows of callers, diffs and trees as one line", function()
    local prof = load("extended.callgrind")
    local main = prof:func("main")
    assert.are.same({
      "callgrind.Iterator: 3 Functions", "callgrind.Iterator: 3 Calls", "callgrind.Iterator: 1 Parts",
      "callgrind.Iterator: CostLines", "callgrind.Iterator: Jumps",
      "callgrind.Iterator: cost lines (ulines: index, line, addr, costs)",
      "callgrind.Iterator: 2 Calls", "callgrind.Iterator: 0 Calls", "callgrind.Iterator: CostLines",
      "callgrind.Iterator: 0 Cycles", "callgrind.Iterator: stacks (frames, cost)",
    }, {
      tostring(prof:functions()), tostring(prof:calls()), tostring(prof:parts()), tostring(prof:lines()),
      tostring(prof:jumps()), tostring(prof:ulines()), tostring(main:calls()), tostring(main:callers()),
      tostring(main:lines()), tostring(prof:cycles()),
      tostring(callgrind.profile(function() end, { stacks = true }):stacks()),
    })
    -- and they still walk as functions do, in a generic for or called
    local names = {}
    for fn in prof:functions() do names[#names + 1] = fn.name end
    assert.are.same({ "main", "func1", "func2" }, names)
    assert.are.equal("func1", main:calls()().callee.name)
    assert.are.equal("func1 (1 call)", tostring(main:callee_functions().rows[1]))
    assert.are.equal("100 -> 100, 0  func1 (file1.c)", tostring(callgrind.diff(prof, prof):movers(1)[1]))
    assert.are.equal("main  820, 2 children", tostring(main:tree().root))
  end)

  it("leave no bare table address in examples/explore.md", function()
    local f = assert(io.open("examples/explore.md"))
    local text = f:read("a")
    f:close()
    assert.is_nil(text:find("table: 0x", 1, true))
    assert.is_truthy(text:find("> print(main:tree", 1, true))
  end)
end)

describe("callgrind.help", function()
  -- every method table a user can reach, by the object help names it
  local tables = {
    Profile = callgrind.methods.Profile, Function = callgrind.methods.Function, Call = callgrind.methods.Call,
    Part = callgrind.methods.Part,
    CostLine = callgrind.methods.CostLine, Selection = query.Selection, Edges = query.Edges, Cycle = graph.Cycle,
    Tree = tree.Tree, Annotation = annotate.Annotation, Diff = diff.Diff,
  }

  local function entries(name)
    for _, o in ipairs(help.objects) do
      if o.name == name then
        local set = {}
        for _, e in ipairs(o.entries) do
          local m = e[1]:match("^[%w_]+:([%w_]+)%(")
          if m then set[m] = true end
        end
        return set
      end
    end
    error("no help for " .. name)
  end

  it("has a line for every method of every object, and no line for a method that is not there", function()
    for name, t in pairs(tables) do
      local lines = entries(name)
      for m in pairs(t) do
        assert.is_true(lines[m] or false, name .. ":" .. m .. " has no help line")
      end
      for m in pairs(lines) do
        assert.is_truthy(t[m], name .. ":" .. m .. " is in help but not a method")
      end
    end
    for k in pairs(callgrind) do
      assert.is_truthy(help.text(callgrind):find("callgrind." .. k, 1, true), "callgrind." .. k .. " has no help line")
    end
  end)

  it("lists the objects, and the methods and fields of one given itself or by name", function()
    local prof = load("fib.callgrind")
    local text = callgrind.help()
    assert.is_truthy(text:find("\n  Profile     a loaded profile\n", 1, true))
    assert.are.equal(callgrind.help("Function"), callgrind.help(prof:func("main")))
    assert.is_truthy(callgrind.help(prof:func("main")):find("\n  fn:inclusive_bounds(ev)  lower bound and estimate", 1,
      true))
    assert.are.equal(callgrind.help("Selection"), callgrind.help(prof:all()))
    assert.are.equal(callgrind.help("Tree"), callgrind.help(prof:func("main"):tree()))
    assert.are.equal("bad argument #1 to 'help' (no help for 'Nope'; did you mean name, open, top?; "
      .. "try callgrind.help())",
      err_of(callgrind.help, "Nope"))
    assert.are.equal("bad argument #1 to 'help' (no help for table; try callgrind.help())", err_of(callgrind.help, {}))
  end)
end)

describe("the public surface", function()
  it("has no _-prefixed method on any object, nor on the module but _VERSION", function()
    for name, t in pairs(callgrind.methods) do
      for k in pairs(t) do assert.is_nil(k:match("^_"), name .. "." .. k) end
    end
    for _, t in ipairs({ query.Selection, query.Edges, graph.Cycle, tree.Tree, annotate.Annotation, diff.Diff }) do
      for k in pairs(t) do assert.is_nil(k:match("^_"), k) end
    end
    for k in pairs(callgrind) do assert.is_true(k == "_VERSION" or not k:match("^_"), k) end
  end)
end)

describe("errors of the Lua layer", function()
  local prof = load("derived.callgrind")
  local events = "events: Ir Dr, derived: Both Double Diff"

  it("name the public method and the argument, and list the events", function()
    local main = prof:func("main")
    local cases = {
      { function() prof:top(10, "Irr") end, "bad argument #2 to 'top' (unknown event 'Irr'; " .. events .. ")" },
      { function() prof:top(10, "inclusive") end, "bad argument #2 to 'top' ('inclusive' is a kind, not an event: "
        .. "the event comes first, as in top(..., \"Ir\", \"inclusive\"); " .. events .. ")" },
      { function() prof:top(-1) end, "bad argument #1 to 'top' (count must not be negative, got -1)" },
      { function() prof:top(1.5) end, "bad argument #1 to 'top' (count must be a whole number, got 1.5)" },
      { function() prof:top("3") end, "bad argument #1 to 'top' (number expected, got '3')" },
      { function() prof:top(3, "Ir", "total") end,
        "bad argument #3 to 'top' (expected \"self\" or \"inclusive\", got 'total')" },
      { function() prof:all():top(3, "Nope") end, "bad argument #2 to 'top' (unknown event 'Nope'; " .. events .. ")" },
      { function() prof:all():sort("Ir", "x") end, "bad argument #2 to 'sort' (expected \"self\" or \"inclusive\", "
        .. "got 'x')" },
      { function() prof:all():sum("Nope") end, "bad argument #1 to 'sum' (unknown event 'Nope'; " .. events .. ")" },
      { function() prof:all():above(0.1, "Nope") end, "bad argument #2 to 'above' (unknown event 'Nope'; " .. events
        .. ")" },
      { function() main:inclusive("Nope") end, "bad argument #1 to 'inclusive' (unknown event 'Nope'; " .. events
        .. ")" },
      { function() main:inclusive_bounds() end, "bad argument #1 to 'inclusive_bounds' (event name or index "
        .. "expected, got nil; " .. events .. ")" },
      { function() prof:inclusive_all(9) end, "bad argument #1 to 'inclusive_all' (event index 9 out of range 1..2)" },
      { function() prof:group("file", "Nope") end, "bad argument #2 to 'group' (unknown event 'Nope'; " .. events
        .. ")" },
      { function() main:callee_functions():sort("Nope") end, "bad argument #1 to 'sort' (unknown event 'Nope'; "
        .. events .. ")" },
      { function() prof:all():report({ events = { "Nope" } }) end, "bad argument #1 to 'report' (unknown event "
        .. "'Nope'; " .. events .. ")" },
      { function() prof:event_info("Nope") end, "bad argument #1 to 'event_info' (unknown event 'Nope'; " .. events
        .. ")" },
      { function() prof:cycles() ; prof:func("main"):tree({ depth = 0.5 }) end,
        "bad argument #1 to 'tree' (count must be a whole number, got 0.5)" },
    }
    for i, c in ipairs(cases) do
      assert.are.equal(c[2], err_of(c[1]), "case " .. i)
    end
  end)

  it("point at the caller's line", function()
    local ok, e = pcall(function() prof:top(10, "Irr") end)
    assert.is_false(ok)
    assert.is_truthy(e:find("^spec/repl_spec.lua:%d+: bad argument #2 to 'top'"), e)
  end)

  it("give an empty selection for a count of 0, from a profile as from a selection", function()
    assert.are.equal(0, #prof:top(0))
    assert.are.equal(0, #prof:all():top(0))
    assert.are.equal(2, #prof:top(2.0))
  end)
end)

describe("require 'callgrind'", function()
  local H = require "spec.support.helpers"

  -- in a fresh interpreter (busted has loaded every module already)
  local function run(body)
    return H.fresh_lua("local callgrind = require 'callgrind'\n" .. body)
  end

  it("loads the modules of fn:tree, prof:annotate and prof:write at their first call", function()
    assert.are.equal("nil nil nil\ntree 1 main true\nwrite true\n", (run([[
      local loaded = function(m) return package.loaded["callgrind." .. m] ~= nil and "loaded" or "nil" end
      print(loaded "model.tree", loaded "model.annotate", loaded "export.write") -- (print separates with tabs)
      local prof = assert(callgrind.parse("events: Ir\nfl=a.c\nfn=main\n1 5\n"))
      local stub = callgrind.methods.Function.tree
      local t = prof:func("main"):tree()
      print("tree", #t.root.children + 1, t.root.fn.name, callgrind.methods.Function.tree ~= stub)
      local f = io.tmpfile()
      prof:write(f)
      f:seek("set")
      print("write", f:read("a"):find("\n1 5\n", 1, true) ~= nil)]]):gsub("\t", " ")))
  end)

  it("loads the modules of the questions (graph, query, report, show) at the first call of any of theirs", function()
    assert.are.equal(table.concat({
      "nil nil nil nil",
      "8 loaded loaded loaded loaded true",
      "8 5",
      "main 8",
      "1,234,567 commas shorten", "" }, "\n"), (run([[
      local loaded = function(m) return package.loaded["callgrind." .. m] ~= nil and "loaded" or "nil" end
      print(loaded "model.graph", loaded "model.query", loaded "model.report", loaded "model.show")
      local prof = assert(callgrind.parse("events: Ir\nfl=a.c\nfn=main\n1 5\ncfn=f\ncalls=1 0\n1 3\nfn=f\n1 3\n"))
      local main = prof:func("main")
      local stub = callgrind.methods.Profile.top
      print(main:inclusive("Ir"), loaded "model.graph", loaded "model.query", loaded "model.report",
        loaded "model.show", callgrind.methods.Profile.top ~= stub)
      -- the other stubs were replaced too
      local top = prof:top(1)
      print(prof:inclusive_all("Ir")[main.index], top:sum("Ir"))
      print(top:list()[1].name, prof:summary():match("Ir%s+(%d+)"))
      local names = {}
      for k in pairs(callgrind.report) do names[#names + 1] = k end
      table.sort(names)
      print(callgrind.report.commas(1234567), table.concat(names, " "))]]):gsub("\t", " ")))
  end)

  it("blames an error of such a method on its first call on the caller", function()
    assert.matches("^lua5.4: %(command line%):4: bad argument #1 to 'write'", run([[
      local prof = assert(callgrind.parse("events: Ir\nfn=main\n1 5\n"))
      prof:write(4)]]))
    assert.matches("^lua5.4: %(command line%):4: bad argument #1 to 'top'", run([[
      local prof = assert(callgrind.parse("events: Ir\nfn=main\n1 5\n"))
      prof:top("many")]]))
  end)
end)

describe("help at the REPL", function()
  local H = require "spec.support.helpers"

  -- lines typed at an interactive lua5.4, the library's paths set first
  local function repl(args, lines)
    local paths = ("package.path = %q package.cpath = %q"):format(package.path, package.cpath)
    local p = assert(io.popen("printf '%s\\n' " .. H.shq(table.concat(lines, "\n")) .. " | lua5.4 -e "
      .. H.shq(paths) .. " " .. args .. " -i 2>&1"))
    local out = p:read("a")
    p:close()
    return out
  end

  it("is a global once callgrind is required at the prompt, or with -l", function()
    local out = repl("", { "print(type(help))", "callgrind = require 'callgrind'",
      "print(help() == callgrind.help())", "print((help('Tree'):match('^[^\\n]*')))" })
    assert.is_truthy(out:find("\nnil\n", 1, true) or out:find("^nil\n") or out:find("> nil\n", 1, true), out)
    assert.is_truthy(out:find("true\n", 1, true), out)
    assert.is_truthy(out:find("Tree: a call tree from fn:tree()\n", 1, true), out)
    assert.is_truthy(repl("-lcallgrind", { "print(type(help))" }):find("function\n", 1, true))
  end)

  it("is not set in a script, nor over the user's own help", function()
    assert.are.equal("nil\n", H.fresh_lua("require 'callgrind' print(rawget(_G, 'help'))"))
    assert.is_truthy(repl("", { "help = 5", "require 'callgrind'", "print(help)" }):find("5\n", 1, true))
  end)
end)

describe("a name an object does not have", function()
  local prof = load("extended.callgrind")
  local main = prof:func("main")

  it("is an error that names the closest methods and fields, for every object", function()
    local part = prof:parts()()
    local files = load("files.callgrind")
    local cases = {
      { function() return prof:fnuc() end, "a Profile has no field or method 'fnuc'; did you mean prof:func()? "
        .. "(callgrind.help(\"Profile\") lists them)" },
      { function() return main.nmae end, "a Function has no field or method 'nmae'; did you mean fn.name? "
        .. "(callgrind.help(\"Function\") lists them)" },
      { function() return main:inclusiv("Instructions") end, "a Function has no field or method 'inclusiv'; "
        .. "did you mean fn:inclusive(), fn:inclusive_bounds()? (callgrind.help(\"Function\") lists them)" },
      { function() return part.thred end, "a Part has no field or method 'thred'; did you mean part.thread? "
        .. "(callgrind.help(\"Part\") lists them)" },
      { function() return main:calls()().calee end, "a Call has no field or method 'calee'; did you mean "
        .. "call.callee, call.caller? (callgrind.help(\"Call\") lists them)" },
      { function() return main:lines()().cots end, "a CostLine has no field or method 'cots'; did you mean "
        .. "line:cost()? (callgrind.help(\"CostLine\") lists them)" },
      { function() return prof:all():sortt() end, "a Selection has no field or method 'sortt'; did you mean "
        .. "sel:sort()? (callgrind.help(\"Selection\") lists them)" },
      { function() return main:callee_functions().row end, "an Edges has no field or method 'row'; did you mean "
        .. "edges.rows? (callgrind.help(\"Edges\") lists them)" },
      { function() return main:tree().roott end, "a Tree has no field or method 'roott'; did you mean tree.root? "
        .. "(callgrind.help(\"Tree\") lists them)" },
      { function() return prof:group("file").to_cvs end, "a Groups has no field or method 'to_cvs'; did you mean "
        .. "groups:to_csv()? (callgrind.help(\"Groups\") lists them)" },
      { function() return prof:warnings().to_jsn end, "a Warnings has no field or method 'to_jsn'; did you mean "
        .. "warnings:to_json(), warnings:to_csv()? (callgrind.help(\"Warnings\") lists them)" },
      { function() return files:annotate("parser.c").flie end, "an Annotation has no field or method 'flie'; did "
        .. "you mean ann.file? (callgrind.help(\"Annotation\") lists them)" },
      { function() return load("mutual.callgrind"):cycles()().membres end, "a Cycle has no field or method "
        .. "'membres'; did you mean cycle.members? (callgrind.help(\"Cycle\") lists them)" },
      { function() return callgrind.lod end, "the module callgrind has no field or method 'lod'; did you mean "
        .. "callgrind.load()? (callgrind.help(callgrind) lists them)" },
      { function() return callgrind.diff(prof, prof):movrs() end, "a Diff has no field or method 'movrs'; did "
        .. "you mean d:movers()? (callgrind.help(\"Diff\") lists them)" },
      { function() return callgrind.diff(prof, prof):movers(1).to_cvs end, "a DiffRows has no field or method "
        .. "'to_cvs'; did you mean rows:to_csv()? (callgrind.help(\"DiffRows\") lists them)" },
    }
    for i, c in ipairs(cases) do
      assert.are.equal(c[2], err_of(c[1]), "case " .. i)
    end
    -- at the caller's line
    local ok, e = pcall(function() return main.nmae end)
    assert.is_false(ok)
    assert.matches("^spec/repl_spec.lua:%d+: a Function has no field", e)
  end)

  it("leaves a field that exists nil when it has no value, and an index past the end nil", function()
    local bare = assert(callgrind.parse("events: Ir\nfn=main\n1 5\n"))
    local fn = bare:func("main")
    assert.is_nil(fn.file)
    assert.is_nil(fn.object)
    assert.is_nil(bare.pid)
    assert.is_nil(bare.cmd)
    assert.is_nil(bare.creator)
    assert.is_nil(bare.engine)
    local part = bare:parts()()
    assert.is_nil(part.thread)
    assert.is_nil(part.summary)
    assert.is_nil(fn:lines()().addr)
    assert.is_nil(bare:all()[2])
    assert.is_nil(prof:group("file")[9])
    assert.is_nil(main:callee_functions()[9])
    local ann = load("files.callgrind"):annotate("parser.c")
    assert.is_nil(ann.source)
    assert.is_nil(ann.lines)
    assert.is_nil(ann[99])
    assert.is_nil(prof:all().event)
    assert.are.equal("Instructions", prof:all():sort().event)
    assert.is_nil(prof:func("main"):tree().root.cut)
  end)
end)

describe("callgrind.help of one method or function", function()
  it("lists each method's options under it", function()
    local text = callgrind.help("Function")
    assert.is_truthy(text:find("\n  fn:tree([ev [, opts]])   its call tree (Tree): direction, depth, threshold\n"
      .. "                             opts: ev, direction, depth, threshold, relative\n", 1, true), text)
  end)

  it("shows every method of a name, by name, by object and name, or given itself", function()
    local prof = load("extended.callgrind")
    local top = callgrind.help("top")
    assert.are.equal(table.concat({
      "prof:top(n [, ev [, kind]])",
      "  the n costliest functions (kind \"self\" or \"inclusive\")",
      "  returns callgrind.Selection",
      "",
      "sel:top(n [, ev [, kind]])",
      "  the n costliest",
      "  returns callgrind.Selection",
      "",
      "ann:top(n)",
      "  the n costliest lines, costliest first, as an Annotation",
      "  returns callgrind.Annotation",
    }, "\n"), top)
    assert.are.equal(top:match("^[^\n]*\n[^\n]*\n[^\n]*"), callgrind.help("prof:top"))
    assert.are.equal(callgrind.help("prof:top"), callgrind.help("Profile:top"))
    prof:top(1)
    assert.are.equal(callgrind.help("prof:top"), callgrind.help(prof.top))
    assert.are.equal(table.concat({
      "fn:tree([ev [, opts]])",
      "  its call tree (Tree): direction, depth, threshold",
      "  returns callgrind.Tree",
      "  options:",
      "    ev         string|integer = the first event: the event (the positional ev wins)",
      "    direction  \"callees\"|\"callers\" = \"callees\": walk down to callees or up to callers",
      "    depth      integer = 3: levels below the root",
      "    threshold  number = 0.01: leave out entries below this fraction of the profile's total",
      "    relative   boolean = false: the threshold and the percentages are shares of the root function's "
        .. "inclusive cost, not of the total",
    }, "\n"), callgrind.help("fn:tree"))
    local load_help = callgrind.help(callgrind.load)
    assert.is_truthy(load_help:find("^callgrind.load%(path %[, opts%]%)\n"), load_help)
    assert.is_truthy(load_help:find("\n    lenient        boolean = false: skip bad lines", 1, true), load_help)
    assert.is_truthy(load_help:find("\n  fails with nil, message, kind: io, format, truncated, memory, cancelled\n",
      1, true), load_help)
    assert.are.equal("bad argument #1 to 'help' (no help for 'topp'; did you mean top, stop, to?; try "
      .. "callgrind.help())", err_of(callgrind.help, "topp"))
    assert.are.equal("bad argument #1 to 'help' (no help for this function: not a function of the library; try "
      .. "callgrind.help())", err_of(callgrind.help, print))
  end)
end)

describe("an Annotation at the REPL", function()
  -- 100 lines of one file, line i costing i
  local parts = { "events: Ir\nfl=big.c\nfn=main\n" }
  for i = 1, 100 do parts[#parts + 1] = ("%d %d\n"):format(i, i) end
  local prof = assert(callgrind.parse(table.concat(parts), "big.out"))

  it("prints its 25 costliest lines, in line order, and says how many more there are", function()
    local ann = prof:annotate("big.c")
    local lines = {}
    for l in tostring(ann):gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(27, #lines)
    assert.are.equal("-- Ir of big.c", lines[1])
    assert.are.equal(" 76 (  1.5%)  line 76  main", lines[2])     -- of 5050
    assert.are.equal("100 (  2.0%)  line 100  main", (lines[26]:gsub("^%s+", "")))
    assert.are.equal("... 75 more lines with cost (the 25 costliest shown; ann:report() prints them all, "
      .. "ann:top(n) the n costliest)", lines[27])
    local all = 0
    for _ in ann:report():gmatch("[^\n]+") do all = all + 1 end
    assert.are.equal(101, all)
    assert.are.equal(3, select(2, ann:report({ limit = 2 }):gsub("\n", "")))
  end)

  it("gives its n costliest lines, costliest first, with ann:top(n)", function()
    local top = prof:annotate("big.c"):top(3)
    assert.are.same({ 100, 99, 98 }, { top[1].line, top[2].line, top[3].line })
    assert.are.equal(3, #top)
    assert.are.equal("big.c", top.file)
    assert.are.equal(table.concat({ "-- Ir of big.c", "100 (  2.0%)  line 100  main", " 99 (  2.0%)  line 99  main",
      " 98 (  1.9%)  line 98  main" }, "\n"), tostring(top))
    assert.are.equal("bad argument #1 to 'top' (count must not be negative, got -1)",
      err_of(function() return prof:annotate("big.c"):top(-1) end))
  end)
end)

describe("an error at the REPL", function()
  local H = require "spec.support.helpers"

  local function repl(lines, env)
    local paths = ("package.path = %q package.cpath = %q"):format(package.path, package.cpath)
    local p = assert(io.popen("printf '%s\\n' " .. H.shq(table.concat(lines, "\n"))
      .. " | " .. (env or "") .. " lua5.4 -e " .. H.shq(paths) .. " -i 2>&1"))
    local out = p:read("a")
    p:close()
    return out
  end
  local session = {
    "callgrind = require 'callgrind'",
    "prof = callgrind.load('spec/fixtures/extended.callgrind')",
    "prof:top(2, 'Irr')",
    "prof:fnuc()",
    "ok, e = pcall(prof.top, prof, 1, 'x')",
    "print(tostring(e), e:find('bad argument', 1, true),",
    "  e.traceback:find('stack traceback', 1, true) ~= nil)",
  }

  it("is one line naming the line typed, without a traceback into the library", function()
    local out = repl(session)
    -- (the REPL runs `return prof:top(...)`: a tail call, so no line is named, as for error())
    assert.is_truthy(out:find("\nbad argument #2 to 'top' (unknown event 'Irr'; events: Instructions)\n",
      1, true), out)
    assert.is_truthy(out:find("\nstdin:1: a Profile has no field or method 'fnuc'; did you mean prof:func()? "
      .. "(callgrind.help(\"Profile\") lists them)\n", 1, true), out)
    assert.is_nil(out:find("stack traceback:\n", 1, true), out)
    assert.is_nil(out:find("lua/callgrind/", 1, true), out)
    -- the error object answers as its message does, and keeps the traceback
    assert.is_truthy(out:find("\nbad argument #2 to 'top' (unknown event 'x'; events: Instructions)\t1\ttrue\n", 1,
      true), out)
  end)

  it("keeps lua.c's traceback with CALLGRIND_TRACEBACK=1, and in a script", function()
    local out = repl(session, "CALLGRIND_TRACEBACK=1")
    assert.is_truthy(out:find("\nbad argument #2 to 'top' (unknown event 'Irr'; events: Instructions)\n"
      .. "stack traceback:\n", 1, true), out)
    local H2 = require "spec.support.helpers"
    assert.matches("^lua5.4: %(command line%):%d+: bad argument #2 to 'top'.*\nstack traceback:\n", H2.fresh_lua(
      "local prof = require('callgrind').parse('events: Ir\\nfn=main\\n1 5\\n')\nprof:top(1, 'x')"))
  end)
end)

describe("a Lua profile at the REPL", function()
  local function work() local s = 0 for i = 1, 10 do s = s + i end return s end
  local prof = callgrind.profile(function() return work() end)

  it("shows no object column, which it has not", function()
    local text = tostring(prof:top(1))
    assert.matches("^%s*self Instr  function +file\n", text)
    assert.is_nil(text:find("object", 1, true), text)
    assert.is_nil(text:find("?", 1, true), text)
    assert.matches("  object\n", tostring(load("extended.callgrind"):top(1)))
    assert.matches("file +object\n", prof:top(1):report({ object = true }))
  end)

  it("says why a function is missing without blaming inlining", function()
    local ok, msg = callgrind.check_cost_at_most(10, { prof, "wrok" }, "Instr")
    assert.is_false(ok)
    assert.is_nil(msg:find("inline", 1, true), msg)
    assert.is_truthy(msg:find("closest names: work\n(did it run while the profiler counted? a Lua function is named "
      .. "module.field, the name its definition gives (Parser:next), name:LINE for two of one file, or "
      .. "anonymous@file.lua:LINE)", 1, true), msg)
    local _, c_msg = callgrind.check_cost_at_most(10, { load("extended.callgrind"), "mian" }, "Instructions")
    assert.is_truthy(c_msg:find("(was it inlined? build with -fno-inline", 1, true), c_msg)
  end)
end)

describe("callgrind's summary: quirk", function()
  it("is a note in prof:summary(), not a warning, and stays in prof:warnings('mismatch')", function()
    -- gungraun's file: summary: Ir 3473, its cost lines 3471 (callgrind-3.21.0)
    local prof = assert(callgrind.load("spec/corpus/gungraun/callgrind.when_entry_point.out"))
    local text = prof:summary()
    assert.is_nil(text:find("\nwarnings", 1, true), text)
    assert.is_truthy(text:find("\nnote      spec/corpus/gungraun/callgrind.when_entry_point.out:18: summary: above "
      .. "the cost lines (callgrind counts a few more): Ir 3473 written, 3471 summed", 1, true), text)
    assert.are.equal(1, #prof:warnings("mismatch"))
    assert.are.equal(1, #prof:warnings())
    -- 16 counts (qt-creator's callgrind 3.6), or another writer (Xdebug): still a warning
    for _, f in ipairs({ "qt-creator/inlinedFunctions.out", "go-cachegrind/s1.cachegrind" }) do
      local other = assert(callgrind.load("spec/corpus/" .. f))
      assert.is_truthy(other:summary():find("summary: does not match the cost lines", 1, true), f)
    end
  end)
end)
