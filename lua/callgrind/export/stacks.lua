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
local record = require "callgrind.export.stackrec"
require "callgrind.model.graph"
local internal = core.internal

local Profile = core.methods.Profile

local ipairs, next, pairs, pcall, type = ipairs, next, pairs, pcall, type
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

--- The share of the total below which a stack of an estimate is pruned
-- (0.001%): what no picture can show (a pixel of a 1,200-pixel flame
-- graph is 0.08%), when the threshold is not smaller (threshold 0 prunes
-- nothing).
M.PRUNE = 1e-5

--- The frame the estimate's pruned stacks are put under: each function
-- whose whole self cost is below the cut has one stack `[pruned];NAME`.
M.PRUNED = "[pruned]"

--- The count under which an estimate's stacks of an event are pruned,
-- for a threshold (nil: the default) and the event's total: the
-- smaller of `stacks.PRUNE` and the threshold, times the total; 0 (no
-- pruning) for threshold 0.
-- @usage local cut = stacks.cut(1e-4, prof:total("Ir"))
function M.cut(threshold, total)
  local share = M.cut_share(threshold)
  if share <= 0 or total <= 0 then return 0 end
  return math_ceil(share * total)
end

--- The share of the total an estimate's stacks are pruned below, for a
-- threshold (nil: the default): the smaller of the two, 0 for threshold 0.
-- @usage stacks.cut_share(1e-4) --> 1e-05
function M.cut_share(threshold)
  threshold = threshold or M.THRESHOLD
  if threshold <= 0 then return 0 end
  return threshold < M.PRUNE and threshold or M.PRUNE
end

-- The cut's note (what the outputs say of an estimate), "" for none.
local function cut_note(threshold)
  local share = M.cut_share(threshold)
  if share <= 0 then return "" end
  return string_format("; stacks below %.4g%% of the total pruned (into the function's larger stacks, "
    .. "or %s;FUNCTION)", 100 * share, M.PRUNED)
end

--- Corrects estimated frames (arrays parent, func, total, self as
-- `stacks.frames` gives them) so that the lines of each function add up
-- to its exact self cost in ev (a negative self cost counts as 0): a
-- function with too much on its lines gives the excess back from them in
-- proportion to what they hold; one with too little gets the rest on its
-- frames in proportion to their lines (else their totals), or, with no
-- frame at all, on a new frame under the shallowest (then largest) frame
-- of its costliest caller that has one (its calls summed; else as a
-- root). calls: the box `internal.in_calls` gives for ev, when at hand. With cut > 0
-- (a count: `stacks.cut`), a function whose self cost is below the cut
-- has its lines on one frame under a root `[pruned]` frame (function
-- index past the profile's), and a line below the cut of another gives
-- its cost to the function's lines of at least the cut, in proportion
-- (or all to its largest line, when none is). Totals are then summed
-- again from the lines. Returns the number of frames made, the
-- `[pruned]` frame's function index when there is one, and the number of
-- lines pruned (moved, or under `[pruned]`).
-- @usage stacks.correct(prof, "Ir", parent, func, total, self)
function M.correct(prof, ev, parent, func, tot, self, cut, calls)
  local want = internal.self_all(prof, ev)
  cut = cut or 0
  local nframes = #parent
  local have, frames_of = {}, {}
  for k = 1, nframes do
    local f = func[k]
    have[f] = (have[f] or 0) + self[k]
    local l = frames_of[f]
    if not l then l = {}; frames_of[f] = l end
    l[#l + 1] = k
  end
  local pending, small, npruned = {}, {}, 0
  for f = 1, #want do
    local w = want[f] > 0 and want[f] or 0
    local ks = frames_of[f]
    if w < cut then
      -- below the cut in all: under [pruned]
      if ks then for _, k in ipairs(ks) do self[k] = 0 end end
      if w > 0 then small[#small + 1] = f; npruned = npruned + 1 end
    else
      local d = w - (have[f] or 0)
      if d < 0 then
        share_out(ks, self, -d, self, -1)
      elseif d > 0 and ks then
        local wt = (have[f] or 0) > 0 and self or tot
        local any = false
        for _, k in ipairs(ks) do if wt[k] > 0 then any = true; break end end
        share_out(ks, any and wt or ONE, d, self, 1)
      elseif d > 0 then
        pending[#pending + 1] = { f, d }
      end
      if cut > 0 and ks then
        -- the lines below the cut give their cost to the others
        local kept, moved, big, bigv = {}, 0, nil, nil
        for _, k in ipairs(ks) do
          local v = self[k]
          if v >= cut then
            kept[#kept + 1] = k
          elseif v > 0 then
            moved = moved + v
            self[k] = 0
            npruned = npruned + 1
          end
          if not big or v > bigv or (v == bigv and tot[k] > tot[big]) then big, bigv = k, v end
        end
        if #kept == 0 then
          if moved > 0 then self[big] = moved; npruned = npruned - 1 end
        elseif moved > 0 then
          share_out(kept, self, moved, self, 1)
        end
      end
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
  if #pending > 0 and not calls then calls = internal.in_calls(prof, ev) end
  for round = 1, 8 do
    local left = {}
    for _, pd in ipairs(pending) do
      local f, d = pd[1], pd[2]
      local best = internal.best_caller(calls, f, frames_of)
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
  local pruned
  if #small > 0 then
    -- [pruned], then its functions in index order
    pruned = #want + 1
    add(0, pruned, 0)
    local p = #parent
    for _, f in ipairs(small) do
      local w = want[f]
      add(p, f, w)
    end
  end
  for k = 1, #parent do tot[k] = self[k] end
  for k = #parent, 1, -1 do
    local p = parent[k]
    if p > 0 then tot[p] = tot[p] + tot[k] end
  end
  return made, pruned, npruned
end

-- Drops the frames of total 0 (in place; those left keep their order,
-- parents before children).
local function compact(parent, func, tot, self)
  local map, n, len = {}, 0, #parent
  for k = 1, len do
    if tot[k] ~= 0 then
      n = n + 1
      local p = parent[k]
      parent[n], func[n], tot[n], self[n] = p == 0 and 0 or map[p], func[k], tot[k], self[k]
      map[k] = n
    end
  end
  for k = len, n + 1, -1 do parent[k], func[k], tot[k], self[k] = nil, nil, nil, nil end
end

-- The estimated frames of event ev: arrays parent (0: a root), function
-- index, total, self, children after their parent; nil when the event
-- costs nothing. whole true: nothing pruned (every stack the threshold
-- makes kept as it is: what a diff pairs with the other side's).
local function estimate_frames(prof, ev, threshold, whole)
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
  local calls, entered = internal.in_calls(prof, ev)
  -- I(C) of each cycle: max(sum of its members' A, sum of their B)
  local ca, cb = {}, {}
  for i = 1, #a do
    local c = comp[i]
    if cyclic[c] then ca[c], cb[c] = (ca[c] or 0) + a[i], (cb[c] or 0) + b[i] end
  end
  local roots, sum = {}, 0
  for i = 1, #a do
    local m = b[i] - a[i]
    local c = comp[i]
    if m > 0 and cyclic[c] then
      -- inclusive = max(B, min(E, I(C))) (model/graph.lua), less E
      local e = entered[i]
      local cc = ca[c] > cb[c] and ca[c] or cb[c]
      local inc = e < cc and e or cc
      if b[i] > inc then inc = b[i] end
      m = inc - e
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
  local cut = whole and 0 or M.cut(threshold, total)
  local _, pruned, npruned = M.correct(prof, ev, parent, func, tot, self, cut, calls)
  if cut > 0 then compact(parent, func, tot, self) end
  return parent, func, tot, self, pruned, npruned
end

-- The estimated tree of event ev.
local function estimate(prof, ev, threshold, whole)
  local top = { total = prof:total(ev), self = 0, children = {} }
  local parent, func, tot, self, pruned, npruned = estimate_frames(prof, ev, threshold, whole)
  -- the share stacks were pruned below, when some were
  if npruned and npruned > 0 then top.pruned_below = M.cut_share(threshold) end
  if not parent then return top end
  local nodes, pfn = {}, { name = M.PRUNED }
  for f = 1, #parent do
    local i = func[f]
    local nd = { fn = i == pruned and pfn or internal.function_at(prof, i), i = i, total = tot[f],
      self = self[f], children = {} }
    nodes[f] = nd
    local up = parent[f] == 0 and top or nodes[parent[f]]
    up.children[#up.children + 1] = nd
  end
  return top
end

--- Visits every node below top depth first, children in order, without
-- recursion (a Lua profile's tree may be 150,000 frames deep):
-- enter(node, depth, parent) before its children, leave(node, depth,
-- parent) after them (either may be nil); the top's children have depth 1.
-- @usage stacks.visit(top, function(node, depth) print(depth, node.name) end)
local function visit(top, enter, leave)
  local nds, ups, ds, is = { top }, { false }, { 0 }, { 0 }
  local sp = 1
  while sp > 0 do
    local nd = nds[sp]
    local i = is[sp] + 1
    local kid = nd.children[i]
    if kid then
      is[sp] = i
      local d = ds[sp] + 1
      if enter then enter(kid, d, nd) end
      sp = sp + 1
      nds[sp], ups[sp], ds[sp], is[sp] = kid, nd, d, 0
    else
      if leave and sp > 1 then leave(nd, ds[sp], ups[sp]) end
      nds[sp] = nil
      sp = sp - 1
    end
  end
end
M.visit = visit

--- Merges the children whose total is below min into their parent, in a
-- tree of `stacks.tree` or `stacks.read_folded` (their cost stays on the
-- parent's own line). Returns the number of frames merged.
-- @usage stacks.prune(tree, 1e-4 * tree.total)
local function prune(top, min)
  local todo, n, merged = { top }, 1, 0
  while n > 0 do
    local nd = todo[n]
    todo[n] = nil
    n = n - 1
    local kept = {}
    for _, kid in ipairs(nd.children) do
      if kid.total >= min and kid.total > 0 then
        kept[#kept + 1] = kid
        n = n + 1
        todo[n] = kid
      else
        nd.self = nd.self + kid.total
        merged = merged + 1
      end
    end
    nd.children = kept
  end
  return merged
end

-- Sums the totals of made (nodes, each after its parent; up[k] its
-- parent, top for a root) from their selves.
local function sum_made(top, made, up)
  for k = 1, #made do made[k].total = made[k].self end
  top.total = top.self
  for k = #made, 1, -1 do
    local p = up[k]
    p.total = p.total + made[k].total
  end
end

-- A child of nd for fn, in the index kids (node -> fn -> child), made when
-- missing; made and up as sum_made's.
local function kid_of(kids, nd, fn, made, up)
  local idx = kids[nd]
  if not idx then idx = {}; kids[nd] = idx end
  local kid = idx[fn]
  if not kid then
    kid = { fn = fn, self = 0, total = 0, children = {} }
    idx[fn] = kid
    nd.children[#nd.children + 1] = kid
    made[#made + 1], up[#up + 1] = kid, nd
  end
  return kid
end

--- A tree with its recursion collapsed: a frame of a function already on
-- its stack merges into that outer frame (f;f;f becomes f, A;B;A;B
-- becomes A;B), its own cost and its children with it. Each function
-- keeps its exact self cost (its lines' sum) and the tree its total; the
-- top's fields but children are kept. Linear in the tree's frames.
-- @usage local flat = stacks.collapse(stacks.tree(prof, "Instr", 0))
function M.collapse(top)
  local new = {}
  for k, v in pairs(top) do new[k] = v end
  new.children = {}
  local kids, made, up, onpath, cur, pushed = {}, {}, {}, {}, {}, {}
  local merged = 0
  visit(top, function(nd, d)
    local fn = nd.fn
    local t = onpath[fn]
    if t then
      pushed[d] = false
      merged = merged + 1
    else
      t = kid_of(kids, d == 1 and new or cur[d - 1], fn, made, up)
      onpath[fn] = t
      pushed[d] = fn
    end
    t.self = t.self + nd.self
    cur[d] = t
  end, function(_, d)
    if pushed[d] then onpath[pushed[d]] = nil end
  end)
  sum_made(new, made, up)
  new.total = top.total
  new.merged = merged
  return new
end

--- The deepest frame's depth in a tree (0: no frame).
-- @usage if stacks.depth(tree) > 1000 then tree = stacks.collapse(tree) end
function M.depth(top)
  local max = 0
  visit(top, function(_, d) if d > max then max = d end end)
  return max
end

-- The exact tree of a Lua profile's recorded stacks (the profiler's trie,
-- internal.stack_trie: kept in memory, or read from the stack record
-- FILE.stacks beside the profile), built in C (internal.stack_tree:
-- linear in the trie's nodes, a table made per frame kept only); nil when
-- the profile has none. Frames of the same Function under one parent
-- merge; children come in the order of the first stack with a cost
-- through them (the order of prof:stacks). prune: a threshold, the tree
-- pruned at it there (as `prune` would); nil: whole.
local function exact(prof, ev, prune_at)
  local method = Profile.stacks
  if method ~= internal.stacks_method and internal.stacks_method == nil and record.exists(prof) then
    -- a record beside a loaded profile: the profiler's prof:stacks reads
    -- it (the stub callgrind's init put there loads it)
    pcall(method, prof, ev)
    method = Profile.stacks
  end
  if type(method) ~= "function" then return nil end
  if method ~= internal.stacks_method or type(internal.stack_trie) ~= "function" then
    -- another prof:stacks than the profiler's (a spec's): its stacks as it gives them
    local ok, f, s, c = pcall(method, prof, ev)
    if not ok or f == nil then return nil end
    local top, kids, made, up = { total = 0, self = 0, children = {} }, {}, {}, {}
    for frames, cost in f, s, c do
      local nd = top
      for i = 1, #frames do nd = kid_of(kids, nd, frames[i], made, up) end
      nd.self = nd.self + cost
    end
    sum_made(top, made, up)
    top.exact = true
    return top
  end
  local ok, data, width, col, fns, source, nfn = pcall(internal.stack_trie, prof, ev)
  if not ok or data == nil then return nil end
  -- the merge key of each function: its Function's index (two of the
  -- profiler's functions may be one Function of the profile; fns has a
  -- hole where the profile has none)
  local key = {}
  for i = 1, nfn or #fns do
    local fn = fns[i]
    key[i] = fn and fn.index or -i
  end
  local parent, node, tot, self, top_self, total = internal.stack_tree(data, width, col, key, prune_at)
  local top = { total = total, self = top_self, children = {} }
  local nodes = {}
  for k = 1, #parent do
    local nd = { fn = fns[data[(node[k] - 1) * width + 2]], total = tot[k], self = self[k], children = {} }
    nodes[k] = nd
    local up = parent[k] == 0 and top or nodes[parent[k]]
    up.children[#up.children + 1] = nd
  end
  top.exact = true
  top.source = source
  return top
end

-- The exact stacks written beside a profile's file as folded text:
-- `-lcallgrind.start` with CALLGRIND_STACKS=folded writes FILE.folded
-- next to FILE (CALLGRIND_STACKS=1 writes the stack record FILE.stacks,
-- which `exact` reads first). They are this
-- profile's when its event is Instr and they add up to its Instr total
-- (else another run's: nil). Frames are the profile's functions where the
-- name is one function's; a name several functions share (`main chunk`,
-- two `handle_nodes` of two files) is the one of them its caller's frame
-- calls (a root: the one no call enters) when that is one alone, else
-- `{ name = }` alone (`resolved` false); `source` is the companion's
-- path. The file is read once per profile.
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
  local by_name, seen, shared = {}, {}, {}
  for fn in prof:functions() do
    local name = fn.name
    by_name[name] = not seen[name] and fn or nil
    if seen[name] then
      local l = shared[name]
      if not l then l = { seen[name] }; shared[name] = l end
      l[#l + 1] = fn
    end
    seen[name] = fn
  end
  -- a shared name: the candidate the caller's frame calls (a root: the
  -- candidate no call enters), when there is one alone
  local callers = {}
  local function callers_of(fn)
    local c = callers[fn]
    if not c then
      c = {}
      for call in fn:callers() do c[call.caller.index] = true end
      callers[fn] = c
    end
    return c
  end
  local function pick(cands, up)
    local found
    for _, fn in ipairs(cands) do
      local c = callers_of(fn)
      local hit
      if up then hit = c[up.index] else hit = next(c) == nil end
      if hit then
        if found then return nil end
        found = fn
      end
    end
    return found
  end
  top.resolved = true
  M.walk(top, function(nd, _, up)
    local name = nd.fn.name
    local fn = by_name[name]
    if not fn and shared[name] then
      local upfn = up ~= top and up.fn or nil
      if up == top or (upfn and upfn.index) then fn = pick(shared[name], upfn) end
    end
    if fn then nd.fn = fn else top.resolved = false end
  end)
  top.all_names = nil
  top.flat = nil
  top.source = path
  return top
end

--- The call tree of an event: `{ total =, self =, children = { node } }`,
-- each node `{ fn =, total =, self =, children = }` (total its inclusive
-- share, self what stays on it); `exact = true` when it came from the
-- profile's own stacks (recorded in memory, or its stack record
-- FILE.stacks, or its FILE.folded: then `source` is that file); an
-- estimate made because the record was refused has `refused`, why in
-- short ("FILE.stacks is another run's"). collapse true: with its
-- recursion collapsed (`stacks.collapse`, before the pruning). whole
-- true: an estimate is not pruned below `stacks.cut` (no `[pruned]`
-- frame: its stacks pair with another profile's, as a diff's must).
-- @usage local tree = stacks.tree(prof, "Ir", 1e-4)
function M.tree(prof, ev, threshold, collapse, whole)
  local top = exact(prof, ev, not collapse and threshold or nil) or companion(prof, ev, collapse and 0 or threshold)
  if not top then
    top = estimate(prof, ev, threshold, whole)
    local _, _, refused = record.of(prof)
    top = collapse and M.collapse(top) or top
    top.refused = refused
    return top
  end
  if collapse then top = M.collapse(top) end
  prune(top, threshold * top.total)
  return top
end

--- What an estimate says of itself (the flame graph's title, pprof's
-- comment and the command line's note on stderr give it).
M.ESTIMATED = "stacks estimated from the call graph: each function's self cost is exact, its stacks are not"

--- Which stacks `stacks.tree` and `stacks.frames` give for an event:
-- "recorded stacks (exact)", "stacks from PATH (exact)" (the stack record
-- FILE.stacks, or a FILE.folded, beside the profile) or `stacks.ESTIMATED`
-- (followed by "; the stack record was refused: WHY" when the profile has
-- a record that is another run's, cut short or changed). (A fourth argument, once
-- for `stacks.frames`, is ignored: both take the same stacks.)
-- @usage io.stderr:write(stacks.describe(prof, "Ir"), "\n")
function M.describe(prof, ev, threshold)
  local method = Profile.stacks
  if type(method) == "function" then
    local ok, f = pcall(method, prof, ev)
    if ok and f ~= nil then
      local st = record.of(prof)
      return st and "stacks from " .. st.source .. " (exact)" or "recorded stacks (exact)"
    end
  end
  local top = companion(prof, ev, threshold or M.THRESHOLD)
  if top then return "stacks from " .. top.source .. " (exact)" end
  local _, why = record.of(prof)
  if why then return M.ESTIMATED .. "; the stack record was refused: " .. why .. cut_note(threshold) end
  return M.ESTIMATED .. cut_note(threshold)
end

--- The call tree of an event as flat arrays: parent (0 for a root),
-- function index, total, self, each frame after its parent and children
-- in order (what `stacks.tree` holds, without a table per frame), and
-- the names of the frames that are no function of the profile: a
-- FILE.folded's name that several functions share and its caller does not
-- tell apart has an index past the profile's functions, `names[index]`
-- its name. Exact stacks where the profile has them (as `stacks.tree`);
-- the sixth value says which (as `stacks.describe`). threshold nil: 0
-- for exact stacks (every one kept: pruning moves a function's cost onto
-- its caller), the default for an estimate.
-- @usage local parent, func, total, self, names, how = stacks.frames(prof, "Ir", 1e-4)
function M.frames(prof, ev, threshold, collapse)
  local top = exact(prof, ev, not collapse and threshold and threshold > 0 and threshold or nil)
  local how = top and (top.source and "stacks from " .. top.source .. " (exact)" or "recorded stacks (exact)")
  if not top then
    top = companion(prof, ev, (collapse or not threshold) and 0 or threshold)
    how = top and "stacks from " .. top.source .. " (exact)"
  end
  local names = {}
  if top then
    if collapse then top = M.collapse(top) end
    if threshold and threshold > 0 then prune(top, threshold * top.total) end
  elseif collapse then
    top = M.collapse(estimate(prof, ev, threshold or M.THRESHOLD))
    how = M.ESTIMATED .. cut_note(threshold)
  else
    local parent, func, tot, self, pruned = estimate_frames(prof, ev, threshold or M.THRESHOLD)
    how = M.ESTIMATED .. cut_note(threshold)
    if pruned then names[pruned] = M.PRUNED end
    if parent then return parent, func, tot, self, names, how end
    return {}, {}, {}, {}, names, how
  end
  local parent, func, tot, self, at = {}, {}, {}, {}, {}
  local extra, nfn = {}, nil
  visit(top, function(kid, d)
    local k = #parent + 1
    local fn = kid.fn
    local i = fn.index
    if not i then
      i = extra[fn.name]
      if not i then
        nfn = nfn or #internal.self_all(prof, ev)
        nfn = nfn + 1
        i = nfn
        extra[fn.name], names[i] = i, fn.name
      end
    end
    parent[k], func[k], tot[k], self[k] = d == 1 and 0 or at[d - 1], i, kid.total, kid.self
    at[d] = k
  end)
  return parent, func, tot, self, names, how
end

--- A name as one folded frame: `\`, `;`, newline and carriage return
-- escaped as `\\`, `\;`, `\n`, `\r`.
-- @usage stacks.escape("a;b") --> "a\\;b"
M.escape = util.fold_escape

--- A name as text a picture can show (util.printable): bytes that are
-- not valid UTF-8, and control characters, as \xNN.
M.printable = util.printable

--- Walks a tree depth first, calling visit(node, depth, parent) for each
-- node below the top, children in order (without recursion: a tree may
-- be deep).
-- @usage stacks.walk(tree, function(nd, depth) end)
function M.walk(top, fn)
  visit(top, fn)
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
  -- the frames as C gave them (parent, name, total_of, self, names): the
  -- flame graph draws from them while the tree is as they say
  top.flat = r
  return top
end

--- The exact tree of folded-stack text: `frame;frame;frame count` lines,
-- as `prof:folded`, `-lcallgrind.start` with `CALLGRIND_STACKS=folded` and
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

--- The most bytes of folded text `prof:folded` and `prof:write_folded`
-- make by default (256 MiB): past it they fail before writing, naming the
-- size (opts.max_bytes sets another; collapse_recursion = true makes a
-- deep recursion's text small).
M.MAX_BYTES = 256 * 1024 * 1024

--- The size in bytes of the folded text of a tree (what `stacks.folded_text`
-- would make), in one walk of its frames; names is filled with each
-- Function's escaped name.
-- @usage local bytes = stacks.folded_size(tree)
function M.folded_size(top, names)
  names = names or {}
  local size, len = 0, {}
  visit(top, function(nd, d)
    local fn = nd.fn
    local name = names[fn]
    if not name then
      name = M.escape(fn.name)
      names[fn] = name
    end
    local l = (d == 1 and 0 or len[d - 1] + 1) + #name
    len[d] = l
    if nd.self > 0 then size = size + l + 2 + #tostring(nd.self) end
  end)
  return size
end

-- The folded lines of a tree, as an array of strings; or nil and their
-- size when it is over max.
local function folded_lines(top, max)
  local names = {}
  local size = M.folded_size(top, names)
  if max and size > max then return nil, size end
  local out, path = {}, {}
  visit(top, function(nd, d)
    path[d] = names[nd.fn]
    if nd.self > 0 then out[#out + 1] = table_concat(path, ";", 1, d) .. " " .. nd.self .. "\n" end
  end)
  return out
end

--- The message of an output over its max_bytes: its size, the limit,
-- and what would bring it under: collapse_recursion = true only when
-- `collapse` says it would (it is not set, and the collapsed output fits).
-- @usage return nil, stacks.too_big("folded", "folded stacks", size, max, false), "memory"
function M.too_big(fname, what, size, max, collapse)
  return string_format("prof:%s: the %s would take %d bytes, over max_bytes (%d): %sraise max_bytes", fname, what,
    size, max, collapse and "collapse_recursion = true folds recursion (each function's self cost stays exact), "
    .. "or " or "")
end

local function folded(prof, ev, opts, fname)
  local n = fname == "folded" and 2 or 3
  ev = args.event_or_first(prof, ev, fname, n - 1, 3)
  opts = args.options(opts, fname, n, "folded", 3)
  local threshold = M.threshold(opts.threshold, fname, n, 3)
  local max = opts.max_bytes == nil and M.MAX_BYTES or args.count(opts.max_bytes, fname, n, 3)
  local top = M.tree(prof, ev, threshold, opts.collapse_recursion)
  local lines, size = folded_lines(top, max)
  if not lines then
    -- would collapse_recursion help? the tree at hand collapsed (and
    -- pruned again) says, without making the profile's tree a second time
    local collapse = false
    if not opts.collapse_recursion then
      top = M.collapse(top)
      prune(top, threshold * top.total)
      collapse = top.merged > 0 and M.folded_size(top) <= max
    end
    return nil, M.too_big(fname, "folded stacks", size, max, collapse), "memory"
  end
  return table_concat(lines)
end

--- Folded stacks of an event: one `frame;frame;frame cost` line per
-- stack, outermost frame first, the costs adding up to the profile's
-- total. Exact for a Lua profile made with `stacks = true` (or with its
-- stack record FILE.stacks, or FILE.folded, beside it), else estimated from the call graph with each
-- function's lines adding up to its exact self cost (see the module's
-- comment). The text carries no note of which (flamegraph.pl and inferno
-- warn on a line that is not a stack): `stacks.describe` says it.
-- Names have `\`, `;` and line breaks escaped with a backslash.
-- @param[opt] ev event name or index (default the first)
-- @tparam[opt] table opts `threshold` (default 0.0001): stacks below that
--   fraction of the total merge into their parent; `collapse_recursion`
--   (default false): a function already on a stack is not entered again
--   (f;f;f is f, A;B;A;B is A;B: `stacks.collapse`), each function's
--   self cost and the total exact; `max_bytes` (default 256 MiB,
--   `stacks.MAX_BYTES`): the size past which it fails, computed before the
--   text is made
-- @return the text, or nil, "prof:folded: the folded stacks would take N
--   bytes, over max_bytes (M): ...", "memory"
-- @usage io.write(prof:folded("Ir"))
function Profile:folded(ev, opts)
  local text, err, kind = folded(self, ev, opts, "folded")
  return text, err, kind
end

--- Writes folded stacks to a file (as `prof:folded`), whole or not at all.
-- @tparam string path
-- @return true, or nil, "path: reason", "io"
-- @usage assert(prof:write_folded("out.folded", "Ir"))
function Profile:write_folded(path, ev, opts)
  args.check_type(path, "string", "write_folded", 1)
  local text, err, kind = folded(self, ev, opts, "write_folded")
  if not text then return nil, err, kind end
  return util.write_file(path, text)
end

return M
