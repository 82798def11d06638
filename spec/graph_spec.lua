-- Inclusive cost with recursion and cycles (docs/format.md): worked out by hand
-- on fixtures whose comments explain the shapes.
local callgrind = require "callgrind"

local function load(name) return assert(callgrind.load("spec/fixtures/" .. name)) end

local function inclusive_of(prof, ev)
  local t = {}
  for fn in prof:functions() do t[fn.name] = fn:inclusive(ev) end
  return t
end

local function cycles_of(prof)
  local out = {}
  for c in prof:cycles() do
    local names = {}
    for i, fn in ipairs(c.members) do names[i] = fn.name end
    table.sort(names)
    out[#out + 1] = { names = names, inclusive = c:inclusive("Ir") }
  end
  table.sort(out, function(a, b) return a.names[1] < b.names[1] end)
  return out
end

describe("fn:inclusive", function()
  it("counts direct recursion once", function()
    local prof = load("recursion.callgrind")
    -- f: calls in from main 30; self 30 (its self-call's 20 is inside)
    assert.are.same({ main = 40, f = 30 }, inclusive_of(prof, "Ir"))
    assert.are.same({ { names = { "f" }, inclusive = 30 } }, cycles_of(prof))
    assert.are.equal(prof:func("f"):cycle(), (prof:cycles()()))
  end)

  it("counts two- and three-function cycles once, a cycle entered from two callers too", function()
    local prof = load("mutual.callgrind")
    assert.are.same({
      main = 126,      -- 1 + 60 + 32 + 33: the whole profile
      a = 60,          -- E: main's 60 + b's 30 = 90; I(C): 60
      b = 50,          -- E: a's 50; I(C): 60
      x = 32, y = 33,
      p = 42,          -- E: x's 30 + r's 12; I(C): 60
      q = 55,          -- E: y's 30 + p's 25
      r = 30,          -- E: q's 28, below its B, its self 30
    }, inclusive_of(prof, "Ir"))
    assert.are.same({
      { names = { "a", "b" }, inclusive = 60 },
      { names = { "p", "q", "r" }, inclusive = 60 },   -- 30 from x + 30 from y
    }, cycles_of(prof))
    assert.is_nil(prof:func("main"):cycle())
  end)

  it("gives a function inside a cycle the calls into it, bounded by the cycle's cost", function()
    local prof = load("cycle-entry.callgrind")
    -- the cycle {a, c, b}: A = 390 (main -> a), members' self 90 + b's
    -- calls to leaf 300 = 390, so I = 390
    assert.are.same({ main = 391, a = 390, c = 390, b = 390, leaf = 300 }, inclusive_of(prof, "Ir"))
    -- lower bounds max(A, B): a its call from main, c its self, b its
    -- self plus its calls to leaf
    local lower = {}
    for fn in prof:functions() do lower[fn.name] = (fn:inclusive_bounds("Ir")) end
    assert.are.same({ main = 391, a = 390, c = 30, b = 330, leaf = 300 }, lower)
    -- the true values (a 390, c 380, b 370) lie between the two
    assert.are.same({ 30, 390 }, { prof:func("c"):inclusive_bounds("Ir") })
  end)

  it("handles callgrind's fib -> fib'2 -> fib'2 shape and a function entered without a call", function()
    local prof = load("fib.callgrind")
    assert.are.same({
      main = 108,        -- 5 + 100 + 3
      fib = 100,
      ["fib'2"] = 90,    -- callgrind_annotate says 90 + 80 = 170
      handler = 100,     -- calls in: 3; its self: 100
    }, inclusive_of(prof, "Ir"))
    -- lower bound and estimate: max(A = 3, B = 100)
    assert.are.same({ 100, 100 }, { prof:func("handler"):inclusive_bounds("Ir") })
  end)

  it("keeps self <= inclusive <= total for every function", function()
    for _, name in ipairs({ "recursion.callgrind", "mutual.callgrind", "fib.callgrind", "extended.callgrind",
                            "inline.callgrind" }) do
      local prof = load(name)
      local total = prof:total(1)
      for fn in prof:functions() do
        local s, i = fn:self(1), fn:inclusive(1)
        assert.is_true(s <= i and i <= total, name .. " " .. fn.name)
      end
    end
  end)

  it("takes derived events, and gives the base events as a table", function()
    local prof = load("derived.callgrind")
    assert.are.same({ Ir = 17, Dr = 5 }, prof:func("main"):inclusive())
    assert.are.equal(22, prof:func("main"):inclusive("Both"))
    assert.are.equal(8, prof:func("g"):inclusive("Both"))
  end)

  it("answers prof:inclusive_all as an array by function index", function()
    local prof = load("mutual.callgrind")
    local all = prof:inclusive_all("Ir")
    for fn in prof:functions() do assert.are.equal(fn:inclusive("Ir"), all[fn.index]) end
  end)

  it("walks a 100,000-function call chain without overflowing any stack", function()
    local n = 100000
    local parts = { "events: Ir\n" }
    for i = 1, n do
      parts[#parts + 1] = ("fn=f%d\n1 1\n"):format(i)
      if i < n then parts[#parts + 1] = ("cfn=f%d\ncalls=1 1\n1 %d\n"):format(i + 1, n - i) end
    end
    local prof = assert(callgrind.parse(table.concat(parts), "chain.out"))
    assert.are.equal(n, prof:func("f1"):inclusive("Ir"))
    assert.are.equal(1, prof:func("f" .. n):inclusive("Ir"))
    assert.are.equal(n // 2 + 1, prof:func("f" .. (n // 2)):inclusive("Ir"))
    assert.is_nil(prof:cycles()())
  end)

  it("walks a 100,000-function cycle as one component", function()
    local n = 100000
    local parts = { "events: Ir\nfn=main\n1 1\ncfn=f1\ncalls=1 1\n1 " .. n .. "\n" }
    for i = 1, n do
      parts[#parts + 1] = ("fn=f%d\n1 1\ncfn=f%d\ncalls=1 1\n1 5\n"):format(i, i % n + 1)
    end
    local prof = assert(callgrind.parse(table.concat(parts), "ring.out"))
    local c = assert(prof:cycles()())
    assert.are.equal(n, #c.members)
    assert.are.equal(n, c:inclusive("Ir"))
    assert.are.equal(n, prof:func("f1"):inclusive("Ir"))
    -- f2: entered only from f1 inside the ring, for 5; lower bound its self
    assert.are.same({ 1, 5 }, { prof:func("f2"):inclusive_bounds("Ir") })
  end)
end)
