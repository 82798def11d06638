--- Writing a file whole or not at all: the data goes to a temporary file in
-- the same directory, which is renamed into place when every byte is
-- written. The one place the picture and export writers write files (a
-- core atomic writer can take its place).
-- @module callgrind.atomic
local io_open, os_remove, os_rename, tostring = io.open, os.remove, os.rename, tostring
local string_format = string.format

local M = {}

local counter = 0

--- Writes data (a string, or an array of strings) to path.
-- @return true, or nil, "path: reason", "io"
-- @usage assert(atomic.write("out.svg", svg))
function M.write(path, data)
  counter = counter + 1
  local tmp = string_format("%s.tmp.%s.%d", path, tostring({}):match("0x(%x+)") or "0", counter)
  local f, err = io_open(tmp, "wb")
  if not f then
    return nil, path .. ": " .. ((err or ""):match(": ([^:]*)$") or err or "cannot open"), "io"
  end
  local ok, werr
  if type(data) == "table" then
    ok, werr = true, nil
    for i = 1, #data do
      ok, werr = f:write(data[i])
      if not ok then break end
    end
  else
    ok, werr = f:write(data)
  end
  local cok, cerr = f:close()
  if not ok or not cok then
    os_remove(tmp)
    return nil, path .. ": " .. tostring(werr or cerr), "io"
  end
  local rok, rerr = os_rename(tmp, path)
  if not rok then
    os_remove(tmp)
    return nil, path .. ": " .. ((rerr or ""):match(": ([^:]*)$") or tostring(rerr)), "io"
  end
  return true
end

return M
