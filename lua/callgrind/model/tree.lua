--- Call trees: a function's callees (or callers), level by level, with
-- cycle-aware numbers. A node's value is the cost of the calls on its edge,
-- capped so that a child never shows more than its parent or than the
-- callee's own inclusive cost; a call back to a function already on the
-- path (recursion, a cycle) is shown once, marked, and not expanded.
-- @module callgrind.model.tree
local core = require "callgrind.core"
local args = require "callgrind.args"
local show = require "callgrind.model.show"
local util = require "callgrind.util"

local Function = core.methods.Function

local ipairs, setmetatable, tostring, type = ipairs, setmetatable, tostring, type
local string_format, string_rep, table_concat, table_sort = string.format, string.rep, table.concat, table.sort

local M = {}

local Tree = {}
local tree_mt = { __index = Tree, __name = "callgrind.Tree" }
M.Tree = Tree
args.strict(tree_mt, Tree, "Tree", { ev = true, direction = true, depth = true, threshold = true, total = true,
  limit = true, relative = true })

local function min(a, b) return a < b and a or b end

--- The most levels `Tree:report` draws guides for; a node deeper says
-- its level (`[120] name`) at that indentation, so that a line's width
-- and the text stay linear in the tree.
M.MAX_GUIDES = 64

-- The node's neighbours, one row per function: { fn, count, cost }, from
-- the same aggregation as fn:callee_functions() / fn:caller_functions().
local function neighbours(fn, direction, ev)
  local edges = direction == "callees" and fn:callee_functions() or fn:caller_functions()
  local rows = {}
  for i, row in ipairs(edges.rows) do
    rows[i] = { fn = row.fn, count = row.count, cost = edges:cost(i, ev) }
  end
  return rows
end

local function by_value(a, b)
  if a.value ~= b.value then return a.value > b.value end
  if a.fn.name ~= b.fn.name then return a.fn.name < b.fn.name end
  return a.fn.index < b.fn.index
end

-- Fills node's children (or, at depth, says whether the walk stops
-- there); path: the functions above it and itself.
local function fill(node, path, t)
  if node.level >= t.depth then
    -- does the walk stop here? one call (or caller) says so
    local iter = t.direction == "callees" and node.fn:calls() or node.fn:callers()
    node.cut = iter() ~= nil
    return
  end
  for _, row in ipairs(neighbours(node.fn, t.direction, t.ev)) do
    local value = min(row.cost, node.value)
    if t.direction == "callees" then value = min(value, row.fn:inclusive(t.ev)) end
    if value < t.limit then
      node.hidden = node.hidden + 1
    else
      local child = setmetatable({ fn = row.fn, count = row.count, value = value, level = node.level + 1,
        children = {}, hidden = 0, recursive = path[row.fn] or false }, M.node_mt)
      node.children[#node.children + 1] = child
    end
  end
  table_sort(node.children, by_value)
end

-- Expands root to depth, depth first without recursion (a chain of calls
-- may be 100,000 deep): a stack of the nodes on the way down, each with
-- the number of its children done; path holds their functions.
local function expand(root, t)
  local path = { [root.fn] = true }
  local nodes, done, sp = { root }, { 0 }, 1
  fill(root, path, t)
  while sp > 0 do
    local node = nodes[sp]
    local i = done[sp] + 1
    local child = node.children[i]
    if child then
      done[sp] = i
      if not child.recursive then
        path[child.fn] = true
        fill(child, path, t)
        sp = sp + 1
        nodes[sp], done[sp] = child, 0
      end
    else
      if sp > 1 then path[node.fn] = nil end
      nodes[sp] = nil
      sp = sp - 1
    end
  end
end


--- A node of a tree prints as one line: its function, value and calls.
M.node_mt = { __name = "callgrind.TreeNode" }
function M.node_mt.__tostring(node)
  return string_format("%s  %s%s%s", util.printable(node.fn.name), show.commas(node.value),
    node.count and string_format(" (%s call%s)", show.commas(node.count), node.count == 1 and "" or "s") or "",
    #node.children > 0 and string_format(", %d children", #node.children) or "")
end

--- The call tree below (or above) a function.
-- @tparam[opt] string|integer ev the event (default opts.ev, else the first)
-- @tparam[opt] table opts `ev`, `direction`
--   ("callees", the default, or "callers"), `depth` (levels below the
--   root, default 3), `threshold` (a fraction of the profile's total:
--   edges below it are left out and counted; default 0.01), `relative`
--   (true: the threshold and percentages are shares of the root's
--   inclusive cost)
-- @treturn Tree with `root` (a node: `fn`, `value`, `count`, `level`,
--   `children`, `hidden` (children left out), `recursive` (true on a call
--   back to a function already on the path: not expanded), `cut` (true
--   when depth stopped the walk)), and `ev`, `direction`, `depth`,
--   `threshold`, `total`; `tostring(tree)` draws it
-- @usage print(prof:func("main"):tree("Ir", { depth = 2 }))
function Function:tree(ev, opts)
  local n = 2
  -- fn:tree{ ev = ... }: the options first, as before 0.2.0 (still taken)
  if type(ev) == "table" and opts == nil then ev, opts, n = nil, ev, 1 end
  opts = args.options(opts, "tree", n, "tree")
  local prof = self.profile
  if ev == nil then ev = opts.ev end
  ev = args.event_or_first(prof, ev, "tree", ev == opts.ev and n or 1)
  local direction = args.option(opts.direction, "tree", n, { "callees", "callers" }, "callees")
  local depth = args.count(opts.depth == nil and 3 or opts.depth, "tree", n)
  local threshold = opts.threshold == nil and 0.01 or opts.threshold
  if type(threshold) ~= "number" or threshold < 0 or threshold > 1 then
    args.fail("tree", n, string_format("threshold must be a fraction from 0 to 1, got %s", args.show(threshold)))
  end
  local total = opts.relative and self:inclusive(ev) or prof:total(ev)
  local t = setmetatable({ ev = ev, direction = direction, depth = depth, threshold = threshold, total = total,
    limit = threshold * (total > 0 and total or 0), relative = opts.relative or nil }, tree_mt)
  t.root = setmetatable({ fn = self, value = self:inclusive(ev), level = 0, children = {}, hidden = 0,
    recursive = false }, M.node_mt)
  expand(t.root, t)
  return t
end

--- The tree drawn as text, one node a line: value (share of the total),
-- then the function with its calls on that edge.
-- @treturn string
-- @usage print(tree:report())
function Tree:report()
  local rows = {}
  local function row(node, branch)
    local notes = {}
    if node.level > 0 then notes[#notes + 1] = show.commas(node.count) .. (node.count == 1 and " call" or " calls") end
    if node.recursive then notes[#notes + 1] = "recursive: on the path above, not expanded" end
    if node.cut then notes[#notes + 1] = "more past depth " .. self.depth end
    rows[#rows + 1] = { show.cost(node.value, self.total), branch .. util.printable(node.fn.name)
      .. (#notes > 0 and ("  [" .. table_concat(notes, ", ") .. "]") or "") }
  end
  local function more(node, inner)
    if node.hidden > 0 then
      rows[#rows + 1] = { "", string_format("%s└─ (%d more below %g%%)", inner, node.hidden, self.threshold * 100) }
    end
  end
  -- depth first without recursion; inner[sp]: the guides under the node
  -- at sp. Past M.MAX_GUIDES levels the guides stop growing and a line
  -- says its level, so that a line's width (and the text) stays linear
  local nodes, inner, done, sp = { self.root }, { "" }, { 0 }, 1
  row(self.root, "")
  while sp > 0 do
    local node = nodes[sp]
    local i = done[sp] + 1
    local child = node.children[i]
    if child then
      done[sp] = i
      local last = i == #node.children and node.hidden == 0
      local prefix = inner[sp]
      local deep = child.level > M.MAX_GUIDES
      row(child, prefix .. (last and "└─ " or "├─ ") .. (deep and string_format("[%d] ", child.level) or ""))
      sp = sp + 1
      nodes[sp], done[sp] = child, 0
      inner[sp] = deep and prefix or prefix .. (last and "   " or "│  ")
    else
      more(node, inner[sp])
      nodes[sp], inner[sp] = nil, nil
      sp = sp - 1
    end
  end
  local w = 0
  for _, r in ipairs(rows) do if #r[1] > w then w = #r[1] end end
  local name = util.printable(self.root.fn.name)
  local out = { string_format("%s of %s: %s, depth %d, threshold %g%%%s", self.direction, name,
    tostring(self.ev), self.depth, self.threshold * 100,
    self.relative and string_format(" (percentages of %s's inclusive cost)", name) or "") }
  for _, r in ipairs(rows) do out[#out + 1] = string_rep(" ", w - #r[1]) .. r[1] .. "  " .. r[2] end
  return table_concat(out, "\n")
end

tree_mt.__tostring = Tree.report

return M
