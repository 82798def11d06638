--- The command line, `callgrind-lua SUBCOMMAND ...` (bin/callgrind-lua):
-- its logic, callable in-process as `cli.main(argv, out, err)`.
--
-- Every FILE may be several files (one profile: threads, dumps), a
-- compressed file (gzip, zstd, xz), or the name valgrind was given: the
-- library's resolution (callgrind.model.load.open) finds its thread and
-- dump files, and refuses files of different runs unless --merge.
-- Exit codes (EXITS below): 0 done; 1 a check failed or an input was bad;
-- 2 a usage error. Thresholds are percentages everywhere: `--threshold
-- 0.5` is 0.5%.
--
-- What reaches a terminal (util.terminal): the text commands (top, tree,
-- hot, annotate, diff, check, spread) and every message on stderr show
-- control bytes, bytes that are not UTF-8, C1 controls and the
-- bidirectional controls as `\xHH` and `\u{HHHH}` wherever their output
-- goes; the data commands (folded, csv, dot, and -o - of flame, report)
-- write their format's bytes unchanged to a file or a pipe, and escaped
-- so when standard output is a terminal; pprof -o - refuses a terminal.
-- @module callgrind.cli
local callgrind = require "callgrind"
local report = require "callgrind.model.report"

local ipairs, pcall, tonumber, tostring = ipairs, pcall, tonumber, tostring
local math_tointeger, string_format, table_concat = math.tointeger, string.format, table.concat

local M = {}

local commas = report.commas

-- The one declaration of the command line: each command's usage line,
-- what it does, its options (a name to "value", "flag" or "list"; `o` is
-- -o, and `output` says -o is needed) and their help (`more`); `loads`
-- false for a command that reads no profile (no --merge, --lenient).
-- `--help`, `COMMAND --help` and docs/cli.md (`make docs`,
-- tools/gen_docs.lua) are made from it.
local FN_OPTS = "  FUNCTION is NAME, FILE:NAME or OBJECT:NAME (or NAME with --file FILE / --object OBJECT)"
local PCT = "thresholds are percentages: --threshold 0.5 means 0.5%"
local COMMANDS = {
  top = { args = "FILE... [N] [EVENT]", what = "summary and the top N functions by self cost (default 15)",
    opts = { inclusive = "flag", raw = "flag", event = "value", threshold = "value" },
    more = "  --inclusive  rank by inclusive cost  --raw  only the rows, tab-separated, plain numbers (for pipes)\n"
      .. "  --threshold PCT  leave out functions below PCT% of the total (default 0)" },
  tree = { args = "FILE... FUNCTION", what = "the call tree below a function (or above it with --callers)",
    opts = { event = "value", depth = "value", threshold = "value", callers = "flag", callees = "flag",
      file = "value", object = "value" },
    more = "  --event EV  --depth N (default 3)  --callers | --callees (default)\n"
      .. "  --threshold PCT  leave out entries below PCT% of the function's inclusive cost (default 1)\n"
      .. "  [N calls, more past depth N]: the tree goes on below that entry; raise --depth to see it\n" .. FN_OPTS },
  hot = { args = "FILE... FUNCTION", what = "a function's hottest source lines and call sites",
    opts = { event = "value", top = "value", raw = "flag", file = "value", object = "value", threshold = "value" },
    more = "  --event EV  --top N (default 10)  --raw  tab-separated, plain numbers\n"
      .. "  --threshold PCT  leave out lines below PCT% of the total (default 0)\n" .. FN_OPTS },
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
      "  --root DIR            find the source file under DIR (default: as the profile names it, then",
      "                        beside FILE); its text is shown beside the costs when it can be read" }, "\n") },
  diff = { args = "OLD NEW", what = "totals and the functions that changed most",
    opts = { event = "value", top = "value", inclusive = "flag", match = "value" },
    more = "  --event EV (ranks the movers)  --top N (default 10)  --inclusive\n"
      .. "  --match name|name+file|name+file+object (default; each run's program counts as one object)" },
  flame = { args = "FILE... -o OUT.svg", output = "OUT.svg",
    what = "an interactive SVG flame graph (--old FILE: a differential one; FILE.folded: folded stacks)",
    opts = { o = "value", event = "value", threshold = "value", title = "value", old = "value", color = "value",
      match = "value" },
    more = "  --event EV  --threshold PCT (default 0.01: frames below 0.01% left out)  --title T\n"
      .. "  --color object|file  --old FILE  --match KEY (as diff's)  -o - writes to standard output" },
  dot = { args = "FILE... -o OUT.svg|OUT.png|OUT.dot", what = "a call graph (Graphviz; DOT text to stdout without -o)",
    opts = { o = "value", event = "value", root = "value", leaf = "value", depth = "value",
      ["node-threshold"] = "value", ["edge-threshold"] = "value", file = "value", object = "value" },
    more = "  --event EV  --root FUNCTION  --leaf FUNCTION  --depth N\n"
      .. "  --node-threshold PCT (default 0.5)  --edge-threshold PCT (default 0.1): shares of the total, in percent\n"
      .. FN_OPTS },
  pprof = { args = "FILE... -o OUT.pb.gz", output = "OUT.pb.gz",
    what = "pprof's profile.proto, for go tool pprof and others",
    opts = { o = "value", events = "value", threshold = "value" },
    more = "  --events EV,EV (default: all base events)  -o - to standard output\n"
      .. "  --threshold PCT (default: every exact stack; an estimate's stacks below 0.01% not made, those\n"
      .. "                 below 0.001% pruned into [pruned];FUNCTION or the function's larger stacks;\n"
      .. "                 0: the whole estimate)" },
  folded = { args = "FILE...", what = "folded stacks (flamegraph.pl, speedscope, inferno) to stdout or -o",
    opts = { o = "value", event = "value", threshold = "value" },
    more = "  --event EV  -o OUT\n"
      .. "  --threshold PCT (default 0.01; an estimate's stacks below 0.001%, or PCT if smaller, pruned into\n"
      .. "                 [pruned];FUNCTION or the function's larger stacks; 0: the whole estimate)\n"
      .. "  FILE with its stack record FILE.stacks (CALLGRIND_STACKS=1), or FILE.stacks itself, without --threshold:\n"
      .. "  every recorded stack, in the order the profiler made them" },
  csv = { args = "FILE...", what = "every function's self and inclusive costs as CSV (--json: JSON)",
    opts = { o = "value", events = "value", top = "value", json = "flag", by = "value" },
    more = "  --events EV,EV  --top N (by the first event's self cost)  --by file|object (grouped)  --json  -o OUT" },
  report = { args = "FILE... [--old FILE...] -o report.html", output = "report.html",
    what = "one self-contained HTML report (a diff with --old): table, flame graph, callers, callees, lines",
    opts = { o = "value", old = "list", title = "value", threshold = "value", root = "value" },
    more = "  --old FILE (repeat it for several files of the old run)  --title T  --root DIR (sources)\n"
      .. "  --threshold PCT (default 0.05: flame frames below 0.05% left out)  -o - writes to standard output" },
  check = { args = "LIMITS OLD NEW", what = "checks NEW against OLD with a limits file; exit 1 on a regression",
    opts = { top = "value", match = "value" },
    more = "  --match name|name+file|name+file+object (as diff's)\n"
      .. "  LIMITS is a Lua file returning a table of limits, e.g. return { Ir = \"5%\", functions = { parse = "
      .. "{ Ir = \"2%\" } } }\n"
      .. "  a limits file that is not Lua, returns no table, has a bad limit or names an event neither profile has\n"
      .. "  is a usage error (2)" },
  exec = { args = "SCRIPT.lua [ARG...]", opts = {}, loads = false,
    what = "runs a script under the counting interpreter (make vm) and writes its profile (as -lcallgrind.start)",
    more = "  the interpreter: $CALLGRIND_VM, else callgrind-lua5.4 beside this command (make install puts it\n"
      .. "  there) or in this checkout's build/bin, else callgrind-lua5.4 on PATH; CALLGRIND_OUT and the\n"
      .. "  other variables of -lcallgrind.start apply" },
  spread = { args = "[--lua LUA] [--top N] N SCRIPT [ARGS...]", opts = { lua = "value", top = "value" }, loads = false,
    what = "a Lua script profiled in N fresh processes: min, max and the functions that vary",
    more = "  --lua LUA (default lua5.4)  --top N (functions listed, default 10); size a tolerance from the spread" },
  history = { args = "add|show|changes|report|export [ARGS]", loads = false,
    what = "the history store: runs by commit, the commits where a series stepped, the trend page, BMF",
    opts = { store = "value", commit = "value", branch = "value", machine = "value", time = "value",
      label = "value", spread = "value", baseline = "value", series = "value", tolerance = "value", o = "value",
      format = "value", title = "value" },
    more = table_concat({
      "  history add FILE | --baseline NAME   a record of checks (CALLGRIND_RECORD) or a profile, or a baseline:",
      "      --commit C --branch B --machine M --time T (default: CI variables, git, $CALLGRIND_MACHINE, uname -n)",
      "      --label L (a profile's series names)  --spread PCT (Lua counts that vary: their measured spread)",
      "  history show NAME                    a series, one line a commit",
      "  history changes                      the commits where a series stepped: commit, before -> after, share",
      "      --series PATTERN (a Lua pattern)  --tolerance PCT (default 0: any change)",
      "  history report -o trend.html         the trend page: a chart per series, steps marked",
      "  history export --format bmf [-o OUT] a run as Bencher Metric Format JSON (--commit C, default the latest)",
      "  every subcommand: --store URL (default $CALLGRIND_HISTORY, else callgrind-history.db; sqlite:PATH,",
      "      postgresql://...)  --branch B  --machine M (show, changes, report, export: only that line)" }, "\n") },
}
-- the options of every command that reads profiles
local LOAD_OPTS = { merge = "flag", lenient = "flag" }
local LOAD_MORE = "  --merge  sum files of different runs\n"
  .. "  --lenient  skip a bad line (each one a warning, shown by top) instead of failing"
for _, c in pairs(COMMANDS) do
  if c.loads ~= false then
    for k, v in pairs(LOAD_OPTS) do c.opts[k] = v end
  end
end
local ORDER = { "top", "tree", "hot", "annotate", "diff", "flame", "dot", "pprof", "folded", "csv", "report", "check",
  "exec", "spread", "history" }

-- The environment variables the command line reads (beside those of
-- -lcallgrind.start, docs/profiling-lua.md).
local ENV = {
  { "CALLGRIND_VM", "exec: the counting interpreter to run (default: callgrind-lua5.4 beside callgrind-lua, in "
    .. "this checkout's build/bin, or on PATH)" },
  { "CALLGRIND_OUT", "exec: the profile's file (default callgrind.out.<pid>), as for -lcallgrind.start" },
  { "CALLGRIND_HISTORY", "history: the store (a file, sqlite:PATH or postgresql://...; default callgrind-history.db)" },
  { "CALLGRIND_MACHINE", "history add: the machine's name (default uname -n)" },
  { "CALLGRIND_LUA_RANDOM_SEED", "exec: 1 gives the counting interpreter Lua's random string-hash seed back "
    .. "(unset, empty, 0 or anything but 1: a fixed seed, the same pairs order in every run)" },
}

local EXIT = "exit status: 0 done, 1 a check failed or an input was bad, 2 a usage error"
-- What each exit status means, in full (docs/cli.md).
local EXITS = {
  { 0, "done" },
  { 1, "a check failed (`check` found a regression) or an input was bad: a file missing, unreadable, a directory, "
    .. "empty, not a profile (a bad line without --lenient), or of two runs without --merge; a limits file that "
    .. "cannot be read; an output that could not be written" },
  { 2, "a usage error: an unknown command or option, a bad value, a function name that is not found or is "
    .. "ambiguous, an unknown event; a limits file that is not Lua, returns no table, holds a limit that means "
    .. "nothing or names an event neither profile has" },
}

-- Whether a command takes a percentage.
local function takes_percent(c)
  return c.opts.threshold or c.opts["node-threshold"]
end

local function usage_of(name)
  local c = COMMANDS[name]
  return string_format("usage: callgrind-lua %s %s\n  %s%s%s\n  %s%s\n",
    name, c.args, c.what, c.more and ("\n" .. c.more) or "", c.loads ~= false and ("\n" .. LOAD_MORE) or "",
    takes_percent(c) and (PCT .. "; ") or "", EXIT)
end

--- The usage of one command, as `callgrind-lua COMMAND --help` prints it.
-- @usage print(cli.usage("top"))
M.usage = usage_of

--- The commands, in the order of the help.
-- @usage for _, name in ipairs(cli.commands()) do print(cli.usage(name)) end
function M.commands()
  return table.move(ORDER, 1, #ORDER, 1, {})
end

--- The environment variables the command line reads: a list of
-- `{ name, meaning }`.
-- @usage for _, v in ipairs(cli.environment()) do print(v[1]) end
function M.environment()
  local t = {}
  for i, v in ipairs(ENV) do t[i] = { v[1], v[2] } end
  return t
end

--- What each exit status means: a list of `{ status, meaning }`.
-- @usage for _, e in ipairs(cli.exit_statuses()) do print(e[1], e[2]) end
function M.exit_statuses()
  local t = {}
  for i, e in ipairs(EXITS) do t[i] = { e[1], e[2] } end
  return t
end

--- The general help text.
-- @usage print(cli.help())
function M.help()
  local out = { "usage: callgrind-lua COMMAND [ARGS] (callgrind-lua COMMAND --help for one)", "" }
  for _, name in ipairs(ORDER) do
    local c = COMMANDS[name]
    -- a usage too long for its column puts what it does on a line of its own
    local sep = #c.args > 34 and ("\n" .. string.rep(" ", 47)) or " "
    out[#out + 1] = string_format("  %-9s %-34s%s%s", name, c.args, sep, c.what)
  end
  out[#out + 1] = ""
  out[#out + 1] = "A FILE may be several files of one run, compressed (gzip, zstd, xz), or the name valgrind"
  out[#out + 1] = "was given: its thread and dump files are found (an empty one is skipped), whether or not the"
  out[#out + 1] = "name itself exists. Files of different runs (pid: or cmd: differ) are refused; --merge sums them."
  out[#out + 1] = "--lenient skips a bad line of a FILE (each one a warning) instead of failing."
  out[#out + 1] = "A FUNCTION is NAME, FILE:NAME or OBJECT:NAME (or --file/--object); " .. PCT .. "."
  out[#out + 1] = "-o - writes to standard output. " .. EXIT .. "."
  out[#out + 1] = ""
  out[#out + 1] = "environment:"
  for _, v in ipairs(ENV) do out[#out + 1] = string_format("  %-26s %s", v[1], v[2]) end
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
      elseif kind == "list" then
        if not val then
          i = i + 1
          val = argv[i] or usage("missing value for " .. a, name)
        end
        opts[key] = opts[key] or {}
        opts[key][#opts[key] + 1] = val
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

local printable, terminal = require("callgrind.util").printable, require("callgrind.util").terminal

local function checked(ok, err)
  if not ok then fail(err) end
end

-- A percentage option: a number in [0, 100), as a fraction.
local function percent(v, what, name)
  local n = tonumber(v)
  if not n or n ~= n or n < 0 or n >= 100 then
    usage(string_format("%s takes a percentage from 0 to under 100 (0.5 means 0.5%%), got '%s'", what, v), name)
  end
  return n / 100
end

local util = require "callgrind.util"
local exists = util.file_exists
local loader = require "callgrind.model.load"

-- Loads the profile of some names through the library's own resolution
-- (callgrind.model.load.open: a name is its run's thread and dump files;
-- files of different runs only with --merge; bad lines skipped with
-- --lenient).
local function load(files, name, opts)
  if #files == 0 then usage("no profile given", name) end
  local prof, list = loader.open(files, { merge = opts and opts.merge or nil, lenient = opts and opts.lenient or nil })
  if not prof then fail(list) end
  -- titles and messages name the profile as the user did (slow.out, not
  -- the first of its files slow.out-01)
  local given = table_concat(files, " ")
  if given ~= prof.name then util.show_name(prof, given) end
  return prof, list
end

-- Does a function's file or object name this place (the whole path, or
-- its last components)?
local function at_place(fn, place)
  local function m(s) return s ~= nil and (s == place or s:sub(-#place - 1) == "/" .. place) end
  return m(fn.file) or m(fn.object)
end

-- How the command line names a function among others of its name:
-- FILE:NAME, or OBJECT:NAME when the file does not tell them apart.
local function label_of(fn, others)
  local same = 0
  for _, o in ipairs(others) do if o.file == fn.file then same = same + 1 end end
  local place = (same > 1 or not fn.file) and fn.object or fn.file
  return (place or "?") .. ":" .. fn.name
end

-- The function a command names: NAME, FILE:NAME or OBJECT:NAME, narrowed
-- by --file and --object. Not found or ambiguous is a usage error; an
-- ambiguous name lists the choices in that syntax.
local function find_function(prof, spec, opts, name, what)
  what = what or "function"
  local cands = {}
  local function keep(fn)
    if opts.file and not (fn.file and (fn.file == opts.file or fn.file:sub(-#opts.file - 1) == "/" .. opts.file)) then
      return
    end
    if opts.object and not (fn.object and (fn.object == opts.object
      or fn.object:sub(-#opts.object - 1) == "/" .. opts.object)) then
      return
    end
    cands[#cands + 1] = fn
  end
  for fn in prof:functions() do
    if fn.name == spec then keep(fn) end
  end
  if #cands == 0 then
    -- FILE:NAME or OBJECT:NAME: a single colon (C++'s :: is part of a name)
    local i = 0
    while true do
      i = spec:find(":", i + 1, true)
      if not i then break end
      if spec:sub(i - 1, i - 1) ~= ":" and spec:sub(i + 1, i + 1) ~= ":" and i > 1 and i < #spec then
        local place, fname = spec:sub(1, i - 1), spec:sub(i + 1)
        for fn in prof:functions() do
          if fn.name == fname and at_place(fn, place) then keep(fn) end
        end
        if #cands > 0 then break end
      end
    end
  end
  if #cands == 1 then return cands[1] end
  if #cands == 0 then
    local _, err = prof:func(spec)
    if opts.file or opts.object then
      err = string_format("not found: no function named '%s' in %s", printable(spec),
        printable(opts.file or opts.object))
    end
    usage(string_format("%s %s: %s", what, printable(spec), terminal(tostring(err))), name)
  end
  local labels = {}
  for k, fn in ipairs(cands) do
    if k > 10 then labels[#labels + 1] = "..." break end
    labels[#labels + 1] = printable(label_of(fn, cands))
  end
  usage(string_format("%s %s is ambiguous: %d functions of that name; give one of: %s "
    .. "(or --file FILE, --object OBJECT)",
    what, printable(spec), #cands, table_concat(labels, ", ")), name)
end

-- Writes an output through writer(path): to a file, or, for "-", to out
-- (by way of a temporary file the writer fills).
local function write_out(path, out, writer)
  if path ~= "-" then
    checked(writer(path))
    return
  end
  local tmp = os.tmpname()
  local ok, err = writer(tmp)
  if ok then
    local text
    text, err = require("callgrind.util").read_file(tmp)
    if text then out:write(text) end
    ok = text ~= nil
  end
  os.remove(tmp)
  if not ok then fail(err) end
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
  if path and path ~= "-" then
    local ok, err = require("callgrind.util").write_file(path, text)
    if not ok then fail(err) end
  else
    out:write(text)
  end
end


-- Raises a library argument error as a usage error (a bad threshold).
local function try(name, f, ...)
  local res = table.pack(pcall(f, ...))
  if not res[1] then
    local e = res[2]
    if type(e) == "table" then error(e, 0) end
    local msg = tostring(e)
    usage(msg:match("bad argument #%d+ to '[^']*' %((.*)%)$") or msg:gsub("^[^:]*:%d+: ", ""), name)
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
  local opts, pos = parse("top", argv, 2)
  local files, n, event = {}, 15, opts.event
  for _, a in ipairs(pos) do
    if #files > 0 and not exists(a) and math_tointeger(tonumber(a)) then n = integer(a, "N", "top")
    elseif #files > 0 and not exists(a) then event = a
    else files[#files + 1] = a end
  end
  local threshold = opts.threshold and percent(opts.threshold, "--threshold", "top") or 0
  local prof, list = load(files, "top", opts)
  event = event_of(prof, event, "top")
  local kind = opts.inclusive and "inclusive" or "self"
  local total = prof:total(event)
  local function cost(fn) return kind == "inclusive" and fn:inclusive(event) or fn:self(event) end
  -- the top n, without those below the threshold's share of the total
  local ranked = {}
  for _, fn in ipairs(prof:top(n, event, kind)) do
    if threshold == 0 or cost(fn) >= threshold * total then ranked[#ranked + 1] = fn end
  end
  if opts.raw then
    for _, fn in ipairs(ranked) do
      local v = cost(fn)
      out:write(string_format("%d\t%.2f\t%s\t%s\t%s\n", v, total ~= 0 and 100 * v / total or 0, printable(fn.name),
        printable(fn.file or ""), printable(fn.object or "")))
    end
    return
  end
  local function say(fmt, ...) out:write(string_format(fmt, ...), "\n") end
  -- the names as given, and how many files they stood for
  say("profile  %s%s", printable(table_concat(files, " ")), #list > 1 and string_format(" (%d files)", #list) or "")
  say("creator  %s", printable(prof.creator or "?"))
  say("command  %s", printable(prof.cmd or "?"))
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
  local merged = loader.merged(prof)
  if merged then say("merged   %s", printable(merged)) end
  -- callgrind's summary: a few counts above its cost lines is a note,
  -- not a warning (docs/format.md)
  local show = require "callgrind.model.show"
  local warnings, notes = show.notable_warnings(prof)
  for _, w in ipairs(warnings) do say("warning  %s", printable(tostring(w))) end
  for _, w in ipairs(notes) do say("note     %s", printable(tostring(w))) end
  say("")
  say("top %d functions by %s %s%s", n, kind, event,
    threshold > 0 and string_format(", from %g%% of the total", threshold * 100) or "")
  -- a Lua profile's functions have no object
  local lua = show.is_lua(prof)
  say("%15s %6s  %s", event, "%", lua and "function  (file)" or "function  (file; object)")
  for _, fn in ipairs(ranked) do
    local v = cost(fn)
    local place = lua and printable(fn.file or "?")
      or printable(fn.file or "?") .. "; " .. printable(fn.object or "?")
    say("%15s %5.1f%%  %s  (%s)", commas(v), total ~= 0 and 100 * v / total or 0, printable(fn.name), place)
  end
end

function run.tree(argv, out)
  local opts, pos = parse("tree", argv, 2)
  if #pos < 2 then usage("a profile and a function are needed", "tree") end
  if opts.callers and opts.callees then usage("--callers or --callees, not both", "tree") end
  local fname = table.remove(pos)
  local threshold = opts.threshold and percent(opts.threshold, "--threshold", "tree") or nil
  local depth = opts.depth and integer(opts.depth, "--depth", "tree") or nil
  local prof = load(pos, "tree", opts)
  local ev = event_of(prof, opts.event, "tree")
  local fn = find_function(prof, fname, opts, "tree")
  -- the threshold is a share of the function asked about
  local t = try("tree", fn.tree, fn, ev, { direction = opts.callers and "callers" or "callees",
    depth = depth, threshold = threshold, relative = true })
  out:write(tostring(t), "\n")
end

-- A function's lines and call sites, hottest first: rows { file, line,
-- self, calls = { { name, count, cost } }, cost } (cost: self plus the
-- inclusive cost of the calls made there).
local function hot_rows(fn, ev)
  local by, rows = {}, {}
  local function row(file, line)
    local key = (file or "?") .. "\0" .. tostring(line or 0)
    local r = by[key]
    if not r then
      r = { file = file, line = line, self = 0, calls = {}, callees = {}, cost = 0 }
      by[key] = r
      rows[#rows + 1] = r
    end
    return r
  end
  for l in fn:lines() do
    local r = row(l.file, l.line)
    local c = l:cost(ev)
    r.self, r.cost = r.self + c, r.cost + c
  end
  for call in fn:calls() do
    local r = row(call.file or fn.file, call.line)
    local c = call:cost(ev)
    r.cost = r.cost + c
    local e = r.callees[call.callee]
    if not e then
      e = { fn = call.callee, count = 0, cost = 0 }
      r.callees[call.callee] = e
      r.calls[#r.calls + 1] = e
    end
    e.count, e.cost = e.count + call.count, e.cost + c
  end
  table.sort(rows, function(a, b)
    if a.cost ~= b.cost then return a.cost > b.cost end
    if (a.file or "") ~= (b.file or "") then return (a.file or "") < (b.file or "") end
    return (a.line or 0) < (b.line or 0)
  end)
  for _, r in ipairs(rows) do
    table.sort(r.calls, function(a, b)
      if a.cost ~= b.cost then return a.cost > b.cost end
      return a.fn.index < b.fn.index
    end)
  end
  return rows
end

function run.hot(argv, out)
  local opts, pos = parse("hot", argv, 2)
  if #pos < 2 then usage("a profile and a function are needed", "hot") end
  local fname = table.remove(pos)
  local top = opts.top and integer(opts.top, "--top", "hot") or 10
  local threshold = opts.threshold and percent(opts.threshold, "--threshold", "hot") or 0
  local prof = load(pos, "hot", opts)
  local ev = event_of(prof, opts.event, "hot")
  local fn = find_function(prof, fname, opts, "hot")
  local incl = fn:inclusive(ev)
  local rows = hot_rows(fn, ev)
  -- a share of the profile's total, as in top: a line's cost holds the
  -- calls made there, and a recursive call's cost is also inside the
  -- function's own inclusive cost, so a share of that could pass 100%
  local total = prof:total(ev)
  local function pct(v) return total ~= 0 and 100 * v / total or 0 end
  -- hottest first: the lines below the threshold are the last ones
  local all = #rows
  while threshold > 0 and rows[#rows] and rows[#rows].cost < threshold * total do rows[#rows] = nil end
  if opts.raw then
    for i = 1, math.min(top, #rows) do
      local r = rows[i]
      local calls = {}
      for _, c in ipairs(r.calls) do calls[#calls + 1] = string_format("%s(%d)", printable(c.fn.name), c.count) end
      out:write(string_format("%d\t%.2f\t%d\t%s\t%s\t%s\n", r.cost, pct(r.cost), r.self, printable(r.file or ""),
        r.line and tostring(r.line) or "", table_concat(calls, ",")))
    end
    return
  end
  out:write(string_format("hottest lines of %s (%s; %s): self %s, inclusive %s %s (%% of the total %s)\n",
    printable(fn.name), printable(fn.file or "?"), printable(fn.object or "?"), commas(fn:self(ev)), commas(incl), ev,
    commas(total)))
  out:write(string_format("%15s %6s %15s  %s\n", ev, "%", "self", "line  (calls made there)"))
  for i = 1, math.min(top, #rows) do
    local r = rows[i]
    local calls = {}
    for _, c in ipairs(r.calls) do
      calls[#calls + 1] = string_format("%s %s (%s call%s)", printable(c.fn.name), commas(c.cost), commas(c.count),
        c.count == 1 and "" or "s")
    end
    out:write(string_format("%15s %5.1f%% %15s  %s:%s%s\n", commas(r.cost), pct(r.cost), commas(r.self),
      printable(r.file or "?"), r.line and tostring(r.line) or "?",
      #calls > 0 and ("  -> " .. table_concat(calls, ", ")) or ""))
  end
  if #rows > top then out:write(string_format("(%d more line%s)\n", #rows - top, #rows - top == 1 and "" or "s")) end
  if all > #rows then
    local n = all - #rows
    out:write(string_format("(%d line%s below %g%% of the total left out)\n", n, n == 1 and "" or "s", threshold * 100))
  end
end

function run.annotate(argv, out)
  local opts, pos = parse("annotate", argv, 2)
  -- with two or more names the last is the source file
  if not opts.source and #pos > 1 then opts.source = table.remove(pos) end
  local threshold = opts.threshold and number(opts.threshold, "--threshold", "annotate") or 99
  if threshold < 0 or threshold > 100 then
    usage(string_format("--threshold takes a percentage from 0 to 100, got '%s'", opts.threshold), "annotate")
  end
  local top = opts.top and integer(opts.top, "--top", "annotate") or 50
  if opts.tree and opts.tree ~= "caller" and opts.tree ~= "callee" then
    usage("--tree takes caller or callee", "annotate")
  end
  local prof = load(pos, "annotate", opts)
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
      out:write(string_format("%s  %s\n", commas(fn:inclusive(ev)), printable(fn.name)))
      local rows = (opts.tree == "caller" and fn:caller_functions() or fn:callee_functions()):sort(ev)
      for r = 1, #rows do
        out:write(string_format("    %s  %s %s (%d call%s)\n", commas(rows:cost(r, ev)),
          opts.tree == "caller" and "<-" or "->", printable(rows[r].fn.name), rows[r].count,
          rows[r].count == 1 and "" or "s"))
      end
    end
  end
  if opts.source then
    out:write("\n")
    -- the source text beside the costs, as callgrind_annotate shows it:
    -- the file found under --root, else as the profile names it, else
    -- beside the profile (a relative name is the program's directory's)
    local ok, ann = pcall(prof.annotate, prof, opts.source, ev, { source = opts.root or true })
    if not ok then usage((tostring(ann):gsub("^.-%(", ""):gsub("%)$", "")), "annotate") end
    if ann.source_error and not opts.root then
      local beside = prof:annotate(opts.source, ev, { source = util.dirname(pos[1]) })
      if not beside.source_error then ann = beside end
    end
    out:write(ann:report(), "\n")
  end
end

function run.diff(argv, out)
  local opts, pos = parse("diff", argv, 2)
  if #pos ~= 2 then usage("two profiles are needed: OLD NEW", "diff") end
  local old, new = load({ pos[1] }, "diff", opts), load({ pos[2] }, "diff", opts)
  local d = callgrind.diff(old, new, { match = match_of(opts.match, "diff") })
  local ev = opts.event and event_of(new, opts.event, "diff") or nil
  out:write(try("diff", d.report, d, { event = ev, top = opts.top and integer(opts.top, "--top", "diff") or 10,
    kind = opts.inclusive and "inclusive" or nil }), "\n")
  -- the profiles as check names them, by the names given
  out:write("old: ", printable(util.name_of(old)), "\nnew: ", printable(util.name_of(new)), "\n")
end

-- The tree of the folded stacks in path, pruned at threshold (read in C,
-- a piece at a time: stacks.read_folded_file), or nil and why: the file
-- cannot be read, or `path:LINE: reason` for a bad line.
local function read_folded(path, threshold)
  local ok, tree, err = pcall(require("callgrind.export.stacks").read_folded_file, path, threshold)
  if not ok then return nil, tree end
  return tree, err
end

-- flame of folded stacks: a FILE.folded given alone is drawn as its lines
-- give the stacks. (A Lua profile's own stacks beside it, FILE.folded, the
-- library's flame graph takes itself.) Returns true when it drew them.
local function flame_folded(pos, opts, fopts, out)
  if #pos ~= 1 or opts.old or not pos[1]:match("%.folded$") then return false end
  local file = pos[1]
  local tree, err = read_folded(file, fopts.threshold)
  if not tree then fail(err) end
  fopts.ev = opts.event
  write_out(opts.o, out, function(path)
    return try("flame", require("callgrind.export.flame").folded_flamegraph, tree, file, path, fopts)
  end)
  return true
end

function run.flame(argv, out)
  local opts, pos = parse("flame", argv, 2)
  if opts.color and opts.color ~= "object" and opts.color ~= "file" then
    usage("--color takes object or file", "flame")
  end
  local fopts = { title = opts.title, color = opts.color,
    threshold = opts.threshold and percent(opts.threshold, "--threshold", "flame") or nil }
  if flame_folded(pos, opts, fopts, out) then return end
  local prof = load(pos, "flame", opts)
  fopts.ev = opts.event and event_of(prof, opts.event, "flame") or nil
  if opts.old then
    local d = callgrind.diff(load({ opts.old }, "flame", opts), prof, { match = match_of(opts.match, "flame") })
    fopts.color = nil
    write_out(opts.o, out, function(path) return try("flame", d.write_flamegraph, d, path, nil, fopts) end)
  else
    write_out(opts.o, out, function(path) return try("flame", prof.write_flamegraph, prof, path, nil, fopts) end)
  end
end

function run.dot(argv, out)
  local opts, pos = parse("dot", argv, 2)
  local dopts = { depth = opts.depth and integer(opts.depth, "--depth", "dot") or nil,
    node_threshold = opts["node-threshold"] and percent(opts["node-threshold"], "--node-threshold", "dot") or nil,
    edge_threshold = opts["edge-threshold"] and percent(opts["edge-threshold"], "--edge-threshold", "dot") or nil }
  local prof = load(pos, "dot", opts)
  local ev = event_of(prof, opts.event, "dot")
  dopts.root = opts.root and find_function(prof, opts.root, opts, "dot", "--root") or nil
  dopts.leaf = opts.leaf and find_function(prof, opts.leaf, opts, "dot", "--leaf") or nil
  if not opts.o or opts.o == "-" then
    out:write(try("dot", prof.dot, prof, ev, dopts))
    return
  end
  dopts.format = opts.o:match("%.svg$") and "svg" or opts.o:match("%.png$") and "png" or "dot"
  write_out(opts.o, out, function(path) return try("dot", prof.write_dot, prof, path, ev, dopts) end)
end

local function list_of(s)
  local t = {}
  for item in s:gmatch("[^,]+") do t[#t + 1] = item end
  return t
end

function run.pprof(argv, out, err)
  local opts, pos = parse("pprof", argv, 2)
  if opts.o == "-" and out.terminal then
    fail("callgrind-lua pprof: not writing compressed data to a terminal (-o FILE, or -o - into a pipe)")
  end
  local prof = load(pos, "pprof", opts)
  local events
  if opts.events then
    events = list_of(opts.events)
    for _, ev in ipairs(events) do event_of(prof, ev, "pprof") end
  end
  local threshold = opts.threshold and percent(opts.threshold, "--threshold", "pprof") or nil
  write_out(opts.o, out, function(path)
    return try("pprof", prof.write_pprof, prof, path, { events = events, threshold = threshold })
  end)
  local stacks = require "callgrind.export.stacks"
  for _, ev in ipairs(events or prof.events) do
    err:write(string_format("callgrind-lua pprof: %s: %s\n", ev, stacks.describe(prof, ev, threshold, true)))
  end
end

-- folded of a profile with its stack record and no --threshold (or of
-- the record itself, FILE.stacks): the record's folded text, every stack
-- in the order the profiler made them (what CALLGRIND_STACKS=folded
-- writes), made in C. Returns true when it wrote them.
local function folded_record(pos, opts, out, err)
  if #pos ~= 1 or opts.threshold then return false end
  local record = require "callgrind.export.stackrec"
  local path, ev = pos[1], opts.event
  if not path:match("%.stacks$") then
    local prof = load(pos, "folded", opts)
    local st = record.of(prof)
    if not st then return false end
    path, ev = st.source, event_of(prof, opts.event, "folded")
  end
  local text, why = record.folded(path, ev, opts.o ~= "-" and opts.o or nil)
  if not text then fail("callgrind-lua folded: " .. why) end
  if text ~= true then out:write(text) end
  err:write(string_format("callgrind-lua folded: %s: stacks from %s (exact, all of them)\n", ev or "the first event",
    path))
  return true
end

function run.folded(argv, out, err)
  local opts, pos = parse("folded", argv, 2)
  if folded_record(pos, opts, out, err) then return end
  local prof = load(pos, "folded", opts)
  local ev = event_of(prof, opts.event, "folded")
  local threshold = opts.threshold and percent(opts.threshold, "--threshold", "folded") or nil
  emit(try("folded", prof.folded, prof, ev, { threshold = threshold }), opts.o, out)
  err:write(string_format("callgrind-lua folded: %s: %s\n", ev,
    require("callgrind.export.stacks").describe(prof, ev, threshold)))
end

function run.csv(argv, out)
  local opts, pos = parse("csv", argv, 2)
  local prof = load(pos, "csv", opts)
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

function run.report(argv, out)
  local opts, pos = parse("report", argv, 2)
  local hopts = { title = opts.title, source_root = opts.root,
    threshold = opts.threshold and percent(opts.threshold, "--threshold", "report") or nil }
  local prof = load(pos, "report", opts)
  if opts.old then
    local d = callgrind.diff(load(opts.old, "report", opts), prof)
    write_out(opts.o, out, function(path) return try("report", d.write_html, d, path, hopts) end)
  else
    write_out(opts.o, out, function(path) return try("report", prof.write_html, prof, path, hopts) end)
  end
end

-- The limits file of check: a Lua chunk returning a table. A file that
-- cannot be read is a bad input (exit 1); one that is not Lua, raises or
-- returns no table is a usage mistake (exit 2), like a limit that means
-- nothing.
local function read_limits(path)
  local f, oerr = io.open(path, "rb")
  if not f then fail(oerr) end
  f:close()
  local chunk, err = loadfile(path, "t", {})
  if not chunk then usage(string_format("the limits file is not Lua: %s", err), "check") end
  local ok, limits = pcall(chunk)
  if not ok then usage(string_format("the limits file raised an error: %s", tostring(limits)), "check") end
  if type(limits) ~= "table" then
    usage(string_format("%s: returns %s, a table of limits expected", path, type(limits)), "check")
  end
  return limits
end

-- The event of list closest to a misspelt one: the same but for case,
-- else one containing it or contained in it (the nearest length), or nil.
local function closest_event(name, list)
  local low, best, gap = name:lower(), nil, math.huge
  for _, e in ipairs(list) do
    local el = e:lower()
    local d = el == low and -1 or (el:find(low, 1, true) or low:find(el, 1, true)) and math.abs(#e - #name) or nil
    if d and d < gap then best, gap = e, d end
  end
  return best
end

-- A limit on an event neither profile has is a misspelt event: a usage
-- mistake naming the events there are and the closest one.
local function check_limit_events(path, limits, old, new)
  local known, list = {}, {}
  for _, prof in ipairs({ old, new }) do
    for _, e in ipairs(prof:all_events()) do
      if not known[e] then known[e] = true; list[#list + 1] = e end
    end
  end
  local options = require("callgrind.api").option_types("limits")
  local function walk(t, where)
    local keys = {}
    for k in pairs(t) do
      if type(k) == "string" and not options[k] and not known[k] then keys[#keys + 1] = k end
    end
    table.sort(keys)
    local k = keys[1]
    if not k then return end
    local close = closest_event(k, list)
    usage(string_format("%s: %sunknown event %s (the profiles have: %s)%s", path, where, printable(k),
      table_concat(list, " "), close and string_format("; did you mean %s?", close) or ""), "check")
  end
  walk(limits, "")
  if type(limits.functions) == "table" then
    local names = {}
    for name, t in pairs(limits.functions) do
      if type(name) == "string" and type(t) == "table" then names[#names + 1] = name end
    end
    table.sort(names)
    for _, name in ipairs(names) do walk(limits.functions[name], "functions." .. printable(name) .. ": ") end
  end
end

function run.check(argv, out)
  local opts, pos = parse("check", argv, 2)
  if #pos ~= 3 then usage("a limits file and two profiles are needed: LIMITS OLD NEW", "check") end
  local limits = read_limits(pos[1])
  local old, new = load({ pos[2] }, "check", opts), load({ pos[3] }, "check", opts)
  check_limit_events(pos[1], limits, old, new)
  local passed, msg = try("check", callgrind.check_no_regression, old, new, limits,
    { top = opts.top and integer(opts.top, "--top", "check") or nil, match = match_of(opts.match, "check") })
  out:write(msg, "\n")
  if not passed then return nil, 1 end
end

-- spread N SCRIPT [ARGS...]: the script under -lcallgrind.start in N
-- fresh processes (callgrind.spread); its options come before N.
function run.spread(argv)
  local i, opts = 2, {}
  while argv[i] == "--lua" or argv[i] == "--top" do
    local key = argv[i]:sub(3)
    opts[key] = argv[i + 1] or usage("missing value for --" .. key, "spread")
    i = i + 2
  end
  local n = integer(argv[i] or usage("the number of runs and a script are needed: N SCRIPT", "spread"), "N",
    "spread")
  if n < 2 then usage("N must be 2 or more", "spread") end
  if not argv[i + 1] then usage("a script is needed: N SCRIPT", "spread") end
  local script = table.move(argv, i + 1, #argv, 1, {})
  local r, err = callgrind.spread(script, n, { lua = opts.lua,
    top = opts.top and integer(opts.top, "--top", "spread") or nil })
  if not r then fail(err) end
  return r.text .. "\n"
end

-- history SUBCOMMAND ...: callgrind.history over a store.
local HISTORY = { add = true, show = true, changes = true, report = true, export = true }
function run.history(argv, out)
  local sub = argv[2]
  if not HISTORY[sub] then
    usage(sub and ("unknown history subcommand " .. sub)
      or "a subcommand is needed: add, show, changes, report, export", "history")
  end
  local opts, pos = parse("history", argv, 3)
  local line = { branch = opts.branch, machine = opts.machine }
  local function pct(v, what)
    return v and number(v, what, "history") or nil
  end
  local hist, err = callgrind.history.open(opts.store)
  if not hist then fail("callgrind-lua history: " .. err) end
  local function done(r, e)
    if r == nil then hist:close() fail("callgrind-lua history " .. sub .. ": " .. tostring(e)) end
    return r
  end
  local text
  if sub == "add" then
    if (#pos == 1) == (opts.baseline ~= nil) then usage("give one FILE or --baseline NAME", "history") end
    local r = done(hist:add(opts.baseline and { baseline = opts.baseline } or pos[1], { commit = opts.commit,
      branch = opts.branch, machine = opts.machine, time = opts.time and (math_tointeger(tonumber(opts.time))
      or opts.time), label = opts.label, spread = pct(opts.spread, "--spread") }))
    text = string_format("%s %s: commit %s on %s (%s), %s: %d series, %d added, %d merged, %d unchanged\n",
      hist.url, r.again and "merged a run again" or "added a run", r.commit, r.branch, r.machine,
      callgrind.history.iso_time(r.time), r.series, r.added, r.merged, r.unchanged)
  elseif sub == "show" then
    if #pos ~= 1 then usage("a series' name is needed: history show NAME", "history") end
    local s = done(hist:show(pos[1], line))
    local rows = { string_format("%s (%s%s)", s.name, s.kind, s.kind == "spread"
      and string_format(", spread %.2f%%", s.spread_pct) or "") }
    for _, p in ipairs(s) do
      rows[#rows + 1] = string_format("%s  %s  %s  %s%s", p.commit:sub(1, 12), callgrind.history.iso_time(p.time),
        p.branch .. "@" .. p.machine, commas(p.value),
        p.lo ~= p.hi and string_format(" (%s .. %s, %d runs)", commas(p.lo), commas(p.hi), p.n) or "")
    end
    text = table_concat(rows, "\n") .. "\n"
  elseif sub == "changes" then
    local list = done(hist:changes({ series = opts.series, tolerance = pct(opts.tolerance, "--tolerance"),
      branch = opts.branch, machine = opts.machine }))
    text = callgrind.history.changes_text(list) .. "\n"
  elseif sub == "report" then
    if not opts.o then usage("-o trend.html is needed", "history") end
    local hopts = { series = opts.series, tolerance = pct(opts.tolerance, "--tolerance"), branch = opts.branch,
      machine = opts.machine, title = opts.title }
    if opts.o == "-" then
      out:write(hist:html(hopts))
    else
      done(hist:write_html(opts.o, hopts))
    end
  else
    if opts.format ~= "bmf" then usage("--format bmf is needed (Bencher Metric Format)", "history") end
    local bopts = { commit = opts.commit, branch = opts.branch, machine = opts.machine }
    if opts.o and opts.o ~= "-" then
      done(hist:write_bmf(opts.o, bopts))
    else
      local ok, t = pcall(hist.bmf, hist, bopts)
      if not ok then hist:close() fail("callgrind-lua history export: " .. tostring(t):gsub("^.-:%d+: ", "")) end
      out:write(t)
    end
  end
  hist:close()
  return text
end

-- exec: `callgrind-lua5.4 -lcallgrind.start SCRIPT ARG...` with this
-- process's module paths (callgrind.cli.exec, which bin/callgrind-lua
-- runs before loading this module). The interpreter replaces this
-- process (it keeps its pid): a signal sent to the command reaches the
-- script, and the script's exit status, or its death by a signal, is
-- the command's.
function run.exec(argv, out)
  if not argv[2] then usage("a Lua script is needed", "exec") end
  if out.flush then out:flush() end
  local _, err = require("callgrind.cli.exec").run(argv)
  fail(err)
end

-- The commands whose whole output is text for a person: it passes
-- util.terminal wherever it goes. The others write a format's bytes
-- (escaped only at a terminal).
local TEXT = { top = true, tree = true, hot = true, annotate = true, diff = true, check = true, spread = true }
-- history's text subcommands (report and export write a format's bytes)
local HISTORY_TEXT = { add = true, show = true, changes = true }

-- Is f standard output or standard error, and a terminal?
local function is_terminal(f)
  local fd = f == io.stdout and 1 or f == io.stderr and 2
  return fd and os.execute("test -t " .. fd) == true or false
end

-- A stream that writes through util.terminal (`terminal`: it is one).
local function terminal_stream(f, at_terminal)
  return { terminal = at_terminal,
    write = function(self, ...)
      for i = 1, select("#", ...) do f:write(terminal(tostring((select(i, ...))))) end
      return self
    end,
    flush = function() if f.flush then f:flush() end end }
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
  local tty = is_terminal(out)
  if tty or TEXT[name] or name == "history" and HISTORY_TEXT[argv[2]] then out = terminal_stream(out, tty) end
  err = terminal_stream(err, is_terminal(err))
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
