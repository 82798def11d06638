--- The history store's SQL: one versioned schema in SQLite (a file,
-- through LuaSQL's `luasql.sqlite3`) or PostgreSQL (a URL, through
-- `luasql.postgres`), and the few statements the history asks of it.
--
-- The same statements run on both; what differs (the key type, SQLite's
-- `WITHOUT ROWID`, how an add takes its lock) is in `DIALECT`. The schema:
--
-- - `meta(key, value)`: `schema_version` (a newer one is refused);
-- - `lines(id, branch, machine)`: where runs come from;
-- - `runs(id, commit_id, line_id, t, added, source)`: one per commit and
--   line (UNIQUE), `t` the commit's time (seconds since 1970, UTC);
-- - `series(id, name, event, kind, spread)`: `kind` "exact" or "spread"
--   (Lua counts that vary between processes), `spread` the widest
--   relative spread measured at one commit (a fraction);
-- - `points(series_id, line_id, t, run_id, value, lo, hi, n)`: a run's
--   value of a series; `lo`..`hi` what repeated measurements of the same
--   commit gave, `n` how many. Its key is the order of a series on a line,
--   so a series is read in key order;
-- - `steps(series_id, line_id, t, run_id, prev_run, value, lo, hi, pv,
--   plo, phi)`: the steps at tolerance 0, kept by every add (the same
--   transaction): a pair of consecutive points of a series on a line
--   (`prev_run` the one before), keyed as its later point, with both
--   points' values and ranges. `changes` reads this table, not the points.
--
-- The steps table holds every pair that is a step at tolerance 0 with the
-- series' spread of when it was written (`M.STEP`), so it holds every step
-- of any tolerance (a larger tolerance only leaves steps out) and of any
-- later spread (a spread only widens, and a wider one only leaves steps out
-- of non-negative counts; a pair with a negative count is kept whatever its
-- spread): `changes` applies the tolerance and the spread of now to its rows
-- (`M.step_condition`). An add recomputes the pairs its points are in: a
-- point's own (with the point before it) and the next point's (which had
-- another point before it when the add lands between two commits, and whose
-- pair changes when a merge widens the range); a point added out of commit
-- order or again is one of these cases.
--
-- Version 1 (no steps table) is migrated when opened: the table is made and
-- filled from the points (and, on PostgreSQL, the points' key index made
-- again holding their values) in one transaction under the write lock.
--
-- An add is one transaction that holds the store's write lock from its
-- start (SQLite: `BEGIN IMMEDIATE` in WAL mode with a busy timeout;
-- PostgreSQL: a transaction-scoped advisory lock), so concurrent adds
-- queue, and an interrupted one leaves nothing.
-- @module callgrind.history.store
local ipairs, tonumber, tostring, type = ipairs, tonumber, tostring, type
local math_tointeger, string_format, table_concat = math.tointeger, string.format, table.concat

local M = {}

--- The schema version this library writes and reads.
M.SCHEMA_VERSION = 2

local DIALECT = {
  sqlite = { key = "INTEGER PRIMARY KEY", without_rowid = " WITHOUT ROWID", include = "",
    begin = { "BEGIN IMMEDIATE" } },
  -- PostgreSQL keeps a table's rows in the order they came (a commit's
  -- points together): the key's index holds the points' values too, so
  -- that a series is read from the index alone, in order (an index-only
  -- scan; vacuumed often enough that it need not visit the rows)
  postgres = { key = "BIGSERIAL PRIMARY KEY", without_rowid = "", include = " INCLUDE (value, lo, hi, n)",
    begin = { "BEGIN", "SELECT pg_advisory_xact_lock(7271044)" },
    points_after = { "ALTER TABLE points SET (autovacuum_vacuum_insert_scale_factor = 0.01)" } },
}

local function schema(d)
  return {
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lines (id " .. d.key .. ", branch TEXT NOT NULL, machine TEXT NOT NULL, "
      .. "UNIQUE (branch, machine))",
    "CREATE TABLE IF NOT EXISTS runs (id " .. d.key .. ", commit_id TEXT NOT NULL, line_id BIGINT NOT NULL, "
      .. "t BIGINT NOT NULL, added BIGINT NOT NULL, source TEXT, UNIQUE (commit_id, line_id))",
    "CREATE TABLE IF NOT EXISTS series (id " .. d.key .. ", name TEXT NOT NULL UNIQUE, event TEXT, "
      .. "kind TEXT NOT NULL, spread DOUBLE PRECISION NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS points (series_id BIGINT NOT NULL, line_id BIGINT NOT NULL, t BIGINT NOT NULL, "
      .. "run_id BIGINT NOT NULL, value BIGINT NOT NULL, lo BIGINT NOT NULL, hi BIGINT NOT NULL, "
      .. "n INTEGER NOT NULL, PRIMARY KEY (series_id, line_id, t, run_id)" .. d.include .. ")" .. d.without_rowid,
    "CREATE INDEX IF NOT EXISTS points_run ON points (run_id)",
  }
end

-- The steps table (schema version 2).
local function steps_schema(d)
  return "CREATE TABLE IF NOT EXISTS steps (series_id BIGINT NOT NULL, line_id BIGINT NOT NULL, t BIGINT NOT NULL, "
    .. "run_id BIGINT NOT NULL, prev_run BIGINT NOT NULL, value BIGINT NOT NULL, lo BIGINT NOT NULL, "
    .. "hi BIGINT NOT NULL, pv BIGINT NOT NULL, plo BIGINT NOT NULL, phi BIGINT NOT NULL, "
    .. "PRIMARY KEY (series_id, line_id, t, run_id))" .. d.without_rowid
end

--- The SQL condition under which a pair `x` (a row of steps, or of the
-- same columns) of the series `s` (a row of series) is a step beyond
-- `tol` (a fraction): the values differ by more than tol of the earlier
-- one and, for a spread series, the two ranges, each widened by half the
-- series' spread of its value, do not overlap.
-- @usage local cond = store.step_condition(0.05)
function M.step_condition(tol)
  return string_format("x.value <> x.pv AND ABS(x.value - x.pv) > %.17g * ABS(x.pv) AND (s.kind = 'exact' "
    .. "OR x.lo - s.spread * x.value / 2.0 > x.phi + s.spread * x.pv / 2.0 "
    .. "OR x.hi + s.spread * x.value / 2.0 < x.plo - s.spread * x.pv / 2.0)", tol)
end

--- What the steps table keeps of a pair `x` of series `s`: a step at
-- tolerance 0, or any change with a negative count (whose step a wider
-- spread could make).
-- @usage local cond = store.STEP
M.STEP = "(" .. M.step_condition(0) .. " OR (x.value <> x.pv AND (x.lo < 0 OR x.plo < 0)))"

--- The steps table's columns, in the order `STEP_ROWS` gives them.
M.STEP_COLUMNS = "series_id, line_id, t, run_id, prev_run, value, lo, hi, pv, plo, phi"

--- Fills the steps table from the points (of the series matching the SQL
-- condition `where` on the points `p`, "1 = 1" for all): what the
-- migration from version 1 does, and the bench after filling points.
-- @usage store.fill_steps(st, "p.series_id = 7")
function M.fill_steps(st, where)
  st:exec(string_format([[
INSERT INTO steps (%s) SELECT x.series_id, x.line_id, x.t, x.run_id, x.prev_run, x.value, x.lo, x.hi,
  x.pv, x.plo, x.phi FROM (
  SELECT p.series_id, p.line_id, p.t, p.run_id, p.value, p.lo, p.hi,
    LAG(p.run_id) OVER win AS prev_run, LAG(p.value) OVER win AS pv, LAG(p.lo) OVER win AS plo,
    LAG(p.hi) OVER win AS phi
  FROM points p WHERE %s
  WINDOW win AS (PARTITION BY p.series_id, p.line_id ORDER BY p.t, p.run_id)) x
JOIN series s ON s.id = x.series_id
WHERE x.prev_run IS NOT NULL AND %s]], M.STEP_COLUMNS, where, M.STEP))
end

--- Splits a store's address into its kind and what LuaSQL connects to:
-- `postgresql://...` or `postgres://...` (kept whole: libpq reads the
-- URL), `sqlite:PATH`, or a file path.
-- @usage store.parse_url("sqlite:perf.db") --> "sqlite", "perf.db"
function M.parse_url(url)
  if url:match("^postgres[%w]*://") then return "postgres", url end
  local path = url:match("^sqlite:(.*)$")
  if path then
    path = path:gsub("^//", "")
    return "sqlite", path
  end
  return "sqlite", url
end

--- A value as a Lua integer (PostgreSQL's rows come as strings), else
-- a number; nil stays nil.
-- @usage store.int("42") --> 42
local function int(v)
  if v == nil then return nil end
  return math_tointeger(tonumber(v)) or tonumber(v)
end
M.int = int

local store_mt = { __name = "callgrind.HistoryStore" }
local methods = {}
store_mt.__index = methods

--- Runs a statement; raises with the statement's start on an error (the
-- history turns it into `nil, message, "io"`). A cursor it gives is
-- closed unless `keep`.
-- @usage st:exec("SELECT 1")
function methods.exec(st, sql, keep)
  local res, err = st.conn:execute(sql)
  if res == nil and err then
    error({ store = (st.kind == "postgres" and "PostgreSQL" or "SQLite") .. ": " .. tostring(err):gsub("%s+$", "")
      .. " (in: " .. sql:sub(1, 80):gsub("%s+", " ") .. (#sql > 80 and "..." or "") .. ")" }, 0)
  end
  if keep then return res end
  if type(res) == "userdata" then res:close() end
  return res
end

--- Every row of a query, each an array of its columns.
-- @usage for _, r in ipairs(st:rows("SELECT id, name FROM series")) do print(r[1], r[2]) end
function methods.rows(st, sql)
  local cur = st:exec(sql, true)
  local out = {}
  if type(cur) ~= "userdata" then return out end
  while true do
    local row = cur:fetch({}, "n")
    if not row then break end
    out[#out + 1] = row
  end
  cur:close()
  return out
end

--- Calls f(row) for each row of a query, the same table (an array of
-- its columns) each time: a caller keeps what it needs of it.
-- @usage st:each("SELECT id FROM runs", function(r) print(r[1]) end)
function methods.each(st, sql, f)
  local cur = st:exec(sql, true)
  if type(cur) ~= "userdata" then return end
  local row, fetch = {}, cur.fetch
  while fetch(cur, row, "n") do f(row) end
  cur:close()
end

--- The first row of a query, or nil.
-- @usage local n = st:row("SELECT count(*) FROM runs")[1]
function methods.row(st, sql)
  return st:rows(sql)[1]
end

--- A string as an SQL literal.
-- @usage st:quote("it's") --> "'it''s'"
function methods.quote(_, s)
  if s == nil then return "NULL" end
  return "'" .. tostring(s):gsub("'", "''") .. "'"
end

--- Runs f(st) in one write transaction (the store's lock held from its
-- start); commits when f returns, rolls back when it raises, and raises
-- again. A busy store is waited for (SQLite's busy timeout; PostgreSQL's
-- lock queue).
-- @usage st:transaction(function() st:exec("DELETE FROM runs WHERE 0 = 1") end)
function methods.transaction(st, f)
  for _, sql in ipairs(DIALECT[st.kind].begin) do st:exec(sql) end
  local ok, res = pcall(f, st)
  if not ok then
    st.conn:execute("ROLLBACK")
    error(res, 0)
  end
  st:exec("COMMIT")
  return res
end

--- Closes the connection (and its environment); idempotent.
-- @usage st:close()
function methods.close(st)
  if st.conn then
    st.conn:close()
    st.env:close()
    st.conn, st.env = nil, nil
  end
end

-- Creates the schema, or checks the version of the one there.
local function prepare(st)
  local d = DIALECT[st.kind]
  if st.kind == "sqlite" then
    st:exec("PRAGMA busy_timeout = " .. st.busy_ms)
    st:row("PRAGMA journal_mode = WAL")
    st:exec("PRAGMA synchronous = NORMAL")
  else
    st:exec("SET client_min_messages = warning")
  end
  local has = st:row(st.kind == "sqlite"
    and "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    or "SELECT count(*) FROM pg_tables WHERE tablename = 'meta' AND schemaname = current_schema()")
  if int(has[1]) == 0 then
    st:transaction(function()
      for _, sql in ipairs(schema(d)) do st:exec(sql) end
      st:exec(steps_schema(d))
      for _, sql in ipairs(d.points_after or {}) do st:exec(sql) end
      st:exec("INSERT INTO meta (key, value) VALUES ('schema_version', '" .. M.SCHEMA_VERSION
        .. "') ON CONFLICT (key) DO NOTHING")
    end)
  end
  local function version_of()
    local v = st:row("SELECT value FROM meta WHERE key = 'schema_version'")
    local version = v and int(v[1])
    if not version then
      error({ store = st.url .. ": a meta table without a schema_version: not a callgrind history store" }, 0)
    end
    if version > M.SCHEMA_VERSION then
      error({ store = string_format("%s: the store's schema is version %d, newer than this library's %d: "
        .. "update the library (a newer one wrote it)", st.url, version, M.SCHEMA_VERSION) }, 0)
    end
    return version
  end
  local version = version_of()
  if version < M.SCHEMA_VERSION then
    -- version 1 to 2: the steps table, filled from the points (another
    -- process may have migrated it meanwhile: the version again, under
    -- the lock)
    st:transaction(function()
      if version_of() == 1 then
        st:exec(steps_schema(d))
        M.fill_steps(st, "1 = 1")
        if st.kind == "postgres" then
          st:exec("ALTER TABLE points DROP CONSTRAINT points_pkey, ADD PRIMARY KEY (series_id, line_id, t, run_id)"
            .. d.include)
          for _, sql in ipairs(d.points_after) do st:exec(sql) end
        end
        st:exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
      end
    end)
    version = version_of()
  end
  st.version = version
end

--- Opens a store: the store object, or nil, a message and "io".
-- @usage local st = assert(store.open("sqlite:" .. os.tmpname()))
function M.open(url, opts)
  opts = opts or {}
  local kind, where = M.parse_url(url)
  local ok, luasql = pcall(require, kind == "sqlite" and "luasql.sqlite3" or "luasql.postgres")
  if not ok then
    return nil, string_format("%s: the history's %s store needs LuaSQL's %s (Debian: apt-get install %s)", url,
      kind == "sqlite" and "SQLite" or "PostgreSQL", kind == "sqlite" and "luasql.sqlite3" or "luasql.postgres",
      kind == "sqlite" and "lua-sql-sqlite3" or "lua-sql-postgres"), "io"
  end
  local env = kind == "sqlite" and luasql.sqlite3() or luasql.postgres()
  local conn, err = env:connect(where)
  if not conn then
    env:close()
    return nil, string_format("%s: cannot open the history store: %s", url, tostring(err):gsub("%s+$", "")), "io"
  end
  local st = setmetatable({ kind = kind, url = url, env = env, conn = conn, busy_ms = opts.busy_ms or 60000 },
    store_mt)
  local pok, perr = pcall(prepare, st)
  if not pok then
    st:close()
    return nil, type(perr) == "table" and perr.store or tostring(perr), "io"
  end
  return st
end

--- The values of a list joined as SQL VALUES rows, `per` rows a
-- statement: calls emit(sql_values) for each batch.
-- @usage store.batches({ "(1)", "(2)" }, 400, print)
function M.batches(rows, per, emit)
  for i = 1, #rows, per do
    emit(table_concat(rows, ",", i, math.min(#rows, i + per - 1)))
  end
end

return M
