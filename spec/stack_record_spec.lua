-- The stack record (issue 43): with stacks on, both engines write
-- FILE.stacks beside the profile (docs/format.md, "The stack record");
-- its folded text is the folded text of the same stacks byte for byte
-- (the bench workloads: a part of them in make test, all of them on both
-- engines with CALLGRIND_RECORD=full, make check-long); a record of
-- another run is refused; a cut or damaged one gives an error naming the
-- file and line.
local H = require "spec.support.helpers"
local callgrind = require "callgrind"
local record = require "callgrind.export.stackrec"
local stacks = require "callgrind.export.stacks"

local shq = H.shq
local FULL = os.getenv("CALLGRIND_RECORD") == "full"

local lab = H.lab("stack_record_spec")
setup(function() lab:open() end)
teardown(function() lab:close() end)

-- Runs a workload with the driver (spec/fixtures/lua/record_both.lua)
-- under lua (an interpreter), profile to out. LD_PRELOAD is kept: under
-- make check-asan, cpath names the ASan build.
local function run(lua, out, workload)
  local cmd = ("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s %s spec/fixtures/lua/record_both.lua %s %s > /dev/null 2> %s")
    :format(shq(package.path), shq(package.cpath), shq(lua), shq(out), shq(workload), shq(out .. ".err"))
  local ok = os.execute(cmd)
  assert(ok, cmd .. "\n" .. (H.read_file(out .. ".err") or ""))
  -- (Penlight's tests run a missing command on purpose: sh says so)
  assert.is_falsy(H.read_file(out .. ".err"):find("callgrind", 1, true), H.read_file(out .. ".err"))
end

-- the workloads each engine runs: all with FULL, else a part
local ALL = { "closures", "coroutines", "json", "luacheck", "penlight", "recursive", "strings", "tables" }
local PART = {
  vm = { "coroutines", "luacheck", "recursive", "strings" },
  hook = { "closures", "recursive" },
}
local function have_penlight()
  local f = io.open((os.getenv("BUILD") or "build") .. "/penlight/src/tests/test-list.lua")
  if f then f:close() end
  return f ~= nil
end

describe("the stack record's folded text", function()
  for _, engine in ipairs { "vm", "hook" } do
    local lua = engine == "vm" and H.VM or "lua5.4"
    for _, name in ipairs(FULL and ALL or PART[engine]) do
      it(("is the folded text of the same run, byte for byte: %s on the %s engine"):format(name, engine), function()
        if engine == "vm" and not H.have_vm() then
          pending("no counting interpreter (make vm)")
          return
        end
        if name == "penlight" and not have_penlight() then
          pending("no Penlight source (sh tools/penlight_src.sh build)")
          return
        end
        local out = lab.dir .. "/" .. name .. "." .. engine
        run(lua, out, "bench/lua/" .. name .. ".lua")
        local direct = H.read_file(out .. ".direct.folded")
        assert.is_true(#direct > 0)
        local text = assert(record.folded(out .. ".stacks"))
        assert.is_true(text == direct, ("%s: the record's folded text (%d bytes) is not the folded text (%d)")
          :format(name, #text, #direct))
        -- the record names the profile written beside it; its Instr adds up
        local prof = assert(callgrind.load(out))
        assert.are.equal(engine, prof.engine)
        assert.are.equal(H.read_file(out):match("# end digest=fnv1a64:(%x+)\n$"),
          H.read_file(out .. ".stacks"):match("\nprofile: fnv1a64:(%x+)\n"))
        local sum = 0
        for cost in direct:gmatch(" (%-?%d+)\n") do sum = sum + tonumber(cost) end
        assert.are.equal(prof:total("Instr"), sum)
        -- the views read it: the exact tree, whose total is the profile's
        assert.are.equal("stacks from " .. out .. ".stacks (exact)", stacks.describe(prof, "Instr"))
        local tree = stacks.tree(prof, "Instr", 0)
        assert.is_true(tree.exact)
        assert.are.equal(prof:total("Instr"), tree.total)
        os.remove(out .. ".direct.folded")
      end)
    end
  end
end)

-- A small profile and its record, made by the hook engine: the path.
local function small(tag)
  local dir = lab.dir .. "/" .. tag
  assert(os.execute("mkdir -p " .. shq(dir)))
  H.write_file(dir .. "/w.lua", table.concat({
    "local function leaf(n) local s = 0 for i = 1, n do s = s + i end return s end",
    "local function mid(n) return leaf(n) + leaf(2 * n) end",
    "local t = 0",
    "for i = 1, 20 do t = t + mid(i) end",
    "print(t)", "" }, "\n"))
  local out = dir .. "/p.out"
  run("lua5.4", out, dir .. "/w.lua")
  return out
end

describe("a stack record", function()
  it("gives prof:stacks of a loaded profile: each stack once, as the profiler recorded it", function()
    local out = small("stacks")
    local prof = assert(callgrind.load(out))
    local lines = {}
    for frames, cost in prof:stacks() do
      local names = {}
      for i, fn in ipairs(frames) do names[i] = fn.name end
      lines[#lines + 1] = table.concat(names, ";") .. " " .. cost
    end
    assert.are.equal(H.read_file(out .. ".direct.folded"), table.concat(lines, "\n") .. "\n")
    -- leaf is called from mid only, twice a call: one stack, under mid
    local leafs = 0
    for _, l in ipairs(lines) do if l:find(";leaf ", 1, true) then leafs = leafs + 1 end end
    assert.are.equal(1, leafs)
  end)

  it("of another run is refused: prof:stacks says why, the views estimate and say why", function()
    local out, other = small("mine"), small("other")
    assert(os.rename(other .. ".stacks", out .. ".stacks"))
    local prof = assert(callgrind.load(out))
    local want = H.read_file(out):match("# end digest=fnv1a64:(%x+)\n$")
    local theirs = H.read_file(other):match("# end digest=fnv1a64:(%x+)\n$")
    assert.are_not.equal(want, theirs)
    local ok, err = pcall(prof.stacks, prof)
    assert.is_false(ok)
    assert.are.equal(("prof:stacks: %s.stacks is another run's stack record: it belongs to the profile whose digest "
      .. "is %s, and %s's is %s"):format(out, theirs, out, want), err:gsub("^[^:]*:%d+: ", ""))
    assert.is_truthy(stacks.describe(prof, "Instr"):find(stacks.ESTIMATED .. "; the stack record was refused: "
      .. out .. ".stacks is another run's", 1, true))
    assert.is_falsy(stacks.tree(prof, "Instr", 0).exact)
    local svg = prof:flamegraph("Instr")
    assert.is_truthy(svg:find("(stacks estimated from the call graph; " .. out .. ".stacks is another run's)", 1, true))
  end)

  it("cut short, changed or not one, gives an error naming the file and the line", function()
    local out = small("bad")
    local good = H.read_file(out .. ".stacks")
    local path = out .. ".stacks"
    local function err_of(text)
      H.write_file(path, text)
      local r, e, kind = require("callgrind.core").internal.read_stack_record(path)
      assert.is_nil(r)
      assert.are.equal("format", kind)
      return e
    end
    local nlines = select(2, good:gsub("\n", ""))
    -- cut anywhere after its first line: the line where it ends is named
    for _, at in ipairs { 45, 60, #good // 2, #good - 30, #good - 1 } do
      local cut = good:sub(1, at)
      local line = select(2, cut:gsub("\n", "")) + 1
      local e = err_of(cut)
      assert.are.equal(path .. ":" .. line .. ": cut short", e:match("^(.-: cut short)"), e)
    end
    -- a cost changed: the digest (its last line) no longer matches
    local changed = good:gsub("\n(%d+ %d+ )(%d+)\n", function(a, c) return "\n" .. a .. (c + 1) .. "\n" end, 1)
    assert.are.equal(path .. ":" .. nlines .. ": the record was changed after it was written: its digest (this line) "
      .. "does not match its content", err_of(changed))
    -- a node that is no node, a function past the record's, a parent before the first node
    local head = good:match("^(.-\nnodes: %d+\n)")
    local hl = select(2, head:gsub("\n", ""))
    local nfn = tonumber(good:match("\nfunctions: (%d+)\n"))
    assert.are.equal(path .. ":" .. (hl + 1) .. ": not a node (its distance back to its parent, its function, 1 cost, "
      .. "one blank between)", err_of(H.with_digest(head .. "1 x 3\n")))
    assert.are.equal(("%s:%d: node 1: function %d, not one of the %d functions"):format(path, hl + 1, nfn + 1, nfn),
      err_of(H.with_digest(head .. "1 " .. (nfn + 1) .. " 3\n")))
    assert.are.equal(path .. ":" .. (hl + 1) .. ": node 1: its parent is 2 nodes back, before the first node",
      err_of(H.with_digest(head .. "2 1 3\n")))
    assert.are.equal(path .. ":1: not a stack record (its first line is not '# callgrind.lua stack record 1')",
      err_of("main;f 10\n"))
    assert.are.equal(path .. ":1: a stack record of version 2: this library reads version 1",
      err_of(good:gsub("record 1\n", "record 2\n", 1)))
    -- more events than a writer takes (the fuzzer's find: it read, then could not be written again)
    local names = {}
    for i = 1, 65 do names[i] = "E" .. i end
    local events_line = select(2, good:match("^(.-\n)events:"):gsub("\n", "")) + 1
    assert.are.equal(("%s:%d: 65 events: a stack record has at most 64"):format(path, events_line),
      err_of(H.with_digest((head:gsub("\nevents:[^\n]*\n", "\nevents: " .. table.concat(names, " ") .. "\n")))))
    -- prof:stacks names it; the views estimate
    local prof = assert(callgrind.load(out))
    H.write_file(path, good:sub(1, 100))
    local ok, e = pcall(prof.stacks, prof)
    assert.is_false(ok)
    local line = select(2, good:sub(1, 100):gsub("\n", "")) + 1
    assert.is_truthy(e:find("prof:stacks: " .. path .. ":" .. line .. ": cut short", 1, true), e)
    assert.is_truthy(prof:flamegraph("Instr"):find("(stacks estimated from the call graph; " .. path
      .. " is damaged)", 1, true))
  end)

  it("is written by stacks = true, not by stacks = \"folded\" (FILE.folded), and other values are refused", function()
    local out = lab.dir .. "/opt.out"
    local said = H.fresh_lua(([[
      local keep = require("callgrind.profiler").until_exit { out = %q, stacks = "folded" }
      local function f() return 1 end
      f()
    ]]):format(out))
    assert.are.equal("", said)
    assert.is_nil(io.open(out .. ".stacks"))
    assert.matches("^f %d+\n$", H.read_file(out .. ".folded"))
    local ok, err = pcall(require("callgrind.profiler").start, { stacks = "text" })
    assert.is_false(ok)
    assert.is_truthy(err:find("option 'stacks' must be true, false or \"folded\", got \"text\"", 1, true), err)
  end)
end)
