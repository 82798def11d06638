--- Flame graphs: a self-contained interactive SVG (no external scripts or
-- fonts) of the call tree of one event (`callgrind.stacks`): width in
-- cost, frames coloured by object (or file) with a legend naming each
-- object and its colour, a title per frame with name, cost and
-- percentage, click to zoom, search. A diff's flame graph is the
-- new profile's tree coloured red where a frame costs more than in the old
-- one and blue where it costs less.
-- @module callgrind.export.flame
local core = require "callgrind.core"
local args = require "callgrind.args"
local stacks = require "callgrind.export.stacks"
local report = require "callgrind.model.report"
local util = require "callgrind.util"

local Profile = core.methods.Profile

local io, ipairs, type = io, ipairs, type
local internal = core.internal
local table_concat = table.concat
local math_abs, math_floor, math_max = math.abs, math.floor, math.max
local string_byte, string_format = string.byte, string.format

local M = {}

local WIDTH, ROW, PAD_TOP, PAD_BOTTOM, CHAR = 1200, 16, 42, 24, 7

--- Stacks deeper than this many frames are drawn with their recursion
-- collapsed (`stacks.collapse`: a function already on a stack is not
-- entered again), as with `collapse_recursion = true`; the title says so.
M.MAX_DEPTH = 1000

-- XML text: & < > " escaped (names are made printable first).
local XML = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }
local function xml(s) return (s:gsub('[&<>"]', XML)) end

-- A colour from a string, the same on every run (FNV-1a, not Lua's hash).
local function hash(s)
  local h = 2166136261
  for i = 1, #s do
    h = ((h ~ string_byte(s, i)) * 16777619) & 0xffffffff
  end
  return h
end

local function warm(key)
  local h = hash(key or "")
  local r = 205 + h % 50
  local g = 80 + (h >> 8) % 150
  local b = (h >> 16) % 55
  return string_format("#%02x%02x%02x", r, g, b)
end

-- Red for more, blue for less, white for no change; t in [-1, 1].
local function diverging(t)
  if t > 0 then
    local c = math_floor(255 - 190 * t)
    return string_format("#ff%02x%02x", c, c)
  elseif t < 0 then
    local c = math_floor(255 + 190 * t)
    return string_format("#%02x%02xff", c, c)
  end
  return "#f2f2f2"
end

-- The label that fits a width.
local function fit(name, w)
  local n = math_floor((w - 6) / CHAR)
  if n < 3 then return "" end
  if utf8.len(name) <= n then return name end
  local cut = utf8.offset(name, n - 1)
  return name:sub(1, (cut or n - 1) - 1) .. ".."
end

local SCRIPT = [=[
<script type="text/ecmascript"><![CDATA[
(function () {
  var svg = document.documentElement, W = %d, frames = [], zoomed = null;
  var gs = svg.querySelectorAll("g.f");
  for (var i = 0; i < gs.length; i++) {
    var g = gs[i], r = g.querySelector("rect"), t = g.querySelector("text"), ti = g.querySelector("title");
    var full = ti.textContent, nl = full.lastIndexOf("\n");
    frames.push({ g: g, r: r, t: t, x: +r.getAttribute("x"), w: +r.getAttribute("width"),
      y: +r.getAttribute("y"), name: nl < 0 ? full : full.substring(0, nl), fill: r.getAttribute("fill") });
    g.onclick = (function (f) { return function () { zoom(f); }; })(frames[frames.length - 1]);
  }
  function label(f, w) {
    var n = Math.floor((w - 6) / %d);
    if (n < 3) return "";
    return f.name.length <= n ? f.name : f.name.substring(0, n - 2) + "..";
  }
  function zoom(z) {
    zoomed = z.w >= W - 0.01 ? null : z;
    var x0 = zoomed ? z.x : 0, k = zoomed ? W / z.w : 1;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i], show = true, x = f.x, w = f.w;
      if (zoomed) {
        if (f.y >= z.y) { show = f.x <= z.x + 0.001 && f.x + f.w >= z.x + z.w - 0.001;
          if (show) { x = 0; w = W; } }
        else { show = f.x >= z.x - 0.001 && f.x + f.w <= z.x + z.w + 0.001;
          x = (f.x - x0) * k; w = f.w * k; }
      }
      f.g.style.display = show ? "" : "none";
      if (!show) continue;
      f.r.setAttribute("x", x.toFixed(2)); f.r.setAttribute("width", w.toFixed(2));
      f.t.setAttribute("x", (x + 3).toFixed(2)); f.t.textContent = label(f, w);
    }
    document.getElementById("reset").style.display = zoomed ? "" : "none";
  }
  document.getElementById("reset").onclick = function () { zoom(frames[0]); };
  document.getElementById("search").onclick = function () {
    var term = prompt("Search (regular expression)", "");
    var m = document.getElementById("matched"), sum = 0, re;
    for (var i = 0; i < frames.length; i++) frames[i].r.setAttribute("fill", frames[i].fill);
    if (!term) { m.textContent = ""; return; }
    try { re = new RegExp(term); } catch (e) { m.textContent = "bad expression"; return; }
    var spans = [];
    for (var i = 1; i < frames.length; i++) {
      var f = frames[i];
      if (!re.test(f.name)) continue;
      f.r.setAttribute("fill", "#e040e0");
      var inside = false;
      for (var j = 0; j < spans.length; j++)
        if (f.x >= spans[j][0] - 0.001 && f.x + f.w <= spans[j][1] + 0.001) inside = true;
      if (!inside) { spans.push([f.x, f.x + f.w]); sum += f.w; }
    }
    m.textContent = "matched: " + (100 * sum / W).toFixed(2) + "%%";
  };
})();
]]></script>
]=]

-- report.commas for a frame's title, faster for a non-negative integer
-- (the same text: digits grouped by three from the right).
local math_type, string_sub = math.type, string.sub
local function commas(n)
  if math_type(n) ~= "integer" or n < 0 then return report.commas(n) end
  local s = string_format("%d", n)
  local len = #s
  if len <= 3 then return s end
  local head = (len - 1) % 3 + 1
  local parts = { string_sub(s, 1, head) }
  for i = head + 1, len, 3 do parts[#parts + 1] = string_sub(s, i, i + 2) end
  return table_concat(parts, ",")
end

local function percent(v, total)
  if total == 0 then return "0" end
  return string_format("%.2f", v * 100 / total)
end

-- The legend's rows: each entry { fill, label, title } a swatch and its
-- label, left to right, a new row where the next would pass the width.
-- Returns the <g> elements (y from y0) and the number of rows.
local function legend_rows(legend, width, y0)
  local out, x, row = {}, 10, 0
  for _, e in ipairs(legend) do
    local label = stacks.printable(e[2])
    local w = 16 + utf8.len(label) * CHAR + 14
    if x > 10 and x + w > width - 10 then x, row = 10, row + 1 end
    local y = y0 + row * ROW
    out[#out + 1] = string_format('<g class="legend"><title>%s</title><rect x="%d" y="%d" width="12" height="12" '
      .. 'fill="%s" stroke="#666" stroke-width="0.5"/><text x="%d" y="%d">%s</text></g>\n',
      xml(stacks.printable(e[3] or e[2])), x, y, e[1], x + 16, y + 11, xml(label))
    x = x + w
  end
  return out, #legend > 0 and row + 1 or 0
end

-- The SVG of a tree. colour(node) gives a frame's fill; describe(node)
-- its title's second line; legend (optional) the swatches drawn under the
-- frames, each { fill, label [, title] }; flat (optional) the frames as
-- the C reader of folded stacks gave them.
local function svg(top, title, colour, describe, width, legend, flat)
  local total = top.total
  local depth = 0
  if flat then
    local parent, at = flat.parent, {}
    for k = 1, #parent do
      local d = parent[k] == 0 and 1 or at[parent[k]] + 1
      at[k] = d
      if d > depth then depth = d end
    end
  else
    stacks.walk(top, function(_, d) if d > depth then depth = d end end)
  end
  local frames_bottom = PAD_TOP + (depth + 1) * ROW
  local legend_g, legend_n = legend_rows(legend or {}, width, frames_bottom + PAD_BOTTOM)
  local height = frames_bottom + PAD_BOTTOM + (legend_n > 0 and legend_n * ROW + 4 or 0)
  local out = {}
  out[#out + 1] = string_format('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
    .. '<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">\n',
    width, height, width, height)
  out[#out + 1] = '<style>text{font-family:monospace;font-size:12px;fill:#000}'
    .. ' g.f:hover rect{stroke:#000;stroke-width:0.5} g.f{cursor:pointer} .b{cursor:pointer;fill:#33c}</style>\n'
  out[#out + 1] = string_format('<rect x="0" y="0" width="%d" height="%d" fill="#fafaf4"/>\n', width, height)
  -- the title at 16 px, smaller when it would run under Reset zoom and
  -- Search (a diff's title holds its legend and shares): 0.6 em a character
  local shown = stacks.printable(title)
  local px = math.max(7, math.min(16, (width - 200) // math.max(1, math.ceil(0.6 * (utf8.len(shown) or #shown)))))
  out[#out + 1] = string_format('<text x="%d" y="20" text-anchor="middle" style="font-size:%dpx">%s</text>\n',
    width // 2, px, xml(shown))
  out[#out + 1] = '<text id="reset" class="b" x="10" y="20" style="display:none">Reset zoom</text>\n'
  out[#out + 1] = string_format('<text id="search" class="b" x="%d" y="20" text-anchor="end">Search</text>\n',
    width - 10)
  out[#out + 1] = string_format('<text id="matched" x="%d" y="%d" text-anchor="end"></text>\n',
    width - 10, frames_bottom + PAD_BOTTOM - 6)
  local scale = total > 0 and width / total or 0
  local names, xnames = {}, {}
  local n = #out
  local function frame(name, nd, x, d)
    local w = nd.total * scale
    local y = frames_bottom - d * ROW
    -- each name made XML once; a label too narrow to show is ""
    local xname = xnames[name]
    if not xname then
      xname = xml(name)
      xnames[name] = xname
    end
    local label = fit(name, w)
    if label == name then label = xname elseif label ~= "" then label = xml(label) end
    local about = describe(nd)
    if about:find('[&<>"]') then about = xml(about) end
    n = n + 1
    out[n] = string_format('<g class="f"><title>%s\n%s</title><rect x="%.2f" y="%d" width="%.2f" '
      .. 'height="%d" fill="%s"/><text x="%.2f" y="%d">%s</text></g>\n',
      xname, about, x, y, w, ROW - 1, colour(nd), x + 3, y + ROW - 4, label)
  end
  frame("all", top, 0, 1)
  if flat then
    -- the frames as the C reader gave them, drawn in C (the same text)
    n = n + 1
    out[n] = internal.flame_frames(flat.pnames, flat.fills, flat.parent, flat.name, flat.total_of, scale,
      frames_bottom + PAD_BOTTOM, total, xml(flat.ev))
    for _, g in ipairs(legend_g) do n = n + 1; out[n] = g end
    out[n + 1] = string_format(SCRIPT, width, CHAR)
    out[n + 2] = "</svg>\n"
    return out
  end
  -- depth first without recursion (stacks.visit): xs[d] is where the
  -- next frame of depth d starts
  local xs = { 0 }
  stacks.visit(top, function(kid, d)
    local fn = kid.fn
    local name = names[fn]
    if not name then
      name = stacks.printable(fn.name)
      names[fn] = name
    end
    local x = xs[d]
    frame(name, kid, x, d + 1)
    xs[d + 1] = x
    xs[d] = x + kid.total * scale
  end)
  for _, g in ipairs(legend_g) do n = n + 1; out[n] = g end
  out[n + 1] = string_format(SCRIPT, width, CHAR)
  out[n + 2] = "</svg>\n"
  return out
end


-- lvl: the level of the public method's caller, counted from here
-- n: the options' argument number (default 2)
local function check_opts(opts, fname, lvl, n)
  n = n or 2
  opts = args.options(opts, fname, n, "flame", lvl)
  local threshold = stacks.threshold(opts.threshold, fname, n, lvl)
  local color = args.option(opts.color, fname, n, { "object", "file" }, "object", lvl)
  local width = opts.width or WIDTH
  if width < 100 then args.fail(fname, n, string_format("width must be at least 100, got %s", width), lvl) end
  return opts, threshold, color, math_floor(width)
end

-- Colours far apart, for the objects (or files) of a picture, costliest
-- first: three objects are three hues, not three oranges. Past the
-- palette, a warm colour from the key's hash.
local PALETTE = { "#e8743b", "#3b8bc2", "#5fa055", "#c74a8f", "#d6b32a", "#8c6bb1", "#a0522d", "#20c5c5",
  "#9b9b3a", "#5a5a5a" }
M.PALETTE = PALETTE
-- The most objects (or files) the legend names; the rest are counted.
local LEGEND_MAX = 16

-- The key a frame is coloured by, and whether it is an object or a file
-- (not a bare name: folded stacks have no objects).
local function colour_key(fn, by)
  local key
  if by == "file" then key = fn.file or fn.object else key = fn.object or fn.file end
  if key then return key, true end
  return fn.name, false
end

-- Writes the SVG of tree top: frames coloured by object or file (color),
-- titled with their cost in ev and their share.
local function draw(top, title, ev, color, width, flat)
  local total = top.total
  -- each key's self cost in the picture, then the palette, costliest first
  local cost, keys, named = {}, {}, {}
  if flat then
    -- folded frames: the key is the name
    local names, name, self = flat.names, flat.name, flat.self
    for k = 1, #name do
      local key = names[name[k]]
      if not cost[key] then cost[key] = 0; keys[#keys + 1] = key end
      cost[key] = cost[key] + self[k]
    end
  else
    stacks.walk(top, function(nd)
      if nd.fn then
        local key, is_place = colour_key(nd.fn, color)
        key = key or ""
        if not cost[key] then cost[key] = 0; keys[#keys + 1] = key end
        cost[key] = cost[key] + nd.self
        named[key] = named[key] or is_place
      end
    end)
  end
  table.sort(keys, function(a, b)
    if cost[a] ~= cost[b] then return cost[a] > cost[b] end
    return a < b
  end)
  local colours, legend, rest = {}, {}, 0
  for i, key in ipairs(keys) do
    colours[key] = PALETTE[i] or warm(key)
    -- the legend names each object (or file) with its colour, costliest
    -- first, with its self cost's share; names of functions (folded
    -- stacks) are their frames' own labels already
    if named[key] and #legend < LEGEND_MAX then
      local base = util.basename(key)
      legend[#legend + 1] = { colours[key], string_format("%s %s%%", base ~= "" and base or key,
        percent(cost[key], total)), string_format("%s: %s %s self (%s%%)", key, report.commas(cost[key]), ev,
        percent(cost[key], total)) }
    elseif named[key] then
      rest = rest + 1
    end
  end
  if rest > 0 then
    legend[#legend + 1] = { "#fafaf4", string_format("%d more (warm colours)", rest) }
  end
  local function colour(nd)
    if not nd.fn then return "#d0d0d0" end
    return colours[colour_key(nd.fn, color) or ""] or warm(colour_key(nd.fn, color))
  end
  local function describe(nd)
    return string_format("%s %s (%s%%)", commas(nd.total), ev, percent(nd.total, total))
  end
  if flat then
    local pnames, fills = {}, {}
    for i, name in ipairs(flat.names) do
      pnames[i] = stacks.printable(name)
      fills[i] = colours[name] or warm(name)
    end
    flat = { pnames = pnames, fills = fills, parent = flat.parent, name = flat.name, total_of = flat.total_of,
      ev = ev }
  end
  return table_concat(svg(top, title, colour, describe, width, legend, flat))
end

-- The SVG of prof's flame graph; fname the public method, n its ev's
-- argument number.
local function flamegraph(prof, ev, opts, fname, n)
  local threshold, color, width
  opts, threshold, color, width = check_opts(opts, fname, 4, n + 1)
  ev = ev == nil and opts.ev or ev
  if ev == nil then
    ev = prof.events[1]
    if ev == nil then error(fname .. ": the profile has no events", 3) end
  else
    ev = args.event(prof, ev, fname, n, 3)
  end
  local top = stacks.tree(prof, ev, threshold, opts.collapse_recursion)
  -- the frames the estimate's correction made for functions whose stacks
  -- are all below the threshold are too narrow to draw: merged into their
  -- parent (no width changes)
  if not top.exact then stacks.prune(top, threshold * top.total) end
  -- collapsed: asked for (stacks.tree did it), or past MAX_DEPTH; said
  -- when it merged frames (a deep chain with no recursion stays as it is)
  local collapsed = opts.collapse_recursion and top.merged and top.merged > 0
  if not opts.collapse_recursion and stacks.depth(top) > M.MAX_DEPTH then
    top = stacks.collapse(top)
    stacks.prune(top, threshold * top.total)
    collapsed = top.merged > 0
  end
  local how = top.source and string_format(" (stacks from %s)", top.source)
    or not top.exact and string_format(" (stacks estimated from the call graph%s%s)",
      top.refused and "; " .. top.refused or "",
      (top.pruned_below and top.pruned_below > 0) and string_format(", below %.4g%% pruned", 100 * top.pruned_below)
        or "") or ""
  if collapsed then how = how .. " (recursion collapsed)" end
  local title = opts.title
    or string_format("%s: %s %s%s", util.name_of(prof) or "profile", report.commas(top.total), ev, how)
  return draw(top, title, ev, color, width)
end

--- Writes the flame graph of folded stacks (`frame;frame count` lines:
-- what `-lcallgrind.start` with `CALLGRIND_STACKS=folded` writes beside
-- its profile, `prof:folded`, `callgrind-lua folded` of a stack record, or
-- another tool's stackcollapse output), exact
-- as the lines give them: what `callgrind-lua flame FILE.folded` does.
-- @param folded the folded lines (a string), or the tree
--   `stacks.read_folded` made of them with threshold 0
-- @tparam string source their name, for the title and errors
-- @tparam string path the SVG to write
-- @tparam[opt] table opts as `prof:flamegraph`'s; `ev` names what the
--   counts count (default "Instr"); frames are coloured by name
-- @return true, or nil, "path: reason", "io"; raises `SOURCE:LINE: reason`
--   on a line that is not a folded stack
-- @usage assert(flame.folded_flamegraph(io.open("x.folded"):read("a"), "x.folded", "x.svg"))
function M.folded_flamegraph(folded, source, path, opts)
  if type(folded) ~= "table" then args.check_type(folded, "string", "folded_flamegraph", 1) end
  args.check_type(source, "string", "folded_flamegraph", 2)
  args.check_type(path, "string", "folded_flamegraph", 3)
  local threshold, color, width
  opts, threshold, color, width = check_opts(opts, "folded_flamegraph", 3, 4)
  local ev = opts.ev ~= nil and tostring(opts.ev) or "Instr"
  local top
  if type(folded) == "table" then
    top = folded
  else
    top = stacks.read_folded(folded, source, threshold)
  end
  -- the C reader's frames, drawn in C, while the tree is theirs
  local flat = top.flat
  top.flat = nil
  if stacks.prune(top, threshold * top.total) > 0 then flat = nil end
  local how = ""
  if opts.collapse_recursion or stacks.depth(top) > M.MAX_DEPTH then
    top = stacks.collapse(top)
    stacks.prune(top, threshold * top.total)
    if top.merged > 0 then how = " (recursion collapsed)" end
    flat = nil
  end
  local title = opts.title or string_format("%s: %s %s%s", source, report.commas(top.total), ev, how)
  return util.write_file(path, draw(top, title, ev, color, width, flat))
end

-- The old spelling, prof:flamegraph(path [, opts]) writing a file, kept
-- one release (CHANGES.md): a first argument that is no event of the
-- profile but a string with a dot or a slash is a path; said once on
-- stderr.
local warned = false
local function old_spelling(prof, first, second)
  if type(first) ~= "string" or (second ~= nil and type(second) ~= "table") then return false end
  if internal.event_problem(prof, first) == nil or not first:find("[./]") then return false end
  if not warned then
    warned = true
    io.stderr:write("callgrind: flamegraph(path) is deprecated: use write_flamegraph(path [, ev [, opts]]); "
      .. "flamegraph([ev [, opts]]) returns the SVG (CHANGES.md)\n")
  end
  return true
end

--- A flame graph of one event as a self-contained interactive SVG:
-- width in cost, frames coloured by object (or file), a title per frame
-- with name, cost and percentage; click a frame to zoom, "Search" to
-- highlight the frames whose name matches a regular expression. The
-- stacks are exact for a Lua profile made with `stacks = true`, else
-- estimated (`prof:folded`), and the title says so.
-- @tparam[opt] string|integer ev default the first event (or opts.ev)
-- @tparam[opt] table opts `threshold` (default 0.0001: smaller stacks
--   merge into their parent), `title`, `width` (pixels, default 1200),
--   `color` ("object" or "file"), `collapse_recursion` (as
--   `prof:folded`'s; stacks deeper than `flame.MAX_DEPTH`, 1,000 frames,
--   are drawn so whatever it says)
-- @treturn string the SVG
-- @usage local svg = prof:flamegraph("Ir")
function Profile:flamegraph(ev, opts)
  if old_spelling(self, ev, opts) then return self:write_flamegraph(ev, nil, opts) end
  return flamegraph(self, ev, opts, "flamegraph", 1)
end

--- Writes the flame graph to a file.
-- @return true, or nil, "path: reason", "io"
-- @usage assert(prof:write_flamegraph("flame.svg", "Ir"))
function Profile:write_flamegraph(path, ev, opts)
  args.check_type(path, "string", "write_flamegraph", 1)
  return util.write_file(path, flamegraph(self, ev, opts, "write_flamegraph", 2))
end

-- The old tree's node at the same names' path as a new node.
-- A node's children by match key (key_of(fn): the diff's key of a
-- function of the old profile).
local function by_key(nd, key_of)
  local idx = nd.by_key
  if not idx then
    idx = {}
    for _, kid in ipairs(nd.children) do
      local k = key_of(kid.fn)
      idx[k] = idx[k] or kid
    end
    nd.by_key = idx
  end
  return idx
end

--- Writes the flame graph of a diff: the new profile's stacks, each frame
-- red where it costs more than at the same stack (names' path) of the
-- old profile, blue where it costs less, the deeper the colour the larger
-- the change against the largest one.
-- @tparam string path
-- @tparam[opt] table opts as `prof:flamegraph`'s, `ev` an event of both
-- @return true, or nil, "path: reason", "io"
-- @usage assert(callgrind.diff(old, new):flamegraph("diff.svg", { ev = "Ir" }))
local function diff_svg(d, ev, opts, fname, n)
  local threshold, width, _
  opts, threshold, _, width = check_opts(opts, fname, 4, n + 1)
  ev = ev == nil and opts.ev or ev
  ev = ev or d.new.events[1]
  if ev == nil then error(fname .. ": the profile has no events", 3) end
  ev = args.event(d.new, ev, fname, n, 3)
  args.event(d.old, ev, fname, n, 3)
  -- past MAX_DEPTH both sides collapsed, so that their paths still pair
  -- (each collapsed before the other is made: one deep tree at a time)
  -- (the new side's estimate not pruned into [pruned] frames: the old
  -- side, whole, has none to pair them with)
  local new = stacks.tree(d.new, ev, threshold, nil, true)
  local deep = stacks.depth(new) > M.MAX_DEPTH
  if deep then new = stacks.collapse(new) end
  local old = stacks.tree(d.old, ev, 0)
  if not deep and stacks.depth(old) > M.MAX_DEPTH then
    deep = true
    new = stacks.collapse(new)
  end
  if deep then old = stacks.collapse(old) end
  local collapsed = deep and (new.merged > 0 or old.merged > 0)
  if deep then stacks.prune(new, threshold * new.total) end
  -- frames are paired by the diff's match keys (opts.match of
  -- callgrind.diff, --match): the same function on both sides
  local function old_key(fn) return d.old_key[fn] or fn.name end
  local function new_key(fn) return d.new_key[fn] or fn.name end
  -- pair each new node with the old one, and find the largest change
  -- (parents before children: stacks.walk)
  local old_of, biggest = { [new] = old }, 0
  stacks.walk(new, function(kid, _, nd)
    local o = old_of[nd]
    local ok = o and by_key(o, old_key)[new_key(kid.fn)]
    old_of[kid] = ok or false
    local delta = math_abs(kid.total - (ok and ok.total or 0))
    if delta > biggest then biggest = delta end
  end)
  local function change(nd)
    local o = old_of[nd]
    return nd.total - (o and o.total or 0), o and o.total or 0
  end
  -- a stack the old profile has no path to (new code, or new only because
  -- of inlining) is coloured apart: its "more" is no regression
  local NEW_ONLY = "#b07cd8"
  local function colour(nd)
    if old_of[nd] == false then return NEW_ONLY end
    if biggest == 0 then return diverging(0) end
    local delta = change(nd)
    return diverging(delta / biggest)
  end
  -- the cost of the new-only stacks, and of the old stacks the new profile
  -- has no path to (gone)
  local new_only, gone = 0, 0
  stacks.walk(new, function(nd, _, up)
    if old_of[nd] == false and old_of[up] ~= false then new_only = new_only + nd.total end
  end)
  -- the old frames whose path the new tree lacks, counted at the first
  -- frame missing (the old tree's frames paired the other way round)
  local new_of = { [old] = new }
  stacks.walk(old, function(kid, _, o)
    local nd = new_of[o]
    if nd == nil then return end          -- below a frame gone: counted there
    local match = nd and by_key(nd, new_key)[old_key(kid.fn)]
    if match then
      new_of[kid] = match
    else
      gone = gone + kid.total
    end
  end)
  local function describe(nd)
    local delta, before = change(nd)
    local p = before ~= 0 and string_format("%+.2f%%", delta * 100 / before) or "new"
    return string_format("%s %s, was %s: %s%s (%s)", report.commas(nd.total), ev, report.commas(before),
      delta > 0 and "+" or "", report.commas(delta), p)
  end
  local o_total, n_total = d.old:total(ev), d.new:total(ev)
  local function share(v, t) return t == 0 and 0 or 100 * v / t end
  -- a title of the caller's own keeps the totals, the legend and the shares after it
  local legend = string_format("(red: more, blue: less, purple: only in the new, %.1f%% of its cost; "
    .. "%.1f%% of the old cost is in stacks gone)", share(new_only, n_total), share(gone, o_total))
  local title = string_format("%s%s %s -> %s %s%s %s", opts.title and (opts.title .. ": ") or "",
    report.commas(o_total), ev, report.commas(n_total), ev, collapsed and " (recursion collapsed)" or "", legend)
  local swatches = { { diverging(1), "more" }, { diverging(-1), "less" }, { diverging(0), "unchanged" },
    { NEW_ONLY, string_format("only in the new (%.1f%%)", share(new_only, n_total)) } }
  return table_concat(svg(new, title, colour, describe, math_max(width, 100), swatches))
end

--- The diff's flame graph as SVG (`d:flamegraph([ev [, opts]])`).
-- @usage local svg = callgrind.diff(old, new):flamegraph("Ir")
function M.diff_flamegraph(d, ev, opts)
  if old_spelling(d.new, ev, opts) then return M.write_diff_flamegraph(d, ev, nil, opts) end
  return diff_svg(d, ev, opts, "flamegraph", 1)
end

--- Writes the diff's flame graph (`d:write_flamegraph(path [, ev [, opts]])`).
-- @usage assert(callgrind.diff(old, new):write_flamegraph("diff.svg", "Ir"))
function M.write_diff_flamegraph(d, path, ev, opts)
  args.check_type(path, "string", "write_flamegraph", 1)
  return util.write_file(path, diff_svg(d, ev, opts, "write_flamegraph", 2))
end

return M
