--- One self-contained HTML report of a profile or a diff: its header, a
-- function table (sortable and filterable by any event, self or
-- inclusive, with calls; it fits a 1,280-pixel window, long names
-- shortened in the middle and whole on hover), the flame graph (exact
-- stacks when the profile has them, and it says which), the callers,
-- callees (by the call's cost) and hottest source lines of a selected
-- function (every function's, in a block of data of their own read when
-- first shown) with its place in the call graph (callers, it, callees,
-- drawn as SVG in the page, from the costliest call down; it opens on
-- main, or the costliest root), an event selector and, for a diff, a
-- compact summary above the same table: the totals, the share matched
-- function by function (`d:matched`) and movers. Scripts, styles and
-- data are inside the file: no network.
-- @module callgrind.export.html
local core = require "callgrind.core"
local args = require "callgrind.args"
local encode = require "callgrind.encode"
local util = require "callgrind.util"
local stacks = require "callgrind.export.stacks"
local write = require "callgrind.export.write"

local Profile = core.methods.Profile

local ipairs, pairs, tostring, type = ipairs, pairs, tostring, type
local math_type, string_format, table_concat, table_sort = math.type, string.format, table.concat, table.sort

local M = {}

-- JSON of a Lua value: tables with [1] (or empty, marked array) are
-- arrays, others objects with sorted keys.
local ARRAY = setmetatable({}, { __mode = "k" })
local function array(t) ARRAY[t] = true return t end

local function json(v, out)
  local t = type(v)
  if t == "string" then out[#out + 1] = encode.json_string(v)
  elseif t == "number" then
    if math_type(v) == "integer" then out[#out + 1] = tostring(v)
    elseif v ~= v or v == math.huge or v == -math.huge then out[#out + 1] = "null"
    else out[#out + 1] = string_format("%.6g", v) end
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif t == "nil" then out[#out + 1] = "null"
  elseif v[1] ~= nil or ARRAY[v] then
    -- most arrays are of integers (costs, frames): one concat for them
    local n, ints = #v, true
    for i = 1, n do
      if math_type(v[i]) ~= "integer" then ints = false break end
    end
    if ints then
      out[#out + 1] = "[" .. table_concat(v, ",") .. "]"
      return
    end
    out[#out + 1] = "["
    for i = 1, n do
      if i > 1 then out[#out + 1] = "," end
      local x = v[i]
      if math_type(x) == "integer" then out[#out + 1] = tostring(x) else json(x, out) end
    end
    out[#out + 1] = "]"
  else
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table_sort(keys)
    out[#out + 1] = "{"
    for i, k in ipairs(keys) do
      if i > 1 then out[#out + 1] = "," end
      out[#out + 1] = encode.json_string(k)
      out[#out + 1] = ":"
      json(v[k], out)
    end
    out[#out + 1] = "}"
  end
end

local function to_json(v)
  local out = {}
  json(v, out)
  -- inside <script>: no "<" at all, so neither "</script" can end it
  -- early nor "<!--" and "<script" can keep its "</script>" from ending
  -- it (HTML's escaped script states). A "<" is only ever inside a JSON
  -- string, where \u003c is the same character.
  return (table_concat(out):gsub("<", "\\u003c"))
end

-- Text as HTML: made printable first (util.printable: control bytes and
-- bidirectional controls as visible escapes), then & < > " as entities.
local function html_escape(s)
  return (util.printable(tostring(s)):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;" }))
end

-- The source lines of a file, read once (nil when unreadable).
local function source_reader(root)
  local cache = {}
  return function(file)
    if not file then return nil end
    local c = cache[file]
    if c == nil then
      local path = file
      if root and file:sub(1, 1) ~= "/" then path = root .. "/" .. file end
      local text = util.read_file(path)
      c = false
      if text and #text <= 4 * 1024 * 1024 then
        c = {}
        for l in (text .. "\n"):gmatch("([^\n]*)\n") do c[#c + 1] = l end
      end
      cache[file] = c
    end
    return c or nil
  end
end

-- A path of frames as a number: the path of a frame is its parent's
-- path and its key (the number of the diff's match key of its function,
-- as the differential SVG pairs frames), interned once in paths; 0 is
-- the top. Both sides of a diff share one paths, so the same names'
-- path is the same number (a string per path would be as long as the
-- path: quadratic in a deep recursion).
local function new_paths()
  return { ids = {}, up = {}, n = 0 }
end

local function path_of(paths, parent, key)
  local k = parent .. "," .. key
  local id = paths.ids[k]
  if not id then
    id = paths.n + 1
    paths.n = id
    paths.ids[k] = id
    paths.up[id] = parent
  end
  return id
end

-- The flame graph's tree of an event: collapsed (as the SVG flame graph)
-- when deeper than flame.MAX_DEPTH; with an old tree, both collapsed
-- when either is that deep, so that their paths still pair.
local function flame_trees(prof, old, ev, threshold)
  -- (each collapsed before the other is made: one deep tree at a time)
  local max = require("callgrind.export.flame").MAX_DEPTH
  local function collapse(t)
    t = stacks.collapse(t)
    stacks.prune(t, threshold * t.total)
    return t
  end
  local top = stacks.tree(prof, ev, threshold)
  local deep = stacks.depth(top) > max
  if deep then top = collapse(top) end
  local was = old and stacks.tree(old, ev, threshold)
  if was and not deep and stacks.depth(was) > max then
    deep = true
    top = collapse(top)
  end
  if was and deep then was = collapse(was) end
  return top, was, deep and (top.merged > 0 or (was and was.merged > 0)) or false
end

-- The old profile's stacks, by path -> total, for a diff's flame graph.
local function old_paths(tree, paths, key_of)
  local by, at = {}, { [0] = 0 }
  stacks.walk(tree, function(kid, d)
    local id = path_of(paths, at[d - 1], key_of(kid.fn))
    at[d] = id
    by[id] = (by[id] or 0) + kid.total
  end)
  return by
end

-- The function the page opens on (0-based): the costliest root (the
-- costliest function no other kept function calls; the costliest of all
-- when each is called), then down the chain of its costliest calls (each
-- at least half of its caller's inclusive cost, at most MAX_ENTRY steps)
-- to the first function named main on it, else to the first in the
-- program's own object (the object of the most self cost), else the root
-- itself: a valgrind profile opens on main, not on the dynamic loader's
-- entry, which calls everything (`0x...1ab70` in ld.so, self cost 15).
local MAX_ENTRY = 64
local function open_on(fns, edges)
  if #fns == 0 then return nil end
  local called, best = {}, {}
  for _, e in ipairs(edges) do
    local a, b = e[1], e[2]
    if a ~= b then
      called[b] = true
      if not best[a] or e[4][1] > best[a][4][1] then best[a] = e end
    end
  end
  local root = 0
  for i = 0, #fns - 1 do
    if not called[i] then root = i break end
  end
  -- the program's object: the one of the most self cost (first event)
  local by_object, program, most = {}, nil, -1
  for _, f in ipairs(fns) do
    if f.o then by_object[f.o] = (by_object[f.o] or 0) + f.s[1] end
  end
  for o, c in pairs(by_object) do
    if c > most or (c == most and o < program) then program, most = o, c end
  end
  local chain, seen, at = {}, { [root] = true }, root
  while #chain < MAX_ENTRY do
    chain[#chain + 1] = at
    local e = best[at]
    if not e or seen[e[2]] or 2 * e[4][1] < fns[at + 1].i[1] then break end
    at = e[2]
    seen[at] = true
  end
  for _, i in ipairs(chain) do
    if fns[i + 1].n == "main" then return i end
  end
  if program and fns[root + 1].o ~= program then
    for _, i in ipairs(chain) do
      if fns[i + 1].o == program then return i end
    end
  end
  return root
end

-- The source lines of the functions, for the page's second block of
-- data (read when a function is shown): every function of the table
-- that has lines (opts.source_functions: the first N by inclusive cost;
-- opts.source_share: those of at least that share of the total), its
-- opts.max_lines hottest. Compact: a function's lines are one array of
-- integers, for each line its file (0-based in files, -1: none), line
-- number, cost of each event and text (0-based in texts, -1: none);
-- a file's name and a line's text are written once.
local function source_lines(all, n, evs, incl1, total1, opts)
  local max_lines = opts.max_lines or 20
  local limit = math.min(opts.source_functions or n, n)
  local share = opts.source_share or 0
  local read = source_reader(opts.source_root)
  local files, file_ids, texts, text_ids, by = array({}), {}, array({}), {}, {}
  local ne = #evs
  local kept = 0
  for k = 1, limit do
    local fn = all[k]
    if (incl1[fn.index] or 0) < share * total1 then break end
    kept = k
    local key_of, rows = {}, {}
    for l in fn:lines() do
      local key = (l.file or "?") .. "\0" .. tostring(l.line or 0)
      local r = key_of[key]
      if not r then
        r = { l.file, l.line or 0, {} }
        for e = 1, ne do r[3][e] = 0 end
        key_of[key] = r
        rows[#rows + 1] = r
      end
      local c = l:cost()
      for e, ev in ipairs(evs) do r[3][e] = r[3][e] + (c[ev] or 0) end
    end
    table_sort(rows, function(a, b)
      if a[3][1] ~= b[3][1] then return a[3][1] > b[3][1] end
      return a[2] < b[2]
    end)
    if #rows > 0 then
      local flat = {}
      for i = 1, math.min(max_lines, #rows) do
        local r = rows[i]
        local file, fid = r[1], -1
        if file then
          fid = file_ids[file]
          if not fid then
            files[#files + 1] = file
            fid = #files - 1
            file_ids[file] = fid
          end
        end
        local src = read(file)
        local text, tid = src and r[2] > 0 and src[r[2]] or nil, -1
        -- (its indent dropped: the lines shown are apart from each other)
        text = text and text:match("^%s*(.-)%s*$")
        if text and text ~= "" then
          if #text > 160 then text = text:sub(1, 160) .. "..." end
          tid = text_ids[text]
          if not tid then
            texts[#texts + 1] = text
            tid = #texts - 1
            text_ids[text] = tid
          end
        end
        flat[#flat + 1] = fid
        flat[#flat + 1] = r[2]
        for e = 1, ne do flat[#flat + 1] = r[3][e] end
        flat[#flat + 1] = tid
      end
      by[tostring(k)] = flat
    end
  end
  return { limit = limit, share = share, kept = kept }, { files = files, texts = texts, fns = by }
end

-- The data of one profile: header, functions, calls, flame graphs, lines
-- (with opts.old, a profile to compare with: each frame also has the old
-- cost of its path of names, nil where the path is new).
local function profile_data(prof, opts)
  local evs = prof.events
  local ev1 = evs[1]
  local max_functions = opts.max_functions or 2000
  local threshold = opts.threshold or 0.0005
  local d = { events = array({ table.unpack(evs) }) }
  local totals = prof:totals()
  local parts, warnings = 0, array({})
  for _ in prof:parts() do parts = parts + 1 end
  for i, w in ipairs(prof:warnings()) do
    if i > 50 then warnings[#warnings + 1] = "..." break end
    warnings[#warnings + 1] = tostring(w)
  end
  d.header = { name = util.name_of(prof), cmd = prof.cmd, creator = prof.creator, pid = prof.pid, totals = totals,
    parts = parts, warnings = warnings, merged = require("callgrind.model.load").merged(prof) }
  -- functions: every one with a cost, the costliest by inclusive first event
  local all = {}
  for fn in prof:functions() do all[#all + 1] = fn end
  local incl = {}
  for _, ev in ipairs(evs) do incl[ev] = prof:inclusive_all(ev) end
  table_sort(all, function(a, b)
    local x, y = incl[ev1][a.index] or 0, incl[ev1][b.index] or 0
    if x ~= y then return x > y end
    return a.index < b.index
  end)
  local pos, fns = {}, array({})
  for _, fn in ipairs(all) do
    if #fns >= max_functions then break end
    local s, i = {}, {}
    local self = fn:self()
    for k, ev in ipairs(evs) do s[k] = self[ev] or 0; i[k] = incl[ev][fn.index] or 0 end
    fns[#fns + 1] = { n = fn.name, f = fn.file, o = fn.object, s = s, i = i, c = 0 }
    pos[fn] = #fns
  end
  d.left_out = #all - #fns
  -- calls into each function kept, from every caller (kept or left out)
  for call in prof:calls() do
    local q = pos[call.callee]
    if q then fns[q].c = fns[q].c + call.count end
  end
  -- calls between the functions kept: caller, callee, count, cost per event
  local edges = array({})
  for fn, p in pairs(pos) do
    local rows = fn:callee_functions()
    for r, row in ipairs(rows.rows) do
      local q = pos[row.fn]
      if q then
        local cost = {}
        for k, ev in ipairs(evs) do cost[k] = rows:cost(r, ev) end
        edges[#edges + 1] = { p - 1, q - 1, row.count, cost }   -- 0-based, as the page counts
      end
    end
  end
  table_sort(edges, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    return a[2] < b[2]
  end)
  d.edges = edges
  d.root = open_on(fns, edges)
  -- flame graphs, one per event: parent, function (position, or name), total, self
  -- flame graphs of the first opts.flame_events events: each is a walk
  -- of the stacks and a good part of the page (13 events of a cache
  -- simulation would be 13 of them)
  d.flame = {}
  local flame_events = opts.flame_events or 4
  for k, ev in ipairs(evs) do
    if k > flame_events then break end
    local with_old = opts.old and opts.old_events[ev]
    local top, old_top, collapsed = flame_trees(prof, with_old and opts.old, ev, threshold)
    local nodes = array({})
    local paths = with_old and new_paths()
    local was = with_old and old_paths(old_top, paths, opts.old_key)
    -- with an old profile: the cost of the stacks only the new one has
    -- (counted at their first frame) and of the old stacks it has no path
    -- to, as the differential SVG says them. Depth first without
    -- recursion (stacks.walk): at[d], path[d], is_new[d] are the node number,
    -- path and newness of the frame at depth d on the way down
    local keys, new_only, gone = {}, 0, 0
    local at, path, is_new = { [0] = 0 }, { [0] = 0 }, { [0] = false }
    stacks.walk(top, function(kid, dep)
      local fn = kid.fn
      local key = was and path_of(paths, path[dep - 1], opts.new_key(fn))
      local fresh = was and was[key] == nil
      if fresh and not is_new[dep - 1] then new_only = new_only + kid.total end
      if key then keys[key] = true end
      nodes[#nodes + 1] = { at[dep - 1], pos[fn] or (fn and fn.name) or "?", kid.total, kid.self,
        was and (was[key] or -1) }
      at[dep], path[dep], is_new[dep] = #nodes, key or 0, fresh or false
    end)
    if was then
      for key, t in pairs(was) do
        local parent = paths.up[key]
        if not keys[key] and (parent == 0 or keys[parent]) then gone = gone + t end
      end
    end
    d.flame[ev] = { exact = top.exact or top.source ~= nil or false, source = top.source, total = top.total,
      collapsed = collapsed or nil, nodes = nodes,
      pruned = not top.exact and top.pruned_below and string_format("%.4g", 100 * top.pruned_below) or nil,
      new_only = was and new_only or nil, gone = was and gone or nil,
      old_total = was and opts.old:total(ev) or nil }
  end
  local src
  d.source, src = source_lines(all, #fns, evs, incl[ev1], totals[ev1] or 0, opts)
  d.fns = fns
  return d, src
end

local STYLE = [==[
body{font:13px/1.35 system-ui,sans-serif;margin:0;color:#222}
header{background:#2d3e50;color:#fff;padding:8px 14px;overflow-wrap:anywhere}
header h1{font-size:16px;margin:0 0 4px}
header .meta{font-size:12px;opacity:.9}main{display:flex;gap:10px;padding:10px}
#left{flex:1 1 0;min-width:0}#right{flex:0 0 clamp(360px,32%,640px);min-width:0}
table{border-collapse:collapse;width:100%}th,td{padding:2px 6px;border-bottom:1px solid #eee;text-align:right}
th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}td.n,th.n{text-align:left}
td{font-variant-numeric:tabular-nums}
tr.sel{background:#ffe9a8}tbody tr:hover{background:#f3f7ff;cursor:pointer}
#tablewrap{max-height:420px;overflow:auto;border:1px solid #ddd}
#tablewrap table,#detail table{table-layout:fixed}
#tablewrap th,#tablewrap td,#detail td,#detail th{overflow:hidden;white-space:nowrap;text-overflow:ellipsis}
#flame{position:relative;border:1px solid #ddd;margin-top:8px;overflow:hidden}
.fr{position:absolute;height:17px;font-size:11px;line-height:17px;overflow:hidden;white-space:nowrap;
 border-right:1px solid #fff;cursor:pointer;padding-left:2px;box-sizing:border-box}
.fr:hover{outline:1px solid #000}.note{color:#666;font-size:12px}
#detail h2{font-size:14px;margin:4px 0;overflow-wrap:anywhere}#detail table{margin-bottom:8px}
pre{margin:0;font-size:11px;overflow:hidden;text-overflow:ellipsis}
.up{color:#b00}.down{color:#06a}
#cgwrap{max-height:300px;overflow:auto;border:1px solid #ddd;margin:6px 0}#cgraph text{font-size:11px}
#cgraph g.cgn{cursor:pointer}#cgraph g.cgn:hover rect{stroke:#000}
#diff{font-size:12px;margin-bottom:6px}#diff h2{font-size:14px;margin:0 0 4px;overflow-wrap:anywhere}
#diff table{width:auto;display:inline-table;vertical-align:top;margin:0 10px 4px 0}#diff td,#diff th{padding:1px 5px}
#moverswrap{max-height:150px;overflow:auto;border:1px solid #ddd}#moverswrap table{width:100%;margin:0}
]==]

-- luacheck: push ignore 631 (the page's script: long lines of JavaScript)
local SCRIPT = [==[
(function(){
var D=JSON.parse(document.getElementById('data').textContent);
var P=D.profile,E=P.events,ev=0,kind='i',sortKey='i',sortDir=-1,filter='',sel=P.root==null?null:P.root,zoom=0,SRC=null;
function $(id){return document.getElementById(id)}
function fmt(n){return (n==null?'':String(n)).replace(/\B(?=(\d{3})+(?!\d))/g,',')}
function pct(v,t){return t?(100*v/t).toFixed(2)+'%':''}
function esc(s){return String(s==null?'':s).replace(/[&<>"]/g,function(c){return{'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]}).replace(/[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g,function(c){var x=c.charCodeAt(0).toString(16).toUpperCase();return x.length<3&&c<'\x80'?'\\x'+(x.length<2?'0':'')+x:'\\u{'+x+'}'})}
// a long text shortened in the middle to n characters (never inside a surrogate pair)
function mid(s,n){s=String(s==null?'':s);if(s.length<=n)return s;var a=Math.ceil((n-1)/2),b=n-1-a;
 if(/[\ud800-\udbff]/.test(s.charAt(a-1)))a--;if(/[\udc00-\udfff]/.test(s.charAt(s.length-b)))b--;return s.slice(0,a)+'\u2026'+s.slice(s.length-b)}
// a cell of a name: shortened in the middle, whole on hover
function named(s,n,id){return '<td class="n"'+(id?' id="'+id+'"':'')+' title="'+esc(s)+'">'+esc(mid(s,n))+'</td>'}
function chg(now,was){return was>0?(now>=was?'+':'')+(100*(now-was)/was).toFixed(1)+'%':'new'}
// the second block of data, the source lines: read when a function is first shown
function src(){if(!SRC)SRC=JSON.parse($('srcdata').textContent);return SRC}
function total(){return P.header.totals[E[ev]]||0}
var sel_ev=$('event');E.forEach(function(e,i){var o=document.createElement('option');o.value=i;o.textContent=e;sel_ev.appendChild(o)});
sel_ev.onchange=function(){ev=+sel_ev.value;zoom=0;render()};
$('filter').oninput=function(){filter=this.value.toLowerCase();table()};
document.querySelectorAll('th[data-k]').forEach(function(th){th.onclick=function(){var k=th.dataset.k;
 if(sortKey===k)sortDir=-sortDir;else{sortKey=k;sortDir=k==='n'?1:-1}table()}});
// the columns of numbers as wide as their largest number: the names take the rest
var NW=1,CW=1;E.forEach(function(e){NW=Math.max(NW,fmt(P.header.totals[e]||0).length)});P.fns.forEach(function(f){CW=Math.max(CW,fmt(f.c).length)});
$('c_s').style.width=$('c_i').style.width='calc('+NW+'ch + 14px)';$('c_sp').style.width=$('c_ip').style.width='calc(7ch + 14px)';$('c_c').style.width='calc('+CW+'ch + 14px)';
function chars(id){var th=$(id);return Math.max(12,Math.floor(((th&&th.clientWidth)||200)/7.2)-2)}
function val(f,k){return k==='n'?f.n:k==='s'?f.s[ev]:k==='c'?f.c:f.i[ev]}
function rows(){var r=[];P.fns.forEach(function(f,i){if(!filter||(f.n+' '+(f.f||'')+' '+(f.o||'')).toLowerCase().indexOf(filter)>=0)r.push(i)});
 r.sort(function(a,b){var x=val(P.fns[a],sortKey),y=val(P.fns[b],sortKey);if(x<y)return -sortDir;if(x>y)return sortDir;return a-b});return r}
function table(){var r=rows(),t=total(),h=[];var n=Math.min(r.length,500),nc=chars('th_n'),fc=chars('th_f');
 for(var k=0;k<n;k++){var i=r[k],f=P.fns[i];h.push('<tr data-i="'+i+'"'+(i===sel?' class="sel"':'')+'>'+named(f.n,nc)+
  '<td>'+fmt(f.s[ev])+'</td><td>'+pct(f.s[ev],t)+'</td><td>'+fmt(f.i[ev])+'</td><td>'+pct(f.i[ev],t)+'</td><td>'+fmt(f.c)+
  '</td>'+named(f.f||f.o||'',fc)+'</tr>')}
 $('rows').innerHTML=h.join('');$('count').textContent=r.length+' of '+P.fns.length+' functions'+(r.length>n?' (first '+n+' shown)':'');
 document.querySelectorAll('#rows tr').forEach(function(tr){tr.onclick=function(){select(+tr.dataset.i)}})}
function select(i){sel=i;table();detail()}
function nolines(){var S=P.source,f=P.fns[sel];
 if(sel+1>S.limit)return 'Source lines are kept for the first '+S.limit+' functions by inclusive cost (source_functions); this one is number '+(sel+1)+'.';
 if(sel+1>S.kept)return 'Source lines are kept for the functions of at least '+(100*S.share)+'% of the total (source_share); this one has '+pct(f.i[0],P.header.totals[E[0]]||0)+'.';
 return 'The profile has no source line of this function.'}
function detail(){var f=P.fns[sel],h=[],t=total(),W=(NW+2)+'ch',DW=$('detail').clientWidth||400,NC=Math.max(12,Math.floor((DW-(NW+CW+4)*7.3)/7.2)-2);if(!f){$('detail').innerHTML='<p class="note">Click a function or a frame.</p>';return}
 h.push('<h2 id="dname" title="'+esc(f.n)+'">'+esc(mid(f.n,300))+'</h2><div class="note" title="'+esc(f.f||'?')+'">'+esc(mid(f.f||'?',120))+'; '+esc(mid(f.o||'?',120))+'</div>');
 h.push('<div>self <b id="dself">'+fmt(f.s[ev])+'</b> ('+pct(f.s[ev],t)+'), inclusive <b id="dincl">'+fmt(f.i[ev])+'</b> ('+pct(f.i[ev],t)+') '+esc(E[ev])+', '+fmt(f.c)+' calls in</div>');
 function edges(side){var list=P.edges.filter(function(e){return side?e[0]===sel:e[1]===sel});list.sort(function(a,b){return b[3][ev]-a[3][ev]});
  var r=['<table id="'+(side?'callees':'callers')+'"><tr><th class="n" title="by the call\'s cost">'+(side?'callees':'callers')+'</th><th style="width:'+(CW+2)+'ch">calls</th><th style="width:'+W+'">call\'s '+esc(E[ev])+'</th></tr>'];
  list.forEach(function(e){var g=P.fns[side?e[1]:e[0]];r.push('<tr data-i="'+(side?e[1]:e[0])+'">'+named(g.n,NC)+'<td>'+fmt(e[2])+'</td><td>'+fmt(e[3][ev])+'</td></tr>')});
  if(!list.length)r.push('<tr><td class="n note">none</td><td></td><td></td></tr>');return r.join('')+'</table>'}
 h.push('<div id="cgwrap"></div>');
 h.push(edges(false),edges(true));
 var S=src(),L=S.fns[String(sel+1)],K=E.length;
 if(L){h.push('<table id="lines"><tr><th class="n" style="width:38%">line</th><th style="width:'+W+'">'+esc(E[ev])+'</th><th class="n">source</th></tr>');
  for(var j=0;j<L.length;j+=K+3){var fl=L[j]<0?'?':S.files[L[j]],tx=L[j+2+K]<0?'':S.texts[L[j+2+K]];
   h.push('<tr><td class="n" title="'+esc(fl)+':'+L[j+1]+'">'+esc(mid(fl+':'+L[j+1],Math.max(12,Math.floor(DW*0.38/7.2)-2)))+'</td><td>'+fmt(L[j+2+ev])+'</td><td class="n" title="'+esc(tx)+'"><pre>'+esc(tx)+'</pre></td></tr>')}
  h.push('</table>')}
 else h.push('<p class="note" id="nolines">'+esc(nolines())+'</p>');
 $('detail').innerHTML=h.join('');cgraph();
 document.querySelectorAll('#detail tr[data-i]').forEach(function(tr){tr.onclick=function(){select(+tr.dataset.i)}})}
function cgraph(){var wrap=$('cgwrap'),f=P.fns[sel],t=total(),W=Math.max(360,(wrap.clientWidth||540)-4),NW=Math.floor(W/3)-16,NH=34,G=8,MAX=12;
 function side(out){var l=P.edges.filter(function(e){return out?e[0]===sel&&e[1]!==sel:e[1]===sel&&e[0]!==sel});l.sort(function(a,b){return b[3][ev]-a[3][ev]});return l}
 var ins=side(false),outs=side(true),rows=Math.max(1,Math.min(MAX,ins.length)+(ins.length>MAX?1:0),Math.min(MAX,outs.length)+(outs.length>MAX?1:0)),H=rows*(NH+G)+G+14;
 // the function in the middle of the box as it opens (its max-height), each column from the costliest call down:
 // the costliest calls are seen without scrolling
 var VH=(parseFloat(getComputedStyle(wrap).maxHeight)||300)-2,cy=Math.min(H/2,VH/2),s=['<svg id="cgraph" width="'+W+'" height="'+H+'" viewBox="0 0 '+W+' '+H+'">'];
 function fit(n){return mid(n,Math.floor((NW-8)/6.2))}
 function node(i,x,y,cls,id,cost){var g=P.fns[i];s.push('<g class="cgn '+cls+'"'+(id?' id="'+id+'"':'')+' data-i="'+i+'" data-name="'+esc(g.n)+'" data-incl="'+fmt(g.i[ev])+'"'+(cost==null?'':' data-cost="'+fmt(cost)+'"')+'><title>'+esc(g.n)+'\ninclusive '+fmt(g.i[ev])+' '+esc(E[ev])+' ('+pct(g.i[ev],t)+')'+(cost==null?'':'\nthis call: '+fmt(cost))+'</title><rect x="'+x+'" y="'+(y-NH/2)+'" width="'+NW+'" height="'+NH+'" rx="4" fill="'+(id?'#ffe9a8':'#eef3fb')+'" stroke="#789"/><text x="'+(x+4)+'" y="'+(y-3)+'">'+esc(fit(g.n))+'</text><text x="'+(x+4)+'" y="'+(y+12)+'">'+label(cost==null?'':'call ',cost==null?g.i[ev]:cost)+'</text></g>')}
 // a node's cost, and its share when both fit
 function label(what,c){var l=what+fmt(c)+' ('+pct(c,t)+')';return l.length<=Math.floor((NW-8)/6.2)?l:what+fmt(c)}
 function column(list,x,cls,out){var n=Math.min(MAX,list.length),y0=Math.max(G+NH/2,cy-(n+(list.length>MAX?1:0))*(NH+G)/2+NH/2+G/2);
  list.slice(0,n).forEach(function(e,k){var y=y0+k*(NH+G),i=out?e[1]:e[0],x1=out?X1+NW:x+NW,x2=out?x:X1;
   s.push('<path d="M'+x1+' '+(out?cy:y)+' C'+(x1+12)+' '+(out?cy:y)+' '+(x2-12)+' '+(out?y:cy)+' '+x2+' '+(out?y:cy)+'" fill="none" stroke="#99a" stroke-width="'+Math.max(1,Math.min(6,6*e[3][ev]/Math.max(1,f.i[ev])))+'"/>');
   node(i,x,y,cls,null,e[3][ev])});
  if(list.length>MAX)s.push('<text x="'+x+'" y="'+(y0+n*(NH+G))+'">'+(list.length-MAX)+' more</text>')}
 var X1=Math.floor(W/3)+8;column(ins,4,'cgcaller',false);column(outs,W-NW-4,'cgcallee',true);node(sel,X1,cy,'cgself','cgself');
 if(!ins.length)s.push('<text x="4" y="'+(cy+4)+'" class="note">no callers</text>');if(!outs.length)s.push('<text x="'+(W-NW-4)+'" y="'+(cy+4)+'">no callees</text>');
 wrap.innerHTML=s.join('')+'</svg>';wrap.scrollTop=Math.max(0,cy-wrap.clientHeight/2);wrap.dataset.centre=String(cy);
 wrap.querySelectorAll('g.cgn').forEach(function(g){g.onclick=function(){select(+g.dataset.i)}})}
var COLORS=['#e8743b','#19a979','#945ecf','#ed4a7b','#13a4b4','#525df4','#bf399e','#6c8893','#ee6868','#2f6497'];
// a diff's frame: red more, blue less, the deeper the larger the ratio new/old
// (the same depth for x times more and x times less; full at 4 times); purple: a new path
function tint(now,was){if(was<0)return '#b07cd8';if(now===was)return '#ddd';
 var a=was>0&&now>0?Math.min(1,Math.abs(Math.log(now/was))/Math.log(4)):1,c=Math.round(225-165*a);
 return now>was?'rgb(255,'+c+','+c+')':'rgb('+c+','+c+',255)'}
function flame(){var F=P.flame[E[ev]],box=$('flame');
 if(!F){$('flamenote').textContent='No flame graph of '+E[ev]+': the page has those of the first '+Object.keys(P.flame).length+' events (opts.flame_events).';box.innerHTML='';box.style.height='0';return}
 var W=box.clientWidth||1000,N=F.nodes,kids={},depth=[],x=[];
 $('flamenote').textContent=(D.diff?'the new profile\'s stacks, coloured by change (red: more, blue: less, the deeper the larger the ratio new/old, full at 4 times; purple: only in the new, '+(F.new_only!=null?pct(F.new_only,F.total):'')+' of its cost; '+(F.gone!=null?pct(F.gone,F.old_total):'')+' of the old cost is in stacks gone); ':'')+(F.exact?'exact stacks'+(F.source?' ('+F.source+')':''):'stacks estimated from the call graph (no stacks were recorded'+(F.pruned?'; those below '+F.pruned+'% of the total pruned':'')+')')+(F.collapsed?' (recursion collapsed)':'')+
  '; frames below '+(100*D.threshold)+'% of the total left out. Click a frame to zoom, the top bar to zoom out.';
 N.forEach(function(nd,k){var p=nd[0];(kids[p]=kids[p]||[]).push(k+1)});
 var root=zoom,rt=root?N[root-1][2]:F.total,h=[],maxd=0;
 function name(k){var f=N[k-1][1];return typeof f==='number'?P.fns[f-1].n:f}
 function lay(k1,d1,x1){var st=[[k1,d1,x1]];while(st.length){var t=st.pop(),k=t[0],d=t[1],x0=t[2];if(d>maxd)maxd=d;var w=N[k-1][2]/rt*W;if(w<0.5)continue;var f=N[k-1][1],c=typeof f==='number'?(P.fns[f-1].o||P.fns[f-1].f||''):'';
  var col=COLORS[Math.abs([].reduce.call(c,function(a,ch){return a*31+ch.charCodeAt(0)|0},7))%COLORS.length],was=N[k-1][4];
  if(was!=null)col=tint(N[k-1][2],was);
  h.push('<div class="fr" data-k="'+k+'" style="left:'+x0+'px;width:'+w+'px;top:'+(d*18)+'px;background:'+col+'" title="'+esc(name(k))+' '+fmt(N[k-1][2])+' '+esc(E[ev])+' ('+pct(N[k-1][2],F.total)+')'+(was==null?'':was<0?', new':', was '+fmt(was)+' ('+chg(N[k-1][2],was)+')')+'">'+esc(name(k))+'</div>');
  var xx=x0,ch=kids[k]||[],xs=[];ch.forEach(function(c2){xs.push(xx);xx+=N[c2-1][2]/rt*W});for(var i=ch.length-1;i>=0;i--)st.push([ch[i],d+1,xs[i]])}}
 h.push('<div class="fr" data-k="0" id="flameall" style="left:0;width:'+W+'px;top:0;background:#999">all '+fmt(F.total)+' '+esc(E[ev])+(root?' (zoomed: '+esc(mid(name(root),200))+')':'')+'</div>');
 if(root)lay(root,1,0);else{var xx=0;(kids[0]||[]).forEach(function(k){lay(k,1,xx);xx+=N[k-1][2]/rt*W})}
 box.innerHTML=h.join('');box.style.height=((maxd+1)*18+2)+'px';box.dataset.zoom=root;
 box.querySelectorAll('.fr').forEach(function(el){el.onclick=function(){var k=+el.dataset.k;zoom=k;flame();
  if(k){var f=N[k-1][1];if(typeof f==='number')select(f-1)}}})}
// a diff: a compact summary above the same table and flame graph (the movers in a box of their own)
function diff(){if(!D.diff)return;var X=D.diff,e=E[ev],h=['<h2>Diff: '+esc(mid(X.old,200))+' &rarr; '+esc(mid(X.new,200))+'</h2><table id="difftotals"><tr><th class="n">event</th><th>old</th><th>new</th><th>change</th></tr>'];
 X.events.forEach(function(e2){var t=X.totals[e2];h.push('<tr><td class="n">'+esc(e2)+'</td><td>'+fmt(t[0])+'</td><td>'+fmt(t[1])+'</td><td class="'+(t[1]>t[0]?'up':t[1]<t[0]?'down':'')+'">'+(t[1]-t[0]>0?'+':'')+fmt(t[1]-t[0])+' ('+chg(t[1],t[0])+')</td></tr>')});
 var M=X.matched[e];if(M)h.push('</table><table id="matched"><tr><th class="n">matched function by function ('+esc(e)+')</th><th>functions</th><th>old</th><th>share of old</th><th>new</th><th>share of new</th></tr><tr><td class="n'+(M.old_share<0.5||M.new_share<0.5?' up':'')+'">'+(M.old_share<0.5||M.new_share<0.5?'less than half matched: the comparison is doubtful':'the costs compared function by function')+'</td><td>'+fmt(M.functions)+'</td><td>'+fmt(M.old)+'</td><td>'+(100*M.old_share).toFixed(1)+'%</td><td>'+fmt(M.new)+'</td><td>'+(100*M.new_share).toFixed(1)+'%</td></tr>');
 var R=X.movers[e]||[];
 h.push('</table><div class="note">'+R.length+' movers by self '+esc(e)+'</div><div id="moverswrap"><table id="movers"><tr><th class="n">function (self '+esc(e)+')</th><th>old</th><th>new</th><th>delta</th><th>%</th></tr>');
 R.forEach(function(r){h.push('<tr>'+named(r[0],80)+'<td>'+fmt(r[1])+'</td><td>'+fmt(r[2])+'</td><td class="'+(r[3]>0?'up':'down')+'">'+(r[3]>0?'+':'')+fmt(r[3])+'</td><td>'+(r[4]==null?'new':(r[4]>0?'+':'')+r[4].toFixed(1)+'%')+'</td></tr>')});
 $('diff').innerHTML=h.join('')+'</table></div>'}
function render(){table();flame();detail();diff()}
window.CG={data:D,select:select,tint:tint,setEvent:function(i){sel_ev.value=i;sel_ev.onchange()}};
window.addEventListener('resize',function(){table();flame()});
render();
})();
]==]
-- luacheck: pop

-- The page around the data.
local function page(title, data, header_html, src)
  return table_concat({
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; ",
    "script-src 'unsafe-inline'; img-src data:\">",
    "<title>", html_escape(title), "</title><style>", STYLE, "</style></head><body>",
    "<header><h1>", html_escape(title), "</h1><div class=\"meta\">", header_html, "</div></header>",
    "<main><div id=\"left\"><div id=\"diff\"></div><div>event <select id=\"event\"></select> ",
    "filter <input id=\"filter\" placeholder=\"name, file or object\"> <span id=\"count\" class=\"note\"></span></div>",
    "<div id=\"tablewrap\"><table><colgroup><col id=\"c_n\"><col id=\"c_s\"><col id=\"c_sp\"><col id=\"c_i\">",
    "<col id=\"c_ip\"><col id=\"c_c\"><col id=\"c_f\" style=\"width:20%\"></colgroup><thead><tr>",
    "<th class=\"n\" data-k=\"n\" id=\"th_n\">function</th><th data-k=\"s\">self</th>",
    "<th>%</th><th data-k=\"i\">inclusive</th><th>%</th><th data-k=\"c\">calls</th>",
    "<th class=\"n\" id=\"th_f\">file or object</th>",
    "</tr></thead><tbody id=\"rows\"></tbody></table></div>",
    "<div class=\"note\" id=\"flamenote\"></div><div id=\"flame\"></div></div>",
    "<div id=\"right\"><div id=\"detail\"></div></div></main>",
    "<script type=\"application/json\" id=\"data\">", to_json(data), "</script>",
    "<script type=\"application/json\" id=\"srcdata\">", to_json(src), "</script>",
    "<script>", SCRIPT, "</script></body></html>\n" })
end

local function header_html(prof, d)
  local h = d.header
  local t = {}
  local commas = require("callgrind.model.report").commas
  for _, ev in ipairs(prof.events) do t[#t + 1] = ev .. " " .. commas(h.totals[ev]) end
  local bits = { "command " .. html_escape(h.cmd or "?"), "totals " .. html_escape(table_concat(t, ", ")),
    h.parts .. " part(s)", "creator " .. html_escape(h.creator or "?") }
  if h.merged then bits[#bits + 1] = "merged: " .. html_escape(h.merged) end
  if #h.warnings > 0 then bits[#bits + 1] = #h.warnings .. " warning(s): " .. html_escape(h.warnings[1]) end
  if d.left_out > 0 then bits[#bits + 1] = d.left_out .. " functions left out (past the first "
    .. #d.fns .. " by inclusive cost)" end
  local s = d.source
  if s.kept < #d.fns then
    bits[#bits + 1] = "source lines kept for the first " .. s.kept .. " functions by inclusive cost"
      .. (s.kept < s.limit and string_format(" (those of at least %g%% of the total: source_share)", 100 * s.share)
        or " (source_functions)")
  end
  return table_concat(bits, " &middot; ")
end

local function profile_html(prof, opts, fname, n)
  opts = args.options(opts, fname, n, "html")
  local d, src = profile_data(prof, opts)
  local title = opts.title or ("callgrind report: " .. tostring(util.name_of(prof)))
  return page(title, { profile = d, threshold = opts.threshold or 0.0005 }, header_html(prof, d), src)
end

--- The report of a profile as HTML text.
-- @usage local text = prof:html()
function Profile:html(opts)
  return profile_html(self, opts, "html", 1)
end

--- Writes the report of a profile to a file (atomically).
-- @usage assert(prof:write_html("report.html"))
function Profile:write_html(path, opts)
  args.check_type(path, "string", "write_html", 1)
  local text = profile_html(self, opts, "write_html", 2)
  return write.write_file_atomic(path, text)
end

-- The report of a diff: the new profile's report with the diff's totals
-- and movers (self cost, every event).
local function diff_html(d, opts, fname, n)
  opts = args.options(opts, fname, n, "html")
  local new = d.new
  local old_events = {}
  for _, ev in ipairs(d.old.events) do old_events[ev] = true end
  -- a path of frames is the numbers of their match keys, one number per
  -- key on both sides
  local ids, nids = {}, 0
  local function id(key)
    if not ids[key] then nids = nids + 1; ids[key] = tostring(nids) end
    return ids[key]
  end
  local popts = setmetatable({ old = d.old, old_events = old_events,
    old_key = function(fn) return id(fn and (d.old_key[fn] or fn.name) or "?") end,
    new_key = function(fn) return id(fn and (d.new_key[fn] or fn.name) or "?") end }, { __index = opts })
  local data, src = profile_data(new, popts)
  local evs, totals, movers, matched = array({}), {}, {}, {}
  local has = {}
  for _, ev in ipairs(d.old.events) do has[ev] = true end
  for _, ev in ipairs(new.events) do
    if has[ev] then
      evs[#evs + 1] = ev
      local o, nw = d:total(ev)
      totals[ev] = { o, nw }
      local rows = array({})
      for i, r in ipairs(d:movers(ev)) do
        if i > (opts.movers or 50) then break end
        rows[#rows + 1] = { r.name, r.old, r.new, r.delta, r.percent }
      end
      movers[ev] = rows
      local m = d:matched(ev)
      matched[ev] = { functions = m.functions, old = m.old, new = m.new, old_share = m.old_share,
        new_share = m.new_share }
    end
  end
  local old_name, new_name = util.name_of(d.old), util.name_of(new)
  local title = opts.title or ("callgrind diff: " .. tostring(old_name) .. " -> " .. tostring(new_name))
  return page(title, { profile = data, threshold = opts.threshold or 0.0005,
    diff = { old = old_name, new = new_name, events = evs, totals = totals, movers = movers, matched = matched } },
    header_html(new, data), src)
end

--- The diff's report page as one HTML string (`d:html([opts])`): the new
-- profile's page with the diff's totals and movers.
-- @usage local page = callgrind.diff(old, new):html({ movers = 20 })
M.diff_html = function(d, opts) return diff_html(d, opts, "html", 1) end

--- Writes the diff's report page atomically (`d:write_html(path [, opts])`).
-- @usage assert(callgrind.diff(old, new):write_html("diff.html"))
M.write_diff_html = function(d, path, opts)
  args.check_type(path, "string", "write_html", 1)
  return write.write_file_atomic(path, diff_html(d, opts, "write_html", 2))
end

return M
