-- The HTML report without a browser: self-contained (no URL, no external
-- script, style or image), its data the API's numbers, and the command
-- line's `report` the same page. spec/browser/ opens it in Chromium.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"
local F = require "spec.support.files"

-- cli.main(argv) in-process: exit code, stdout, stderr
local run = require("spec.support.cli").run

local EXT = "spec/fixtures/extended.callgrind"

describe("prof:html", function()
  it("is one self-contained page: no URL, nothing loaded from elsewhere", function()
    local text = assert(callgrind.load(EXT)):html()
    assert.matches("^<!DOCTYPE html>", text)
    assert.is_nil(text:find("https?://"))
    assert.is_nil(text:find("<script[^>]* src=") or text:find("<link") or text:find("<img"))
    assert.is_truthy(text:find("default-src 'none'", 1, true))
    -- one script of data, one of code, nothing that ends the data early
    local data = text:match('<script type="application/json" id="data">(.-)</script>')
    assert.is_string(data)
    assert.is_nil(data:find("</", 1, true))
  end)

  it("holds the API's numbers: each function's self and inclusive cost, the calls and the stacks' total", function()
    local prof = assert(callgrind.load(EXT))
    local data = prof:html():match('id="data">(.-)</script>')
    for fn in prof:functions() do
      local s, i = fn:self("Instructions"), fn:inclusive("Instructions")
      assert.is_truthy(data:find(('"i":[%d],"n":%q'):format(i, fn.name), 1, true)
        and data:find(('"s":[%d]'):format(s), 1, true), fn.name)
    end
    assert.is_truthy(data:find('"exact":false', 1, true))
    assert.is_truthy(data:find('"total":820', 1, true))
  end)

  it("names the function its call-graph view opens on, and a diff's share matched as d:matched has it", function()
    local prof = assert(callgrind.load(EXT))
    local data = prof:html():match('id="data">(.-)</script>')
    -- the functions sorted by inclusive cost: main (0-based 0) is the root
    assert.is_truthy(data:find('"fns":[{"c":0,"f":"file1.c","i":[820],"n":"main"', 1, true), data:sub(1, 300))
    assert.is_truthy(data:find(',"root":0}', 1, true))
    local d = callgrind.diff(callgrind.load("spec/fixtures/moved-old.callgrind"),
      callgrind.load("spec/fixtures/moved-new.callgrind"))
    local m = d:matched("Ir")
    -- 2 functions (main, parse): 110 of 117 old Ir, 140 of 144 new
    assert.are.same({ 2, 110, 140 }, { m.functions, m.old, m.new })
    assert.is_truthy(d:html():find(('"Ir":{"functions":2,"new":140,"new_share":%.6g,"old":110,"old_share":%.6g}')
      :format(140 / 144, 110 / 117), 1, true))
  end)

  it("escapes a name that would end the script or add markup", function()
    local prof = assert(callgrind.parse("events: Ir\nfn=</script><b>x\n1 5\n", "hostile"))
    local text = prof:html({ title = "<i>t</i>" })
    assert.is_nil(text:find("</script><b>", 1, true))
    assert.is_truthy(text:find("<title>&lt;i&gt;t&lt;/i&gt;</title>", 1, true))
  end)

  it("is written by write_html, and by callgrind-lua report (also to standard output)", function()
    local prof = assert(callgrind.load(EXT))
    local dir = F.tmpdir()
    assert(prof:write_html(dir .. "/a.html"))
    assert.are.equal(prof:html(), H.read_file(dir .. "/a.html"))
    local code, out = run("report", EXT, "-o", "-")
    assert.are.equal(0, code)
    assert.are.equal(prof:html(), out)
    assert.are.equal(0, (run("report", EXT, "-o", dir .. "/b.html")))
    assert.are.equal(prof:html(), H.read_file(dir .. "/b.html"))
    local old = "spec/fixtures/moved-old.callgrind"
    local new = "spec/fixtures/moved-new.callgrind"
    code, out = run("report", new, "--old", old, "-o", "-")
    assert.are.equal(0, code)
    assert.are.equal(callgrind.diff(callgrind.load(old), callgrind.load(new)):html(), out)
    -- the diff's flame frames carry their old cost: parse was 100, now 130
    local data = out:match('id="data">(.-)</script>')
    assert.is_truthy(data:find(",130,130,100]", 1, true))
    assert.are.equal(2, (run("report", EXT)))
    assert.are.equal(1, (run("report", dir .. "/missing", "-o", "-")))
    F.remove(dir)
  end)

  it("a diff's flame graph colours the stacks only the new profile has, with the SVG's shares", function()
    -- -O0: main -> a -> x; -O2: a is inlined, main -> x, and a new b
    local old = assert(callgrind.parse(table.concat({ "events: Ir", "fn=main", "1 10", "cfn=a", "calls=1 1", "1 90",
      "fn=a", "1 30", "cfn=x", "calls=1 1", "1 60", "fn=x", "1 60", "" }, "\n"), "old"))
    local new = assert(callgrind.parse(table.concat({ "events: Ir", "fn=main", "1 10", "cfn=x", "calls=1 1", "1 40",
      "cfn=b", "calls=1 1", "1 5", "fn=x", "1 40", "fn=b", "1 5", "" }, "\n"), "new"))
    local d = callgrind.diff(old, new)
    local data = d:html():match('id="data">(.-)</script>')
    local gone = math.tointeger(tonumber(data:match('"gone":(%d+)')))
    local new_only = math.tointeger(tonumber(data:match('"new_only":(%d+)')))
    -- by hand: new-only main;x (40) and main;b (5); gone main;a (90)
    assert.are.same({ 45, 90 }, { new_only, gone })
    local svg = d:flamegraph()
    assert.is_truthy(svg:find(("purple: only in the new, %.1f%% of its cost; %.1f%% of the old cost is in stacks gone")
      :format(100 * new_only / 55, 100 * gone / 100), 1, true))
    assert.is_truthy(d:html():find("#b07cd8", 1, true))
    -- frames are paired by the diff's match keys, as in the SVG: parse moved
    -- from a.c to b.c is new under name+file, the same under name
    local function moved(file)
      return assert(callgrind.parse(table.concat({ "events: Ir", "fl=main.c", "fn=main", "1 10", "cfl=" .. file,
        "cfn=parse", "calls=1 1", "1 90", "fl=" .. file, "fn=parse", "1 90", "" }, "\n"), file))
    end
    for match, want in pairs({ name = 0, ["name+file"] = 90 }) do
      local page = callgrind.diff(moved("a.c"), moved("b.c"), { match = match }):html()
      assert.are.equal(tostring(want), page:match('"new_only":(%d+)'), match)
      assert.are.equal(tostring(want), page:match('"gone":(%d+)'), match)
    end
  end)

  it("has flame graphs of the first flame_events events (4 by default), and says so for the others", function()
    local prof = assert(callgrind.parse("events: A B C D E F\nfn=main\n1 1 2 3 4 5 6\n", "six"))
    local function flames(opts)
      local data = prof:html(opts):match('id="data">(.-)</script>')
      local evs = {}
      for ev in data:match('"flame":(%b{})'):gmatch('"(%u)":{') do evs[#evs + 1] = ev end
      return table.concat(evs, " ")
    end
    assert.are.equal("A B C D", flames())
    assert.are.equal("A B C D E F", flames({ flame_events = 6 }))
    assert.is_truthy(prof:html():find("No flame graph of '+E[ev]+': the page has those of the first", 1, true))
  end)
end)
