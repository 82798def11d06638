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

-- { ["name"] = { self, { [line] = cost } } } of every function
local function model(prof)
  local t = {}
  for fn in prof:functions() do
    local lines = {}
    for l in fn:lines() do
      if l:cost("Instr") ~= 0 then lines[l.line] = (lines[l.line] or 0) + l:cost("Instr") end
    end
    t[fn.file .. ":" .. fn.name] = { fn:self("Instr"), lines }
  end
  return t
end

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
