-- callgrind.busted: the helper run by busted in a child process on the
-- Penlight-like suite of spec/fixtures/busted_suite/, under lua5.4 and
-- the counting interpreter (when built): names and counts, a test made
-- slower failing in three output handlers, nested profiles.
local helpers = require "spec.support.helpers"
local shq = helpers.shq

local ROOT = assert(io.popen("pwd")):read("l")
local SUITE = ROOT .. "/spec/fixtures/busted_suite"
local VM = ROOT .. "/build/bin/callgrind-lua5.4"

local engines = { { "hook", "lua5.4" } }
if helpers.read_file(VM) then engines[2] = { "vm", VM } end

-- Runs a command in the suite's directory with the library's paths;
-- its output (stdout and stderr) and whether it succeeded.
local function run(env, cmd)
  local paths = "LUA_PATH=" .. shq(ROOT .. "/lua/?.lua;" .. ROOT .. "/lua/?/init.lua;;")
    .. " LUA_CPATH=" .. shq(ROOT .. "/build/?.so;;")
  local p = assert(io.popen("cd " .. shq(SUITE) .. " && env -u CI -u CALLGRIND_BASELINES -u CALLGRIND_RECORD "
    .. paths .. " " .. env .. " " .. cmd .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

describe("callgrind.busted", function()
  local lab = helpers.lab("busted_helper_spec")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  for _, engine in ipairs(engines) do
    local name, lua = engine[1], engine[2]
    describe("on the " .. name .. " engine", function()
      local dir
      before_each(function()
        dir = lab.dir .. "/" .. name
        os.execute("rm -rf " .. shq(dir))
      end)

      it("names every test, counts it and fails the one made 20% slower in every output handler", function()
        local env = "CALLGRIND_BASELINE_DIR=" .. shq(dir) .. " CALLGRIND_RECORD=" .. shq(dir .. ".jsonl")
        local out, ok = run(env .. " CALLGRIND_BUSTED_TABLE=1", "busted --lua=" .. shq(lua))
        assert.is_true(ok, out)
        for _, test in ipairs { "stringx splits a line", "stringx strips blanks", "list map and reduce sums squares",
          "list sorts the keys of a table", "nested profiles inside a test" } do
          assert.matches("\n%d+\t" .. test:gsub("%p", "%%%0") .. "\n", out)
        end
        -- the record: a line per test, its Instr
        local recs = helpers.read_file(dir .. ".jsonl")
        assert.matches('"check":"busted","name":"stringx splits a line","event":"Instr","new":%d+', recs)
        local count = tonumber(out:match("\n(%d+)\tstringx splits a line\n"))
        -- a second run: the same counts, a pass
        local again, ok2 = run(env .. " CALLGRIND_BUSTED_TABLE=1", "busted --lua=" .. shq(lua))
        assert.is_true(ok2, again)
        assert.are.equal(count, tonumber(again:match("\n(%d+)\tstringx splits a line\n")))
        for _, handler in ipairs { "utfTerminal", "TAP", "junit" } do
          local slow, sok = run(env .. " PLX_SLOW=1", "busted --lua=" .. shq(lua) .. " -o " .. handler)
          assert.is_falsy(sok, slow)
          -- (JUnit's XML writes ' as &apos;)
          local text = slow:gsub("&apos;", "'")
          assert.matches("callgrind: test 'stringx splits a line' is over its budget", text, 1, true)
          assert.matches("plx.split", slow, 1, true)
          assert.matches("+%d+%.%d%%%)?, limit %+5%%", slow)
          assert.is_nil(text:find("test 'stringx strips blanks' is over", 1, true))
        end
      end)

      it("gives a nested profile the numbers of a profile of its own", function()
        local env = "CALLGRIND_BASELINE_DIR=" .. shq(dir)
        local out, ok = run(env, "busted --lua=" .. shq(lua) .. " spec/nested_test.lua")
        assert.is_true(ok, out)
        local nested = tonumber(out:match("nested Instr (%d+)"))
        -- the same function profiled alone, in a process of its own
        local alone = run("", shq(lua) .. [[ -e 'package.path = "./?.lua;" .. package.path
          local cg = require "callgrind"; local plx = require "plx"
          local function splits() local line = ("a,b,c,d,e,f,g,h"):rep(10) for _ = 1, 10 do plx.split(line, ",") end end
          print("alone Instr " .. cg.profile(splits):total("Instr"))']])
        assert.are.equal(tonumber(alone:match("alone Instr (%d+)")), nested)
        -- inside a whole-run profile (-lcallgrind.start) too
        local whole, wok = run(env .. " CALLGRIND_OUT=" .. shq(dir .. ".out"),
          shq(lua) .. " -lcallgrind.start /usr/bin/busted --ignore-lua spec/nested_test.lua")
        assert.is_true(wok, whole)
        assert.are.equal(nested, tonumber(whole:match("nested Instr (%d+)")))
        assert.truthy(helpers.read_file(dir .. ".out"))
      end)
    end)
  end
end)
