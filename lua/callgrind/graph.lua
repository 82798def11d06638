--- Inclusive cost, cycle-aware (FORMAT.md, "Inclusive cost"), and the
-- cycles of the call graph.
--
-- With C(f) the strongly connected component of f: A(f) sums the calls into
-- f from outside C(f); B(f) is self(f) plus the calls from f to outside
-- C(f); inclusive(f) = max(A(f), B(f)). A call inside a cycle (recursion)
-- is never counted, so no cost is counted twice. The core computes the
-- components (iterative Tarjan) and the sums once, on first use.
-- @module callgrind.graph
local core = require "callgrind.core"
local internal = core.internal

local Profile, Function = core.methods.Profile, core.methods.Function

local ipairs, setmetatable = ipairs, setmetatable
local string_format = string.format

local M = {}

local function max(a, b) return a > b and a or b end

--- Inclusive cost of a function: the cost of running it, its callees
-- included, with recursion and cycles counted once.
-- @param[opt] ev event name (base or derived) or index; the base events
--   as a table when absent
-- @usage prof:func("main"):inclusive("Ir")
function Function:inclusive(ev)
  if ev == nil then
    local t = {}
    for _, e in ipairs(self.profile.events) do
      t[e] = max(internal.ab(self, e))
    end
    return t
  end
  return max(internal.ab(self, ev))
end

--- Inclusive cost of every function, as an array by function index.
-- @param ev event name or index
-- @usage local inc = prof:inclusive_all("Ir"); print(inc[fn.index])
function Profile:inclusive_all(ev)
  local a, b = internal.ab_all(self, ev)
  for i = 1, #a do
    if b[i] > a[i] then a[i] = b[i] end
  end
  return a
end

-- Cycles, per profile (weak keys).
local cache = setmetatable({}, { __mode = "k" })

local CycleMethods = {}
local cycle_mt = { __index = CycleMethods, __name = "callgrind.Cycle" }

function cycle_mt.__tostring(c)
  local names = {}
  for i, fn in ipairs(c.members) do
    if i > 4 then names[#names + 1] = "..."; break end
    names[i] = fn.name
  end
  return string_format("callgrind.Cycle %d: %d function%s (%s)", c.number, #c.members,
    #c.members == 1 and "" or "s", table.concat(names, ", "))
end

--- A cycle's inclusive cost: the calls into it from outside, or its members'
-- self costs plus their calls out of it, whichever is larger.
-- @usage for c in prof:cycles() do print(c, c:inclusive("Ir")) end
function CycleMethods:inclusive(ev)
  local inside, a, b = {}, 0, 0
  for _, fn in ipairs(self.members) do inside[fn] = true end
  for _, fn in ipairs(self.members) do
    b = b + fn:self(ev)
    for call in fn:calls() do
      if not inside[call.callee] then b = b + call:cost(ev) end
    end
    for call in fn:callers() do
      if not inside[call.caller] then a = a + call:cost(ev) end
    end
  end
  return max(a, b)
end

local function cycles_of(prof)
  local c = cache[prof]
  if c then return c end
  local comp, cyclic = internal.components(prof)
  local by, list = {}, {}
  for i, k in ipairs(comp) do
    if cyclic[k] then
      local cy = by[k]
      if not cy then
        cy = setmetatable({ members = {} }, cycle_mt)
        by[k] = cy
        list[#list + 1] = cy
      end
      cy.members[#cy.members + 1] = internal.function_at(prof, i)
    end
  end
  for i, cy in ipairs(list) do cy.number = i end
  c = { list = list, of = {} }
  for _, cy in ipairs(list) do
    for _, fn in ipairs(cy.members) do c.of[fn] = cy end
  end
  cache[prof] = c
  return c
end

--- The cycles of the call graph: functions that call themselves, and groups
-- of functions that call each other (strongly connected components with
-- more than one function). Each has `number`, `members` (Functions) and
-- `:inclusive(ev)`.
-- @return an iterator of cycles
-- @usage for cycle in prof:cycles() do print(cycle) end
function Profile:cycles()
  local list, i = cycles_of(self).list, 0
  return function()
    i = i + 1
    return list[i]
  end
end

--- The cycle this function is part of, or nil.
-- @usage local c = prof:func("fib"):cycle()
function Function:cycle()
  return cycles_of(self.profile).of[self]
end

M.Cycle = CycleMethods

return M
