--- The command line in-process for the specs: cli.main(argv) with
-- buffers for its output and errors.
local cli = require "callgrind.cli"

local M = {}

--- A buffer with the write method of a file: `b:text()` is what was written.
function M.buffer()
  local b = { parts = {} }
  function b.write(self, ...)
    for _, s in ipairs({ ... }) do self.parts[#self.parts + 1] = tostring(s) end
    return self
  end
  function b.text(self) return table.concat(self.parts) end
  return b
end

--- Runs `callgrind-lua ARG...` in-process: exit code, stdout, stderr.
-- @usage local code, out, err = C.run("top", "x.out")
function M.run(...)
  local out, err = M.buffer(), M.buffer()
  local code = cli.main({ ... }, out, err)
  return code, out:text(), err:text()
end

return M
