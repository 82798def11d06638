--- The history's trend page: one self-contained HTML page (its data as
-- JSON in a `<script type="application/json">` block with every `<` as
-- `\u003c`, its script and styles inline, a Content-Security-Policy that
-- allows no request), in the report's style: a chart per series and line
-- (branch, machine), its steps marked (red up, blue down, drawn over the
-- other points, which lie closer than their size on a long history); a
-- click on a point shows its commit, its value, the step and the series
-- that moved at that commit.
-- @module callgrind.history.trend
local util = require "callgrind.util"

local ipairs, pairs, setmetatable = ipairs, pairs, setmetatable
local table_concat, table_sort = table.concat, table.sort

local M = {}

local STYLE = [==[
body{font:13px/1.35 system-ui,sans-serif;margin:0;color:#222}
header{background:#2d3e50;color:#fff;padding:8px 14px}header h1{font-size:16px;margin:0 0 4px}
header .meta{font-size:12px;opacity:.9}main{display:flex;gap:10px;padding:10px}
#left{flex:3;min-width:0}#right{flex:2;min-width:0}.note{color:#666;font-size:12px}
.chart{border:1px solid #ddd;margin:0 0 10px;padding:4px 6px}.chart h2{font-size:13px;margin:2px 0}
svg .ln{fill:none;stroke:#2d3e50;stroke-width:1.5}svg .pt{fill:#2d3e50;cursor:pointer}
svg .up{fill:#b00;cursor:pointer}svg .down{fill:#06a;cursor:pointer}svg .sel{stroke:#000;stroke-width:2}
table{border-collapse:collapse;width:100%}th,td{padding:2px 6px;border-bottom:1px solid #eee;text-align:right}
th{background:#f4f4f4}td.n,th.n{text-align:left}.upt{color:#b00}.downt{color:#06a}
#detail h2{font-size:14px;margin:4px 0}
]==]

-- luacheck: push ignore 631 (the page's script: long lines of JavaScript)
local SCRIPT = [==[
(function(){
var D=JSON.parse(document.getElementById('data').textContent);
function esc(s){return String(s==null?'':s).replace(/[&<>"]/g,function(c){return{'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]}).replace(/[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g,function(c){var x=c.charCodeAt(0).toString(16).toUpperCase();return x.length<3&&c<'\x80'?'\\x'+(x.length<2?'0':'')+x:'\\u{'+x+'}'})}
function commas(n){var s=String(Math.abs(n)),o='';while(s.length>3){o=','+s.slice(-3)+o;s=s.slice(0,-3)}return(n<0?'-':'')+s+o}
function pct(x){return x==null?'from 0':(x>0?'+':'')+x.toFixed(2)+'%'}
var charts=document.getElementById('charts'),detail=document.getElementById('detail'),W=640,H=150,P=30;
function show(ci,pi){var c=D.charts[ci],p=c.points[pi],cm=D.commits[p[0]],s=c.steps[pi];
 document.querySelectorAll('svg circle.sel').forEach(function(e){e.classList.remove('sel')});
 var dot=document.getElementById('p'+ci+'_'+pi);if(dot)dot.classList.add('sel');
 var h='<h2>'+esc(c.series)+'</h2><table><tr><th class="n">commit</th><td class="n" id="dcommit">'+esc(cm[0])+'</td></tr>'
 +'<tr><th class="n">time</th><td class="n">'+esc(cm[1])+'</td></tr><tr><th class="n">line</th><td class="n">'+esc(c.branch)+' on '+esc(c.machine)+'</td></tr>'
 +'<tr><th class="n">value</th><td id="dvalue">'+commas(p[1])+(p[2]!==p[3]?' ('+commas(p[2])+' .. '+commas(p[3])+')':'')+'</td></tr></table>';
 if(s){h+='<p id="dstep" class="'+(s.delta>0?'upt':'downt')+'">step from '+esc(D.commits[s.from][0])+': '+commas(s.before)+' &rarr; '+commas(s.after)+' ('+pct(s.share)+')</p>'}
 var m=D.moved[p[0]+' '+c.line]||[];
 if(m.length){h+='<h2>moved at this commit</h2><table id="moved"><tr><th class="n">series</th><th>before</th><th>after</th><th>change</th></tr>';
  m.forEach(function(r){h+='<tr><td class="n">'+esc(r[0])+'</td><td>'+commas(r[1])+'</td><td>'+commas(r[2])+'</td><td class="'+(r[2]>r[1]?'upt':'downt')+'">'+pct(r[3])+'</td></tr>'});h+='</table>'}
 detail.innerHTML=h}
D.charts.forEach(function(c,ci){var pts=c.points,lo=Infinity,hi=-Infinity;
 pts.forEach(function(p){lo=Math.min(lo,p[2]);hi=Math.max(hi,p[3])});if(hi===lo){hi=lo+1}
 var n=Math.max(pts.length-1,1);function x(i){return P+i*(W-2*P)/n}function y(v){return H-12-(v-lo)*(H-24)/(hi-lo)}
 var path=pts.map(function(p,i){return(i?'L':'M')+x(i).toFixed(1)+' '+y(p[1]).toFixed(1)}).join('');
 var svg='<svg width="'+W+'" height="'+H+'" viewBox="0 0 '+W+' '+H+'"><text x="2" y="10" font-size="10">'+commas(hi)+'</text><text x="2" y="'+(H-2)+'" font-size="10">'+commas(lo)+'</text><path class="ln" d="'+path+'"/>';
 var marks='';
 pts.forEach(function(p,i){var s=c.steps[i],cl=s?(s.delta>0?'up':'down'):'pt';
  var dot='<circle id="p'+ci+'_'+i+'" class="'+cl+'" data-chart="'+ci+'" data-point="'+i+'" data-commit="'+esc(D.commits[p[0]][0])+'" cx="'+x(i).toFixed(1)+'" cy="'+y(p[1]).toFixed(1)+'" r="'+(s?5:3)+'"><title>'+esc(D.commits[p[0]][0].slice(0,12))+': '+commas(p[1])+'</title></circle>';
  if(s)marks+=dot;else svg+=dot});
 svg+=marks;
 var div=document.createElement('div');div.className='chart';div.dataset.series=c.series;
 div.innerHTML='<h2>'+esc(c.series)+' <span class="note">'+esc(c.branch)+' on '+esc(c.machine)+', '+pts.length+' commits, '+Object.keys(c.steps).length+' steps'+(c.kind==='spread'?', spread '+c.spread.toFixed(2)+'%':'')+'</span></h2>'+svg+'</svg>';
 charts.appendChild(div)});
charts.addEventListener('click',function(e){var t=e.target;if(t.dataset&&t.dataset.chart!=null)show(+t.dataset.chart,+t.dataset.point)});
document.getElementById('count').textContent=D.charts.length+' charts';
window.CG={data:D,show:show};
})();
]==]
-- luacheck: pop

local function html_escape(s)
  return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

--- The page of a History (hist:html's body); `history` is the
-- callgrind.history module (given, not required: it requires this one).
-- @usage local text = trend.page(hist, {}, require("callgrind.history"))
function M.page(h, opts, history)
  local ARRAY = history.ARRAY
  local function array(t) return setmetatable(t or {}, ARRAY) end
  local names = history.methods.series(h, opts.series)
  local changes = history.all_changes(h, { tolerance = opts.tolerance, branch = opts.branch,
    machine = opts.machine })
  -- steps by series, line and commit; moved by commit and line
  local step_at, moved = {}, {}
  for _, c in ipairs(changes) do
    local line = c.branch .. "\0" .. c.machine
    step_at[c.series .. "\0" .. line .. "\0" .. c.commit] = c
    local key = c.commit .. "\0" .. line
    moved[key] = moved[key] or {}
    local list = moved[key]
    list[#list + 1] = c
  end
  local commits, commit_index = array(), {}
  local function commit_id(commit, time)
    local i = commit_index[commit]
    if not i then
      commits[#commits + 1] = array({ commit, history.iso_time(time) })
      i = #commits - 1
      commit_index[commit] = i
    end
    return i
  end
  local charts, lines = array(), {}
  for _, name in ipairs(names) do
    local s = history.show_series(h, name, opts)
    local by_line, order = {}, {}
    for _, p in ipairs(s) do
      local line = p.branch .. "\0" .. p.machine
      if not by_line[line] then
        by_line[line] = { series = name, kind = s.kind, spread = s.spread_pct, branch = p.branch,
          machine = p.machine, points = array(), steps = {} }
        order[#order + 1] = line
      end
      local c = by_line[line]
      c.points[#c.points + 1] = array({ commit_id(p.commit, p.time), p.value, p.lo, p.hi })
      local st = step_at[name .. "\0" .. line .. "\0" .. p.commit]
      if st then
        c.steps[tostring(#c.points - 1)] = { from = commit_id(st.before_commit, p.time), before = st.before,
          after = st.after, delta = st.delta, share = st.share }
      end
    end
    for _, line in ipairs(order) do
      if not lines[line] then lines[line] = #charts end
      local c = by_line[line]
      c.line = tostring(lines[line])
      charts[#charts + 1] = c
    end
  end
  local moved_out = {}
  for key, list in pairs(moved) do
    local commit, line = key:match("^(.-)%z(.*)$")
    if commit_index[commit] and lines[line] then
      table_sort(list, function(a, b)
        local x, y = math.abs(a.delta), math.abs(b.delta)
        if x ~= y then return x > y end
        return a.series < b.series
      end)
      local rows = array()
      for i = 1, math.min(#list, 20) do
        local c = list[i]
        rows[i] = array({ c.series, c.before, c.after, c.share })
      end
      moved_out[commit_index[commit] .. " " .. lines[line]] = rows
    end
  end
  local data = { charts = charts, commits = commits, moved = moved_out }
  local title = opts.title or "callgrind history"
  local text = history.json(data):gsub("<", "\\u003c")
  local meta = html_escape(util.printable(string.format("%s: %d series, %d commits, %d steps", h.url, #names,
    #commits, #changes)))
  return table_concat({
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; ",
    "script-src 'unsafe-inline'; img-src data:\">",
    "<title>", html_escape(util.printable(title)), "</title><style>", STYLE, "</style></head><body>",
    "<header><h1>", html_escape(util.printable(title)), "</h1><div class=\"meta\">", meta,
    " <span id=\"count\"></span></div></header>",
    "<main><div id=\"left\"><div id=\"charts\"></div></div><div id=\"right\"><div id=\"detail\">",
    "<p class=\"note\">click a point: its commit, and the series that moved there</p></div></div></main>",
    "<script type=\"application/json\" id=\"data\">", text, "</script>",
    "<script>", SCRIPT, "</script></body></html>\n" })
end

return M
