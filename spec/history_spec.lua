-- callgrind.history on both stores: SQLite (a file) and PostgreSQL 15 (a
-- server this spec starts: initdb into a temporary directory, listening
-- on a Unix socket only, stopped in teardown, also when a case fails).
-- Every case runs on both and expects the same answers.
local callgrind = require "callgrind"
local history = require "callgrind.history"
local cli = require "callgrind.cli"
local H = require "spec.support.helpers"
local F = require "spec.support.files"
require "luasql.sqlite3"   -- Debian lua-sql-sqlite3
require "luasql.postgres"  -- Debian lua-sql-postgres

local PG_BIN = os.getenv("CALLGRIND_PG_BIN") or "/usr/lib/postgresql/15/bin"

local dir, pg = nil, nil

-- Starts PostgreSQL in dir/pg (as the postgres user when this is root:
-- the server refuses root). Its URL.
local function start_pg()
  local root = H.run("id -u"):match("^0") ~= nil
  local base = dir .. "/pgbase"
  H.run("mkdir -p " .. H.shq(base .. "/sock"))
  local as = ""
  if root then
    H.run("chmod 755 " .. H.shq(dir) .. " && chown -R postgres " .. H.shq(base))
    as = "runuser -u postgres -- "
  end
  pg = { data = base .. "/data", sock = base .. "/sock", as = as, log = base .. "/log" }
  H.run(as .. H.shq(PG_BIN .. "/initdb") .. " -A trust -U cg -E UTF8 --no-sync -D " .. H.shq(pg.data)
    .. " >/dev/null", "initdb")
  pg.started = true
  H.run(as .. H.shq(PG_BIN .. "/pg_ctl") .. " -D " .. H.shq(pg.data) .. " -l " .. H.shq(pg.log) .. " -w -t 60"
    .. " -o " .. H.shq("-k " .. pg.sock .. " -c listen_addresses='' -c fsync=off") .. " start >/dev/null",
    "pg_ctl start")
  return "postgresql:///postgres?host=" .. pg.sock .. "&user=cg"
end

local function stop_pg()
  if pg and pg.started then
    os.execute(pg.as .. H.shq(PG_BIN .. "/pg_ctl") .. " -D " .. H.shq(pg.data) .. " -m fast -w stop >/dev/null 2>&1")
    pg.started = false
  end
end

local STORES = {}

setup(function()
  dir = F.tmpdir()
  STORES.sqlite = "sqlite:" .. dir .. "/h.db"
  local ok, url = pcall(start_pg)
  if not ok then
    stop_pg()
    error(url, 0)
  end
  STORES.postgres = url
end)

teardown(function()
  stop_pg()
  F.remove(dir)
end)

-- A new empty store of a kind: SQLite a new file; PostgreSQL a new database.
local n_db = 0
local function fresh(kind)
  n_db = n_db + 1
  if kind == "sqlite" then return "sqlite:" .. dir .. "/h" .. n_db .. ".db" end
  local admin = assert(history.open(STORES.postgres))
  admin.st:exec("CREATE DATABASE h" .. n_db)
  admin:close()
  return (STORES.postgres:gsub("^postgresql:///postgres", "postgresql:///h" .. n_db))
end

local function rec(name, target, ev, new)
  return { check = "within_baseline", name = name, target = target, event = ev, kind = "total", new = new }
end

for _, kind in ipairs({ "sqlite", "postgres" }) do
  describe("callgrind.history on " .. kind, function()
    it("creates the versioned schema and refuses a newer one, naming both versions", function()
      local url = fresh(kind)
      local h = assert(history.open(url))
      assert.are.same({ kind = kind, url = url, schema_version = 2 }, h:info())
      h.st:exec("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
      h:close()
      local none, err, ekind = history.open(url)
      assert.is_nil(none)
      assert.are.equal(url .. ": the store's schema is version 7, newer than this library's 2: update the library "
        .. "(a newer one wrote it)", err)
      assert.are.equal("io", ekind)
    end)

    it("adds a record and a profile, and shows each series in commit order", function()
      local h = assert(history.open(fresh(kind)))
      -- added out of order: shown by the commits' times
      assert(h:add({ rec("parse", "total", "Ir", 200) }, { commit = "b2", branch = "main", machine = "m",
        time = "2024-01-02T00:00:00Z" }))
      local r = assert(h:add({ rec("parse", "total", "Ir", 100) }, { commit = "a1", branch = "main", machine = "m",
        time = "2024-01-01T01:00:00+01:00" }))
      assert.are.same({ 1, 0, 0, 1 }, { r.added, r.merged, r.unchanged, r.series })
      local s = assert(h:show("parse/total/Ir"))
      assert.are.same({ "a1", "b2" }, { s[1].commit, s[2].commit })
      assert.are.same({ 100, 200 }, { s[1].value, s[2].value })
      assert.are.equal(1704067200, s[1].time)
      -- a profile: its totals, each function's self and inclusive cost
      local prof = assert(callgrind.load("spec/fixtures/report.callgrind"))
      assert(h:add(prof, { commit = "b2", branch = "main", machine = "m" }))
      assert.are.equal(prof:total("Ir"), h:show("report/total/Ir")[1].value)
      for fn in prof:functions() do
        assert.are.equal(fn:self("Ir"), h:show("report/" .. fn.name .. "/Ir/self")[1].value)
        assert.are.equal(fn:inclusive("Ir"), h:show("report/" .. fn.name .. "/Ir/inclusive")[1].value)
      end
      local none, err, ekind = h:show("parse/total/I")
      assert.is_nil(none)
      assert.are.equal("not_found", ekind)
      assert.matches("closest: parse/total/Ir", err, 1, true)
      h:close()
    end)

    it("finds the commit of a planted step among 200 commits, with before, after and the share", function()
      local h = assert(history.open(fresh(kind)))
      for i = 1, 200 do
        local parse = i >= 137 and 1100 or 1000
        assert(h:add({ rec("gen", "total", "Ir", parse + 500), rec("gen", "parse", "Ir", parse),
          rec("gen", "lex", "Ir", 500) }, { commit = string.format("c%03d", i), branch = "main", machine = "ci",
          time = 1700000000 + i * 60 }))
      end
      local ch = assert(h:changes())
      assert.are.equal(2, #ch)
      assert.are.same({ "c137", "c136", 1000, 1100, 100 },
        { ch[1].commit, ch[1].before_commit, ch[1].before, ch[1].after, ch[1].delta })
      assert.are.equal("gen/parse/Ir", ch[1].series)
      assert.are.equal(10, ch[1].share)
      assert.are.equal("gen/total/Ir", ch[2].series)
      assert.are.equal("c137", ch[2].commit)
      assert.are.equal(100 * 100 / 1500, ch[2].share)
      -- a tolerance above the share leaves it out; a pattern picks series
      assert.are.same({ "gen/parse/Ir" }, { assert(h:changes({ tolerance = 7 }))[1].series })
      assert.are.equal(0, #assert(h:changes({ tolerance = 10 })))
      assert.are.equal(1, #assert(h:changes({ series = "/total/" })))
      assert.matches("c137 .* gen/parse/Ir %(main%): 1,000 %-> 1,100 %(%+10%.00%%%)", history.changes_text(ch))
      h:close()
    end)

    it("keeps its steps right when commits come out of order, again, and widen a spread", function()
      -- 3 series on 2 lines (main on m1 and m2), 30 commits added in a
      -- shuffled order, some of them again; changes at three tolerances
      -- against the steps worked out here from what was added
      local N, SPREAD = 30, 2
      local function value(series, line, i)
        if series == "x/a/Ir" then return 1000 + (i >= 11 and 100 or 0) + (i >= 21 and -60 or 0) + line end
        if series == "x/b/Ir" then return 500 + (i % 7 == 0 and 10 or 0) end
        -- a spread series: noise of 0.5% around steps of 15% and 5% (line 2 only)
        return 10000 + (i * 37 % 11 - 5) * 10 + (i >= 8 and 1500 or 0) + (line == 2 and i >= 16 and 600 or 0)
      end
      local NAMES = { "x/a/Ir", "x/b/Ir", "x/c/Instr" }

      local h = assert(history.open(fresh(kind)))
      -- what was added: [line][i] = { value, lo, hi } of x/c; x/c's spread (a fraction)
      local c_points, c_spread = { {}, {} }, SPREAD / 100
      local function put(line, i, extra)
        extra = extra or 0
        -- the exact counts, then (the same run again) the spread series
        local o = { commit = ("k%02d"):format(i), branch = "main", machine = "m" .. line, time = 1000 + i }
        assert(h:add({ rec("x", "a", "Ir", value("x/a/Ir", line, i)), rec("x", "b", "Ir", value("x/b/Ir", line, i)) },
          o))
        local v = value("x/c/Instr", line, i) + extra
        o.spread = SPREAD
        assert(h:add({ rec("x", "c", "Instr", v) }, o))
        local p = c_points[line][i]
        if not p then
          c_points[line][i] = { v, v, v }
        else
          p[2], p[3] = math.min(p[2], v), math.max(p[3], v)
          c_spread = math.max(c_spread, (p[3] - p[2]) / p[2])
        end
      end
      local order, seed = {}, 7
      for i = 1, N do order[i] = i end
      for i = N, 2, -1 do
        seed = (seed * 1103515245 + 12345) % 2147483648
        local j = seed % i + 1
        order[i], order[j] = order[j], order[i]
      end
      for n, i in ipairs(order) do
        put(1, i)
        put(2, order[N + 1 - n])
        -- commits added again: the same exact counts; x/c measured again
        if n == 10 then put(1, order[3], 0) end
        if n == 20 then put(2, order[5], 30) end
      end
      -- k07 again on m1, 8% higher: k08's step on m1 is no longer beyond
      -- the ranges; the last, k12 again on m2, 9% higher, widens x/c's
      -- spread to 9%
      put(1, 7, 800)
      put(2, 12, 1050)
      assert.is_true(c_spread > 0.085 and c_spread < 0.095)
      local function expected(tol)
        local out = {}
        for _, name in ipairs(NAMES) do
          for line = 1, 2 do
            for i = 2, N do
              local v, pv, lo, hi, plo, phi
              if name == "x/c/Instr" then
                v, lo, hi = table.unpack(c_points[line][i])
                pv, plo, phi = table.unpack(c_points[line][i - 1])
              else
                v, pv = value(name, line, i), value(name, line, i - 1)
              end
              local step = v ~= pv and math.abs(v - pv) > tol / 100 * math.abs(pv)
              if step and name == "x/c/Instr" then
                local sp = c_spread
                step = lo - sp * v / 2 > phi + sp * pv / 2 or hi + sp * v / 2 < plo - sp * pv / 2
              end
              if step then
                out[#out + 1] = { ("k%02d"):format(i), name, "m" .. line, ("k%02d"):format(i - 1), pv, v }
              end
            end
          end
        end
        table.sort(out, function(a, b)
          if a[1] ~= b[1] then return a[1] < b[1] end
          if a[2] ~= b[2] then return a[2] < b[2] end
          return a[3] < b[3]
        end)
        return out
      end
      local function got(tol)
        local out = {}
        for i, c in ipairs(assert(h:changes({ tolerance = tol }))) do
          out[i] = { c.commit, c.series, c.machine, c.before_commit, c.before, c.after }
        end
        table.sort(out, function(a, b)
          if a[1] ~= b[1] then return a[1] < b[1] end
          if a[2] ~= b[2] then return a[2] < b[2] end
          return a[3] < b[3]
        end)
        return out
      end
      -- (the steps of x/c: k08 on m2 (on m1 k07's range reaches it); 600
      -- at k16 on m2 is 5% of 11,500, no step at a 9% spread)
      local want = expected(0)
      local c_steps = {}
      for _, r in ipairs(want) do if r[2] == "x/c/Instr" then c_steps[#c_steps + 1] = r[1] .. " " .. r[3] end end
      assert.are.same({ "k08 m2" }, c_steps)
      assert.are.same(want, got(0))
      assert.are.same(expected(3), got(3))
      assert.are.same(expected(9.5), got(9.5))
      assert.is_true(#expected(3) < #want and #expected(9.5) < #expected(3) and #expected(9.5) > 0)
      h:close()
    end)

    it("migrates a store of schema version 1: the steps of the points there, then of every add", function()
      local url = fresh(kind)
      -- version 1 as the library wrote it (before the steps table)
      local luasql = kind == "sqlite" and require("luasql.sqlite3").sqlite3() or require("luasql.postgres").postgres()
      local conn = assert(luasql:connect(kind == "sqlite" and url:gsub("^sqlite:", "") or url))
      local key = kind == "sqlite" and "INTEGER PRIMARY KEY" or "BIGSERIAL PRIMARY KEY"
      for _, sql in ipairs({
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE lines (id " .. key .. ", branch TEXT NOT NULL, machine TEXT NOT NULL, UNIQUE (branch, machine))",
        "CREATE TABLE runs (id " .. key .. ", commit_id TEXT NOT NULL, line_id BIGINT NOT NULL, t BIGINT NOT NULL, "
          .. "added BIGINT NOT NULL, source TEXT, UNIQUE (commit_id, line_id))",
        "CREATE TABLE series (id " .. key .. ", name TEXT NOT NULL UNIQUE, event TEXT, kind TEXT NOT NULL, "
          .. "spread DOUBLE PRECISION NOT NULL DEFAULT 0)",
        "CREATE TABLE points (series_id BIGINT NOT NULL, line_id BIGINT NOT NULL, t BIGINT NOT NULL, "
          .. "run_id BIGINT NOT NULL, value BIGINT NOT NULL, lo BIGINT NOT NULL, hi BIGINT NOT NULL, "
          .. "n INTEGER NOT NULL, PRIMARY KEY (series_id, line_id, t, run_id))"
          .. (kind == "sqlite" and " WITHOUT ROWID" or ""),
        "CREATE INDEX points_run ON points (run_id)",
        "INSERT INTO meta (key, value) VALUES ('schema_version', '1')",
        "INSERT INTO lines (branch, machine) VALUES ('main', 'm')",
        "INSERT INTO series (name, event, kind, spread) VALUES ('old/total/Ir', 'Ir', 'exact', 0)",
      }) do assert(conn:execute(sql)) end
      for i = 1, 20 do
        local v = i >= 13 and 260 or 200
        assert(conn:execute(("INSERT INTO runs (commit_id, line_id, t, added, source) VALUES ('o%02d', 1, %d, 0, 'x')")
          :format(i, i)))
        assert(conn:execute(("INSERT INTO points VALUES (1, 1, %d, %d, %d, %d, %d, 1)"):format(i, i, v, v, v)))
      end
      conn:close()
      luasql:close()
      local h = assert(history.open(url))
      assert.are.equal(2, h:info().schema_version)
      local ch = assert(h:changes())
      assert.are.same({ "o13", "o12", 200, 260 }, { ch[1].commit, ch[1].before_commit, ch[1].before, ch[1].after })
      assert.are.equal(1, #ch)
      -- an add after the migration: its step too, between two old commits
      assert(h:add({ rec("old", "total", "Ir", 300) }, { commit = "o06b", branch = "main", machine = "m", time = 6 }))
      ch = assert(h:changes())
      assert.are.same({ "o06b", "o07", "o13" }, { ch[1].commit, ch[2].commit, ch[3].commit })
      assert.are.same({ 200, 300, 300, 200, 200, 260 },
        { ch[1].before, ch[1].after, ch[2].before, ch[2].after, ch[3].before, ch[3].after })
      if kind == "postgres" then
        -- the points' key index holds their values (a series read from the index alone)
        assert.matches("INCLUDE %(value, lo, hi, n%)",
          h.st:row("SELECT indexdef FROM pg_indexes WHERE indexname = 'points_pkey'")[1])
      end
      h:close()
      -- opened again: version 2 as it is
      h = assert(history.open(url))
      assert.are.equal(3, #assert(h:changes()))
      h:close()
    end)

    it("takes branches and machines as lines of their own", function()
      local h = assert(history.open(fresh(kind)))
      assert(h:add({ rec("x", "total", "Ir", 10) }, { commit = "a", branch = "main", machine = "m1", time = 1 }))
      assert(h:add({ rec("x", "total", "Ir", 50) }, { commit = "a", branch = "main", machine = "m2", time = 1 }))
      assert(h:add({ rec("x", "total", "Ir", 10) }, { commit = "b", branch = "main", machine = "m1", time = 2 }))
      assert(h:add({ rec("x", "total", "Ir", 50) }, { commit = "b", branch = "main", machine = "m2", time = 2 }))
      assert(h:add({ rec("x", "total", "Ir", 20) }, { commit = "c", branch = "feat", machine = "m1", time = 3 }))
      assert.are.equal(0, #assert(h:changes()))
      assert.are.equal(2, #assert(h:show("x/total/Ir", { machine = "m2" })))
      h:close()
    end)

    it("steps a Lua series only beyond its measured spread", function()
      local h = assert(history.open(fresh(kind)))
      local values = { 1000, 1012, 995, 1008, 1003, 1150, 1160, 1145 }
      for i, v in ipairs(values) do
        assert(h:add({ rec("lua", "total", "Instr", v) }, { commit = "s" .. i, branch = "main", machine = "m",
          time = i, spread = 2 }))
      end
      local ch = assert(h:changes())
      assert.are.equal(1, #ch)
      assert.are.same({ "s6", 1003, 1150 }, { ch[1].commit, ch[1].before, ch[1].after })
      -- a commit measured again widens its range and the series' spread
      assert(h:add({ rec("lua", "total", "Instr", 1060) }, { commit = "s5", branch = "main", machine = "m",
        time = 5, spread = 2 }))
      local s = assert(h:show("lua/total/Instr"))
      assert.are.same({ 1003, 1003, 1060, 2 }, { s[5].value, s[5].lo, s[5].hi, s[5].n })
      assert.are.equal("spread", s.kind)
      h:close()
    end)

    it("merges a run added twice, never doubles it, and refuses another exact value whole", function()
      local h = assert(history.open(fresh(kind)))
      local o = { commit = "a", branch = "main", machine = "m", time = 1 }
      assert(h:add({ rec("p", "total", "Ir", 5), rec("p", "f", "Ir", 3) }, o))
      local r = assert(h:add({ rec("p", "total", "Ir", 5), rec("p", "g", "Ir", 1) }, o))
      assert.are.same({ true, 1, 1 }, { r.again, r.added, r.unchanged })
      assert.are.equal(1, #h:show("p/total/Ir"))
      local none, err, ekind = h:add({ rec("p", "h", "Ir", 9), rec("p", "total", "Ir", 6) }, o)
      assert.is_nil(none)
      assert.are.equal("conflict", ekind)
      assert.are.equal("commit a on main (m) has p/total/Ir = 5 already; this add gives 6: an exact count cannot "
        .. "have two values (nothing was added)", err)
      assert.is_nil((h:show("p/h/Ir")))
      assert.are.equal(1, tonumber(h.st:row("SELECT count(*) FROM runs")[1]))
      h:close()
    end)

    it("leaves nothing of an add interrupted half-way", function()
      local h = assert(history.open(fresh(kind)))
      local exec, n = h.st.exec, 0
      h.st.exec = function(st, sql, keep)
        if sql:match("^INSERT INTO points") then n = n + 1; if n == 2 then error("interrupted", 0) end end
        return exec(st, sql, keep)
      end
      local recs = {}
      for i = 1, 1000 do recs[i] = rec("big", "f" .. i, "Ir", i) end
      assert.has_error(function() h:add(recs, { commit = "a", branch = "main", machine = "m", time = 1 }) end,
        "interrupted")
      h.st.exec = nil
      for _, t in ipairs({ "runs", "points", "steps", "series", "lines" }) do
        assert.are.equal(0, tonumber(h.st:row("SELECT count(*) FROM " .. t)[1]), t)
      end
      h:close()
    end)

    it("loses nothing when ten processes add at once, two of them the same run", function()
      local url = fresh(kind)
      assert(history.open(url)):close()
      local pids = {}
      for i = 1, 10 do
        local commit = i == 10 and "c1" or ("c" .. i)
        local body = ([[
local h = assert(require("callgrind.history").open(%q))
local recs = {}
for j = 1, 300 do recs[j] = { name = "load", target = "f" .. j, event = "Ir", new = j } end
assert(h:add(recs, { commit = %q, branch = "main", machine = "m", time = %d }))
print("ok")]]):format(url, commit, i)
        H.write_file(dir .. "/job" .. i .. ".lua", body)
        pids[i] = io.popen(("cd %s && LUA_PATH_5_4=%s LUA_CPATH_5_4=%s lua5.4 %s 2>&1"):format(H.shq(H.run("pwd")
          :gsub("\n", "")), H.shq(package.path), H.shq(package.cpath), H.shq(dir .. "/job" .. i .. ".lua")))
      end
      for i = 1, 10 do
        local out = pids[i]:read("a")
        pids[i]:close()
        assert.are.equal("ok\n", out, "job " .. i)
      end
      local h = assert(history.open(url))
      assert.are.equal(9, tonumber(h.st:row("SELECT count(*) FROM runs")[1]))
      assert.are.equal(2700, tonumber(h.st:row("SELECT count(*) FROM points")[1]))
      assert.are.equal(300, tonumber(h.st:row("SELECT count(*) FROM series")[1]))
      h:close()
    end)

    it("exports a run as Bencher Metric Format, and draws the trend page with its data escaped", function()
      local h = assert(history.open(fresh(kind)))
      assert(h:add({ rec("p", "</script><!--", "Ir", 5) }, { commit = "a", branch = "main", machine = "m", time = 1 }))
      assert(h:add({ rec("p", "</script><!--", "Ir", 7) }, { commit = "b", branch = "main", machine = "m", time = 2 }))
      assert(h:add({ { check = "spread", name = "lua", target = "total", event = "Instr", new = 10, lo = 9, hi = 12 } },
        { commit = "b", branch = "main", machine = "m" }))
      assert.are.equal('{"lua/total/Instr":{"instr":{"lower_value":9,"upper_value":12,"value":10}},'
        .. '"p/</script><!--/Ir":{"ir":{"value":7}}}\n', h:bmf())
      assert.are.equal('{"p/</script><!--/Ir":{"ir":{"value":5}}}\n', h:bmf({ commit = "a" }))
      local page = h:html()
      local data = page:match('<script type="application/json" id="data">(.-)</script>')
      assert.is_nil(data:find("<", 1, true))
      assert.matches("p/\\u003c/script>\\u003c!--/Ir", data, 1, true)
      assert(h:write_html(dir .. "/trend-" .. kind .. ".html"))
      h:close()
    end)

    it("runs as callgrind-lua history add, show, changes, report and export", function()
      local url = fresh(kind)
      local record = dir .. "/rec-" .. kind .. ".jsonl"
      local function run(argv)
        local out, err = {}, {}
        local code = cli.main(argv,
          { write = function(_, ...) for _, s in ipairs({ ... }) do out[#out + 1] = s end end },
          { write = function(_, ...) for _, s in ipairs({ ... }) do err[#err + 1] = s end end })
        return code, table.concat(out), table.concat(err)
      end
      for i, v in ipairs({ 100, 100, 130 }) do
        H.write_file(record, require("callgrind.check.record").encode(rec("b", "total", "Ir", v)))
        local code, out = run({ "history", "add", "--store", url, "--commit", "k" .. i, "--branch", "main",
          "--machine", "m", "--time", tostring(i), record })
        assert.are.equal(0, code)
        assert.matches("added a run: commit k" .. i .. " on main %(m%)", out)
      end
      local code, out = run({ "history", "show", "--store", url, "b/total/Ir" })
      assert.are.equal(0, code)
      assert.matches("k3 +1970%-01%-01T00:00:03Z +main@m +130", out)
      code, out = run({ "history", "changes", "--store", url })
      assert.are.equal(0, code)
      assert.matches("^k3 .* b/total/Ir %(main%): 100 %-> 130 %(%+30%.00%%%)", out)
      code, out = run({ "history", "export", "--store", url, "--format", "bmf" })
      assert.are.same({ 0, '{"b/total/Ir":{"ir":{"value":130}}}\n' }, { code, out })
      code = run({ "history", "report", "--store", url, "-o", dir .. "/t.html" })
      assert.are.equal(0, code)
      assert.matches("b/total/Ir", H.read_file(dir .. "/t.html"), 1, true)
      local _, _, err = run({ "history", "frob" })
      assert.matches("unknown history subcommand frob", err)
    end)
  end)
end

describe("callgrind.history's context", function()
  it("takes the commit, branch and machine from the CI's variables", function()
    local out = H.fresh_lua('local c = require("callgrind.history").context() print(c.commit, c.branch, c.machine, '
      .. 'c.time)', "GITHUB_SHA=feed GITHUB_HEAD_REF= GITHUB_REF_NAME=topic CALLGRIND_MACHINE=ci-7 "
      .. "CI_COMMIT_TIMESTAMP=2024-05-01T12:00:00Z")
    assert.are.equal("feed\ttopic\tci-7\t1714564800\n", out)
  end)

  it("reads the commit and its time from git", function()
    local c = assert(history.context({ branch = "b", machine = "m" }))
    -- (another commit may land meanwhile: the time of the commit found)
    local iso = H.run("git log -1 --format=%cI " .. c.commit):match("%S+")
    assert.are.equal(40, #c.commit)
    assert.are.equal(history.parse_time(iso), c.time)
  end)

  it("parses ISO 8601 times with their zones", function()
    assert.are.equal(0, history.parse_time("1970-01-01T00:00:00Z"))
    assert.are.equal(-3600, history.parse_time("1970-01-01T00:00:00+01:00"))
    assert.are.equal(1714564800, history.parse_time("2024-05-01 12:00:00"))
    assert.is_nil(history.parse_time("yesterday"))
  end)
end)
