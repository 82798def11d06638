-- fn:tree: call trees with cycle-aware numbers, worked out by hand on the
-- fixtures (their comments give the shapes), and checked for the rules a
-- tree keeps on a real valgrind profile.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local function load(name) return assert(callgrind.load("spec/fixtures/" .. name)) end

-- A node as { name, value, count, recursive, children... } for comparison.
local function shape(node)
  local t = { node.fn.name, node.value, node.count or false, node.recursive or nil,
    hidden = node.hidden > 0 and node.hidden or nil, cut = node.cut or nil }
  for _, c in ipairs(node.children) do t[#t + 1] = shape(c) end
  return t
end

describe("fn:tree", function()
  it("caps every edge at its callee's inclusive cost and its parent's value, and marks the way back into a cycle",
    function()
      -- cycle-entry.callgrind: main -> a -> c -> b -> leaf, b -> a; a, c
      -- and b are a cycle with I = 390. Raw edges: a -> c 750, c -> b 720,
      -- b -> a 390: each is capped at 390.
      local tree = load("cycle-entry.callgrind"):func("main"):tree({ depth = 5, threshold = 0 })
      assert.are.same(
        { "main", 391, false,
          { "a", 390, 1,
            { "c", 390, 3,
              { "b", 390, 3,
                { "a", 390, 2, true },
                { "leaf", 300, 3 } } } } },
        shape(tree.root))
      assert.are.equal(table.concat({
        "callees of main: Ir, depth 5, threshold 0%",
        "391 (100.0%)  main",
        "390 ( 99.7%)  └─ a  [1 call]",
        "390 ( 99.7%)     └─ c  [3 calls]",
        "390 ( 99.7%)        └─ b  [3 calls]",
        "390 ( 99.7%)           ├─ a  [2 calls, recursive: on the path above, not expanded]",
        "300 ( 76.7%)           └─ leaf  [3 calls]",
      }, "\n"), tostring(tree))
    end)

  it("shows direct recursion once, below the function's own inclusive cost", function()
    -- fib.callgrind: main -> fib (100) -> fib'2 (90) -> fib'2 (raw 80)
    local tree = load("fib.callgrind"):func("main"):tree({ threshold = 0 })
    assert.are.same(
      { "main", 108, false,
        { "fib", 100, 1, { "fib'2", 90, 2, { "fib'2", 80, 5, true } } },
        { "handler", 3, 1 } },
      shape(tree.root))
  end)

  it("leaves out edges below the threshold and counts them, and stops at the depth", function()
    local prof = load("cycle-entry.callgrind")
    -- 80% of 391 = 312.8: leaf's 300 is left out under b
    local tree = prof:func("main"):tree({ depth = 5, threshold = 0.8 })
    local b = tree.root.children[1].children[1].children[1]
    assert.are.same({ "b", 390, 3, { "a", 390, 2, true }, hidden = 1 }, shape(b))
    assert.are.equal("                       └─ (1 more below 80%)", tostring(tree):match("[^\n]*$"))
    -- depth 1: main and a, and a is marked as going on
    tree = prof:func("main"):tree({ depth = 1 })
    assert.are.same({ "main", 391, false, { "a", 390, 1, cut = true } }, shape(tree.root))
    assert.are.equal("390 ( 99.7%)  └─ a  [1 call, more past depth 1]",
      select(3, tostring(tree):match("^(.-)\n(.-)\n(.*)$")))
  end)

  it("walks callers, each capped at what its child shows", function()
    -- leaf (300) <- b (its 3 calls, 300) <- c (720, capped at 300) <- a
    local tree = load("cycle-entry.callgrind"):func("leaf"):tree({ direction = "callers", depth = 3, threshold = 0 })
    assert.are.same({ "leaf", 300, false, { "b", 300, 3, { "c", 300, 3, { "a", 300, 3, cut = true } } } },
      shape(tree.root))
    assert.are.equal("callers of leaf: Ir, depth 3, threshold 0%", tostring(tree):match("^[^\n]*"))
  end)

  it("takes a derived event and says what is wrong with its options", function()
    local prof = load("derived.callgrind")
    local tree = prof:func("main"):tree({ ev = "Both", threshold = 0 })
    assert.are.equal(prof:func("main"):inclusive("Both"), tree.root.value)
    local main = prof:func("main")
    local cases = {
      { { direction = "up" }, "invalid option 'up'; expected one of: callees, callers" },
      { { dept = 2 }, "unknown option 'dept'; options: depth, direction, ev, relative, threshold" },
      { { depth = "2" }, "option 'depth' must be number, got '2'" },
      { { depth = -1 }, "count must not be negative, got -1" },
      { { threshold = 2 }, "threshold must be a fraction from 0 to 1, got 2" },
      { { ev = "Nope" }, "unknown event 'Nope'; events: Ir Dr, derived: Both Double Diff" },
    }
    for _, c in ipairs(cases) do
      assert.has_error(function() main:tree(c[1]) end, "bad argument #1 to 'tree' (" .. c[2] .. ")")
    end
    -- the event first, as everywhere; in the options table too
    assert.are.equal(tostring(main:tree({ ev = "Ir" })), tostring(main:tree("Ir")))
    assert.are.equal(tostring(main:tree(nil, { ev = "Ir", depth = 1 })), tostring(main:tree("Ir", { depth = 1 })))
    assert.has_error(function() main:tree("Irr") end,
      "bad argument #1 to 'tree' (unknown event 'Irr'; events: Ir Dr, derived: Both Double Diff)")
    assert.has_error(function() main:tree("Ir", { depth = -1 }) end,
      "bad argument #2 to 'tree' (count must not be negative, got -1)")
  end)
end)

describe("fn:tree on a valgrind profile of the fixture program", function()
  local lab = H.lab("spec/tree_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  it("never shows a child above its parent or its callee's inclusive cost, nor a function twice on a path", function()
    local prof = H.load(lab:callgrind("tree", ""))
    local checked = 0
    local function walk(node, path)
      assert.is_false(path[node.fn] and not node.recursive or false, node.fn.name .. " twice on a path")
      if node.recursive then
        assert.are.same({}, node.children)
        return
      end
      path[node.fn] = true
      for _, child in ipairs(node.children) do
        checked = checked + 1
        assert.is_true(child.value <= node.value, child.fn.name .. " above its parent " .. node.fn.name)
        assert.is_true(child.value <= child.fn:inclusive("Ir"), child.fn.name .. " above its inclusive cost")
        walk(child, path)
      end
      path[node.fn] = nil
    end
    for fn in prof:functions() do walk(fn:tree({ depth = 4, threshold = 0 }).root, {}) end
    assert.is_true(checked > 500)
    -- fib'2 calls itself: the raw edge (every nested call counted again)
    -- is far above fib'2's inclusive cost; the tree shows it capped
    local fib2 = prof:func("fib'2")
    local raw = 0
    for call in fib2:calls() do raw = raw + call:cost("Ir") end
    local node = prof:func("fib"):tree({ threshold = 0 }).root.children[1]
    assert.are.equal(fib2, node.fn)
    local back = node.children[1]
    assert.are.same({ fib2, true }, { back.fn, back.recursive })
    assert.is_true(raw > 2 * fib2:inclusive("Ir"))
    assert.are.equal(fib2:inclusive("Ir"), back.value)
  end)
end)
