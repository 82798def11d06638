#!/usr/bin/env lua5.4
-- A callgrind_annotate-like report, with inclusive costs that count
-- recursion once.
--
--   lua5.4 examples/annotate.lua FILE [options]
--     --event EV          event to sort by (default: the first; derived ones work: CEst, L1m ...)
--     --threshold PCT     list functions until PCT% of the total is covered (default 99)
--     --top N             at most N functions (default 50)
--     --inclusive         sort by inclusive cost instead of self cost
--     --tree=caller|callee  under each function, its callers or callees with their costs
--     --source FILE       annotate the lines of one source file (a path, a tail of it or a base name)
--     --root DIR          with --source, print the source text found under DIR
--
-- Run from the repository (it finds the library in lua/ and build/), or
-- with the library installed.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local callgrind = require "callgrind"
local commas = callgrind.report.commas

local function usage(msg)
  io.stderr:write(msg and (msg .. "\n") or "",
    "usage: lua5.4 examples/annotate.lua FILE [--event EV] [--threshold PCT] [--top N] [--inclusive]\n",
    "                                         [--tree=caller|callee] [--source FILE [--root DIR]]\n")
  os.exit(2)
end

local opts = { threshold = 99, top = 50 }
local i = 1
while i <= #arg do
  local a = arg[i]
  local key, val = a:match("^%-%-([%w]+)=(.*)$")
  key = key or a:match("^%-%-([%w]+)$")
  local function value()
    if val then return val end
    i = i + 1
    return arg[i] or usage("missing value for " .. a)
  end
  if key == "event" then opts.event = value()
  elseif key == "threshold" then opts.threshold = tonumber(value()) or usage("bad threshold")
  elseif key == "top" then opts.top = math.tointeger(tonumber(value())) or usage("bad --top")
  elseif key == "inclusive" then opts.inclusive = true
  elseif key == "tree" then
    opts.tree = value()
    if opts.tree ~= "caller" and opts.tree ~= "callee" then usage("--tree takes caller or callee") end
  elseif key == "source" then opts.source = value()
  elseif key == "root" then opts.root = value()
  elseif key then usage("unknown option " .. a)
  elseif not opts.file then opts.file = a
  else usage("one profile at a time") end
  i = i + 1
end
if not opts.file then usage() end

local prof, err = callgrind.load(opts.file)
if not prof then
  io.stderr:write(err, "\n")
  os.exit(1)
end
local ev = opts.event or prof.events[1]
if not ev then
  print(prof:summary())
  os.exit(0)
end
local known = {}
for _, e in ipairs(prof:all_events()) do known[e] = true end
if not known[ev] then
  usage(("unknown event %s (this profile has: %s)"):format(ev, table.concat(prof:all_events(), " ")))
end
local total = prof:total(ev)
local kind = opts.inclusive and "inclusive" or "self"

print(prof:summary())
print()

-- the functions that cover `threshold` percent of the total
local ranked = prof:top(opts.top, ev, kind)
local shown = {}
local covered = 0
for _, fn in ipairs(ranked) do
  if total ~= 0 and 100 * covered / total >= opts.threshold then break end
  shown[#shown + 1] = fn
  covered = covered + fn:self(ev)
end
local sel = prof:select(shown)
sel.event, sel.kind = ev, kind
print(("-- functions by %s %s"):format(kind, ev))
print(sel:report())

if opts.tree then
  print()
  print(("-- %s of each function (inclusive %s of the calls)"):format(opts.tree == "caller" and "callers" or "callees",
    ev))
  for _, fn in ipairs(shown) do
    print(("%s  %s"):format(commas(fn:inclusive(ev)), fn.name))
    local rows = (opts.tree == "caller" and fn:caller_functions() or fn:callee_functions()):sort(ev)
    for r = 1, #rows do
      print(("    %s  %s %s (%d call%s)"):format(commas(rows:cost(r, ev)), opts.tree == "caller" and "<-" or "->",
        rows[r].fn.name, rows[r].count, rows[r].count == 1 and "" or "s"))
    end
  end
end

if opts.source then
  print()
  -- the file as the profile names it, a tail of that path, or a base name;
  -- with --root, the source text found under that directory
  local ok, ann = pcall(prof.annotate, prof, opts.source, ev, { source = opts.root })
  if not ok then usage((tostring(ann):gsub("^.-%(", ""):gsub("%)$", ""))) end
  print(ann:report())
end
