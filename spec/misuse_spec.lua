-- Misuse of the binding: wrong argument types, wrong self, closed profiles,
-- handles and iterators that outlive their profile or its other references.
-- Misuse raises with an exact message; nothing crashes.
local callgrind = require "callgrind"
local core = require "callgrind.core"

local M = core.methods

local TEXT = table.concat({
  "events: Ir Dr",
  "fl=a.c",
  "fn=main",
  "1 5 1",
  "cfn=f",
  "calls=2 10",
  "2 7 2",
  "jump=1 20",
  "3",
  "fn=f",
  "10 7 2",
}, "\n") .. "\n"

local function new()
  return assert(callgrind.parse(TEXT, "t"))
end

-- The message f raised, without the "chunk:line: " a Lua caller may add.
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "did not raise")
  return (tostring(e):gsub("^[^\n]-:%d+: ", ""))
end

local CLOSED = "attempt to use a closed profile"

-- One handle of each kind, from a fresh profile.
local function handles(prof)
  return {
    Function = prof:func("main"),
    Call = prof:calls()(),
    Jump = prof:jumps()(),
    CostLine = prof:lines()(),
  }
end

local FIELDS = {
  Function = { "name", "file", "object", "index" },
  Call = { "caller", "callee", "count", "file", "line", "addr", "target_line", "target_addr", "part", "index" },
  Jump = { "from", "to", "file", "target_file", "line", "addr", "target_line", "target_addr", "conditional",
           "count", "executed", "part" },
  CostLine = { "fn", "file", "line", "addr", "part" },
}
local METHODS = {
  Function = { "self", "lines", "calls", "callers", "jumps" },
  Call = { "cost" },
  Jump = {},
  CostLine = { "cost" },
}
local PROFILE_METHODS = { "totals", "total", "warnings", "functions", "calls", "jumps", "lines", "parts", "func",
                          "memory" }
local PROFILE_FIELDS = { "name", "version", "creator", "cmd", "pid", "events" }

describe("callgrind.load and callgrind.parse", function()
  it("raise on arguments of the wrong type", function()
    assert.are.equal("bad argument #1 to 'load' (string expected, got nil)", err_of(callgrind.load, nil))
    assert.are.equal("bad argument #1 to 'parse' (string expected, got table)", err_of(callgrind.parse, {}))
    assert.are.equal("bad argument #2 to 'parse' (string expected, got boolean)", err_of(callgrind.parse, "x", true))
    assert.are.equal("bad argument #3 to 'parse' (table expected, got 5)", err_of(callgrind.parse, "x", "n", 5))
    assert.are.equal("bad argument #2 to 'load' (table expected, got 'lenient')",
      err_of(callgrind.load, "x", "lenient"))
  end)

  it("raise on unknown option keys", function()
    local names = "; options: chunk, lenient, max_bytes, position_rule, progress, threads)"
    assert.are.equal("bad argument #2 to 'parse' (unknown option 'foo'" .. names,
      err_of(callgrind.parse, "x", { foo = 1 }))
    assert.are.equal("bad argument #3 to 'parse' (unknown option 1" .. names,
      err_of(callgrind.parse, "x", "n", { true }))
    assert.are.equal("bad argument #2 to 'load' (unknown option 'bad'"
      .. "; options: chunk, lenient, max_bytes, merge, position_rule, progress, threads)",
                     err_of(callgrind.load, "x", { lenient = true, bad = 2 }))
  end)
end)

describe("methods", function()
  it("raise on event arguments of the wrong type or out of range", function()
    local prof = new()
    local h = handles(prof)
    local cases = {
      { "self", function(ev) return h.Function:self(ev) end },
      { "cost", function(ev) return h.Call:cost(ev) end },
      { "cost", function(ev) return h.CostLine:cost(ev) end },
      { "total", function(ev) return prof:total(ev) end },
    }
    for _, c in ipairs(cases) do
      local name, f = c[1], c[2]
      local pre = "bad argument #1 to '" .. name .. "' ("
      assert.are.equal(pre .. "unknown event 'nope'; events: Ir Dr)", err_of(f, "nope"))
      assert.are.equal(pre .. "event index 0 out of range 1..2)", err_of(f, 0))
      assert.are.equal(pre .. "event index 3 out of range 1..2)", err_of(f, 3))
      assert.are.equal(pre .. "event index -1 out of range 1..2)", err_of(f, -1))
      assert.are.equal(pre .. "event index must be an integer)", err_of(f, 1.5))
      assert.are.equal(pre .. "event name or index expected, got table; events: Ir Dr)", err_of(f, {}))
      assert.are.equal(pre .. "event name or index expected, got boolean; events: Ir Dr)", err_of(f, true))
    end
    assert.are.equal("bad argument #1 to 'totals' (unknown event 'nope'; events: Ir Dr)",
                     err_of(function() return prof:totals("nope") end))
  end)

  it("look functions up by string only", function()
    local prof = new()
    assert.are.equal("bad argument #1 to 'func' (string expected, got no value)",
                     err_of(function() return prof:func() end))
    assert.are.equal("bad argument #2 to 'func' (string expected, got table)",
                     err_of(function() return prof:func("main", {}) end))
    -- a number is a string to Lua
    assert.are.same({ nil, "not found: no function named '1'; closest names: f", "not_found" }, { prof:func(1) })
  end)

  it("raise when called with the wrong self", function()
    local prof = new()
    local h = handles(prof)
    local others = { Profile = h.Function, Function = prof, Call = h.Function, Jump = prof, CostLine = prof }
    local n = 0
    for tname, wrong in pairs(others) do
      for mname, f in pairs(M[tname]) do
        if debug.getinfo(f, "S").what == "C" then
          local want = "bad argument #1 to '?' (callgrind." .. tname .. " expected, got "
            .. (wrong == prof and "callgrind.Profile" or "callgrind.Function") .. ")"
          assert.are.equal(want, err_of(f, wrong), tname .. "." .. mname)
          assert.are.equal("bad argument #1 to '?' (callgrind." .. tname .. " expected, got number)", err_of(f, 42))
          n = n + 1
        end
      end
    end
    assert.is_true(n >= 17, n .. " C methods")
    assert.are.equal("bad argument #1 to 'self' (callgrind.Function expected, got callgrind.Profile)",
                     err_of(function() return M.Function.self(prof) end))
  end)

  -- A function handle reaches its profile through its metatable, which is
  -- its profile's own: only a handle the binding made passes for one.
  it("take no look-alike for a function handle", function()
    local fn = new():func("main")
    local mt = getmetatable(fn)
    assert.are.equal("callgrind.Function", mt.__name)
    assert.are.equal("bad argument #1 to 'self' (callgrind.Function expected, got callgrind.Function)",
                     err_of(function() return M.Function.self(setmetatable({}, mt)) end))
    local line = fn:lines()()               -- another handle: a userdata too
    assert.are.equal("bad argument #1 to 'self' (callgrind.Function expected, got callgrind.CostLine)",
                     err_of(function() return M.Function.self(line) end))
    -- and given that metatable (its bytes are no function handle's)
    debug.setmetatable(line, mt)
    assert.are.equal("bad argument #1 to 'self' (callgrind.Function expected, got callgrind.Function)",
                     err_of(function() return M.Function.self(line) end))
    local other = getmetatable(new():func("main"))
    assert.are_not.equal(mt, other)
  end)

  it("of two profiles each answer for their own", function()
    local a = new()
    local b = assert(callgrind.parse(TEXT:gsub("1 5 1", "1 9 4"), "u"))
    local fa, fb = a:func("main"), b:func("main")
    assert.are.equal(a, fa.profile)
    assert.are.equal(b, fb.profile)
    assert.are.same({ Ir = 5, Dr = 1 }, fa:self())
    assert.are.same({ Ir = 9, Dr = 4 }, fb:self())
    assert.are.equal(fa, a:func("main"))
    local seen = {}
    for fn in b:functions() do seen[#seen + 1] = fn end
    assert.are.equal(fb, seen[fb.index])
    assert.are.equal(b, seen[2].profile)
    a:close()
    assert.are.equal("callgrind.Function (closed profile)", tostring(fa))
    assert.are.equal("callgrind.Function: main (a.c)", tostring(fb))
  end)
end)

describe("a closed profile", function()
  it("raises on every method and field, prints as closed, closes twice", function()
    local prof = new()
    prof:close()
    for _, m in ipairs(PROFILE_METHODS) do
      assert.are.equal(CLOSED, err_of(prof[m], prof, m == "func" and "main" or nil), m)
    end
    for _, k in ipairs(PROFILE_FIELDS) do
      assert.are.equal(CLOSED, err_of(function() return prof[k] end), k)
    end
    assert.are.equal("callgrind.Profile (closed)", tostring(prof))
    prof:close()
    assert.are.equal("callgrind.Profile (closed)", tostring(prof))
  end)

  it("is closed by a to-be-closed variable", function()
    local keep
    do
      local prof <close> = new()
      keep = prof
      assert.are.equal(12, prof:total("Ir"))
    end
    assert.are.equal(CLOSED, err_of(function() return keep:total("Ir") end))
  end)

  it("makes every handle raise on every field and method", function()
    local prof = new()
    local h = handles(prof)
    prof:close()
    for tname, handle in pairs(h) do
      for _, k in ipairs(FIELDS[tname]) do
        assert.are.equal(CLOSED, err_of(function() return handle[k] end), tname .. "." .. k)
      end
      for _, m in ipairs(METHODS[tname]) do
        assert.are.equal(CLOSED, err_of(handle[m], handle), tname .. ":" .. m)
      end
      assert.are.equal("callgrind." .. tname .. " (closed profile)", tostring(handle))
    end
    -- a closed profile's handles still compare
    assert.is_true(h.Function == h.Function)
  end)

  it("makes an iterator abandoned half-way raise, then lets it be collected", function()
    do
      local prof = new()
      local its = { prof:functions(), prof:calls(), prof:jumps(), prof:lines(), prof:parts() }
      local fn = prof:func("main")
      local fits = { fn:lines(), fn:calls(), fn:callers(), fn:jumps() }
      for _, it in ipairs(its) do it() end
      fits[1]()
      prof:close()
      for i, it in ipairs(its) do assert.are.equal(CLOSED, err_of(it), "iterator " .. i) end
      for i, it in ipairs(fits) do assert.are.equal(CLOSED, err_of(it), "function iterator " .. i) end
    end
    collectgarbage("collect")
    collectgarbage("collect")
  end)
end)

describe("handles", function()
  -- Only the handle survives the call: its profile has no other reference.
  local function orphan(kind)
    local prof = new()
    return handles(prof)[kind]
  end

  it("keep their profile alive after every other reference is dropped", function()
    local fn, call, jump, line = orphan("Function"), orphan("Call"), orphan("Jump"), orphan("CostLine")
    collectgarbage("collect")
    collectgarbage("collect")
    assert.are.equal("main", fn.name)
    assert.are.equal("a.c", fn.file)
    assert.are.same({ Ir = 5, Dr = 1 }, fn:self())
    local n = 0
    for l in fn:lines() do n = n + l:cost("Ir") end
    assert.are.equal(5, n)
    assert.are.equal("f", call.callee.name)
    assert.are.same({ 2, 2, 10, 7 }, { call.count, call.line, call.target_line, call:cost(1) })
    assert.are.same({ 1, 3, 20, "main" }, { jump.count, jump.line, jump.target_line, jump.from.name })
    assert.are.same({ 1, 5, "main" }, { line.line, line:cost("Ir"), line.fn.name })
    assert.are.equal(1, line.part.index)
    assert.are.equal("callgrind.Function: main (a.c)", tostring(fn))
    -- and the profile reached through a handle is the same object each time
    assert.are.equal(call.caller, call.caller)
  end)

  local function walk(make)
    local out = {}
    for x in make() do out[#out + 1] = tostring(x) end
    return out
  end

  local ITERATORS = {
    functions = function(p) return p:functions() end,
    calls = function(p) return p:calls() end,
    jumps = function(p) return p:jumps() end,
    lines = function(p) return p:lines() end,
    parts = function(p) return p:parts() end,
    ["fn:lines"] = function(p) return p:func("main"):lines() end,
    ["fn:calls"] = function(p) return p:func("main"):calls() end,
    ["fn:callers"] = function(p) return p:func("f"):callers() end,
    ["fn:jumps"] = function(p) return p:func("main"):jumps() end,
  }

  it("survive a full collection in the middle of every iterator", function()
    for name, make in pairs(ITERATORS) do
      local want = walk(function() return make(new()) end)
      assert.is_true(#want > 0, name)
      local got = {}
      do
        local it = make(new())  -- the iterator holds the only reference
        collectgarbage("collect")
        for x in it do
          collectgarbage("collect")
          collectgarbage("collect")
          got[#got + 1] = tostring(x)
        end
      end
      assert.are.same(want, got, name)
    end
  end)

  it("keep returning nil from an iterator that has ended", function()
    for name, make in pairs(ITERATORS) do
      local it = make(new())
      for _ in it do end
      for _ = 1, 3 do assert.is_nil(it(), name) end
      collectgarbage("collect")
      assert.is_nil(it(), name)
    end
  end)
end)
