-- The HTML report in real browsers: headless Chromium (and Firefox) driven by
-- puppeteer-core (spec/browser/report_check.js). `make check-browser`
-- installs both and runs this file (busted --pattern=_browser spec/browser);
-- it is not part of the default suite, whose ASan run preloads a runtime
-- the browser cannot start under. Every number is checked against the API.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"
local F = require "spec.support.files"

local commas = callgrind.format.commas

local dir

-- Runs the checker on a report: what the page showed (a table). With
-- firefox, in Debian's Firefox ESR instead of Chromium.
local function check(report, plan, firefox)
  local planfile = dir .. "/plan.json"
  local parts = {}
  for k, v in pairs(plan) do
    parts[#parts + 1] = string.format("%q:%s", k, type(v) == "number" and tostring(v) or string.format("%q", v))
  end
  H.write_file(planfile, "{" .. table.concat(parts, ",") .. "}")
  local shot = report:gsub("%.html$", ".png")
  local node_path = os.getenv("NODE_PATH") or "build/node/node_modules"
  local out = H.run(("%sNODE_PATH=%s node spec/browser/report_check.js %s %s %s"):format(
    firefox and "FIREFOX=/usr/bin/firefox-esr " or "", H.shq(node_path),
    H.shq(report), H.shq(planfile), H.shq(shot)), "node spec/browser/report_check.js (make check-browser installs "
    .. "chromium and puppeteer-core)")
  -- the checker's JSON, read with the library's own JSON-free means: load it as Lua
  local lua = out:gsub('"([^"]-)":', '["%1"]='):gsub("%[", "{"):gsub("%]", "}"):gsub('{"([^"]-)"}=', '["%1"]=')
  local ok, t = pcall(load("return " .. lua, "json", "t", {}))
  assert(ok and type(t) == "table", "cannot read the checker's output: " .. out)
  return t, shot
end

setup(function() dir = F.tmpdir() end)
teardown(function() F.remove(dir) end)

-- The first report in a browser: the checks of the first case below.
local function the_extended_report(firefox)
  local prof = assert(callgrind.load("spec/fixtures/extended.callgrind"))
  local report = dir .. (firefox and "/rf.html" or "/r.html")
  assert(prof:write_html(report))
  local t, shot = check(report, { filter = "func", select = "func2", zoom = "func1", event_index = 0 }, firefox)
  assert.are.same({}, t.errors)
  assert.are.same({}, t.requests)
  -- sorted by self: the order of prof:top(n, ev, "self")
  local want = {}
  for _, fn in ipairs(prof:top(3, "Instructions")) do want[#want + 1] = fn.name end
  assert.are.same(want, t.by_self)
  want = {}
  for _, fn in ipairs(prof:top(3, "Instructions", "inclusive")) do want[#want + 1] = fn.name end
  assert.are.same(want, t.by_incl_event)
  assert.are.same({ "func2", "func1" }, t.filtered)
  -- the selected function: self, inclusive, callers and callees as the API's
  local fn = prof:func("func2")
  assert.are.equal("func2", t.detail.name)
  assert.are.equal(commas(fn:self("Instructions")), t.detail.self)
  assert.are.equal(commas(fn:inclusive("Instructions")), t.detail.incl)
  local callers = fn:caller_functions():sort("Instructions")
  assert.are.equal(#callers, #t.detail.callers)
  for i = 1, #callers do
    assert.are.same({ callers[i].fn.name, commas(callers[i].count), commas(callers:cost(i, "Instructions")) },
      t.detail.callers[i])
  end
  assert.are.same({ { "file2.c:20", "700", "" } }, t.detail.lines)
  -- it opens on the root (main: nothing calls it), and the selected
  -- function's place in the call graph: callers -> it -> callees, each
  -- with its inclusive cost and the call's
  assert.are.same({ "main", commas(prof:func("main"):inclusive("Instructions")) }, t.opened.self)
  local function place(rows)
    local out = {}
    for i = 1, #rows do
      out[i] = { rows[i].fn.name, commas(rows[i].fn:inclusive("Instructions")), commas(rows:cost(i, "Instructions")) }
    end
    return out
  end
  assert.are.same({ "func2", commas(fn:inclusive("Instructions")) }, t.graph.self)
  assert.are.same(place(callers), t.graph.callers)
  local callees = fn:callee_functions():sort("Instructions")
  local want_callees = {}
  for i, row in ipairs(place(callees)) do
    if callees[i].fn ~= fn then want_callees[#want_callees + 1] = row end
  end
  assert.are.same(want_callees, t.graph.callees)
  -- the flame graph says which stacks it holds, and a click zooms
  assert.matches("^stacks estimated from the call graph", t.flamenote)
  assert.are_not.equal("0", t.flame.zoom)
  assert.matches("zoomed: func1", t.flame.all)
  assert.are.equal("func1", t.flame.widest[1])
  assert.are.equal(t.flame.width, t.flame.widest[2])
  assert.are.equal("0", t.flame.unzoom)
  assert.is_true(#H.read_file(shot) > 1000)
end

describe("the HTML report in headless Chromium", function()
  it("has no console error and no request, sorts, filters, and shows the API's numbers", function()
    the_extended_report(false)
  end)

  it("shows a diff's totals and movers as callgrind.diff has them", function()
    local old = assert(callgrind.load("spec/fixtures/moved-old.callgrind"))
    local new = assert(callgrind.load("spec/fixtures/moved-new.callgrind"))
    local d = callgrind.diff(old, new)
    local report = dir .. "/d.html"
    assert(d:write_html(report))
    local top = new:top(1, new.events[1])[1]
    local t = check(report, { filter = top.name, select = top.name, zoom = top.name })
    assert.are.same({}, t.errors)
    assert.are.same({}, t.requests)
    assert.matches("^the new profile's stacks, coloured by change", t.flamenote)
    local ev = new.events[1]
    local o, n = d:total(ev)
    assert.are.same({ ev, commas(o), commas(n), (n - o > 0 and "+" or "") .. commas(n - o) }, t.diff.totals[1])
    -- the share matched function by function: d:matched's
    local m = d:matched(ev)
    assert.are.same({ { "the costs compared function by function", commas(m.functions), commas(m.old),
      string.format("%.1f%%", 100 * m.old_share), commas(m.new), string.format("%.1f%%", 100 * m.new_share) } },
      t.diff.matched)
    local movers = d:movers(ev)
    assert.are.equal(#movers, #t.diff.movers)
    for i, r in ipairs(movers) do
      local row = t.diff.movers[i]
      assert.are.same({ r.name, commas(r.old), commas(r.new) }, { row[1], row[2], row[3] })
      assert.are.equal((r.delta > 0 and "+" or "") .. commas(r.delta), row[4])
      assert.are.equal(r.percent and string.format("%.1f%%", r.percent) or "new", row[5])
    end
  end)

  it("opens its call-graph view on the root, centred, however many callees it has", function()
    -- main calls f1..f20 (f1 the costliest); the 12 costliest are drawn, "8 more"
    local lines = { "events: Ir", "fn=main", "1 1" }
    for k = 1, 20 do
      lines[#lines + 1] = "cfn=f" .. k
      lines[#lines + 1] = "calls=1 1"
      lines[#lines + 1] = "2 " .. (100 - k)
    end
    for k = 1, 20 do
      lines[#lines + 1] = "fn=f" .. k
      lines[#lines + 1] = "1 " .. (100 - k)
    end
    -- init: nobody calls it either, but it is colder than main (main is the entry)
    lines[#lines + 1] = "fn=init"
    lines[#lines + 1] = "1 50"
    local prof = assert(callgrind.parse(table.concat(lines, "\n") .. "\n", "wide"))
    local report = dir .. "/w.html"
    assert(prof:write_html(report))
    local t = check(report, { filter = "main", select = "main", zoom = "main", only_open = 1 })
    assert.are.same({}, t.errors)
    assert.are.same({}, t.requests)
    assert.are.same({ "main", commas(prof:func("main"):inclusive("Ir")) }, t.opened.self)
    assert.are.equal(12, #t.opened.callees)
    assert.are.same({ "f1", "99", "99" }, t.opened.callees[1])
    assert.are.same({ "8 more" }, t.opened.more)
    -- the box scrolled so that main sits in its middle
    assert.is_true(t.opened.scrolled > 0)
    assert.is_true(t.opened.offcentre <= 2, "main is " .. t.opened.offcentre .. " px off the box's middle")
  end)
end)

describe("the HTML report of hostile names in headless Chromium (issue 42)", function()
  it("shows every row, each name as util.printable shows it, drawn left to right", function()
    local util = require "callgrind.util"
    local NAMES = { "<!--<script>", "</script>", "<script>alert(1)</script>", "rtl\u{202E}gnp.exe",
      "iso\u{2066}x\u{2069}y", "marks\u{200E}\u{200F}\u{61C}", "clear\27[2J", "c1\u{9B}2J", "<!--", "ok" }
    local lines = { "events: Ir", "fn=main", "1 1" }
    for i, name in ipairs(NAMES) do
      lines[#lines + 1] = "cfn=" .. name
      lines[#lines + 1] = "calls=1 1"
      lines[#lines + 1] = (i + 1) .. " " .. (i * 10)
    end
    for i, name in ipairs(NAMES) do
      lines[#lines + 1] = "fn=" .. name
      lines[#lines + 1] = "1 " .. (i * 10)
    end
    local prof = assert(callgrind.parse(table.concat(lines, "\n") .. "\n", "hostile"))
    local report = dir .. "/hostile.html"
    assert(prof:write_html(report, { title = "t\u{202E}<!--<script>", threshold = 0 }))
    local t = check(report, { names_only = 1 })
    assert.are.same({}, t.errors)
    assert.are.same({}, t.requests)
    local function text(cps)
      local s = {}
      for i, c in ipairs(cps) do s[i] = utf8.char(c) end
      return table.concat(s)
    end
    local rows = {}
    for i, cps in ipairs(t.names.rows) do rows[i] = text(cps) end
    table.sort(rows)
    local want = { "main" }
    for _, name in ipairs(NAMES) do want[#want + 1] = util.printable(name) end
    table.sort(want)
    -- every function has its row (a blanked page has none), shown escaped
    assert.are.same(want, rows)
    for i, ltr in ipairs(t.names.ltr) do assert.is_true(ltr, text(t.names.rows[i])) end
    -- the flame graph draws every name too
    local frames = {}
    for _, cps in ipairs(t.names.frames) do frames[text(cps)] = true end
    for _, name in ipairs(NAMES) do assert.is_true(frames[util.printable(name)], util.printable(name)) end
    -- no control or bidirectional control anywhere in the page's text
    for _, c in ipairs(t.names.body) do
      assert.is_false(c < 32 and c ~= 9 and c ~= 10 or c >= 0x7F and c <= 0x9F or c == 0x61C or c == 0x200E
        or c == 0x200F or c >= 0x2028 and c <= 0x202E or c >= 0x2066 and c <= 0x2069, ("U+%04X"):format(c))
    end
  end)
end)

describe("the HTML report in headless Firefox", function()
  it("opens from disk as in Chromium: no console error, no request, the same sorting, filter and numbers", function()
    the_extended_report(true)
  end)
end)
