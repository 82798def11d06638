-- A folded-stacks file like a Lua profile of luacheck checking its own
-- source, made up deterministically (the same bytes on every run): frames
-- named `name (file.lua:LINE)` from 12 modules, 600 functions, stacks 8
-- to 80 deep (walks down a call graph, with the recursion of the parser
-- and the linearizer), 40,000 distinct stacks, each line one of them
-- (2,000 of them hot) with a count. Lines are written
-- until the file reaches BYTES (default 110,000,000).
--   lua5.4 bench/folded_gen.lua [BYTES] > luacheck.folded
local want = math.tointeger(tonumber(arg[1] or 110000000))
local x = 20261127
local function rnd(m)
  x = (x * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
  return ((x >> 33) % m)
end
local MODULES = { "main", "runner", "check", "parser", "lexer", "linearize", "analyze", "filter",
  "format", "utils", "options", "stages" }
local WORDS = { "parse", "check", "emit", "scan", "resolve", "visit", "walk", "add", "get", "new", "close",
  "open", "expr", "block", "stmt", "call", "table", "name", "value", "line", "warning", "token", "scope",
  "local", "upvalue", "loop", "item", "node", "chunk", "file" }
local fns = {}
for i = 1, 600 do
  local m = MODULES[1 + (i - 1) % #MODULES]
  fns[i] = string.format("%s_%s (src/luacheck/%s.lua:%d)", WORDS[1 + rnd(#WORDS)], WORDS[1 + rnd(#WORDS)], m,
    1 + rnd(900))
end
-- the call graph: each function calls 2 to 6 others (the first 40 also
-- themselves: the parser's and the linearizer's recursion); the distinct
-- stacks are walks down it from main
local callees = {}
for i = 1, #fns do
  local c = {}
  for k = 1, 2 + rnd(5) do c[k] = 1 + rnd(#fns) end
  if i <= 40 then c[#c + 1] = i end
  callees[i] = c
end
local stacks = {}
for s = 1, 40000 do
  local path, f = { "main (bin/luacheck.lua:1)" }, 1 + rnd(4)
  local depth = 8 + rnd(rnd(10) == 0 and 73 or 30)
  while #path < depth do
    path[#path + 1] = fns[f]
    local c = callees[f]
    f = c[1 + rnd(rnd(3) == 0 and #c or 2)]
  end
  stacks[s] = table.concat(path, ";")
end
local out, n, buf = io.stdout, 0, {}
while n < want do
  local stack = stacks[1 + rnd(rnd(4) == 0 and #stacks or 2000)]
  local line = stack .. " " .. (1 + rnd(rnd(8) == 0 and 100000 or 500)) .. "\n"
  buf[#buf + 1] = line
  n = n + #line
  if #buf == 4096 then out:write(table.concat(buf)); buf = {} end
end
out:write(table.concat(buf))
