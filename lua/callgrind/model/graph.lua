--- Inclusive cost, cycle-aware (docs/format.md, "Inclusive cost"), and the
-- cycles of the call graph.
--
-- With C(f) the strongly connected component of f: A(f) sums the calls into
-- f from outside C(f); B(f) is self(f) plus the calls from f to outside
-- C(f); E(f) sums the calls into f from any function but f; I(C) is the
-- component's own inclusive cost, max(sum of its members' A, sum of their
-- B). inclusive(f) = max(B(f), min(E(f), I(C(f)))): outside every cycle
-- that is max(A(f), B(f)), and inside one it is the upper bound a user
-- looks for (an interpreter loop on the stack for 96% of the run). The
-- core computes the components (iterative Tarjan) and A and B once, on
-- first use; E is summed here, for the members of cycles only.
-- @module callgrind.model.graph
local core = require "callgrind.core"
local args = require "callgrind.args"
local util = require "callgrind.util"
local query = require "callgrind.model.query"
local show = require "callgrind.model.show"
local internal = core.internal

local Profile, Function = core.methods.Profile, core.methods.Function

local ipairs, setmetatable = ipairs, setmetatable
local string_format = string.format

local M = {}

local function max(a, b) return a > b and a or b end
local function min(a, b) return a < b and a or b end

local cycles_of

-- E(f): the calls into f from any function other than f.
local function entered(fn, ev)
  local e = 0
  for call in fn:callers() do
    if call.caller ~= fn then e = e + call:cost(ev) end
  end
  return e
end

-- I(C) of each cycle, per event asked (kept with the profile's cycles).
local function cycle_cost(cy, ev)
  local costs = cycles_of(cy.members.profile).costs
  local memo = costs[cy]
  if not memo then memo = {}; costs[cy] = memo end
  local v = memo[ev]
  if v == nil then
    local a, b = 0, 0
    for _, fn in ipairs(cy.members) do
      local fa, fb = internal.ab(fn, ev)
      a, b = a + fa, b + fb
    end
    v = max(a, b)
    memo[ev] = v
  end
  return v
end

-- lower bound, estimate (docs/format.md) of one function.
-- fname: the method asked, for the error when ev is no event (the core
-- resolves ev once and says so).
local function bounds(fn, ev, fname)
  local a, b = internal.ab(fn, ev)
  if a == nil then args.event(fn.profile, ev, fname, 1, 3) end
  local lower = max(a, b)
  local cy = cycles_of(fn.profile).of[fn]
  if not cy then return lower, lower end
  return lower, max(b, min(entered(fn, ev), cycle_cost(cy, ev)))
end

--- Inclusive cost of a function: the cost of everything that ran while it
-- was on the stack, its callees included, recursion counted once. Inside a
-- cycle of the call graph this is an estimate from above (see
-- `fn:inclusive_bounds`).
-- @param[opt] ev event name (base or derived) or index; the base events
--   as a table when absent
-- @usage prof:func("main"):inclusive("Ir")
function Function:inclusive(ev)
  if ev == nil then
    local t = {}
    for _, e in ipairs(self.profile.events) do
      local _, v = bounds(self, e, "inclusive")
      t[e] = v
    end
    return show.costs(self.profile, t)
  end
  local _, v = bounds(self, ev, "inclusive")
  return v
end

--- The two bounds of a function's inclusive cost: `lower`, which it is
-- certainly not below, and `estimate`, the value `fn:inclusive` gives.
-- @param ev event name or index
-- @return lower, estimate
-- @usage local lower, estimate = prof:func("main"):inclusive_bounds("Ir")
function Function:inclusive_bounds(ev)
  return bounds(self, ev, "inclusive_bounds")
end

--- Inclusive cost of every function, as an array by function index.
-- @param ev event name or index
-- @usage local inc = prof:inclusive_all("Ir"); print(inc[fn.index])
function Profile:inclusive_all(ev)
  args.event(self, ev, "inclusive_all", 1)
  local a, b = internal.ab_all(self, ev)
  for i = 1, #a do
    if b[i] > a[i] then a[i] = b[i] end
  end
  for _, cy in ipairs(cycles_of(self).list) do
    local c = cycle_cost(cy, ev)
    for _, fn in ipairs(cy.members) do
      local i = fn.index
      a[i] = max(b[i], min(entered(fn, ev), c))
    end
  end
  return a
end

-- Cycles, per profile, in its state table: { list = { Cycle }, of = {
-- [Function] = its Cycle }, costs = { [Cycle] = { [ev] = I(C) } } }.
local STATE = "callgrind.model.graph"

local CycleMethods = {}
local cycle_mt = { __index = CycleMethods, __name = "callgrind.Cycle" }
args.strict(cycle_mt, CycleMethods, "Cycle", { profile = true })

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
  args.event(self.members.profile, ev, "inclusive", 1)
  return cycle_cost(self, ev)
end

function cycles_of(prof)
  local state = internal.state(prof)
  local c = state[STATE]
  if c then return c end
  local comp, cyclic = internal.components(prof)
  local by, list = {}, {}
  for i, k in ipairs(comp) do
    if cyclic[k] then
      local cy = by[k]
      if not cy then
        cy = setmetatable({ members = setmetatable({ profile = prof }, query.selection_mt) }, cycle_mt)
        by[k] = cy
        list[#list + 1] = cy
      end
      cy.members[#cy.members + 1] = internal.function_at(prof, i)
    end
  end
  for i, cy in ipairs(list) do cy.number = i end
  c = { list = list, of = {}, costs = {} }
  for _, cy in ipairs(list) do
    for _, fn in ipairs(cy.members) do c.of[fn] = cy end
  end
  state[STATE] = c
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
  return util.iterator(function()
    i = i + 1
    return list[i]
  end, "Cycles", #list)
end

--- The cycle this function is part of, or nil.
-- @usage local c = prof:func("fib"):cycle()
function Function:cycle()
  return cycles_of(self.profile).of[self]
end

M.Cycle = CycleMethods

return M
