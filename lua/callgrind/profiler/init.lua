--- A profiler for Lua code itself: deterministic counts of Lua VM
-- instructions (event `Instr`) per function, per source line and per call
-- site, collected by a C debug hook (csrc/profiler/cg_prof_collect.c), and
-- returned as a Profile like any loaded one. Optional events: `Time`
-- (nanoseconds, the hook's own time left out) and `Alloc` (bytes allocated).
--
-- The profiler owns the debug hook while it runs: it refuses to start when
-- a hook is already set (it does not chain), and `stop` raises when the
-- hook was replaced meanwhile; but the counting interpreter's engine
-- (`vm`, Instr only) has a hook of its own and leaves debug.sethook free.
-- @module callgrind.profiler
local core = require "callgrind.core"
-- args and util are loaded where first used: the writer that
-- callgrind.start loads at a program's end needs neither (parsing them
-- was a third of what that writer cost)
local args = setmetatable({}, { __index = function(_, k) return require("callgrind.args")[k] end })
local util = setmetatable({}, { __index = function(_, k) return require("callgrind.util")[k] end })
-- callgrind.model.load is required where a profile is built: parsing it
-- (and callgrind.api, which only an options check loads) was half of what
-- `-lcallgrind.start` cost a script that does nothing

local M = {}

local error, ipairs, tostring = error, ipairs, tostring
local concat = table.concat
local format = string.format
local getinfo = debug.getinfo

-- what until_exit and callgrind.start arm with the core alone (the
-- running profiles, check_free)
local exit = require "callgrind.profiler.exit"
local check_free = exit.check_free

-- the writer: names, the callgrind text, the files at a program's end
-- (callgrind.profiler.exit loads it alone there, without this module)
local W = require "callgrind.profiler.writer"
local describe, to_text, safe, unnest = W.describe, W.to_text, W.safe, W.unnest

---------------------------------------------------------------------------
-- Stacks (opts.stacks): kept beside the Profile, in memory only
---------------------------------------------------------------------------

local STACKS = setmetatable({}, { __mode = "k" })

-- The Function handles of the written functions, by our index.
local function handles(prof, fns)
  local by = {}
  for f in prof:functions() do by[f.file .. "\0" .. f.name] = f end
  local t = {}
  for i, fn in ipairs(fns) do t[i] = by[safe(fn.file) .. "\0" .. safe(fn.name)] end
  return t
end

local Profile = core.methods.Profile

-- The column of event ev (a name or an index; nil: the first) in the
-- recorded stacks st, or nil when st has no such event.
local function event_column(st, ev)
  if ev == nil then return 1 end
  for i, name in ipairs(st.events) do
    if name == ev or i == ev then return i end
  end
  return nil
end

--- The profile's call stacks (a Lua profile made with `stacks = true`):
-- iterates `frames, cost` per distinct stack whose own cost in `ev` is not
-- 0, frames the Function handles from the outermost to the one that ran
-- (a coroutine's stack continues the stack of the resume that runs it);
-- the costs add up to the total. Raises for a profile without stacks.
-- @param[opt] ev an event name or index (default the first)
-- @usage for frames, cost in prof:stacks("Instr") do print(#frames, cost) end
function Profile:stacks(ev)
  local st, why = STACKS[self], nil
  if not st then st, why = require("callgrind.export.stackrec").of(self) end
  if not st then
    error("prof:stacks: " .. (why or "this profile has no stacks (profile it with stacks = true, "
      .. "or with CALLGRIND_STACKS=1: FILE.stacks beside FILE)"), 2)
  end
  local col = event_column(st, ev)
  if not col then
    args.fail("stacks", 1, format("no event %s; events: %s", args.show(ev), concat(st.events, ", ")))
  end
  local data, width, fns = st.data, 2 + #st.events, st.fns
  -- a stack's frames, by walking up its parents (a new array each time)
  local function frames(node)
    local rev = {}
    while node > 0 do
      rev[#rev + 1] = fns[data[(node - 1) * width + 2]]
      node = data[(node - 1) * width + 1]
    end
    local f, m = {}, #rev
    for i = 1, m do f[i] = rev[m + 1 - i] end
    return f
  end
  local node, n = 0, #data // width
  return util.iterator(function()
    while node < n do
      node = node + 1
      local cost = data[(node - 1) * width + 2 + col]
      if cost ~= 0 then return frames(node), cost end
    end
  end, "stacks (frames, cost)")
end

-- The recorded trie for callgrind.export.stacks (a floor below: it finds
-- it in core.internal): data (parent, function, cost per event, a node
-- each), its width, the event's column, the Function handles by our
-- index (nil where the profile has none), the record's path (a loaded
-- profile's FILE.stacks) and the number of functions; nil for a profile
-- without stacks. Raises for an unknown event.
core.internal.stack_trie = function(prof, ev)
  local st = STACKS[prof] or require("callgrind.export.stackrec").of(prof)
  if not st then return nil end
  local col = event_column(st, ev)
  if not col then error("no event " .. tostring(ev)) end
  return st.data, 2 + #st.events, col, st.fns, st.source, st.nfn
end

core.internal.stacks_method = Profile.stacks

-- data -> Profile, text
local function build(data)
  local fns = describe(data)
  local text = to_text(data, nil, fns)
  local prof = assert(require("callgrind.model.load").parse(text, "(lua profile)"))
  if data.stacks then
    STACKS[prof] = { data = data.stacks, events = data.events, fns = handles(prof, fns), nfn = #fns }
  end
  return prof, text
end

-- The total of each event of the data (the sum of its lines).
local function data_total(data)
  local nev, total = #data.events, 0
  for _, lines in ipairs(data.lines) do
    for k = 2, #lines, nev + 1 do total = total + lines[k] end
  end
  return total
end

---------------------------------------------------------------------------
-- Nesting: a profile inside a running one
---------------------------------------------------------------------------

-- A `profile` while the profiler runs pauses the outer profile
-- (core.prof_pause: what it collected so far, its open frames closed),
-- runs the inner one alone (its numbers are those of a profile of its
-- own), then restarts the outer one with the frames from the inner
-- call's frame down, before it returns. The outer profile is then every
-- segment added up, the inner profile's costs grafted where it ran
-- (a call of the function profiled from `profile`, whose inclusive cost
-- the open frames take too). What the segments count twice is taken
-- out: a frame open across a pause closes in both segments (one call
-- too many), the restarted segment's frames below the outer profile's
-- first frame were never the outer profile's, and a call the inner
-- profile makes of a function open in the outer one is a recursion
-- there (its edge keeps its count, not its cost, as the collector's
-- edges do). A coroutine suspended across the pause is not restarted:
-- its frames are lost to the outer profile.
--
-- NEST[i]: the running profiles, outermost first: { opts, base (the
-- depth, counted from the bottom of the stack, of the last frame that is
-- not the profile's), parts = { { data, inner, fn, stack }, ... } }.
-- (callgrind.profiler.exit keeps it: callgrind.start pushes its profile
-- before this module is loaded)
local NEST = exit.nest

-- The depth of the frame at level (of the caller of depth_of): the
-- frames from it to the bottom of the stack.
local depth_of = exit.depth_of

-- The frames from level (of the caller) to the bottom, bottom first:
-- { func, line } each, line as the collector takes it (the current line;
-- the line defined with lines = false; 0 for a C function).
local function open_stack(level, lines)
  local frames, n = {}, level + 1
  while true do
    local d = getinfo(n, "fSl")
    if not d then break end
    local line = lines == false and d.linedefined or d.currentline
    frames[#frames + 1] = { func = d.func, line = (line and line > 0) and line or 0 }
    n = n + 1
  end
  local out, m = {}, #frames
  for i = 1, m do out[i] = frames[m + 1 - i] end
  return out
end

-- A profile of fn inside the running one (see NEST), runs times (nil:
-- once): the part (its inner data each run) and the results of the last
-- run, { ok, data, fn's results... }, its data the worst of the runs
-- (the largest first total). The outer profile is paused: the caller
-- restarts it (restart).
local function nested(fn, opts, runs)
  local ctx = NEST[#NEST]
  if not ctx then
    error("callgrind.profiler.profile: the profiler is already running (started outside callgrind.profiler)", 3)
  end
  local part = { fn = fn, data = core.prof_pause(), inner = {} }
  ctx.parts[#ctx.parts + 1] = part
  -- the outer profile's stacks need the inner one's
  local run_opts = opts
  if ctx.opts.stacks and not opts.stacks then
    run_opts = setmetatable({ stacks = true }, { __index = opts })
  end
  local worst, results
  for _ = 1, runs or 1 do
    -- the stack: profile, nested, this, pcall, prof_run, fn
    local inner = { opts = run_opts, base = depth_of(1) + 2, parts = {} }
    NEST[#NEST + 1] = inner
    local r = table.pack(pcall(core.prof_run, fn, run_opts))
    if NEST[#NEST] == inner then
      local data = unnest(r[1] and r[2] or nil)
      if r[1] then r[2] = data end
    end
    if not r[1] then return part, r end
    part.inner[#part.inner + 1] = r[2]
    r.total = data_total(r[2])
    if not worst or r.total > worst.total then worst = r end
    results = r
  end
  results.worst = worst
  return part, results, run_opts
end

-- Restarts the outer profile paused by nested, from the frame that
-- called `profile` down (profile tail-calls this: its frame is gone),
-- then returns ... (ok), or raises the error ... (not ok).
local function restart(part, ok, ...)
  local ctx = NEST[#NEST]
  part.stack = open_stack(2, ctx.opts.lines)
  -- a tail call: prof_resume's level 1 is the caller of profile
  return core.prof_resume(ctx.opts, 1, ok, ...)
end

---------------------------------------------------------------------------
-- The API
---------------------------------------------------------------------------

--- Starts profiling the running code (the calling function and the ones
-- that called it are on the profile's stack from here on).
-- @tparam[opt] table opts `time = true` adds event `Time`, `alloc = true`
--   event `Alloc`; `count_hook = true` counts with a count hook (slower,
--   the same numbers); `lines = false` collects functions and calls only
--   (faster); `stacks = true` records every distinct call stack
--   (`prof:stacks`)
-- @usage profiler.start(); work(); local prof = profiler.stop()
function M.start(opts)
  args.options(opts, "start", 1, "profiler")
  check_free("start", opts)
  NEST[#NEST + 1] = { opts = opts or {}, base = 0, parts = {} }
  return core.prof_start(opts, 2)
end

--- Stops the profiler.
-- @return the Profile of what ran since `start`, and its callgrind-format
--   text (what `lua5.4 -lcallgrind.start` writes)
-- @usage local prof, text = profiler.stop()
M.stop = core.prof_stopper(function(data)
  if not data then error("callgrind.profiler.stop: the profiler is not running", 3) end
  return build(unnest(data))
end)


--- Runs fn() under the profiler.
-- @tparam function fn
-- @tparam[opt] table opts as for `start`, plus `runs = N`: runs fn N times
--   (each profiled alone) and returns the Profile of the run with the
--   largest `Instr` total, then `{ min =, max =, totals = { run 1, ... } }`
--   (the `Instr` totals) instead of fn's results. The N runs share this
--   process and its string-hash seed: the spread is one process's only
--   (`callgrind.spread` runs a script in fresh processes)
-- @return the Profile of what ran inside fn, then fn's results; an error in
--   fn stops the profiler and is raised again
-- @usage local prof, result = profiler.profile(function() return work() end)
-- @usage local prof, spread = profiler.profile(work, { runs = 5 }); print(spread.max - spread.min)
function M.profile(fn, opts)
  args.check_type(fn, "function", "profile", 1)
  opts = args.options(opts, "profile", 2, "profile")
  local runs
  if opts.runs ~= nil then
    runs = args.count(opts.runs, "profile", 2)
    if runs < 1 then args.fail("profile", 2, "option 'runs' must be at least 1") end
  end
  if core.prof_running() then
    -- nested (see NEST): the outer profile restarts as this returns
    local part, r, run_opts = nested(fn, opts, runs)
    if not r[1] then return restart(part, false, r[2]) end
    local list = {}
    if runs then
      for i, d in ipairs(part.inner) do list[i] = data_total(d) end
    end
    local data = runs and r.worst[2] or r[2]
    if run_opts ~= opts then
      -- stacks only where asked for
      data = setmetatable({ stacks = false }, { __index = data })
    end
    local prof = build(data)
    if runs then
      local min, max = math.huge, -math.huge
      for _, t in ipairs(list) do
        if t < min then min = t end
        if t > max then max = t end
      end
      return restart(part, true, prof, { min = min, max = max, totals = list })
    end
    return restart(part, true, prof, table.unpack(r, 3, r.n))
  end
  check_free("profile", opts)
  local worst, totals = nil, {}
  local last
  for i = 1, runs or 1 do
    -- the stack: profile, pcall, prof_run, fn
    local ctx = { opts = opts, base = depth_of(1) + 2, parts = {} }
    NEST[#NEST + 1] = ctx
    last = table.pack(pcall(core.prof_run, fn, opts))
    if NEST[#NEST] == ctx then
      local data = unnest(last[1] and last[2] or nil)
      if last[1] then last[2] = data end
    end
    if not last[1] then error(last[2], 0) end
    totals[i] = data_total(last[2])
    if not worst or totals[i] > worst.total then worst = { data = last[2], total = totals[i] } end
  end
  if not runs then return (build(last[2])), table.unpack(last, 3, last.n) end
  local min, max = totals[1], totals[1]
  for _, t in ipairs(totals) do
    if t < min then min = t end
    if t > max then max = t end
  end
  return (build(worst.data)), { min = min, max = max, totals = totals }
end

--- True while the profiler runs.
-- @usage if profiler.running() then ... end
function M.running()
  return core.prof_running()
end

--- Profiles the rest of the program and writes the callgrind file when it
-- ends: normally, by `os.exit` (wrapped for this), or with an error. What
-- `lua5.4 -lcallgrind.start script.lua` does. Only what is called after
-- this returns is profiled (the script's main chunk, not its loader). The
-- file is written to a temporary name and renamed into place; when it
-- cannot be written (the hook was replaced, the disk is full, the path is
-- not writable, an error while writing) one line on stderr says why and
-- no file is left.
-- @tparam[opt] table opts as for `start`, plus `out`: the file (default
--   `$CALLGRIND_OUT`, else `callgrind.out.<pid>` in the current directory);
--   with `stacks = true` the stack record goes to `out .. ".stacks"` (the
--   tree of the run's stacks, each node once: docs/format.md), with
--   `stacks = "folded"` the folded stacks of `Instr` to `out .. ".folded"`
-- @return an object that writes the file when collected (keep it: the
--   Lua state's closing collects it)
-- @usage local keep = profiler.until_exit{ out = "script.callgrind" }
function M.until_exit(opts)
  opts = args.options(opts, "until_exit", 1, "until_exit")
  -- a tail call: arm takes this frame's place, so check_free's error
  -- (level 3) names the caller's line
  return exit.arm(opts)
end

return M
