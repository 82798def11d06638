-- prof:write's names as KCachegrind reads them: one fn id per distinct
-- (object, file, name), every id a part uses defined again in that part;
-- canonical bytes; hostile names. The written text is read here with
-- plain string matching, independently of the library's reader.

local callgrind = require "callgrind"
local core = require "callgrind.core"
local H = require "spec.support.helpers"

local shq = H.shq

local function find_files(dir)
  local files = {}
  local p = assert(io.popen("find " .. shq(dir) .. " -type f | sort"))
  for line in p:lines() do files[#files + 1] = line end
  p:close()
  return files
end

local KIND = H.ID_TABLE

-- The problems of a written text against KCachegrind's id rule (an empty
-- list when there are none):
-- - within a part, an id is defined once, and used only after that;
-- - a fn id stands for one (object, file, name) and each such function
--   has one id (KCachegrind binds an id to the object and file in force
--   where it is defined, and forgets all ids at a new part);
-- - where an id is used, the object and file in force are those it was
--   defined with (so a reader that goes by the context and one that goes
--   by the binding read the same function);
-- - an id number means the same name (function) in every part (readers
--   that keep ids across parts see no redefinition).
-- Also returns the number of fn ids checked.
local function id_problems(text)
  local problems, checked = {}, 0
  local ids, fn_of_triple, ob, fl, lfile, cob, cfi, jfi
  local across = { ob = {}, fl = {}, fn = {} }
  local part = 0
  local function new_part()
    part = part + 1
    ids = { ob = {}, fl = {}, fn = {} }
    fn_of_triple = {}
    ob, fl, lfile, cob, cfi, jfi = nil, nil, nil, nil, nil, nil
  end
  new_part()
  local function problem(n, msg)
    if #problems < 20 then problems[#problems + 1] = ("line %d (part %d): %s"):format(n, part, msg) end
  end
  local n = 0
  for line in text:gmatch("([^\n]*)\n") do
    n = n + 1
    local key, val = line:match("^(%a+)=(.*)$")
    if line:match("^part:") then
      new_part()
    elseif line:match("^calls=") then
      cob, cfi = nil, nil
    elseif line:match("^jump=") or line:match("^jcnd=") then
      jfi = nil
    elseif key and KIND[key] then
      local kind = KIND[key]
      local id, rest = val:match("^%((%d+)%)(.*)$")
      local name
      if id and rest == "" then
        name = ids[kind][id]
        if name == nil then problem(n, key .. "=(" .. id .. ") used before it is defined in this part") end
      elseif id then
        name = assert(rest:match("^ (.*)$"), "a definition is '(N) name'")
        if ids[kind][id] ~= nil then problem(n, key .. "=(" .. id .. ") defined twice in one part") end
      else
        name = val
      end
      if kind == "fn" then
        -- the function the context names
        local o, f = ob, fl
        if key == "cfn" then o, f = cob or ob, cfi or lfile end
        if key == "jfn" then f = jfi or lfile end
        if id and rest == "" then
          local t = name
          if t and (t.ob ~= o or t.fl ~= f) then
            problem(n, ("fn id (%s) is %s|%s|%s but %s|%s is in force"):format(id, tostring(t.ob), tostring(t.fl),
              t.name, tostring(o), tostring(f)))
          end
        else
          local t = { ob = o, fl = f, name = name }
          local tk = ("%s\0%s\0%s"):format(tostring(o), tostring(f), name)
          if id and across.fn[id] and across.fn[id] ~= tk then
            problem(n, "fn id (" .. id .. ") stands for another function than in an earlier part")
          end
          if id then across.fn[id] = tk end
          if id then
            ids.fn[id] = t
            checked = checked + 1
            if fn_of_triple[tk] and fn_of_triple[tk] ~= id then
              problem(n, ("%s|%s|%s has two ids, (%s) and (%s)"):format(tostring(o), tostring(f), name,
                fn_of_triple[tk], id))
            end
            fn_of_triple[tk] = id
          end
        end
        if key == "fn" then lfile = fl end
      else
        if id and rest ~= "" then
          ids[kind][id] = name
          if across[kind][id] and across[kind][id] ~= name then
            problem(n, key .. "=(" .. id .. ") stands for another name than in an earlier part")
          end
          across[kind][id] = name
        end
        if key == "ob" then ob = name
        elseif key == "fl" then fl, lfile = name, name
        elseif key == "fi" or key == "fe" then lfile = name
        elseif key == "cob" then cob = name
        elseif key == "cfi" or key == "cfl" then cfi = name
        elseif key == "jfi" then jfi = name end
      end
    end
  end
  return problems, checked
end

-- scratch files and valgrind runs
local lab = H.lab("spec/writer_ids_spec.lua")
setup(function() lab:open() end)
teardown(function() lab:close() end)

local nwritten = 0
local function written(prof, opts)
  nwritten = nwritten + 1
  local out = lab.dir .. "/written-" .. nwritten .. ".out"
  assert.is_true(prof:write(out, opts))
  return H.read_file(out), out
end

-- The functions of a profile as "object|file|name" strings, sorted.
local function function_keys(prof)
  local t = {}
  for fn in prof:functions() do
    t[#t + 1] = ("%s|%s|%s"):format(tostring(fn.object), tostring(fn.file), fn.name)
  end
  table.sort(t)
  return t
end

describe("the id checker of this spec", function()
  it("finds what the one-id-per-name writer did wrong", function()
    -- helper of a.c and helper of b.c under one id, and a second part
    -- that uses ids of the first
    local text = table.concat({
      "events: Ir", "fl=(1) a.c", "fn=(1) helper", "1 1", "fl=(2) b.c", "fn=(1)", "1 2",
      "part: 2", "fl=(1)", "fn=(1)", "1 3", "",
    }, "\n")
    local problems, checked = id_problems(text)
    assert.are.same({
      "line 6 (part 1): fn id (1) is nil|a.c|helper but nil|b.c is in force",
      "line 9 (part 2): fl=(1) used before it is defined in this part",
      "line 10 (part 2): fn=(1) used before it is defined in this part",
    }, problems)
    assert.are.equal(1, checked)
  end)
end)

describe("prof:write's compression ids", function()
  it("give helper of a.c and helper of b.c an id each (15 lines of C under valgrind)", function()
    H.write_file(lab.dir .. "/a.c", table.concat({
      "static int helper(int x) { return x * 3; }",
      "int use_a(int x) { return helper(x); }",
    }, "\n") .. "\n")
    H.write_file(lab.dir .. "/b.c", table.concat({
      "int use_a(int x);",
      "static int helper(int x) { return x - 2; }",
      "int main(void) {",
      "  int s = 0;",
      "  for (int i = 0; i < 100; i++) s += use_a(i) + helper(i);",
      "  return s == 0;",
      "}",
    }, "\n") .. "\n")
    lab:need("gcc")
    -- in one binary callgrind itself takes the two static helpers for one
    -- function; in two objects they are two
    lab:run(("cd %s && gcc -g -O0 -shared -fPIC -o liba.so a.c && gcc -g -O0 -o ab b.c -L. -la "
      .. "-Wl,-rpath,'$ORIGIN'"):format(shq(lab.dir)), "gcc a.c b.c")
    local path = lab:callgrind_cmd("ab", "", "./ab")
    local prof = assert(callgrind.load(path))
    local helpers = {}
    for fn in prof:functions() do
      if fn.name == "helper" then helpers[#helpers + 1] = fn.file:match("[^/]*$") end
    end
    table.sort(helpers)
    assert.are.same({ "a.c", "b.c" }, helpers)
    local text = written(prof)
    local problems, checked = id_problems(text)
    assert.are.same({}, problems)
    assert.is_true(checked >= 3)
    local back = assert(callgrind.parse(text, "ab.written"))
    assert.are.same(function_keys(prof), function_keys(back))
  end)

  it("hold in a hand-written file with helper in a.c and b.c, called from main", function()
    local prof = assert(callgrind.parse(table.concat({
      "events: Ir", "fl=main.c", "fn=main", "1 1", "cfi=a.c", "cfn=helper", "calls=1 1", "2 5",
      "cfi=b.c", "cfn=helper", "calls=1 1", "3 7", "fl=a.c", "fn=helper", "1 5", "fl=b.c", "fn=helper", "1 7", "",
    }, "\n"), "ab.callgrind"))
    local text = written(prof)
    assert.are.same({}, (id_problems(text)))
    -- by hand: helper of a.c is 5, of b.c 7, each called once from main
    local back = assert(callgrind.parse(text, "w"))
    local selfs = {}
    for fn in back:functions() do selfs[fn.name .. "@" .. tostring(fn.file)] = fn:self().Ir end
    assert.are.same({ ["main@main.c"] = 1, ["helper@a.c"] = 5, ["helper@b.c"] = 7 }, selfs)
    assert.are.equal(5, back:func("helper", "a.c"):inclusive().Ir)
  end)

  it("are defined again in every part of a multi-part valgrind profile", function()
    -- a dump every fifth of the run's basic blocks: 4 to 6 parts
    local base = H.read_file(lab:callgrind("ids-base", ""))
    local bbs = assert(tonumber(base:match("\ndesc: Timerange: Basic block %d+ %- (%d+)")))
    local path = lab:callgrind("ids-parts", "--combine-dumps=yes --dump-every-bb=" .. math.max(1000, bbs // 5))
    local prof = assert(callgrind.load(path))
    local nparts = 0
    for _ in prof:parts() do nparts = nparts + 1 end
    assert.is_true(nparts >= 3, "the run should dump 3 parts or more")
    local text = written(prof)
    local problems, checked = id_problems(text)
    assert.are.same({}, problems)
    -- every part defines its ids: each part has an fn= definition
    local parts_with_defs = 0
    for body in ("\n" .. text):gmatch("\npart: %d+\n(.-)\ntotals:") do
      if body:find("\nfn=%(%d+%) ") then parts_with_defs = parts_with_defs + 1 end
    end
    assert.are.equal(nparts, parts_with_defs)
    assert.is_true(checked > nparts)
  end)

  it("hold for the thread files of one run, loaded as one profile of several parts", function()
    local path = lab:callgrind("ids-threads", "--separate-threads=yes")
    local prof = assert(callgrind.load(callgrind.files(path)))
    local nparts = 0
    for _ in prof:parts() do nparts = nparts + 1 end
    assert.is_true(nparts >= 2)
    assert.are.same({}, (id_problems(written(prof))))
  end)

  it("hold for compress = false too (only names like (3) get ids)", function()
    local path = lab:callgrind("ids-plain", "--dump-instr=yes --collect-jumps=yes")
    local prof = assert(callgrind.load(path))
    local text = written(prof, { compress = false })
    assert.are.same({}, (id_problems(text)))
    assert.is_nil(text:find("\nfn=%(%d+%)"))
  end)

  describe("on every file of the conformance corpus that loads", function()
    for _, path in ipairs(find_files("spec/corpus")) do
      local prof = callgrind.load(path) or callgrind.load(path, { lenient = true })
      if prof then
        it(path:match("corpus/(.*)$"), function()
          local text = written(prof)
          local problems = id_problems(text)
          assert.are.same({}, problems)
          assert.are.same(function_keys(prof), function_keys(assert(callgrind.parse(text, "w"))))
        end)
      end
    end
  end)
end)

describe("prof:write's bytes", function()
  -- the same numbers in two orders: functions, their records and calls
  local a = table.concat({
    "events: Ir Dr", "fl=x.c", "fn=zeta", "5 1 1", "cfl=y.c", "cfn=alpha", "calls=2 1", "6 10 2",
    "cfl=x.c", "cfn=beta", "calls=1 9", "7 4", "fn=beta", "9 4", "fl=y.c", "fn=alpha", "1 10 2", "",
  }, "\n")
  local b = table.concat({
    "events: Ir Dr", "fl=y.c", "fn=alpha", "1 10 2", "fl=x.c", "fn=beta", "9 4", "fn=zeta", "5 1 1",
    "cfl=x.c", "cfn=beta", "calls=1 9", "7 4", "cfl=y.c", "cfn=alpha", "calls=2 1", "6 10 2", "",
  }, "\n")

  it("are the same for the same numbers in another order", function()
    local ta = written(assert(callgrind.parse(a, "a")))
    local tb = written(assert(callgrind.parse(b, "b")))
    assert.are.equal(ta, tb)
    -- sorted by (object, file, name); the calls of zeta by callee
    local order = {}
    for name in ta:gmatch("\nfn=([^\n]*)") do order[#order + 1] = name end
    -- alpha's id is defined at zeta's call to it
    assert.are.same({ "(1) beta", "(2) zeta", "(3)" }, order)
    assert.is_truthy(ta:find("fn=(2) zeta\n-4 1 1\ncfi=(1)\ncfn=(1)\ncalls=1 9\n7 4\ncfi=(2) y.c\ncfn=(3) alpha\n",
      1, true))
  end)

  it("are the same when a written file is loaded and written again", function()
    local path = lab:callgrind("bytes", "--dump-instr=yes --collect-jumps=yes --cache-sim=yes")
    local t1, out = written(assert(callgrind.load(path)))
    local t2 = written(assert(callgrind.load(out)))
    assert.are.equal(t1, t2)
  end)

  it("leave pid: out unless asked, and keep cmd: unless told", function()
    local prof = assert(callgrind.parse("version: 1\ncreator: t\npid: 77\ncmd: ./p a\npart: 1\nevents: Ir\nfn=m\n1 1\n",
      "p"))
    local text = written(prof)
    assert.is_nil(text:find("pid:", 1, true))
    assert.is_truthy(text:find("\ncmd: ./p a\n", 1, true))
    assert.is_truthy(written(prof, { pid = true }):find("\npid: 77\n", 1, true))
    assert.is_nil(written(prof, { cmd = false }):find("cmd:", 1, true))
    assert.is_truthy(written(prof, { cmd = "prog" }):find("\ncmd: prog\n", 1, true))
  end)
end)

describe("names the writer makes safe", function()
  -- written through the core's emitter (what the profiler uses)
  local hostile = { "a\nb", "  lead", "trail ", "#hash", "# at start", "(3)", "(12) x", "(1)'(2)", "c\r", "t\tab",
    "ok" }
  local function emit(compress)
    local e = core.internal.emitter(compress, "hostile")
    e:part { positions = { "line" }, events = { "Ir" }, number = 1 }
    for i, name in ipairs(hostile) do
      e:fn(nil, "f.c", name)
      e:line({ i }, { i })
    end
    e:totals({ #hostile * (#hostile + 1) // 2 })
    return e:finish()
  end

  for _, compress in ipairs { true, false } do
    it("read back as themselves or as visible \\xHH text (compress = " .. tostring(compress) .. ")", function()
      local text = emit(compress)
      -- no name can break a line: one line per record
      assert.is_nil(text:find("\r", 1, true))
      assert.is_nil(text:find("\t", 1, true))
      local prof = assert(callgrind.parse(text, "hostile"))
      assert.are.same({}, prof:warnings())
      local names = {}
      for fn in prof:functions() do names[fn:self().Ir] = fn.name end
      assert.are.same({ "a\\x0ab", "\\x20 lead", "trail\\x20", "#hash", "# at start", "(3)", "(12) x", "\\x281)'(2)",
        "c\\x0d", "t\\x09ab", "ok" }, names)
    end)
  end

  it("in a loaded profile (#, (3), control bytes) survive a write and a load", function()
    local prof = assert(callgrind.parse(table.concat({
      "events: Ir", "fl=f.c", "fn=(7) (3)", "1 1", "fn=#x", "1 2", "fn=a\1b", "1 4", "fn=(8) (9) y", "1 8", "",
    }, "\n"), "h"))
    for _, compress in ipairs { true, false } do
      local back = assert(callgrind.parse(written(prof, { compress = compress }), "w"))
      local names = {}
      for fn in back:functions() do names[fn:self().Ir] = fn.name end
      assert.are.same({ [1] = "(3)", [2] = "#x", [4] = "a\\x01b", [8] = "(9) y" }, names)
    end
  end)
end)

describe("the core's emitter (what the profiler writes through)", function()
  it("writes header, records and parts as callgrind does, ids defined again in each part", function()
    local e = core.internal.emitter(true, "emit")
    e:part { number = 1, pid = 9, thread = 2, cmd = "./p", desc = { { "Trigger", "end" } },
      positions = { "instr", "line" }, events = { "Ir", "Dr" },
      event_lines = { { name = "Ir", long_name = "Instruction Fetch" }, { name = "Two", formula = "2 Ir" } },
      summary = { 15, 1 } }
    e:fn("/bin/p", "m.c", "main")
    e:line({ 0x10, 3 }, { 10, 0 })
    e:fi("inl.h")
    e:line({ 0x14, 40 }, { 5, 1 })
    e:call("/lib/c.so", "s.c", "strlen", 2, { 0x100, 7 }, { 0x18, 4 }, { 15, 1 })
    e:jump(true, 3, 5, nil, nil, nil, nil, { 0x10, 3 }, { 0x1c, 5 })
    e:totals({ 15, 1 })
    e:part { number = 2, positions = { "line" }, events = { "Ir" } }
    e:fn("/bin/p", "m.c", "main")
    e:line({ 1 }, { 1 })
    e:totals({ 1 })
    local text = e:finish()
    assert.are.equal(H.with_digest(table.concat({
      "# callgrind format", '# callgrind.lua: every part ends with totals:, the file with "# end" and its digest',
      "version: 1",
      "creator: emit", "pid: 9", "cmd: ./p", "part: 1", "thread: 2", "desc: Trigger: end", "positions: instr line",
      "event: Ir : Instruction Fetch", "event: Two = 2 Ir", "events: Ir Dr", "summary: 15 1", "",
      "ob=(1) /bin/p", "fl=(1) m.c", "fn=(1) main", "0x10 3 10", "fi=(2) inl.h", "+4 +37 5 1",
      "cob=(2) /lib/c.so", "cfi=(3) s.c", "cfn=(2) strlen", "calls=2 0x100 7", "0x18 4 15 1",
      "jcnd=3/5 0x10 3", "0x1c 5", "totals: 15 1", "",
      "part: 2", "positions: line", "events: Ir", "",
      "ob=(1) /bin/p", "fl=(1) m.c", "fn=(1) main", "1 1", "totals: 1", "",
    }, "\n")), text)
    assert.are.same({}, (id_problems(text)))
    local prof = assert(callgrind.parse(text, "emitted"))
    assert.are.same({}, prof:warnings())
    assert.are.same({ Ir = 16, Dr = 1 }, prof:totals())
    assert.are.equal(2, prof:func("main"):calls()().count)
    assert.has_error(function() e:line({ 1 }, { 1 }) end, "attempt to use a finished emitter")
  end)
end)
