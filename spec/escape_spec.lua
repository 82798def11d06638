-- Every output escapes a function's name for its reader: text tables show
-- control bytes as \xHH (a terminal's escapes are shown, never obeyed),
-- CSV keeps a spreadsheet from reading a name as a formula, JSON is valid
-- UTF-8 whatever the bytes (Python's json reads it back), the command
-- line prints what the tables print. Names a profiler really meets: C++
-- operators, Lua chunk names, bytes from a corrupt or hostile binary.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local HOSTILE = {
  "=HYPERLINK(\"http://x\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)",
  "esc\27]0;title\7", "bell\7", "cr\rmid", "del\127", "nul\0byte", "bad\255\254utf8",
  "half\226\130", "ok ünïcödé", "semi;colon", "comma,name", 'quote"name', "back\\slash", "<b>&amp;</b>",
  "pipe|name", "operator<<(std::ostream&, int)", "main chunk", "anonymous@m.lua:12",
}

-- A profile whose functions are the hostile names, each with its own cost.
local function hostile()
  local lines = { "events: Ir", "fn=main", "1 1" }
  for i, name in ipairs(HOSTILE) do
    lines[#lines + 1] = "cfn=" .. name
    lines[#lines + 1] = "calls=1 1"
    lines[#lines + 1] = (i + 1) .. " " .. (i * 10)
  end
  for i, name in ipairs(HOSTILE) do
    lines[#lines + 1] = "fn=" .. name
    lines[#lines + 1] = "1 " .. (i * 10)
  end
  local text = table.concat(lines, "\n") .. "\n"
  return assert(callgrind.parse(text, "hostile")), text
end

describe("a hostile name", function()
  local prof, text = hostile()

  it("is loaded as it is written", function()
    local n = 0
    for _, name in ipairs(HOSTILE) do
      if not name:find("[\r\0]") then
        n = n + 1
        assert.are.equal(name, assert(prof:func(name)).name)
      end
    end
    assert.is_true(n >= 18)
  end)

  it("shows no control byte and no invalid UTF-8 in a text table or a printout", function()
    for _, out in ipairs({ prof:all():report({ limit = 100 }), tostring(prof:top(100)),
      prof:func("main"):tree(nil, { threshold = 0 }):report(), tostring(prof:func("main"):callee_functions()) }) do
      -- line breaks between rows only: none inside a name
      for line in out:gmatch("[^\n]+") do
        assert.is_nil(line:find("[%z\1-\31\127]"), line)
        assert.is_truthy(utf8.len(line), line)
      end
    end
    assert.is_truthy(prof:all():report({ limit = 100 }):find("esc\\x1B]0;title\\x07", 1, true))
  end)

  it("never starts a CSV cell as a formula, and stays one cell", function()
    local csv = prof:all():to_csv()
    for _, name in ipairs(HOSTILE) do
      if name:find("^[=+%-@\t\r]") then
        local quoted = name:find('[,"\r\n]') and '"' .. ("'" .. name):gsub('"', '""') .. '"' or "'" .. name
        assert.is_truthy(csv:find("\r\n" .. quoted .. ",", 1, true), name)
      end
    end
    -- a number is still a number; a tab or carriage return first is a formula too
    assert.is_truthy(csv:find("\r\nmain,,,1,", 1, true), csv:sub(1, 200))
    local encode = require "callgrind.encode"
    assert.are.equal("a,b\r\n'\tx,\"'\ry\"\r\n", encode.csv({ "a", "b" }, { { "\tx", "\ry" } }))
  end)

  it("is valid UTF-8 JSON that Python reads back, from every JSON writer", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir " .. H.shq(dir))
    local rec = dir .. "/rec.jsonl"
    local record = require "callgrind.check.record"
    local f = assert(io.open(rec, "wb"))
    for _, name in ipairs(HOSTILE) do f:write(record.encode({ check = "x", target = name, status = "pass" })) end
    f:close()
    H.write_file(dir .. "/sel.json", prof:all():to_json())
    H.write_file(dir .. "/edges.json", prof:func("main"):callee_functions():to_json())
    local p = assert(io.popen("cd " .. H.shq(dir) .. " && python3 -c " .. H.shq([[
import json, sys
n = 0
for name in ("sel.json", "edges.json"):
    n += len(json.load(open(name, encoding="utf-8")))
for line in open("rec.jsonl", encoding="utf-8"):
    json.loads(line); n += 1
print(n)]]) .. " 2>&1"))
    local out = p:read("a")
    p:close()
    os.execute("rm -rf " .. H.shq(dir))
    assert.are.equal(tostring(#HOSTILE + 1 + #HOSTILE + #HOSTILE) .. "\n", out)
  end)

  it("reaches the command line's tables escaped", function()
    local dir = os.tmpname()
    H.write_file(dir, text)
    local out = H.run("lua5.4 bin/callgrind-lua top " .. H.shq(dir) .. " 100", "callgrind-lua top")
    os.remove(dir)
    for line in out:gmatch("[^\n]+") do assert.is_nil(line:find("[%z\1-\31\127]"), line) end
    assert.is_truthy(out:find("esc\\x1B]0;title\\x07", 1, true), out)
  end)
end)

-- Issue 42: names made to attack what reads an output. A terminal must
-- show its escapes (ESC, CSI, OSC 52, C1) and bidirectional controls as
-- text; the HTML report must show every row whatever a name holds
-- (`<!--<script>` once blanked it in Chromium); a Markdown summary must
-- render a name as its text, never as a link, emphasis or code span.
-- Every command is run on them, to a pipe and under a terminal (script(1)
-- gives it a pty), and each reader's own program (cmark-gfm, cmark,
-- python3's json and csv; spec/browser for Chromium) says what it made
-- of them.
local ATTACK = {
  "<!--<script>", "</script>", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
  "rtl\u{202E}gnp.exe", "iso\u{2066}x\u{2069}y", "lre\u{202A}pdf\u{202C}", "marks\u{200E}\u{200F}\u{61C}",
  "sep\u{2028}para\u{2029}", "clear\27[2J\27[H", "osc52\27]52;c;aGVsbG8=\7", "title\27]0;pwned\27\\",
  "c1csi\u{9B}2J", "c1osc\u{9D}0;x\u{9C}", "**bold**", "_em_", "`tick`", "[l](http://x.example)",
  "http://auto.example/p", "www.auto.example", "<http://y.example>", "a@b.example", "&amp;", "pipe|name",
  "~~del~~", "back\\slash\\|", "# head", "![i](http://i.example/i.png)", "anonymous@m.lua:12", "a@_b.c",
}

-- The code points no reader may be given raw (besides C0 and DEL): C1,
-- the bidirectional controls, U+2028 and U+2029, as UTF-8 (written here
-- apart from util.printable's own list).
local HIDDEN = { "\xC2[\x80-\x9F]", "\xD8\x9C", "\xE2\x80[\x8E\x8F\xA8-\xAE]", "\xE2\x81[\xA6-\xA9]" }

-- What a terminal would obey in s (nil: nothing): a C0 control but a line
-- feed, a tab or a carriage return before a line feed; DEL; a byte that is
-- not UTF-8; a hidden code point.
local function live(s)
  local t = s:gsub("\r+\n", "\n")   -- (a pty writes CRLF as CR CR LF)
  local at = t:find("[%z\1-\8\11-\31\127]")
  if at then
    return ("control byte 0x%02X near %q"):format(t:byte(at), t:sub(math.max(1, at - 30), at + 10))
  end
  if not utf8.len(s) then return "bytes that are not UTF-8" end
  for _, p in ipairs(HIDDEN) do
    local a = s:find(p)
    if a then return ("a hidden code point near %q"):format(s:sub(math.max(1, a - 30), a + 10)) end
  end
  return nil
end

-- A profile of the ATTACK names (main calls each); new: the same with
-- each name's cost doubled (for diff and check). Returns its text.
local function attack_profile(factor)
  local lines = { "events: Ir", "cmd: ./prog \27[31mred\u{202E}", "fn=main", "1 1" }
  for i, name in ipairs(ATTACK) do
    lines[#lines + 1] = "cfn=" .. name
    lines[#lines + 1] = "calls=1 1"
    lines[#lines + 1] = (i + 1) .. " " .. (i * 10 * factor)
  end
  for i, name in ipairs(ATTACK) do
    lines[#lines + 1] = "fn=" .. name
    lines[#lines + 1] = "1 " .. (i * 10 * factor)
  end
  return table.concat(lines, "\n") .. "\n"
end

describe("a name made to attack a reader (issue 42)", function()
  local F = require "spec.support.files"
  local util = require "callgrind.util"
  local dir, old, new, limits

  setup(function()
    dir = F.tmpdir()
    old, new, limits = dir .. "/old.callgrind", dir .. "/new.callgrind", dir .. "/limits.lua"
    H.write_file(old, attack_profile(1))
    H.write_file(new, attack_profile(2))
    H.write_file(limits, ("return { Ir = '1%%', functions = { [%q] = { Ir = '1%%' } } }"):format(ATTACK[5]))
  end)
  teardown(function() F.remove(dir) end)

  it("loads as it is written", function()
    local prof = assert(callgrind.load(old))
    for _, name in ipairs(ATTACK) do assert.are.equal(name, assert(prof:func(name)).name) end
  end)

  it("is shown by util.printable with every control and bidirectional control as an escape", function()
    local cases = {
      { "rtl\u{202E}gnp.exe", "rtl\\u{202E}gnp.exe" }, { "iso\u{2066}x\u{2069}y", "iso\\u{2066}x\\u{2069}y" },
      { "lre\u{202A}pdf\u{202C}", "lre\\u{202A}pdf\\u{202C}" },
      { "marks\u{200E}\u{200F}\u{61C}", "marks\\u{200E}\\u{200F}\\u{61C}" },
      { "sep\u{2028}para\u{2029}", "sep\\u{2028}para\\u{2029}" }, { "clear\27[2J", "clear\\x1B[2J" },
      { "c1csi\u{9B}2J", "c1csi\\u{9B}2J" }, { "raw\155byte", "raw\\x9Bbyte" }, { "del\127", "del\\x7F" },
      { "tab\tnl\n", "tab\\x09nl\\x0A" }, { "ok ünïcödé \u{202F}\u{2060}", "ok ünïcödé \u{202F}\u{2060}" },
    }
    for _, c in ipairs(cases) do assert.are.equal(c[2], util.printable(c[1])) end
    -- a whole text for a terminal: line feeds, tabs and CRLF kept, a lone CR shown
    assert.are.equal("a\\x1B[2J\r\nb\tc\n\\x0Dd\\u{202E}", util.terminal("a\27[2J\r\nb\tc\n\rd\u{202E}"))
  end)

  it("reaches no printout of the API raw (summary, tables, trees, diffs, checks, pictures)", function()
    local a, b = assert(callgrind.load(old)), assert(callgrind.load(new))
    local d = callgrind.diff(a, b)
    local outs = { summary = a:summary(), tostring = tostring(a), top = tostring(a:top(100)),
      all = a:all():report({ limit = 100 }), tree = tostring(a:func("main"):tree(nil, { threshold = 0 })),
      callees = tostring(a:func("main"):callee_functions()), group = tostring(a:group("file")),
      diff = d:report(), movers = tostring(d:movers("Ir")),
      check = select(2, callgrind.check_no_regression(a, b, { Ir = "1%" })),
      flame = a:flamegraph(nil, { threshold = 0 }), dot = a:dot(), json = a:all():to_json() }
    local bad = {}
    for k, v in pairs(outs) do
      local why = live(v)
      if why then bad[#bad + 1] = k .. ": " .. why end
    end
    assert.are.same({}, bad)
  end)

  -- Every command that prints profile content: its arguments after the
  -- program (a list, quoted for sh) and whether its output is a data format
  -- (kept byte for byte when it is not a terminal).
  local function commands()
    return {
      { "top", { "top", old, "100" } }, { "top --raw", { "top", "--raw", old, "100" } },
      { "top --inclusive", { "top", "--inclusive", old, "100" } },
      { "tree", { "tree", "--threshold", "0", old, "main" } },
      { "tree --callers", { "tree", "--callers", old, ATTACK[5] } },
      { "tree (an unknown name: the error)", { "tree", old, "clear\27[2Jx\u{202E}" } },
      { "tree (a close name: the error lists it)", { "tree", old, "rtl\u{202E}gnp.ex" } },
      { "hot", { "hot", old, "main" } }, { "hot --raw", { "hot", "--raw", old, "main" } },
      { "hot (an unknown name)", { "hot", old, "osc52\27]52;c;x\7" } },
      { "annotate", { "annotate", "--tree=callee", "--threshold", "100", old } },
      { "annotate --tree=caller", { "annotate", "--tree=caller", "--threshold", "100", old } },
      { "diff", { "diff", old, new } }, { "check", { "check", limits, old, new } },
      { "dot", { "dot", "--node-threshold", "0", "--edge-threshold", "0", old } },
      { "dot --root (an unknown name)", { "dot", "--root", "\27[2J", old } },
      { "flame -o -", { "flame", "--threshold", "0", old, "-o", "-" } },
      { "flame --old -o -", { "flame", "--old", old, new, "-o", "-" } },
      { "report -o -", { "report", "--title", "\27]0;t\7\u{202E}<!--", old, "-o", "-" } },
      { "report --old -o -", { "report", "--old", old, new, "-o", "-" } },
      { "folded", { "folded", "--threshold", "0", old }, data = true },
      { "csv", { "csv", old }, data = true }, { "csv --by file", { "csv", "--by", "file", old }, data = true },
      { "csv --json", { "csv", "--json", old } },
      { "top (a file named with escapes)", { "top", dir .. "/\27[2J\u{202E}" } },
    }
  end

  local function line(argv)
    local words = { "lua5.4", "bin/callgrind-lua" }
    for _, a in ipairs(argv) do words[#words + 1] = H.shq(a) end
    return table.concat(words, " ")
  end

  local function capture(cmd)
    local p = assert(io.popen(cmd))
    local out = p:read("a")
    p:close()
    return out
  end

  it("reaches a terminal as text from every command, stdout and stderr (script(1): a pty)", function()
    local bad = {}
    for _, c in ipairs(commands()) do
      local out = capture("script -qec " .. H.shq(line(c[2])) .. " /dev/null </dev/null")
      assert.is_true(#out > 0, c[1])
      local why = live(out)
      if why then bad[#bad + 1] = c[1] .. ": " .. why end
    end
    assert.are.same({}, bad)
  end)

  it("reaches a pipe as text from every text command and in every message; data formats keep their bytes", function()
    local bad = {}
    for _, c in ipairs(commands()) do
      local out = capture(line(c[2]) .. " 2>" .. H.shq(dir .. "/err"))
      local err = H.read_file(dir .. "/err")
      local why = live(err)
      if why then bad[#bad + 1] = c[1] .. " (stderr): " .. why end
      why = not c.data and live(out)
      if why then bad[#bad + 1] = c[1] .. ": " .. why end
    end
    assert.are.same({}, bad)
  end)

  it("is read back exactly from folded stacks and CSV written to a pipe or a file", function()
    local stacks = require "callgrind.export.stacks"
    local text = capture(line({ "folded", "--threshold", "0", old }) .. " 2>/dev/null")
    local tree = stacks.read_folded(text, "pipe", 0)
    local seen = {}
    stacks.walk(tree, function(nd) seen[nd.fn.name] = true end)
    for _, name in ipairs(ATTACK) do assert.is_true(seen[name], name) end
    capture(line({ "csv", old, "-o", dir .. "/f.csv" }))
    local got = F.python([[
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline="")))
sys.stdout.write("\0".join(r[0] for r in rows[1:]))]], dir .. "/f.csv")
    local names = {}
    for name in (got .. "\0"):gmatch("(.-)%z") do names[name] = true end
    for _, name in ipairs(ATTACK) do
      -- a cell that would start a formula has its leading '
      assert.is_true(names[name] or names["'" .. name], name)
    end
  end)

  it("leaves pprof's compressed bytes off a terminal, and gives them to a pipe", function()
    local out = capture("script -qec " .. H.shq(line({ "pprof", old, "-o", "-" }) .. "; echo \"exit $?\"")
      .. " /dev/null </dev/null")
    assert.is_truthy(out:find("not writing compressed data to a terminal", 1, true), out)
    assert.is_truthy(out:find("exit 1", 1, true), out)
    local bytes = capture(line({ "pprof", old, "-o", "-" }) .. " 2>/dev/null")
    assert.are.equal("\31\139", bytes:sub(1, 2))
  end)

  it("cannot end or hide the HTML report's data: no < inside its script blocks, and JSON that reads back", function()
    local html = capture(line({ "report", old, "-o", "-" }))
    local data = html:match('<script type="application/json" id="data">(.-)</script>')
    assert.is_truthy(data)
    assert.is_nil(data:find("<", 1, true))
    -- so is the block of source lines
    local src = html:match('<script type="application/json" id="srcdata">(.-)</script>')
    assert.is_truthy(src)
    assert.is_nil(src:find("<", 1, true))
    -- the page's own three script blocks (data, source lines, code), and
    -- no other: every <script opens one of them and every </script closes one
    local lower = html:lower()
    local opens, closes = select(2, lower:gsub("<script", "")), select(2, lower:gsub("</script", ""))
    assert.are.equal(3, opens)
    assert.are.equal(3, closes)
    assert.is_nil(lower:find("<!--", 1, true))
    H.write_file(dir .. "/data.json", data)
    local got = F.python([[
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
sys.stdout.write("\0".join(f["n"] for f in d["profile"]["fns"]))]], dir .. "/data.json")
    local names = {}
    for name in (got .. "\0"):gmatch("(.-)%z") do names[name] = true end
    for _, name in ipairs(ATTACK) do assert.is_true(names[name], name) end
    -- and the JSON itself carries no raw control or bidirectional control
    assert.is_nil(live(data))
  end)

  it("renders in a Markdown summary as its text: no link, emphasis, code span or HTML (cmark-gfm, cmark)", function()
    local record = require "callgrind.check.record"
    local rec = dir .. "/rec.jsonl"
    local f = assert(io.open(rec, "wb"))
    for i, name in ipairs(ATTACK) do
      f:write(record.encode({ check = "fn_" .. i, name = name, target = name, event = "Ir", status = "fail",
        old = 1, new = 2, message = name .. " grew" }))
    end
    f:close()
    local md = assert(callgrind.record_summary(rec, "markdown"))
    H.write_file(dir .. "/s.md", md)
    local function entities(s)
      return (s:gsub("&(#?x?%w+);", function(e)
        if e == "amp" then return "&" elseif e == "lt" then return "<" elseif e == "gt" then return ">"
        elseif e == "quot" then return '"' end
        return "&" .. e .. ";"
      end))
    end
    for _, tool in ipairs({ "cmark-gfm -e table -e autolink -e strikethrough -e tagfilter", "cmark" }) do
      local html = H.run(tool .. " " .. H.shq(dir .. "/s.md"), tool)
      -- the tags a summary may have: its table (or, to plain CommonMark,
      -- paragraphs), the one bold line of counts, the list of failures
      local tags = {}
      for tag in html:gmatch("<(/?[%w]+)") do tags[tag:gsub("^/", "")] = true end
      tags.table, tags.thead, tags.tbody, tags.tr, tags.th, tags.td, tags.p, tags.ul, tags.li = nil, nil, nil, nil,
        nil, nil, nil, nil, nil
      assert.are.same({ strong = true }, tags, tool)
      assert.are.equal(1, select(2, html:gsub("<strong>", "")), tool)
      assert.is_truthy(html:find("<strong>" .. #ATTACK .. " checks: 0 passed", 1, true), tool)
      -- (an @ has a word joiner after it: GitHub links an address whatever is escaped)
      local text = entities(html):gsub("@\u{2060}", "@")
      for _, name in ipairs(ATTACK) do
        local shown = util.printable(name)
        assert.is_truthy(text:find(shown .. " grew", 1, true), tool .. ": " .. shown)
      end
      if tool:find("gfm") then
        -- each name is one whole cell of the table
        local cells = {}
        for cell in html:gmatch("<td>(.-)</td>") do cells[(entities(cell):gsub("@\u{2060}", "@"))] = true end
        for _, name in ipairs(ATTACK) do assert.is_true(cells[util.printable(name)], name) end
      end
    end
  end)
end)
