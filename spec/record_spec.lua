-- The record of every check (CALLGRIND_REPORT=path, one JSON object per
-- line) and callgrind.report_summary over it, on the hand-made profiles
-- of check_spec (moved-old: Ir 117, Dr 22; moved-new: Ir 144, Dr 23).
local callgrind = require "callgrind"
local H = require "spec.support.helpers"
local record = require "callgrind.check.record"

local old = assert(callgrind.parse(H.read_file("spec/fixtures/moved-old.callgrind"), "old.out"))
local new = assert(callgrind.parse(H.read_file("spec/fixtures/moved-new.callgrind"), "new.out"))

local lab = H.lab("spec/record_spec.lua")
local getenv = os.getenv
local report_path
setup(function()
  lab:open()
  -- CALLGRIND_REPORT as this spec sets it; the modes' variables hidden
  os.getenv = function(k) -- luacheck: ignore
    if k == "CALLGRIND_REPORT" then return report_path end
    if k == "CI" or k == "CALLGRIND_BASELINES" or k == "CALLGRIND_UPDATE_BASELINES" then return nil end
    return getenv(k)
  end
end)
teardown(function()
  os.getenv = getenv -- luacheck: ignore
  lab:close()
end)

local n = 0
local function fresh_report()
  n = n + 1
  report_path = lab.dir .. "/report" .. n .. ".jsonl"
  return report_path
end

describe("CALLGRIND_REPORT", function()
  it("records every check, passed or failed, one JSON object per line with the caller's line", function()
    local path = fresh_report()
    local line = debug.getinfo(1, "l").currentline + 1
    assert.is_true((callgrind.check_cost_at_most(200, old:func("main"), "Ir")))
    assert.is_false((callgrind.check_calls_at_most(0, old:func("parse"))))
    assert.is_false((callgrind.check_no_regression(old, new, { Ir = "5%", Dr = { "10%", 30 },
      functions = { parse = { Ir = "50%" } } })))
    local where = "spec/record_spec.lua:"
    assert.are.equal(table.concat({
      '{"check":"cost_at_most","name":"cost_at_most","target":"main","event":"Ir","kind":"inclusive","new":110,'
        .. '"limit":200,"status":"pass","profile":"old.out","where":"' .. where .. line .. '"}',
      '{"check":"calls_at_most","name":"calls_at_most","target":"parse","kind":"calls","new":1,"limit":0,'
        .. '"status":"fail","profile":"old.out","where":"' .. where .. (line + 1) .. '"}',
      '{"check":"no_regression","name":"no_regression","target":"total","event":"Ir","kind":"total","old":117,'
        .. '"new":144,"limit":"5%","diff_pct":23.076923076923077,"status":"fail","profile":"new.out",'
        .. '"old_profile":"old.out","where":"' .. where .. (line + 2) .. '"}',
      '{"check":"no_regression","name":"no_regression","target":"total","event":"Dr","kind":"total","old":22,'
        .. '"new":23,"limit":"10% and 30","diff_pct":4.5454545454545459,"status":"pass","profile":"new.out",'
        .. '"old_profile":"old.out","where":"' .. where .. (line + 2) .. '"}',
      '{"check":"no_regression","name":"no_regression","target":"parse","event":"Ir","kind":"inclusive","old":100,'
        .. '"new":130,"limit":"50%","diff_pct":30,"status":"pass","profile":"new.out","old_profile":"old.out",'
        .. '"where":"' .. where .. (line + 2) .. '"}',
      "",
    }, "\n"), H.read_file(path))
  end)

  it("records the assertions, a missing function and a baseline check by its name", function()
    local path = fresh_report()
    local luassert = require "callgrind.check.luassert"
    local dir = lab.dir .. "/baselines"
    luassert.cost_at_most(117, old, "Ir")
    luassert.within_baseline("parse", old, { Ir = "5%" }, { dir = dir, quiet = true })
    luassert.within_baseline("parse", old, { Ir = "5%" }, { dir = dir })
    assert.is_false((callgrind.check_cost_at_most(5, { old, "pars" }, "Ir")))
    local recs = assert(record.read(path))
    assert.are.equal(4, #recs)
    assert.are.same({ "cost_at_most", "total", 117, 117, "pass" },
      { recs[1].check, recs[1].target, recs[1].new, recs[1].limit, recs[1].status })
    assert.are.same({ "within_baseline", "parse", "pass", "baseline parse saved (first run): " .. dir
      .. "/parse.callgrind (Ir 117, Dr 22)" }, { recs[2].check, recs[2].name, recs[2].status, recs[2].message })
    assert.are.same({ "within_baseline", "parse", "total", "Ir", 117, 117, 0, "pass", dir .. "/parse.callgrind" },
      { recs[3].check, recs[3].name, recs[3].target, recs[3].event, recs[3].old, recs[3].new, recs[3].diff_pct,
        recs[3].status, recs[3].old_profile })
    assert.are.same({ "pars", "fail" }, { recs[4].target, recs[4].status })
    assert.matches("^function pars is not in the profile old.out; closest names: parse\n%(was it inlined%?",
      recs[4].message)
  end)

  it("never interleaves the lines of processes appending at once", function()
    local path = fresh_report()
    local pwd = H.run("pwd"):gsub("%s+$", "")
    local function absolute(paths)
      return (paths:gsub("[^;]+", function(p) return p:sub(1, 1) == "/" and p or (pwd .. "/" .. p) end))
    end
    local script = lab.dir .. "/append.lua"
    H.write_file(script, ("package.path = %q\npackage.cpath = %q\n"):format(absolute(package.path),
      absolute(package.cpath)) .. [[
local callgrind = require "callgrind"
local prof = assert(callgrind.parse("events: Ir\nfn=]] .. ("f"):rep(3000) .. [[\n1 5\n", arg[1]))
for _ = 1, 200 do callgrind.check_cost_at_most(10, prof, "Ir") end
]])
    local cmd = {}
    for i = 1, 4 do cmd[i] = ("CALLGRIND_REPORT=%s lua5.4 %s p%d &"):format(H.shq(path), H.shq(script), i) end
    -- (LD_PRELOAD kept: under make check-asan the core needs it)
    local p = assert(io.popen(table.concat(cmd, " ") .. " wait 2>&1"))
    assert.are.equal("", p:read("a"))
    p:close()
    local recs = assert(record.read(path))
    assert.are.equal(800, #recs)
    local per = {}
    for _, r in ipairs(recs) do per[r.profile] = (per[r.profile] or 0) + 1 end
    assert.are.same({ p1 = 200, p2 = 200, p3 = 200, p4 = 200 }, per)
  end)

  it("is read back whole: escapes, numbers, a line that is no JSON", function()
    local path = lab.dir .. "/handmade.jsonl"
    local rec = { check = "cost_at_most", target = "a \"b\"\n\tc\\", new = 2 ^ 70, limit = 1.5, status = "pass" }
    H.write_file(path, record.encode(rec) .. "\n" .. record.encode({ check = "x", old = -3 }))
    assert.are.same({ rec, { check = "x", old = -3 } }, assert(record.read(path)))
    -- a damaged line is named and left out; every whole line is kept
    H.write_file(path, record.encode(rec) .. "{\"check\": oops}\n" .. record.encode({ check = "y" }))
    assert.are.same({ { rec, { check = "y" } }, { path .. ":2: not a JSON object (at column 11), left out" } },
      { record.read(path) })
    assert.are.same({ nil, lab.dir .. "/none.jsonl: No such file or directory", "io" },
      { callgrind.report_summary(lab.dir .. "/none.jsonl") })
  end)
end)

describe("callgrind.report_summary", function()
  local path, at
  setup(function()
    path = fresh_report()
    at = debug.getinfo(1, "l").currentline + 1
    callgrind.check_cost_at_most(200, old:func("main"), "Ir")
    callgrind.check_no_regression(old, new, { Ir = "5%", Dr = "10%" })
    callgrind.check_calls_at_most(5, { old, "nothere" })
    report_path = nil
  end)

  it("renders the records as a text table, the failures' messages after it", function()
    local function where(k) return "spec/record_spec.lua:" .. (at + k) end
    assert.are.equal(table.concat({
      "status  check          name  target            event  old  new  change  limit  where",
      "pass    cost_at_most         main (inclusive)  Ir          110            200  " .. where(0),
      "fail    no_regression        total             Ir     117  144  +23.1%     5%  " .. where(1),
      "pass    no_regression        total             Dr      22   23   +4.5%    10%  " .. where(1),
      "fail    calls_at_most        nothere                                        5  " .. where(2),
      "4 checks: 2 passed, 2 failed, 0 improved beyond a limit",
      "  calls_at_most nothere: function nothere is not in the profile old.out",
    }, "\n"), assert(callgrind.report_summary(path)))
    assert.are.equal(assert(callgrind.report_summary(path)), assert(callgrind.report_summary(path, "text")))
  end)

  it("renders Markdown for a CI job summary", function()
    local s = assert(callgrind.report_summary(path, "markdown"))
    local lines = {}
    for l in s:gmatch("[^\n]*") do lines[#lines + 1] = l end
    assert.are.equal("| status | check | name | target | event | old | new | change | limit | where |", lines[1])
    assert.are.equal("| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |", lines[2])
    -- every ASCII punctuation character of a text cell backslash-escaped
    -- (CommonMark renders \_ as _), numbers as they are
    assert.are.equal("| fail | no\\_regression |  | total | Ir | 117 | 144 | +23.1% | 5% | "
      .. "spec\\/record\\_spec\\.lua\\:" .. (at + 1) .. " |", lines[4])
    assert.are.equal("**4 checks: 2 passed, 2 failed, 0 improved beyond a limit**", lines[8])
    assert.are.equal("- calls\\_at\\_most nothere\\: function nothere is not in the profile old\\.out", lines[9])
    assert.are.equal(9, #lines)
  end)

  it("raises on misuse", function()
    assert.has_error(function() callgrind.report_summary(path, "html") end,
      "bad argument #2 to 'report_summary' (invalid option 'html'; expected one of: text, markdown)")
    assert.has_error(function() callgrind.report_summary(nil) end,
      "bad argument #1 to 'report_summary' (string expected, got no value)")
  end)
end)

describe("the record on a full disk", function()
  -- /dev/full: every write fails with ENOSPC; a file on a tiny filesystem
  -- would need root, so the C append's cut-back is checked on a file
  -- whose write stops short through a file-size limit (ulimit -f)
  it("leaves the file as it was when an append fails, and the summary keeps every whole line", function()
    local path = lab.dir .. "/full.jsonl"
    H.write_file(path, record.encode({ check = "a", status = "pass" }))
    local before = H.read_file(path)
    -- a record of 20,000 bytes against a limit of 10 blocks of 512 bytes
    local big = string.rep("x", 20000)
    local out = H.fresh_lua(([[
      local record = require "callgrind.check.record"
      local ok, err = pcall(require("callgrind.core").internal.append, %q, record.encode({ check = %q }))
      print(ok)]]):format(path, big), "ulimit -f 10;")
    assert.is_truthy(out:find("true", 1, true) or out:find("false", 1, true), out)
    assert.are.equal(before, H.read_file(path))
    -- a line cut by a crash (not by us) is named, and the rest is kept
    local f = assert(io.open(path, "ab"))
    f:write('{"check":"cut","sta')
    f:close()
    local text = assert(callgrind.record_summary(path))
    assert.is_truthy(text:find("1 check: 1 passed", 1, true), text)
    assert.is_truthy(text:find(path .. ":2: not a JSON object", 1, true), text)
  end)

  it("escapes what it shows: control bytes in text, HTML, pipes and line breaks in Markdown", function()
    local path = lab.dir .. "/hostile.jsonl"
    H.write_file(path, record.encode({ check = "cost_at_most", name = "n", target = "<b>x|y</b>\n\27]0;t\7",
      status = "fail", message = "m" }))
    local md = assert(callgrind.record_summary(path, "markdown"))
    assert.is_truthy(md:find("\\<b\\>x\\|y\\<\\/b\\> \\\\x1B\\]0\\;t\\\\x07", 1, true), md)
    assert.is_nil(md:find("<b>", 1, true))
    local text = assert(callgrind.record_summary(path))
    assert.is_nil(text:find("\27", 1, true))
    assert.is_truthy(text:find("\\x1B]0;t\\x07", 1, true), text)
  end)
end)
