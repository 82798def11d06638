-- Folded stacks read in C (csrc/reader/cg_folded.c: a trie merged line by
-- line, pruned there) against the Lua reader the library had before it
-- (spec/support/folded_lua.lua): the same trees, the same flame graphs,
-- the same errors; and a few MB file whose frames' widths add up to the
-- file's total with the trie no larger than its distinct stack prefixes.
local stacks = require "callgrind.export.stacks"
local flame = require "callgrind.export.flame"
local old = require "spec.support.folded_lua"
local H = require "spec.support.helpers"
local C = require "spec.support.cli"

-- A tree as text: name, total and self of every node, depth first.
local function dump(t)
  local out = {}
  local function go(nd, ind)
    out[#out + 1] = ind .. (nd.fn and nd.fn.name or "(top)") .. " " .. nd.total .. " " .. nd.self
    for _, kid in ipairs(nd.children) do go(kid, ind .. " ") end
  end
  go(t, "")
  return table.concat(out, "\n")
end

-- Deterministic folded text: n lines over a bounded set of stacks made
-- of names (some with `;`, `\`, line breaks to escape); returns the text,
-- its total and the number of distinct stack prefixes. pool: the lines
-- take their stacks from that many (default: each line its own).
local NAMES = { "main <&> \"quoted\" " .. ("é→ü"):rep(80), "f", "g", "h;i", "back\\slash", "nl\nx", "cr\rx",
  "lua:12:run", "x y", "", "bad \xff utf-8", "a&b" }
local function generate(n, seed, depth, pool)
  local x, y = seed, 0
  local function rnd(m)
    x = (x * 1103515245 + 12345) % 2147483648
    return x % m
  end
  local function prnd(m)
    if not pool then return rnd(m) end
    y = (y * 1103515245 + 12345) % 2147483648
    return (y >> 8) % m
  end
  local lines, total, prefixes, nprefix = {}, 0, {}, 0
  for i = 1, n do
    if pool then y = rnd(pool) end
    local d, path, key = 1 + prnd(depth), {}, ""
    for k = 1, d do
      local name = NAMES[1 + (k == 1 and 0 or prnd(#NAMES))]
      path[k] = stacks.escape(name)
      key = key .. "\0" .. name
      if not prefixes[key] then prefixes[key] = true; nprefix = nprefix + 1 end
    end
    local count = rnd(1000) * (rnd(50) == 0 and 100 or 1)
    total = total + count
    local sep = rnd(7) == 0 and " \t" or " "
    lines[i] = table.concat(path, ";") .. sep .. count .. (rnd(11) == 0 and "\r\n" or "\n")
    if rnd(37) == 0 then lines[i] = lines[i] .. "  \n" end
  end
  return table.concat(lines), total, nprefix
end

describe("folded stacks read in C", function()
  local dir
  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -m 700 " .. H.shq(dir)))
  end)
  teardown(function() os.execute("rm -rf " .. H.shq(dir)) end)

  it("give the trees of the Lua reader, at every threshold", function()
    local texts = {
      "main;f 10\nmain 2\n",
      "a;b;c 5\r\na;b 3\n\n  \t\na\\;x;b\\\\;c\\n 7\na;b;c 1\nz 0\nq\\ 4",
      "a;; 3\n", "x 1 5\n", "a 1\nb 100000\n", "", "\n\n", "a\\ 1\n", "a\\ 9\n\\;\\x 2",
      (generate(3000, 7, 12)), (generate(500, 99, 40)),
    }
    for _, text in ipairs(texts) do
      for _, th in ipairs({ 0, 1e-4, 0.01, 0.3, 0.99 }) do
        assert.are.equal(dump(old.read_folded(text, "s", th)), dump(stacks.read_folded(text, "s", th)))
      end
    end
  end)

  it("a file gives the tree of its text", function()
    local text = generate(2000, 3, 20)
    H.write_file(dir .. "/a.folded", text)
    for _, th in ipairs({ 0, 1e-4, 0.05 }) do
      assert.are.equal(dump(old.read_folded(text, "s", th)), dump(stacks.read_folded_file(dir .. "/a.folded", th)))
    end
    local nope, err = stacks.read_folded_file(dir .. "/none.folded")
    assert.is_nil(nope)
    assert.are.equal(dir .. "/none.folded: No such file or directory", err)
  end)

  it("draw the flame graph the Lua reader drew, byte for byte", function()
    for _, seed in ipairs({ 1, 2, 5 }) do
      local text = generate(1500, seed, 16)
      local path = dir .. "/f" .. seed .. ".folded"
      H.write_file(path, text)
      for _, th in ipairs({ 0, 1e-4, 0.02 }) do
        local opts = { threshold = th }
        assert(flame.folded_flamegraph(old.read_folded(text, path, 0), path, dir .. "/old.svg", opts))
        assert(flame.folded_flamegraph(text, path, dir .. "/new.svg", opts))
        local want = H.read_file(dir .. "/old.svg")
        assert.are.equal(want, H.read_file(dir .. "/new.svg"))
        -- the command line reads the file itself
        local code = C.run("flame", path, "--threshold", tostring(th * 100), "-o", dir .. "/cli.svg")
        assert.are.equal(0, code)
        assert.are.equal(want, H.read_file(dir .. "/cli.svg"))
      end
    end
  end)

  it("name the file and the line of a bad line, as the Lua reader did", function()
    local bads = { " 5", "a b", "a 99999999999999999999", "main 1\n\nfoo;bar", "a 1\r\r",
      "a 9223372036854775807\nb 1", ("x"):rep(200) .. " y" }
    for _, text in ipairs(bads) do
      local ok1, e1 = pcall(old.read_folded, text, "s.folded", 0)
      local ok2, e2 = pcall(stacks.read_folded, text, "s.folded", 0)
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.are.equal(e1, e2)
    end
    H.write_file(dir .. "/bad.folded", "main 1\nmain;f 2\nmain;g x\n")
    local ok, err = pcall(stacks.read_folded_file, dir .. "/bad.folded")
    assert.is_false(ok)
    assert.are.equal(dir .. "/bad.folded:3: not a folded stack (frames, a blank and a count): main;g x", err)
    local code, _, cerr = C.run("flame", dir .. "/bad.folded", "-o", dir .. "/bad.svg")
    assert.are_not.equal(0, code)
    assert.truthy(cerr:find(dir .. "/bad.folded:3: not a folded stack", 1, true))
  end)

  it("a few MB: widths add up to the file's total, the trie to its distinct prefixes", function()
    local text, total, nprefix = generate(60000, 11, 30, 300)
    assert.is_true(#text > 2e6)
    local path = dir .. "/big.folded"
    H.write_file(path, text)
    local top = stacks.read_folded_file(path, 1e-4)
    assert.are.equal(total, top.total)
    -- the roots' widths and what the pruning left on the top
    local sum = top.self
    for _, kid in ipairs(top.children) do sum = sum + kid.total end
    assert.are.equal(total, sum)
    -- each drawn frame: its own cost and its children's add up to it
    stacks.walk(top, function(nd)
      local s = nd.self
      for _, kid in ipairs(nd.children) do s = s + kid.total end
      assert.are.equal(nd.total, s)
    end)
    -- the trie holds each distinct stack prefix once, the names once
    assert.are.equal(nprefix, top.trie.nodes)
    assert.are.equal(#NAMES, top.trie.distinct)
    assert.is_true(top.trie.nodes <= 300 * 30)
    -- the picture's frames add up to the width
    assert(flame.folded_flamegraph(top, path, dir .. "/big.svg"))
    local svg = H.read_file(dir .. "/big.svg")
    -- the second row (the roots) spans the picture less the top's own cost
    local ys, width = {}, 0
    for y in svg:gmatch('<rect x="[%d.]+" y="(%d+)" width="[%d.]+"') do ys[#ys + 1] = tonumber(y) end
    table.sort(ys, function(a, b) return a > b end)
    for w in svg:gmatch('<rect x="[%d.]+" y="' .. ys[1] - 16 .. '" width="([%d.]+)"') do width = width + tonumber(w) end
    assert.is_true(math.abs(width - 1200 * (total - top.self) / total) < 0.01 * #top.children + 0.01)
  end)
end)
