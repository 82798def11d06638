-- Every spec fixture, corpus file and fuzz regression loads to the same model
-- as the stored dump in spec/fixtures/dumps/ says: functions, calls, cost
-- lines, jumps, parts, totals and warnings (spec/support/dump.lua writes and
-- reads the dumps). The dumps were made from the loader before the core was
-- rewritten (issue 8); a dump changes only with a commit that says why.
local D = require "spec.support.dump"
local H = require "spec.support.helpers"

describe("the loaded model", function()
  local inputs = D.inputs(".")

  it("has a stored dump for every input and an input for every stored dump", function()
    local want, have = {}, {}
    for _, item in ipairs(inputs) do want[item[1] .. ".dump"] = true end
    local p = io.popen("ls spec/fixtures/dumps")
    for f in p:lines() do have[f] = true end
    p:close()
    local missing = {}
    for f in pairs(want) do if not have[f] then missing[#missing + 1] = "no dump: " .. f end end
    for f in pairs(have) do if not want[f] then missing[#missing + 1] = "no input: " .. f end end
    H.report("stored dumps", missing)
    assert.is_true(#inputs > 50)
  end)

  for _, item in ipairs(inputs) do
    it("of " .. item[2] .. " is the stored one", function()
      local stored = H.read_file("spec/fixtures/dumps/" .. item[1] .. ".dump")
      assert.are.equal(stored, D.dump_file(item[2]))
    end)
  end

  -- The worker thread (csrc/reader/cg_prescan.c) only starts on files of 4 MB and
  -- more; `chunk` makes it start on every file of two chunks, so every
  -- input goes through it with chunk ends at every few lines. Its runs must
  -- change nothing: not a number, not a message, not a warning's line; nor
  -- must reading with one thread. (Chunks of 64 bytes only for files up to
  -- 64 KiB: each chunk is a hand-over between the threads, a time slice
  -- under valgrind.)
  for _, way in ipairs({
    { "when a worker thread sums runs of cost lines in chunks of 64 bytes", { chunk = 64 }, 65536 },
    { "when a worker thread sums runs of cost lines in chunks of 1000 bytes", { chunk = 1000 } },
    { "read with one thread", { threads = 1 } },
  }) do
    local what, opts, largest = way[1], way[2], way[3] or math.huge
    it("is the same " .. what, function()
      local differ = {}
      for _, item in ipairs(inputs) do
        local stored = H.read_file("spec/fixtures/dumps/" .. item[1] .. ".dump")
        if #H.read_file(item[2]) <= largest and D.dump_file(item[2], opts) ~= stored then
          differ[#differ + 1] = item[2]
        end
      end
      H.report("dumps that differ", differ)
    end)
  end
end)
