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
    -- the change with its share, each with its + on an increase
    assert.are.same({ ev, commas(o), commas(n), ("%s%s (%s%.1f%%)"):format(n - o > 0 and "+" or "", commas(n - o),
      n - o >= 0 and "+" or "", 100 * (n - o) / o) }, t.diff.totals[1])
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
      assert.are.equal(r.percent and string.format("%s%.1f%%", r.percent > 0 and "+" or "", r.percent) or "new", row[5])
    end
  end)

  it("opens its call-graph view on the root in the middle of its box, however many callees it has", function()
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
    -- main sits in the box's middle as it opens, its callees from the
    -- costliest down beside it: no scrolling to see either
    assert.are.equal(0, t.opened.scrolled)
    assert.is_true(t.opened.offcentre <= 2, "main is " .. t.opened.offcentre .. " px off the box's middle")
  end)
end)

-- A profile as valgrind makes one of a large C++ program (issue 45): the
-- dynamic loader's entry (no caller, self cost 15) calls everything;
-- main calls f1..f40 (costs of 12 digits, long names and paths, each a
-- line of src.c); one name of 20,000 characters; hot_leaf has 14 callers
-- whose calls into it are not in the order of their own inclusive cost.
local function big_name(k)
  return ("gcc::tree_ssa_loop_ivopts::candidate_cost_model<std::vector<iv_use*>>::estimate_%d(loop*, bool)"):format(k)
end

local function big_profile(at)
  local L = { "events: Ir", "ob=/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "fl=rtld.c",
    "fn=0x000000000001ab70", "1 15", "cob=/usr/bin/cc1", "cfl=libc-start.c", "cfn=(below main)", "calls=1 1",
    "1 900000000000", "cfn=_dl_start", "calls=1 1", "1 2000", "fn=_dl_start", "1 2000",
    "ob=/usr/bin/cc1", "fl=libc-start.c", "fn=(below main)", "1 11", "cfl=src.c", "cfn=main", "calls=1 1",
    "1 899999999989" }
  local src = {}
  local name = big_name
  -- main: self 9, then f1..f40 (f_k: 22,000,000,000 - k * 100,000,000 in all) and the long name
  L[#L + 1] = "fl=src.c"
  L[#L + 1] = "fn=main"
  L[#L + 1] = "1 9"
  local sum = 9
  for k = 1, 40 do
    local cost = 22000000000 - k * 100000000
    L[#L + 1] = "cfn=" .. name(k)
    L[#L + 1] = "calls=1 1"
    L[#L + 1] = "1 " .. cost
    sum = sum + cost
  end
  L[#L + 1] = "cfn=" .. ("x"):rep(20000)
  L[#L + 1] = "calls=1 1"
  L[#L + 1] = "1 " .. (899999999989 - sum)
  L[#L + 1] = "fn=" .. ("x"):rep(20000)
  L[#L + 1] = "1 " .. (899999999989 - sum)
  -- f_k: its line k of src.c; f1..f14 call hot_leaf, f_k's call costing (k * 7 mod 15) * 1,000,000
  local path = "/build/gcc-12-Xq3/src/gcc/tree-ssa-loop-ivopts-candidate-cost-model-estimates/"
  for k = 1, 40 do
    local cost = 22000000000 - k * 100000000
    L[#L + 1] = "fl=src.c"
    L[#L + 1] = "fn=" .. name(k)
    if k <= 14 then
      local c = (k * 7 % 15) * 1000000
      L[#L + 1] = k .. " " .. (cost - c)
      L[#L + 1] = "cfl=" .. path .. "leaf.cc"
      L[#L + 1] = "cfn=hot_leaf"
      L[#L + 1] = "calls=" .. k .. " 1"
      L[#L + 1] = k .. " " .. c
    else
      L[#L + 1] = k .. " " .. cost
    end
    src[k] = ("  int line_%d = estimate(%d);"):format(k, k)
  end
  local leaf = 0
  for k = 1, 14 do leaf = leaf + (k * 7 % 15) * 1000000 end
  L[#L + 1] = "fl=" .. path .. "leaf.cc"
  L[#L + 1] = "fn=hot_leaf"
  L[#L + 1] = "1 " .. leaf
  H.write_file(at .. "/src.c", table.concat(src, "\n") .. "\n")
  return assert(callgrind.parse(table.concat(L, "\n") .. "\n", "cc1-like"))
end

-- The report of big_profile at 1,280 pixels: what the page showed.
local function big_report(firefox)
  local prof = big_profile(dir)
  local report = dir .. (firefox and "/bigf.html" or "/big.html")
  assert(prof:write_html(report, { source_root = dir }))
  local t = check(report, { probe = 1, width = 1280, select = big_name(35) }, firefox)
  assert.are.same({}, t.errors)
  assert.are.same({}, t.requests)
  -- the table fits the window: no column off screen, nothing to scroll sideways
  assert.are.same({}, t.layout.offscreen)
  assert.is_true(t.layout.page <= t.layout.window, t.layout.page .. " > " .. t.layout.window)
  assert.is_true(t.layout.table <= t.layout.box, t.layout.table .. " > " .. t.layout.box)
  -- the long names shortened in the middle, whole on hover
  local long = 0
  for _, n in ipairs(t.layout.names) do
    if n[2] >= 90 then
      long = long + 1
      assert.is_true(n[3], "a long name is shortened in the middle")
      assert.is_true(n[1] < 90)
    end
  end
  assert.are.equal(41, long)
  -- it opens on main, not on the loader's entry
  assert.are.same({ "main", commas(prof:func("main"):inclusive("Ir")) }, t.opened.self)
  -- the source of f35 (the 39th function by inclusive cost): its line, cost and text
  local fn = prof:func(big_name(35))
  local text = {}
  for _, c in utf8.codes("int line_35 = estimate(35);") do text[#text + 1] = c end
  assert.are.same({ { "src.c:35", commas(fn:self("Ir")), text } }, t.selected.lines)
  return prof, t
end

describe("the report of a large profile at 1,280 pixels in headless Chromium (issue 45)", function()
  it("fits the window, opens on main, and has the source of a function outside the top 30", function()
    big_report(false)
  end)

  it("shows the costliest calls into a function in its call-graph box without scrolling", function()
    local prof = big_profile(dir)
    local report = dir .. "/leaf.html"
    assert(prof:write_html(report))
    local t = check(report, { probe = 1, width = 1280, select = "hot_leaf" })
    assert.are.same({}, t.errors)
    local callers = prof:func("hot_leaf"):caller_functions():sort("Ir")
    -- the calls' costs are (k * 7 mod 15) millions: not the callers' order
    local visible = t.selected.visible
    assert.is_true(#visible >= 5, #visible .. " callers visible")
    local want = {}
    for i = 1, #visible do want[callers[i].fn.name] = true end
    for _, name in ipairs(visible) do assert.is_true(want[name], name .. " is not among the costliest calls") end
  end)

  it("shows a diff's summary compactly above the table, '+' on increases, the colour deeper with the ratio", function()
    -- main calls g10, g20, g50, g55, g56 (cheaper by that %), u100 (twice
    -- as costly) and h1..h60 (60 movers)
    local function side(new)
      local L, body = { "events: Ir", "fn=main", "1 1" }, {}
      local function leaf(name, cost)
        L[#L + 1] = "cfn=" .. name
        L[#L + 1] = "calls=1 1"
        L[#L + 1] = "1 " .. cost
        body[#body + 1] = "fn=" .. name
        body[#body + 1] = "1 " .. cost
      end
      for _, p in ipairs({ 10, 20, 50, 55, 56 }) do leaf("g" .. p, new and 1000 - 10 * p or 1000) end
      leaf("u100", new and 2000 or 1000)
      for k = 1, 60 do leaf("h" .. k, new and 2 + k or 2) end
      return assert(callgrind.parse(table.concat(L, "\n") .. "\n" .. table.concat(body, "\n") .. "\n",
        new and "new" or "old"))
    end
    local d = callgrind.diff(side(false), side(true))
    local report = dir .. "/dd.html"
    assert(d:write_html(report))
    local t = check(report, { probe = 1, width = 1280 })
    assert.are.same({}, t.errors)
    assert.are.same({}, t.layout.offscreen)
    -- the function table starts in the first screen, the flame graph below it
    assert.is_true(t.layout.top < 450, "the table starts at " .. t.layout.top .. " px")
    local frames = {}
    for _, f in ipairs(t.frames) do frames[f[1]] = f end
    local function depth(name)
      local r, g, b = frames[name][2]:match("rgb%((%d+), (%d+), (%d+)%)")
      r, g, b = tonumber(r), tonumber(g), tonumber(b)
      return r == 255 and 255 - g or 255 - r, r == 255 and "red" or b == 255 and "blue" or "?"
    end
    -- the larger the change, the deeper the colour: 56% cheaper is not paler than 55%
    local last = 0
    for _, p in ipairs({ 10, 20, 50, 55, 56 }) do
      local dep, hue = depth("g" .. p)
      assert.are.equal("blue", hue)
      assert.is_true(dep > last, ("g%d: %d after %d"):format(p, dep, last))
      last = dep
      assert.are.equal(("(-%.1f%%)"):format(p), frames["g" .. p][3])
    end
    -- twice as costly as deep as half as costly, and with its +
    assert.are.same({ (depth("g50")), "red" }, { depth("u100") })
    assert.are.equal("(+100.0%)", frames.u100[3])
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

  it("fits 1,280 pixels, opens on main, and has the source of a function outside the top 30, as in Chromium", function()
    big_report(true)
  end)
end)
