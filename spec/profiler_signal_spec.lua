-- SIGINT and SIGTERM end a profiled run with its profile written (issue 41,
-- point 4), under both engines and the three ways of profiling a whole
-- run: the script loops until signalled, and says when it is looping by a
-- file of its own; the exit status is the plain interpreter's (lua.c's 1
-- for an interrupted script; death by SIGTERM, 143 in the shell), the
-- message names the signal, and the profile has the looping function.
local callgrind = require "callgrind"
local helpers = require "spec.support.helpers"

local shq = helpers.shq
-- absolute: the runs start in a directory of their own
local ROOT = helpers.run("pwd", "pwd"):gsub("%s+$", "")
local VM = os.getenv("CALLGRIND_VM") or (ROOT .. "/build/bin/callgrind-lua5.4")

-- a search path with its relative entries made absolute
local function absolute(path)
  return (path:gsub("[^;]+", function(e) return e:sub(1, 1) == "/" and e or ROOT .. "/" .. e:gsub("^%./", "") end))
end

local function have_vm() return helpers.have_vm(VM) end

-- spin runs once before the script says it is ready, so the profile has
-- it whenever the signal comes
local LOOP = [[
local function spin(n)
  local x = 0
  for i = 1, n do x = x + i end
  return x
end
spin(10)
local f = assert(io.open(READY, "w"))
f:write("ready\n")
f:close()
while true do spin(1000) end
]]

-- The three ways: each a function of the interpreter, the directory, the
-- profile's path, giving the command that runs the looping script.
local WAYS = {
  ["-lcallgrind.start"] = function(lua, dir, out)
    helpers.write_file(dir .. "/loop.lua", "local READY = ...\n" .. LOOP)
    return ("CALLGRIND_OUT=%s %s -lcallgrind.start %s %s"):format(shq(out), shq(lua),
      shq(dir .. "/loop.lua"), shq(dir .. "/ready"))
  end,
  ["callgrind-lua exec"] = function(lua, dir, out)
    helpers.write_file(dir .. "/loop.lua", "local READY = ...\n" .. LOOP)
    return ("CALLGRIND_VM=%s CALLGRIND_OUT=%s lua5.4 %s exec %s %s"):format(shq(lua), shq(out),
      shq(ROOT .. "/bin/callgrind-lua"),
      shq(dir .. "/loop.lua"), shq(dir .. "/ready"))
  end,
  ["profiler.until_exit"] = function(lua, dir, out)
    helpers.write_file(dir .. "/loop.lua", "local READY, OUT = ...\n"
      .. "KEEP = require('callgrind.profiler').until_exit{ out = OUT }\n" .. LOOP)
    return ("%s %s %s %s"):format(shq(lua), shq(dir .. "/loop.lua"), shq(dir .. "/ready"), shq(out))
  end,
}

-- Runs cmd in the background in dir, waits for its ready file, sends it
-- sig with kill and waits for it: its exit status as the shell sees it.
-- A watchdog kills a run that has not ended 30 s after it started (that
-- is a failure: the signal was not acted on), so the spec cannot hang.
local function signalled(dir, cmd, sig)
  local script = ([[
cd %s || exit 99
LUA_PATH_5_4=%s LUA_CPATH_5_4=%s %s >stdout 2>stderr &
pid=$!
( i=0; while [ $i -lt 600 ] && kill -0 $pid; do sleep 0.05; i=$((i+1)); done; kill -KILL $pid ) >/dev/null 2>&1 &
while [ ! -e ready ] && kill -0 $pid 2>/dev/null; do sleep 0.02; done
kill -%s $pid
wait $pid
echo $?
]]):format(shq(dir), shq(absolute(package.path)), shq(absolute(package.cpath)), cmd, sig)
  local p = assert(io.popen("sh -c " .. shq(script)))
  local text = p:read("a")
  p:close()
  return tonumber(text:match("(%d+)%s*$"))
end

local ENGINES = { { "hook", "lua5.4" }, { "vm", VM } }
local WAY_ORDER = { "-lcallgrind.start", "callgrind-lua exec", "profiler.until_exit" }

for _, engine in ipairs(ENGINES) do
  local name, lua = engine[1], engine[2]
  describe("a profiled run under the " .. name .. " engine", function()
    for _, way in ipairs(WAY_ORDER) do
      for _, sig in ipairs({ "INT", "TERM" }) do
        it(("ends on SIG%s under %s with the interpreter's exit status and its profile written")
          :format(sig, way), function()
          if name == "vm" and not have_vm() then
            pending("no " .. VM .. " (make vm)")
            return
          end
          local dir = (helpers.run("mktemp -d", "mktemp"):gsub("%s+$", ""))
          finally(function() helpers.run("rm -rf " .. shq(dir), "rm") end)
          local out = dir .. "/loop.out"
          local rc = signalled(dir, WAYS[way](lua, dir, out), sig)
          local stderr = helpers.read_file(dir .. "/stderr")
          if sig == "INT" then
            -- lua.c's interrupted script: its message, then exit 1
            assert.are.equal(1, rc, stderr)
            assert.is_truthy(stderr:find("interrupted! (SIGINT)", 1, true), stderr)
          else
            -- death by SIGTERM: 128 + 15 in the shell
            assert.are.equal(143, rc, stderr)
            assert.are.equal(("callgrind.profiler: SIGTERM: profile written to %s\n"):format(out), stderr)
          end
          local prof = assert(callgrind.load(out))
          assert.are.equal(name, prof.engine)
          local spin = assert(prof:func("spin"), "no spin in the profile")
          assert.is_true(spin:self("Instr") > 0)
          if way ~= "profiler.until_exit" then
            -- the main chunk is profiled too (until_exit's is older than
            -- the profile: its calls have no caller)
            local calls = 0
            for c in spin:callers() do calls = calls + c.count end
            assert.is_true(calls >= 1)
          end
        end)
      end
    end
  end)
end
