-- Every walk bounded (issue 42, point 2): every output of a deep profile
-- gives its result, or nil, a message naming its size and max_bytes, and
-- "memory", in time and memory linear in the profile (or in the output,
-- under max_bytes), with no recursion: a Lua recursion 20,000 and
-- 150,000 calls deep profiled with stacks = true, and a callgrind file
-- of a 50,000-function call chain (main -> f1 -> ... -> f50000, one
-- calls= line each; the 150,000-deep one in make check-long only).
-- Each profile is made in a fresh lua5.4 that runs every output in turn
-- and says, for each, what it returned, its cpu time and the peak of
-- its resident memory (VmHWM, reset before each through
-- /proc/self/clear_refs). The 150,000-deep recursion and the
-- chain: under 5 s and 200 MB each, the profile itself included.
--
-- Before: pprof of the 20,000-deep recursion took 13 s and 990 MB, of
-- the 150,000-deep one 9.1 GB (stopped), of the chain 'not enough
-- memory'; the HTML report of the 150,000-deep one raised 'stack
-- overflow', of the chain's diff 'not enough memory'; the chain's call
-- tree ran out of memory; Graphviz ran for minutes on the chain's graph;
-- the folded stacks' message suggested collapse_recursion for the chain
-- (no recursion) and the flame graph's title said '(recursion collapsed)'.

local H = require "spec.support.helpers"

local lab = H.lab("spec/walks_deep_spec.lua")
setup(function()
  lab:open()
  lab:need("dot")
end)
teardown(function() lab:close() end)

-- The chunk a child runs: makes the profile (PROFILE), then each output;
-- one line per output: name, "ok" or the kind, cpu seconds, peak KB,
-- message.
local RUNNER = [[
local callgrind = require "callgrind"
local dir = %q
%s
local function hwm()
  local f = assert(io.open("/proc/self/status"))
  local kb = tonumber(f:read("a"):match("VmHWM:%%s*(%%d+)"))
  f:close()
  return kb
end
local base = hwm()
local fname = prof:func("main") and "main" or "down"
local outputs = {
  { "write", function(p) return prof:write(p) end },
  { "folded", function(p) return prof:write_folded(p) end },
  { "flamegraph", function(p) return prof:write_flamegraph(p) end },
  { "pprof", function(p) return prof:write_pprof(p) end },
  { "html", function(p) return prof:write_html(p) end },
  { "dot", function(p) return prof:write_dot(p) end },
  { "svg", function(p) return prof:write_dot(p, nil, { format = "svg" }) end },
  { "csv", function(p) return callgrind.write_file_atomic(p, prof:top(1e9):to_csv()) end },
  { "json", function(p) return callgrind.write_file_atomic(p, prof:top(1e9):to_json()) end },
  { "tree", function(p)
    return callgrind.write_file_atomic(p, tostring(prof:func(fname):tree(nil, { depth = 1e9, threshold = 0 })))
  end },
  { "diff", function(p) return callgrind.write_file_atomic(p, tostring(callgrind.diff(prof, prof))) end },
  { "diff_html", function(p) return callgrind.diff(prof, prof):write_html(p) end },
  { "diff_flamegraph", function(p) return callgrind.diff(prof, prof):write_flamegraph(p) end },
}
print("profile", "ok", os.clock(), base, "")
for _, o in ipairs(outputs) do
  collectgarbage("collect")
  local f = assert(io.open("/proc/self/clear_refs", "w"))
  f:write("5")
  f:close()
  local t0 = os.clock()
  local ok, err, kind = o[2](dir .. "/" .. o[1])
  print(o[1], ok and "ok" or tostring(kind), os.clock() - t0, hwm(), (tostring(err):gsub("\n", " ")))
end
]]

local RECURSION = [[
local function down(n) if n == 0 then return 0 end return 1 + down(n - 1) end
local prof = callgrind.profile(function() return down(%d) end, { stacks = true })
]]

local CHAIN = [[
local t = { "events: Ir\nfl=chain.c\nfn=main\n1 1\ncfn=f1\ncalls=1 1\n1 %d\n" }
for i = 1, %d do
  t[#t + 1] = ("fn=f%%d\n1 1\n"):format(i)
  if i < %d then t[#t + 1] = ("cfn=f%%d\ncalls=1 1\n1 %%d\n"):format(i + 1, %d - i) end
end
local prof = assert(callgrind.parse(table.concat(t), "chain"))
t = nil
]]

-- Runs every output of the profile PROFILE makes; { name = { kind, cpu,
-- kb, msg } }.
local n = 0
local function run(profile)
  n = n + 1
  local dir = lab.dir .. "/p" .. n
  lab:run("mkdir " .. H.shq(dir))
  local said = H.fresh_lua(RUNNER:format(dir, profile))
  local r = {}
  for line in said:gmatch("[^\n]+") do
    local name, kind, cpu, kb, msg = line:match("^(%S+)\t(%S+)\t(%S+)\t(%d+)\t(.*)$")
    assert(name, "not a line of the runner: " .. line .. "\n" .. said)
    r[name] = { kind = kind, cpu = tonumber(cpu), kb = tonumber(kb), msg = msg }
  end
  return r, dir
end

-- Every output: ok, or one of kinds (an output's name -> the kind it may
-- give), within cpu seconds and kb of peak memory.
local NAMES = { "write", "folded", "flamegraph", "pprof", "html", "dot", "svg", "csv", "json", "tree", "diff",
  "diff_html", "diff_flamegraph" }
-- make check-asan preloads libasan into every process: the bounds of time
-- and memory hold for the plain build, not under ASan's shadow memory
local ASAN = (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) ~= nil
local function check(r, kinds, cpu, kb)
  if ASAN then cpu, kb = nil, nil end
  for _, name in ipairs(NAMES) do
    local o = assert(r[name], "no line for " .. name)
    assert(o.kind == "ok" or o.kind == kinds[name], ("%s: %s %s"):format(name, o.kind, o.msg))
    if cpu then assert(o.cpu < cpu, ("%s: %.2f s of cpu"):format(name, o.cpu)) end
    if kb then assert(o.kb < kb, ("%s: %d KB at the peak"):format(name, o.kb)) end
  end
end

describe("a recursion 20,000 calls deep", function()
  local r, dir
  setup(function() r, dir = run(RECURSION:format(20000)) end)

  it("gives every output; folded stacks past max_bytes say so, naming collapse_recursion", function()
    check(r, { folded = "memory" })
    assert.are.equal("memory", r.folded.kind)
    assert.truthy(r.folded.msg:find("collapse_recursion = true", 1, true))
  end)

  it("gives pprof's 200 MB of samples, compressed as they are made: under 5 s and 200 MB", function()
    assert.are.equal("ok", r.pprof.kind)
    assert.are.equal("\31\139", H.read_file(dir .. "/pprof"):sub(1, 2))
    -- was 13 s of cpu and 990 MB; the samples alone are 20,000^2 / 2
    -- locations, never all in memory at once (742 MB when they were)
    if not ASAN then
      assert.is_true(r.pprof.cpu < 5, r.pprof.cpu)
      assert.is_true(r.pprof.kb < 200 * 1024, r.pprof.kb .. " KB")
    end
  end)

  it("draws the flame graphs and the report with the recursion collapsed, and says so", function()
    assert.truthy(H.read_file(dir .. "/flamegraph"):find("(recursion collapsed)", 1, true))
    assert.truthy(H.read_file(dir .. "/diff_flamegraph"):find("(recursion collapsed)", 1, true))
    assert.truthy(H.read_file(dir .. "/html"):find('"collapsed":true', 1, true))
  end)
end)

-- (make check-long, CALLGRIND_DEEP=full: its profile and its 13 outputs
-- took a third of this file's time in make test, where the 20,000-deep
-- recursion and the chain keep every output's bounds)
local describe_full = os.getenv("CALLGRIND_DEEP") == "full" and describe or function() end
describe_full("a recursion 150,000 calls deep", function()
  local r
  setup(function() r = run(RECURSION:format(150000)) end)

  it("gives every output or nil, a message and 'memory', each under 5 s and 200 MB", function()
    check(r, { folded = "memory", pprof = "memory" }, 5, 200 * 1024)
  end)

  it("pprof: its size over max_bytes, naming collapse_recursion, which brings it under", function()
    assert.are.equal("memory", r.pprof.kind)
    local size = assert(tonumber(r.pprof.msg:match("the pprof samples would take (%d+) bytes")))
    assert.is_true(size > 150000 * 150000 / 2)
    assert.truthy(r.pprof.msg:find("over max_bytes (268435456): collapse_recursion = true", 1, true))
  end)

  it("the HTML report has its flame graph, collapsed (was 'stack overflow')", function()
    assert.are.equal("ok", r.html.kind)
    assert.are.equal("ok", r.diff_html.kind)
  end)
end)

describe("a call chain of 50,000 functions", function()
  local r, dir
  setup(function() r, dir = run(CHAIN:format(50001, 50000, 50000, 50000)) end)

  it("gives every output or nil, a message and 'memory', each under 5 s and 200 MB", function()
    check(r, { folded = "memory", pprof = "memory" }, 5, 200 * 1024)
  end)

  it("folded and pprof: the size and max_bytes, and no collapse_recursion (there is no recursion)", function()
    for _, name in ipairs({ "folded", "pprof" }) do
      assert.are.equal("memory", r[name].kind)
      assert.truthy(r[name].msg:find("over max_bytes (268435456): raise max_bytes", 1, true), r[name].msg)
      assert.falsy(r[name].msg:find("collapse_recursion", 1, true))
    end
  end)

  it("the flame graph draws the chain, and does not say '(recursion collapsed)'", function()
    local svg = H.read_file(dir .. "/flamegraph")
    assert.falsy(svg:find("recursion collapsed", 1, true))
    assert.truthy(svg:find("f49000", 1, true))
  end)

  it("the call tree is drawn whole, its lines past 64 levels saying their level", function()
    local text = H.read_file(dir .. "/tree")
    assert.truthy(text:find("└─ [49999] f49999  [1 call]", 1, true))
    local widest = 0
    for line in text:gmatch("[^\n]+") do if #line > widest then widest = #line end end
    assert.is_true(widest < 400, widest)
  end)

  it("the DOT graph keeps the hottest 1,000 functions and says how many more", function()
    local dot = H.read_file(dir .. "/dot")
    local more = assert(dot:match("%(the hottest 1000 functions; (%d+) more above the threshold left out: max_nodes%)"))
    assert.are.equal(select(2, dot:gsub("\n  f%d+ %[label", "")), 1000)
    -- above 0.5% of the total (250.005 Ir of 50,001): main and f1 ... f49750 (inclusive 50,001 - i)
    assert.are.equal("48751", more)
    assert.truthy(H.read_file(dir .. "/svg"):find("</svg>", 1, true))
  end)
end)
