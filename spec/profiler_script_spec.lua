-- `lua5.4 -lcallgrind.start script.lua`: the written file, read by
-- callgrind_annotate and by our loader, from separate processes.
local helpers = require "spec.support.helpers"

local shq = helpers.shq

-- The script's absolute path: fl= is the path as given to the interpreter,
-- and callgrind_annotate --auto=yes must find it from anywhere.
local function script_path()
  local pwd = helpers.run("pwd", "pwd"):gsub("%s+$", "")
  return pwd .. "/spec/fixtures/lua/work.lua"
end

-- Runs the script under -lcallgrind.start with this process's module paths;
-- returns the output file's path, stdout, stderr and the exit code.
local function profile_script(dir, tag, mode, env)
  local out = dir .. "/" .. tag .. ".out"
  local cmd = ("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s CALLGRIND_OUT=%s %s lua5.4 -lcallgrind.start %s %s >%s 2>%s")
    :format(shq(package.path), shq(package.cpath), shq(out), env or "", shq(script_path()),
      mode or "", shq(dir .. "/stdout"), shq(dir .. "/stderr"))
  -- LD_PRELOAD is kept: under make check-asan, cpath names the ASan build
  local _, _, code = os.execute(cmd)
  return out, helpers.read_file(dir .. "/stdout"), helpers.read_file(dir .. "/stderr"), code
end

local function calls(prof, caller, callee)
  local n = 0
  for c in prof:calls() do
    if c.caller.name == caller and c.callee.name == callee then n = n + c.count end
  end
  return n
end

-- Runs `code` as a script under -lcallgrind.start in a shell that first
-- runs `pre`, in lab's directory TAG; returns stderr, the exit code and the
-- files left in that directory.
local function run_script(lab, tag, code, out, pre)
  local dir = lab.dir .. "/" .. tag
  assert(os.execute("mkdir " .. shq(dir)))
  helpers.write_file(dir .. "/script.lua", code)
  local cmd = ("%s; LUA_PATH_5_4=%s LUA_CPATH_5_4=%s CALLGRIND_OUT=%s lua5.4 -lcallgrind.start %s >/dev/null 2>%s")
    :format(pre or ":", shq(package.path), shq(package.cpath), shq(out or (dir .. "/out")),
      shq(dir .. "/script.lua"), shq(lab.dir .. "/" .. tag .. ".stderr"))
  local _, _, code_ = os.execute("sh -c " .. shq(cmd))
  local files = {}
  for f in helpers.run("ls " .. shq(dir), "ls"):gmatch("[^\n]+") do files[#files + 1] = f end
  return helpers.read_file(lab.dir .. "/" .. tag .. ".stderr"), code_, files
end

-- { ["file:name"] = { [line] = Instr } } of every function with a cost
local model = helpers.instr_lines

describe("lua5.4 -lcallgrind.start", function()
  local lab = helpers.lab("spec/profiler_script_spec.lua")
  local file, prof

  setup(function()
    lab:open()
    local out, stdout, _, code = profile_script(lab.dir, "first")
    assert.are.equal(0, code)
    assert.are.equal("1 1 2 3 5 8 13 21 34 55 6\n", stdout)
    file = out
    prof = helpers.load(file)
  end)

  teardown(function() lab:close() end)

  it("writes a profile of the script's functions with exact call counts", function()
    local path = script_path()
    -- fib(i) makes 2 F(i+1) - 1 calls: for i = 1..10, 2 (1+2+3+5+...+89) - 10
    assert.are.equal(10, calls(prof, "main chunk", "fib"))
    assert.are.equal(2 * 231 - 10 - 10, calls(prof, "fib", "fib"))
    assert.are.equal(10, calls(prof, "main chunk", "Stack:push"))
    assert.are.equal(1, calls(prof, "main chunk", "Stack.new"))
    assert.are.equal(10, calls(prof, "main chunk", "string.format"))
    assert.are.equal(3, calls(prof, "main chunk", "gen"))
    assert.are.equal(1, calls(prof, "gen", "anonymous@work.lua:22"))
    assert.are.equal(3, calls(prof, "anonymous@work.lua:22", "coroutine.yield"))
    local compared = 0
    local words = { "1", "1", "2", "3", "5", "8", "13", "21", "34", "55" }
    table.sort(words, function(a, b) compared = compared + 1; return #a < #b or (#a == #b and a < b) end)
    assert.are.equal(compared, calls(prof, "table.sort", "anonymous@work.lua:21"))
    assert.are.equal(path, prof:func("fib").file)
    assert.are.equal("[C]", prof:func("table.sort").file)
    -- Stack:push: 3 instructions on line 8 and 2 on line 9, 10 times; the
    -- RETURN0 on line 10
    local push = {}
    for l in prof:func("Stack:push"):lines() do push[l.line] = l:cost("Instr") end
    assert.are.same({ [8] = 30, [9] = 20, [10] = 10 }, push)
    assert.are.equal("lua5.4 -lcallgrind.start " .. path, prof.cmd)
  end)

  it("meets the invariants: self <= inclusive <= total, selfs sum to the total, the main chunk is all", function()
    local total, selfs = prof:total("Instr"), 0
    for fn in prof:functions() do
      assert.is_true(fn:self("Instr") <= fn:inclusive("Instr"))
      assert.is_true(fn:inclusive("Instr") <= total)
      selfs = selfs + fn:self("Instr")
    end
    assert.are.equal(total, selfs)
    assert.are.equal(total, prof:func("main chunk"):inclusive("Instr"))
    assert.are.same({}, prof:warnings())
  end)

  it("gives identical Instr per function and per line in a second process", function()
    local out = profile_script(lab.dir, "second")
    assert.are.same(model(prof), model(helpers.load(out)))
  end)

  it("is read by callgrind_annotate with the same per-function totals", function()
    local r = lab:annotate(file)
    assert.are.same({ "Instr" }, r.events)
    assert.are.equal(prof:total("Instr"), r.program.Instr)
    local byname = {}
    for fn in prof:functions() do
      byname[fn.file .. ":" .. fn.name] = fn
      if fn:self("Instr") > 0 then
        assert.is_truthy(r.rows[fn.file .. ":" .. fn.name], fn.file .. ":" .. fn.name)
      end
    end
    for key, row in pairs(r.rows) do
      assert.is_truthy(byname[key], key)
      assert.are.equal(byname[key]:self("Instr"), row.Instr)
    end
  end)

  it("lets callgrind_annotate --auto=yes print the script with each line's count", function()
    local out = lab:run("cd / && callgrind_annotate --auto=yes --show-percs=no " .. shq(file), "callgrind_annotate")
    local text = assert(out:match("%-%- Auto%-annotated source: " .. script_path():gsub("%p", "%%%0")
      .. "\n%-+\n(.-)\n%-%-%-%-"), "no annotated source in:\n" .. out)
    local src = {}
    for l in io.lines(script_path()) do src[#src + 1] = l end
    local per_line = {}
    for _, row in ipairs(prof:annotate(script_path(), "Instr")) do per_line[row.line] = row.cost end
    local i, seen = 0, 0
    for l in text:gmatch("[^\n]+") do
      local count, rest = l:match("^%s*([%d,%.]+)%s%s(.*)$")
      if count and not rest:match("^=>") then
        i = i + 1
        assert.are.equal(src[i], rest)
        local want = per_line[i]
        if count == "." then
          assert.is_nil(want)
        else
          assert.are.equal(want or 0, math.tointeger(tonumber((count:gsub(",", "")))))
          seen = seen + 1
        end
      end
    end
    assert.are.equal(#src, i)
    assert.is_true(seen > 10)
  end)

  it("writes the file when the script calls os.exit, and exits with its code", function()
    local out, stdout, _, code = profile_script(lab.dir, "exit", "exit")
    assert.are.equal(3, code)
    assert.are.equal("", stdout)
    local p = helpers.load(out)
    assert.are.equal(452 - 10, calls(p, "fib", "fib"))
    assert.is_nil(p:func("os.exit"))
    assert.are.equal(p:total("Instr"), p:func("main chunk"):inclusive("Instr"))
  end)

  it("writes the file when the script ends with an error", function()
    local out, _, stderr, code = profile_script(lab.dir, "error", "error")
    assert.are.equal(1, code)
    assert.is_truthy(stderr:find("stopped by request", 1, true))
    local p = helpers.load(out)
    assert.are.equal(1, calls(p, "main chunk", "error"))
    assert.are.equal(p:total("Instr"), p:func("main chunk"):inclusive("Instr"))
  end)

  it("adds Time and Alloc from CALLGRIND_EVENTS", function()
    local out = profile_script(lab.dir, "events", nil, "CALLGRIND_EVENTS=Time,Alloc")
    local p = helpers.load(out)
    assert.are.same({ "Instr", "Time", "Alloc" }, p.events)
    assert.are.same(model(prof), model(p))
  end)
end)

describe("lua5.4 -lcallgrind.start when it cannot write", function()
  local lab = helpers.lab("spec/profiler_script_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  local function run(...) return run_script(lab, ...) end

  it("says so on stderr when the script replaced the hook, and writes nothing", function()
    local stderr, code, files = run("hook", "debug.sethook(function() end, 'l')\nlocal x = 1\n")
    assert.are.equal(0, code)
    assert.are.equal("callgrind.profiler: no profile written to " .. lab.dir .. "/hook/out: the profiler's "
      .. "hook was replaced while profiling (debug.sethook): no profile\n", stderr)
    assert.are.same({ "script.lua" }, files)
  end)

  it("says so when the disk is full, and leaves no partial file", function()
    local work = "local t = {}\nfor i = 1, 200 do t[i] = load('return ' .. i) end\nfor i = 1, 200 do t[i]() end\n"
    local stderr, code, files = run("full", work, nil, "trap '' XFSZ; ulimit -f 2")
    assert.are.equal(0, code)
    assert.matches("^callgrind%.profiler: no profile written to " .. (lab.dir .. "/full/out"):gsub("%p", "%%%0")
      .. ": File too large\n$", stderr)
    assert.are.same({ "script.lua" }, files)
  end)

  it("says so when the path cannot be written", function()
    local out = lab.dir .. "/none/such/dir/out"
    local stderr, code, files = run("path", "local x = 1\n", out)
    assert.are.equal(0, code)
    assert.matches("^callgrind%.profiler: no profile written to " .. out:gsub("%p", "%%%0")
      .. ": .*No such file or directory\n$", stderr)
    assert.are.same({ "script.lua" }, files)
  end)

  it("says so when an error happens while writing", function()
    local stderr, code, files = run("error",
      "package.loaded.evil = setmetatable({}, { __pairs = function() error('boom', 0) end })\n")
    assert.are.equal(0, code)
    assert.are.equal("callgrind.profiler: no profile written to " .. lab.dir .. "/error/out: error while "
      .. "writing: boom\n", stderr)
    assert.are.same({ "script.lua" }, files)
  end)

  it("collects functions only with CALLGRIND_LINES=0 and writes the stack record with CALLGRIND_STACKS=1", function()
    local code = "local function f(n) local s = 0 for i = 1, n do s = s + i end return s end\n"
      .. "local function g() return f(10) + f(20) end\n"
      .. "print(g())\n"
    local stderr, code_, files = run("flags", code, nil, "export CALLGRIND_LINES=0 CALLGRIND_STACKS=1")
    assert.are.equal("", stderr)
    assert.are.equal(0, code_)
    assert.are.same({ "out", "out.stacks", "script.lua" }, files)
    local p = helpers.load(lab.dir .. "/flags/out")
    local lines = {}
    for l in p:func("f"):lines() do lines[#lines + 1] = l.line end
    assert.are.same({ 1 }, lines)
    -- the record names the profile by its digest (its last line's)
    local record = helpers.read_file(lab.dir .. "/flags/out.stacks")
    local digest = helpers.read_file(lab.dir .. "/flags/out"):match("# end digest=fnv1a64:(%x+)\n$")
    local head = "# callgrind.lua stack record 1\nprofile: fnv1a64:" .. digest .. "\nevents: Instr\n"
    assert.are.equal(head, record:sub(1, #head))
    local folded = assert(require("callgrind.export.stackrec").folded(lab.dir .. "/flags/out.stacks"))
    local sum = 0
    for cost in folded:gmatch(" (%d+)\n") do sum = sum + tonumber(cost) end
    assert.are.equal(p:total("Instr"), sum)
    assert.matches("\nmain chunk;g;f %d+\n", "\n" .. folded)
    -- prof:stacks reads it: g calls f twice from one stack
    local seen = {}
    for frames, cost in p:stacks() do
      local names = {}
      for i, fn in ipairs(frames) do names[i] = fn.name end
      seen[#seen + 1] = table.concat(names, ";") .. " " .. cost
    end
    assert.are.equal(folded, table.concat(seen, "\n") .. "\n")
  end)

  it("writes folded stacks FILE.folded with CALLGRIND_STACKS=folded", function()
    local code = "local function f(n) local s = 0 for i = 1, n do s = s + i end return s end\n"
      .. "local function g() return f(10) + f(20) end\n"
      .. "print(g())\n"
    local stderr, code_, files = run("folded", code, nil, "export CALLGRIND_STACKS=folded")
    assert.are.equal("", stderr)
    assert.are.equal(0, code_)
    assert.are.same({ "out", "out.folded", "script.lua" }, files)
    local p = helpers.load(lab.dir .. "/folded/out")
    local folded = helpers.read_file(lab.dir .. "/folded/out.folded")
    local sum = 0
    for cost in folded:gmatch(" (%d+)\n") do sum = sum + tonumber(cost) end
    assert.are.equal(p:total("Instr"), sum)
    assert.matches("\nmain chunk;g;f %d+\n", "\n" .. folded)
    local stderr2, code2 = run("badstacks", code, nil, "export CALLGRIND_STACKS=yes")
    assert.are_not.equal(0, code2)
    assert.matches("CALLGRIND_STACKS is 'yes'; expected 0, 1 or folded", stderr2)
  end)

  it("says so when the stack record cannot be written, and writes the profile", function()
    -- out.stacks is a directory: the profile is written, the stacks are not
    local dir = lab.dir .. "/foldir"
    local stderr, code, files = run("foldir", "local function f() return 1 end\nprint(f())\n", nil,
      "mkdir -p " .. shq(dir .. "/out.stacks") .. "; export CALLGRIND_STACKS=1")
    assert.are.equal(0, code)
    assert.matches("^callgrind%.profiler: no profile written to " .. (dir .. "/out.stacks"):gsub("%p", "%%%0")
      .. ": .*Is a directory\n$", stderr)
    assert.are.same({ "out", "out.stacks", "script.lua" }, files)
    assert.is_true(helpers.load(dir .. "/out"):total("Instr") > 0)
  end)
end)

describe("callgrind under another Lua", function()
  it("says it needs Lua 5.4, from require and from -lcallgrind.start", function()
    local env = ("LUA_PATH=%s LUA_CPATH=%s"):format(shq("lua/?.lua;lua/?/init.lua"), shq("build/?.so"))
    local out = helpers.run(env .. " lua5.1 -e 'print(select(2, pcall(require, \"callgrind\")))'", "lua5.1")
    assert.are.equal("callgrind needs Lua 5.4; this is Lua 5.1\n", out)
    local f = io.popen(env .. " lua5.1 -lcallgrind.start -e 'print(1)' 2>&1")
    local text = f:read("a")
    f:close()
    assert.matches("^lua5%.1: callgrind needs Lua 5%.4; this is Lua 5%.1\n", text)
  end)
end)

-- The README's way to profile a busted run, run as the README gives it
-- (its sh block), on a spec file of its own in a directory whose .busted
-- names lua5.4 (busted then runs the specs in a child unless told not to).
describe("the README's busted command", function()
  local lab = helpers.lab("spec/profiler_script_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  it("profiles the specs in the profiled process with --ignore-lua, and busted's options alone without", function()
    local readme = helpers.read_file("README.md")
    local cmd = readme:match("\n(CALLGRIND_OUT=specs%.out lua5%.4 %-lcallgrind%.start /usr/bin/busted[^\n#]*)")
    assert.is_string(cmd, "README.md: no busted command in its profiler section")
    cmd = cmd:gsub("%s+$", "")
    assert.matches(" %-%-ignore%-lua$", cmd)
    if not os.execute("test -x /usr/bin/busted") then pending("no /usr/bin/busted") return end
    assert(os.execute("mkdir " .. shq(lab.dir .. "/spec")))
    helpers.write_file(lab.dir .. "/spec/tiny_spec.lua", table.concat({
      "local function triangle(n) local s = 0 for i = 1, n do s = s + i end return s end",
      "describe('triangle', function()", "  it('sums', function() assert.are.equal(5050, triangle(100)) end)",
      "end)", "" }, "\n"))
    helpers.write_file(lab.dir .. "/.busted", 'return { default = { lua = "lua5.4" } }\n')
    -- this checkout's modules, by absolute paths (the commands run in lab.dir)
    local root = helpers.run("pwd", "pwd"):gsub("%s+$", "")
    local function absolute(path)
      return (path:gsub("[^;]+", function(e) return e:sub(1, 1) == "/" and e or (root .. "/" .. e) end))
    end
    local lpath, cpath = absolute(package.path), absolute(package.cpath)
    local function run(line)
      local _, _, code = os.execute(("cd %s && LUA_PATH_5_4=%s LUA_CPATH_5_4=%s %s >stdout 2>stderr")
        :format(shq(lab.dir), shq(lpath), shq(cpath), line))
      assert.are.equal(0, code, helpers.read_file(lab.dir .. "/stderr"))
      return helpers.load(lab.dir .. "/specs.out")
    end
    -- as the README gives it: the spec's own function is there, called once
    local prof = run(cmd)
    local n = 0
    for c in assert(prof:func("triangle")):callers() do n = n + c.count end
    assert.are.equal(1, n)
    -- without --ignore-lua: busted's option parsing, no spec
    local without = run((cmd:gsub(" %-%-ignore%-lua", "")))
    assert.is_nil(without:func("triangle"))
    assert.is_true(without:total("Instr") < prof:total("Instr"))
  end)
end)

describe("lua5.4 -lcallgrind.start's own cost", function()
  local lab = helpers.lab("spec/profiler_script_spec.lua")
  setup(function() lab:open() end)
  teardown(function() lab:close() end)

  it("loads none of the writer's modules into the profiled script", function()
    -- the API's tables and the model's loader cost a script that does
    -- nothing twice what the rest of -lcallgrind.start did; the profiler
    -- itself (the writer) is loaded when the profile is written
    -- (spec/profiler_start_spec.lua)
    local code = "local seen = {}\n"
      .. "for _, m in ipairs{ 'callgrind.api', 'callgrind.model.load', 'callgrind.export.stacks' } do\n"
      .. "  seen[#seen + 1] = m .. '=' .. tostring(package.loaded[m] ~= nil)\n"
      .. "end\n"
      .. "io.stderr:write(table.concat(seen, ' '), ' ', tostring(package.loaded['callgrind.profiler'] ~= nil))\n"
    local stderr, code_, files = run_script(lab, "modules", code, nil, "export CALLGRIND_STACKS=1")
    assert.are.equal(0, code_)
    assert.are.equal("callgrind.api=false callgrind.model.load=false callgrind.export.stacks=false false", stderr)
    assert.are.same({ "out", "out.stacks", "script.lua" }, files)
  end)
end)
