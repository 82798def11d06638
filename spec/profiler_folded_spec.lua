-- The folded stacks that `lua5.4 -lcallgrind.start` writes with
-- CALLGRIND_STACKS=1 (issue 24): built and written in the core
-- (core.prof_write_folded), byte for byte what the Lua code that built
-- them before wrote, checked against that code (kept here) on collected
-- data and on hand-made nodes: names with `;`, newlines and backslashes,
-- stacks with no cost, names longer than the core's staging buffer.
local core = require "callgrind.core"
local escape = require("callgrind.export.stacks").escape
local helpers = require "spec.support.helpers"

local concat, coroutine = table.concat, coroutine

-- The Lua that built the folded text until the core did (profiler.lua's
-- to_folded, with the names already escaped): one line per node with a
-- first cost that is not 0, in node order.
local function lua_folded(st, width, names)
  local out, path = {}, {}
  for node = 1, #st // width do
    local base, parent = (node - 1) * width, st[(node - 1) * width + 1]
    local name = names[st[base + 2]]
    path[node] = parent > 0 and (path[parent] .. ";" .. name) or name
    local cost = st[base + 3]
    if cost ~= 0 then out[#out + 1] = path[node] .. " " .. cost .. "\n" end
  end
  return concat(out)
end

-- Hostile names for n functions, escaped as the profiler escapes them.
local function hostile_names(n)
  local names = {}
  for i = 1, n do names[i] = escape(("f;%d\n\\%s\r;;"):format(i, ("x"):rep(i % 7))) end
  return names
end

describe("core.prof_write_folded", function()
  local lab = helpers.lab("spec/profiler_folded_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  local function written(tag, stacks, width, names)
    local path = lab.dir .. "/" .. tag .. ".folded"
    assert.are.same({ true }, { core.prof_write_folded(path, stacks, width, names) })
    return helpers.read_file(path)
  end

  it("writes what the Lua builder wrote, on collected stacks with hostile names", function()
    -- recursion, a loop calling several functions from several stacks,
    -- a coroutine resumed from two places
    local function leaf(x) return x + 1 end
    local function other(x) return x * 2 end
    local function rec(n) if n == 0 then return leaf(0) end return other(rec(n - 1)) + leaf(n) end
    local function many(k)
      local s = 0
      for i = 1, 40 do s = s + (i % 3 == 0 and leaf(i) or i % 3 == 1 and other(i) or rec(i % 5)) end
      return s + k
    end
    local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(many(i)) end end)
    local data = core.prof_run(function()
      for i = 1, 5 do rec(i) many(i) end
      co() co()
      local function again() return co() end
      again()
    end, { stacks = true })
    local width, names = 2 + #data.events, hostile_names(#data.info)
    local want = lua_folded(data.stacks, width, names)
    assert.is_true(#data.stacks // width > 30)
    assert.matches("f\\;%d+\\n\\\\x*\\r\\;\\; %d+\n", want)
    assert.are.equal(want, written("run", data.stacks, width, names))
  end)

  it("skips stacks with no cost, takes the first cost, and writes names longer than its buffer", function()
    local long = escape(("n;\n"):rep(40000))          -- 160,000 bytes escaped
    local names = { "a", long, "b\\;c", "" }
    -- width 4 (Instr, Time): parent, fn, Instr, Time
    local st = {
      0, 1, 5, 99,
      1, 2, 0, 7,          -- no Instr: no line
      2, 3, 12, 0,
      3, 4, -3, 0,
      2, 1, 1234567890123, 1,
      0, 3, 1, 1,
    }
    local want = lua_folded(st, 4, names)
    assert.are.equal("a 5\na;" .. long .. ";b\\;c 12\na;" .. long .. ";b\\;c; -3\na;" .. long
      .. ";a 1234567890123\nb\\;c 1\n", want)
    assert.are.equal(want, written("hand", st, 4, names))
  end)

  it("writes many lines, deep stacks, through several flushes", function()
    local names, st = hostile_names(50), {}
    for node = 1, 30000 do
      -- a chain 300 deep, then parents anywhere before
      local parent = node <= 300 and node - 1 or (node * 7919) % (node - 1) + 1
      st[#st + 1], st[#st + 2], st[#st + 3] = parent, node % 50 + 1, node % 4 == 0 and 0 or node
    end
    local want = lua_folded(st, 3, names)
    assert.is_true(#want > 2 * 1024 * 1024)
    assert.are.equal(want, written("many", st, 3, names))
    assert.are.equal("", written("none", {}, 3, {}))
  end)

  it("past max bytes names the text's size, byte for byte, and writes nothing", function()
    -- "a 5\n" (4), "a;bb 123\n" (9), "a;bb -7\n" (8), "bb 1234567890\n" (14)
    local st = { 0, 1, 5, 1, 2, 123, 2, 1, 0, 1, 2, -7, 0, 2, 1234567890 }
    local names = { "a", "bb" }
    local path = lab.dir .. "/max.folded"
    assert.are.same({ nil, path .. ": the folded stacks would take 35 bytes, over max_bytes (34): "
        .. "fold the recursion with prof:folded{ collapse_recursion = true }", "memory" },
      { core.prof_write_folded(path, st, 3, names, 34) })
    assert.is_nil(io.open(path))
    assert.are.same({ true }, { core.prof_write_folded(path, st, 3, names, 35) })
    assert.are.equal("a 5\na;bb 123\na;bb -7\nbb 1234567890\n", helpers.read_file(path))
  end)

  it("fails as core.write_file_atomic fails, leaving no file", function()
    local path = lab.dir .. "/no/such/dir/x.folded"
    assert.are.same({ nil, path .. ": No such file or directory", "io" },
      { core.prof_write_folded(path, { 0, 1, 1 }, 3, { "a" }) })
  end)

  it("raises on nodes that are not parent, function, cost", function()
    local function err(st, names)
      local ok, e = pcall(core.prof_write_folded, lab.dir .. "/bad", st, 3, names or { "a" })
      assert.is_false(ok)
      return e
    end
    assert.matches("node 1 is not parent %(an earlier node or 0%), function, cost", err({ 1, 1, 1 }))
    assert.matches("node 2 is not", err({ 0, 1, 1, 0, 2, 1 }))
    assert.matches("node 1 is not", err({ 0, 1, 1.5 }))
    assert.matches("names%[1%] is not a string", err({ 0, 1, 1 }, { 1 }))
    assert.matches("at least 3 integers", select(2, pcall(core.prof_write_folded, "x", {}, 2, {})))
    assert.is_nil(io.open(lab.dir .. "/bad"))
  end)

  it("reads until_exit's stacks where they are, and refuses once they are gone", function()
    -- until_exit's data has the number of nodes in place of the table:
    -- the nodes stay in the state while its builder runs, so the folded
    -- file is the one the table would give
    local body = ([[
      local core = require "callgrind.core"
      local function leaf(n) local s = 0 for i = 1, n do s = s + i end return s end
      local function mid() return leaf(3) + leaf(30) + 1 end
      core.prof_start({ stacks = true }, 0)
      mid()
      leaf(1)
      local stop = core.prof_stopper(function(data)
        local names = {}
        for i, info in ipairs(data.info) do names[i] = info[2] or ("f" .. i) end
        print(math.type(data.stacks), data.stacks > 0)
        print(core.prof_write_folded(arg_path, data.stacks, 3, names))
        return data.stacks, names
      end, true)
      local n, names = stop()
      print(pcall(core.prof_write_folded, arg_path, n, 3, names))
    ]]):gsub("arg_path", ("%q"):format(lab.dir .. "/live.folded"))
    local out = helpers.fresh_lua(body)
    assert.are.equal("integer\ttrue\ntrue\nfalse\t", out:sub(1, #"integer\ttrue\ntrue\nfalse\t"))
    assert.matches("bad argument #2 to '[%w.]*prof_write_folded' %(the collected stacks are gone%)", out)
    local text = helpers.read_file(lab.dir .. "/live.folded")
    -- leaf under mid twice (one node), leaf once at the top: 3 lines with a cost
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l:gsub(" %d+$", "") end
    assert.are.same({ "mid", "mid;leaf", "leaf" }, lines)
  end)
end)
