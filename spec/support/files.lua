-- Helpers of the picture and export specs: temporary directories, tools
-- that may be missing, python3 programs that read files back.
local H = require "spec.support.helpers"

local M = {}

--- A new empty directory (remove it with M.remove).
function M.tmpdir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. H.shq(dir)))
  return dir
end

--- Removes a directory and what is in it.
function M.remove(dir)
  os.execute("rm -rf " .. H.shq(dir))
end

--- The names in a directory, one a line.
function M.ls(dir)
  return H.run("ls -A " .. H.shq(dir))
end

--- The names in a directory (hidden ones too), sorted, as an array.
function M.entries(dir)
  local t = {}
  local p = assert(io.popen("ls -A " .. H.shq(dir)))
  for name in p:lines() do t[#t + 1] = name end
  p:close()
  table.sort(t)
  return t
end

--- Whether a command is on PATH.
function M.have(cmd)
  return os.execute("command -v " .. cmd .. " >/dev/null 2>&1") == true
end

--- Runs a python3 program with arguments; its output.
function M.python(program, ...)
  local dir = M.tmpdir()
  H.write_file(dir .. "/p.py", program)
  local args = {}
  for i, a in ipairs({ ... }) do args[i] = H.shq(a) end
  local out = H.run("python3 " .. H.shq(dir .. "/p.py") .. " " .. table.concat(args, " "), "python3")
  M.remove(dir)
  return out
end

return M
