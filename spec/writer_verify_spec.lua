-- Every written file is verifiable: a part whose cost lines do not add up
-- to its totals: carries a "lost" warning whatever wrote it, and a file
-- this library wrote, cut at any point, fails to load or carries a
-- "truncated" or "lost" warning.

local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local lab = H.lab("spec/writer_verify_spec.lua")
setup(function() lab:open() end)
teardown(function() lab:close() end)

-- The kinds of warnings that mean costs are missing.
local function loss(prof)
  local w = prof:warnings("truncated")
  for _, x in ipairs(prof:warnings("lost")) do w[#w + 1] = x end
  return w
end

-- Cuts text at each offset of `offsets`; returns the offsets where the cut
-- file loaded with no loss warning (an empty list is what is wanted).
local function silent_cuts(text, offsets)
  local silent = {}
  for _, at in ipairs(offsets) do
    local prof = callgrind.parse(text:sub(1, at), "cut")
    if prof and #loss(prof) == 0 then silent[#silent + 1] = at end
  end
  return silent
end

describe("a totals: line that the cost lines do not add up to", function()
  it("is a 'lost' warning whatever wrote the file", function()
    local prof = assert(callgrind.parse("creator: someone\nevents: Ir\nfn=main\n1 5\n2 6\ntotals: 12\n", "l.out"))
    assert.are.same({ "l.out:6: totals: does not match the cost lines: Ir 12 written, 11 summed" },
      prof:warnings("lost"))
    assert.are.same({}, prof:warnings("mismatch"))
  end)

  it("is 'lost' in a later part of a valgrind file too; a summary: that differs stays 'mismatch'", function()
    local prof = assert(callgrind.parse(table.concat({
      "creator: callgrind-3.19.0", "events: Ir", "summary: 9", "fn=a", "1 3", "totals: 3",
      "part: 2", "fn=a", "1 4", "totals: 5", "",
    }, "\n"), "v.out"))
    assert.are.same({ "v.out:10: totals: does not match the cost lines: Ir 5 written, 4 summed" },
      prof:warnings("lost"))
    assert.are.same({ "v.out:3: summary: does not match the cost lines: Ir 9 written, 3 summed" },
      prof:warnings("mismatch"))
  end)

  it("is a kind prof:warnings knows", function()
    assert.are.same({}, assert(callgrind.load("spec/fixtures/files.callgrind")):warnings("lost"))
  end)
end)

describe("a file prof:write wrote", function()
  -- three parts, creator "hand": no valgrind creator to go by
  local prof = assert(callgrind.parse(table.concat({
    "# callgrind format", "version: 1", "creator: hand", "positions: line", "events: Ir Dr",
    "fl=a.c", "fn=main", "1 1013 12", "2 5", "cfl=b.c", "cfn=helper", "calls=3 7", "2 40 4", "fl=b.c", "fn=helper",
    "7 40 4", "totals: 1058 16",
    "part: 2", "fl=a.c", "fn=main", "3 7 1", "cfl=b.c", "cfn=helper", "calls=1 7", "3 9", "fl=b.c", "fn=helper",
    "8 9", "totals: 16 1",
    "part: 3", "fl=b.c", "fn=helper", "9 100 10", "totals: 100 10", "",
  }, "\n"), "three"))

  local out
  before_each(function() out = lab.dir .. "/three.out" end)

  it("loads whole with no warning", function()
    assert.is_true(prof:write(out))
    local back = assert(callgrind.load(out))
    assert.are.same({}, back:warnings())
    -- by hand: 1013 + 5 + 40, 7 + 9, 100; Dr 12 + 4, 1, 10
    assert.are.same({ Ir = 1174, Dr = 27 }, back:totals())
  end)

  it("never loads silently when cut at any byte", function()
    assert.is_true(prof:write(out))
    local text = H.read_file(out)
    assert.matches("\n# end digest=fnv1a64:%x+\n$", text)
    local offsets = {}
    -- every byte but the last: a file without its final newline has lost
    -- nothing
    for at = 0, #text - 2 do offsets[#offsets + 1] = at end
    assert.are.same({}, silent_cuts(text, offsets))
    -- the loss is named: a cut in a cost line of part 1 (the number 1013
    -- read as 10)
    local at = assert(text:find("1013", 1, true)) + 1
    local cut = assert(callgrind.parse(text:sub(1, at), "cut"))
    assert.are.equal(1, #cut:warnings("truncated"))
    assert.is_truthy(cut:warnings("truncated")[1]:find("the file ends without totals: (its writer ends every part "
      .. "with one): cut short after '1 10'", 1, true))
  end)

  it("cut between two parts is 'truncated' (its end line is missing)", function()
    assert.is_true(prof:write(out))
    local text = H.read_file(out)
    -- the blank line before part 3's header (pid: 1, part: 3: several parts have their process numbered)
    local head = text:sub(1, assert(text:find("\npart: 3", 1, true)))
    local at
    for blank in head:gmatch("()\n\n") do at = blank end
    local cut = assert(callgrind.parse(text:sub(1, at), "cut"))
    assert.are.same({ "cut:38: the file ends without its last line '# end digest=...' (its writer ends every file "
      .. "with it): cut short after 'totals: 16 1'" }, cut:warnings("truncated"))
  end)

  it("never loads silently when a fresh valgrind profile, written, is cut at 4 KB steps and near its end", function()
    local path = lab:callgrind("cut", "--dump-instr=yes --collect-jumps=yes --cache-sim=yes")
    local written = lab.dir .. "/written.out"
    assert.is_true(assert(callgrind.load(path)):write(written, { pid = true }))
    local text = H.read_file(written)
    local offsets = {}
    for at = 0, #text - 2, 4096 do offsets[#offsets + 1] = at end
    for at = math.max(0, #text - 300), #text - 2 do offsets[#offsets + 1] = at end
    assert.is_true(#offsets > 300)
    assert.are.same({}, silent_cuts(text, offsets))
  end)
end)
