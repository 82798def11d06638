--- Call graphs in Graphviz DOT, in the manner of gprof2dot: a node per
-- function above a share of the total inclusive cost, an edge per caller
-- and callee above another, labels with percentages and call counts, a
-- colour scale from cold (blue) to hot (red). Cycles are drawn as they
-- are (a recursive function has an edge to itself), never expanded.
-- @module callgrind.export.dot
local core = require "callgrind.core"
local args = require "callgrind.args"
local stacks = require "callgrind.export.stacks"
local util = require "callgrind.util"
require "callgrind.model.graph"
local internal = core.internal

local Profile = core.methods.Profile

local ipairs, tostring, type = ipairs, tostring, type
local math_floor, math_max, math_min = math.floor, math.max, math.min
local string_format, table_concat, table_sort = string.format, table.concat, table.sort

local M = {}

--- Default thresholds: nodes from 0.5% of the total (inclusive), edges
-- from 0.1%.
M.NODE_THRESHOLD, M.EDGE_THRESHOLD = 0.005, 0.001

--- The most nodes a graph has by default (`max_nodes`): the hottest are
-- kept, and the title says how many more were above the threshold.
M.MAX_NODES = 1000

-- A DOT double-quoted string: \ and " escaped, & as &amp; (Graphviz reads
-- HTML entities in labels), the rest made printable.
local DQ = { ["\\"] = "\\\\", ['"'] = '\\"', ["&"] = "&amp;" }
local function quote(s)
  return '"' .. stacks.printable(s):gsub('[\\"&]', DQ) .. '"'
end

--- The longest name a node's label shows, in characters: a longer one is
-- cut in the middle (Graphviz refuses a quoted string over 16,384 bytes)
-- and kept whole in the node's tooltip.
M.MAX_LABEL = 200

-- A node's name for its label (escaped as inside a DOT string), and the
-- tooltip attribute holding the whole name when the label shortens it:
-- pieces of at most 2,000 bytes joined with DOT's "+", each under
-- Graphviz's limit whatever its escapes.
local function node_name(name)
  local shown = stacks.printable(name)
  local chars = utf8.len(shown)
  if chars <= M.MAX_LABEL then return quote(name):sub(2, -2), "" end
  local half = M.MAX_LABEL // 2
  local cut = shown:sub(1, utf8.offset(shown, half) - 1) .. "\xE2\x80\xA6"
    .. shown:sub(utf8.offset(shown, chars - half + 2))
  local pieces, i = {}, 1
  while i <= #shown do
    local j = math_min(#shown, i + 1999)
    while j < #shown and shown:byte(j + 1) >= 0x80 and shown:byte(j + 1) < 0xC0 do j = j - 1 end
    pieces[#pieces + 1] = '"' .. shown:sub(i, j):gsub('[\\"&]', DQ) .. '"'
    i = j + 1
  end
  return cut:gsub('[\\"&]', DQ), ", tooltip=" .. table_concat(pieces, " + ")
end

-- HSL (0..1 each) to "#rrggbb".
local function hsl(h, s, l)
  local function f(n)
    local k = (n + h * 12) % 12
    local a = s * math_min(l, 1 - l)
    return l - a * math_max(-1, math_min(k - 3, 9 - k, 1))
  end
  return string_format("#%02x%02x%02x", math_floor(f(0) * 255 + 0.5), math_floor(f(8) * 255 + 0.5),
    math_floor(f(4) * 255 + 0.5))
end

-- gprof2dot's temperature colour map: weight 0 (cold) is blue, 1 (hot)
-- red, with a gamma so that small shares are still told apart.
local function colour(weight)
  weight = math_max(0, math_min(1, weight)) ^ (1 / 2.2)
  return hsl(2 / 3 * (1 - weight), 0.8 + 0.2 * weight, 0.5 - 0.1 * weight)
end

local function pct(v, total)
  return total > 0 and string_format("%.2f%%", v * 100 / total) or "0%"
end

-- A function given as a Function of this profile or a name.
local function resolve(prof, f, fname, opt)
  if type(f) == "userdata" and f.profile == prof then return f end
  if type(f) == "string" then
    local fn = prof:func(f)
    if fn then return fn end
    local _, err = prof:func(f)
    args.fail(fname, 2, string_format("option '%s': %s: %s", opt, f, tostring(err)), 5)
  end
  args.fail(fname, 2, string_format("option '%s' must be a function name or a Function of this profile, got %s",
    opt, args.show(f)), 5)
end


-- Functions reachable from start along edges (next(node) -> neighbours),
-- within depth steps: { [fn] = distance }.
local function reach(start, next_of, depth)
  local dist, queue, head = { [start] = 0 }, { start }, 1
  while queue[head] do
    local fn = queue[head]
    head = head + 1
    local d = dist[fn]
    if not depth or d < depth then
      for _, g in ipairs(next_of(fn)) do
        if dist[g] == nil then
          dist[g] = d + 1
          queue[#queue + 1] = g
        end
      end
    end
  end
  return dist
end

-- The graph: nodes (Functions, hottest first) and edges.
local function build(prof, ev, opts, fname)
  local nt = stacks.threshold(opts.node_threshold, fname, 2, 4, M.NODE_THRESHOLD)
  local et = stacks.threshold(opts.edge_threshold, fname, 2, 4, M.EDGE_THRESHOLD)
  local depth = opts.depth
  if depth ~= nil then
    if depth ~= math_floor(depth) or depth < 0 then
      args.fail(fname, 2, string_format("depth must be a whole number >= 0, got %s", tostring(depth)), 4)
    end
    if opts.root == nil and opts.leaf == nil then
      args.fail(fname, 2, "option 'depth' needs option 'root' or 'leaf'", 4)
    end
  end
  local root = opts.root ~= nil and resolve(prof, opts.root, fname, "root") or nil
  local leaf = opts.leaf ~= nil and resolve(prof, opts.leaf, fname, "leaf") or nil
  local total = prof:total(ev)
  local inc = prof:inclusive_all(ev)
  local self_all = internal.self_all(prof, ev)
  local node_min, edge_min = nt * total, et * total
  local nodes, is_node = {}, {}
  for i = 1, #inc do
    if inc[i] > 0 and inc[i] >= node_min then
      local fn = internal.function_at(prof, i)
      nodes[#nodes + 1] = fn
      is_node[fn] = true
    end
  end
  for _, fn in ipairs({ root, leaf }) do
    if not is_node[fn] then nodes[#nodes + 1] = fn; is_node[fn] = true end
  end
  -- edges between nodes, aggregated per caller and callee
  local edges, out_of, into = {}, {}, {}
  for _, fn in ipairs(nodes) do
    out_of[fn], into[fn] = {}, into[fn] or {}
  end
  for _, fn in ipairs(nodes) do
    local by, list = {}, {}
    for call in fn:calls() do
      local g = call.callee
      if is_node[g] then
        local e = by[g]
        if not e then
          e = { from = fn, to = g, cost = 0, count = 0 }
          by[g] = e
          list[#list + 1] = e
        end
        e.cost = e.cost + call:cost(ev)
        e.count = e.count + call.count
      end
    end
    for _, e in ipairs(list) do
      -- a call's inclusive cost capped at the callee's, as trees are
      e.cost = math_min(e.cost, inc[e.to.index])
      if e.cost > 0 and e.cost >= edge_min then
        edges[#edges + 1] = e
        local o = out_of[fn]
        o[#o + 1] = e.to
        local n = into[e.to]
        n[#n + 1] = fn
      end
    end
  end
  -- the subgraph below root / above leaf
  if root or leaf then
    local keep_r = root and reach(root, function(f) return out_of[f] end, depth)
    local keep_l = leaf and reach(leaf, function(f) return into[f] end, depth)
    local kept = {}
    for _, fn in ipairs(nodes) do
      if (not keep_r or keep_r[fn]) and (not keep_l or keep_l[fn]) then kept[#kept + 1] = fn end
    end
    local keep = {}
    for _, fn in ipairs(kept) do keep[fn] = true end
    local kept_edges = {}
    for _, e in ipairs(edges) do
      if keep[e.from] and keep[e.to] then kept_edges[#kept_edges + 1] = e end
    end
    nodes, edges = kept, kept_edges
  end
  table_sort(nodes, function(a, b)
    local x, y = inc[a.index], inc[b.index]
    if x ~= y then return x > y end
    return a.index < b.index
  end)
  -- the hottest max_nodes (and root and leaf): Graphviz takes minutes
  -- to lay out tens of thousands (a 50,000-function chain: over one)
  local left_out, max_nodes = 0, opts.max_nodes == nil and M.MAX_NODES or args.count(opts.max_nodes, fname, 2, 4)
  if #nodes > max_nodes then
    local kept, keep = {}, {}
    for _, fn in ipairs(nodes) do
      if #kept < max_nodes or fn == root or fn == leaf then kept[#kept + 1] = fn; keep[fn] = true end
    end
    left_out = #nodes - #kept
    local kept_edges = {}
    for _, e in ipairs(edges) do
      if keep[e.from] and keep[e.to] then kept_edges[#kept_edges + 1] = e end
    end
    nodes, edges = kept, kept_edges
  end
  return nodes, edges, inc, self_all, total, root, left_out
end

-- The node the graph opens on: opts.root, else the hottest node no other
-- node calls (the program's entry), else (all in cycles) the hottest.
local function top_node(nodes, edges, root)
  if root then return root end
  local called = {}
  for _, e in ipairs(edges) do
    if e.from ~= e.to then called[e.to] = true end
  end
  for _, fn in ipairs(nodes) do
    if not called[fn] then return fn end
  end
  return nodes[1]
end

-- Calls into a function (from any caller).
local function calls_into(fn)
  local n = 0
  for call in fn:callers() do n = n + call.count end
  return n
end

local function dot_text(prof, ev, opts, fname)
  local nodes, edges, inc, self_all, total, root, left_out = build(prof, ev, opts, fname)
  local out = {}
  local title = opts.title or string_format("%s: %s %s", util.name_of(prof) or "profile",
    require("callgrind.model.report").commas(total), ev)
  if left_out > 0 then
    title = title .. string_format(" (the hottest %d functions; %d more above the threshold left out: max_nodes)",
      #nodes, left_out)
  end
  out[1] = "digraph callgraph {\n"
  out[2] = string_format('  graph [fontname="Helvetica", nodesep=0.25, ranksep=0.3, label=%s, labelloc=t];\n',
    quote(title))
  out[3] = '  node [fontname="Helvetica", shape=box, style=filled, fontcolor=white, width=0, height=0];\n'
  out[4] = '  edge [fontname="Helvetica"];\n'
  for _, fn in ipairs(nodes) do
    local i = fn.index
    local w = total > 0 and inc[i] / total or 0
    local c = colour(w)
    local name, tooltip = node_name(fn.name)
    local label = string_format("%s\\n%s\\n(%s)\\n%d\xC3\x97", name, pct(inc[i], total),
      pct(self_all[i], total), calls_into(fn))
    out[#out + 1] = string_format('  f%d [label="%s"%s, color="%s", fillcolor="%s"];\n', i, label, tooltip, c, c)
  end
  -- the root on the first rank, alone: Graphviz otherwise ranks an entry
  -- point that calls a deep function just above it, midway down a large
  -- graph
  root = nodes[1] and top_node(nodes, edges, root)
  if root then out[#out + 1] = string_format("  { rank=source; f%d; }\n", root.index) end
  for _, e in ipairs(edges) do
    local w = total > 0 and e.cost / total or 0
    local c = colour(w)
    out[#out + 1] = string_format('  f%d -> f%d [label="%s\\n%d\xC3\x97", color="%s", fontcolor="%s", '
      .. 'penwidth=%.2f, arrowsize=%.2f];\n', e.from.index, e.to.index, pct(e.cost, total), e.count, c, c,
      math_max(1, 8 * w), math_max(0.5, 1.5 * w))
  end
  out[#out + 1] = "}\n"
  return table_concat(out)
end

--- The call graph of an event in Graphviz DOT (gprof2dot's manner): a node
-- per function whose inclusive cost is at least `node_threshold` of the
-- total, labelled with name, inclusive %, (self %) and calls into it; an
-- edge per caller and callee pair whose calls cost at least
-- `edge_threshold`, labelled with that inclusive % (capped at the
-- callee's inclusive cost) and the call count; colours from blue (cold) to
-- red (hot). Recursion and cycles are drawn as they are. The root (opts.root,
-- else the hottest function no other node calls: the program's entry) is
-- ranked alone at the top (`rank=source`).
-- @param[opt] ev event name or index (default the first)
-- @tparam[opt] table opts `node_threshold` (default 0.005), `edge_threshold`
--   (0.001), `root` / `leaf` (a name or Function: only what it calls, or
--   what calls it), `depth` (steps from root or leaf), `title`, `max_nodes`
--   (default 1000: the hottest kept, the title says how many more)
-- @treturn string
-- @usage io.write(prof:dot("Ir", { root = "main", depth = 3 }))
function Profile:dot(ev, opts)
  ev = args.event_or_first(self, ev, "dot", 1)
  opts = args.options(opts, "dot", 2, "dot")
  local text = dot_text(self, ev, opts, "dot")
  return text
end


--- Writes the call graph (as `prof:dot`) to a file, whole or not at all:
-- DOT text, or with `opts.format = "svg"` or `"png"` the picture Graphviz's
-- `dot` draws of it. `dot` is run without a shell, the DOT text on its
-- stdin and its stdout going straight into the core's atomic writer (the
-- same temporary and rename as every other output; a device or FIFO
-- written in place, a link kept): no file of a predictable name is made,
-- and a writer killed while `dot` runs leaves no file and no process.
-- @tparam string path
-- @param[opt] ev event name or index
-- @tparam[opt] table opts as `prof:dot`'s, and `format` ("dot", "svg",
--   "png"), `dot_command` (default "dot")
-- @return true, or nil, message, "io" (also when `dot` is missing or fails)
-- @usage assert(prof:write_dot("graph.svg", "Ir", { format = "svg" }))
function Profile:write_dot(path, ev, opts)
  args.check_type(path, "string", "write_dot", 1)
  ev = args.event_or_first(self, ev, "write_dot", 2)
  opts = args.options(opts, "write_dot", 3, "write_dot")
  local format = args.option(opts.format, "write_dot", 3, { "dot", "svg", "png" }, "dot")
  local text = dot_text(self, ev, opts, "write_dot")
  if format == "dot" then return util.write_file(path, text) end
  local cmd = opts.dot_command or "dot"
  local ok, err, kind, how, stderr = internal.write_from_command(path, { cmd, "-T" .. format }, text)
  if ok then return true end
  if how == "exec" then
    if err:find("No such file or directory", 1, true) then
      return nil, string_format("write_dot: Graphviz's '%s' was not found (install graphviz)", cmd), "io"
    end
    return nil, "write_dot: " .. err, "io"
  elseif how == "status" then
    stderr = stderr:gsub("%s+$", "")
    return nil, string_format("write_dot: %s -T%s failed: %s", cmd, format, stderr ~= "" and stderr or err), "io"
  end
  return nil, err, kind
end

return M
