--- Writing profiles back out: `prof:write(path_or_file [, opts])` writes any
-- Profile as a callgrind-format file that callgrind_annotate, KCachegrind
-- and this library read back to the same functions, calls, lines, jumps,
-- parts and totals. The writing is done by the core (csrc/writer/cg_write.c):
-- one writer for prof:write, baselines and the profiler.
--
-- What a file says that the model does not keep is not written: comments,
-- `bb=` lines, position columns other than `instr` and `line`, the `pid:`
-- numbers (unless asked; several parts keep their processes numbered),
-- and the order of functions, lines, calls and jumps (the
-- output is canonical, see `Profile:write`).
-- @module callgrind.export.write
local core = require "callgrind.core"
local args = require "callgrind.args"
local events = require "callgrind.model.events"

local Profile = core.methods.Profile
local internal = core.internal

local io_type, ipairs, type = io.type, ipairs, type

local M = {}

-- The event: lines: long names of base events, and formulas the file or
-- the user defined (presets are left out: every load defines them again).
local function event_lines(prof)
  local preset = {}
  for _, p in ipairs(events.presets) do preset[p.name] = p.long_name end
  local out = {}
  for _, ev in ipairs(prof.events) do
    local info = prof:event_info(ev)
    if info.long_name then out[#out + 1] = { name = ev, long_name = info.long_name } end
  end
  for _, ev in ipairs(prof:derived_events()) do
    local info = prof:event_info(ev)
    if not (preset[ev] and preset[ev] == info.long_name) then
      out[#out + 1] = { name = ev, formula = info.formula, long_name = info.long_name }
    end
  end
  return out
end

-- The function indices of a selection (or array) of this profile's
-- functions.
local function selection_indices(prof, fns)
  local only = {}
  for i, fn in ipairs(fns) do
    if type(fn) ~= "userdata" or fn.profile ~= prof then
      args.fail("write", 2, "opts.functions[" .. i .. "] is not a function of this profile", 3)
    end
    only[i] = fn.index
  end
  return only
end


-- The spec the core's writer takes (csrc/binding/cg_lua_write.c).
local function write_spec(prof, opts)
  local pid = opts.pid
  if pid == nil then pid = "number" end
  local spec = { compress = opts.compress ~= false, pid = pid, event_lines = event_lines(prof) }
  if opts.cmd == nil then spec.cmd = true else spec.cmd = opts.cmd end
  if opts.functions ~= nil then spec.only = selection_indices(prof, opts.functions) end
  return spec
end

--- Writes the profile as a callgrind-format file.
--
-- The output is canonical: parts in order; in each part the functions
-- sorted by (object, file, name), each with its cost lines, then its calls
-- sorted by (callee object, file, name, call site), then its jumps;
-- `totals:` ends each part. Writing the same numbers twice gives the same
-- bytes, whatever order the loaded file had.
--
-- Names are compressed as valgrind and KCachegrind have it: one `(N)` id
-- per distinct function (object, file, name), and every part defines again
-- each id it uses. Control characters in a name (a newline...) are written
-- as the text `\x0a` and read back as that text; a blank at the start or
-- end of a name likewise (`\x20`); names like `(3)` read back as
-- themselves.
--
-- A path is written to a temporary file in the same directory, synced and
-- renamed over the target: a failure (full disk, `ulimit -f`, a killed
-- process) leaves the old file whole and no temporary behind.
-- @param dest a path, or a file opened for writing (left open)
-- @tparam[opt] table opts `compress` (default true: `(N) name` ids and
--   relative positions; false writes every name and position whole, for
--   weak readers); `functions`: a selection or array of this profile's
--   functions, to write only those (their lines, jumps and calls out of
--   them; `totals:` is then their sum, `summary:` stays the run's); `pid`
--   (true: the `pid:` lines as loaded, they change at every run; false:
--   none; default: in a profile of several parts (threads, dumps, files)
--   each process numbered `pid: 1`, `pid: 2`... in order, the same at
--   every run, for KCachegrind names a part by its pid, "PID 1, section 2,
--   thread 3", and without one by the file's name alone); `cmd` (default
--   true: `cmd:` as loaded; false: none; a string: that command)
-- @return true, or nil, "path: reason" and a kind ("io", "memory")
-- @usage assert(prof:write(os.tmpname()))
function Profile:write(dest, opts)
  if type(dest) ~= "string" and io_type(dest) ~= "file" then
    args.fail("write", 1, "path or open file expected, got "
      .. (io_type(dest) == "closed file" and "closed file" or args.show(dest)))
  end
  opts = args.options(opts, "write", 2, "write")
  return internal.write_profile(self, dest, write_spec(self, opts))
end

--- Writes text to a file atomically: to a temporary file in the same
-- directory, synced, then renamed over the target (the old file stays
-- whole on any failure). The core's `write_file_atomic`.
-- @tparam string path
-- @tparam string text
-- @return true, or nil, "path: reason" and a kind ("io", "memory")
-- @usage assert(callgrind.write_file_atomic("out.txt", "hello\n"))
function M.write_file_atomic(path, text)
  args.check_type(path, "string", "write_file_atomic", 1)
  args.check_type(text, "string", "write_file_atomic", 2)
  return core.write_file_atomic(path, text)
end

return M
