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
    assert.is_truthy(data:find(',"root":0,', 1, true))
    local d = callgrind.diff(callgrind.load("spec/fixtures/moved-old.callgrind"),
      callgrind.load("spec/fixtures/moved-new.callgrind"))
    local m = d:matched("Ir")
    -- 2 functions (main, parse): 110 of 117 old Ir, 140 of 144 new
    assert.are.same({ 2, 110, 140 }, { m.functions, m.old, m.new })
    assert.is_truthy(d:html():find(('"Ir":{"functions":2,"new":140,"new_share":%.6g,"old":110,"old_share":%.6g}')
      :format(140 / 144, 110 / 117), 1, true))
  end)

  -- main calls f1..f40 (f_k costs 1,000 - 10 k, at line k of src.c, whose
  -- lines 1 to 40 read "return 1;" or "return 2;")
  local function forty()
    local L, body = { "events: Ir", "fl=src.c", "fn=main", "1 1" }, {}
    for k = 1, 40 do
      L[#L + 1] = "cfn=f" .. k
      L[#L + 1] = "calls=1 1"
      L[#L + 1] = "1 " .. (1000 - 10 * k)
      body[#body + 1] = "fn=f" .. k
      body[#body + 1] = k .. " " .. (1000 - 10 * k)
    end
    return assert(callgrind.parse(table.concat(L, "\n") .. "\n" .. table.concat(body, "\n") .. "\n", "forty"))
  end

  it("keeps the source lines of every function that has any, each file name and line text once", function()
    local dir = F.tmpdir()
    local src = {}
    for k = 1, 40 do src[k] = "  return " .. (k % 2 + 1) .. ";" end
    H.write_file(dir .. "/src.c", table.concat(src, "\n") .. "\n")
    local page = forty():html({ source_root = dir })
    F.remove(dir)
    local data = page:match('id="srcdata">(.-)</script>')
    -- one file, two texts (the indent dropped), then each function's
    -- lines: file 0, its line, its cost, its text (f_k is the (k+1)th)
    assert.are.equal('["src.c"]', data:match('"files":(%b[])'))
    assert.are.equal('["return 2;","return 1;"]', data:match('"texts":(%b[])'))
    for k = 1, 40 do
      local lines = data:match(('"%d":(%%b[])'):format(k + 1))
      assert.are.equal(("[0,%d,%d,%d]"):format(k, 1000 - 10 * k, (k + 1) % 2), lines, "f" .. k)
    end
    assert.are.equal('[0,1,1,0]', data:match('"1":(%b[])'))
    assert.are.equal('{"kept":41,"limit":41,"share":0}', page:match('"source":(%b{})'))
  end)

  it("keeps the source lines of the functions above source_share only, and says so", function()
    local prof = forty()
    -- the total is 1 + 10 * (1 + 2 + ... + 40) less: 31,801; 2% is 636: f1..f36 (640) keep theirs
    assert.are.equal(31801, prof:total("Ir"))
    local page = prof:html({ source_share = 0.02 })
    local data = page:match('id="srcdata">(.-)</script>')
    assert.are.equal("[0,36,640,-1]", data:match('"37":(%b[])'))
    assert.is_nil(data:match('"38":'))
    assert.are.equal('{"kept":37,"limit":41,"share":0.02}', page:match('"source":(%b{})'))
    assert.is_truthy(page:find("source lines kept for the first 37 functions by inclusive cost (those of at least 2% "
      .. "of the total: source_share)", 1, true))
    assert.is_truthy(prof:html({ source_functions = 10 }):find("source lines kept for the first 10 functions by "
      .. "inclusive cost (source_functions)", 1, true))
  end)

  it("opens on main past the dynamic loader's entry, else on the program's first function, else on the root", function()
    local function opens(text)
      local data = assert(callgrind.parse(text, "entry")):html():match('id="data">(.-)</script>')
      local names = {}
      for n in data:match('"fns":(.*)$'):gmatch('"n":"([^"]*)"') do names[#names + 1] = n end
      return names[tonumber(data:match('"root":(%d+)')) + 1]
    end
    -- ld.so's entry calls the program's (below main), which calls main
    local loader = { "events: Ir", "ob=ld.so", "fn=0x000000000001ab70", "1 15", "cob=prog", "cfn=(below main)",
      "calls=1 1", "1 1000", "cob=ld.so", "cfn=_dl_start", "calls=1 1", "1 200", "fn=_dl_start", "1 200", "ob=prog",
      "fn=(below main)", "1 5", "cfn=MAIN", "calls=1 1", "1 995", "fn=MAIN", "1 95", "cfn=work", "calls=1 1",
      "1 900", "fn=work", "1 900", "" }
    local text = table.concat(loader, "\n")
    assert.are.equal("main", opens((text:gsub("MAIN", "main"))))
    -- no main (a stripped binary): the first function in the program's object
    assert.are.equal("(below main)", opens((text:gsub("MAIN", "0x0000000000627ca0"))))
    -- a profile of no objects (a Lua profile): its root
    assert.are.equal("main chunk", opens("events: Ir\nfn=main chunk\n1 1\ncfn=run\ncalls=1 1\n1 99\n"
      .. "fn=run\n1 99\n"))
    -- main far from the root's costliest calls is not taken
    assert.are.equal("top", opens("events: Ir\nfn=top\n1 1\ncfn=a\ncalls=1 1\n1 99\ncfn=b\ncalls=1 1\n1 98\n"
      .. "fn=a\n1 99\nfn=b\n1 8\ncfn=main\ncalls=1 1\n1 90\nfn=main\n1 90\n"))
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
