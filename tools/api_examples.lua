--- An example for every entry of callgrind.api's declaration (by its
-- signature): one statement each, run from the repository's root after
-- its object's setup. tools/gen_docs.lua runs them and writes what they
-- print into docs/reference.md, spec/docs_spec.lua runs that file's
-- examples again, and spec/api_spec.lua checks that every entry has one.
-- A deprecated entry has none; `false` marks one a document cannot run (it
-- ends the process). Documents only: not installed, not required by the
-- library.
return {
  callgrind = { setup = [[
local callgrind = require "callgrind"
local old = assert(callgrind.load("spec/fixtures/moved-old.callgrind"))
local new = assert(callgrind.load("spec/fixtures/moved-new.callgrind"))
local tmp = os.tmpname()]],
    ["callgrind.load(path [, opts])"] = [[print(callgrind.load("spec/fixtures/extended.callgrind"):total(1))]],
    ["callgrind.load({ path, ... } [, opts])"] =
      [[print(callgrind.load({ "spec/fixtures/extended.callgrind", "spec/fixtures/extended.callgrind" }):total(1))]],
    ["callgrind.files(path [, opts])"] = [[print(#callgrind.files("spec/fixtures/no-such-run.out"))]],
    ["callgrind.parse(text [, name [, opts]])"] = [[print(callgrind.parse("events: Ir\nfn=main\n1 5\n"):total("Ir"))]],
    ["callgrind.help([x])"] = [[print((callgrind.help("Cycle"):match("^[^\n]*")))]],
    ["callgrind.profile(fn [, opts])"] =
      [[print(callgrind.profile(function() return ("x"):rep(3) end):func("string.rep").file)]],
    ["callgrind.run(argv [, opts])"] =
      [[print(callgrind.run({ "true" }, { toggle_collect = "main" }).events[1])]],
    ["callgrind.spread(script, n [, opts])"] = [[print(callgrind.spread("examples/pairs_order.lua", 2).runs)]],
    ["callgrind.write_file_atomic(path, text)"] = [[print(callgrind.write_file_atomic(tmp, "hello\n"))]],
    ["callgrind.diff(old, new [, opts])"] = [[print(select(2, callgrind.diff(old, new):total("Ir")))]],
    ["callgrind.check_cost_at_most(limit, target, ev [, kind [, opts]])"] =
      [[print((callgrind.check_cost_at_most(2e6, new:func("parse"), "Ir")))]],
    ["callgrind.check_calls_at_most(limit, fn [, opts])"] =
      [[print((callgrind.check_calls_at_most(10, new:func("parse"))))]],
    ["callgrind.check_no_regression(old, new, limits [, opts])"] =
      [[print((callgrind.check_no_regression(old, new, { Ir = "5%" })))]],
    ["callgrind.check_within_baseline(name, prof, limits [, opts])"] =
      [[print((callgrind.check_within_baseline("sort", new, { Ir = "5%" }, { dir = tmp .. ".d", quiet = true })))]],
    ["callgrind.record_summary(path [, format])"] = [[print(select(3, callgrind.record_summary(tmp .. ".none")))]],
    ["callgrind.methods"] = [[print(type(callgrind.methods.Profile.total))]],
    ["callgrind.format"] = [[print(callgrind.format.commas(1234567))]],
    ["callgrind.history"] = [[print(type(callgrind.history.open))]],
    ["callgrind._VERSION"] = [[print(callgrind._VERSION:match("^%d+%.%d+%.%d+$") ~= nil)]],
  },
  profiler = { setup = [[
local profiler = require "callgrind.profiler"
local function work() local t = {} for i = 1, 10 do t[i] = i * i end return t end]],
    ["profiler.start([opts])"] = [[profiler.start({ lines = false }); work()]],
    ["profiler.stop()"] = [[print(profiler.stop():func("work") ~= nil)]],
    ["profiler.profile(fn [, opts])"] = [[print(profiler.profile(work):total("Instr") > 0)]],
    ["profiler.running()"] = [[print(profiler.running())]],
    ["profiler.until_exit([opts])"] = false,
  },
  Profile = { setup = [[
local prof = assert(callgrind.load("spec/fixtures/extended.callgrind"))
local tmp = os.tmpname()]],
    ["prof.name"] = [[print(prof.name)]],
    ["prof.version"] = [[print(prof.version)]],
    ["prof.creator"] = [[print(prof.creator)]],
    ["prof.cmd"] = [[print(prof.cmd)]],
    ["prof.pid"] = [[print(prof.pid)]],
    ["prof.events"] = [[print(table.concat(prof.events, " "))]],
    ["prof.engine"] = [[print(callgrind.profile(function() end, { engine = "hook" }).engine)]],
    ["prof:totals()"] = [[print(prof:totals().Instructions)]],
    ["prof:total(ev)"] = [[print(prof:total("Instructions"))]],
    ["prof:warnings([kind])"] = [[print(prof:warnings())]],
    ["prof:parts()"] = [[for part in prof:parts() do print(part.number) end]],
    ["prof:functions()"] = [[for fn in prof:functions() do print(fn.name) end]],
    ["prof:calls()"] = [[for call in prof:calls() do print(call.caller.name, call.callee.name, call.count) end]],
    ["prof:jumps()"] = [[print(prof:jumps()() == nil)]],
    ["prof:lines()"] = [[for line in prof:lines() do print(line.fn.name, line.line, line:cost(1)) end]],
    ["prof:ulines([ev, ...])"] = [[for i, line, _, ir in prof:ulines("Instructions") do print(i, line, ir) end]],
    ["prof:func(name [, file [, object]])"] = [[print(prof:func("mian"))]],
    ["prof:memory()"] = [[print(prof:memory() > 0)]],
    ["prof:close()"] = [[callgrind.parse("events: Ir\nfn=f\n1 1\n"):close()]],
    ["prof:define(name, formula [, long_name])"] = [[print(prof:define("Twice", "2 Instructions"):total("Twice"))]],
    ["prof:event_info(ev)"] = [[print(prof:event_info("Twice").formula)]],
    ["prof:derived_events()"] = [[print(table.concat(prof:derived_events(), " "))]],
    ["prof:all_events()"] = [[print(table.concat(prof:all_events(), " "))]],
    ["prof:inclusive_all(ev)"] = [[print(table.concat(prof:inclusive_all(1), " "))]],
    ["prof:cycles()"] = [[print(prof:cycles()())]],
    ["prof:all()"] = [[print(#prof:all())]],
    ["prof:select(fns)"] = [[print(prof:select({ prof:func("main") }):sum(1))]],
    ["prof:find([pattern [, opts]])"] = [[print(#prof:find("^func"))]],
    ["prof:top(n [, ev [, kind]])"] = [[print(prof:top(1, 1, "inclusive")[1].name)]],
    ["prof:group(by [, ev])"] = [[print(prof:group("file")[1])]],
    ["prof:annotate(file [, ev] [, opts])"] = [[print(prof:annotate("file2.c", 1, { source = false })[1])]],
    ["prof:summary()"] = [[print((prof:summary():match("[^\n]*\n([^\n]*)")))]],
    ["prof:write(path_or_file [, opts])"] = [[print(prof:write(tmp, { pid = false }))]],
    ["prof:folded([ev [, opts]])"] = [[print((prof:folded(1):match("^[^\n]*")))]],
    ["prof:write_folded(path [, ev [, opts]])"] = [[print(prof:write_folded(tmp))]],
    ["prof:flamegraph([ev [, opts]])"] = [[print(#prof:flamegraph() > 1000)]],
    ["prof:write_flamegraph(path [, ev [, opts]])"] = [[print(prof:write_flamegraph(tmp, 1, { title = "T" }))]],
    ["prof:dot([ev [, opts]])"] = [[print((prof:dot():match("^[^\n]*")))]],
    ["prof:write_dot(path [, ev [, opts]])"] = [[print(prof:write_dot(tmp))]],
    ["prof:write_pprof(path [, opts])"] = [[print(prof:write_pprof(tmp))]],
    ["prof:html([opts])"] = [[print(prof:html():sub(1, 15))]],
    ["prof:write_html(path [, opts])"] = [[print(prof:write_html(tmp))]],
    ["prof:stacks([ev])"] = [[
local lp = callgrind.profile(function() return ("x"):rep(3) end, { stacks = true })
local sum = 0
for frames, cost in lp:stacks() do sum = sum + cost end
print(sum == lp:total("Instr"))]],
  },
  Part = { setup = [[local part = assert(callgrind.load("spec/fixtures/parts.callgrind")):parts()()]],
    ["part.index"] = [[print(part.index)]],
    ["part.number"] = [[print(part.number)]],
    ["part.pid"] = [[print(part.pid)]],
    ["part.thread"] = [[print(part.thread)]],
    ["part.cmd"] = [[print(part.cmd)]],
    ["part.desc"] = [[print(part.desc.Trigger)]],
    ["part.events"] = [[print(table.concat(part.events, " "))]],
    ["part.summary"] = [[print(part.summary.Ir)]],
    ["part.written_totals"] = [[print(part.written_totals.Dr)]],
    ["part.file"] = [[print(part.file)]],
    ["part:totals()"] = [[print(part:totals().Ir)]],
  },
  Function = { setup = [[
local prof = assert(callgrind.load("spec/fixtures/extended.callgrind"))
local fn = prof:func("func1")]],
    ["fn.name"] = [[print(fn.name)]],
    ["fn.file"] = [[print(fn.file)]],
    ["fn.object"] = [[print(fn.object)]],
    ["fn.index"] = [[print(fn.index)]],
    ["fn.profile"] = [[print(fn.profile == prof)]],
    ["fn:self([ev [, part]])"] = [[print(fn:self("Instructions"))]],
    ["fn:inclusive([ev])"] = [[print(fn:inclusive("Instructions"))]],
    ["fn:inclusive_bounds(ev)"] = [[print(fn:inclusive_bounds(1))]],
    ["fn:lines()"] = [[for line in fn:lines() do print(line.line, line:cost(1)) end]],
    ["fn:ulines([ev, ...])"] = [[for _, line, _, ir in fn:ulines(1) do print(line, ir) end]],
    ["fn:calls()"] = [[for call in fn:calls() do print(call.callee.name, call.count, call:cost(1)) end]],
    ["fn:callers()"] = [[for call in fn:callers() do print(call.caller.name, call.count) end]],
    ["fn:jumps()"] = [[print(fn:jumps()() == nil)]],
    ["fn:callee_functions()"] = [[print(fn:callee_functions().rows[1])]],
    ["fn:caller_functions()"] = [[print(fn:caller_functions().rows[1])]],
    ["fn:cycle()"] = [[print(fn:cycle())]],
    ["fn:tree([ev [, opts]])"] = [[print(fn:tree(1).root)]],
  },
  CostLine = { setup = [[
local prof = assert(callgrind.load("spec/fixtures/extended.callgrind"))
local line = prof:func("func2"):lines()()]],
    ["line.fn"] = [[print(line.fn.name)]],
    ["line.file"] = [[print(line.file)]],
    ["line.line"] = [[print(line.line)]],
    ["line.addr"] = [[print(line.addr)]],
    ["line.part"] = [[print(line.part.number)]],
    ["line:cost([ev])"] = [[print(line:cost("Instructions"))]],
  },
  Call = { setup = [[local call = assert(callgrind.load("spec/fixtures/extended.callgrind")):func("main"):calls()()]],
    ["call.caller"] = [[print(call.caller.name)]],
    ["call.callee"] = [[print(call.callee.name)]],
    ["call.count"] = [[print(call.count)]],
    ["call.file"] = [[print(call.file)]],
    ["call.line"] = [[print(call.line)]],
    ["call.addr"] = [[print(call.addr)]],
    ["call.part"] = [[print(call.part.number)]],
    ["call.target_line"] = [[print(call.target_line)]],
    ["call.target_addr"] = [[print(call.target_addr)]],
    ["call:cost([ev])"] = [[print(call:cost(1))]],
  },
  Jump = { setup = [[local jump = assert(callgrind.load("spec/fixtures/jumps.callgrind")):jumps()()]],
    ["jump.from"] = [[print(jump.from.name)]],
    ["jump.to"] = [[print(jump.to.name)]],
    ["jump.file"] = [[print(jump.file)]],
    ["jump.line"] = [[print(jump.line)]],
    ["jump.addr"] = [[print(string.format("0x%x", jump.addr))]],
    ["jump.target_file"] = [[print(jump.target_file)]],
    ["jump.target_line"] = [[print(jump.target_line)]],
    ["jump.target_addr"] = [[print(string.format("0x%x", jump.target_addr))]],
    ["jump.conditional"] = [[print(jump.conditional)]],
    ["jump.count"] = [[print(jump.count)]],
    ["jump.executed"] = [[print(jump.executed)]],
    ["jump.part"] = [[print(jump.part.number)]],
  },
  Selection = { setup = [[
local prof = assert(callgrind.load("spec/fixtures/extended.callgrind"))
local sel = prof:all()]],
    ["sel:find([pattern [, opts]])"] = [[print(#sel:find("func", { plain = true }))]],
    ["sel:sort([ev [, kind]])"] = [[print(sel:sort(1)[1].name)]],
    ["sel:top(n [, ev [, kind]])"] = [[print(sel:top(2, 1, "inclusive")[2].name)]],
    ["sel:filter(pred)"] = [[print(#sel:filter(function(fn) return fn.file == "file1.c" end))]],
    ["sel:without(opts)"] = [[print(#sel:without({ file = "file2" }))]],
    ["sel:above(fraction [, ev [, kind]])"] = [[print(#sel:above(0.5))]],
    ["sel:sum([ev [, kind]])"] = [[print(sel:sum(1))]],
    ["sel:list()"] = [[print(#sel:list())]],
    ["sel:report([opts])"] = [[print((sel:report({ kind = "inclusive" }):match("[^\n]*")))]],
    ["sel:to_csv([opts])"] = [[print((sel:to_csv():match("[^\r]*")))]],
    ["sel:to_json([opts])"] = [[print((sel:top(1):to_json():match("^[^,]*")))]],
  },
  Edges = { setup = [[
local prof = assert(callgrind.load("spec/fixtures/extended.callgrind"))
local edges = prof:func("main"):callee_functions()]],
    ["edges:sort([ev])"] = [[print(edges:sort(1).rows[1].fn.name)]],
    ["edges:cost(i [, ev])"] = [[print(edges:cost(1, 1))]],
    ["edges.rows"] = [[print(#edges.rows, edges.rows[1])]],
    ["edges:to_csv([opts])"] = [[print((edges:to_csv():match("[^\r]*")))]],
    ["edges:to_json([opts])"] = [[print((edges:to_json():match("^[^,]*")))]],
  },
  Diff = { setup = [[
local old = assert(callgrind.load("spec/fixtures/moved-old.callgrind"))
local new = assert(callgrind.load("spec/fixtures/moved-new.callgrind"))
local d = callgrind.diff(old, new)
local tmp = os.tmpname()]],
    ["d:total(ev)"] = [[print(d:total("Ir"))]],
    ["d:movers(ev [, kind])"] = [[print(d:movers("Ir")[1])]],
    ["d:report([opts])"] = [[print((d:report({ top = 3 }):match("[^\n]*")))]],
    ["d.collisions"] = [[print(#d.collisions)]],
    ["d:matched([ev])"] = [[print(d:matched("Ir").functions, string.format("%.2f", d:matched("Ir").new_share))]],
    ["d:warnings([ev])"] = [[print(#d:warnings())]],
    ["d:flamegraph([ev [, opts]])"] = [[print(d:flamegraph("Ir"):find("red: more", 1, true) ~= nil)]],
    ["d:write_flamegraph(path [, ev [, opts]])"] = [[print(d:write_flamegraph(tmp))]],
    ["d:html([opts])"] = [[print(d:html():find("movers", 1, true) ~= nil)]],
    ["d:write_html(path [, opts])"] = [[print(d:write_html(tmp))]],
  },
  Cycle = { setup = [[local cycle = assert(callgrind.load("spec/fixtures/mutual.callgrind")):func("a"):cycle()]],
    ["cycle.number"] = [[print(cycle.number)]],
    ["cycle.members"] = [[print(#cycle.members)]],
    ["cycle:inclusive(ev)"] = [[print(cycle:inclusive("Ir"))]],
  },
  Tree = { setup = [[local tree = assert(callgrind.load("spec/fixtures/extended.callgrind")):func("main"):tree(1)]],
    ["tree.root"] = [[print(tree.root.fn.name, tree.root.value, #tree.root.children)]],
    ["tree:report()"] = [[print((tree:report():match("[^\n]*")))]],
  },
  Groups = { setup = [[local groups = assert(callgrind.load("spec/fixtures/extended.callgrind")):group("file", 1)]],
    ["groups[i]"] = [[print(groups[1].key, groups[1].cost)]],
    ["groups:to_csv()"] = [[print((groups:to_csv():gsub("\r\n", " ")))]],
    ["groups:to_json()"] = [[print((groups:to_json():match("^[^,]*")))]],
  },
  DiffRows = { setup = [[
local d = callgrind.diff(assert(callgrind.load("spec/fixtures/moved-old.callgrind")),
  assert(callgrind.load("spec/fixtures/moved-new.callgrind")))
local rows = d:movers("Ir")]],
    ["rows[i]"] = [[print(rows[1].name, rows[1].old, rows[1].new, rows[1].delta)]],
    ["rows:to_csv()"] = [[print((rows:to_csv():match("[^\r]*")))]],
    ["rows:to_json()"] = [[print((rows:to_json():match("^[^,]*")))]],
  },
  Warnings = { setup = [[
local text = "events: Ir\nfn=f\n1 5\nbogus line\n"
local warnings = assert(callgrind.parse(text, "w.out", { lenient = true })):warnings()]],
    ["warnings[i]"] = [[print(warnings[1])]],
    ["warnings:to_csv()"] = [[print((warnings:to_csv():match("[^\r]*")))]],
    ["warnings:to_json()"] = [[print((warnings:to_json():match("^[^,]*")))]],
  },
  Annotation = { setup = [[
local ann = assert(callgrind.load("spec/fixtures/extended.callgrind")):annotate("file1.c", 1, { source = false })]],
    ["ann.file"] = [[print(ann.file)]],
    ["ann[i]"] = [[print(ann[1].line, ann[1].cost, ann[1].functions[1].name)]],
    ["ann:report([opts])"] = [[print(#ann:report() > 0)]],
    ["ann:top(n)"] = [[print(ann:top(1)[1].cost == ann:top(#ann)[1].cost, #ann:top(1))]],
    ["ann:to_csv()"] = [[print((ann:to_csv():gsub("\r\n", " ")))]],
    ["ann:to_json()"] = [[print((ann:to_json():match("^[^}]*")))]],
  },
  assert = { setup = [[
local assert = require "luassert"
require "callgrind.check.luassert"
local prof = assert(callgrind.load("spec/fixtures/extended.callgrind"))]],
    ["assert.cost_at_most(limit, target, ev [, kind [, opts]])"] =
      [[assert.cost_at_most(1000, prof:func("main"), "Instructions")]],
    ["assert.calls_at_most(limit, fn [, opts])"] = [[assert.calls_at_most(5, prof:func("func2"))]],
    ["assert.no_regression(old, new, limits [, opts])"] = [[assert.no_regression(prof, prof, { Instructions = "1%" })]],
    ["assert.within_baseline(name, prof, limits [, opts])"] =
      [[assert.within_baseline("ext", prof, { Instructions = "5%" }, { dir = os.tmpname() .. ".d", quiet = true })]],
  },
  history = { setup = [[
local callgrind = require "callgrind"
local history = callgrind.history
local tmp = os.tmpname()]],
    ["history.open([url [, opts]])"] = [[print(history.open(tmp):info().kind)]],
    ["history.context([opts])"] =
      [[print(history.context({ commit = "abc", branch = "main", machine = "ci", time = 0 }).commit)]],
  },
  History = { setup = [[
local callgrind = require "callgrind"
local hist = assert(callgrind.history.open(os.tmpname()))
local rec = function(v) return { { name = "parse", target = "total", event = "Ir", new = v } } end
assert(hist:add(rec(100), { commit = "a1", branch = "main", machine = "ci", time = 1 }))
local tmp = os.tmpname()]],
    ["hist:add(source [, opts])"] =
      [[print(hist:add(rec(120), { commit = "b2", branch = "main", machine = "ci", time = 2 }).added)]],
    ["hist:series([pattern])"] = [[print(hist:series()[1])]],
    ["hist:show(name [, opts])"] = [[print(hist:show("parse/total/Ir")[1].value)]],
    ["hist:changes([opts])"] = [[print(#hist:changes())]],
    ["hist:bmf([opts])"] = [[io.write(hist:bmf({ commit = "a1" }))]],
    ["hist:write_bmf(path [, opts])"] = [[print(hist:write_bmf(tmp))]],
    ["hist:html([opts])"] = [[print(hist:html():match("<title>(.-)</title>"))]],
    ["hist:write_html(path [, opts])"] = [[print(hist:write_html(tmp))]],
    ["hist:info()"] = [[print(hist:info().schema_version)]],
    ["hist:close()"] = [[print(hist:close())]],
  },
}
