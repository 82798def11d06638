-- Estimated stacks keep every exact number they can: whatever the call
-- graph, the lines of each function in `prof:folded` (and the flat of
-- each function in pprof) add up to its exact self cost, for every event,
-- and the whole to the total; recursion is drawn by entering the function
-- again, up to `stacks.MAX_REPEAT` times on one stack.
local callgrind = require "callgrind"
local stacks = require "callgrind.export.stacks"
local H = require "spec.support.helpers"

local shq = H.shq
local lab = H.lab("spec/stacks_exact_spec.lua")

-- A run as a tree of activations { name, Ir, Dr, children... }, shaped
-- like dkjson's encoder and scanner: encode2 recurses directly (and calls
-- addpair, cheap there), scan and scanvalue recurse into each other (and
-- call addpair, costly there: its cost differs by path).
local RUN = { "main", 5, 1,
  { "encode", 10, 2,
    { "encode2", 100, 30,
      { "encode2", 100, 30, { "encode2", 100, 30, { "addpair", 1, 1 } }, { "addpair", 1, 1 } },
      { "addpair", 1, 1 } } },
  { "scan", 20, 4,
    { "scanvalue", 300, 70,
      { "scan", 20, 4, { "scanvalue", 300, 70, { "addpair", 500, 90 } } },
      { "addpair", 500, 90 } } } }

-- The callgrind text of a run, as valgrind writes it: each function's self
-- cost, and for each caller and callee the calls and their inclusive
-- cost summed over every activation; with the self costs by name.
local function callgrind_text(run)
  local self, calls, order = {}, {}, {}
  local function walk(nd)
    local name = nd[1]
    if not self[name] then self[name] = { 0, 0 }; order[#order + 1] = name; calls[name] = {} end
    self[name][1], self[name][2] = self[name][1] + nd[2], self[name][2] + nd[3]
    local ir, dr = nd[2], nd[3]
    for i = 4, #nd do
      local ci, cd = walk(nd[i])
      local c = calls[name][nd[i][1]]
      if not c then
        c = { 0, 0, 0 }
        calls[name][nd[i][1]] = c
        calls[name][#calls[name] + 1] = nd[i][1]
      end
      c[1], c[2], c[3] = c[1] + 1, c[2] + ci, c[3] + cd
      ir, dr = ir + ci, dr + cd
    end
    return ir, dr
  end
  walk(run)
  local out = { "events: Ir Dr" }
  for _, name in ipairs(order) do
    out[#out + 1] = "fn=" .. name
    out[#out + 1] = ("1 %d %d"):format(self[name][1], self[name][2])
    for _, callee in ipairs(calls[name]) do
      local c = calls[name][callee]
      out[#out + 1] = "cfn=" .. callee
      out[#out + 1] = "calls=" .. c[1] .. " 1"
      out[#out + 1] = ("2 %d %d"):format(c[2], c[3])
    end
  end
  return table.concat(out, "\n") .. "\n", self
end

-- Folded text -> the lines of each function (the last frame), the total,
-- and the most times one name is on one stack.
local function leaves(text)
  local leaf, total, repeats = {}, 0, 0
  for frames, n in text:gmatch("([^\n]-) (%d+)\n") do
    local seen = {}
    for name in (frames .. ";"):gmatch("([^;]*);") do
      seen[name] = (seen[name] or 0) + 1
      if seen[name] > repeats then repeats = seen[name] end
    end
    local last = frames
    for i = #frames, 1, -1 do
      if frames:sub(i, i) == ";" and frames:sub(i - 1, i - 1) ~= "\\" then last = frames:sub(i + 1); break end
    end
    leaf[last] = (leaf[last] or 0) + tonumber(n)
    total = total + tonumber(n)
  end
  return leaf, total, repeats
end

-- Every function's self cost (positive ones: a folded count cannot be
-- negative) by name against the folded lines; the total.
local function check_folded(prof, ev, opts, what)
  local leaf, total = leaves(prof:folded(ev, opts))
  local want, sum, negative = {}, 0, false
  for fn in prof:functions() do
    local v = fn:self(ev)
    if v < 0 then negative = true end
    if v > 0 then want[fn.name] = (want[fn.name] or 0) + v; sum = sum + v end
  end
  -- names with ; or \ are escaped in folded text: compare them escaped
  local esc = {}
  for k, v in pairs(want) do esc[stacks.escape(k)] = v end
  assert.are.same(esc, leaf, what .. " " .. tostring(ev))
  assert.are.equal(sum, total, what .. " " .. tostring(ev))
  if not negative then assert.are.equal(prof:total(ev), total, what .. " " .. tostring(ev)) end
end

local pprof_decode = require("spec.support.pprof").flat

local function self_by_name(prof, ev)
  local t = {}
  for fn in prof:functions() do
    local v = fn:self(ev)
    if v ~= 0 then t[fn.name] = (t[fn.name] or 0) + v end
  end
  return t
end

setup(function() lab:open() end)
teardown(function() lab:close() end)

describe("estimated stacks, a dkjson-like run", function()
  local text, self = callgrind_text(RUN)
  local prof = assert(callgrind.parse(text, "dkjson-like"))

  it("is the run the spec means (self costs summed by hand)", function()
    assert.are.same({ main = { 5, 1 }, encode = { 10, 2 }, encode2 = { 300, 90 }, addpair = { 1003, 183 },
      scan = { 40, 8 }, scanvalue = { 600, 140 } }, self)
    for name, v in pairs(self) do
      assert.are.equal(v[1], prof:func(name):self("Ir"), name)
      assert.are.equal(v[2], prof:func(name):self("Dr"), name)
    end
  end)

  it("gives every function its exact self cost and the whole the total, every event and threshold", function()
    for _, ev in ipairs({ "Ir", "Dr" }) do
      for _, threshold in ipairs({ 0, 1e-4, 0.01, 0.2, 0.5 }) do
        check_folded(prof, ev, { threshold = threshold }, "threshold " .. threshold)
      end
    end
  end)

  it("enters a recursive function again", function()
    local folded = prof:folded("Ir", { threshold = 0 })
    assert.is_truthy(folded:find("\nmain;encode;encode2;encode2 %d+\n"))
    assert.is_truthy(folded:find("\nmain;scan;scanvalue;scan;scanvalue %d+\n"))
    -- a function outside every cycle: at threshold 0 its frames add up to
    -- its inclusive cost, up to the rounding of the shares (one unit a
    -- frame, and of the frames under it)
    local tree = stacks.tree(prof, "Ir", 0)
    for _, name in ipairs({ "encode", "main" }) do
      local sum, frames = 0, 0
      stacks.walk(tree, function(nd) if nd.fn.name == name then sum = sum + nd.total; frames = frames + 1 end end)
      assert.is_true(math.abs(prof:func(name):inclusive("Ir") - sum) <= 2 * frames, name .. " " .. sum)
    end
  end)

  it("writes pprof whose flat per function is the exact self cost, and says the stacks are estimated", function()
    local path = lab.dir .. "/d.pb.gz"
    assert.is_true(prof:write_pprof(path))
    local flat, total, comments = pprof_decode(path)
    assert.are.same(self_by_name(prof, "Ir"), flat)
    assert.are.equal(prof:total("Ir"), total)
    local said = false
    for _, c in ipairs(comments) do if c:find("estimated from the call graph", 1, true) then said = true end end
    assert.is_true(said, table.concat(comments, " | "))
  end)

  it("agrees with go tool pprof -top: flat of the top functions is their exact self cost", function()
    if not os.execute("command -v go >/dev/null 2>&1") then
      pending("go is not installed")
      return
    end
    local path = lab.dir .. "/top.pb.gz"
    assert.is_true(prof:write_pprof(path))
    local out = lab:run("cd /tmp && HOME=${HOME:-/tmp} go tool pprof -top -nodecount=6 " .. shq(path) .. " 2>&1",
      "go tool pprof")
    local rows = 0
    for flat, name in out:gmatch("\n%s*(%d+)%s+[%d.]+%%%s+[%d.]+%%%s+%d+%s+[%d.]+%%%s+(%S+)") do
      assert.are.equal(prof:func(name):self("Ir"), tonumber(flat), name)
      rows = rows + 1
    end
    assert.are.equal(6, rows, out)
  end)
end)

describe("estimated stacks of deep recursion", function()
  -- f recurses 40 deep, each activation 1000 of its own: each f frame
  -- gives most of its budget to the next one
  local run = { "main", 1 , 1 }
  local nd = run
  for _ = 1, 40 do
    local kid = { "f", 1000, 1 }
    nd[#nd + 1] = kid
    nd = kid
  end
  local prof = assert(callgrind.parse((callgrind_text(run)), "deep"))

  it("enters it again up to the bound, with exact self costs", function()
    for _, threshold in ipairs({ 0, 1e-4 }) do
      local _, _, repeats = leaves(prof:folded("Ir", { threshold = threshold }))
      assert.are.equal(stacks.MAX_REPEAT, repeats)
      check_folded(prof, "Ir", { threshold = threshold }, "deep")
    end
  end)
end)

describe("estimated stacks of real profiles", function()
  it("keep every function's self cost on every file of the corpus that loads, every event", function()
    local p = assert(io.popen("find spec/corpus -type f ! -name '*.md' | sort"))
    local n = 0
    for path in p:lines() do
      local prof = callgrind.load(path)
      if prof and prof.events[1] then
        n = n + 1
        for _, ev in ipairs(prof.events) do check_folded(prof, ev, nil, path) end
      end
    end
    p:close()
    assert.is_true(n >= 30, n .. " files")
  end)

  it("keep them on a fresh valgrind profile, in folded text and in pprof", function()
    lab:need("valgrind")
    local prof = assert(callgrind.load(lab:callgrind("fresh", "")))
    for _, ev in ipairs(prof.events) do check_folded(prof, ev, nil, "valgrind") end
    local path = lab.dir .. "/v.pb.gz"
    assert.is_true(prof:write_pprof(path))
    local flat, total = pprof_decode(path)
    assert.are.same(self_by_name(prof, prof.events[1]), flat)
    assert.are.equal(prof:total(prof.events[1]), total)
  end)
end)
