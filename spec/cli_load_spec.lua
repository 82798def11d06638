-- The command line opens files only through the library's resolution
-- (callgrind.model.load.open): fresh valgrind runs with threads and dumps,
-- an empty base file beside its siblings, an empty file alone, and the
-- files of two runs refused (unless --merge).
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq

-- cli.main(argv) in-process: exit code, stdout, stderr
local run = require("spec.support.cli").run

-- The Ir total `callgrind-lua top` prints for some names.
local function cli_total(...)
  local argv = { "top", ... }
  argv[#argv + 1], argv[#argv + 2] = "1", "Ir"
  local code, out, err = run(table.unpack(argv))
  assert.are.equal(0, code, err)
  local n = assert(out:match("totals   Ir ([%d,]+)"), out)
  return math.tointeger(tonumber((n:gsub(",", "")))), out
end

-- The sum of the totals of each file loaded alone.
local function sum_of_files(files)
  local s = 0
  for _, f in ipairs(files) do s = s + H.load(f):total("Ir") end
  return s
end

-- The files of dir whose names start with prefix.
local function ls(dir, prefix)
  local p = assert(io.popen("ls " .. shq(dir)))
  local out = {}
  for name in p:lines() do
    if name:sub(1, #prefix) == prefix then out[#out + 1] = dir .. "/" .. name end
  end
  p:close()
  table.sort(out)
  return out
end

local lab = H.lab("spec/cli_load_spec.lua")

setup(function()
  lab:open()
  lab:need_tools()
end)
teardown(function() lab:close() end)

describe("callgrind-lua opens a name as valgrind's files of one run", function()
  it("sums every thread file of --separate-threads=yes, skipping the empty base file beside them", function()
    local out = lab:callgrind("threads", "--separate-threads=yes")
    local threads = ls(lab.dir, "threads.out-")
    assert.is_true(#threads >= 3, #threads .. " thread files")
    -- valgrind leaves the base name empty (or absent): make it so
    H.write_file(out, "")
    local want = sum_of_files(threads)
    assert.are.equal(want, (cli_total(out)))
    -- the name need not exist either
    os.remove(out)
    assert.are.equal(want, (cli_total(out)))
  end)

  it("sums every dump of --dump-every-bb, though the name itself exists (the last dump)", function()
    local out = lab:callgrind("dumps", "--dump-every-bb=3000")
    local dumps = ls(lab.dir, "dumps.out")
    assert.is_true(#dumps >= 4, #dumps .. " dump files")
    local want = sum_of_files(dumps)
    assert.is_true(H.load(out):total("Ir") < want)
    local total, top = cli_total(out)
    assert.are.equal(want, total)
    -- the header names the profile as given, and how many files it stood for
    assert.is_truthy(top:find("profile  " .. out .. " (" .. #dumps .. " files)\n", 1, true), top)
    -- every command resolves alike: csv's rows add up to the same total
    local code, text = run("csv", out, "--events", "Ir")
    assert.are.equal(0, code)
    local sum = 0
    for line in text:gmatch("[^\n]+") do
      local self = line:match("^[^,]*,[^,]*,[^,]*,(%d+),")
      if self then sum = sum + tonumber(self) end
    end
    assert.are.equal(want, sum)
  end)

  it("says \"empty file\" for an empty file alone, exit 1, and so does callgrind.load", function()
    local empty = lab.dir .. "/alone.out"
    H.write_file(empty, "")
    local code, out, err = run("top", empty)
    assert.are.equal(1, code)
    assert.are.equal("", out)
    assert.are.equal(empty .. ": empty file\n", err)
    assert.are.same({ nil, empty .. ": empty file", "format" }, { callgrind.load(empty) })
  end)
end)

describe("files of two runs", function()
  local base, files

  setup(function()
    local exe = lab:program()
    base = lab.dir .. "/two.out"
    for _ = 1, 2 do
      lab:run(("valgrind -q --tool=callgrind --callgrind-out-file=%s.%%p %s >/dev/null"):format(shq(base), shq(exe)),
        "valgrind")
    end
    files = ls(lab.dir, "two.out.")
    assert.are.equal(2, #files)
  end)

  it("are refused by the command line, naming both runs and --merge, exit 1", function()
    local code, out, err = run("top", base)
    assert.are.equal(1, code)
    assert.are.equal("", out)
    assert.matches("^files of 2 different runs, not summed:\n", err)
    for _, f in ipairs(files) do
      local pid = f:match("%.(%d+)$")
      assert.is_truthy(err:find("pid " .. pid .. ", command ", 1, true), err)
      assert.is_truthy(err:find(f, 1, true), err)
    end
    assert.is_truthy(err:find("--merge", 1, true), err)
    -- two names given, the same
    assert.are.equal(1, (run("top", files[1], files[2])))
  end)

  it("are summed with --merge, and the output says so", function()
    local total, out = cli_total(base, "--merge")
    assert.are.equal(sum_of_files(files), total)
    assert.matches("\nmerged   2 runs summed %(pid %d+: [^;]+; pid %d+: [^)]+%)\n", out)
  end)

  it("are refused by callgrind.files and callgrind.load, unless merge = true", function()
    local list, msg, kind = callgrind.files(base)
    assert.is_nil(list)
    assert.are.equal("runs", kind)
    assert.matches("merge = true", msg)
    list = assert(callgrind.files(base, { merge = true }))
    assert.are.same(files, list)
    local prof
    prof, msg, kind = callgrind.load(files)
    assert.is_nil(prof)
    assert.are.equal("runs", kind)
    assert.matches("^files of 2 different runs", msg)
    prof = assert(callgrind.load(files, { merge = true }))
    assert.are.equal(sum_of_files(files), prof:total("Ir"))
    assert.matches("\nmerged    2 runs summed", prof:summary())
    -- one run's files load alone as before
    assert.are.equal(H.load(files[1]):total("Ir"), assert(callgrind.load({ files[1] })):total("Ir"))
  end)
end)
