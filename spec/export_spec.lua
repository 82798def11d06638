-- to_csv / to_json of every table the library prints, read back with
-- python3's csv and json modules, and the printouts of warnings and
-- d:functions().
local callgrind = require "callgrind"
local H = require "spec.support.helpers"
local F = require "spec.support.files"

-- Reads CSV or JSON back and prints each row as "v1|v2|..." (a number as
-- %r would: an integer without a dot; None for JSON's null).
local READ = [==[
import sys, csv, json, io
kind, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
if kind == "csv":
    rows = list(csv.reader(io.StringIO(data.decode("latin-1"), newline="")))
else:
    objs = json.loads(data.decode("utf-8"))
    rows = [list(o.keys()) for o in objs[:1]] + [[o[k] for k in o] for o in objs]
    rows = [[("None" if v is None else repr(v) if not isinstance(v, str) else v) for v in r] for r in rows]
out = "\n".join("|".join(r) for r in rows) + "\n"
sys.stdout.buffer.write(out.encode("latin-1" if kind == "csv" else "utf-8", "replace"))
]==]

local function read_back(kind, text)
  local dir = F.tmpdir()
  H.write_file(dir .. "/data", text)
  local out = F.python(READ, kind, dir .. "/data")
  F.remove(dir)
  local rows = {}
  for line in out:gmatch("([^\n]*)\n") do rows[#rows + 1] = line end
  return rows
end

local prof = assert(callgrind.load("spec/fixtures/extended.callgrind"))

describe("sel:to_csv and sel:to_json", function()
  it("give name, file, object and each event's self and inclusive cost", function()
    -- spec/examples_spec.lua has these numbers by hand: main 20 / 820,
    -- func1 100 / 400, func2 700 / 700
    local sel = prof:top(3, "Instructions", "inclusive")
    assert.are.same({ "name|file|object|Instructions|Instructions.inclusive", "main|file1.c||20|820",
      "func2|file2.c||700|700", "func1|file1.c||100|400" }, read_back("csv", sel:to_csv()))
    assert.are.same({ "name|file|object|Instructions|Instructions.inclusive", "main|file1.c|None|20|820",
      "func2|file2.c|None|700|700", "func1|file1.c|None|100|400" }, read_back("json", sel:to_json()))
  end)

  it("quote names with commas, quotes and line breaks, and keep any bytes", function()
    local p = assert(callgrind.parse('events: Ir\nfl=a,b.c\nfn=say "hi", \255\n1 7\n', "weird"))
    assert.are.equal('name,file,object,Ir,Ir.inclusive\r\n"say ""hi"", \255","a,b.c",,7,7\r\n', p:all():to_csv())
    assert.are.equal('[{"name":"say \\"hi\\", \\u00ff","file":"a,b.c","object":null,"Ir":7,"Ir.inclusive":7}]\n',
      p:all():to_json())
    local export = require "callgrind.encode"
    assert.are.equal('"a\\nb\\tc\\u0001ü"', export.json_string("a\nb\tc\1ü"))
    assert.are.equal('k,v\r\n"a\r\nb",1\r\n,2.5\r\n', export.csv({ "k", "v" }, { { "a\r\nb", 1 }, { nil, 2.5 } }))
  end)

  it("check their options", function()
    assert.has_error(function() prof:all():to_csv({ event = "Ir" }) end,
      "bad argument #1 to 'to_csv' (unknown option 'event'; options: events)")
    assert.has_error(function() prof:all():to_json({ events = { "Ir" } }) end,
      "bad argument #1 to 'to_json' (unknown event 'Ir'; events: Instructions)")
  end)
end)

describe("the other tables' to_csv and to_json", function()
  it("prof:group gives the key and the event's cost", function()
    assert.are.same({ "file|Instructions", "file2.c|700", "file1.c|120" },
      read_back("csv", prof:group("file"):to_csv()))
    assert.are.same({ "file|Instructions", "file2.c|700", "file1.c|120" },
      read_back("json", prof:group("file"):to_json()))
  end)

  it("callers and callees give the function, the calls and their inclusive cost", function()
    assert.are.same({ "name|file|object|calls|Instructions", "func1|file1.c||1|400", "func2|file2.c||3|400" },
      read_back("csv", prof:func("main"):callee_functions():to_csv()))
    assert.are.same({ "name|file|object|calls|Instructions", "main|file1.c|None|3|400",
      "func1|file1.c|None|2|300" }, read_back("json", prof:func("func2"):caller_functions():to_json()))
  end)

  it("an annotation gives line, cost and the functions there", function()
    local a = prof:annotate("file1.c")
    assert.are.same({ "line|Instructions|functions", "16|20|main", "51|100|func1" }, read_back("csv", a:to_csv()))
    assert.are.same({ "line|Instructions|functions", "16|20|main", "51|100|func1" }, read_back("json", a:to_json()))
  end)

  it("d:functions() gives old, new, delta and percent, and prints as a table", function()
    local old = assert(callgrind.load("spec/fixtures/moved-old.callgrind"))
    local new = assert(callgrind.load("spec/fixtures/moved-new.callgrind"))
    local rows = callgrind.diff(old, new):functions("Ir")
    -- spec/diff_spec.lua works these out: parse 100 -> 130, helper 7 -> 0
    local csv = read_back("csv", rows:to_csv())
    assert.are.equal("name|file|object|old|new|delta|percent", csv[1])
    assert.are.equal("parse|/ci/b/src/main.c|/ci/b/build/prog|100|130|30|30.0", csv[2])
    assert.are.equal("helper|/home/a/src/util.c|/home/a/build/prog|7|0|-7|-100.0", csv[3])
    local json = read_back("json", rows:to_json())
    assert.are.equal("parse|/ci/b/src/main.c|/ci/b/build/prog|100|130|30|30.0", json[2])
    local text = tostring(rows)
    assert.are.equal("old  new        change  function", text:match("^[^\n]+"))
    assert.is_truthy(text:find("\n100  130  +30 (+30.0%)  parse (/ci/b/src/main.c; /ci/b/build/prog)\n", 1, true))
  end)

  it("warnings give file, line and message, and print one a line", function()
    local p = assert(callgrind.parse("events: Ir\nfn=main\n1 5\nbogus: x\n", "w.out"))
    local w = p:warnings()
    assert.are.equal(1, #w)
    assert.are.equal(w[1], tostring(w))
    local file, line, msg = w[1]:match("^(.-):(%d+): (.*)$")
    assert.are.same({ "file|line|message", file .. "|" .. line .. "|" .. msg }, read_back("csv", w:to_csv()))
    assert.are.same({ "file|line|message", file .. "|" .. line .. "|" .. msg }, read_back("json", w:to_json()))
    assert.are.equal("no warnings", tostring(prof:warnings()))
    assert.are.equal("[]\n", prof:warnings():to_json())
  end)
end)
