--- Helpers shared by the specs (not a spec itself: busted only runs files
-- whose names match `_spec`).
--
-- Shell quoting, reading files and splitting words for any spec, and a "lab"
-- for the specs that build the fixture program in spec/fixtures/progs and
-- profile it with valgrind (spec/valgrind_spec.lua, spec/inclusive_spec.lua):
-- a scratch directory, commands run with LD_PRELOAD unset, the build, the
-- callgrind runs and the reading of callgrind_annotate's output.
--
-- Required as `require "spec.support.helpers"`, which works from the
-- repository root (busted's "./?.lua" entry, and `luarocks path`'s).
-- @module spec.support.helpers

-- luassert's assert, as the specs themselves have it: a failure says where.
local assert = require "luassert"

local M = {}

---------------------------------------------------------------------------
-- Shell, files and words
---------------------------------------------------------------------------

--- Quotes a string for sh.
-- @param s any value (tostring'd)
-- @return `s` in single quotes, with every `'` written as `'\''`
function M.shq(s)
  return "'" .. (tostring(s):gsub("'", [['\'']])) .. "'"
end

--- Reads a whole file (binary); raises when it cannot be opened.
-- @param path the file's name
-- @return its contents
function M.read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

--- Reads a whole file (binary), or nil when there is none.
-- @param path the file's name
-- @return its contents, or nil
function M.read_file_if(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

--- Writes text to a file (binary), replacing it; raises when it cannot.
-- @param path the file's name
-- @param text its contents
function M.write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

--- The id table each name-line key uses (the format's three: objects,
-- files, functions; fl/fi/fe/cfi/cfl/jfi share one), for the specs that
-- read a profile's text without the library.
M.ID_TABLE = {
  ob = "ob", cob = "ob",
  fl = "fl", fi = "fl", fe = "fl", cfi = "fl", cfl = "fl", jfi = "fl",
  fn = "fn", cfn = "fn", jfn = "fn",
}

--- The keys of t, sorted.
function M.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

--- Splits a string at whitespace.
-- @param s a string
-- @return an array of its words
function M.words(s)
  local t = {}
  for w in s:gmatch("%S+") do t[#t + 1] = w end
  return t
end

-- M.run's file for stderr when no errdir is given: one of this process's
-- own (make test runs spec files in parallel processes), removed when the
-- state closes (busted ends with os.exit(code, true))
local own_errfile
local own_errfile_gc = setmetatable({}, { __gc = function() if own_errfile then os.remove(own_errfile) end end })
M._own_errfile_gc = own_errfile_gc

--- Runs a shell command with LD_PRELOAD unset: `make check-asan` runs busted
-- with libasan preloaded, which gcc, perl and valgrind's guest do not want
-- ("ASan runtime does not come first").
-- @param cmd the command (sh)
-- @param what what to call it in the error (default "command")
-- @param errdir where to keep its stderr (default: a temporary file of this process)
-- @return its stdout; raises with its stderr when it exits with anything but 0
function M.run(cmd, what, errdir)
  if not errdir and not own_errfile then own_errfile = os.tmpname() end
  local errfile = errdir and (errdir .. "/last-stderr.txt") or own_errfile
  local p = assert(io.popen("unset LD_PRELOAD; " .. cmd .. " 2>" .. M.shq(errfile), "r"))
  local out = p:read("a")
  local ok, how, code = p:close()
  if not ok then
    local f = io.open(errfile, "rb")
    local err = f and f:read("a") or ""
    if f then f:close() end
    error(string.format("%s failed (%s %s): %s\n%s", what or "command", tostring(how),
      tostring(code), cmd, err), 0)
  end
  return out
end

--- The counting interpreter the specs run (`CALLGRIND_VM`, else make vm's).
M.VM = os.getenv("CALLGRIND_VM") or "build/bin/callgrind-lua5.4"

--- Whether a file exists at path (the counting interpreter when nil: the
-- specs that need it are pending without it).
function M.have_vm(path)
  local f = io.open(path or M.VM, "rb")
  if f then f:close() end
  return f ~= nil
end

--- The engines a spec runs the profiler under: { { name, interpreter } },
-- the hook engine (lua5.4), and the counting engine when it is built.
-- @return the list
function M.engines()
  local t = { { "hook", "lua5.4" } }
  if M.have_vm() then t[#t + 1] = { "vm", M.VM } end
  return t
end

--- Runs a Lua chunk in a fresh lua5.4 (busted's interpreter has every
-- module loaded already) with this checkout's package.path and cpath.
-- @param body the chunk
-- @param env (optional) "VAR=value ..." put before the command
-- @return what it printed, stdout and stderr together
function M.fresh_lua(body, env)
  local script = ("package.path = %q package.cpath = %q\n"):format(package.path, package.cpath) .. body
  local p = assert(io.popen((env or "") .. " lua5.4 -e " .. M.shq(script) .. " 2>&1"))
  local out = p:read("a")
  p:close()
  return out
end

--- LD_PRELOAD=... for fresh_lua's env that adds a library after those in
-- force (under make check-asan the ASan runtime must come first).
-- @param lib the library's path
function M.preload(lib)
  local now = os.getenv("LD_PRELOAD")
  return "LD_PRELOAD=" .. M.shq((now and now ~= "" and now .. ":" or "") .. lib)
end

---------------------------------------------------------------------------
-- Numbers and failure messages
---------------------------------------------------------------------------

--- Writes an integer with thousands separators, as callgrind_annotate does.
-- @param n an integer
-- @return e.g. "-1,234,567"
function M.commify(n)
  local s = tostring(n)
  repeat
    local k
    s, k = s:gsub("^(%-?%d+)(%d%d%d)", "%1,%2")
  until k == 0
  return s
end

--- Fails with a sorted list of mismatches (the first 30 of them), if any.
-- @param what what was compared, first in the message
-- @param mismatches an array of strings (sorted in place)
-- @param legend optional: said after the count ("N mismatch(es), legend:")
function M.report(what, mismatches, legend)
  if #mismatches == 0 then return end
  table.sort(mismatches)
  local shown = {}
  for i = 1, math.min(#mismatches, 30) do shown[i] = "  " .. mismatches[i] end
  if #mismatches > 30 then shown[#shown + 1] = ("  ... and %d more"):format(#mismatches - 30) end
  assert.is_true(false, ("%s: %d mismatch(es)%s:\n%s")
    :format(what, #mismatches, legend and (", " .. legend) or "", table.concat(shown, "\n")))
end

--- callgrind.load that raises with the reader's message.
-- @param path a profile file
-- @return the profile
function M.load(path)
  local prof, err = require("callgrind").load(path)
  assert(prof, "callgrind.load(" .. path .. ") failed: " .. tostring(err))
  return prof
end

---------------------------------------------------------------------------
-- callgrind_annotate's output
---------------------------------------------------------------------------

-- Reads n event columns from the front of a row: "1,234" or "." (never
-- seen), each maybe followed by a percentage " (12.34%)".  Returns the
-- numbers and the rest of the line.
local function parse_columns(line, n)
  local pos, vals = 1, {}
  for i = 1, n do
    local s, e, tok = line:find("^%s*([%d,]+)", pos)
    if not s then s, e, tok = line:find("^%s*(%.)", pos) end
    if not s then return nil end
    if tok == "." then
      vals[i] = 0
    else
      vals[i] = assert(math.tointeger(tonumber((tok:gsub(",", "")))), tok)
    end
    pos = e + 1
    local ps, pe = line:find("^ %(%s*%-?[%d%.]+%%%)", pos)
    if ps then pos = pe + 1 end
  end
  return vals, line:sub(pos)
end

---------------------------------------------------------------------------
-- The lab: a scratch directory, the fixture program and valgrind
---------------------------------------------------------------------------

local Lab = {}
Lab.__index = Lab

--- A lab for one spec file; call lab:open() in setup and lab:close() in
-- teardown.
-- @param spec the spec's file name, for the message when a tool is missing
-- @return the lab; lab.dir is the scratch directory once open
function M.lab(spec)
  return setmetatable({ spec = spec }, Lab)
end

--- Creates the scratch directory (mode 700, next to a name os.tmpname made).
function Lab:open()
  self.reserved = os.tmpname() -- creates the file: the name is ours
  self.dir = self.reserved .. ".d"
  assert(os.execute("mkdir -m 700 " .. M.shq(self.dir)), "cannot create " .. self.dir)
end

--- Removes the scratch directory and the reserved name.
function Lab:close()
  if self.dir then os.execute("rm -rf " .. M.shq(self.dir)) end
  if self.reserved then os.remove(self.reserved) end
end

--- M.run, keeping stderr in the scratch directory.
function Lab:run(cmd, what)
  return M.run(cmd, what, self.dir)
end

--- Raises (the spec never skips) when a tool is not on PATH.
-- @param tool "gcc", "valgrind" or "callgrind_annotate"
function Lab:need(tool)
  if not os.execute("command -v " .. M.shq(tool) .. " >/dev/null 2>&1") then
    error(tool .. " not found on PATH: " .. self.spec .. " needs gcc, valgrind "
      .. "and callgrind_annotate (Debian: apt-get install gcc valgrind); "
      .. "it does not skip", 0)
  end
end

--- Raises unless gcc, valgrind and callgrind_annotate are all on PATH (the
-- first one missing).
function Lab:need_tools()
  self:need("gcc")
  self:need("valgrind")
  self:need("callgrind_annotate")
end

--- Absolute path of spec/fixtures/progs, from this file's own location.
function Lab:progs_dir()
  local src = debug.getinfo(1, "S").source:match("^@(.*)$") or "spec/support/helpers.lua"
  local dir = (src:match("^(.*)/[^/]*$") or "."):gsub("^%./", "")
  dir = dir:match("^(.*)/support$") or (dir == "support" and ".") or (dir .. "/..")
  if dir:sub(1, 1) ~= "/" then
    dir = (self:run("pwd", "pwd"):gsub("%s+$", "")) .. "/" .. dir
  end
  return dir .. "/fixtures/progs"
end

--- Builds the fixture program (once per lab) in the scratch directory.
-- @return the executable's path
function Lab:program()
  if self.program_path then return self.program_path end
  self:need("gcc")
  local src = self:progs_dir()
  local srcs = {}
  for _, f in ipairs { "cgmain.c", "cgparity.c", "cgthreads.c" } do
    srcs[#srcs + 1] = M.shq(src .. "/" .. f)
  end
  local exe = self.dir .. "/cgprog"
  self:run(("gcc -g -O1 -pthread -I %s -o %s %s"):format(M.shq(src), M.shq(exe), table.concat(srcs, " ")),
    "gcc (building spec/fixtures/progs)")
  self.program_path = exe
  return exe
end

--- Profiles the fixture program with `valgrind --tool=callgrind`.
-- @param tag the output file's name (tag.out in the scratch directory)
-- @param options callgrind's options (a string for sh)
-- @return the output file's path
function Lab:callgrind(tag, options)
  self:need("valgrind")
  local exe = self:program()
  local out = self.dir .. "/" .. tag .. ".out"
  self:run(("valgrind -q --tool=callgrind %s --callgrind-out-file=%s %s >/dev/null")
    :format(options, M.shq(out), M.shq(exe)), "valgrind --tool=callgrind " .. options)
  return out
end

--- Profiles any command with `valgrind --tool=callgrind`.
-- @param tag the output file's name (tag.out in the scratch directory)
-- @param options callgrind's options (a string for sh)
-- @param cmd the command (a string for sh), run in the scratch directory
-- @return the output file's path
function Lab:callgrind_cmd(tag, options, cmd)
  self:need("valgrind")
  local out = self.dir .. "/" .. tag .. ".out"
  self:run(("cd %s && valgrind -q --tool=callgrind %s --callgrind-out-file=%s %s >/dev/null")
    :format(M.shq(self.dir), options, M.shq(out), cmd), "valgrind --tool=callgrind " .. cmd)
  return out
end

--- Runs `callgrind_annotate --threshold=100` on a file, from "/" so that no
-- file name loses a `pwd` prefix, and reads its output.
-- @param path the profile file
-- @param inclusive true for --inclusive=yes (then PROGRAM TOTALS is not read)
-- @return { events = {...}, program = {ev = n} (not with inclusive),
--   rows = {["file:fn"] = {ev = n}}, objects = {["file:fn"] = object or nil},
--   text = output }
function Lab:annotate(path, inclusive)
  self:need("callgrind_annotate")
  local out = self:run("cd / && callgrind_annotate " .. (inclusive and "--inclusive=yes " or "")
    .. "--threshold=100 --auto=no --show-percs=no " .. M.shq(path), "callgrind_annotate")
  local r = { rows = {}, objects = {}, text = out }
  local recorded = assert(out:match("\nEvents recorded:%s*([^\n]-)%s*\n"),
    "no 'Events recorded:' line in callgrind_annotate's output:\n" .. out)
  local shown = assert(out:match("\nEvents shown:%s*([^\n]-)%s*\n"), "no 'Events shown:' line")
  assert(recorded == shown, "callgrind_annotate shows other events than it recorded")
  r.events = M.words(recorded)
  local n = #r.events
  local lines = {}
  for l in (out .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  local i = 1
  while i <= #lines do
    local l = lines[i]
    if not inclusive and l:find("PROGRAM TOTALS", 1, true) and not r.program then
      local vals, rest = parse_columns(l, n)
      assert(vals and rest:match("^%s*PROGRAM TOTALS"), "cannot read PROGRAM TOTALS row: " .. l)
      r.program = {}
      for j, ev in ipairs(r.events) do r.program[ev] = vals[j] end
    elseif l:match("%sfile:function%s*$") then
      i = i + 1
      assert(lines[i]:match("^%-%-%-%-"), "expected a ---- line after the file:function header")
      i = i + 1
      while i <= #lines and lines[i] ~= "" do
        local row = lines[i]
        local vals, rest = parse_columns(row, n)
        assert(vals, "cannot read callgrind_annotate row: " .. row)
        local name = assert(rest:match("^%s+(.-)%s*$"), "no file:function in row: " .. row)
        local key, object = name:match("^(.*) %[([^%[%]]*)%]$")
        key = key or name
        assert(r.rows[key] == nil, "callgrind_annotate printed " .. key .. " twice")
        local cost = {}
        for j, ev in ipairs(r.events) do cost[ev] = vals[j] end
        r.rows[key] = cost
        r.objects[key] = object
        i = i + 1
      end
      r.done = true
    end
    i = i + 1
  end
  if not inclusive then
    assert(r.program, "no PROGRAM TOTALS row in callgrind_annotate's output:\n" .. out)
  end
  assert(r.done, "no file:function table in callgrind_annotate's output:\n" .. out)
  return r
end

--- Instr per line of every function with a cost, keyed "file:name":
-- { ["file:name"] = { [line] = Instr } } (the profiler's specs compare
-- two profiles with it).
function M.instr_lines(prof)
  local t = {}
  for fn in prof:functions() do
    local lines = {}
    for l in fn:lines() do
      if l:cost("Instr") ~= 0 then lines[l.line] = (lines[l.line] or 0) + l:cost("Instr") end
    end
    t[fn.file .. ":" .. fn.name] = lines
  end
  return t
end

--- FNV-1a, 64 bits, of a string (Lua's integers wrap as the C core's
-- uint64_t do), for the digest line of written files, worked out apart
-- from the core's.
-- @usage H.fnv1a64("") --> -3750763034362895579 (0xcbf29ce484222325)
function M.fnv1a64(s)
  local h = 0xcbf29ce484222325
  for i = 1, #s do h = (h ~ s:byte(i)) * 0x100000001b3 end
  return h
end

--- A written file's text: its body, then the end line with the body's digest.
-- @usage H.with_digest("# callgrind format\n...totals: 5\n")
function M.with_digest(body)
  return body .. string.format("# end digest=fnv1a64:%016x\n", M.fnv1a64(body))
end

return M
