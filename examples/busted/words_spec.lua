-- A test's body is profiled and checked against its baseline by name:
-- "words counts the words of a line".
local function count_words(line)
  local n = 0
  for _ in line:gmatch("%S+") do n = n + 1 end
  return n
end

describe("words", function()
  it("counts the words of a line", function()
    assert.are.equal(400, count_words(("lorem ipsum dolor sit "):rep(100)))
  end)
end)
