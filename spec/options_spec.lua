-- Every public function that takes an options table refuses a key it does
-- not know, naming the options there are: "bad argument #N to 'NAME'
-- (unknown option 'x'; options: a, b, c)". The list of functions is
-- help.lua's (the entries with `opts`), so a function added there with
-- options is checked here, and the options the error lists must be the
-- ones help records.
local callgrind = require "callgrind"
local help = require "callgrind.help"

local TEXT = "events: Ir\nfl=a.c\nfn=main\n1 10\ncfn=work\ncalls=2 5\n2 30\nfn=work\n5 30\n"
local prof = assert(callgrind.parse(TEXT, "opts.out"))
local fn = prof:func("main")
local tmp = os.tmpname()

-- How to call each function with opts as its options table: the call, the
-- argument number of opts and a pattern of the name the error gives.
local CALLS = {
  ["callgrind.load(path [, opts])"] = { function(o) return callgrind.load(tmp, o) end, 2, "load" },
  ["callgrind.load({ path, ... } [, opts])"] = { function(o) return callgrind.load({ tmp }, o) end, 2, "load" },
  ["callgrind.files(path [, opts])"] = { function(o) return callgrind.files(tmp, o) end, 2, "files" },
  ["callgrind.parse(text [, name [, opts]])"] = { function(o) return callgrind.parse(TEXT, "x", o) end, 3, "parse" },
  ["callgrind.profile(fn [, opts])"] = { function(o) return callgrind.profile(function() end, o) end, 2, "profile" },
  ["callgrind.spread(script, n [, opts])"] = { function(o)
    return callgrind.spread("no/such/script-for-a-spec.lua", 2, o)   -- if the key is not refused, nothing runs
  end, 3, "spread" },
  ["callgrind.run(argv [, opts])"] = { function(o)
    o.valgrind = "no-such-valgrind-for-a-spec"   -- if the key is not refused, nothing runs
    return callgrind.run({ "true" }, o)
  end, 2, "run" },
  ["callgrind.diff(old, new [, opts])"] = { function(o) return callgrind.diff(prof, prof, o) end, 3, "diff" },
  ["callgrind.check_cost_at_most(limit, target, ev [, kind [, opts]])"] = {
    function(o) return callgrind.check_cost_at_most(1e9, fn, "Ir", "self", o) end, 5, "[%w_]*cost_at_most" },
  ["callgrind.check_calls_at_most(limit, fn [, opts])"] = {
    function(o) return callgrind.check_calls_at_most(1e9, prof:func("work"), o) end, 3, "[%w_]*calls_at_most" },
  ["callgrind.check_no_regression(old, new, limits [, opts])"] = {
    function(o) return callgrind.check_no_regression(prof, prof, { Ir = "5%" }, o) end, 4, "[%w_]*no_regression" },
  ["callgrind.check_within_baseline(name, prof, limits [, opts])"] = { function(o)
    o.dir = "/nonexistent/callgrind-options-spec"   -- never a baseline written
    return callgrind.check_within_baseline("opts", prof, { Ir = "5%" }, o)
  end, 4, "[%w_]*within_baseline" },
  ["profiler.start([opts])"] = { function(o)
    local profiler = require "callgrind.profiler"
    local ok, err = pcall(profiler.start, o)
    if profiler.running() then profiler.stop() end
    if not ok then error(err, 0) end
  end, 1, "start" },
  ["profiler.profile(fn [, opts])"] = {
    function(o) return require("callgrind.profiler").profile(function() end, o) end, 2, "profile" },
  ["profiler.until_exit([opts])"] = { function(o)
    o.out = tmp   -- if the key is not refused, the file is a temporary one
    return require("callgrind.profiler").until_exit(o)
  end, 1, "until_exit" },
  ["prof:find([pattern [, opts]])"] = { function(o) return prof:find("m", o) end, 2, "find" },
  ["prof:annotate(file [, ev] [, opts])"] = { function(o) return prof:annotate("a.c", "Ir", o) end, 3, "annotate" },
  ["prof:write(path_or_file [, opts])"] = { function(o) return prof:write(tmp, o) end, 2, "write" },
  ["fn:tree([ev [, opts]])"] = { function(o) return fn:tree("Ir", o) end, 2, "tree" },
  ["sel:find([pattern [, opts]])"] = { function(o) return prof:all():find("m", o) end, 2, "find" },
  ["sel:without(opts)"] = { function(o) return prof:all():without(o) end, 1, "without" },
  ["sel:report([opts])"] = { function(o) return prof:all():report(o) end, 1, "report" },
  ["d:report([opts])"] = { function(o) return callgrind.diff(prof, prof):report(o) end, 1, "report" },
  ["ann:report([opts])"] = { function(o) return prof:annotate("a.c"):report(o) end, 1, "report" },
  ["assert.cost_at_most(limit, target, ev [, kind [, opts]])"] = { function(o)
    require "callgrind.check.luassert"
    assert.cost_at_most(1e9, fn, "Ir", "self", o)
  end, 5, "[%w_]*cost_at_most" },
  ["assert.calls_at_most(limit, fn [, opts])"] = { function(o)
    require "callgrind.check.luassert"
    assert.calls_at_most(1e9, prof:func("work"), o)
  end, 3, "[%w_]*calls_at_most" },
  ["assert.no_regression(old, new, limits [, opts])"] = { function(o)
    require "callgrind.check.luassert"
    assert.no_regression(prof, prof, { Ir = "5%" }, o)
  end, 4, "[%w_]*no_regression" },
  ["assert.within_baseline(name, prof, limits [, opts])"] = { function(o)
    require "callgrind.check.luassert"
    o.dir = "/nonexistent/callgrind-options-spec"
    assert.within_baseline("opts", prof, { Ir = "5%" }, o)
  end, 4, "[%w_]*within_baseline" },
  ["prof:folded([ev [, opts]])"] = { function(o) return prof:folded("Ir", o) end, 2, "folded" },
  ["prof:write_folded(path [, ev [, opts]])"] = {
    function(o) return prof:write_folded(tmp, "Ir", o) end, 3, "write_folded" },
  ["prof:flamegraph([ev [, opts]])"] = { function(o) return prof:flamegraph("Ir", o) end, 2, "flamegraph" },
  ["prof:write_flamegraph(path [, ev [, opts]])"] = {
    function(o) return prof:write_flamegraph(tmp, nil, o) end, 3, "write_flamegraph" },
  ["prof:dot([ev [, opts]])"] = { function(o) return prof:dot("Ir", o) end, 2, "dot" },
  ["prof:write_dot(path [, ev [, opts]])"] = { function(o) return prof:write_dot(tmp, "Ir", o) end, 3, "write_dot" },
  ["prof:write_pprof(path [, opts])"] = { function(o) return prof:write_pprof(tmp, o) end, 2, "write_pprof" },
  ["prof:html([opts])"] = { function(o) return prof:html(o) end, 1, "html" },
  ["prof:write_html(path [, opts])"] = { function(o) return prof:write_html(tmp, o) end, 2, "write_html" },
  ["d:html([opts])"] = { function(o) return callgrind.diff(prof, prof):html(o) end, 1, "html" },
  ["d:write_html(path [, opts])"] = {
    function(o) return callgrind.diff(prof, prof):write_html(tmp, o) end, 2, "write_html" },
  ["sel:to_csv([opts])"] = { function(o) return prof:all():to_csv(o) end, 1, "to_csv" },
  ["sel:to_json([opts])"] = { function(o) return prof:all():to_json(o) end, 1, "to_json" },
  ["edges:to_csv([opts])"] = { function(o) return fn:callee_functions():to_csv(o) end, 1, "to_csv" },
  ["edges:to_json([opts])"] = { function(o) return fn:callee_functions():to_json(o) end, 1, "to_json" },
  ["d:flamegraph([ev [, opts]])"] = {
    function(o) return callgrind.diff(prof, prof):flamegraph("Ir", o) end, 2, "flamegraph" },
  ["d:write_flamegraph(path [, ev [, opts]])"] = {
    function(o) return callgrind.diff(prof, prof):write_flamegraph(tmp, "Ir", o) end, 3, "write_flamegraph" },
  ["history.open([url [, opts]])"] = {
    function(o) return callgrind.history.open(tmp .. ".db", o) end, 2, "history%.open" },
  ["history.context([opts])"] = { function(o) return callgrind.history.context(o) end, 1, "history%.context" },
}
-- a History's methods, on a store of its own
for sig, c in pairs({ ["hist:add(source [, opts])"] = { "add", 2, true },
  ["hist:show(name [, opts])"] = { "show", 2, "x" }, ["hist:changes([opts])"] = { "changes", 1 },
  ["hist:bmf([opts])"] = { "bmf", 1 },
  ["hist:write_bmf(path [, opts])"] = { "write_bmf", 2, tmp .. ".bmf" }, ["hist:html([opts])"] = { "html", 1 },
  ["hist:write_html(path [, opts])"] = { "write_html", 2, tmp .. ".html" } }) do
  CALLS[sig] = { function(o)
    local hist = assert(callgrind.history.open(tmp .. ".hist.db"))
    local first = c[3] == true and {} or c[3]
    if first ~= nil then return hist[c[1]](hist, first, o) end
    return hist[c[1]](hist, o)
  end, c[2], c[1] }
end

-- The functions whose modules another branch brings to the contract: until
-- it is merged their check is pending; once a check passes, its line here
-- must go (the spec fails to say so). The lead empties this table.
local AWAITS = {
}

local sorted_keys = require("spec.support.helpers").sorted_keys

-- Why the call with an unknown key does not raise the contract's error,
-- or nil when it does.
local function problem(call, opts)
  local ok, err = pcall(call[1], { no_such_option = true })
  if ok then return "it accepts the unknown option 'no_such_option'" end
  err = tostring(err):gsub("^[^:]*:%d+: ", "")
  local want = ("^bad argument #%d to '%s' %%(unknown option 'no_such_option'; options: %s%%)$"):format(
    call[2], call[3], (table.concat(sorted_keys(opts), ", "):gsub("%p", "%%%0")))
  if not err:find(want) then return "it raises: " .. err end
end

describe("every function that takes options", function()
  teardown(function() os.remove(tmp) end)

  local list = {}
  for _, o in ipairs(help.objects) do
    for _, e in ipairs(o.entries) do
      if e.opts then list[#list + 1] = e end
    end
  end

  it("is in help.lua with its options (the list this spec checks)", function()
    assert.is_true(#list >= 25, #list .. " functions")
    for _, e in ipairs(list) do
      assert.is_truthy(CALLS[e[1]], e[1] .. " takes options: add a call for it to CALLS in spec/options_spec.lua")
    end
  end)

  for _, e in ipairs(list) do
    local call = CALLS[e[1]]
    if call then
      if AWAITS[e[1]] then
        it(e[1] .. " refuses an unknown key (once the " .. AWAITS[e[1]] .. " branch is merged)", function()
          local why = problem(call, require("callgrind.api").option_types(e.opts))
          if why then
            pending(e[1] .. ": " .. why .. " (the " .. AWAITS[e[1]] .. " branch applies the contract)")
          else
            error(e[1] .. " keeps the contract now: remove its line from AWAITS in spec/options_spec.lua", 0)
          end
        end)
      else
        it(e[1] .. " refuses an unknown key, naming the options help lists", function()
          local why = problem(call, require("callgrind.api").option_types(e.opts))
          assert.is_nil(why, e[1] .. ": " .. tostring(why))
        end)
      end
    end
  end
end)
