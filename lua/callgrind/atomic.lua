--- Writing a file whole or not at all, for the picture and export
-- writers: the core's `write_file_atomic` (a temporary file in the same
-- directory, renamed into place when every byte is written).
-- @module callgrind.atomic
local core = require "callgrind.core"

local table_concat, type = table.concat, type

local M = {}

--- Writes data (a string, or an array of strings) to path.
-- @return true, or nil, "path: reason", "io"
-- @usage assert(atomic.write("out.svg", svg))
function M.write(path, data)
  if type(data) == "table" then data = table_concat(data) end
  return core.write_file_atomic(path, data)
end

return M
