--- `callgrind-lua exec SCRIPT.lua ARG...` with nothing but the C core
-- loaded: bin/callgrind-lua comes here before the command line's own
-- modules (callgrind.cli, the library), so that the counting interpreter
-- starts a few milliseconds after the command did, no shell in between.
-- callgrind.cli's `exec` does the same through this module.
-- @module callgrind.cli.exec
local core = require "callgrind.core"

local M = {}

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

--- The counting interpreter exec runs: `$CALLGRIND_VM`; else
-- callgrind-lua5.4 beside the command when it was run by a path (`make
-- install` puts both in PREFIX/bin); else this checkout's build/bin;
-- else callgrind-lua5.4, looked up on PATH.
-- @tparam[opt] string command the command's path (argv[0])
-- @usage local vm = exec.interpreter(arg[0])
function M.interpreter(command)
  local vm = os.getenv("CALLGRIND_VM")
  if vm and vm ~= "" then return vm end
  local places = {}
  if type(command) == "string" and command:find("/", 1, true) then
    places[1] = command:match("^(.*)/[^/]*$") .. "/callgrind-lua5.4"
  end
  local here = debug.getinfo(1, "S").source:match("^@(.-)/?lua/callgrind/cli/exec%.lua$")
  if here then places[#places + 1] = (here == "" and "." or here) .. "/build/bin/callgrind-lua5.4" end
  for _, p in ipairs(places) do
    if exists(p) then return p end
  end
  return "callgrind-lua5.4"
end

--- Replaces this process with `INTERPRETER -lcallgrind.start SCRIPT
-- ARG...`, this process's module paths given to it (LUA_PATH_5_4,
-- LUA_CPATH_5_4): it keeps the pid, so that a signal sent to the command
-- reaches the script, and the script's exit status, or its death by a
-- signal, is the command's. Returns only when it cannot: nil and the
-- message.
-- @tparam table argv `{ [0] = command, "exec", SCRIPT, ARG... }`
-- @usage local _, err = exec.run({ [0] = "callgrind-lua", "exec", "script.lua" })
function M.run(argv)
  local vm = M.interpreter(argv[0])
  local words = { vm, "-lcallgrind.start" }
  for i = 2, #argv do words[#words + 1] = argv[i] end
  local _, err, errno = core.prof_exec(vm, words, { LUA_PATH_5_4 = package.path, LUA_CPATH_5_4 = package.cpath })
  if errno == 2 then return nil, "callgrind-lua exec: no interpreter " .. vm .. " (make vm)" end   -- ENOENT
  return nil, "callgrind-lua exec: " .. tostring(err)
end

return M
