-- make bench (bench/history.sh): the history store at 10,000 commits of 500
-- series (5 million points), on SQLite and on PostgreSQL. The points are
-- filled by SQL (generate_series / a recursive CTE: the bench measures the
-- store, not the filling), with one planted step; then, REPEAT times each,
-- the median of: adding one commit's 500 points (hist:add), reading one
-- series (hist:show), and the steps of every series (hist:changes); each
-- against its target (issue 44), "!" when over. A store already holding
-- COMMITS x SERIES points is used as it is (the runs a bench adds are
-- taken away again at its end).
-- usage: lua5.4 bench/history.lua URL [COMMITS [SERIES [REPEAT]]]
local history = require "callgrind.history"

local url = assert(arg[1], "usage: lua5.4 bench/history.lua URL [COMMITS [SERIES [REPEAT]]]")
local COMMITS = tonumber(arg[2]) or 10000
local SERIES = tonumber(arg[3]) or 500
local REPEAT = tonumber(arg[4]) or 9
local STEP = COMMITS * 2 // 3

-- wall seconds: luasocket's clock (Debian lua-socket, DEPS_BENCH), else date(1)
local has_socket, socket = pcall(require, "socket")
local function now()
  if has_socket then return socket.gettime() end
  local p = io.popen("date +%s.%N")
  local t = tonumber(p:read("a"))
  p:close()
  return t
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local h = assert(history.open(url))
local st = h.st
local kind = st.kind
local have = tonumber(st:row("SELECT count(*) FROM points")[1])
local t0 = now()
if have ~= COMMITS * SERIES then
  st:transaction(function()
    for _, t in ipairs({ "steps", "points", "runs", "series", "lines" }) do st:exec("DELETE FROM " .. t) end
    st:exec("INSERT INTO lines (id, branch, machine) VALUES (1, 'main', 'bench')")
    local gen = kind == "postgres" and "generate_series(1, %d) AS g(i)"
      or "(WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %d) SELECT i FROM g) AS g"
    st:exec(("INSERT INTO series (id, name, event, kind, spread) SELECT i, 'bench/f' || i || '/Ir/self', 'Ir', "
      .. "'exact', 0 FROM " .. gen):format(SERIES))
    st:exec(("INSERT INTO runs (id, commit_id, line_id, t, added, source) SELECT i, 'c' || i, 1, 1600000000 + i * 60, "
      .. "0, 'bench' FROM " .. gen):format(COMMITS))
    -- one step: series 7 at commit STEP
    local v = ("s.id * 1000 + CASE WHEN s.id = 7 AND r.id >= %d THEN 50 ELSE 0 END"):format(STEP)
    st:exec(("INSERT INTO points (series_id, line_id, t, run_id, value, lo, hi, n) SELECT s.id, 1, r.t, r.id, "
      .. "%s, %s, %s, 1 FROM runs r CROSS JOIN series s"):format(v, v, v))
    -- the steps table as adds would have kept it
    require("callgrind.history.store").fill_steps(st, "1 = 1")
  end)
  if kind == "postgres" then
    for _, t in ipairs({ "runs", "series", "lines" }) do
      st:exec(("SELECT setval(pg_get_serial_sequence('%s', 'id'), (SELECT max(id) FROM %s))"):format(t, t))
    end
    st:exec("VACUUM ANALYZE")
  else
    st:exec("ANALYZE")
  end
end
local fill = now() - t0
local n = tonumber(st:row("SELECT count(*) FROM points")[1])

local adds, shows, changes, show_cpu = {}, {}, {}, {}
local found
for r = 1, REPEAT do
  local recs = {}
  for i = 1, SERIES do recs[i] = { name = "bench", target = "f" .. i, event = "Ir", kind = "self", new = i * 1000 } end
  local a = now()
  assert(h:add(recs, { commit = "new" .. r .. "-" .. os.time(), branch = "main", machine = "bench",
    time = 1600000000 + (COMMITS + r) * 60 }))
  adds[r] = now() - a
  a = now()
  local c = os.clock()
  local s = assert(h:show("bench/f" .. (r * 37 % SERIES + 1) .. "/Ir/self"))
  shows[r] = now() - a
  show_cpu[r] = os.clock() - c
  assert(#s >= COMMITS)
  a = now()
  local ch = assert(h:changes())
  changes[r] = now() - a
  found = ch
end
-- clean the added runs away for the next run of the bench
st:transaction(function()
  st:exec("DELETE FROM points WHERE run_id IN (SELECT id FROM runs WHERE commit_id LIKE 'new%')")
  st:exec("DELETE FROM steps WHERE run_id IN (SELECT id FROM runs WHERE commit_id LIKE 'new%')")
  st:exec("DELETE FROM runs WHERE commit_id LIKE 'new%'")
end)
local step = found[1]
-- the targets (issue 44): add < 200 ms, show < 50 ms, changes < 5 s; "!" over
local function cell(v, target, fmt)
  return (fmt):format(v) .. (v < target and "" or "!")
end
print(string.format("%-8s %d points (%d commits x %d series; filled in %.1f s), median of %d:", kind, n, COMMITS,
  SERIES, fill, REPEAT))
print(string.format("  add one commit's %d points %s (target < 200 ms)  show one series %s (< 50 ms)  "
  .. "changes over every series %s (< 5 s)", SERIES, cell(median(adds) * 1000, 200, "%.1f ms"),
  cell(median(shows) * 1000, 50, "%.1f ms"), cell(median(changes), 5, "%.3f s")))
-- the load beside: a wall time on a busy machine is a multiple of the CPU time
local f = io.open("/proc/loadavg")
local load = f and f:read("l"):match("^(%S+)") or "?"
if f then f:close() end
print(string.format("  show's CPU time in this process (the client's: LuaSQL and the tables) %.1f ms; load average %s",
  median(show_cpu) * 1000, load))
print(string.format("  the planted step found: %s at %s (%d steps)", step and step.series or "none",
  step and step.commit or "-", #found))
h:close()
