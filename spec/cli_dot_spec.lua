-- callgrind-lua dot: a name longer than Graphviz takes in a quoted string
-- (16,384 bytes) is cut in the middle in its label and kept whole in the
-- node's tooltip, so `dot -o x.svg` draws it; an output that cannot be
-- written is named as the user gave it.
local H = require "spec.support.helpers"
local F = require "spec.support.files"
local run = require("spec.support.cli").run
local dot = require "callgrind.export.dot"

-- 20,000 characters: a & and a " in the first 99, UTF-8 (é, 2 bytes)
-- throughout, so that no piece may split a character or an escape
local LONG = 'A&"' .. ("é"):rep(9000) .. ("b"):rep(10996) .. "Z"

describe("callgrind-lua dot", function()
  local dir, path
  setup(function()
    dir = F.tmpdir()
    path = dir .. "/long.out"
    H.write_file(path, "events: Ir\nfn=main\n1 10\ncfn=" .. LONG .. "\ncalls=1 2\n2 50\nfn=" .. LONG .. "\n3 50\n")
  end)
  teardown(function() F.remove(dir) end)

  it("cuts a 20,000-character name in the middle of its label and keeps it whole in the tooltip", function()
    assert.are.equal(20000, utf8.len(LONG))
    local code, text = run("dot", path)
    assert.are.equal(0, code)
    local label, tooltip = text:match('f%d+ %[label="([^\n]-)\\n[^\n]-", tooltip=(.-), color=')
    assert.is_truthy(label, text:sub(1, 400))
    -- the first 99 characters, an ellipsis, the last 99
    local half = dot.MAX_LABEL // 2 - 1
    local head = LONG:sub(1, utf8.offset(LONG, half + 1) - 1)
    local tail = LONG:sub(utf8.offset(LONG, -half))
    assert.are.equal((head .. "…" .. tail):gsub("&", "&amp;"):gsub('"', '\\"'), label)
    -- the tooltip: quoted pieces joined with +, each far under 16,384 bytes, whole together
    local whole, n = {}, 0
    for piece in (tooltip .. " + "):gmatch('"(.-)" %+ ') do
      assert.is_true(#piece < 16384)
      n = n + 1
      whole[n] = piece
    end
    assert.is_true(n > 1)
    assert.are.equal(LONG:gsub("&", "&amp;"):gsub('"', '\\"'), table.concat(whole))
    -- a short name as before: no tooltip
    assert.is_truthy(text:find('f%d+ %[label="main\\n[^"]*", color='))
  end)

  it("draws it with Graphviz, the whole name in the SVG's tooltip", function()
    if not F.have("dot") then pending("Graphviz's dot is not installed") return end
    local svg = dir .. "/x.svg"
    local code, _, err = run("dot", path, "-o", svg)
    assert.are.equal(0, code, err)
    local text = H.read_file(svg)
    assert.is_truthy(text:find('xlink:title="A&amp;&quot;' .. ("é"):rep(9000) .. ("b"):rep(10996) .. 'Z"', 1, true))
  end)

  it("names the output as the user gave it when it cannot be written", function()
    if not F.have("dot") then pending("Graphviz's dot is not installed") return end
    for _, out in ipairs({ "/nonexistent/x.svg", "/nonexistent/x.dot" }) do
      local code, _, err = run("dot", path, "-o", out)
      assert.are.equal(1, code)
      assert.are.equal(out .. ": No such file or directory\n", err)
    end
  end)
end)
