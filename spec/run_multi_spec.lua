-- callgrind.run on runs that write several files: threads (-01, -02 ...),
-- children (one file per pid) and dumps (.1, .2 ...), loaded with
-- callgrind.files and multi-file callgrind.load.
local callgrind = require "callgrind"
local H = require "spec.support.helpers"

local shq = H.shq

local lab = H.lab("spec/run_multi_spec.lua")
local exe

setup(function()
  lab:open()
  lab:need_tools()
  exe = lab:program() -- spec/fixtures/progs: main plus two threads
end)
teardown(function() lab:close() end)

-- The sum of the totals of each file loaded alone.
local function sum_of_files(files, ev)
  local s = 0
  for _, f in ipairs(files) do s = s + H.load(f):total(ev) end
  return s
end

describe("callgrind.run with several files", function()
  it("loads every thread's file into one profile with separate_threads", function()
    local prof, info = assert(callgrind.run({ exe }, { separate_threads = true, keep = lab.dir .. "/threads" }))
    assert.is_true(#info.files >= 3)
    for _, f in ipairs(info.files) do assert.matches("%-%d%d$", f) end
    assert.are.equal(sum_of_files(info.files, "Ir"), prof:total("Ir"))
    local threads = {}
    for part in prof:parts() do threads[#threads + 1] = part.thread end
    table.sort(threads)
    assert.are.same({ 1, 2, 3 }, threads)
  end)

  it("loads every child's file with trace_children", function()
    local prof, info = assert(callgrind.run({ "sh", "-c", shq(exe) .. " && " .. shq(exe) },
      { trace_children = true, keep = lab.dir .. "/children" }))
    local pids = {}
    for _, f in ipairs(info.files) do pids[f:match("callgrind%.out%.(%d+)")] = true end
    local n = 0
    for _ in pairs(pids) do n = n + 1 end
    assert.is_true(n >= 3, "expected files of sh and two children")
    assert.are.equal(sum_of_files(info.files, "Ir"), prof:total("Ir"))
  end)

  it("loads every dump of a run with --dump-every-bb", function()
    local prof, info = assert(callgrind.run({ exe }, { args = { "--dump-every-bb=2000" },
      keep = lab.dir .. "/dumps" }))
    assert.is_true(#info.files >= 3)
    assert.are.equal(sum_of_files(info.files, "Ir"), prof:total("Ir"))
  end)
end)
