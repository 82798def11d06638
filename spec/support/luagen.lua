--- Random Lua programs for checking the profiler's two engines against each
-- other and against a count hook of our own (spec/engines_gen_spec.lua,
-- tools/fuzz_lua.lua). Deterministic from an integer seed: its own PRNG
-- (splitmix64), never math.random, never `pairs` order.
--
-- A program is a tree of nodes; each node renders to whole lines, every
-- function starts a line of its own (the engines key functions by source
-- and line defined), and a node marked `cut` may be removed by the shrinker
-- without breaking the rest (statements use only the names their function
-- header declares: d, a, acc, the functions above, the shared metatables).
-- Every call of a generated function burns fuel, so any program, shrunk or
-- not, ends.
--
-- Run as a script, it is the driver of the spec's child processes:
--   lua5.4 spec/support/luagen.lua hook FROM TO    hook engine + count hook
--   callgrind-lua5.4 spec/support/luagen.lua vm FROM TO
--   ... luagen.lua hookfile PATH | vmfile PATH     one program's text
-- printing, per program, `#seed N WHAT` and the sorted lines of a dump.
local M = {}

local concat, sort, insert = table.concat, table.sort, table.insert
local format = string.format

---------------------------------------------------------------------------
-- The PRNG: splitmix64 on Lua's 64-bit integers (they wrap as uint64_t)
---------------------------------------------------------------------------

local function rng(seed)
  local s = seed * 0x9e3779b97f4a7c15 + 0x2545f4914f6cdd1d
  local r = {}
  function r.next()
    s = s + 0x9e3779b97f4a7c15
    local z = s
    z = (z ~ (z >> 30)) * 0xbf58476d1ce4e5b9
    z = (z ~ (z >> 27)) * 0x94d049bb133111eb
    return z ~ (z >> 31)
  end
  function r.int(lo, hi) return lo + (r.next() >> 1) % (hi - lo + 1) end
  function r.chance(p) return r.int(1, 1000) <= p * 1000 end
  function r.pick(t) return t[r.int(1, #t)] end
  return r
end
M.rng = rng

---------------------------------------------------------------------------
-- The generator
---------------------------------------------------------------------------

-- Nodes: { cut = bool, head = {lines}, body = {nodes} or nil, tail = {lines} }.
local function leaf(lines, cut)
  if type(lines) == "string" then lines = { lines } end
  return { cut = cut ~= false, head = lines }
end
local function block(head, body, tail, cut)
  if type(head) == "string" then head = { head } end
  if type(tail) == "string" then tail = { tail } end
  return { cut = cut ~= false, head = head, body = body, tail = tail }
end

local MAX_DEPTH = 3
local CLOSE = os.getenv("LUAGEN_CLOSE") ~= "0"

-- A generation context: r, the callable functions, the metatables, the
-- current function's name (recursion), depth, whether yields are likely.
local gen_block

local function callee(c)
  if #c.fns == 0 then return nil end
  return c.r.pick(c.fns)
end

-- an expression calling a generated function (or a constant)
local function call_expr(c)
  local f = callee(c)
  if not f then return "1" end
  local extra = c.r.chance(0.3) and ", 1, 2" or ""
  return format("%s(d - 1, acc %% 7%s)", f, extra)
end

-- the statements of a nested function (no `...` there)
local function fn_body(c, co)
  local vararg = c.vararg
  c.vararg = false
  local body = gen_block(c, co)
  c.vararg = vararg
  return body
end

local function inline_fn(c, params, ret, co)
  local body = fn_body(c, co)
  return block("function(" .. params .. ")", body, { "return " .. ret, "end" }, false)
end

local ERRORS = {
  'error("e" .. d)', 'error({ code = d })', 'error("plain", 0)', 'error()',
  'local _ = acc + nil', 'error(setmetatable({}, MT_ERR))',
}

local STATEMENTS

local function gen_stmt(c, co)
  local r = c.r
  local total = 0
  for _, s in ipairs(STATEMENTS) do
    if s.ok(c, co) then total = total + s.w end
  end
  local x = r.int(1, total)
  for _, s in ipairs(STATEMENTS) do
    if s.ok(c, co) then
      x = x - s.w
      if x <= 0 then return s.gen(c, co) end
    end
  end
end

function gen_block(c, co)
  local body = {}
  c.depth = c.depth + 1
  local n = c.depth > MAX_DEPTH and c.r.int(0, 1) or c.r.int(1, 4)
  for _ = 1, n do body[#body + 1] = gen_stmt(c, co) end
  c.depth = c.depth - 1
  return body
end

local function deep(c) return c.depth < MAX_DEPTH end
local function always() return true end

STATEMENTS = {
  { w = 6, ok = always, gen = function(c)
    return leaf(format("acc = (acc * %d + %d) %% 1009", c.r.int(2, 5), c.r.int(0, 9)))
  end },
  { w = 8, ok = always, gen = function(c)
    return leaf("acc = (acc + " .. call_expr(c) .. ") % 1009")
  end },
  { w = 4, ok = deep, gen = function(c, co)
    return block(format("for i = 1, %d do", c.r.int(1, 3)), gen_block(c, co), "end")
  end },
  { w = 3, ok = deep, gen = function(c, co)
    -- a closure over acc and d, called twice
    local n = c.nclosure + 1
    c.nclosure = n
    local name = "g" .. c.id .. "_" .. n
    local body = fn_body(c, co)
    return block("do", {
      block("local function " .. name .. "(x)", body, { "return x + acc", "end" }, false),
      leaf(format("acc = (acc + %s(1) + %s(2)) %% 1009", name, name), false),
    }, "end")
  end },
  { w = 3, ok = always, gen = function(c)
    local r = c.r
    if r.chance(0.5) and #c.fns > 0 then
      return leaf(format("if not pcall(%s, d - 1, acc) then acc = acc + 1 end", callee(c)))
    end
    return block("do", {
      leaf("local ok, e = pcall(", false), inline_fn(c, "", "acc", false), leaf(")", false),
      leaf("if ok then acc = acc + 1 elseif type(e) == 'string' then acc = acc + #e end", false),
    }, "end")
  end },
  { w = 3, ok = deep, gen = function(c)
    local r = c.r
    -- the handler runs its body once: Lua calls it again on an error of
    -- its own, and on and on, to "error in error handling" at a depth of
    -- C calls that the count hook (a Lua function, C levels of its own)
    -- changes; the second call returns at once
    local body
    if r.chance(0.3) then
      body = { leaf('error("again", 0)') }
    else
      body = fn_body(c, false)
    end
    insert(body, 1, leaf("hn = hn + 1 if hn > 1 then return m end", false))
    local handler = block("function(m)", body, "return m end", false)
    -- no yield inside (XP[thread] set): a coroutine suspended in an xpcall
    -- keeps it as its message handler (Lua 5.4 keeps the thread's errfunc
    -- when coroutine.close resets it), so an error in a __close that the
    -- close runs calls whatever that stack slot holds then, the handler or
    -- a value a hook left there ("error in error handling"): the program
    -- ran otherwise under the count hook than under the engines (fuzz seed
    -- 50,005,555 of the generator before)
    return block("do", {
      leaf("local hn = 0", false),
      leaf("local xth = coroutine.running() local xwas = XP[xth] XP[xth] = true", false),
      leaf("local ok = xpcall(", false), inline_fn(c, "x", "x + acc", false), leaf(",", false), handler,
      leaf(", acc)", false),
      leaf("XP[xth] = xwas", false),
      leaf("if ok then acc = acc + 2 end", false),
    }, "end")
  end },
  { w = 3, ok = always, gen = function(c)
    return leaf(format("if acc %% %d == %d then %s end", c.r.int(2, 4), c.r.int(0, 1), c.r.pick(ERRORS)))
  end },
  { w = 3, ok = always, gen = function()
    return leaf(format("if coroutine.isyieldable() and not XP[coroutine.running()] then "
      .. "acc = acc + (coroutine.yield(acc) or 0) %% 1009 end"))
  end },
  { w = 2, ok = function(_, co) return co end, gen = function()
    return leaf("acc = acc + (coroutine.yield(acc) or 0) % 1009")
  end },
  { w = 3, ok = deep, gen = function(c)
    -- a coroutine resumed a few times; kept until the end (a collected
    -- one would close its frames at another time in each engine)
    local r = c.r
    local close = CLOSE and r.chance(0.3) and "coroutine.close(co)" or "local _ = coroutine.status(co)"
    return block("do", {
      leaf("local co = coroutine.create(", false), inline_fn(c, "x", "x + acc", true), leaf(")", false),
      leaf("keep[#keep + 1] = co", false),
      leaf(format("for i = 1, %d do", r.int(1, 4)), false),
      leaf("local ok, v = coroutine.resume(co, i)", false),
      leaf("if not ok then break end", false),
      leaf("if type(v) == 'number' then acc = (acc + v) % 1009 end", false),
      leaf("end", false),
      leaf(close),
    }, "end")
  end },
  { w = 3, ok = deep, gen = function(c)
    local r = c.r
    local use = r.pick {
      "for i = 1, %d do if not pcall(w, i) then break end end",
      "for i = 1, %d do local v = w(i) if type(v) == 'number' then acc = (acc + v) %% 1009 end end",
    }
    return block("do", {
      leaf("local w = coroutine.wrap(", false), inline_fn(c, "x", "x + acc", true), leaf(")", false),
      leaf(format(use, r.int(1, 3)), false),
    }, "end")
  end },
  { w = 2, ok = deep, gen = function(c)
    -- the generic for's header on one line or over several: its first
    -- call of the iterator has the line of the call instruction (the
    -- line after `in`), which no fetch reached
    local head = c.r.pick {
      { "for v in coroutine.wrap(gen) do acc = (acc + v) % 1009 end" },
      { "for v in", "coroutine.wrap(gen)", "do acc = (acc + v) % 1009 end" },
      { "for v in coroutine.wrap(gen)", "do", "acc = (acc + v) % 1009", "end" },
      { "for v in", "coroutine.wrap(gen), nil,", "nil do", "acc = (acc + v) % 1009 end" },
    }
    local nodes = {
      leaf("local gen =", false),
      block("function()", {
        leaf(format("for i = 1, %d do coroutine.yield(i + acc) end", c.r.int(1, 3)), false),
      }, "end", false),
    }
    for _, l in ipairs(head) do nodes[#nodes + 1] = leaf(l, false) end
    return block("do", nodes, "end")
  end },
  { w = 5, ok = function(c) return #c.mts > 0 end, gen = function(c)
    local r = c.r
    local mt = r.pick(c.mts)
    local use = r.pick {
      "acc = (acc + o.x) % 1009", "o.y = acc", "acc = (acc + o(d)) % 1009",
      "acc = (acc + (o + acc)) % 1009", "if o == p then acc = acc + 1 end",
      "if o < p then acc = acc + 3 end", "acc = acc + #(o .. 'z')", "acc = acc + #tostring(o)",
    }
    return block("do", {
      leaf(format("local o = setmetatable({ v = acc }, %s)", mt), false),
      leaf(format("local p = setmetatable({ v = d }, %s)", mt), false),
      leaf(use, false),
    }, "end")
  end },
  { w = 2, ok = function(c) return deep(c) and #c.mts > 0 end, gen = function(c, co)
    local mt = c.r.pick(c.mts)
    local body = gen_block(c, co)
    insert(body, 1, leaf(format("local cl <close> = setmetatable({ v = acc }, %s)", mt), false))
    return block("do", body, "end")
  end },
  { w = 1, ok = always, gen = function()
    return leaf("keep[0] = setmetatable({}, MT_GC) collectgarbage()")
  end },
  { w = 2, ok = deep, gen = function(c, co)
    c.nlabel = c.nlabel + 1
    local label = "top" .. c.nlabel
    local body = gen_block(c, co)
    insert(body, 1, leaf("n = n + 1", false))
    body[#body + 1] = leaf(format("if n < %d then goto %s end", c.r.int(2, 3), label), false)
    return block({ "do", "local n = 0", "::" .. label .. "::" }, body, "end")
  end },
  { w = 2, ok = deep, gen = function(c, co)
    c.nlabel = c.nlabel + 1
    local label = "continue" .. c.nlabel
    local body = gen_block(c, co)
    insert(body, 1, leaf("if i == 2 then goto " .. label .. " end", false))
    body[#body + 1] = leaf("::" .. label .. "::", false)
    return block("for i = 1, 3 do", body, "end")
  end },
  { w = 2, ok = deep, gen = function(c)
    return block("do", {
      leaf(format("local s = string.gsub(%q, \"%%w\",", c.r.pick { "ab", "a1b", "xyz" }), false),
      inline_fn(c, "ch", "ch", false), leaf(")", false),
      leaf("acc = (acc + #s) % 1009", false),
    }, "end")
  end },
  { w = 2, ok = deep, gen = function(c)
    local arr = {}
    for i = 1, c.r.int(2, 5) do arr[i] = c.r.int(1, 9) end
    return block("do", {
      leaf("local arr = { " .. concat(arr, ", ") .. " }", false),
      leaf("table.sort(arr,", false),
      block("function(x, y)", fn_body(c, false), "return x < y end", false),
      leaf(")", false),
      leaf("acc = (acc + arr[1]) % 1009", false),
    }, "end")
  end },
  { w = 2, ok = always, gen = function(c)
    c.nload = c.nload + 1
    local src = c.r.pick {
      "local a = ... return a * 2 + 1",
      "local function h(x)\\n  return x + 1\\nend\\nreturn h(...) + h(2)",
      "local t = {...} return #t",
    }
    return block("do", {
      leaf(format('local ch = load("%s", "=ld%d_%d")', src, c.id, c.nload), false),
      leaf("acc = (acc + ch(acc % 5, 2)) % 1009", false),
    }, "end")
  end },
  { w = 1, ok = always, gen = function(c)
    c.nload = c.nload + 1
    return block("do", {
      leaf('local parts, k = { "return ", "40", " + ", "2" }, 0', false),
      leaf("local ch = load(", false),
      block("function()", { leaf("k = k + 1", false) }, "return parts[k] end", false),
      leaf(format(', "=rd%d_%d")', c.id, c.nload), false),
      leaf("acc = (acc + ch()) % 1009", false),
    }, "end")
  end },
  { w = 2, ok = function(c) return c.vararg end, gen = function()
    return leaf("acc = (acc + select('#', ...) + #{ ... }) % 1009")
  end },
  { w = 1, ok = always, gen = function()
    return leaf("acc = (acc + #string.format('%d', acc) + #string.rep('x', d)) % 1009")
  end },
}

-- the metatables: their metamethods may call the functions above them
local function gen_metatable(c, name)
  local r = c.r
  local function mm(params, ret)
    return block("function(" .. params .. ")", { leaf("local acc, d = 1, 2", false), gen_stmt(c, false) },
      { "return " .. ret, "end" }, false)
  end
  c.vararg = false
  local nodes = { leaf("local " .. name .. " = {}", false) }
  local all = {
    { "__index", "t, k", "acc" }, { "__newindex", "t, k, v", "nil" }, { "__call", "self, x", "acc + x" },
    { "__add", "x, y", "acc" }, { "__eq", "x, y", "acc % 2 == 0" }, { "__lt", "x, y", "acc % 2 == 1" },
    { "__concat", "x, y", "'c'" }, { "__close", "o, e", "nil" }, { "__tostring", "o", "'o' .. acc" },
  }
  for _, m in ipairs(all) do
    if r.chance(0.8) then
      nodes[#nodes + 1] = leaf(name .. "." .. m[1] .. " =", false)
      nodes[#nodes + 1] = mm(m[2], m[3])
    end
  end
  return block("do end", nodes, {}, false)
end

local function gen_function(c, i)
  local name = "f" .. i
  c.id = i
  c.nclosure = 0
  c.vararg = c.r.chance(0.35)
  local params = c.vararg and "d, a, ..." or "d, a"
  local body = gen_block(c, false)
  local r = c.r
  local ret
  local choice = r.int(1, 4)
  if choice == 1 and #c.fns > 0 then
    ret = format("return %s(d - 1, acc%s)", callee(c), c.vararg and ", ..." or "")
  elseif choice == 2 then
    ret = format("return %s(d - 1, acc)", name)
  else
    ret = "return acc"
  end
  local node = block({
    "local function " .. name .. "(" .. params .. ")",
    "if fuel <= 0 or d <= 0 then return 1 end",
    "fuel = fuel - 1",
    "local acc = a",
  }, body, { ret, "end" }, false)
  c.fns[#c.fns + 1] = name
  return node
end

--- A program's tree from a seed.
-- @usage local tree = luagen.tree(7)
function M.tree(seed)
  local r = rng(seed)
  local c = { r = r, fns = {}, mts = {}, depth = 0, id = 0, nclosure = 0, nload = 0, nlabel = 0 }
  local items = {
    leaf({
      "local fuel = " .. r.int(20, 60),
      "local keep = {}",
      "local XP = {}",
      "local MT_ERR = { __tostring = function() return 'err' end }",
      "local MT_GC = { __gc =",
      "function(o) local s = 0 for i = 1, 3 do s = s + i end o.s = s end }",
    }, false),
  }
  local nf = r.int(2, 6)
  for i = 1, nf do
    items[#items + 1] = gen_function(c, i)
    if r.chance(0.35) and #c.mts < 2 then
      local name = "MT" .. (#c.mts + 1)
      items[#items + 1] = gen_metatable(c, name)
      c.mts[#c.mts + 1] = name
    end
  end
  c.id = 0
  c.vararg = false
  local main = block({ "local function main(d)", "local acc = 0" }, gen_block(c, false), { "return acc", "end" }, false)
  items[#items + 1] = main
  items[#items + 1] = leaf({ format("local ok, res = pcall(main, %d)", r.int(2, 4)), "return ok, res" }, false)
  return { items = items }
end

-- The lines of a node list, the nodes in `drop` left out.
local function render(nodes, out, drop, indent)
  for _, n in ipairs(nodes) do
    if not (drop and drop[n]) then
      for _, l in ipairs(n.head) do out[#out + 1] = indent .. l end
      if n.body then render(n.body, out, drop, indent .. "  ") end
      if n.tail then for _, l in ipairs(n.tail) do out[#out + 1] = indent .. l end end
    end
  end
  return out
end

--- A program's text (the nodes of the set `drop` left out).
-- @usage local src = luagen.render(luagen.tree(7))
function M.render(tree, drop)
  return concat(render(tree.items, {}, drop, ""), "\n") .. "\n"
end

--- Every node the shrinker may remove, outermost first.
-- @usage for _, n in ipairs(luagen.cuttable(tree)) do ... end
function M.cuttable(tree)
  local t = {}
  local function walk(nodes)
    for _, n in ipairs(nodes) do
      if n.cut then t[#t + 1] = n end
      if n.body then walk(n.body) end
    end
  end
  walk(tree.items)
  return t
end

--- A program's text from a seed.
-- @usage local src = luagen.program(7)
function M.program(seed) return M.render(M.tree(seed)) end

---------------------------------------------------------------------------
-- Names of C functions, found here (the library tables), not by the engine
---------------------------------------------------------------------------

local LIBS = { "string", "table", "coroutine", "math", "utf8", "os", "io", "debug" }
local CNAMES
local function cnames()
  if CNAMES then return CNAMES end
  CNAMES = { names = {}, set = {} }
  local function add(f, name)
    local old = CNAMES.names[f]
    if not old or #name < #old or (#name == #old and name < old) then CNAMES.names[f] = name end
  end
  local gkeys = {}
  for k in pairs(_G) do if type(k) == "string" then gkeys[#gkeys + 1] = k end end
  sort(gkeys)
  for _, k in ipairs(gkeys) do if type(_G[k]) == "function" then add(_G[k], k) end end
  for _, lib in ipairs(LIBS) do
    local keys = {}
    for k in pairs(_G[lib]) do keys[#keys + 1] = k end
    sort(keys)
    for _, k in ipairs(keys) do
      if type(_G[lib][k]) == "function" then add(_G[lib][k], lib .. "." .. k) end
    end
  end
  for _, name in pairs(CNAMES.names) do CNAMES.set[name] = true end
  return CNAMES
end

---------------------------------------------------------------------------
-- Dumps: sorted lines, the same shape for an engine's profile and the oracle
--   F key self [inclusive]   L key line cost   C caller line callee count cost
--   S stack cost             T total
-- A Lua function's key is its chunk and line defined; a C function's its
-- library name, or "[C]:?" for the others (closures of coroutine.wrap).
---------------------------------------------------------------------------

local function add(t, k, v) t[k] = (t[k] or 0) + v end

local function lines_of(t, fmt)
  local out = {}
  for k, v in pairs(t) do out[#out + 1] = format(fmt, k, v) end
  return out
end

-- The dump of the numbers: self[key], lines[key .. " " .. line],
-- calls[caller .. " " .. line .. " " .. callee] = { count, cost }, stacks, total, incl
local function dump_text(d)
  local out = lines_of(d.self, "F %s %d")
  for _, l in ipairs(lines_of(d.lines, "L %s %d")) do out[#out + 1] = l end
  for k, v in pairs(d.calls) do out[#out + 1] = format("C %s %d %d", k, v[1], v[2]) end
  for _, l in ipairs(lines_of(d.stacks, "S %s %d")) do out[#out + 1] = l end
  for _, l in ipairs(lines_of(d.incl, "I %s %d")) do out[#out + 1] = l end
  out[#out + 1] = format("T %d", d.total)
  if d.desync then out[#out + 1] = format("X oracle lost its stack %d times", d.desync) end
  sort(out)
  return concat(out, "\n") .. "\n"
end

--- The dump of an engine's profile (taken with stacks = true).
-- @usage local text = luagen.dump(callgrind.profile(run, { stacks = true }))
function M.dump(prof)
  local names = cnames()
  local target = {}
  for c in prof:calls() do target[c.callee.file .. "\0" .. c.callee.name] = c.target_line end
  local keys = {}
  local function key(fn)
    local id = fn.file .. "\0" .. fn.name
    local k = keys[id]
    if k then return k end
    if fn.file == "[C]" then
      k = "[C]:" .. (names.set[fn.name] and fn.name or "?")
    else
      k = fn.file .. ":" .. (target[id] or 0)
    end
    keys[id] = k
    return k
  end
  local d = { self = {}, lines = {}, calls = {}, stacks = {}, incl = {}, total = prof:total("Instr") }
  for fn in prof:functions() do
    local k = key(fn)
    if fn:self("Instr") ~= 0 then add(d.self, k, fn:self("Instr")) end
    if k ~= "[C]:?" and fn:inclusive("Instr") ~= 0 then add(d.incl, k, fn:inclusive("Instr")) end
    for l in fn:lines() do
      if l:cost("Instr") ~= 0 then add(d.lines, k .. " " .. l.line, l:cost("Instr")) end
    end
  end
  for c in prof:calls() do
    local k = key(c.caller) .. " " .. c.line .. " " .. key(c.callee)
    local v = d.calls[k] or { 0, 0 }
    v[1], v[2] = v[1] + c.count, v[2] + c:cost("Instr")
    d.calls[k] = v
  end
  for frames, cost in prof:stacks("Instr") do
    local p = {}
    for i, f in ipairs(frames) do p[i] = key(f) end
    add(d.stacks, concat(p, ";"), cost)
  end
  return dump_text(d)
end

---------------------------------------------------------------------------
-- The oracle: a count hook (debug.sethook with count 1, and call and
-- return events) with its own shadow stacks, written from the rules of
-- docs/profiling-lua.md, sharing no code with the engines. Frames are
-- matched to the interpreter's by their depth in their thread.
---------------------------------------------------------------------------

--- Runs fn under the count hook; its dump (inclusive costs through the
-- model, from a callgrind text of the oracle's own self costs and calls).
-- @usage local text = luagen.oracle(run, callgrind)
function M.oracle(fn, callgrind)
  local names = cnames()
  local getinfo, running, status, sethook = debug.getinfo, coroutine.running, coroutine.status, debug.sethook
  local getlocal, getupvalue = debug.getlocal, debug.getupvalue
  local fkeys = setmetatable({}, { __mode = "k" })
  local function fkey(f)
    local k = fkeys[f]
    if k then return k end
    local s = getinfo(f, "S")
    if s.what == "C" then
      k = "[C]:" .. (names.names[f] or "?")
    else
      k = s.short_src .. ":" .. s.linedefined
    end
    fkeys[f] = k
    return k
  end
  local function defined(k) return tonumber(k:match(":(%d+)$")) or 0 end

  local d = { self = {}, lines = {}, calls = {}, stacks = {}, incl = {}, total = 0 }
  local G = 0
  local active = {}
  local threads, order = {}, {}
  local cur
  local on = true
  local from_key, from_path
  local dropped               -- the last record left was dropped: from_key is its root
  local switched              -- this event switched threads
  local unwound               -- ... from a coroutine an error killed, to the one the error reached
  local dead_from             -- the resumer of the last coroutine whose body returned (cur is nil then)

  local function clock(T) return G - T.susp end
  local function path_of(f, k)
    return (f and f.path ~= "") and (f.path .. ";" .. k) or k
  end
  local function pop(T)
    local f = T.frames[#T.frames]
    T.frames[#T.frames] = nil
    active[f.key] = active[f.key] - 1
    if f.edge then
      local e = d.calls[f.edge]
      e[1] = e[1] + 1
      if active[f.key] == 0 then e[2] = e[2] + clock(T) - f.start end
    end
  end
  local function close_all(T) while #T.frames > 0 do pop(T) end end
  local function activity(T, delta)
    for _, f in ipairs(T.frames) do active[f.key] = active[f.key] + delta end
  end
  local function repath(T)
    local below = T.root
    for _, f in ipairs(T.frames) do
      f.path = path_of(below, f.key)
      below = f
    end
  end
  local function new_thread(th, root_key, root_path)
    local T = { th = th, frames = {}, susp = 0, root = { key = root_key, path = root_path or "", line = 0 } }
    threads[th] = T
    order[#order + 1] = T
    return T
  end
  local function drop(T)
    threads[T.th] = nil
    if cur == T then cur = nil end
  end
  local function switch(th)
    if not dropped then from_key, from_path = nil, nil end
    dropped = false
    unwound = false
    if cur then
      local top = cur.frames[#cur.frames] or cur.root
      from_key, from_path = top.key, top.path
      local st = status(cur.th)
      if st == "suspended" then
        cur.suspended, cur.susp_at = true, G
        activity(cur, -1)
      elseif st == "dead" then
        -- and the coroutines its error killed on the way to th: each
        -- resumed the one before it
        local r = cur
        repeat
          close_all(r)
          drop(r)
          r = r.resumer
        until not r or r.th == th or threads[r.th] ~= r or status(r.th) ~= "dead"
        unwound = r ~= nil and r.th == th
      end
    elseif dead_from then
      -- the last thread's body returned (a __close its reset ran, called
      -- by its closer): the closer's thread may have died since, of an
      -- error raised again with no event of its own, and those the error
      -- went through on the way to th
      local r = dead_from
      while r and r.th ~= th and threads[r.th] == r and status(r.th) == "dead" do
        close_all(r)
        drop(r)
        r = r.resumer
      end
    end
    -- no thread left (the last one's body returned: a __close of a closed
    -- coroutine): its resumer runs on, the closer, which resumes the next
    -- record (a second __close's), and which the error raised again may kill
    local left = cur
    if not left and dead_from and threads[dead_from.th] == dead_from then left = dead_from end
    dead_from = nil
    local T = threads[th]
    if not T then
      T = new_thread(th, from_key, from_path)
      T.resumer = left
    elseif T.suspended then
      T.resumer = left
      T.susp = T.susp + G - T.susp_at
      T.suspended = false
      activity(T, 1)
      T.root.path = from_path or ""
      repath(T)
    end
    cur = T
  end
  -- the depth of the function that triggered the hook in its thread
  local function depth()
    local hi = 3
    while getinfo(hi, "l") do hi = hi * 2 end
    local lo = hi // 2          -- getinfo(lo) exists (or lo = 1)
    while hi - lo > 1 do
      local mid = (lo + hi) // 2
      if getinfo(mid, "l") then lo = mid else hi = mid end
    end
    return lo - 2             -- level 3 (above depth and the hook), from 1
  end
  local function top(T) return T.frames[#T.frames] or T.root end
  local function push(T, k, dep, edge)
    local below = top(T)
    local f = { key = k, line = defined(k), start = clock(T), depth = dep, edge = edge }
    f.path = path_of(below, k)
    T.frames[#T.frames + 1] = f
    active[k] = (active[k] or 0) + 1
    if edge and not d.calls[edge] then d.calls[edge] = { 0, 0 } end
  end

  local base                  -- depth of fn's frame
  local hook
  function hook(ev)
    if not on then return end
    local th = running()
    switched = not cur or cur.th ~= th
    if switched then switch(th) end
    local T = cur
    if ev == "count" then
      local f = T.frames[#T.frames]
      if not f then return end
      local info = getinfo(2, "fl")
      local line = info.currentline
      if fkey(info.func) ~= f.key then d.desync = (d.desync or 0) + 1 end
      f.line = line
      add(d.self, f.key, 1)
      add(d.lines, f.key .. " " .. line, 1)
      add(d.stacks, f.path, 1)
      G = G + 1
      return
    end
    local dep = depth()
    if T == threads.main then dep = dep - base + 1 end
    local k = fkey(getinfo(2, "f").func)
    if ev == "call" then
      if dep < 1 then return end
      if dep == 1 and T ~= threads.main and #T.frames > 0 then
        -- the bottom of a coroutine where a dead one had frames (the
        -- __close of a closed one): they close, the call is the closer's
        -- (a wrap function that an error came back to resets its
        -- coroutine with no event in between: the one that resumed it,
        -- also when the error came from a coroutine this one resumed,
        -- whose last event was the one before; coroutine.close's call
        -- is an event of the closer's thread)
        close_all(T)
        local R = T.resumer
        if R and R ~= T and threads[R.th] == R and (not switched or unwound) then
          local c = top(R)
          T.root.key, T.root.path = c.key, c.path or ""
        else
          T.root.key, T.root.path = from_key, from_path or ""
        end
      end
      while #T.frames > 0 and T.frames[#T.frames].depth >= dep do pop(T) end
      local caller = top(T)
      if caller.key and caller.depth == dep - 1 and caller.key:sub(1, 4) ~= "[C]:" then
        -- the call instruction's line, as Lua says it (a generic for's
        -- first call of its iterator follows no fetch of its own)
        local l = getinfo(3, "l")
        if l and l.currentline > 0 then caller.line = l.currentline end
      end
      local edge = caller.key and (caller.key .. " " .. caller.line .. " " .. k) or nil
      push(T, k, dep, edge)
    elseif ev == "tail call" then
      while #T.frames > 0 and T.frames[#T.frames].depth > dep do pop(T) end
      local caller = top(T)
      local edge = caller.key and (caller.key .. " " .. caller.line .. " " .. k) or nil
      if caller.depth == dep and caller.key == k then
        if edge then
          d.calls[edge] = d.calls[edge] or { 0, 0 }
          d.calls[edge][1] = d.calls[edge][1] + 1
        end
        caller.line = defined(k)
        return
      end
      if caller.depth == dep then caller.tail = true end
      push(T, k, dep, edge)
    elseif ev == "return" then
      if k == "[C]:coroutine.close" then
        -- the closed coroutine's frames close now (a __close of it closed
        -- them already); a suspended one's at the clock of its yield
        local _, co = getlocal(2, 1)
        local C = type(co) == "thread" and threads[co]
        if C and C ~= T and status(co) == "dead" then
          if C.suspended then activity(C, 1) end
          local saved = G
          if C.suspended then G = C.susp_at end
          close_all(C)
          G = saved
          drop(C)
        end
      end
      if k == "[C]:coroutine.create" or k == "[C]:coroutine.wrap" then
        -- debug.sethook's Lua hook is kept per thread: a new coroutine
        -- gets it here (the returned thread, or the wrap function's upvalue)
        local _, v = getlocal(2, getinfo(2, "r").ftransfer)
        if type(v) == "function" then _, v = getupvalue(v, 1) end
        if type(v) == "thread" then sethook(v, hook, "cr", 1) end
      end
      local i = #T.frames
      while i > 0 and T.frames[i].depth ~= dep do i = i - 1 end
      if i == 0 then return end
      while #T.frames > i do pop(T) end
      pop(T)
      while #T.frames > 0 and T.frames[#T.frames].tail and T.frames[#T.frames].depth == dep do pop(T) end
      -- a coroutine's body returned: it is dead (another event of the
      -- thread, a second __close of a closed coroutine, starts a record
      -- called by its closer, this one's root)
      if #T.frames == 0 and T ~= threads.main then
        dead_from = T.resumer
        drop(T)
        from_key, from_path, dropped = T.root.key, T.root.path, true
      end
    end
  end

  -- the main thread's record: fn runs at depth 1 over an outside root
  local main = running()
  local M0 = new_thread(main, nil, nil)
  threads.main = M0
  cur = M0
  local function starter()
    fn()                      -- not a tail call: fn is above starter
  end
  local function run_it()
    base = depth() + 3        -- depth() gives run_it's less 1; fn is 2 up
    sethook(hook, "cr", 1)
    starter()
  end
  local ok, err = pcall(run_it)
  on = false
  sethook()
  assert(ok, err)
  for _, T in ipairs(order) do
    if threads[T.th] == T and T ~= M0 then
      if T.suspended then activity(T, 1) end
      local saved = G
      if T.suspended then G = T.susp_at end
      close_all(T)
      G = saved
    end
  end
  close_all(M0)
  d.total = G
  -- inclusive costs: the model's, from the oracle's own numbers
  local text = { "events: Instr" }
  local by_fn = {}
  for k, v in pairs(d.lines) do
    local f, line = k:match("^(.*) (%d+)$")
    by_fn[f] = by_fn[f] or { lines = {}, calls = {} }
    by_fn[f].lines[#by_fn[f].lines + 1] = line .. " " .. v
  end
  for k, v in pairs(d.calls) do
    local caller, line, cal = k:match("^(%S+) (%d+) (%S+)$")
    by_fn[caller] = by_fn[caller] or { lines = {}, calls = {} }
    local c = by_fn[caller].calls
    c[#c + 1] = format("cfn=%s\ncalls=%d %d\n%s %d", cal, v[1], defined(cal), line, v[2])
  end
  local fns = {}
  for k in pairs(by_fn) do fns[#fns + 1] = k end
  sort(fns)
  for _, k in ipairs(fns) do
    text[#text + 1] = "fn=" .. k
    sort(by_fn[k].lines)
    for _, l in ipairs(by_fn[k].lines) do text[#text + 1] = l end
    sort(by_fn[k].calls)
    for _, l in ipairs(by_fn[k].calls) do text[#text + 1] = l end
  end
  local prof = assert(callgrind.parse(concat(text, "\n") .. "\n", "oracle"))
  for f in prof:functions() do
    if f.name ~= "[C]:?" and f:inclusive("Instr") ~= 0 then d.incl[f.name] = f:inclusive("Instr") end
  end
  return dump_text(d)
end

---------------------------------------------------------------------------
-- The driver of the child processes
---------------------------------------------------------------------------

local function run_one(src, name, mode, out)
  local callgrind = require "callgrind"
  local function fresh()
    local env = setmetatable({}, { __index = _G })
    return load(src, "=gen", "t", env)
  end
  local ok, err = fresh()
  if not ok then
    out[#out + 1] = "#seed " .. name .. " " .. mode .. "\nE " .. err:gsub("[#\n]", " ") .. "\n"
    return
  end
  if mode == "vm" then
    out[#out + 1] = "#seed " .. name .. " vm\n" .. M.dump(callgrind.profile(fresh(), { stacks = true }))
  else
    out[#out + 1] = "#seed " .. name .. " hook\n"
      .. M.dump(callgrind.profile(fresh(), { stacks = true, engine = "hook" }))
    out[#out + 1] = "#seed " .. name .. " oracle\n" .. M.oracle(fresh(), callgrind)
  end
end

--- The child process: mode "hook"/"vm" and a range of seeds, or
-- "hookfile"/"vmfile" and a program's path; prints the dumps.
-- @usage luagen.main("hook", "1", "10")
function M.main(mode, a, b)
  local out = {}
  if mode == "hookfile" or mode == "vmfile" then
    local f = assert(io.open(a, "rb"))
    local src = f:read("a")
    f:close()
    run_one(src, "file", mode == "vmfile" and "vm" or "hook", out)
  else
    for seed = tonumber(a), tonumber(b) do run_one(M.program(seed), tostring(seed), mode, out) end
  end
  io.stdout:write(concat(out))
end

--- Parses a child's output: dumps[name][what] = text.
-- @usage local dumps = luagen.parse(out)
function M.parse(text)
  local dumps = {}
  for name, what, body in text:gmatch("#seed (%S+) (%S+)\n([^#]*)") do
    dumps[name] = dumps[name] or {}
    dumps[name][what] = body
  end
  return dumps
end

--- The lines in a and not in b, and in b and not in a (sorted dumps).
-- @usage local only_a, only_b = luagen.diff(a, b)
function M.diff(a, b)
  local sa, sb = {}, {}
  for l in a:gmatch("[^\n]+") do sa[l] = true end
  for l in b:gmatch("[^\n]+") do sb[l] = true end
  local oa, ob = {}, {}
  for l in a:gmatch("[^\n]+") do if not sb[l] then oa[#oa + 1] = l end end
  for l in b:gmatch("[^\n]+") do if not sa[l] then ob[#ob + 1] = l end end
  return oa, ob
end

if arg and arg[0] and arg[0]:match("luagen%.lua$") and ... ~= "spec.support.luagen" then
  M.main(...)
end

return M
