--- The folded-stack reader as the library had it in Lua before the C
-- reader (csrc/reader/cg_folded.c): the specs' oracle for the trees and
-- flame graphs the C reader gives (stacks_folded_spec.lua).
local util = require "callgrind.util"
local table_concat, string_format, ipairs = table.concat, string.format, ipairs

local M = {}

local function sum_up(nd)
  local t = nd.self
  for _, kid in ipairs(nd.children) do t = t + sum_up(kid) end
  nd.total = t
  return t
end

local function prune(nd, min)
  local kept = {}
  for _, kid in ipairs(nd.children) do
    if kid.total >= min and kid.total > 0 then
      kept[#kept + 1] = kid
      prune(kid, min)
    else
      nd.self = nd.self + kid.total
    end
  end
  nd.children = kept
end

local function add_path(top, frames, cost)
  local nd = top
  for i = 1, #frames do
    local fn = frames[i]
    local kid = nd.index[fn]
    if not kid then
      kid = { fn = fn, self = 0, total = 0, children = {}, index = {} }
      nd.index[fn] = kid
      nd.children[#nd.children + 1] = kid
    end
    nd = kid
  end
  nd.self = nd.self + cost
end

local UNESCAPE = { ["\\"] = "\\", [";"] = ";", n = "\n", r = "\r" }

-- The frames of a folded line's stack part: split at `;`, `\\`, `\;`,
-- `\n`, `\r` unescaped (another backslash is kept as it is).
local function split_frames(frames)
  local names, cur, p = {}, {}, 1
  while true do
    local s = frames:find("[\\;]", p)
    if not s then break end
    cur[#cur + 1] = frames:sub(p, s - 1)
    if frames:byte(s) == 59 then              -- ;
      names[#names + 1] = table_concat(cur)
      cur = {}
      p = s + 1
    else
      local nx = frames:sub(s + 1, s + 1)
      cur[#cur + 1] = UNESCAPE[nx] or ("\\" .. nx)
      p = s + 2
    end
  end
  cur[#cur + 1] = frames:sub(p)
  names[#names + 1] = table_concat(cur)
  return names
end

function M.read_folded(text, source, threshold)
  threshold = threshold or 1e-4
  local top = { total = 0, self = 0, children = {}, index = {}, exact = true }
  local fns = {}
  local pos, lineno, len = 1, 0, #text
  while pos <= len do
    local e = text:find("\n", pos, true) or len + 1
    local line = text:sub(pos, e - 1):gsub("\r$", "")
    lineno = lineno + 1
    pos = e + 1
    if line:find("%S") then
      local frames, count = line:match("^(.-)[ \t]+(%d+)[ \t]*$")
      count = count and math.tointeger(tonumber(count))
      if not frames or frames == "" or not count or top.total + count < top.total then
        error(string_format("%s:%d: not a folded stack (frames, a blank and a count): %s", source, lineno,
          util.printable(#line > 80 and line:sub(1, 80) .. "..." or line)), 0)
      end
      local path = split_frames(frames)
      for i, name in ipairs(path) do
        local fn = fns[name]
        if not fn then
          fn = { name = name }
          fns[name] = fn
        end
        path[i] = fn
      end
      add_path(top, path, count)
      top.total = top.total + count
    end
  end
  sum_up(top)
  prune(top, threshold * top.total)
  return top
end

return M
