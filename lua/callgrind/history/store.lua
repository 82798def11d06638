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
--   so a series is read, and its steps found, in key order.
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
M.SCHEMA_VERSION = 1

local DIALECT = {
  sqlite = { key = "INTEGER PRIMARY KEY", without_rowid = " WITHOUT ROWID", begin = { "BEGIN IMMEDIATE" } },
  postgres = { key = "BIGSERIAL PRIMARY KEY", without_rowid = "",
    begin = { "BEGIN", "SELECT pg_advisory_xact_lock(7271044)" } },
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
      .. "n INTEGER NOT NULL, PRIMARY KEY (series_id, line_id, t, run_id))" .. d.without_rowid,
    "CREATE INDEX IF NOT EXISTS points_run ON points (run_id)",
  }
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
      st:exec("INSERT INTO meta (key, value) VALUES ('schema_version', '" .. M.SCHEMA_VERSION
        .. "') ON CONFLICT (key) DO NOTHING")
    end)
  end
  local v = st:row("SELECT value FROM meta WHERE key = 'schema_version'")
  local version = v and int(v[1])
  if not version then
    error({ store = st.url .. ": a meta table without a schema_version: not a callgrind history store" }, 0)
  end
  if version > M.SCHEMA_VERSION then
    error({ store = string_format("%s: the store's schema is version %d, newer than this library's %d: "
      .. "update the library (a newer one wrote it)", st.url, version, M.SCHEMA_VERSION) }, 0)
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
