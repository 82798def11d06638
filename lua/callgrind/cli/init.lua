--- The command line, `callgrind-lua SUBCOMMAND ...` (bin/callgrind-lua):
-- its logic, callable in-process as `cli.main(argv, out, err)`.
--
-- Every FILE may be several files (one profile: threads, dumps), a
-- compressed file (gzip, zstd, xz), or the name valgrind was given
-- (`callgrind.files` finds its thread and dump files).
-- Exit codes: 0 done, 1 a file could not be read or written (or `check`
-- found a regression), 2 a usage error.
-- @module callgrind.cli
local callgrind = require "callgrind"
local report = require "callgrind.model.report"

local ipairs, pcall, tonumber, tostring = ipairs, pcall, tonumber, tostring
local math_tointeger, string_format, table_concat = math.tointeger, string.format, table.concat

local M = {}

local commas = report.commas

-- Usage lines and options of each subcommand: options map a name to
-- "value" or "flag"; `o` is -o, and `output` says -o is needed.
local COMMANDS = {
  top = { args = "FILE... [N] [EVENT]", what = "summary and the top N functions by self cost (default 15)",
    opts = {} },
  tree = { args = "FILE... FUNCTION", what = "the call tree below a function (or above it with --callers)",
    opts = { event = "value", depth = "value", threshold = "value", callers = "flag" },
    more = "  --event EV  --depth N (default 3)  --threshold PCT (default 1)  --callers" },
  annotate = { args = "FILE [SOURCE]", what = "functions by cost, callers/callees, a source file's lines",
    opts = { event = "value", threshold = "value", top = "value", inclusive = "flag", tree = "value",
      source = "value", root = "value" },
    more = table_concat({
      "  --event EV            event to sort by (default: the first; derived ones work: CEst, L1m ...)",
      "  --threshold PCT       list functions until PCT% of the total is covered (default 99)",
      "  --top N               at most N functions (default 50)",
      "  --inclusive           sort by inclusive cost instead of self cost",
      "  --tree=caller|callee  under each function, its callers or callees with their costs",
      "  --source FILE         annotate the lines of one source file (or give it as SOURCE)",
      "  --root DIR            with a source file, print the source text found under DIR" }, "\n") },
  diff = { args = "OLD NEW", what = "totals and the functions that changed most",
    opts = { event = "value", top = "value", inclusive = "flag", match = "value" },
    more = "  --event EV (ranks the movers)  --top N (default 10)  --inclusive\n"
      .. "  --match name|name+file|name+file+object (default; each run's program counts as one object)" },
  flame = { args = "FILE... -o OUT.svg", output = "OUT.svg",
    what = "an interactive SVG flame graph (--old FILE: a differential one; FILE.folded: folded stacks)",
    opts = { o = "value", event = "value", threshold = "value", title = "value", old = "value", color = "value",
      match = "value" },
    more = "  --event EV  --threshold FRACTION (default 0.0001)  --title T  --color object|file  --old FILE"
      .. "  --match KEY" },
  dot = { args = "FILE... -o OUT.svg|OUT.png|OUT.dot", what = "a call graph (Graphviz; DOT text to stdout without -o)",
    opts = { o = "value", event = "value", root = "value", leaf = "value", depth = "value",
      ["node-threshold"] = "value", ["edge-threshold"] = "value" },
    more = "  --event EV  --root FN  --leaf FN  --depth N  --node-threshold F (0.005)  --edge-threshold F (0.001)" },
  pprof = { args = "FILE... -o OUT.pb.gz", output = "OUT.pb.gz",
    what = "pprof's profile.proto, for go tool pprof and others",
    opts = { o = "value", events = "value", threshold = "value" },
    more = "  --events EV,EV (default: all base events)  --threshold FRACTION" },
  folded = { args = "FILE...", what = "folded stacks (flamegraph.pl, speedscope, inferno) to stdout or -o",
    opts = { o = "value", event = "value", threshold = "value" },
    more = "  --event EV  --threshold FRACTION (default 0.0001)  -o OUT" },
  csv = { args = "FILE...", what = "every function's self and inclusive costs as CSV (--json: JSON)",
    opts = { o = "value", events = "value", top = "value", json = "flag", by = "value" },
    more = "  --events EV,EV  --top N (by the first event's self cost)  --by file|object (grouped)  --json  -o OUT" },
  check = { args = "LIMITS OLD NEW", what = "checks NEW against OLD with a limits file; exit 1 on a regression",
    opts = { top = "value", match = "value" },
    more = "  --match name|name+file|name+file+object (as diff's)\n"
      .. "  LIMITS is a Lua file returning a table of limits, e.g. return { Ir = \"5%\", functions = { parse = "
      .. "{ Ir = \"2%\" } } }" },
}
local ORDER = { "top", "tree", "annotate", "diff", "flame", "dot", "pprof", "folded", "csv", "check" }

local function usage_of(name)
  local c = COMMANDS[name]
  return string_format("usage: callgrind-lua %s %s\n  %s%s\n", name, c.args, c.what, c.more and ("\n" .. c.more) or "")
end

--- The general help text.
-- @usage print(cli.help())
function M.help()
  local out = { "usage: callgrind-lua COMMAND [ARGS] (callgrind-lua COMMAND --help for one)", "" }
  for _, name in ipairs(ORDER) do
    out[#out + 1] = string_format("  %-9s %-34s %s", name, COMMANDS[name].args, COMMANDS[name].what)
  end
  out[#out + 1] = ""
  out[#out + 1] = "A FILE may be several files of one run, compressed (gzip, zstd, xz), or the name valgrind"
  out[#out + 1] = "was given (its thread and dump files are found)."
  return table_concat(out, "\n") .. "\n"
end

-- A usage error: raised as a table, caught by main.
local function usage(msg, name)
  error({ usage = msg, command = name }, 0)
end

local function fail(msg)
  error({ fail = msg }, 0)
end

-- Splits argv into options and positionals.
local function parse(name, argv, first)
  local spec = COMMANDS[name].opts
  local opts, pos = {}, {}
  local i = first
  while i <= #argv do
    local a = argv[i]
    if a == "-o" then
      if not spec.o then usage("unknown option -o", name) end
      i = i + 1
      opts.o = argv[i] or usage("missing value for -o", name)
    elseif a:sub(1, 2) == "--" and #a > 2 then
      local key, val = a:match("^%-%-([%w%-]+)=(.*)$")
      key = key or a:sub(3)
      local kind = spec[key]
      if not kind then usage("unknown option " .. a, name) end
      if kind == "flag" then
        if val then usage("option --" .. key .. " takes no value", name) end
        opts[key] = true
      else
        if not val then
          i = i + 1
          val = argv[i] or usage("missing value for " .. a, name)
        end
        opts[key] = val
      end
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  local out = COMMANDS[name].output
  if out and not opts.o then usage("-o " .. out .. " is needed", name) end
  return opts, pos
end

local function number(v, what, name)
  local n = tonumber(v)
  if not n then usage(string_format("%s must be a number, got '%s'", what, v), name) end
  return n
end

local function integer(v, what, name)
  local n = math_tointeger(tonumber(v))
  if not n or n < 0 then usage(string_format("%s must be a whole number, got '%s'", what, v), name) end
  return n
end

local exists = require("callgrind.util").file_exists
local printable = require("callgrind.util").printable

-- Loads the profile of some files (see the module's comment).
local function load(files, name)
  if #files == 0 then usage("no profile given", name) end
  local list = files
  if #files == 1 and not exists(files[1]) then
    local found = callgrind.files(files[1])
    if found and #found > 0 then list = found end
  end
  local prof, err = callgrind.load(#list == 1 and list[1] or list)
  if not prof then fail(err) end
  return prof
end

-- The event asked for, checked against the profile.
local function event_of(prof, ev, name)
  if ev == nil then
    ev = prof.events[1]
    if not ev then fail(string_format("%s: the profile has no events", prof.name)) end
    return ev
  end
  local known = {}
  for _, e in ipairs(prof:all_events()) do known[e] = true end
  if not known[ev] then
    usage(string_format("unknown event %s (this profile has: %s)", ev, table_concat(prof:all_events(), " ")), name)
  end
  return ev
end

-- Writes text to -o or out.
local function emit(text, path, out)
  if path then
    local ok, err = require("callgrind.util").write_file(path, text)
    if not ok then fail(err) end
  else
    out:write(text)
  end
end

local function checked(ok, err)
  if not ok then fail(err) end
end

-- Raises a library argument error as a usage error (a bad threshold).
local function try(name, f, ...)
  local res = table.pack(pcall(f, ...))
  if not res[1] then
    local e = res[2]
    if type(e) == "table" then error(e, 0) end
    usage((tostring(e):gsub("^.-bad argument", "bad argument")), name)
  end
  return table.unpack(res, 2, res.n)
end

-- --match KEY: one of the keys callgrind.diff's opts.match takes.
local function match_of(v, cmd)
  if v == nil then return nil end
  for _, k in ipairs(require("callgrind.check.diff").KEYS) do
    if v == k then return v end
  end
  usage(string_format("--match takes %s; got %s", table_concat(require("callgrind.check.diff").KEYS, ", "), v), cmd)
end

local run = {}

function run.top(argv, out)
  local _, pos = parse("top", argv, 2)
  local files, n, event = {}, 15, nil
  for _, a in ipairs(pos) do
    if #files > 0 and not exists(a) and math_tointeger(tonumber(a)) then n = integer(a, "N", "top")
    elseif #files > 0 and not exists(a) then event = a
    else files[#files + 1] = a end
  end
  local prof = load(files, "top")
  event = event_of(prof, event, "top")
  local function say(fmt, ...) out:write(string_format(fmt, ...), "\n") end
  say("profile  %s", prof.name)
  say("creator  %s", prof.creator or "?")
  say("command  %s", prof.cmd or "?")
  local nparts = 0
  for _ in prof:parts() do nparts = nparts + 1 end
  local totals = prof:totals()
  local cols = {}
  for _, e in ipairs(prof.events) do cols[#cols + 1] = e .. " " .. commas(totals[e]) end
  say("totals   %s", table_concat(cols, ", "))
  local nfuncs, ncalls = 0, 0
  for _ in prof:functions() do nfuncs = nfuncs + 1 end
  for _ in prof:calls() do ncalls = ncalls + 1 end
  say("size     %d functions, %d calls, %d part(s)", nfuncs, ncalls, nparts)
  for _, w in ipairs(prof:warnings()) do say("warning  %s", w) end
  local total = prof:total(event)
  say("")
  say("top %d functions by self %s", n, event)
  say("%15s %6s  %s", event, "%", "function  (file; object)")
  for _, fn in ipairs(prof:top(n, event)) do
    local v = fn:self(event)
    say("%15s %5.1f%%  %s  (%s; %s)", commas(v), total ~= 0 and 100 * v / total or 0, printable(fn.name),
      printable(fn.file or "?"), printable(fn.object or "?"))
  end
end

function run.tree(argv, out)
  local opts, pos = parse("tree", argv, 2)
  if #pos < 2 then usage("a profile and a function are needed", "tree") end
  local fname = table.remove(pos)
  local prof = load(pos, "tree")
  local ev = event_of(prof, opts.event, "tree")
  local fn, err = prof:func(fname)
  if not fn then usage(string_format("function %s: %s", fname, tostring(err)), "tree") end
  local t = try("tree", fn.tree, fn, { ev = ev, direction = opts.callers and "callers" or "callees",
    depth = opts.depth and integer(opts.depth, "--depth", "tree") or nil,
    threshold = opts.threshold and number(opts.threshold, "--threshold", "tree") / 100 or nil })
  out:write(tostring(t), "\n")
end

function run.annotate(argv, out)
  local opts, pos = parse("annotate", argv, 2)
  -- with two or more names the last is the source file
  if not opts.source and #pos > 1 then opts.source = table.remove(pos) end
  local threshold = opts.threshold and number(opts.threshold, "--threshold", "annotate") or 99
  local top = opts.top and integer(opts.top, "--top", "annotate") or 50
  if opts.tree and opts.tree ~= "caller" and opts.tree ~= "callee" then
    usage("--tree takes caller or callee", "annotate")
  end
  local prof = load(pos, "annotate")
  if not opts.event and not prof.events[1] then
    out:write(prof:summary(), "\n")
    return
  end
  local ev = event_of(prof, opts.event, "annotate")
  local total = prof:total(ev)
  local kind = opts.inclusive and "inclusive" or "self"
  out:write(prof:summary(), "\n\n")
  local ranked = prof:top(top, ev, kind)
  local shown, covered = {}, 0
  for _, fn in ipairs(ranked) do
    if total ~= 0 and 100 * covered / total >= threshold then break end
    shown[#shown + 1] = fn
    covered = covered + fn:self(ev)
  end
  local sel = prof:select(shown)
  sel.event, sel.kind = ev, kind
  out:write(string_format("-- functions by %s %s\n", kind, ev), sel:report(), "\n")
  if opts.tree then
    out:write(string_format("\n-- %s of each function (inclusive %s of the calls)\n",
      opts.tree == "caller" and "callers" or "callees", ev))
    for _, fn in ipairs(shown) do
      out:write(string_format("%s  %s\n", commas(fn:inclusive(ev)), fn.name))
      local rows = (opts.tree == "caller" and fn:caller_functions() or fn:callee_functions()):sort(ev)
      for r = 1, #rows do
        out:write(string_format("    %s  %s %s (%d call%s)\n", commas(rows:cost(r, ev)),
          opts.tree == "caller" and "<-" or "->", rows[r].fn.name, rows[r].count, rows[r].count == 1 and "" or "s"))
      end
    end
  end
  if opts.source then
    out:write("\n")
    local ok, ann = pcall(prof.annotate, prof, opts.source, ev, { source = opts.root })
    if not ok then usage((tostring(ann):gsub("^.-%(", ""):gsub("%)$", "")), "annotate") end
    out:write(ann:report(), "\n")
  end
end

function run.diff(argv, out)
  local opts, pos = parse("diff", argv, 2)
  if #pos ~= 2 then usage("two profiles are needed: OLD NEW", "diff") end
  local old, new = load({ pos[1] }, "diff"), load({ pos[2] }, "diff")
  local d = callgrind.diff(old, new, { match = match_of(opts.match, "diff") })
  local ev = opts.event and event_of(new, opts.event, "diff") or nil
  out:write(try("diff", d.report, d, { event = ev, top = opts.top and integer(opts.top, "--top", "diff") or 10,
    kind = opts.inclusive and "inclusive" or nil }), "\n")
end

-- The tree of the folded stacks in path (threshold 0), or nil and why:
-- the file cannot be read, or `path:LINE: reason` for a bad line.
local function read_folded(path)
  local text, err = require("callgrind.util").read_file(path)
  if not text then return nil, err end
  local ok, tree = pcall(require("callgrind.export.stacks").read_folded, text, path, 0)
  if not ok then return nil, tree end
  return tree
end

-- flame of folded stacks: a FILE.folded given alone is drawn as its lines
-- give the stacks. (A Lua profile's own stacks beside it, FILE.folded, the
-- library's flame graph takes itself.) Returns true when it drew them.
local function flame_folded(pos, opts, fopts)
  if #pos ~= 1 or opts.old or not pos[1]:match("%.folded$") then return false end
  local file = pos[1]
  local tree, err = read_folded(file)
  if not tree then fail(err) end
  fopts.ev = opts.event
  checked(try("flame", require("callgrind.export.flame").folded_flamegraph, tree, file, opts.o, fopts))
  return true
end

function run.flame(argv)
  local opts, pos = parse("flame", argv, 2)
  local fopts = { title = opts.title, color = opts.color,
    threshold = opts.threshold and number(opts.threshold, "--threshold", "flame") or nil }
  if flame_folded(pos, opts, fopts) then return end
  local prof = load(pos, "flame")
  fopts.ev = opts.event and event_of(prof, opts.event, "flame") or nil
  if opts.old then
    local d = callgrind.diff(load({ opts.old }, "flame"), prof, { match = match_of(opts.match, "flame") })
    fopts.color = nil
    checked(try("flame", d.write_flamegraph, d, opts.o, nil, fopts))
  else
    checked(try("flame", prof.write_flamegraph, prof, opts.o, nil, fopts))
  end
end

function run.dot(argv, out)
  local opts, pos = parse("dot", argv, 2)
  local prof = load(pos, "dot")
  local ev = event_of(prof, opts.event, "dot")
  local dopts = { root = opts.root, leaf = opts.leaf,
    depth = opts.depth and integer(opts.depth, "--depth", "dot") or nil,
    node_threshold = opts["node-threshold"] and number(opts["node-threshold"], "--node-threshold", "dot") or nil,
    edge_threshold = opts["edge-threshold"] and number(opts["edge-threshold"], "--edge-threshold", "dot") or nil }
  if not opts.o then
    out:write(try("dot", prof.dot, prof, ev, dopts))
    return
  end
  dopts.format = opts.o:match("%.svg$") and "svg" or opts.o:match("%.png$") and "png" or "dot"
  checked(try("dot", prof.write_dot, prof, opts.o, ev, dopts))
end

local function list_of(s)
  local t = {}
  for item in s:gmatch("[^,]+") do t[#t + 1] = item end
  return t
end

function run.pprof(argv, _, err)
  local opts, pos = parse("pprof", argv, 2)
  local prof = load(pos, "pprof")
  local events
  if opts.events then
    events = list_of(opts.events)
    for _, ev in ipairs(events) do event_of(prof, ev, "pprof") end
  end
  local threshold = opts.threshold and number(opts.threshold, "--threshold", "pprof") or nil
  checked(try("pprof", prof.write_pprof, prof, opts.o, { events = events, threshold = threshold }))
  local stacks = require "callgrind.export.stacks"
  for _, ev in ipairs(events or prof.events) do
    err:write(string_format("callgrind-lua pprof: %s: %s\n", ev, stacks.describe(prof, ev, threshold, true)))
  end
end

function run.folded(argv, out, err)
  local opts, pos = parse("folded", argv, 2)
  local prof = load(pos, "folded")
  local ev = event_of(prof, opts.event, "folded")
  local threshold = opts.threshold and number(opts.threshold, "--threshold", "folded") or nil
  emit(try("folded", prof.folded, prof, ev, { threshold = threshold }), opts.o, out)
  err:write(string_format("callgrind-lua folded: %s: %s\n", ev,
    require("callgrind.export.stacks").describe(prof, ev, threshold)))
end

function run.csv(argv, out)
  local opts, pos = parse("csv", argv, 2)
  local prof = load(pos, "csv")
  local events = opts.events and list_of(opts.events) or nil
  for _, ev in ipairs(events or {}) do event_of(prof, ev, "csv") end
  local method = opts.json and "to_json" or "to_csv"
  local text
  if opts.by then
    if opts.by ~= "file" and opts.by ~= "object" then usage("--by takes file or object", "csv") end
    local groups = prof:group(opts.by, events and events[1] or nil)
    text = groups[method](groups)
  else
    local ev = events and events[1] or prof.events[1]
    local sel = opts.top and prof:top(integer(opts.top, "--top", "csv"), ev) or prof:all()
    text = sel[method](sel, { events = events })
  end
  emit(text, opts.o, out)
end

function run.check(argv, out)
  local opts, pos = parse("check", argv, 2)
  if #pos ~= 3 then usage("a limits file and two profiles are needed: LIMITS OLD NEW", "check") end
  local chunk, err = loadfile(pos[1], "t", {})
  if not chunk then fail(err) end
  local ok, limits = pcall(chunk)
  if not ok then fail(string_format("%s: %s", pos[1], tostring(limits))) end
  if type(limits) ~= "table" then fail(string_format("%s: returns %s, a table of limits expected", pos[1],
    type(limits))) end
  local old, new = load({ pos[2] }, "check"), load({ pos[3] }, "check")
  local passed, msg = try("check", callgrind.check_no_regression, old, new, limits,
    { top = opts.top and integer(opts.top, "--top", "check") or nil, match = match_of(opts.match, "check") })
  out:write(msg, "\n")
  if not passed then return nil, 1 end
end

--- Runs one command line.
-- @tparam table argv the arguments (without the program name)
-- @param[opt] out where output goes (default io.stdout; anything with
--   `write`)
-- @param[opt] err where messages go (default io.stderr)
-- @treturn integer the exit code: 0, 1 (a file could not be read or
--   written; `check`: a regression), 2 (a usage error)
-- @usage os.exit(cli.main({ "top", "callgrind.out.1234", "10" }))
function M.main(argv, out, err)
  out, err = out or io.stdout, err or io.stderr
  local name = argv[1]
  if name == nil or name == "--help" or name == "-h" or name == "help" then
    local text = M.help()
    if name == nil then err:write(text) return 2 end
    out:write(text)
    return 0
  end
  local cmd = run[name]
  if not cmd then
    err:write(string_format("callgrind-lua: unknown command '%s'\n", name), M.help())
    return 2
  end
  for i = 2, #argv do
    if argv[i] == "--help" or argv[i] == "-h" then
      out:write(usage_of(name))
      return 0
    end
  end
  local ok, text, code = pcall(cmd, argv, out, err)
  if ok then
    if text then out:write(text) end
    return code or 0
  end
  if out.flush then out:flush() end   -- what was printed comes before the message
  if type(text) == "table" and text.usage then
    err:write(text.usage, "\n", usage_of(text.command))
    return 2
  elseif type(text) == "table" and text.fail then
    err:write(text.fail, "\n")
    return 1
  end
  error(text, 0)
end

return M
