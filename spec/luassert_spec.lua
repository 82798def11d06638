-- callgrind.luassert: the assertions, registered with luassert's own
-- assert:register and say, in both directions, with the checks' messages
-- as they are (no argument dumps). Profiles as in check_spec.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local OLD = H.read_file("spec/fixtures/moved-old.callgrind")
local NEW = OLD:gsub("2 100 20", "2 130 21"):gsub("5 100 20", "5 130 21")

local old = assert(callgrind.parse(OLD, "old"))
local new = assert(callgrind.parse(NEW, "new"))

-- The message of a failed assertion, without luassert's "file:line: ".
local function failure(f)
  local ok, err = pcall(f)
  assert(not ok, "the assertion did not fail")
  return (tostring(err):gsub("^[^\n]-:%d+: ", ""))
end

describe("callgrind.check.luassert", function()
  local assert = require "callgrind.check.luassert"

  it("is not loaded by callgrind itself", function()
    assert.are.equal("nil\tnil\n",
      H.fresh_lua("require 'callgrind' print(package.loaded.luassert, package.loaded.say)"))
  end)

  it("asserts cost_at_most on a function, a selection and a profile, and says what is over", function()
    local main = old:func("main")
    assert.cost_at_most(110, main, "Ir")
    assert.cost_at_most(10, main, "Ir", "self")
    assert.cost_at_most(110, old:find("^[mp]"), "Ir")
    assert.cost_at_most(117, old, "Ir")
    assert.are.equal("Ir of main (inclusive): 110 > 100 (+10.0%)\nprofile: old",
      failure(function() assert.cost_at_most(100, main, "Ir") end))
    assert.are.equal("Ir of the whole profile: 117 > 100 (+17.0%)\nprofile: old",
      failure(function() assert.cost_at_most(100, old, "Ir") end))
  end)

  it("negates with is_not", function()
    assert.is_not.cost_at_most(100, old:func("main"), "Ir")
    assert.are.equal("Expected the cost to exceed the limit, but it does not:\n"
      .. "Ir of main (inclusive): 110 <= 200\nprofile: old",
      failure(function() assert.is_not.cost_at_most(200, old:func("main"), "Ir") end))
    assert.is_not.no_regression(old, new, { Ir = "5%" })
    assert.is_not.calls_at_most(0, old:func("parse"))
  end)

  it("asserts calls_at_most", function()
    assert.calls_at_most(1, old:func("parse"))
    assert.are.equal("calls into parse (/home/a/src/main.c; /home/a/build/prog): 1 > 0 (1 call site)\nprofile: old",
      failure(function() assert.calls_at_most(0, old:func("parse")) end))
  end)

  it("asserts no_regression with the limits, the table and the files", function()
    assert.no_regression(old, new, { Ir = "30%" })
    assert.are.equal(table.concat({
      "1 limit exceeded:",
      "  Ir (total): 117 -> 147 +30 (+25.6%), limit +5%",
      "event  old  new        change",
      "   Ir  117  147  +30 (+25.6%)",
      "biggest changes in Ir (self):",
      "  old  new        change  function",
      "  100  130  +30 (+30.0%)  parse (/home/a/src/main.c; /home/a/build/prog)",
      "matched 3 functions: 100.0% of the old Ir, 100.0% of the new",
      "old: old",
      "new: new",
    }, "\n"), failure(function() assert.no_regression(old, new, { Ir = "5%" }) end))
  end)

  it("asserts within_baseline: saves it first, then checks it", function()
    local dir = os.tmpname()
    os.remove(dir)
    finally(function() os.execute("rm -rf " .. H.shq(dir)) end)
    -- recorded (update: a first save would fail under CI), then checked
    assert.within_baseline("b", old, { Ir = "5%" }, { dir = dir, quiet = true, update = true })
    assert.within_baseline("b", old, { Ir = "5%" }, { dir = dir })
    local msg = failure(function() assert.within_baseline("b", new, { Ir = "5%" }, { dir = dir }) end)
    assert.are.equal("1 limit exceeded:\n  Ir (total): 117 -> 147 +30 (+25.6%), limit +5%",
      msg:match("^[^\n]*\n[^\n]*"))
    assert.are.equal("accept the new numbers: CALLGRIND_BASELINES=update (or opts.update = true) replaces "
      .. dir .. "/b.callgrind", msg:match("[^\n]*$"))
  end)

  it("puts the caller's own message (luassert's message modifier) first", function()
    assert.are.equal("sorting got slower\nIr of the whole profile: 117 > 100 (+17.0%)\nprofile: old",
      failure(function() assert.message("sorting got slower").cost_at_most(100, old, "Ir") end))
  end)
end)
