-- prof:func finds a function through the model's index by name (and its
-- key table by object, file and name): the time of a look-up does not grow
-- with the number of functions. Timed as a ratio against field reads on
-- the same machine, never as a wall-clock limit.
local callgrind = require "callgrind"

-- A profile of n functions: f1 .. fn in files of 100, and "dup" defined
-- in three files (one of them in two objects).
local function profile(n)
  local out = { "events: Ir\n" }
  for i = 1, n do
    out[#out + 1] = ("ob=lib%d.so\nfl=file%d.c\nfn=f%d\n%d %d\n"):format(i % 7, i // 100, i, i, i)
  end
  out[#out + 1] = "ob=a.so\nfl=x.c\nfn=dup\n1 1\nfl=y.c\nfn=dup\n1 2\nob=b.so\nfl=y.c\nfn=dup\n1 4\n"
  return assert(callgrind.parse(table.concat(out), "big.out"))
end

local N, LOOKUPS = 20000, 100000

describe("prof:func", function()
  local prof = profile(N)

  it("finds each of 20,000 functions by name, by name and file, and by all three", function()
    for _, i in ipairs({ 1, 99, 100, 12345, N }) do
      local fn = prof:func("f" .. i)
      assert.are.equal("f" .. i, fn.name)
      assert.are.equal(i, fn:self("Ir"))
      assert.are.equal(fn, prof:func("f" .. i, "file" .. i // 100 .. ".c"))
      assert.are.equal(fn, prof:func("f" .. i, "file" .. i // 100 .. ".c", "lib" .. i % 7 .. ".so"))
      local elsewhere = "not found: 'f" .. i .. "' is not in that file or object; it is in file" .. i // 100 .. ".c"
      assert.are.same({ nil, elsewhere, "not_found" }, { prof:func("f" .. i, "file" .. i // 100 + 1 .. ".c") })
      assert.are.same({ nil, elsewhere, "not_found" }, { prof:func("f" .. i, nil, "lib" .. (i + 1) % 7 .. ".so") })
    end
    local fn, err, kind = prof:func("f" .. N + 1)
    assert.is_nil(fn)
    assert.are.equal("not_found", kind)
    -- names it contains come before any edit, the closest in length first
    assert.are.equal("not found: no function named 'f20001'; closest names: f2000, f200, f20", err)
  end)

  it("tells an ambiguous name apart by file, then by object", function()
    assert.are.same({ nil, "ambiguous: 3 functions named 'dup' (x.c in a.so; y.c in a.so; y.c in b.so): "
      .. "give a file or object to choose", "ambiguous" }, { prof:func("dup") })
    assert.are.same({ nil, "ambiguous: 2 functions named 'dup' (y.c in a.so; y.c in b.so): "
      .. "give a file or object to choose", "ambiguous" }, { prof:func("dup", "y.c") })
    assert.are.equal(1, prof:func("dup", "x.c"):self("Ir"))
    assert.are.equal(2, prof:func("dup", "y.c", "a.so"):self("Ir"))
    assert.are.equal(4, prof:func("dup", nil, "b.so"):self("Ir"))
  end)

  it("finds a function named by cfn= alone under its definition, and functions merged from several files", function()
    local p = assert(callgrind.parse("events: Ir\nfl=a.c\nfn=main\n1 1\ncfn=helper\ncalls=1 5\n1 7\n"
      .. "fl=b.c\nfn=helper\n5 7\n", "m.out"))
    assert.are.equal(p:func("helper"), p:func("helper", "b.c"))
    assert.are.equal(7, p:func("helper"):self("Ir"))
    assert.are.same({ nil, "not found: 'helper' is not in that file or object; it is in b.c", "not_found" },
      { p:func("helper", "a.c") })
    local a, b = os.tmpname(), os.tmpname()
    local f = assert(io.open(a, "w"))
    f:write("events: Ir\nfl=x.c\nfn=f\n1 2\nfn=g\n1 3\n")
    f:close()
    f = assert(io.open(b, "w"))
    f:write("events: Ir\nfl=x.c\nfn=g\n1 4\nfl=y.c\nfn=f\n1 5\n")
    f:close()
    local q = assert(callgrind.load({ a, b }))
    os.remove(a)
    os.remove(b)
    assert.are.equal(7, q:func("g"):self("Ir"))
    assert.are.equal(2, q:func("f", "x.c"):self("Ir"))
    assert.are.equal(5, q:func("f", "y.c"):self("Ir"))
    assert.are.same({ nil, "ambiguous: 2 functions named 'f' (x.c; y.c): give a file or object to choose",
      "ambiguous" }, { q:func("f") })
  end)

  it("takes about as long as a field read, not a scan of 20,000 functions", function()
    local names = {}
    for k = 1, 1000 do names[k] = "f" .. (k * 19) % N + 1 end
    local fn = prof:func("f1")
    local function lookups()
      local t = os.clock()
      for k = 1, LOOKUPS do prof:func(names[k % 1000 + 1]) end
      return os.clock() - t
    end
    local function reads()
      local t = os.clock()
      for _ = 1, LOOKUPS do local _ = fn.name end
      return os.clock() - t
    end
    -- pairs of runs, the median of the ratios (the machine may be busy)
    local ratios = {}
    for k = 1, 5 do
      local a, b = lookups(), reads()
      ratios[k] = a / math.max(b, 1e-6)
    end
    table.sort(ratios)
    local ratio = ratios[3]
    -- a linear scan is thousands of times a field read; a hash is a few
    assert.is_true(ratio < 20, ("look-up / field read = %.1f"):format(ratio))
  end)
end)
