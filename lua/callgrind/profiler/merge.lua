--- The data of a profile that others were nested in, its segments merged
-- (callgrind.profiler's nesting: a `profile` while one runs pauses it).
-- Apart from callgrind.profiler so that the writer at a program's end,
-- which loads that module, parses this one only when a profile was
-- nested.
-- @module callgrind.profiler.merge
local M = {}

local ipairs, pairs = ipairs, pairs
local sort = table.sort

--- The merged data of a profile's segments: ctx is one of the running
-- profiles (`{ opts, base, parts }`, callgrind.profiler.exit's `nest`),
-- last the data of its last segment. Functions are matched by their
-- value.
-- @usage local data = merge.merge(ctx, last)
function M.merge(ctx, last)
  local nev = #last.events
  local stride = 4 + nev
  local out = { events = last.events, pid = last.pid, engine = last.engine, info = {}, lines = {}, edges = {} }
  local id_of = {}
  local function fid(func, name)
    local id = id_of[func]
    if not id then
      id = #out.info + 1
      id_of[func] = id
      out.info[id] = { func, name }
      out.lines[id] = {}
    elseif name and not out.info[id][2] then
      out.info[id][2] = name
    end
    return id
  end
  local line_cost = {}   -- id -> line -> costs
  local edges, order = {}, {}   -- "caller line callee" -> { caller, line, callee, count, costs }
  local function edge(caller, line, callee)
    local key = caller .. " " .. line .. " " .. callee
    local e = edges[key]
    if not e then
      e = { caller, line, callee, 0 }
      for j = 1, nev do e[4 + j] = 0 end
      edges[key] = e
      order[#order + 1] = key
    end
    return e
  end
  -- the trie of stacks: "parent fn" -> node
  local stacks = ctx.opts.stacks and {} or nil
  local nodes = {}
  local function node(parent, f)
    local key = parent .. " " .. f
    local x = stacks[key]
    if not x then
      x = #nodes // (2 + nev) + 1
      stacks[key] = x
      nodes[#nodes + 1] = parent
      nodes[#nodes + 1] = f
      for _ = 1, nev do nodes[#nodes + 1] = 0 end
    end
    return x
  end
  -- (open: the functions open in the outer profile while d ran, by id: a
  -- call of one of them from d is a recursion of the outer profile's, its
  -- cost already in the open frame's, so its edge takes the count alone,
  -- as the collector's own edges do)
  local function add(d, skip, prefix, open)
    local ids = {}
    for i, info in ipairs(d.info) do ids[i] = fid(info[1], info[2]) end
    for i, lines in ipairs(d.lines) do
      local id = ids[i]
      local t = line_cost[id] or {}
      line_cost[id] = t
      for k = 1, #lines, nev + 1 do
        local c = t[lines[k]]
        if not c then
          c = {}
          for j = 1, nev do c[j] = 0 end
          t[lines[k]] = c
        end
        for j = 1, nev do c[j] = c[j] + lines[k + j] end
      end
    end
    local ed = d.edges
    for k = 1, #ed, stride do
      local callee = ids[ed[k + 2]]
      local e = edge(ids[ed[k]], ed[k + 1], callee)
      e[4] = e[4] + ed[k + 3]
      if not (open and open[callee]) then
        for j = 1, nev do e[4 + j] = e[4 + j] + ed[k + 3 + j] end
      end
    end
    if stacks and type(d.stacks) == "table" then
      local width, map, depth = 2 + nev, {}, {}
      for x = 1, #d.stacks // width do
        local b = (x - 1) * width
        local p, f = d.stacks[b + 1], ids[d.stacks[b + 2]]
        depth[x] = p > 0 and depth[p] + 1 or 1
        if depth[x] > skip then
          local parent = p > 0 and map[p] or prefix
          map[x] = node(parent, f)
          local at = (map[x] - 1) * width
          for j = 1, nev do nodes[at + 2 + j] = nodes[at + 2 + j] + d.stacks[b + 2 + j] end
        end
      end
    end
    return ids
  end
  local function total(d)
    local t = {}
    for j = 1, nev do t[j] = 0 end
    for _, lines in ipairs(d.lines) do
      for k = 1, #lines, nev + 1 do
        for j = 1, nev do t[j] = t[j] + lines[k + j] end
      end
    end
    return t
  end
  local segments = {}
  for _, p in ipairs(ctx.parts) do segments[#segments + 1] = p.data end
  segments[#segments + 1] = last
  local base = ctx.base
  for i, seg in ipairs(segments) do
    -- after a pause, the segment's first frames are the stack of the
    -- split: those from base + 1 were closed before too, those below are
    -- not the profile's
    local split = ctx.parts[i - 1]
    add(seg, split and base or 0, 0)
    if split then
      local st = split.stack
      for d = 2, #st do
        local e = edge(fid(st[d - 1].func), st[d - 1].line, fid(st[d].func))
        e[4] = e[4] - 1
        if d <= base + 1 then
          for j = 1, nev do e[4 + j] = 0 end
        end
      end
    end
    local part = ctx.parts[i]
    if part then
      -- the inner profile's costs where it ran: a call from the frame
      -- that called profile (the top of the split's stack)
      local st = part.stack
      local prefix = 0
      if stacks then
        for d = base + 1, #st do prefix = node(prefix, fid(st[d].func)) end
      end
      local tot, active, open = {}, {}, {}
      for d = base + 1, #st do open[fid(st[d].func)] = true end
      for j = 1, nev do tot[j] = 0 end
      for _, inner in ipairs(part.inner) do
        add(inner, 0, prefix, open)
        local t = total(inner)
        for j = 1, nev do tot[j] = tot[j] + t[j] end
      end
      for d = base + 1, #st do
        local f = fid(st[d].func)
        if d >= base + 2 and not active[f] then
          local e = edge(fid(st[d - 1].func), st[d - 1].line, f)
          for j = 1, nev do e[4 + j] = e[4 + j] + tot[j] end
        end
        active[f] = true
      end
      local top, f = st[#st], fid(part.fn)
      local e = edge(fid(top.func), top.line, f)
      e[4] = e[4] + #part.inner
      if not active[f] then
        for j = 1, nev do e[4 + j] = e[4 + j] + tot[j] end
      end
    end
  end
  for id, t in pairs(line_cost) do
    local ls = {}
    for line in pairs(t) do ls[#ls + 1] = line end
    sort(ls)
    local arr = out.lines[id]
    for _, line in ipairs(ls) do
      local c = t[line]
      local any = false
      for j = 1, nev do any = any or c[j] ~= 0 end
      if any then
        arr[#arr + 1] = line
        for j = 1, nev do arr[#arr + 1] = c[j] end
      end
    end
  end
  for _, key in ipairs(order) do
    local e = edges[key]
    if e[4] > 0 then
      for j = 1, stride do out.edges[#out.edges + 1] = e[j] end
    end
  end
  if stacks then out.stacks = nodes end
  return out
end

return M
