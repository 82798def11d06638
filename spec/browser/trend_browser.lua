-- The history's trend page (callgrind-lua history report, issue 44) in
-- headless Chromium, driven by puppeteer-core (spec/browser/trend_check.js;
-- `make check-browser`): 200 commits of a profile's series with a planted
-- regression; the page must draw a chart per series, mark exactly the
-- steps hist:changes() finds, and show, on a click on the planted step,
-- its commit and the functions that moved there, as the API has them.
local callgrind = require "callgrind"
local history = require "callgrind.history"
local cli = require "callgrind.cli"
local H = require "spec.support.helpers"
local F = require "spec.support.files"
require "luasql.sqlite3"  -- Debian lua-sql-sqlite3

local commas = callgrind.format.commas

-- The checker's output: JSON (objects, arrays, strings, numbers, true,
-- false, null) decoded here, the spec's own.
local function decode(s)
  local pos = 1
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local c = s:sub(pos, pos)
      assert(c ~= "", "unterminated string")
      if c == '"' then pos = pos + 1; return table.concat(out) end
      if c == "\\" then
        local e = s:sub(pos + 1, pos + 1)
        if e == "u" then
          local cp = tonumber(s:sub(pos + 2, pos + 5), 16)
          pos = pos + 6
          if cp >= 0xD800 and cp <= 0xDBFF then
            local lo = tonumber(s:sub(pos + 2, pos + 5), 16)
            cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
            pos = pos + 6
          end
          out[#out + 1] = utf8.char(cp)
        else
          out[#out + 1] = ({ b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" })[e] or e
          pos = pos + 2
        end
      else
        out[#out + 1] = c
        pos = pos + 1
      end
    end
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" or c == "[" then
      local t, close = {}, c == "{" and "}" or "]"
      pos = pos + 1
      ws()
      if s:sub(pos, pos) == close then pos = pos + 1; return t end
      while true do
        if close == "}" then
          ws()
          local k = str()
          ws()
          assert(s:sub(pos, pos) == ":", "':' expected at " .. pos)
          pos = pos + 1
          t[k] = value()
        else
          t[#t + 1] = value()
        end
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == close then return t end
        assert(d == ",", "',' expected at " .. (pos - 1))
      end
    end
    if c == '"' then return str() end
    for word, v in pairs({ ["true"] = true, ["false"] = false, null = false }) do
      if s:sub(pos, pos + #word - 1) == word then pos = pos + #word; return v end
    end
    local num = assert(s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos), "a value expected at " .. pos)
    pos = pos + #num
    return tonumber(num)
  end
  local v = value()
  ws()
  assert(pos > #s, "more after the value at " .. pos)
  return v
end

-- The page's share: JavaScript's x.toFixed(2) with its sign.
local function pct(x)
  if x == nil then return "from 0" end
  return (x > 0 and "+" or "") .. string.format("%.2f%%", x)
end

local dir

setup(function() dir = F.tmpdir() end)
teardown(function() F.remove(dir) end)

-- Runs the checker: what the page showed (a table), and the screenshot's path.
local function check(page, plan)
  local planfile = dir .. "/trend-plan.json"
  H.write_file(planfile, history.json(plan))
  local shot = page:gsub("%.html$", ".png")
  local node_path = os.getenv("NODE_PATH") or "build/node/node_modules"
  local out = H.run(("NODE_PATH=%s node spec/browser/trend_check.js %s %s %s"):format(H.shq(node_path),
    H.shq(page), H.shq(planfile), H.shq(shot)), "node spec/browser/trend_check.js (make check-browser installs "
    .. "chromium and puppeteer-core)")
  return decode(out), shot
end

-- A profile's series for 200 commits: the total and three functions'
-- self costs; at c137 parse costs 100 more and emit 40 more (the planted
-- regression), at c160 lex 30 less.
local function fill(url)
  local h = assert(history.open(url))
  for i = 1, 200 do
    local parse = 1000 + (i >= 137 and 100 or 0)
    local emit = 300 + (i >= 137 and 40 or 0)
    local lex = 200 - (i >= 160 and 30 or 0)
    local recs = { { name = "gen", target = "total", event = "Ir", kind = "total", new = parse + emit + lex } }
    for _, f in ipairs({ { "parse", parse }, { "lex", lex }, { "emit", emit } }) do
      recs[#recs + 1] = { name = "gen", target = f[1], event = "Ir", kind = "self", new = f[2] }
    end
    assert(h:add(recs, { commit = ("c%03d"):format(i), branch = "main", machine = "ci", time = 1700000000 + i * 60 }))
  end
  return h
end

describe("the history's trend page in headless Chromium (issue 44)", function()
  it("draws a chart per series, marks the steps hist:changes() finds, and shows the planted one's commit and "
    .. "movers on a click", function()
    local url = "sqlite:" .. dir .. "/trend.db"
    local h = fill(url)
    local page = dir .. "/trend.html"
    -- the page as the command writes it
    local code = cli.main({ "history", "report", "--store", url, "-o", page },
      { write = function() end }, { write = function(_, ...) io.stderr:write(...) end })
    assert.are.equal(0, code)
    local t, shot = check(page, { series = "gen/total/Ir", commit = "c137" })
    assert.are.same({}, t.errors)
    assert.are.same({}, t.requests)
    -- a chart per series, each with its 200 points
    local names = h:series()
    assert.are.same({ "gen/emit/Ir/self", "gen/lex/Ir/self", "gen/parse/Ir/self", "gen/total/Ir" }, names)
    local drawn = {}
    for i, c in ipairs(t.charts) do
      drawn[i] = c.series
      assert.are.same({ 1, 200 }, { c.svg, c.points }, c.series)
    end
    assert.are.same(names, drawn)
    assert.are.equal("4 charts", t.count)
    -- the marked points are the API's steps, up and down
    local marked, want = {}, {}
    for _, c in ipairs(t.charts) do
      for _, commit in ipairs(c.up) do marked[#marked + 1] = c.series .. " up " .. commit end
      for _, commit in ipairs(c.down) do marked[#marked + 1] = c.series .. " down " .. commit end
    end
    local changes = assert(h:changes())
    for _, c in ipairs(changes) do
      want[#want + 1] = c.series .. (c.delta > 0 and " up " or " down ") .. c.commit
    end
    table.sort(marked)
    table.sort(want)
    assert.are.same({ "gen/emit/Ir/self up c137", "gen/lex/Ir/self down c160", "gen/parse/Ir/self up c137",
      "gen/total/Ir down c160", "gen/total/Ir up c137" }, want)
    assert.are.same(want, marked)
    -- the click on the total's step at c137: its commit, value, step, and
    -- the series that moved there by the size of their change
    local at = {}
    for _, c in ipairs(changes) do if c.commit == "c137" then at[#at + 1] = c end end
    table.sort(at, function(a, b)
      if math.abs(a.delta) ~= math.abs(b.delta) then return math.abs(a.delta) > math.abs(b.delta) end
      return a.series < b.series
    end)
    local total = h:show("gen/total/Ir")
    assert.are.equal("c137", total[137].commit)
    assert.are.equal("c137", t.detail.commit)
    assert.are.same({ "c137" }, t.detail.selected)
    assert.are.equal(commas(total[137].value), t.detail.value)
    assert.are.equal(("step from c136: %s \u{2192} %s (%s)"):format(commas(total[136].value),
      commas(total[137].value), pct(at[1].share)), t.detail.step)
    local rows = {}
    for i, c in ipairs(at) do rows[i] = { c.series, commas(c.before), commas(c.after), pct(c.share) } end
    assert.are.same({ "gen/total/Ir", "gen/parse/Ir/self", "gen/emit/Ir/self" },
      { rows[1][1], rows[2][1], rows[3][1] })
    assert.are.same(rows, t.detail.moved)
    assert.is_true(#H.read_file(shot) > 1000)
    h:close()
  end)
end)
