-- The pictures: SVG flame graphs (read back with python3's XML parser),
-- DOT call graphs (through Graphviz's dot) and pprof files (through go
-- tool pprof), on hand-worked profiles and on names with awkward bytes.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local F = require "spec.support.files"
local have, tmpdir, ls = F.have, F.tmpdir, F.ls
local function python(program, path) return F.python(program, path) end

-- The frames of a flame graph: one line per <g class="f">, "title's first
-- line|rect width|fill". Fails unless the file is well-formed XML.
local SVG_FRAMES = [[
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
for g in root.iter("{http://www.w3.org/2000/svg}g"):
    if g.get("class") != "f": continue
    title = g.find("s:title", ns).text
    rect = g.find("s:rect", ns)
    line = title.split("\n")[0] + "|" + rect.get("width") + "|" + rect.get("fill") + "\n"
    sys.stdout.buffer.write(line.encode("utf-8"))
]]

-- The text of every <text> of an SVG, one a line.
local SVG_TEXTS = [[
import sys, xml.etree.ElementTree as ET
for t in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text"):
    sys.stdout.buffer.write(((t.text or "") + "\n").encode("utf-8"))
]]

-- The legend of a flame graph: one line per <g class="legend">, "label|
-- swatch fill|title".
local SVG_LEGEND = [[
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
for g in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}g"):
    if g.get("class") != "legend": continue
    line = g.find("s:text", ns).text + "|" + g.find("s:rect", ns).get("fill") + "|" + g.find("s:title", ns).text
    sys.stdout.buffer.write((line + "\n").encode("utf-8"))
]]

-- spec/fixtures/graph.callgrind: its stacks are worked by hand in
-- spec/stacks_spec.lua
local GRAPH = H.read_file("spec/fixtures/graph.callgrind")

-- Names with every kind of awkward byte a callgrind file can hold.
local NAMES = { "semi;colon", 'quo"te', "<tag>&amp;", "com,ma", "back\\slash", "bad\255\254utf8",
  "tab\there", "ünïcödé" }
local function weird_profile()
  local lines = { "events: Ir", "fn=main", "1 1" }
  for i, name in ipairs(NAMES) do
    lines[#lines + 1] = "cfn=" .. name
    lines[#lines + 1] = "calls=1 1"
    lines[#lines + 1] = (i + 1) .. " " .. (i * 100)
  end
  for i, name in ipairs(NAMES) do
    lines[#lines + 1] = "fn=" .. name
    lines[#lines + 1] = "1 " .. (i * 100)
  end
  return assert(callgrind.parse(table.concat(lines, "\n") .. "\n", "weird"))
end
-- How pictures show a name: bytes that are not UTF-8 and control
-- characters as \xNN.
local SHOWN = { "semi;colon", 'quo"te', "<tag>&amp;", "com,ma", "back\\slash", "bad\\xFF\\xFEutf8",
  "tab\\x09here", "ünïcödé" }

describe("prof:flamegraph", function()
  local prof = assert(callgrind.parse(GRAPH, "graph"))

  it("writes well-formed SVG with one frame per stack above the threshold, width in cost", function()
    local dir = tmpdir()
    assert.is_true(prof:write_flamegraph(dir .. "/f.svg"))
    local frames = {}
    for line in python(SVG_FRAMES, dir .. "/f.svg"):gmatch("[^\n]+") do
      local name, width = line:match("^(.-)|(.-)|")
      frames[#frames + 1] = name .. " " .. width
    end
    -- all 170, main 170, a 100, c 80, d 61, b 60, c 50, d 39 on 1200
    -- pixels (the estimate of stacks_spec.lua)
    assert.are.same({ "all 1200.00", "main 1200.00", "a 705.88", "c 564.71", "d 430.59", "b 423.53",
      "c 352.94", "d 275.29" }, frames)
    -- threshold 0.3 (51 of 170): the c and d under b are not made, their
    -- cost goes to c and d under a (stacks_spec.lua), b keeps 10 and is
    -- merged into main: all, main, a, c, d
    assert.is_true(prof:write_flamegraph(dir .. "/t.svg", nil, { threshold = 0.3 }))
    local n = 0
    for _ in python(SVG_FRAMES, dir .. "/t.svg"):gmatch("[^\n]+") do n = n + 1 end
    assert.are.equal(5, n)
    -- the script, the title and the frames' titles are in the file; no
    -- external reference
    local svg = H.read_file(dir .. "/f.svg")
    assert.is_truthy(svg:find("<script", 1, true))
    assert.is_truthy(svg:find("<title>main\n170 Ir (100.00%)</title>", 1, true))
    assert.is_nil(svg:find("xlink:href", 1, true))
    assert.is_nil(svg:find("href", 1, true))
    F.remove(dir)
  end)

  it("escapes names with any bytes", function()
    local dir = tmpdir()
    assert.is_true(weird_profile():write_flamegraph(dir .. "/w.svg"))
    local names = {}
    for line in python(SVG_FRAMES, dir .. "/w.svg"):gmatch("[^\n]+") do
      names[#names + 1] = line:match("^(.-)|")
    end
    table.remove(names, 1)   -- all
    table.remove(names, 1)   -- main
    local want = {}
    for i = #SHOWN, 1, -1 do want[#want + 1] = SHOWN[i] end   -- largest first
    assert.are.same(want, names)
    F.remove(dir)
  end)

  it("colours a diff red where the new profile costs more and blue where less", function()
    local new = assert(callgrind.parse((GRAPH:gsub("fn=d\n1 100", "fn=d\n1 100"):gsub("3 60", "3 90")
      :gsub("fn=b\n1 10", "fn=b\n1 40")), "new"))
    -- new: b costs 90 (was 60), main 200; old: the same elsewhere
    local dir = tmpdir()
    assert.is_true(callgrind.diff(prof, new):write_flamegraph(dir .. "/d.svg"))
    local fill = {}
    for line in python(SVG_FRAMES, dir .. "/d.svg"):gmatch("[^\n]+") do
      local name, _, colour = line:match("^(.-)|(.-)|(.*)$")
      fill[#fill + 1] = name .. " " .. colour
    end
    -- main +30 and b +30 (the largest change): full red; the rest unchanged
    assert.are.same({ "all #ff4141", "main #ff4141", "a #f2f2f2", "c #f2f2f2", "d #f2f2f2", "b #ff4141",
      "c #f2f2f2", "d #f2f2f2" }, fill)
    assert.is_true(callgrind.diff(new, prof):write_flamegraph(dir .. "/r.svg"))
    assert.is_truthy(H.read_file(dir .. "/r.svg"):find('fill="#4141ff"', 1, true))
    F.remove(dir)
  end)

  it("pairs frames by the diff's match keys: a function moved to another file is new under name+file", function()
    local function build(file)
      return assert(callgrind.parse(table.concat({ "events: Ir", "fl=main.c", "fn=main", "1 10", "cfl=" .. file,
        "cfn=parse", "calls=1 1", "1 90", "fl=" .. file, "fn=parse", "1 90", "" }, "\n"), file))
    end
    local old, new = build("a.c"), build("b.c")
    local function shares(match)
      return callgrind.diff(old, new, { match = match }):flamegraph("Ir")
        :match("purple: only in the new, ([%d.]+)%% of its cost; ([%d.]+)%% of the old cost is in stacks gone")
    end
    assert.are.same({ "0.0", "0.0" }, { shares("name") })
    -- parse's 90 of 100 is new under its new file, and gone under its old one
    assert.are.same({ "90.0", "90.0" }, { shares("name+file") })
  end)

  it("colours stacks only in the new profile apart, and says what share they and the stacks gone hold", function()
    local old = assert(callgrind.load("spec/fixtures/moved-old.callgrind"))
    local new = assert(callgrind.load("spec/fixtures/moved-new.callgrind"))
    local d = callgrind.diff(old, new)
    -- fresh (4 of 144 new Ir) has no path in the old profile; helper (7 of 117 old Ir) none in the new
    local legend = "(red: more, blue: less, purple: only in the new, 2.8% of its cost; "
      .. "6.0% of the old cost is in stacks gone)"
    local svg = d:flamegraph("Ir")
    assert.is_truthy(svg:find(">117 Ir -&gt; 144 Ir " .. legend .. "</text>", 1, true), svg:sub(1, 900))
    -- a title of the caller's keeps the legend
    assert.is_truthy(d:flamegraph("Ir", { title = "O0 vs O2" }):find(">O0 vs O2: 117 Ir -&gt; 144 Ir " .. legend
      .. "</text>", 1, true))
    -- a title that long is drawn smaller, so it fits between Reset zoom and
    -- Search (0.6 em a character): 117 characters in 1200 px
    local title = "117 Ir -> 144 Ir " .. legend
    local px = tonumber(svg:match('style="font%-size:(%d+)px">117 Ir'))
    assert.is_true(px < 16 and 0.6 * px * utf8.len(title) <= 1200 - 200, tostring(px))
    assert.is_truthy(callgrind.load("spec/fixtures/extended.callgrind"):flamegraph():find('style="font-size:16px"',
      1, true))
    local dir = tmpdir()
    H.write_file(dir .. "/d.svg", svg)
    local fill = {}
    for line in python(SVG_FRAMES, dir .. "/d.svg"):gmatch("[^\n]+") do
      local name, _, colour = line:match("^(.-)|(.-)|(.*)$")
      fill[name] = colour
    end
    F.remove(dir)
    assert.are.equal("#b07cd8", fill.fresh)
    assert.are_not.equal("#b07cd8", fill.parse)
  end)

  it("has a legend naming each object (or file) with its frames' colour and its share, costliest first", function()
    -- main in /bin/prog (self 10), parse in /lib/libp.so (60), alloc in
    -- /lib/libc.so.6 (30): 100 Ir
    local p = assert(callgrind.parse(table.concat({ "events: Ir", "ob=/bin/prog", "fl=m.c", "fn=main", "1 10",
      "cob=/lib/libp.so", "cfi=p.c", "cfn=parse", "calls=1 1", "2 60", "cob=/lib/libc.so.6", "cfi=c.c", "cfn=alloc",
      "calls=2 1", "3 30", "ob=/lib/libp.so", "fl=p.c", "fn=parse", "1 60", "ob=/lib/libc.so.6", "fl=c.c",
      "fn=alloc", "1 30", "" }, "\n"), "objs"))
    local dir = tmpdir()
    H.write_file(dir .. "/o.svg", p:flamegraph("Ir"))
    local fill = {}
    for line in python(SVG_FRAMES, dir .. "/o.svg"):gmatch("[^\n]+") do
      local name, _, colour = line:match("^(.-)|(.-)|(.*)$")
      fill[name] = colour
    end
    local legend = python(SVG_LEGEND, dir .. "/o.svg")
    assert.are.equal(table.concat({ "libp.so 60.00%|" .. fill.parse .. "|/lib/libp.so: 60 Ir self (60.00%)",
      "libc.so.6 30.00%|" .. fill.alloc .. "|/lib/libc.so.6: 30 Ir self (30.00%)",
      "prog 10.00%|" .. fill.main .. "|/bin/prog: 10 Ir self (10.00%)", "" }, "\n"), legend)
    -- three objects, three colours of the palette, far apart
    assert.are.same({ "#e8743b", "#3b8bc2", "#5fa055" }, { fill.parse, fill.alloc, fill.main })
    -- by file, the legend names the files
    H.write_file(dir .. "/f.svg", p:flamegraph("Ir", { color = "file" }))
    assert.matches("^p%.c 60%.00%%|[^\n]*\nc%.c 30%.00%%|[^\n]*\nm%.c 10%.00%%|", python(SVG_LEGEND, dir .. "/f.svg"))
    -- folded stacks have no objects: no legend
    H.write_file(dir .. "/s.folded", "main;parse 6\nmain 1\n")
    local flame = require "callgrind.export.flame"
    assert.is_true(flame.folded_flamegraph(H.read_file(dir .. "/s.folded"), "s.folded", dir .. "/s.svg"))
    assert.are.equal("", python(SVG_LEGEND, dir .. "/s.svg"))
    -- a diff's legend gives its colours' meanings
    H.write_file(dir .. "/d.svg", callgrind.diff(assert(callgrind.load("spec/fixtures/moved-old.callgrind")),
      assert(callgrind.load("spec/fixtures/moved-new.callgrind"))):flamegraph("Ir"))
    assert.are.equal("more|#ff4141|more\nless|#4141ff|less\nunchanged|#f2f2f2|unchanged\n"
      .. "only in the new (2.8%)|#b07cd8|only in the new (2.8%)\n", python(SVG_LEGEND, dir .. "/d.svg"))
    F.remove(dir)
  end)

  it("returns nil, message, \"io\" for a path it cannot write, and leaves no file", function()
    local dir = tmpdir()
    local ok, err, kind = prof:write_flamegraph(dir .. "/missing/f.svg")
    assert.is_nil(ok)
    assert.are.equal(dir .. "/missing/f.svg: No such file or directory", err)
    assert.are.equal("io", kind)
    assert.are.equal("", ls(dir))
    F.remove(dir)
  end)

  it("returns the SVG it writes, and takes the event first", function()
    local dir = tmpdir()
    assert.is_true(prof:write_flamegraph(dir .. "/f.svg", "Ir", { title = "T" }))
    assert.are.equal(H.read_file(dir .. "/f.svg"), prof:flamegraph("Ir", { title = "T" }))
    assert.are.equal(prof:flamegraph(1), prof:flamegraph(nil, { ev = "Ir" }))
    local d = callgrind.diff(prof, prof)
    assert.is_true(d:write_flamegraph(dir .. "/d.svg"))
    assert.are.equal(H.read_file(dir .. "/d.svg"), d:flamegraph())
    F.remove(dir)
  end)

  it("still writes a file given a path where the event goes (the spelling before 0.2.0)", function()
    local dir = tmpdir()
    -- the deprecation is said once per process on stderr: caught here
    local stderr, said = io.stderr, {}
    -- luacheck: push ignore 122 (io.stderr replaced for one call)
    io.stderr = { write = function(_, ...) for _, s in ipairs({ ... }) do said[#said + 1] = s end end }
    local ok = pcall(prof.flamegraph, prof, dir .. "/old.svg", { title = "T" })
    io.stderr = stderr
    -- luacheck: pop
    assert.is_true(ok)
    said = table.concat(said)
    assert.is_true(said == "" or said:find("^callgrind: flamegraph%(path%) is deprecated: use write_flamegraph") ~= nil,
      said)
    assert.are.equal(prof:flamegraph(nil, { title = "T" }), H.read_file(dir .. "/old.svg"))
    assert.is_true(callgrind.diff(prof, prof):flamegraph(dir .. "/old-d.svg"))
    assert.are.equal(callgrind.diff(prof, prof):flamegraph(), H.read_file(dir .. "/old-d.svg"))
    -- an event name is never taken for a path
    assert.has_error(function() prof:flamegraph("Dr") end,
      "bad argument #1 to 'flamegraph' (unknown event 'Dr'; events: Ir)")
    F.remove(dir)
  end)

  it("rejects bad options naming the function and the value", function()
    assert.has_error(function() prof:flamegraph("Ir", { threshold = 1.5 }) end,
      "bad argument #2 to 'flamegraph' (threshold must be in [0, 1), got 1.5)")
    assert.has_error(function() prof:write_flamegraph("x.svg", nil, { threshold = 1.5 }) end,
      "bad argument #3 to 'write_flamegraph' (threshold must be in [0, 1), got 1.5)")
    assert.has_error(function() prof:flamegraph(nil, { ev = "Dr" }) end,
      "bad argument #1 to 'flamegraph' (unknown event 'Dr'; events: Ir)")
    assert.has_error(function() prof:write_flamegraph("x.svg", "Dr") end,
      "bad argument #2 to 'write_flamegraph' (unknown event 'Dr'; events: Ir)")
    assert.has_error(function() prof:flamegraph("Ir", { colour = "file" }) end,
      "bad argument #2 to 'flamegraph' (unknown option 'colour'; options: collapse_recursion, color, ev, threshold, "
      .. "title, width)")
    assert.has_error(function() prof:write_flamegraph(nil) end,
      "bad argument #1 to 'write_flamegraph' (string expected, got no value)")
  end)
end)

-- The function of a DOT node id ("f3": the function at index 3).
local function internal_name(prof, id)
  for fn in prof:functions() do
    if "f" .. fn.index == id then return fn.name end
  end
end

describe("prof:dot", function()
  local prof = assert(callgrind.parse(GRAPH, "graph"))

  it("has a node per function above the node threshold and an edge per call above the edge threshold", function()
    local dot = prof:dot("Ir")
    -- inclusive: main 170, a 100, c 130 (80 + 50 in), b 60, d 100
    local nodes, edges = {}, {}
    for id, label in dot:gmatch('\n  (f%d+) %[label="(.-)"') do nodes[#nodes + 1] = id .. " " .. label end
    for a, b, label in dot:gmatch('\n  (f%d+) %-> (f%d+) %[label="(.-)"') do
      edges[#edges + 1] = a .. ">" .. b .. " " .. label
    end
    assert.are.same({
      "f1 main\\n100.00%\\n(5.88%)\\n0×", "f4 c\\n76.47%\\n(17.65%)\\n2×", "f2 a\\n58.82%\\n(11.76%)\\n1×",
      "f5 d\\n58.82%\\n(58.82%)\\n1×", "f3 b\\n35.29%\\n(5.88%)\\n2×" }, nodes)
    -- c -> d costs 100, capped at d's inclusive (100)
    assert.are.same({ "f1>f2 58.82%\\n1×", "f1>f3 35.29%\\n2×", "f2>f4 47.06%\\n1×", "f3>f4 29.41%\\n1×",
      "f4>f5 58.82%\\n1×" }, edges)
    -- thresholds: b (35%) and its edges go at 0.4; the b -> c edge (29%) at edge 0.3
    local cut = prof:dot("Ir", { node_threshold = 0.4, edge_threshold = 0.3 })
    assert.is_nil(cut:find("label=\"b", 1, true))
    assert.is_nil(cut:find("f3 ->", 1, true))
    assert.is_truthy(cut:find("f2 -> f4", 1, true))
  end)

  it("cuts a subgraph below a root or above a leaf, to a depth", function()
    local function ids(dot)
      local t = {}
      for id in dot:gmatch('\n  (f%d+) %[') do t[#t + 1] = id end
      return table.concat(t, " ")
    end
    assert.are.equal("f4 f5 f3", ids(prof:dot("Ir", { root = "b" })))
    assert.are.equal("f4 f3", ids(prof:dot("Ir", { root = "b", depth = 1 })))
    assert.are.equal("f1 f2", ids(prof:dot("Ir", { leaf = "a" })))
    assert.are.equal("f4 f2", ids(prof:dot("Ir", { root = prof:func("a"), leaf = "c" })))
    assert.has_error(function() prof:dot("Ir", { root = "nope" }) end,
      "bad argument #2 to 'dot' (option 'root': nope: not found: no function named 'nope')")
    assert.has_error(function() prof:dot("Ir", { depth = 2 }) end,
      "bad argument #2 to 'dot' (option 'depth' needs option 'root' or 'leaf')")
  end)

  it("draws a recursive call as an edge to itself", function()
    local p = assert(callgrind.parse("events: Ir\nfn=main\n1 1\ncfn=f\ncalls=1 1\n2 9\nfn=f\n1 9\ncfn=f\n"
      .. "calls=3 1\n2 6\n"))
    -- total 10; f's calls to itself cost 6
    assert.is_truthy(p:dot():find('f2 -> f2 [label="60.00%\\n3×"', 1, true))
  end)

  it("is accepted by Graphviz's dot, names with any bytes included", function()
    if not have("dot") then pending("Graphviz's dot is not installed") return end
    local dir = tmpdir()
    local w = weird_profile()
    assert.is_true(w:write_dot(dir .. "/w.dot"))
    H.run("dot -Tsvg -o " .. H.shq(dir .. "/w.svg") .. " " .. H.shq(dir .. "/w.dot"), "dot")
    -- the labels as dot drew them: each line a <text> of the SVG
    local labels = python(SVG_TEXTS, dir .. "/w.svg")
    local got = {}
    for l in labels:gmatch("[^\n]+") do got[l] = true end
    for _, name in ipairs(SHOWN) do assert.is_true(got[name], name) end
    F.remove(dir)
  end)

  it("puts the root at the top, though it calls a function deep below another entry", function()
    -- main (inclusive 80, the hottest entry) calls x; init calls p -> q ->
    -- r -> x. Graphviz alone ranks main just above x, level with r.
    local p = assert(callgrind.parse(table.concat({ "events: Ir", "fn=main", "1 30", "cfn=x", "calls=1 1", "2 50",
      "fn=init", "1 1", "cfn=p", "calls=1 1", "2 13", "fn=p", "1 1", "cfn=q", "calls=1 1", "2 12", "fn=q", "1 1",
      "cfn=r", "calls=1 1", "2 11", "fn=r", "1 1", "cfn=x", "calls=1 1", "2 10", "fn=x", "1 60", "" }, "\n"), "two"))
    -- x (60) is hotter than init (14) but called: main is the root
    assert.is_truthy(p:dot():find("\n  { rank=source; f" .. p:func("main").index .. "; }\n", 1, true))
    if not have("dot") then pending("Graphviz's dot is not installed") return end
    local dir = tmpdir()
    -- the nodes' heights as dot -Tplain places them ("node NAME X Y ...", y up)
    local function heights(opts)
      H.write_file(dir .. "/g.dot", p:dot("Ir", opts))
      local y = {}
      for id, h in H.run("dot -Tplain " .. H.shq(dir .. "/g.dot"), "dot"):gmatch("\nnode (f%d+) [%d.]+ ([%d.]+)") do
        y[internal_name(p, id)] = tonumber(h)
      end
      return y
    end
    local function highest(y)
      local best, second
      for name, h in pairs(y) do
        if not best or h > y[best] then best, second = name, best
        elseif not second or h > y[second] then second = name end
      end
      assert.is_true(y[best] > y[second], "the root shares its rank")
      return best
    end
    assert.are.equal("main", highest(heights()))
    -- a root given: that one
    assert.are.equal("q", highest(heights({ root = "q" })))
    F.remove(dir)
  end)

  it("writes SVG or PNG through dot, and says so when dot is missing", function()
    local dir = tmpdir()
    if have("dot") then
      assert.is_true(prof:write_dot(dir .. "/g.svg", "Ir", { format = "svg" }))
      local texts = {}
      for l in python(SVG_TEXTS, dir .. "/g.svg"):gmatch("[^\n]+") do texts[#texts + 1] = l end
      -- the title, then each node's four lines, hottest first
      assert.are.same({ "graph: 170 Ir", "main", "100.00%", "(5.88%)", "0×" }, { table.unpack(texts, 1, 5) })
      assert.is_true(prof:write_dot(dir .. "/g.png", "Ir", { format = "png" }))
      assert.are.equal("\137PNG", H.read_file(dir .. "/g.png"):sub(1, 4))
    end
    local ok, err, kind = prof:write_dot(dir .. "/h.svg", "Ir", { format = "svg", dot_command = "no-such-dot" })
    assert.is_nil(ok)
    assert.are.equal("write_dot: Graphviz's 'no-such-dot' was not found (install graphviz)", err)
    assert.are.equal("io", kind)
    assert.has_error(function() prof:write_dot(dir .. "/h.gif", "Ir", { format = "gif" }) end,
      "bad argument #3 to 'write_dot' (invalid option 'gif'; expected one of: dot, svg, png)")
    assert.are.equal(have("dot") and "g.png\ng.svg\n" or "", ls(dir))
    F.remove(dir)
  end)
end)

describe("prof:write_pprof", function()
  local have_go = have("go")

  -- go tool pprof -top's totals line: "... of N total", and its rows
  local function top(path, ev)
    local out = H.run("cd /tmp && HOME=${HOME:-/tmp} go tool pprof -top -nodecount=1000 "
      .. (ev and ("-sample_index=" .. ev .. " ") or "") .. H.shq(path) .. " 2>&1", "go tool pprof")
    return out, tonumber(out:match("of (%d+) total")) or tonumber(out:match("Showing nodes accounting for (%d+)"))
  end

  it("writes a gzip-compressed profile.proto that go tool pprof reads, with our totals", function()
    if not have_go then pending("go is not installed") return end
    local dir = tmpdir()
    local prof = assert(callgrind.parse(GRAPH, "graph"))
    assert.is_true(prof:write_pprof(dir .. "/g.pb.gz"))
    assert.are.equal("\31\139", H.read_file(dir .. "/g.pb.gz"):sub(1, 2))
    local out, total = top(dir .. "/g.pb.gz")
    assert.are.equal(170, total)
    -- flat and cum of each function, from the estimated stacks
    -- (stacks_spec.lua): d 100 flat (its exact self cost), main 170 cum
    assert.is_truthy(out:find("\n%s+100%s+58%.82%%%s+58%.82%%%s+100%s+58%.82%%%s+d\n"), out)
    assert.is_truthy(out:find("\n%s+10%s+5%.88%%%s+%S+%s+170%s+100%%%s+main\n"))
    F.remove(dir)
  end)

  it("has one sample type per event, each with the profile's total", function()
    if not have_go then pending("go is not installed") return end
    local dir = tmpdir()
    for _, path in ipairs({ "spec/corpus/gprof2dot/googlecode-issue34.callgrind", "spec/fixtures/inline.callgrind" }) do
      local prof = assert(callgrind.load(path))
      assert.is_true(prof:write_pprof(dir .. "/p.pb.gz"))
      for _, ev in ipairs(prof.events) do
        local _, total = top(dir .. "/p.pb.gz", ev)
        assert.are.equal(prof:total(ev), total, path .. " " .. ev)
      end
      local prof2 = assert(callgrind.load(path))
      assert.is_true(prof2:write_pprof(dir .. "/q.pb.gz", { events = { prof.events[#prof.events] } }))
      local out = top(dir .. "/q.pb.gz")
      assert.is_truthy(out:find("Type: " .. prof.events[#prof.events], 1, true))
    end
    F.remove(dir)
  end)

  it("keeps names with any bytes", function()
    if not have_go then pending("go is not installed") return end
    local dir = tmpdir()
    assert.is_true(weird_profile():write_pprof(dir .. "/w.pb.gz"))
    -- -raw lists each location's function by its full name
    local out = H.run("cd /tmp && go tool pprof -raw " .. H.shq(dir .. "/w.pb.gz") .. " 2>&1", "go tool pprof")
    for _, name in ipairs(NAMES) do assert.is_truthy(out:find(name, 1, true), name) end
    F.remove(dir)
  end)

  it("rejects bad options and returns nil, message, \"io\" for a bad path", function()
    local prof = assert(callgrind.parse(GRAPH, "graph"))
    assert.has_error(function() prof:write_pprof("x.pb.gz", { events = { "Dr" } }) end,
      "bad argument #2 to 'write_pprof' (unknown event 'Dr'; events: Ir)")
    assert.has_error(function() prof:write_pprof("x.pb.gz", { threshold = 1 }) end,
      "bad argument #2 to 'write_pprof' (threshold must be in [0, 1), got 1)")
    local ok, err, kind = prof:write_pprof("/nonexistent-dir/x.pb.gz")
    assert.is_nil(ok)
    assert.are.equal("/nonexistent-dir/x.pb.gz: No such file or directory", err)
    assert.are.equal("io", kind)
  end)
end)
