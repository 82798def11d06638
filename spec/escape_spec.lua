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
