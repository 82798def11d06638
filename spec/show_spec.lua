-- callgrind.show: how values print at the REPL. Numbers worked out by hand.
local callgrind = require "callgrind"
local show = require "callgrind.model.show"

describe("show.commas", function()
  it("groups digits by three, keeping the sign", function()
    assert.are.equal("0", show.commas(0))
    assert.are.equal("999", show.commas(999))
    assert.are.equal("1,000", show.commas(1000))
    assert.are.equal("-1,234", show.commas(-1234))
    assert.are.equal("9,223,372,036,854,775,807", show.commas(math.maxinteger))
  end)

  it("leaves what is not a whole number as tostring gives it", function()
    assert.are.equal("2.5", show.commas(2.5))
  end)
end)

describe("show.shorten", function()
  it("keeps a name that fits", function()
    assert.are.equal("main", show.shorten("main", 10))
  end)

  it("collapses template arguments first, then cuts the middle", function()
    assert.are.equal("std::vector<...>::push_back(int const&)",
      show.shorten("std::vector<int, std::allocator<int> >::push_back(int const&)", 40))
    local s = show.shorten("std::map<std::string, std::vector<int> >::operator[](std::string const&)", 30)
    assert.are.equal("std::map<...>::ope...g const&)", s)
    assert.are.equal(30, #s)
    s = show.shorten("a_very_long_function_name_without_templates_at_all", 20)
    assert.are.equal("a_very_long_...t_all", s)
    assert.are.equal(20, #s)
  end)
end)

describe("show.cost", function()
  it("gives a share of the total, or the number alone for a total of 0", function()
    assert.are.equal("50 ( 25.0%)", show.cost(50, 200))
    assert.are.equal("1,300 (100.0%)", show.cost(1300, 1300))
    assert.are.equal("7", show.cost(7, 0))
  end)
end)

describe("show.table", function()
  local cols = {
    { "n", cell = function(r) return show.commas(r.n) end },
    { "name", left = true, cell = function(r) return r.name end },
  }
  local rows = { { n = 1500, name = "a" }, { n = 2, name = "bb" }, { n = 30, name = "c" } }

  it("aligns numbers right and the last text column left, with no trailing blanks", function()
    assert.are.equal("    n  name\n1,500  a\n    2  bb\n   30  c", show.table(cols, rows))
  end)

  it("prints the first rows and says how many more there are", function()
    assert.are.equal("    n  name\n1,500  a\n    2  bb\n... 1 more items (ask for all)",
      show.table(cols, rows, { limit = 2, noun = "items", more = "ask for all" }))
  end)
end)

describe("show.costs", function()
  it("prints a cost table in the profile's event order", function()
    local prof = assert(callgrind.parse("events: Dr Ir\nfn=m\n1 3 1000\n"))
    assert.are.equal("Dr 3  Ir 1,000", tostring(show.costs(prof, { Ir = 1000, Dr = 3 })))
    assert.are.equal("Dr 3  Ir 1,000", tostring(prof:totals()))
  end)
end)
