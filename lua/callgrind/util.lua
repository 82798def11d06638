--- Internal helpers the modules share: shell quoting, paths, files, and
-- the one way to ask a function's cost by kind. Not part of the public
-- API (help and the types leave it out); one copy of each, so the modules
-- agree on what "exists" or "basename" means.
-- @module callgrind.util
local core = require "callgrind.core"

local getmetatable, io_open, ipairs, os_execute, table_concat, tostring, type =
  getmetatable, io.open, ipairs, os.execute, table.concat, tostring, type

local string_format = string.format

local M = {}

--- Quotes a string (or anything tostring accepts) as one word for sh.
-- @usage os.execute("ls " .. util.shq("it's here"))
function M.shq(s)
  return "'" .. (tostring(s):gsub("'", [['\'']])) .. "'"
end

--- A path for another program's command line that cannot read as an
-- option: a path starting with "-" gets "./" in front (shq it too).
-- @usage os.execute("mkdir -p " .. util.shq(util.argpath("--version")))  -- mkdir -p ./--version
function M.argpath(path)
  path = tostring(path)
  if path:sub(1, 1) == "-" then return "./" .. path end
  return path
end

--- Runs sh code: true when it exits 0, else false and the exit code
-- (128 + n for signal n).
-- @usage local ok, code = util.sh("make -q")
function M.sh(code)
  local ok, how, n = os_execute(code)
  if ok then return true, 0 end
  if how == "signal" then return false, 128 + n end
  return false, n
end

--- Is there a readable file (or directory) at path?
-- @usage if not util.file_exists("spec/baselines/x.callgrind") then print("no baseline yet") end
function M.file_exists(path)
  local f = io_open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

--- Does sh find the command (`command -v`)?
-- @usage if not util.command_exists("valgrind") then print("apt-get install -y valgrind") end
function M.command_exists(cmd)
  return (M.sh("command -v " .. M.shq(cmd) .. " >/dev/null 2>&1"))
end

--- The last component of a path ("" for nil).
-- @usage util.basename("/usr/lib/libc.so.6") --> "libc.so.6"
function M.basename(path)
  if path == nil then return "" end
  return (path:match("([^/]*)$"))
end

--- The directory part of a path ("." when there is none).
-- @usage util.dirname("spec/baselines/x.callgrind") --> "spec/baselines"
function M.dirname(path)
  local d = path:match("^(.*)/[^/]*$")
  if d == nil then return "." end
  return d == "" and "/" or d
end

--- The whole content of a file, or nil and the reason.
-- @usage local text = assert(util.read_file("a.out"))
function M.read_file(path)
  local f, err = io_open(path, "rb")
  if not f then return nil, err end
  local s, rerr = f:read("a")
  f:close()
  if s == nil then return nil, path .. ": " .. tostring(rerr) end
  return s
end

--- Writes data (a string, or an array of strings) to path whole or not
-- at all: the core's `write_file_atomic` (a temporary file in the same
-- directory, synced and renamed into place; nothing left on a failure).
-- Every file the library writes goes through it.
-- @return true, or nil, "path: reason", "io"
-- @usage assert(util.write_file("out.txt", text))
function M.write_file(path, data)
  if type(data) == "table" then data = table_concat(data) end
  return core.write_file_atomic(path, data)
end

--- Is x a loaded Profile (the core's handle)?
-- @usage util.is_profile(prof) --> true
function M.is_profile(x)
  local mt = getmetatable(x)
  return type(x) == "userdata" and type(mt) == "table" and mt.__name == "callgrind.Profile"
end

-- The names profiles are shown by where the user gave another one than
-- the file loaded (weak keys: a profile's name lives as long as it).
local shown_names = setmetatable({}, { __mode = "k" })

--- The name a profile is shown by in titles and messages: the one given
-- to `util.show_name(prof, name)` (the command line gives the names the
-- user typed, `slow.out` for its files `slow.out-01`, `slow.out-02`),
-- else `prof.name`.
-- @usage util.name_of(prof) --> "spec/fixtures/report.callgrind"
function M.name_of(prof)
  return shown_names[prof] or prof.name
end

--- Shows a profile by another name than the file it was loaded from
-- (`util.name_of`); nil forgets it.
-- @usage util.show_name(prof, "callgrind.out")
function M.show_name(prof, name)
  shown_names[prof] = name
end

--- A function's cost for an event and kind ("self" or "inclusive"); 0
-- for no function (a side of a diff where it does not exist).
-- @usage util.value(fn, "Ir", "inclusive")
function M.value(fn, ev, kind)
  if fn == nil then return 0 end
  if kind == "inclusive" then return fn:inclusive(ev) end
  return fn:self(ev)
end

local iterator_mt = { __name = "callgrind.Iterator" }
function iterator_mt.__call(self, ...) return self.f(...) end
function iterator_mt.__tostring(self)
  return self.n and string.format("callgrind.Iterator: %d %s", self.n, self.what)
    or "callgrind.Iterator: " .. self.what
end

--- An iterator that prints as what it walks, as the core's do
-- (`callgrind.Iterator: 3 Cycles`): a generic for calls it as it calls f.
-- @tparam function f the iteration function
-- @tparam string what what it walks ("Cycles")
-- @tparam[opt] integer n how many, when known
-- @usage tostring(util.iterator(next, "Cycles", 3)) --> "callgrind.Iterator: 3 Cycles"
function M.iterator(f, what, n)
  return setmetatable({ f = f, what = what, n = n }, iterator_mt)
end

-- The code points a name never shows raw (besides C0 and DEL): C1
-- controls (U+0080-U+009F: U+009B is CSI to some terminals), the
-- bidirectional formatting characters (U+061C, U+200E, U+200F,
-- U+202A-U+202E, U+2066-U+2069: `rtl<U+202E>gnp.exe` shows as
-- `rtlexe.png`) and the line and paragraph separators (U+2028, U+2029).
local function hidden(cp)
  return cp >= 0x80 and cp <= 0x9F or cp == 0x061C or cp == 0x200E or cp == 0x200F
    or cp >= 0x2028 and cp <= 0x202E or cp >= 0x2066 and cp <= 0x2069
end

-- Their UTF-8 forms, for a quick test (C1 is \xC2\x80-\x9F, U+061C
-- \xD8\x9C, the rest \xE2\x80\x8E ... \xE2\x81\xA9).
local HIDDEN_UTF8 = { "\xC2[\x80-\x9F]", "\xD8\x9C", "\xE2\x80[\x8E\x8F\xA8-\xAE]", "\xE2\x81[\xA6-\xA9]" }

local function has_hidden(s)
  for _, p in ipairs(HIDDEN_UTF8) do
    if s:find(p) then return true end
  end
  return false
end

-- s with each byte of C0 or DEL that keep[byte] does not keep, and each
-- byte that is not part of valid UTF-8, as \xHH; hidden code points as
-- \u{HHHH}; the rest as it is.
local function escape_text(s, keep)
  local out, i, n = {}, 1, #s
  while i <= n do
    local j = s:find("[%z\1-\31\127-\255]", i)
    if not j then out[#out + 1] = s:sub(i) break end
    if j > i then out[#out + 1] = s:sub(i, j - 1) end
    local c = s:byte(j)
    local len = c < 0x80 and 1 or c >= 0xF0 and c < 0xF5 and 4 or c >= 0xE0 and c < 0xF0 and 3
      or c >= 0xC2 and c < 0xE0 and 2 or 0
    local chunk = len > 1 and s:sub(j, j + len - 1)
    if len == 1 then
      out[#out + 1] = keep and keep[c] and string.char(c) or string_format("\\x%02X", c)
      i = j + 1
    elseif chunk and #chunk == len and utf8.len(chunk) == 1 then
      local cp = utf8.codepoint(chunk)
      out[#out + 1] = hidden(cp) and string_format("\\u{%X}", cp) or chunk
      i = j + len
    else
      out[#out + 1] = string_format("\\x%02X", c)
      i = j + 1
    end
  end
  return table_concat(out)
end

--- A name as text a table or a picture can show, and a terminal shows
-- as it is: valid UTF-8, with control characters (C0, DEL) and bytes that
-- are not UTF-8 written `\xHH`, and the C1 controls, the bidirectional
-- formatting characters and U+2028/U+2029 written `\u{HHHH}` (a
-- terminal's escapes shown, never obeyed; no name reverses the text
-- around it). For display only: a `\` of the name stays as it is.
-- @usage util.printable("a\255") --> "a\\xFF"
-- @usage util.printable("rtl\u{202E}gnp.exe") --> "rtl\\u{202E}gnp.exe"
function M.printable(name)
  if not name:find("[%z\1-\31\127-\255]") then return name end
  if not name:find("[%z\1-\31\127]") and utf8.len(name) and not has_hidden(name) then return name end
  return escape_text(name)
end

-- What a terminal may be given raw of a whole text: line feeds and tabs
-- (a carriage return only before a line feed: CSV's line ends).
local TERMINAL_KEEP = { [9] = true, [10] = true }

--- A whole text (a command's output) as a terminal may be given it: as
-- `util.printable` makes a name, but line feeds and tabs kept, and a
-- carriage return kept before a line feed (CSV's line ends); a lone one
-- is `\x0D`. The command line passes what it writes to a terminal
-- through it (callgrind.cli); text made of printable names passes
-- unchanged.
-- @usage util.terminal("a\27[2J\r\nb\tc\n") --> "a\\x1B[2J\r\nb\tc\n"
function M.terminal(text)
  if not text:find("[%z\1-\8\11-\31\127-\255]") then return text end
  if not text:find("[%z\1-\8\11-\31\127]") and utf8.len(text) and not has_hidden(text) then return text end
  if not text:find("\r", 1, true) then return escape_text(text, TERMINAL_KEEP) end
  local out = {}
  for piece, crlf in text:gmatch("([^\r]*)(\r?\n?)") do
    out[#out + 1] = escape_text(piece, TERMINAL_KEEP)
    if crlf == "\r\n" then out[#out + 1] = crlf
    elseif crlf == "\r" then out[#out + 1] = "\\x0D"
    elseif crlf == "\n" then out[#out + 1] = crlf end
  end
  return table_concat(out)
end

--- A name as one frame of folded stacks: `\`, `;`, newline and carriage
-- return escaped as `\\`, `\;`, `\n`, `\r` (stacks.escape; the profiler
-- writes its folded file with it).
-- @usage util.fold_escape("a;b") --> "a\\;b"
function M.fold_escape(name)
  return (name:gsub("[\\;\n\r]", { ["\\"] = "\\\\", [";"] = "\\;", ["\n"] = "\\n", ["\r"] = "\\r" }))
end

return M
