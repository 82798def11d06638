--- Stacks: the call tree of one event, exact (a Lua profile made with
-- `stacks = true`) or estimated top-down from the call graph, and its
-- folded-stack text (`a;b;c 123`, read by flamegraph.pl, speedscope,
-- inferno, Perfetto, Pyroscope). The flame graph, pprof and the command
-- line build on the same tree.
--
-- The estimate. Every callgrind file aggregates: it knows how much each
-- call site cost in all, not on which stacks. The tree is built from the
-- top: each root (a function not entered by calls, or the part of a
-- function's inclusive cost that its incoming calls do not cover) gets
-- its inclusive cost, the roots scaled together so that they sum to the
-- profile's total; a frame of f with budget V gives each callee g
-- V * cost(f -> g) / T(f), T(f) being f's self cost plus the cost of all
-- its calls, and keeps the rest as its line. A callee already on the path
-- is entered again (recursion), at most MAX_REPEAT times on one stack and
-- for a share of at least RECURSION_THRESHOLD of the total; a child below
-- `threshold * total` is not made. Then `stacks.correct` brings each
-- function's lines to its exact self cost. So the lines of each function
-- add up to its self cost and all of them to the total, and the stacks
-- can be ones that never happened (a callee's cost is shared out in
-- proportion to call costs, not per caller context), as with every
-- converter of aggregated profiles. docs/design.md, "Estimated stacks",
-- says what an estimate keeps and what it cannot say.
-- @module callgrind.export.stacks
local core = require "callgrind.core"
local args = require "callgrind.args"
local util = require "callgrind.util"
require "callgrind.model.graph"
local internal = core.internal

local Profile = core.methods.Profile

local ipairs, pcall, type = ipairs, pcall, type
local math_ceil, math_floor = math.ceil, math.floor
local string_format, table_concat, table_sort = string.format, table.concat, table.sort

local M = {}

--- The default threshold: stacks below 0.01% of the total merge into
-- their parent.
M.THRESHOLD = 1e-4

--- The most times one function appears on one estimated stack (the
-- recursion depth drawn): csrc/model/cg_stacks.h's CG_STACKS_MAX_REPEAT.
M.MAX_REPEAT = 16

--- Whatever the threshold, a function already on an estimated stack is
-- entered again only for a share of at least this fraction of the total
-- (0.01%), so that recursion stays bounded in time, memory and output.
M.RECURSION_THRESHOLD = 1e-4

--- Checks a threshold (nil gives the default).
-- @usage t = stacks.threshold(opts.threshold, "folded", 2)
function M.threshold(t, fname, n, level, def)
  if t == nil then return def or M.THRESHOLD end
  if type(t) ~= "number" or t ~= t or t < 0 or t >= 1 then
    args.fail(fname, n, string_format("threshold must be in [0, 1), got %s", args.show(t)), (level or 2) + 1)
  end
  return t
end

-- Shares amount (>= 0) among the frames ks by weight (w[k]), each share
-- floor(amount * cumulative weight / sum) less the one before, so that
-- the shares add up to amount exactly; sign -1 takes them from self (no
-- frame below 0: the rest goes to the next frames), +1 adds them.
local function share_out(ks, w, amount, self, sign)
  local sum = 0
  for _, k in ipairs(ks) do sum = sum + w[k] end
  local cum, before, carry = 0, 0, 0
  for i, k in ipairs(ks) do
    cum = cum + w[k]
    local upto = i == #ks and amount or math_floor(amount * (cum / sum))
    if upto > amount then upto = amount end
    local part = upto - before + carry
    before = upto
    if sign < 0 and part > self[k] then
      carry = part - self[k]
      part = self[k]
    else
      carry = 0
    end
    self[k] = self[k] + sign * part
  end
  for _, k in ipairs(ks) do          -- what no frame could give on its turn
    if carry == 0 then break end
    local part = carry < self[k] and carry or self[k]
    self[k], carry = self[k] - part, carry - part
  end
end

local ONE = setmetatable({}, { __index = function() return 1 end })

--- Corrects estimated frames (arrays parent, func, total, self as
-- `stacks.frames` gives them) so that the lines of each function add up
-- to its exact self cost in ev (a negative self cost counts as 0): a
-- function with too much on its lines gives the excess back from them in
-- proportion to what they hold; one with too little gets the rest on its
-- frames in proportion to their lines (else their totals), or, with no
-- frame at all, on a new frame under the shallowest (then largest) frame
-- of its costliest caller that has one (else as a root). Totals are then summed again from
-- the lines. Returns the number of frames made.
-- @usage stacks.correct(prof, "Ir", parent, func, total, self)
function M.correct(prof, ev, parent, func, tot, self)
  local want = internal.self_all(prof, ev)
  local have, frames_of = {}, {}
  for k = 1, #parent do
    local f = func[k]
    have[f] = (have[f] or 0) + self[k]
    local l = frames_of[f]
    if not l then l = {}; frames_of[f] = l end
    l[#l + 1] = k
  end
  local pending = {}
  for f = 1, #want do
    local d = (want[f] > 0 and want[f] or 0) - (have[f] or 0)
    local ks = frames_of[f]
    if d < 0 then
      share_out(ks, self, -d, self, -1)
    elseif d > 0 and ks then
      local w = (have[f] or 0) > 0 and self or tot
      local any = false
      for _, k in ipairs(ks) do if w[k] > 0 then any = true; break end end
      share_out(ks, any and w or ONE, d, self, 1)
    elseif d > 0 then
      pending[#pending + 1] = { f, d }
    end
  end
  -- the functions without a frame (all their stacks below the threshold,
  -- as most small functions of a large profile): under a caller's frame
  -- where one has one (a few rounds, for callers that get theirs in a round), else roots
  local made, depth = 0, {}
  for k = 1, #parent do depth[k] = parent[k] == 0 and 1 or depth[parent[k]] + 1 end
  local function add(p, f, d)
    local k = #parent + 1
    parent[k], func[k], tot[k], self[k] = p, f, d, d
    depth[k] = p == 0 and 1 or depth[p] + 1
    frames_of[f] = { k }
    made = made + 1
  end
  for round = 1, 8 do
    local left = {}
    for _, pd in ipairs(pending) do
      local f, d = pd[1], pd[2]
      local fn = internal.function_at(prof, f)
      local best, best_cost
      for call in fn:callers() do
        local c = call.caller.index
        if c ~= f and frames_of[c] then
          local cost = call:cost(ev)
          if not best or cost > best_cost then best, best_cost = c, cost end
        end
      end
      if best then
        local top
        for _, k in ipairs(frames_of[best]) do
          if not top or depth[k] < depth[top] or (depth[k] == depth[top] and tot[k] > tot[top]) then top = k end
        end
        add(top, f, d)
      elseif round == 8 then
        add(0, f, d)
      else
        left[#left + 1] = pd
      end
    end
    pending = left
    if #pending == 0 then break end
  end
  for k = 1, #parent do tot[k] = self[k] end
  for k = #parent, 1, -1 do
    local p = parent[k]
    if p > 0 then tot[p] = tot[p] + tot[k] end
  end
  return made
end

-- The estimated frames of event ev: arrays parent (0: a root), function
-- index, total, self, children after their parent; nil when the event
-- costs nothing.
local function estimate_frames(prof, ev, threshold)
  local total = prof:total(ev)
  if total <= 0 then
    -- nothing to share out from the top (negative costs cancel the rest):
    -- the correction gives each function with a positive self cost a frame
    local parent, func, tot, self = {}, {}, {}, {}
    M.correct(prof, ev, parent, func, tot, self)
    if #parent == 0 then return nil end
    return parent, func, tot, self
  end
  local min = threshold * total
  -- m(f), f's inclusive cost not covered by calls into it from other
  -- functions: outside cycles max(A, B) - A; in a cycle inclusive - E,
  -- which is positive only when B > A (B <= A <= E gives inclusive =
  -- max(B, min(E, I)) <= E)
  local a, b = internal.ab_all(prof, ev)
  local comp, cyclic = internal.components(prof)
  local roots, sum = {}, 0
  for i = 1, #a do
    local m = b[i] - a[i]
    if m > 0 and cyclic[comp[i]] then
      local fn = internal.function_at(prof, i)
      local e = 0
      for call in fn:callers() do
        if call.caller ~= fn then e = e + call:cost(ev) end
      end
      m = fn:inclusive(ev) - e
    end
    if m > 0 then
      roots[#roots + 1] = { i, m }
      sum = sum + m
    end
  end
  if sum == 0 then
    -- nothing is a root (costs only inside cycles entered by no call):
    -- each function's self cost is a stack of its own
    local self_all = internal.self_all(prof, ev)
    for i = 1, #self_all do
      if self_all[i] > 0 then
        roots[#roots + 1] = { i, self_all[i] }
        sum = sum + self_all[i]
      end
    end
  end
  table_sort(roots, function(x, y)
    if x[2] ~= y[2] then return x[2] > y[2] end
    return x[1] < y[1]
  end)
  -- scale the roots to sum to the total exactly
  local given = 0
  for _, r in ipairs(roots) do
    local v = sum == total and r[2] or math_floor(r[2] * (total / sum))
    r[3] = v
    given = given + v
  end
  local k = 1
  while given < total and #roots > 0 do
    local r = roots[k]
    r[3] = r[3] + 1
    given = given + 1
    k = k % #roots + 1
  end
  local rf, rb = {}, {}
  for _, r in ipairs(roots) do
    while given > total and r[3] > 0 do r[3] = r[3] - 1; given = given - 1 end
    if r[3] > 0 then rf[#rf + 1], rb[#rb + 1] = r[1], r[3] end
  end
  -- the frames, made in C (csrc/model/cg_stacks.c), then corrected so
  -- that each function's lines add up to its exact self cost
  local rmin = math_ceil((threshold > M.RECURSION_THRESHOLD and threshold or M.RECURSION_THRESHOLD) * total)
  local parent, func, tot, self = internal.estimate(prof, ev, rf, rb, math_ceil(min), rmin)
  M.correct(prof, ev, parent, func, tot, self)
  return parent, func, tot, self
end

-- The estimated tree of event ev.
local function estimate(prof, ev, threshold)
  local top = { total = prof:total(ev), self = 0, children = {} }
  local parent, func, tot, self = estimate_frames(prof, ev, threshold)
  if not parent then return top end
  local nodes = {}
  for f = 1, #parent do
    local nd = { fn = internal.function_at(prof, func[f]), i = func[f], total = tot[f], self = self[f],
      children = {} }
    nodes[f] = nd
    local up = parent[f] == 0 and top or nodes[parent[f]]
    up.children[#up.children + 1] = nd
  end
  return top
end

-- Fills in totals from selves (exact trees are built from the leaves).
local function sum_up(nd)
  local t = nd.self
  for _, kid in ipairs(nd.children) do t = t + sum_up(kid) end
  nd.total = t
  return t
end

--- Merges the children whose total is below min into their parent, in a
-- tree of `stacks.tree` or `stacks.read_folded` (their cost stays on the
-- parent's own line).
-- @usage stacks.prune(tree, 1e-4 * tree.total)
local function prune(nd, min)
  local kept = {}
  for _, kid in ipairs(nd.children) do
    if kid.total >= min and kid.total > 0 then
      kept[#kept + 1] = kid
      prune(kid, min)
    else
      nd.self = nd.self + kid.total
    end
  end
  nd.children = kept
end

-- Adds cost to the node of frames (outermost first; a frame is the key
-- its node is found by) under top, making the nodes missing.
local function add_path(top, frames, cost)
  local nd = top
  for i = 1, #frames do
    local fn = frames[i]
    local kid = nd.index[fn]
    if not kid then
      kid = { fn = fn, self = 0, total = 0, children = {}, index = {} }
      nd.index[fn] = kid
      nd.children[#nd.children + 1] = kid
    end
    nd = kid
  end
  nd.self = nd.self + cost
end

-- The exact tree, from prof:stacks(ev); nil when the profile has none.
local function exact(prof, ev, threshold)
  local method = Profile.stacks
  if type(method) ~= "function" then return nil end
  local ok, f, s, c = pcall(method, prof, ev)
  if not ok or f == nil then return nil end
  local top = { total = 0, self = 0, children = {}, index = {} }
  for frames, cost in f, s, c do add_path(top, frames, cost) end
  sum_up(top)
  prune(top, threshold * top.total)
  top.exact = true
  return top
end

-- The exact stacks written beside a profile's file: `-lcallgrind.start`
-- with CALLGRIND_STACKS=1 writes FILE.folded next to FILE. They are this
-- profile's when its event is Instr and they add up to its Instr total
-- (else another run's: nil). Frames are the profile's functions where the
-- name is one function's, else `{ name = }` alone (`resolved` false);
-- `source` is the companion's path. The file is read once per profile.
local COMPANIONS = setmetatable({}, { __mode = "k" })
local function companion(prof, ev, threshold)
  if ev ~= "Instr" or type(prof.name) ~= "string" then return nil end
  local path = prof.name .. ".folded"
  if COMPANIONS[prof] == false then return nil end
  local ok, top = pcall(M.read_folded_file, path, threshold, true)
  if not ok or not top or top.total ~= prof:total("Instr") then
    COMPANIONS[prof] = false
    return nil
  end
  COMPANIONS[prof] = true
  local by_name, seen = {}, {}
  for fn in prof:functions() do
    by_name[fn.name] = not seen[fn.name] and fn or nil
    seen[fn.name] = true
  end
  top.resolved = true
  for _, name in ipairs(top.all_names) do
    if not by_name[name] then top.resolved = false end
  end
  M.walk(top, function(nd)
    local fn = by_name[nd.fn.name]
    if fn then nd.fn = fn end
  end)
  top.all_names = nil
  top.source = path
  return top
end

--- The call tree of an event: `{ total =, self =, children = { node } }`,
-- each node `{ fn =, total =, self =, children = }` (total its inclusive
-- share, self what stays on it); `exact = true` when it came from the
-- profile's own stacks (recorded, or its FILE.folded: then `source` is
-- that file).
-- @usage local tree = stacks.tree(prof, "Ir", 1e-4)
function M.tree(prof, ev, threshold)
  return exact(prof, ev, threshold) or companion(prof, ev, threshold) or estimate(prof, ev, threshold)
end

--- What an estimate says of itself (the flame graph's title, pprof's
-- comment and the command line's note on stderr give it).
M.ESTIMATED = "stacks estimated from the call graph: each function's self cost is exact, its stacks are not"

--- Which stacks `stacks.tree` (or, with frames true, `stacks.frames`)
-- gives for an event: "recorded stacks (exact)", "stacks from PATH
-- (exact)" (a FILE.folded beside the profile) or `stacks.ESTIMATED`.
-- @usage io.stderr:write(stacks.describe(prof, "Ir"), "\n")
function M.describe(prof, ev, threshold, frames)
  local method = Profile.stacks
  if type(method) == "function" then
    local ok, f = pcall(method, prof, ev)
    if ok and f ~= nil then return "recorded stacks (exact)" end
  end
  local top = companion(prof, ev, threshold or M.THRESHOLD)
  if top and (top.resolved or not frames) then return "stacks from " .. top.source .. " (exact)" end
  return M.ESTIMATED
end

--- The call tree of an event as flat arrays: parent (0 for a root),
-- function index, total, self, each frame after its parent and children
-- in order (what `stacks.tree` holds, without a table per frame).
-- @usage local parent, func, total, self = stacks.frames(prof, "Ir", 1e-4)
function M.frames(prof, ev, threshold)
  local top = exact(prof, ev, threshold)
  if not top then
    top = companion(prof, ev, threshold)
    if top and not top.resolved then top = nil end
  end
  if not top then
    local parent, func, tot, self = estimate_frames(prof, ev, threshold)
    if parent then return parent, func, tot, self end
    return {}, {}, {}, {}
  end
  local parent, func, tot, self = {}, {}, {}, {}
  local function go(nd, up)
    for _, kid in ipairs(nd.children) do
      local k = #parent + 1
      parent[k], func[k], tot[k], self[k] = up, kid.fn.index, kid.total, kid.self
      go(kid, k)
    end
  end
  go(top, 0)
  return parent, func, tot, self
end

--- A name as one folded frame: `\`, `;`, newline and carriage return
-- escaped as `\\`, `\;`, `\n`, `\r`.
-- @usage stacks.escape("a;b") --> "a\\;b"
function M.escape(name)
  return (name:gsub("[\\;\n\r]", { ["\\"] = "\\\\", [";"] = "\\;", ["\n"] = "\\n", ["\r"] = "\\r" }))
end

-- Bytes that are not valid UTF-8, and control characters, as \xNN.
--- A name as text a picture can show (util.printable).
M.printable = util.printable

--- Walks a tree depth first, calling visit(node, depth, parent) for each
-- node below the top, children in order.
-- @usage stacks.walk(tree, function(nd, depth) end)
function M.walk(top, visit)
  local function go(nd, depth)
    for _, kid in ipairs(nd.children) do
      visit(kid, depth, nd)
      go(kid, depth + 1)
    end
  end
  go(top, 1)
end

M.prune = prune

-- The tree of internal.folded_tree's answer (source names errors).
local function folded_tree(source, r, kind, line, text)
  if not r then
    if kind == "io" then return nil, source .. ": " .. line end
    error(string_format("%s:%d: not a folded stack (frames, a blank and a count): %s", source, line,
      M.printable(#text > 80 and text:sub(1, 80) .. "..." or text)), 0)
  end
  local top = { total = r.total, self = r.top_self, children = {}, exact = true,
    trie = { nodes = r.nodes, distinct = r.distinct, lines = r.lines, max_line = r.max_line } }
  local fns = {}
  for i, name in ipairs(r.names) do fns[i] = { name = name } end
  local parent, name, tot, self, nodes = r.parent, r.name, r.total_of, r.self, {}
  for k = 1, #parent do
    local nd = { fn = fns[name[k]], total = tot[k], self = self[k], children = {} }
    nodes[k] = nd
    local up = parent[k] == 0 and top or nodes[parent[k]]
    up.children[#up.children + 1] = nd
  end
  top.all_names = r.all_names
  return top
end

--- The exact tree of folded-stack text: `frame;frame;frame count` lines,
-- as `prof:folded`, `-lcallgrind.start` with `CALLGRIND_STACKS=1` and
-- other tools (flamegraph.pl's stackcollapse scripts, inferno) write them.
-- Frames are unescaped as `stacks.escape` escapes them; blank lines are
-- skipped; a frame is `{ name = }` (one table per distinct name). The
-- tree is as `stacks.tree` gives, with `exact = true`. Read in C
-- (csrc/reader/cg_folded.c) into a trie merged line by line and pruned
-- there: Lua gets the frames kept only. `tree.trie` holds the C side's
-- counters: `nodes` (distinct stack prefixes), `distinct` (names),
-- `lines`, `max_line` (the longest line's bytes).
-- @tparam string text
-- @tparam string source the name errors give (a file's path)
-- @tparam[opt] number threshold as for `stacks.tree` (default 0.0001)
-- @return the tree; raises `SOURCE:LINE: reason` on a line that is not
--   frames, a blank and a count
-- @usage local tree = stacks.read_folded("main;f 10\nmain 2\n", "x.folded")
function M.read_folded(text, source, threshold)
  return folded_tree(source, internal.folded_tree(text, threshold or M.THRESHOLD, true))
end

--- The same of a file, read with read(2) a piece at a time (never whole
-- in memory): what `callgrind-lua flame FILE.folded` and the stacks of a
-- FILE.folded beside a profile read. all_names true adds `all_names`,
-- every distinct name of the file (pruned or not).
-- @return the tree, or nil, "path: reason" when the file cannot be read;
--   raises `PATH:LINE: reason` on a bad line
-- @usage local tree = assert(stacks.read_folded_file("x.folded"))
function M.read_folded_file(path, threshold, all_names)
  return folded_tree(path, internal.folded_tree(path, threshold or M.THRESHOLD, false, all_names))
end

-- The folded lines of a tree, as an array of strings.
local function folded_lines(top)
  local out, names = {}, {}
  local function go(nd, prefix)
    for _, kid in ipairs(nd.children) do
      local fn = kid.fn
      local name = names[fn]
      if not name then
        name = M.escape(fn.name)
        names[fn] = name
      end
      local path = prefix and prefix .. ";" .. name or name
      if kid.self > 0 then out[#out + 1] = path .. " " .. kid.self .. "\n" end
      go(kid, path)
    end
  end
  go(top, nil)
  return out
end


local function folded(prof, ev, opts, fname)
  ev = args.event_or_first(prof, ev, fname, fname == "folded" and 1 or 2, 3)
  opts = args.options(opts, fname, fname == "folded" and 2 or 3, "folded", 3)
  local threshold = M.threshold(opts.threshold, fname, fname == "folded" and 2 or 3, 3)
  return table_concat(folded_lines(M.tree(prof, ev, threshold)))
end

--- Folded stacks of an event: one `frame;frame;frame cost` line per
-- stack, outermost frame first, the costs adding up to the profile's
-- total. Exact for a Lua profile made with `stacks = true` (or with its
-- FILE.folded beside it), else estimated from the call graph with each
-- function's lines adding up to its exact self cost (see the module's
-- comment). The text carries no note of which (flamegraph.pl and inferno
-- warn on a line that is not a stack): `stacks.describe` says it.
-- Names have `\`, `;` and line breaks escaped with a backslash.
-- @param[opt] ev event name or index (default the first)
-- @tparam[opt] table opts `threshold` (default 0.0001): stacks below that
--   fraction of the total merge into their parent
-- @treturn string
-- @usage io.write(prof:folded("Ir"))
function Profile:folded(ev, opts)
  local text = folded(self, ev, opts, "folded")
  return text
end

--- Writes folded stacks to a file (as `prof:folded`), whole or not at all.
-- @tparam string path
-- @return true, or nil, "path: reason", "io"
-- @usage assert(prof:write_folded("out.folded", "Ir"))
function Profile:write_folded(path, ev, opts)
  args.check_type(path, "string", "write_folded", 1)
  local text = folded(self, ev, opts, "write_folded")
  return util.write_file(path, text)
end

return M
