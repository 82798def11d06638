-- Penlight's own test scripts (Debian lua-penlight's source, fetched by
-- tools/penlight_src.sh; PENLIGHT_SRC=DIR gives one), run one after
-- another in this one process, as a real program's test suite: each in
-- its own environment, with Penlight's modules loaded afresh and _G's and
-- the strings' metatables put back after it. Five scripts test state only
-- a process of their own has (the script's path and arg, strict mode on
-- _G, a module environment) and are left out; any other failing one fails
-- the workload. Run from the repository's root.
-- luacheck: globals arg os (it sets arg's interpreter path and stands in for os.exit)
local lfs = require "lfs"
local build = os.getenv("BUILD") or "build"
local src = os.getenv("PENLIGHT_SRC") or (build .. "/penlight/src")
if not src:match("^/") then src = lfs.currentdir() .. "/" .. src end
assert(lfs.attributes(src .. "/tests"), "bench/lua/penlight.lua: no Penlight source in " .. src
  .. " (sh tools/penlight_src.sh " .. build .. " fetches it, or set PENLIGHT_SRC=DIR)")
local OWN_PROCESS = {
  ["test-app.lua"] = true, ["test-import_into.lua"] = true, ["test-lapp.lua"] = true,
  ["test-strict.lua"] = true, ["test-utils.lua"] = true,
}
-- the interpreter's own path (pl.app.lua() runs it again) made absolute
for i = -1, -10, -1 do
  local a = arg[i]
  if a and a:find("/") and not a:match("^/") and lfs.attributes(a) then arg[i] = lfs.currentdir() .. "/" .. a end
end
assert(lfs.chdir(src))
local tests = {}
for f in lfs.dir("tests") do
  if f:match("^test%-.*%.lua$") and not OWN_PROCESS[f] then tests[#tests + 1] = f end
end
table.sort(tests)
local path, loaded = package.path, {}
for k in pairs(package.loaded) do loaded[k] = true end
local exit, gmt, smt = os.exit, getmetatable(_G), getmetatable("").__index
local failed = {}
for _, t in ipairs(tests) do
  for k in pairs(package.loaded) do if not loaded[k] then package.loaded[k] = nil end end
  package.path = "./lua/?.lua;./lua/?/init.lua;./tests/?.lua;./tests/lua/?.lua;./tests/lua/?/init.lua;" .. path
  local env = setmetatable({ arg = { [0] = "tests/" .. t } }, { __index = _G })
  env._G = env
  os.exit = function(code) error({ exit = code }, 0) end
  local ok, err = pcall(assert(loadfile("tests/" .. t, "t", env)))
  os.exit = exit
  setmetatable(_G, gmt)
  getmetatable("").__index = smt
  if not ok and not (type(err) == "table" and (err.exit == nil or err.exit == 0 or err.exit == true)) then
    failed[#failed + 1] = t .. ": " .. tostring(type(err) == "table" and err.exit or err)
  end
end
package.path = path
print(#tests .. " Penlight test scripts")
assert(#failed == 0, table.concat(failed, "\n"))
