-- prof:write: the round trip load -> write -> load over every fixture, every
-- file of the conformance corpus (spec/corpus) that loads and fresh valgrind profiles, and
-- callgrind_annotate on written files against the originals.

local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq

-- Where the corpus is: spec/corpus, beside this file.
local function corpus_dir()
  local src = debug.getinfo(1, "S").source:sub(2)
  return (src:match("^(.*)/[^/]*$") or ".") .. "/corpus"
end
local CORPUS = corpus_dir()

local function find_files(dir, pattern)
  local files = {}
  local p = assert(io.popen("find " .. shq(dir) .. " -type f | sort"))
  for line in p:lines() do
    if line:match(pattern) then files[#files + 1] = line end
  end
  p:close()
  return files
end

-- Everything the model holds, as sorted strings: a difference between two
-- profiles is a difference between two of these.
local function key(fn)
  return ("%s|%s|%s"):format(fn.name, tostring(fn.file), tostring(fn.object))
end

local function costs(prof, t)
  local s = {}
  for _, ev in ipairs(prof.events) do s[#s + 1] = ev .. "=" .. tostring(t[ev] or 0) end
  return table.concat(s, ",")
end

local function cost_map(evs, t)
  if not t then return "nil" end
  local s = {}
  for _, ev in ipairs(evs) do s[#s + 1] = ev .. "=" .. tostring(t[ev]) end
  return table.concat(s, ",")
end

local function dump(prof)
  local d = { functions = {}, lines = {}, calls = {}, jumps = {}, parts = {} }
  for fn in prof:functions() do
    d.functions[#d.functions + 1] = key(fn) .. " self " .. costs(prof, fn:self())
  end
  for l in prof:lines() do
    d.lines[#d.lines + 1] = ("%s @%s:%s:%s part %d: %s"):format(key(l.fn), tostring(l.file), tostring(l.line),
      tostring(l.addr), l.part.index, costs(prof, l:cost()))
  end
  for c in prof:calls() do
    d.calls[#d.calls + 1] = ("%s -> %s x%d @%s:%s:%s -> %s:%s part %d: %s"):format(key(c.caller), key(c.callee),
      c.count, tostring(c.file), tostring(c.line), tostring(c.addr), tostring(c.target_line),
      tostring(c.target_addr), c.part.index, costs(prof, c:cost()))
  end
  for j in prof:jumps() do
    d.jumps[#d.jumps + 1] = ("%s -> %s %s %d/%d @%s:%s:%s -> %s:%s:%s part %d"):format(key(j.from), key(j.to),
      tostring(j.conditional), j.count, j.executed, tostring(j.file), tostring(j.line), tostring(j.addr),
      tostring(j.target_file), tostring(j.target_line), tostring(j.target_addr), j.part.index)
  end
  -- a part without totals: gets one: the sum of its cost lines
  local sums = {}
  for l in prof:lines() do
    local t = sums[l.part.index] or {}
    sums[l.part.index] = t
    for ev, v in pairs(l:cost()) do t[ev] = (t[ev] or 0) + v end
  end
  for part in prof:parts() do
    local desc = {}
    for k, v in pairs(part.desc) do desc[#desc + 1] = k .. ":" .. v end
    table.sort(desc)
    d.parts[#d.parts + 1] = ("%d #%s pid %s thread %s cmd %s desc [%s] events %s summary %s totals %s"):format(
      part.index, tostring(part.number), tostring(part.pid), tostring(part.thread), tostring(part.cmd),
      table.concat(desc, ";"), table.concat(part.events, " "), cost_map(part.events, part.summary),
      cost_map(part.events, part.written_totals or sums[part.index] or {}))
  end
  for _, k in ipairs { "functions", "lines", "calls", "jumps" } do table.sort(d[k]) end
  d.totals = costs(prof, prof:totals())
  d.events = table.concat(prof.events, " ")
  local ev = {}
  for _, e in ipairs(prof:all_events()) do
    local info = prof:event_info(e)
    ev[#ev + 1] = ("%s=%s:%s"):format(e, tostring(info.formula), tostring(info.long_name))
  end
  d.event_info = table.concat(ev, " ")
  d.header = ("%s|%s|%s"):format(tostring(prof.creator), tostring(prof.cmd), tostring(prof.pid))
  return d
end

-- The first difference between two dumps, or nil.
local function difference(a, b)
  for _, k in ipairs { "totals", "events", "event_info", "header" } do
    if a[k] ~= b[k] then return ("%s: %s ~= %s"):format(k, a[k], b[k]) end
  end
  for _, k in ipairs { "functions", "lines", "calls", "jumps", "parts" } do
    local x, y = a[k], b[k]
    for i = 1, math.max(#x, #y) do
      if x[i] ~= y[i] then
        return ("%s (%d vs %d): first difference at %d:\n  %s\n  %s"):format(k, #x, #y, i, tostring(x[i]),
          tostring(y[i]))
      end
    end
  end
end

local tmp = {}
local function tmpname()
  local n = os.tmpname()
  tmp[#tmp + 1] = n
  return n
end
teardown(function() for _, n in ipairs(tmp) do os.remove(n) end end)

-- load -> write -> load; the second load must hold what the first held
-- (with pid = true: the default leaves the pid: lines out).
local function round_trip(path, opts, load_opts)
  local prof = assert(callgrind.load(path, load_opts))
  local out = tmpname()
  opts = opts or {}
  if opts.pid == nil then opts.pid = true end
  assert.is_true(prof:write(out, opts))
  local back, err = callgrind.load(out)
  assert(back, "the written file does not load: " .. tostring(err))
  local diff = difference(dump(prof), dump(back))
  assert(diff == nil, path .. " (written to " .. out .. "): " .. tostring(diff))
  return prof, back, out
end

-- callgrind_annotate's per-function self costs (and PROGRAM TOTALS) on the
-- original and on the written file must be the same; where it cannot read
-- the original (some corpus files), there is nothing to compare.
local lab = H.lab("spec/writer_spec.lua")
setup(function() lab:open() end)
teardown(function() lab:close() end)

local PWD = H.run("pwd"):gsub("%s+$", "")
local function absolute(path) return path:sub(1, 1) == "/" and path or (PWD .. "/" .. path) end

-- Its own bugs are compared around: it loses the last function of a file
-- whose functions have no fl= (so such files are not compared), and it
-- prints a PROGRAM TOTALS of its own summing, short of the last function,
-- for a file with neither summary: nor totals: (the written file has
-- totals:, so PROGRAM TOTALS is compared where the original has them).
local function same_annotation(prof, original, written)
  for fn in prof:functions() do
    if fn.file == nil then return false end
  end
  local ok, a = pcall(lab.annotate, lab, absolute(original))
  if not ok then return false end
  local has_totals = true
  for part in prof:parts() do
    if not (part.summary or part.written_totals) then has_totals = false end
  end
  local b = lab:annotate(written)
  local mismatches = {}
  for k, row in pairs(a.rows) do
    for ev, v in pairs(row) do
      local w = b.rows[k] and b.rows[k][ev]
      if w ~= v then mismatches[#mismatches + 1] = ("%s %s: %s vs %s"):format(k, ev, v, tostring(w)) end
    end
  end
  for k in pairs(b.rows) do
    if not a.rows[k] then mismatches[#mismatches + 1] = k .. ": only in the written file" end
  end
  for ev, v in pairs(has_totals and a.program or {}) do
    if b.program[ev] ~= v then
      mismatches[#mismatches + 1] = ("PROGRAM TOTALS %s: %s vs %s"):format(ev, v, tostring(b.program[ev]))
    end
  end
  H.report("callgrind_annotate on " .. original .. " vs on " .. written, mismatches, "original vs written")
  return true
end

describe("prof:write", function()
  describe("round trip over every fixture", function()
    -- spec/fixtures/fuzz/ holds the loader's fuzz regressions, not
    -- profiles (one has a part with no events and no lines, which no
    -- callgrind file can say)
    for _, path in ipairs(find_files("spec/fixtures", "^spec/fixtures/[^/]*%.callgrind$")) do
      -- a fixture of bad lines is written as its lenient load holds it
      local load_opts = not callgrind.load(path) and { lenient = true } or nil
      -- callgrind_annotate does not read frfn= lines, which define ids
      local annotate_reads_it = not load_opts and not H.read_file(path):find("\nfrfn=")
      it("gives back what " .. path .. " holds, with names compressed", function()
        local prof, _, out = round_trip(path, nil, load_opts)
        if annotate_reads_it then same_annotation(prof, path, out) end
      end)
      it("gives back what " .. path .. " holds, with compress = false", function()
        round_trip(path, { compress = false }, load_opts)
      end)
    end
  end)

  describe("round trip over the conformance corpus", function()
    local oracle = { "%.expected$", "%.exp$", "%.exp_map$", "%.exp_stacks$", "PROVENANCE%.md$" }
    -- a file of over 1 MB took 7 s of make test's 3 minutes
    -- (googlecode-issue34, 1.3 MB: two round trips, each dumped twice in
    -- Lua, and callgrind_annotate): make test round-trips it once, make
    -- check-long (CALLGRIND_WRITER=full) as the others
    local FULL = os.getenv("CALLGRIND_WRITER") == "full"
    for _, path in ipairs(find_files(CORPUS, ".")) do
      local skip = false
      for _, o in ipairs(oracle) do if path:match(o) then skip = true end end
      if not skip then
        it("gives back what " .. path:match("corpus/(.*)$") .. " holds", function()
          local load_opts = nil
          if not callgrind.load(path) then load_opts = { lenient = true } end
          -- callgrind_annotate keeps an fi= written for a call's site for the
          -- cost lines after it; valgrind's writer does not (docs/format.md,
          -- "Calls and jumps"), and this file has six such lines (line 0 of
          -- crti.S after calls into ???): compared as callgrind_annotate reads it
          if path:match("xapian%.callgrind$") then load_opts = { position_rule = "kcachegrind" } end
          if callgrind.load(path, load_opts) then
            local prof, _, out = round_trip(path, nil, load_opts)
            if FULL or #H.read_file(path) <= 1000000 then
              same_annotation(prof, path, out)
              round_trip(path, { compress = false }, load_opts)
            end
          end
        end)
      end
    end
  end)
end)

describe("prof:write on fresh valgrind profiles", function()
  local cases = {
    { "default", "" },
    { "instr", "--dump-instr=yes --collect-jumps=yes" },
    { "cache", "--cache-sim=yes --branch-sim=yes" },
    { "combined", "--combine-dumps=yes --dump-every-bb=20000" },
    { "threads", "--separate-threads=yes --dump-line=no --dump-instr=yes" },
  }
  for _, case in ipairs(cases) do
    local tag, options = case[1], case[2]
    it("round-trips a profile made with '" .. options .. "' and callgrind_annotate agrees", function()
      local path = lab:callgrind("w-" .. tag, options)
      if tag == "threads" then path = path .. "-01" end
      local prof, _, out = round_trip(path)
      assert.is_true(same_annotation(prof, path, out))
      round_trip(path, { compress = false })
    end)
  end
end)

-- What KCachegrind labels a part by ("PID p, section n, thread t": it
-- needs a pid:, else it names every part by the file's name alone), part
-- by part: "pid|part|thread|trigger".
local function labels(text)
  local out, cur = {}, nil
  for line in text:gmatch("[^\n]+") do
    local k, v = line:match("^(%a+): (.*)$")
    if k == "pid" then
      cur = { pid = v }
      out[#out + 1] = cur
    elseif cur and (k == "part" or k == "thread") then cur[k] = v
    elseif cur and line:match("^desc: Trigger: ") then cur.trigger = line:match("^desc: Trigger: (.*)$")
    end
  end
  for i, c in ipairs(out) do
    out[i] = table.concat({ c.pid, tostring(c.part), tostring(c.thread), tostring(c.trigger) }, "|")
  end
  return out
end

describe("prof:write of several parts", function()
  -- the same parts' labels as the loaded profile's (pid numbered by process)
  local function want(prof)
    local t, pids = {}, {}
    for part in prof:parts() do
      local pid = tostring(part.pid)
      if not pids[pid] then pids[#pids + 1] = pid; pids[pid] = #pids end
      t[#t + 1] = table.concat({ pids[pid], tostring(part.number), tostring(part.thread),
        tostring(part.desc and part.desc.Trigger) }, "|")
    end
    return t
  end

  for _, case in ipairs({ { "threads", "--separate-threads=yes" }, { "dumps", "--dump-every-bb=20000" } }) do
    local tag, options = case[1], case[2]
    it("keeps the pid:, part:, thread: and desc: Trigger: KCachegrind labels parts by (" .. tag .. ")", function()
      local files = callgrind.files(lab:callgrind("parts-" .. tag, options))
      local prof = assert(callgrind.load(files))
      local n = 0
      for _ in prof:parts() do n = n + 1 end
      assert.is_true(n >= 2, tag .. ": " .. n .. " part(s)")
      local out = tmpname()
      assert.is_true(prof:write(out))
      local text = H.read_file(out)
      local got = labels(text)
      assert.are.same(want(prof), got)
      assert.are.equal(n, #got)
      assert.matches("^1|", got[1])
      if tag == "threads" then assert.are.equal("1|1|3|Program termination", got[3]) end
      if tag == "dumps" then assert.are.equal("1|1|nil|--dump-every-bb=20000", got[1]) end
      -- read back: the same parts, numbers, threads and triggers
      local back = assert(callgrind.load(out))
      assert.are.same(want(prof), want(back))
      local i = 0
      for part in back:parts() do
        i = i + 1
        assert.are.equal(1, part.pid)
      end
      assert.are.same(prof:totals(), back:totals())
      -- callgrind_annotate reads it as it reads the original parts one
      -- after the other in one file
      local cat = {}
      for k, f in ipairs(files) do cat[k] = H.read_file(f) end
      H.write_file(lab.dir .. "/cat-" .. tag, table.concat(cat))
      assert.are.same(lab:annotate(lab.dir .. "/cat-" .. tag).rows, lab:annotate(out).rows)
      -- another run's pid (the same numbers): the same bytes
      local again = {}
      for k, f in ipairs(files) do
        again[k] = lab.dir .. "/again-" .. tag .. "-" .. k
        H.write_file(again[k], (H.read_file(f):gsub("\npid: %d+", "\npid: 4242")))
      end
      local out2 = tmpname()
      assert.is_true(assert(callgrind.load(again)):write(out2))
      assert.are.equal(text, H.read_file(out2))
      -- pid = true: the run's own; false: none
      assert.is_true(prof:write(out2, { pid = true }))
      assert.are.equal(prof:parts()().pid, math.tointeger(tonumber(H.read_file(out2):match("\npid: (%d+)"))))
      assert.is_true(prof:write(out2, { pid = false }))
      assert.is_nil(H.read_file(out2):find("\npid:"))
    end)
  end

  it("numbers the processes of files of different runs 1, 2... in order; one part has no pid:", function()
    local part = "version: 1\ncreator: hand\npid: %d\ncmd: ./p\npart: 1\nthread: %d\nevents: Ir\nfn=main\n1 %d\n"
      .. "totals: %d\n"
    local paths = {}
    for k, v in ipairs({ { 900, 1 }, { 77, 1 }, { 900, 2 } }) do
      paths[k] = lab.dir .. "/runs.out-" .. k
      H.write_file(paths[k], part:format(v[1], v[2], k, k))
    end
    local out = tmpname()
    assert.is_true(assert(callgrind.load(paths, { merge = true })):write(out))
    assert.are.same({ "1|1|1|nil", "2|1|1|nil", "1|1|2|nil" }, labels(H.read_file(out)))
    assert.is_true(assert(callgrind.load(paths[1])):write(out))
    assert.is_nil(H.read_file(out):find("\npid:"))
  end)
end)

describe("prof:write's output", function()
  local text = table.concat({
    "# callgrind format", "version: 1", "creator: hand", "pid: 7", "cmd:  ./prog a", "part: 1",
    "desc: Trigger: Program termination", "positions: line", "event: Ir : Instruction Fetch",
    "event: Two = 2 Ir", "events: Ir Dr", "summary: 20 4",
    "ob=/bin/prog", "fl=main.c", "fn=main", "10 5 1", "12 1", "cob=/lib/libc.so", "cfi=str.c", "cfn=strlen",
    "calls=2 30", "11 12 3", "ob=/lib/libc.so", "fl=str.c", "fn=strlen", "30 12 3", "totals: 18 4", "",
  }, "\n")
  local prof = assert(callgrind.parse(text, "hand"))

  it("has callgrind's header order, ids for names, cfi=/cfn= before calls= and totals: last", function()
    local out = tmpname()
    assert.is_true(prof:write(out, { pid = true }))
    assert.are.equal(H.with_digest(table.concat({
      "# callgrind format", '# callgrind.lua: every part ends with totals:, the file with "# end" and its digest',
      "version: 1", "creator: hand", "pid: 7", "cmd: ./prog a", "part: 1",
      "desc: Trigger: Program termination", "positions: line", "event: Ir : Instruction Fetch",
      "event: Two = 2 Ir", "events: Ir Dr", "summary: 20 4", "",
      "ob=(1) /bin/prog", "fl=(1) main.c", "fn=(1) main", "10 5 1", "+2 1",
      "cob=(2) /lib/libc.so", "cfi=(2) str.c", "cfn=(2) strlen", "calls=2 30", "11 12 3",
      "ob=(2)", "fl=(2)", "fn=(2)", "30 12 3", "totals: 18 4", "",
    }, "\n")), H.read_file(out))
  end)

  it("writes only the selected functions with opts.functions: their lines, calls out of them, their sum as totals:",
    function()
      local out = tmpname()
      assert.is_true(prof:write(out, { functions = prof:find("^main$") }))
      local back = assert(callgrind.load(out))
      assert.are.same({ Ir = 6, Dr = 1 }, back:totals())
      local part = back:parts()()
      assert.are.same({ Ir = 20, Dr = 4 }, part.summary)
      assert.are.same({ Ir = 6, Dr = 1 }, part.written_totals)
      local main = assert(back:func("main"))
      local strlen = assert(back:func("strlen"))
      assert.are.same({ Ir = 0, Dr = 0 }, strlen:self())
      local call = main:calls()()
      assert.are.equal(strlen, call.callee)
      assert.are.equal(2, call.count)
      assert.are.same({ Ir = 12, Dr = 3 }, call:cost())
      assert.are.equal("/lib/libc.so", strlen.object)
    end)

  it("writes to a file opened by the caller and leaves it open", function()
    local out = tmpname()
    local f = assert(io.open(out, "wb"))
    assert.is_true(prof:write(f))
    assert.are.equal("file", io.type(f))
    f:close()
    assert.are.same(prof:totals(), assert(callgrind.load(out)):totals())
  end)

  it("returns nil and the reason when the file cannot be created", function()
    assert.are.same({ nil, "/nonexistent-dir/x.out: No such file or directory", "io" },
      { prof:write("/nonexistent-dir/x.out") })
  end)

  it("raises on misuse, naming the argument", function()
    assert.has_error(function() prof:write(42) end,
      "bad argument #1 to 'write' (path or open file expected, got 42)")
    assert.has_error(function() prof:write(tmpname(), 5) end, "bad argument #2 to 'write' (table expected, got 5)")
    assert.has_error(function() prof:write(tmpname(), { compres = false }) end,
      "bad argument #2 to 'write' (unknown option 'compres'; options: cmd, compress, functions, pid)")
    local closed = assert(io.open(tmpname(), "wb"))
    closed:close()
    assert.has_error(function() prof:write(closed) end,
      "bad argument #1 to 'write' (path or open file expected, got closed file)")
    assert.has_error(function() prof:write(tmpname(), { functions = { "main" } }) end,
      "bad argument #2 to 'write' (opts.functions[1] is not a function of this profile)")
    local other = assert(callgrind.parse(text, "other"))
    assert.has_error(function() prof:write(tmpname(), { functions = { other:func("main") } }) end,
      "bad argument #2 to 'write' (opts.functions[1] is not a function of this profile)")
  end)
end)
