-- Every program or Lua module a spec needs is a Debian package that the
-- make target running that spec installs (issue 41: on a fresh Debian 12
-- machine `make test` failed once, vm_same_spec's luacheck not being in
-- DEPS_TEST). The spec files are spec/**/*.lua (specs, spec/support,
-- spec/browser) and examples' specs (examples/**/*_spec.lua, run by
-- spec/perf_example_spec.lua). Each is read as Lua tokens, comments
-- dropped, and:
--
-- - modules: `require "x"` / `require("x")` in code, and the same inside a
--   string literal (a chunk a child interpreter runs, as vm_same_spec's
--   luacheck); the project's own (callgrind*, spec.*) are left out;
-- - commands: in every string literal, the word at a shell command
--   position (the literal's start, and after &&, ||, |, ;, $( and a
--   backtick, outside shell quotes), after `VAR=value` assignments; a
--   path names its last part when it is under /usr/bin or /bin (a
--   relative path, bin/callgrind-lua, is the project's). A word that
--   MODULES or COMMANDS below knows is a dependency wherever it is found;
--   an unknown word fails the spec only where the literal is surely a
--   command: the first thing given to one of SINKS (os.execute, io.popen
--   and the specs' helpers that run a command line as given), so that
--   names, messages and Lua code in other strings cannot fail it.
--
-- Each dependency maps to a package that must be in the list of the make
-- target that runs the file: DEPS_BROWSER for spec/browser/, DEPS_TEST
-- for the rest (read from the Makefile, $(DEPS_X) expanded). A new
-- command or module: a row in COMMANDS or MODULES (`dpkg -S $(command -v
-- X)` says which package has it), and its package in the Makefile.
local H = require "spec.support.helpers"

-- Packages Debian always has (Essential: yes, or apt's own): never listed.
local ESSENTIAL = { ["(essential)"] = true }

-- command -> Debian package ("(essential)": always there; false: the
-- shell's own or the project's)
local COMMANDS = {
  -- the shell's builtins
  cd = false, unset = false, export = false, exec = false, test = false, command = false, echo = false,
  printf = false, set = false, ["true"] = false, ["false"] = false, exit = false, ulimit = false, eval = false,
  kill = false, trap = false, wait = false, read = false, type = false, umask = false,
  ["while"] = false, ["for"] = false, ["if"] = false, ["until"] = false, ["case"] = false,
  -- Essential packages: coreutils, findutils, grep, sed, mawk, diffutils,
  -- tar, gzip, dash/bash, util-linux, perl-base, hostname
  rm = "(essential)", mkdir = "(essential)", cp = "(essential)", cat = "(essential)", ls = "(essential)",
  mv = "(essential)", ln = "(essential)", chmod = "(essential)", touch = "(essential)", mktemp = "(essential)",
  dd = "(essential)", head = "(essential)", tail = "(essential)", wc = "(essential)", sort = "(essential)",
  uniq = "(essential)", tr = "(essential)", cut = "(essential)", id = "(essential)", env = "(essential)",
  timeout = "(essential)", sleep = "(essential)", pwd = "(essential)", stat = "(essential)",
  readlink = "(essential)", basename = "(essential)", dirname = "(essential)", seq = "(essential)",
  tee = "(essential)", nproc = "(essential)", du = "(essential)", date = "(essential)", od = "(essential)",
  truncate = "(essential)", realpath = "(essential)", chown = "(essential)", rmdir = "(essential)",
  sha256sum = "(essential)", md5sum = "(essential)", cmp = "(essential)", diff = "(essential)",
  find = "(essential)", xargs = "(essential)", grep = "(essential)", sed = "(essential)", awk = "(essential)",
  tar = "(essential)", gzip = "(essential)", gunzip = "(essential)", zcat = "(essential)", sh = "(essential)",
  bash = "(essential)", perl = "(essential)", setsid = "(essential)", hostname = "(essential)",
  mkfifo = "(essential)", mknod = "(essential)", setarch = "(essential)", nice = "(essential)", taskset = "(essential)",
  script = "(essential)", runuser = "(essential)",
  ["apt-get"] = "(essential)", dpkg = "(essential)", ["dpkg-query"] = "(essential)",
  -- packages
  gcc = "gcc", cc = "gcc", make = "make", ["pkg-config"] = "pkgconf", patch = "patch", nm = "binutils",
  ["dpkg-source"] = "dpkg-dev", git = "git",
  busted = "lua-busted", luacheck = "lua-check", luarocks = "luarocks",
  valgrind = "valgrind", callgrind_annotate = "valgrind", cg_annotate = "valgrind",
  callgrind_control = "valgrind",
  dot = "graphviz", go = "golang-go", python3 = "python3", zstd = "zstd", xz = "xz-utils",
  unxz = "xz-utils", xzcat = "xz-utils", unzstd = "zstd", zstdcat = "zstd", time = "time", ["g++"] = "g++",
  clang = "clang", node = "nodejs", npm = "npm", chromium = "chromium", ["firefox-esr"] = "firefox-esr",
  cmark = "cmark", ["cmark-gfm"] = "cmark-gfm",
  initdb = "postgresql", pg_ctl = "postgresql",
}
COMMANDS["lua5.4"] = "lua5.4"
COMMANDS["lua5.1"] = "lua5.1"

-- module (its first part, or the whole name) -> Debian package (false:
-- a module the spec writes itself, in a scratch directory)
local MODULES = {
  luassert = "lua-busted", say = "lua-busted", busted = "lua-busted", -- (luassert, say: its dependencies)
  lpeg = "lua-lpeg", luacheck = "lua-check", dkjson = "lua-dkjson",
  ["luasql.sqlite3"] = "lua-sql-sqlite3", ["luasql.postgres"] = "lua-sql-postgres",
  -- written by the specs themselves
  cgtop = false, cgprofmod = false, cgpkg = false, x = false, zmod = false, cgtwo = false, cgdir = false,
  -- spec/fixtures/busted_suite/plx.lua (busted_helper_spec)
  plx = false,
}

-- The helpers whose first argument is a command line run as given: a
-- string literal first in their call is surely a command.
local SINKS = {
  ["os.execute"] = true, ["io.popen"] = true, ["H.run"] = true, ["helpers.run"] = true, ["M.run"] = true,
  ["lab:run"] = true, ["self:run"] = true, capture = true, read_cmd = true, lines_of = true,
}

-- The Lua tokens of a text, comments dropped: { kind = "name"|"string"|
-- "op", value } (a name with its dots and colon joined: os.execute, lab:run).
local function tokens(text)
  local out, i, n = {}, 1, #text
  local function long_end(at)
    local eq = text:match("^%[(=*)%[", at)
    if not eq then return nil end
    local close = "]" .. eq .. "]"
    local s, e = text:find(close, at + #eq + 2, true)
    return (e or n), text:sub(at + #eq + 2, (s or n + 1) - 1)
  end
  while i <= n do
    local c = text:sub(i, i)
    if c:find("%s") then
      i = i + 1
    elseif text:sub(i, i + 1) == "--" then
      local e = long_end(i + 2)
      if e then i = e + 1 else i = (text:find("\n", i, true) or n) + 1 end
    elseif c == "[" and text:find("^%[=*%[", i) then
      local e, body = long_end(i)
      out[#out + 1] = { "string", body }
      i = e + 1
    elseif c == '"' or c == "'" then
      local j, buf = i + 1, {}
      while j <= n do
        local d = text:sub(j, j)
        if d == "\\" then
          local e = text:sub(j + 1, j + 1)
          buf[#buf + 1] = e == "n" and "\n" or e == "t" and "\t" or e
          j = j + 2
        elseif d == c then break
        else buf[#buf + 1] = d; j = j + 1 end
      end
      out[#out + 1] = { "string", table.concat(buf) }
      i = j + 1
    elseif c:find("[%a_]") then
      local name = text:match("^[%a_][%w_]*", i)
      local last = out[#out]
      local prev = out[#out - 1]
      if last and last[1] == "op" and (last[2] == "." or last[2] == ":") and prev and prev[1] == "name" then
        out[#out] = nil
        out[#out] = { "name", prev[2] .. last[2] .. name }
      else
        out[#out + 1] = { "name", name }
      end
      i = i + #name
    elseif c:find("%d") then
      i = i + #text:match("^[%w_.]+", i)
    else
      out[#out + 1] = { "op", c }
      i = i + 1
    end
  end
  return out
end

-- The words at shell command positions of a string (see the top), each
-- with whether an argument of a command's look follows it (an option, a
-- path, a quote, a %s, a redirection) or nothing at all.
local function command_words(s)
  -- shell quotes out: what is inside is an argument ('...' and "...")
  s = s:gsub("'[^']*'", "''"):gsub('"[^"]*"', '""')
  local words = {}
  local function at(pos)
    local rest = s:sub(pos)
    rest = rest:gsub("^%s+", "")
    while true do                              -- VAR=value assignments
      local after = rest:match("^[%a_][%w_]*=%S*%s+(.*)$")
      if not after then break end
      rest = after
    end
    local word = rest:match("^[%w_./+-]+")
    if not word or word:find("^%.") then return end
    if word:find("/") then
      word = word:match("^/usr/bin/([^/]+)$") or word:match("^/bin/([^/]+)$")
      if not word then return end             -- the project's own, by path
    end
    if word:find("^[%a_]") then
      local after = rest:sub(#word + 1)
      words[#words + 1] = { word, after == "" or after:find("^%s+[-%%'\"$/<>&|;]") ~= nil
        or after:find("^%s+2>") ~= nil }
    end
  end
  at(1)
  local i = 1
  while true do
    local s1, e1 = s:find("[;&|`]", i)
    local s2, e2 = s:find("%$%(", i)
    if s2 and (not s1 or s2 < s1) then s1, e1 = s2, e2 end
    if not s1 then break end
    local ch = s:sub(s1, s1)
    if ch == "&" and s:sub(s1 + 1, s1 + 1) == "&" then e1 = s1 + 1
    elseif ch == "&" then e1 = nil                 -- 2>&1, &
    elseif ch == "|" and s:sub(s1 + 1, s1 + 1) == "|" then e1 = s1 + 1 end
    if e1 then at(e1 + 1) end
    i = (e1 or s1) + 1
  end
  return words
end

-- Every spec file: { path, target list name }.
local function spec_files()
  local out = {}
  local p = assert(io.popen("find spec examples -name '*.lua' | sort"))
  for path in p:lines() do
    if path == "spec/deps_spec.lua" then -- luacheck: ignore 542
      -- (this file: its tables name every command)
    elseif path:find("^spec/") and not path:find("^spec/fixtures/") and not path:find("^spec/corpus/") then
      out[#out + 1] = { path, path:find("^spec/browser/") and "DEPS_BROWSER" or "DEPS_TEST" }
    elseif path:find("^examples/.*_spec%.lua$") then
      out[#out + 1] = { path, "DEPS_TEST" }
    end
  end
  p:close()
  return out
end

-- The Makefile's DEPS_X lists, expanded: name -> { package = true }.
local function deps_lists()
  local raw = {}
  local text = H.read_file("Makefile"):gsub("\\\n", " ")    -- continued lines joined
  for line in text:gmatch("[^\n]+") do
    local name, value = line:match("^(DEPS_[%w_]+)%s*[:?]?=%s*(.*)$")
    if name then raw[name] = value end
  end
  local function expand(name, seen)
    assert(not seen[name], "Makefile: " .. name .. " names itself")
    seen[name] = true
    local set = {}
    for word in (raw[name] or ""):gmatch("%S+") do
      local inner = word:match("^%$%((DEPS_[%w_]+)%)$")
      if inner then
        for k in pairs(expand(inner, seen)) do set[k] = true end
      else
        set[word] = true
      end
    end
    seen[name] = nil
    return set
  end
  local lists = {}
  for name in pairs(raw) do lists[name] = expand(name, {}) end
  return lists
end

-- What a file needs: { { kind, name, package or nil (unknown) } }.
local function needs_of(path)
  local text = H.read_file(path)
  local toks = tokens(text)
  local out, seen = {}, {}
  local function need(kind, name, pkg, unknown_fails)
    if pkg == false then return end
    if pkg == nil and not unknown_fails then return end
    local key = kind .. " " .. name
    if seen[key] then return end
    seen[key] = true
    out[#out + 1] = { kind, name, pkg }
  end
  local function module(name)
    if name:find("^callgrind") or name:find("^spec%.") then return end
    local pkg = MODULES[name]
    if pkg == nil then pkg = MODULES[name:match("^[^.]+")] end
    need("module", name, pkg, true)
  end
  for k, t in ipairs(toks) do
    if t[1] == "name" and t[2] == "require" then
      local nx = toks[k + 1]
      if nx and nx[1] == "op" and nx[2] == "(" then nx = toks[k + 2] end
      if nx and nx[1] == "string" then module(nx[2]) end
    elseif t[1] == "string" then
      for name in t[2]:gmatch("require%s*%(?%s*['\"]([%w_.%-]+)['\"]") do module(name) end
      -- surely a command: the first token after a sink's "(" (and any
      -- more "(" of a ("..."):format(...))
      local j = k - 1
      while toks[j] and toks[j][1] == "op" and toks[j][2] == "(" do j = j - 1 end
      local sure = j < k - 1 and toks[j] and toks[j][1] == "name" and SINKS[toks[j][2]] or false
      for _, w in ipairs(command_words(t[2])) do
        if sure or w[2] then need("command", w[1], COMMANDS[w[1]], sure) end
      end
    end
  end
  return out
end

describe("the packages the specs need", function()
  local lists = deps_lists()

  it("reads the Makefile's lists and finds the spec files", function()
    assert.is_truthy(lists.DEPS_TEST and lists.DEPS_TEST["lua-busted"])
    assert.is_truthy(lists.DEPS_BROWSER and lists.DEPS_BROWSER.chromium)
    assert.is_true(#spec_files() > 50)
  end)

  it("sees commands and modules where the specs put them, and not in comments or plain strings", function()
    local f = os.tmpname()
    H.write_file(f, table.concat({
      '-- os.execute("nosuchtool-in-comment")',
      '--[[ io.popen("nosuchtool-in-long-comment") ]]',
      'local m = require "lpeg"',
      'local s = "nosuchtool is a word in a message"',
      'H.run("cd /tmp && LC_ALL=C dot -V 2>&1 | grep x; valgrind -q ls")',
      'io.popen(("unknowntool %s"):format(1))',
      'local c = "lua5.4 -e \\"require \'luacheck.main\'\\""',
      'os.execute("/usr/bin/time -f %M bin/callgrind-lua x && build/bin/callgrind-lua5.4 -e \'a; b\'")',
    }, "\n"))
    local got = {}
    for _, nd in ipairs(needs_of(f)) do got[#got + 1] = nd[1] .. " " .. nd[2] .. " " .. tostring(nd[3]) end
    os.remove(f)
    table.sort(got)
    assert.are.same({ "command dot graphviz", "command grep (essential)", "command lua5.4 lua5.4",
      "command time time", "command unknowntool nil", "command valgrind valgrind",
      "module lpeg lua-lpeg", "module luacheck.main lua-check" }, got)
  end)

  it("are each installed by the make target that runs the spec", function()
    local problems = {}
    for _, sf in ipairs(spec_files()) do
      local path, list = sf[1], sf[2]
      for _, nd in ipairs(needs_of(path)) do
        local kind, name, pkg = nd[1], nd[2], nd[3]
        if pkg == nil then
          problems[#problems + 1] = ("%s: %s %s is not in spec/deps_spec.lua's %s table: add its Debian package "
            .. "(dpkg -S $(command -v %s)) there and to the Makefile's %s"):format(path, kind, name,
            kind == "command" and "COMMANDS" or "MODULES", name, list)
        elseif not ESSENTIAL[pkg] and not lists[list][pkg] then
          problems[#problems + 1] = ("%s: %s %s needs Debian package %s, which the Makefile's %s does not list")
            :format(path, kind, name, pkg, list)
        end
      end
    end
    assert.are.same({}, problems)
  end)
end)
