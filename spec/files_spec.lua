-- Several files as one profile: callgrind.load({ path, ... }),
-- callgrind.files(name), part.file, part:totals(), fn:self(ev, part).
-- The real files come from a `--separate-threads=yes` valgrind run of a
-- small pthread program built here; what they must load to comes from the
-- concatenation of their text (loaded as one file), their own `totals:`
-- lines and callgrind_annotate's output on each file.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local PROG = [[
#include <pthread.h>
static volatile long sink;
static pthread_barrier_t both;   /* both threads live at once: threads 2 and 3 */
static long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i; return s; }
static void *run(void *arg) { pthread_barrier_wait(&both); sink = work((long)arg); return 0; }
int main(void) {
  pthread_t a, b;
  pthread_barrier_init(&both, 0, 2);
  pthread_create(&a, 0, run, (void *)1000);
  pthread_create(&b, 0, run, (void *)3000);
  pthread_join(a, 0);
  pthread_join(b, 0);
  sink = work(10);
  return 0;
}
]]


-- Functions (name, file, object, self) and calls (caller, callee, count,
-- cost), sorted: what "the same model" compares.
local function model(prof)
  local fns, calls = {}, {}
  for fn in prof:functions() do
    local self = {}
    for _, ev in ipairs(prof.events) do self[#self + 1] = fn:self(ev) end
    fns[#fns + 1] = table.concat({ fn.name, tostring(fn.file), tostring(fn.object), table.concat(self, ",") }, "|")
  end
  for c in prof:calls() do
    calls[#calls + 1] = table.concat({ c.caller.name, tostring(c.caller.file), c.callee.name,
      tostring(c.callee.file), c.count, c:cost(1) }, "|")
  end
  table.sort(fns)
  table.sort(calls)
  return { totals = prof:totals(), fns = fns, calls = calls }
end

describe("a --separate-threads=yes run", function()
  local lab = H.lab("spec/files_spec.lua")
  local out, files

  setup(function()
    lab:open()
    lab:need("gcc")
    lab:need("valgrind")
    lab:need("callgrind_annotate")
    H.write_file(lab.dir .. "/t.c", PROG)
    lab:run(("gcc -g -O0 -pthread -o %s %s"):format(H.shq(lab.dir .. "/t"), H.shq(lab.dir .. "/t.c")), "gcc")
    out = lab.dir .. "/cg.out"
    lab:run(("valgrind -q --tool=callgrind --separate-threads=yes --callgrind-out-file=%s %s")
      :format(H.shq(out), H.shq(lab.dir .. "/t")), "valgrind --separate-threads=yes")
    files = { out .. "-01", out .. "-02", out .. "-03" }
  end)

  teardown(function() lab:close() end)

  it("is found by callgrind.files: the three thread files, not the empty base file", function()
    -- what valgrind wrote, listed by the shell
    local listed = H.words(lab:run("cd " .. H.shq(lab.dir) .. " && ls cg.out*"))
    assert.are.same({ "cg.out", "cg.out-01", "cg.out-02", "cg.out-03" }, listed)
    assert.are.equal("", H.read_file(out))
    assert.are.same(files, callgrind.files(out))
  end)

  it("loads to the same totals, functions and calls as the concatenation of its text", function()
    local prof = assert(callgrind.load(files))
    local text = {}
    for i, f in ipairs(files) do text[i] = H.read_file(f) end
    local whole = assert(callgrind.parse(table.concat(text), "concat"))
    assert.are.same(model(whole), model(prof))
    local n = 0
    for _ in prof:parts() do n = n + 1 end
    assert.are.equal(3, n)
  end)

  it("gives each part its file, and part:totals() equals that file's totals: line", function()
    local prof = assert(callgrind.load(files))
    local i = 0
    for part in prof:parts() do
      i = i + 1
      assert.are.equal(files[i], part.file)
      assert.are.equal(i, part.thread)
      local written = H.read_file(files[i]):match("\ntotals:%s*(%d+)")
      assert.are.equal(math.tointeger(tonumber(written)), part:totals("Ir"))
      assert.are.same({ Ir = part:totals("Ir") }, part:totals())
      assert.are.same({ Ir = part:totals("Ir") }, part.written_totals)
    end
  end)

  it("gives fn:self(ev, part) as callgrind_annotate gives each thread's file", function()
    local prof = assert(callgrind.load(files))
    local work, main = assert(prof:func("work")), assert(prof:func("main"))
    local i, sum = 0, 0
    for part in prof:parts() do
      i = i + 1
      local rows = lab:annotate(files[i]).rows
      local key = lab.dir .. "/t.c:work"
      local want = rows[key] and rows[key].Ir or 0
      assert.are.equal(want, work:self("Ir", part), files[i])
      assert.are.same({ Ir = want }, work:self(nil, part))
      sum = sum + work:self("Ir", part)
      if i > 1 then assert.are.equal(0, main:self("Ir", part)) end
    end
    assert.are.equal(work:self("Ir"), sum)
    assert.is_true(work:self("Ir", prof:parts()()) > 0)
  end)

  it("names the file and the line of a bad line in the second file", function()
    local bad = lab.dir .. "/bad.out-02"
    local text = H.read_file(files[2])
    local n = 0
    for _ in text:gmatch("\n") do n = n + 1 end
    H.write_file(bad, text .. "garbage here\n")
    assert.are.same({ nil, ("%s:%d: expected a cost, name or header line, found 'garbage here'"):format(bad, n + 1),
      "format" },
      { callgrind.load({ files[1], bad, files[3] }) })
    local prof = assert(callgrind.load({ files[1], bad }, { lenient = true }))
    assert.are.same({ ("%s:%d: expected a cost, name or header line, found 'garbage here'"):format(bad, n + 1) },
      prof:warnings("skipped"))
  end)

  it("refuses a Part of another profile in fn:self", function()
    local a, b = assert(callgrind.load(files)), assert(callgrind.load(files))
    assert.has_error(function() a:func("work"):self("Ir", b:parts()()) end,
      "bad argument #2 to 'self' (a Part of another profile)")
  end)
end)

describe("callgrind.files", function()
  local dir

  setup(function()
    dir = os.tmpname() .. ".d"
    assert(os.execute("mkdir " .. H.shq(dir)))
    local header = "version: 1\ncreator: callgrind-3.22.0\nevents: Ir\n"
    for _, name in ipairs { "o", "o.1", "o.2", "o.10", "o-02", "o-01", "o.2-01", "o.1-03", "o.1-01" } do
      H.write_file(dir .. "/" .. name, header)
    end
    H.write_file(dir .. "/o.3", "")                                     -- empty
    H.write_file(dir .. "/o.4", "version: 1\ncreator: callgrind\n")    -- header only
    for _, name in ipairs { "o.x", "o.1-x", "o-", "o.", "oo", "o.1.2", "p.1" } do
      H.write_file(dir .. "/" .. name, header)
    end
  end)

  teardown(function() os.execute("rm -rf " .. H.shq(dir)) end)

  it("lists numbered dumps in order, then the last dump, and in each the threads in order", function()
    local want = {}
    for i, name in ipairs { "o.1", "o.1-01", "o.1-03", "o.2", "o.2-01", "o.10", "o", "o-01", "o-02" } do
      want[i] = dir .. "/" .. name
    end
    assert.are.same(want, callgrind.files(dir .. "/o"))
  end)

  it("gives an empty list when nothing matches, and an I/O error for a missing directory", function()
    assert.are.same({}, callgrind.files(dir .. "/none"))
    assert.are.same({ nil, dir .. "/no: No such file or directory", "io" }, { callgrind.files(dir .. "/no/o") })
  end)
end)

describe("callgrind.load with a table", function()
  it("merges functions by object, file and name across files, ids per file", function()
    local a, b = os.tmpname(), os.tmpname()
    H.write_file(a, "events: Ir\nfl=(1) a.c\nfn=(1) main\n1 5\ncfn=(2) f\ncalls=1 1\n2 3\nfn=(2)\n1 3\n")
    -- the same ids name other things in b: (1) is f here
    H.write_file(b, "events: Ir Dr\nfl=(1) a.c\nfn=(1) f\n1 4 1\nfn=(2) g\n1 1 1\n")
    local prof = assert(callgrind.load({ a, b }))
    assert.are.same({ Ir = 13, Dr = 2 }, prof:totals())
    assert.are.same({ Ir = 5, Dr = 0 }, prof:func("main"):self())
    assert.are.same({ Ir = 7, Dr = 1 }, prof:func("f"):self())
    assert.are.same({ Ir = 1, Dr = 1 }, prof:func("g"):self())
    assert.are.same({}, prof:warnings())
    local parts = {}
    for part in prof:parts() do parts[#parts + 1] = { part.file, part:totals("Ir") } end
    assert.are.same({ { a, 8 }, { b, 5 } }, parts)
    os.remove(a)
    os.remove(b)
  end)

  it("keeps ids within their file: an id file 1 defines is undefined in file 2", function()
    local a, b = os.tmpname(), os.tmpname()
    H.write_file(a, "events: Ir\nfn=(1) main\n1 5\n")
    H.write_file(b, "events: Ir\nfn=(1)\n1 4\n")
    local prof = assert(callgrind.load({ a, b }))
    assert.are.same({ b .. ":2: function id (1) is used but never defined" }, prof:warnings())
    assert.are.equal(5, prof:func("main"):self("Ir"))
    assert.are.equal(4, prof:func("(1)"):self("Ir"))
    os.remove(a)
    os.remove(b)
  end)

  it("raises on an empty list or a path that is not a string", function()
    assert.has_error(function() callgrind.load({}) end, "bad argument #1 to 'load' (empty list of paths)")
    assert.has_error(function() callgrind.load({ "a", 5 }) end, "bad argument #1 to 'load' (path #2 is not a string)")
  end)
end)
