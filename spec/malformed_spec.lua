-- Malformed and odd inputs: any byte sequence gives a correct profile or
-- nil, "NAME:LINE: message" -- never a crash, a hang, or a number that
-- differs from what the file says. Expectations are worked out from the
-- format rules (docs/format.md) and the README's limits, then checked.
local callgrind = require "callgrind"

local rep, concat = string.rep, table.concat

local MAX = math.maxinteger    -- 2^63 - 1
local MIN = math.mininteger    -- -2^63

-- What a loaded profile holds, in a form `same` can compare: base events,
-- their totals, function names in first-seen order, warnings.
local function shape(prof)
  local totals, fns = {}, {}
  for _, ev in ipairs(prof.events) do totals[ev] = prof:total(ev) end
  for fn in prof:functions() do fns[#fns + 1] = fn.name end
  local parts = 0
  for _ in prof:parts() do parts = parts + 1 end
  return { events = prof.events, totals = totals, fns = fns, parts = parts, warnings = prof:warnings() }
end

local function lines_of(prof)
  local out = {}
  for l in prof:lines() do out[#out + 1] = { l.line, l:cost(1) } end
  return out
end

local function events_line(n, prefix)
  local t = {}
  for i = 1, n do t[i] = (prefix or "e") .. i end
  return "events: " .. concat(t, " ") .. "\n"
end

-- The shape of a profile that loaded with one part, no warnings.
local function ok(events, totals, fns, extra)
  local s = { events = events, totals = totals, fns = fns, parts = 1, warnings = {} }
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

local NOEV = "m.out: no events: line: not a callgrind profile"
local E1 = "events: Ir\nfn=a\n"  -- lines 1-2: the body starts at line 3

-- { description, text, err = "m.out:LINE: message" } or
-- { description, text, loads = shape [, check = function(prof)] }
local cases = {
  -- truncated lines of every kind
  { "a bare key with no separator", "fn\n", lenient_err = NOEV,
    err = "m.out:1: expected a cost, name or header line, found 'fn'" },
  { "a truncated header key", "event\n", lenient_err = NOEV,
    err = "m.out:1: expected a cost, name or header line, found 'event'" },
  { "a line that is only '='", "=5\n", lenient_err = NOEV,
    err = "m.out:1: expected a cost, name or header line, found '=5'" },
  { "events: with no name", "events:\n", lenient_err = NOEV, err = "m.out:1: events: lists no event" },
  { "version: with no number", "version:\n", err = "m.out:1: expected a version number, found ''" },
  { "pid: with no number", "pid:\n", lenient_err = NOEV, err = "m.out:1: expected a number for pid:, found nothing" },
  { "part: with a word", "part: x\n", lenient_err = NOEV, err = "m.out:1: expected a number for part:, found 'x'" },
  { "pid: with two numbers (the whole value is quoted)", "pid: 5 6  \n",
    lenient_err = NOEV, err = "m.out:1: expected a number for pid:, found '5 6'" },
  { "event: with no name", "event: \n", lenient_err = NOEV, err = "m.out:1: event: line names no event" },
  { "event: with '=' and no formula", "event: A = \n", lenient_err = NOEV,
    err = "m.out:1: event: A has '=' but no formula" },
  { "event: with junk after the name", "event: A x\n",
    lenient_err = NOEV, err = "m.out:1: expected '=' or ':' after the event name, found 'x'" },
  { "calls= with nothing", E1 .. "1 5\ncfn=b\ncalls=\n3 4\n",
    err = "m.out:5: expected a number for the call count, found nothing" },
  { "calls= without cfn=", E1 .. "1 5\ncalls=1 2\n3 4\n", err = "m.out:4: calls= without a cfn= line before it" },
  { "jump= with nothing", E1 .. "1 5\njump=\n4\n",
    err = "m.out:4: expected a number for the jump count, found nothing" },
  { "jump= with a word", E1 .. "1 5\njump=x\n4\n", err = "m.out:4: expected a number for the jump count, found 'x'" },
  { "jcnd= with one count", E1 .. "1 5\njcnd=3\n4\n",
    err = "m.out:4: expected a number for the second jcnd= count, found nothing" },
  { "jcnd= cut after the slash", E1 .. "1 5\njcnd=3/\n4\n",
    err = "m.out:4: expected a number for the second jcnd= count, found nothing" },
  { "jcnd= with a word for the second count", E1 .. "1 5\njcnd=3/x 9\n4\n",
    err = "m.out:4: expected a number for the second jcnd= count, found 'x'" },
  { "a position cut to '-'", E1 .. "- 5\n", err = "m.out:3: expected a number for position 'line', found '-'" },
  { "a position cut to '+'", E1 .. "+ 5\n", err = "m.out:3: expected a number for position 'line', found '+'" },
  { "a cost cut to '0x'", E1 .. "1 0x\n", err = "m.out:3: expected a number for cost 1, found '0x'" },
  { "'*' glued to a number", E1 .. "*5 5\n", err = "m.out:3: expected a number for position 'line', found '*5'" },
  { "a cost line before any events:", "fn=a\n1 5\n", lenient_err = NOEV,
    err = "m.out:2: cost line before any events: line" },
  { "summary: before any events:", "summary: 1\n", lenient_err = NOEV,
    err = "m.out:1: summary: before any events: line" },
  { "a position-only line (all costs 0)", E1 .. "1\n", loads = ok({ "Ir" }, { Ir = 0 }, { "a" }) },
  { "'*' alone: the base position, no costs", E1 .. "*\n", loads = ok({ "Ir" }, { Ir = 0 }, { "a" }) },
  { "an empty positions: (costs only)", "positions:\nevents: Ir\nfn=a\n5\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" }) },
  { "empty desc:, cmd:, fn= and cfn=", "desc:\ncmd:\nevents: Ir\nfn=\n1 5\ncfn=\ncalls=1 1\n1 2\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "" }) },
  { "an empty summary: (all zero, reported)", E1 .. "1 5\nsummary:\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" },
      { warnings = { "m.out:4: summary: does not match the cost lines: Ir 0 written, 5 summed" } }) },
  { "an empty totals: (all zero, reported)", E1 .. "1 5\ntotals:\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" },
      { warnings = { "m.out:4: totals: does not match the cost lines: Ir 0 written, 5 summed" } }) },
  { "cfn= as the last line", E1 .. "1 5\ncfn=b\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" },
      { warnings = { "m.out:4: the file ends after a call's target with no calls= line (truncated?)" } }) },

  -- bad numbers
  { "more costs than events", E1 .. "1 5 6\n", err = "m.out:3: cost line has 2 costs but events: lists 1" },
  { "a word for a cost", E1 .. "1 x\n", err = "m.out:3: expected a number for cost 1, found 'x'" },
  { "a word for a position", E1 .. "x 1\n", err = "m.out:3: expected a cost, name or header line, found 'x 1'" },
  { "a relative cost", E1 .. "1 +5\n", err = "m.out:3: cost 1 is '+5': costs cannot be relative, only positions" },
  { "a '*' cost", E1 .. "1 *\n", err = "m.out:3: cost 1 is '*': costs cannot be relative, only positions" },
  { "a negative call count", E1 .. "1 5\ncfn=b\ncalls=-1 1\n3 4\n",
    err = "m.out:5: expected a number for the call count, found '-1'" },
  { "a negative pid", "pid: -1\n", lenient_err = NOEV, err = "m.out:1: expected a number for pid:, found '-1'" },
  { "a word in summary:", "events: Ir\nsummary: x\n", err = "m.out:2: expected a number for summary:, found 'x'" },

  -- 64 bits: 2^64 overflows everywhere; -2^63 and 2^63-1 are costs; a cost
  -- from 2^63 to 2^64-1 is a counter written unsigned and keeps its bits
  { "a cost of 2^64", E1 .. "1 18446744073709551616\n",
    err = "m.out:3: cost 1 '18446744073709551616' does not fit in 64 bits" },
  { "a cost of 2^63 as the cost with its bits, -2^63", E1 .. "1 9223372036854775808\n",
    loads = ok({ "Ir" }, { Ir = MIN }, { "a" }) },
  { "valgrind's sysTime delta 18446744073403033508 as 2^64 less it, -306518108",
    E1 .. "1 18446744073403033508\n2 306518110\n",
    loads = ok({ "Ir" }, { Ir = 2 }, { "a" }),
    check = function(prof) assert.are.same({ { 1, -306518108 }, { 2, 306518110 } }, lines_of(prof)) end },
  { "a summary: with a cost above 2^63 that matches the lines",
    "events: Ir\nsummary: 18446744073403033513\nfn=a\n1 18446744073403033508\n2 5\n",
    loads = ok({ "Ir" }, { Ir = -306518103 }, { "a" }, { warnings = {} }) },
  { "a cost of -2^63-1", E1 .. "1 -9223372036854775809\n",
    err = "m.out:3: cost 1 '-9223372036854775809' does not fit in 64 bits" },
  { "a hex cost of 2^64", E1 .. "1 0x10000000000000000\n",
    err = "m.out:3: cost 1 '0x10000000000000000' does not fit in 64 bits" },
  { "a hex cost of 2^64-1 as -1", E1 .. "1 0xffffffffffffffff\n", loads = ok({ "Ir" }, { Ir = -1 }, { "a" }) },
  { "a cost of exactly 2^63-1", E1 .. "1 9223372036854775807\n", loads = ok({ "Ir" }, { Ir = MAX }, { "a" }) },
  { "a cost of exactly -2^63", E1 .. "1 -9223372036854775808\n", loads = ok({ "Ir" }, { Ir = MIN }, { "a" }) },
  { "a hex cost of exactly 2^63-1", E1 .. "1 0x7fffffffffffffff\n", loads = ok({ "Ir" }, { Ir = MAX }, { "a" }) },
  { "a position of 2^64", E1 .. "18446744073709551616 1\n",
    err = "m.out:3: position 'line' '18446744073709551616' does not fit in 64 bits" },
  { "a relative position past 2^64-1", "positions: instr\n" .. E1 .. "0xffffffffffffffff 1\n+1 1\n",
    err = "m.out:5: position 'instr' '+1' does not fit in 64 bits" },
  { "an address of 2^64-1 (comes out as -1: compare with math.ult)",
    "positions: instr\n" .. E1 .. "0xffffffffffffffff 1\n",
    loads = ok({ "Ir" }, { Ir = 1 }, { "a" }),
    check = function(prof)
      local l = prof:lines()()
      assert.are.equal(-1, l.addr)
      assert.are.equal("ffffffffffffffff", ("%x"):format(l.addr))
    end },
  { "a call count of 2^64", E1 .. "1 5\ncfn=b\ncalls=18446744073709551616 1\n3 4\n",
    err = "m.out:5: the call count '18446744073709551616' does not fit in 64 bits" },
  { "a call count of 2^64-1 (unsigned: a float above 2^63-1, never negative)",
    E1 .. "1 5\ncfn=b\ncalls=18446744073709551615 1\n3 4\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a", "b" }),
    check = function(prof)
      local c = prof:calls()()
      assert.are.equal(18446744073709551615.0, c.count)
      assert.are.equal("float", math.type(c.count))
      assert.is_true(c.count > MAX)
      assert.are.equal(4, c:cost("Ir"))
    end },
  { "a jump count of 2^64", E1 .. "1 5\njump=18446744073709551616 1\n2\n",
    err = "m.out:4: the jump count '18446744073709551616' does not fit in 64 bits" },
  { "a pid of 2^63 (pids are signed)", "pid: 9223372036854775808\n",
    lenient_err = NOEV, err = "m.out:1: pid: '9223372036854775808' does not fit in 64 bits" },
  { "a thread of 2^64", "thread: 18446744073709551616\n",
    lenient_err = NOEV, err = "m.out:1: thread: '18446744073709551616' does not fit in 64 bits" },
  { "a pid of exactly 2^63-1", "pid: 9223372036854775807\nevents: Ir\n", loads = ok({ "Ir" }, { Ir = 0 }, {}),
    check = function(prof) assert.are.equal(MAX, prof.pid) end },
  { "a summary: value of 2^64", "events: Ir\nsummary: 18446744073709551616\n",
    err = "m.out:2: summary: '18446744073709551616' does not fit in 64 bits" },
  { "an id of 2^64", "events: Ir\nfn=(18446744073709551616) x\n1 1\n",
    err = "m.out:2: id (18446744073709551616) is above the limit 16777215" },
  { "an id of 16777216 (above the limit)", "events: Ir\nfn=(16777216) x\n1 1\n",
    err = "m.out:2: id (16777216) is above the limit 16777215" },
  { "an id above the limit inside a composite name", "events: Ir\nfn=(1) a\nfn=(16777216)'(1)\n1 2\n",
    err = "m.out:3: id (16777216) is above the limit 16777215" },
  { "an id of exactly 16777215", "events: Ir\nfn=(16777215) x\n1 1\nfn=(16777215)\n2 2\n",
    loads = ok({ "Ir" }, { Ir = 3 }, { "x" }) },

  -- sums that overflow
  { "self costs whose sum overflows", E1 .. "1 9223372036854775807\n2 1\n",
    err = "m.out:4: the sum of Ir costs does not fit in 64 bits" },
  { "negative costs whose sum overflows", E1 .. "1 -9223372036854775808\n2 -1\n",
    err = "m.out:4: the sum of Ir costs does not fit in 64 bits" },
  { "two functions whose part total overflows", E1 .. "1 9223372036854775807\nfn=b\n2 1\n",
    err = "m.out:5: the sum of Ir costs does not fit in 64 bits" },
  { "two parts whose profile total overflows", E1 .. "1 9223372036854775807\nevents: Ir\nfn=b\n1 1\n",
    err = "m.out:6: the sum of Ir costs does not fit in 64 bits" },
  { "sums that reach 2^63-1 exactly after a negative cost", E1 .. "1 9223372036854775807\n2 -7\n3 7\n",
    loads = ok({ "Ir" }, { Ir = MAX }, { "a" }) },

  -- calls and jumps without the line they need
  { "calls= at end of file", E1 .. "1 5\ncfn=b\ncalls=1 2\n",
    err = "m.out:5: calls= at end of file, with no cost line after it",
    lenient = { "m.out:5: calls= skipped: the file ends before its cost line" } },
  { "calls= followed by a name line", E1 .. "1 5\ncfn=b\ncalls=1 2\nfn=c\n",
    err = "m.out:6: expected the cost line of the calls= at line 5, found 'fn=c'",
    lenient = { "m.out:5: calls= skipped: the line after it is not its cost line" } },
  { "calls= followed by another calls=", E1 .. "1 5\ncfn=b\ncalls=1 2\ncalls=1 2\n",
    err = "m.out:6: expected the cost line of the calls= at line 5, found 'calls=1 2'",
    lenient = { "m.out:5: calls= skipped: the line after it is not its cost line",
                "m.out:6: calls= without a cfn= line before it" } },  -- cfn= named the first call only
  { "a call target below 0", E1 .. "1 5\ncfn=b\ncalls=1 -5\n3 4\n",
    err = "m.out:5: target position '-5' goes below 0" },
  { "jump= at end of file", E1 .. "1 5\njump=3 9\n", err = "m.out:4: jump at end of file, with no source line after it",
    lenient = { "m.out:4: jump skipped: the file ends before its source line" } },
  { "jump= without its source line", E1 .. "1 5\njump=3 9\nfn=b\n",
    err = "m.out:5: expected the source line of the jump at line 4, found 'fn=b'",
    lenient = { "m.out:4: jump skipped: the line after it is not its source line" } },
  { "a jump source line with costs", E1 .. "1 5\njump=3 9\n4 1\n",
    err = "m.out:5: the source line of jump= at line 4 has costs" },

  -- headers: twice, versions, limits
  { "events: twice in one part", "events: Ir\nevents: Dr\n",
    err = "m.out:2: events: given twice in one part (first at line 1)" },
  { "an event twice in one events: line", "events: A B B\n", lenient_err = NOEV,
    err = "m.out:1: events: lists 'B' twice" },
  { "positions: twice in one part", "positions: line\npositions: line\n",
    lenient_err = NOEV, err = "m.out:2: positions: given twice in one part (first at line 1)" },
  { "a position column twice", "positions: line line\n", lenient_err = NOEV,
    err = "m.out:1: positions: lists 'line' twice" },
  { "9 position columns (over the limit of 8)", "positions: a b c d e f g h i\n",
    lenient_err = NOEV, err = "m.out:1: positions: lists more than 8 columns" },
  { "8 position columns (at the limit)", "positions: a b c d e f g line\n" .. E1 .. "1 2 3 4 5 6 7 8 9\n",
    loads = ok({ "Ir" }, { Ir = 9 }, { "a" }),
    check = function(prof) assert.are.same({ { 8, 9 } }, lines_of(prof)) end },
  { "version: 2", "version: 2\nevents: Ir\n",
    err = "m.out:1: version 2 is not supported (this reader knows versions 0 and 1)" },
  { "version: abc", "version: abc\n", err = "m.out:1: expected a version number, found 'abc'" },
  { "version: 1.5 (the major version counts)", "version: 1.5\nevents: Ir\n", loads = ok({ "Ir" }, { Ir = 0 }, {}),
    check = function(prof) assert.are.equal(1, prof.version) end },
  { "summary: with too many values", "events: Ir\nsummary: 1 2\n",
    err = "m.out:2: summary: has 2 values but events: lists 1" },
  { "totals: with too many values", "events: Ir Dr\ntotals: 1 2 3 4\n",
    err = "m.out:2: totals: has 4 values but events: lists 2" },
  { "summary: twice", E1 .. "1 5\nsummary: 6\nsummary: 5\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" },
      { warnings = { "m.out:5: summary: given twice in one part; the later one is kept" } }) },
  { "10^5 events in one events: line", events_line(100000), lenient_err = NOEV,
    err = "m.out:1: events: lists more than 4096 events" },
  { "4097 events in one events: line", events_line(4097), lenient_err = NOEV,
    err = "m.out:1: events: lists more than 4096 events" },
  { "exactly 4096 events", events_line(4096) .. "fn=a\n1 " .. rep("1 ", 4095) .. "7\n",
    loads = { parts = 1, warnings = {}, fns = { "a" } },
    check = function(prof)
      assert.are.equal(4096, #prof.events)
      assert.are.equal("e4096", prof.events[4096])
      assert.are.equal(7, prof:total("e4096"))
      assert.are.equal(1, prof:total(1))
    end },
  { "parts whose events: lines bring the profile past 4096 distinct events",
    events_line(4096) .. "fn=a\n1 1\nevents: e1 x\n",
    err = "m.out:4: events: brings the profile to more than 4096 distinct events" },
  { "a name over 1 MiB", "events: Ir\nfn=" .. rep("n", 1048577) .. "\n1 1\n",
    err = "m.out:2: name longer than 1048576 bytes" },
  { "a name of exactly 1 MiB", "events: Ir\nfn=" .. rep("n", 1048576) .. "\n1 1\n",
    loads = { events = { "Ir" }, totals = { Ir = 1 }, fns = { rep("n", 1048576) }, parts = 1, warnings = {} } },

  -- ids
  { "a function id never defined", "events: Ir\nfn=(1)\n1 5\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "(1)" },
      { warnings = { "m.out:2: function id (1) is used but never defined" } }) },
  { "a file id never defined", "events: Ir\nfl=(1)\nfn=a\n1 5\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" }, { warnings = { "m.out:2: file id (1) is used but never defined" } }),
    check = function(prof) assert.are.equal("(1)", prof:func("a").file) end },
  { "an object id never defined", "events: Ir\nob=(1)\nfn=a\n1 5\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" }, { warnings = { "m.out:2: object id (1) is used but never defined" } }),
    check = function(prof) assert.are.equal("(1)", prof:func("a").object) end },
  { "a callee id never defined", E1 .. "1 5\ncfn=(7)\ncalls=1 1\n1 3\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a", "(7)" },
      { warnings = { "m.out:4: function id (7) is used but never defined" } }),
    check = function(prof) assert.are.equal(3, prof:calls()():cost("Ir")) end },
  { "an id used before a separator and defined only after it (ids are forgotten there)",
    "events: Ir\nfn=(3)\n1 2\n==== NEW PROFILING FILE ====\nevents: Ir\nfn=(3) x\n1 1\n",
    loads = { events = { "Ir" }, totals = { Ir = 3 }, fns = { "(3)", "x" }, parts = 2,
              warnings = { "m.out:2: function id (3) is used but never defined" } } },
  { "'(1' and '()' are plain names", "events: Ir\nfn=(1\n1 5\nfn=()\n2 6\n",
    loads = ok({ "Ir" }, { Ir = 11 }, { "(1", "()" }) },

  -- bytes: binary garbage, NUL, CR, huge lines
  { "binary garbage", "\1\2\3\255\n",
    lenient_err = NOEV, err = "m.out:1: expected a cost, name or header line, found '\\x01\\x02\\x03\\xff'" },
  { "a NUL byte inside a cost", E1 .. "1 5\0\n", err = "m.out:3: expected a number for cost 1, found '5\\x00'" },
  { "a NUL byte inside a position", E1 .. "1\0 5\n",
    err = "m.out:3: expected a number for position 'line', found '1\\x00'" },
  { "a NUL byte inside a name (kept)", "events: Ir\nfn=a\0b\n1 5\n", loads = ok({ "Ir" }, { Ir = 5 }, { "a\0b" }),
    check = function(prof) assert.are.equal(5, assert(prof:func("a\0b")):self("Ir")) end },
  { "a 10 MB line of digits", E1 .. "1 " .. rep("1", 10 * 1024 * 1024) .. "\n",
    err = "m.out:3: cost 1 '" .. rep("1", 60) .. "...' does not fit in 64 bits" },
  { "a 10 MB comment line", E1 .. "1 5\n#" .. rep("x", 10 * 1024 * 1024) .. "\n2 6\n",
    loads = ok({ "Ir" }, { Ir = 11 }, { "a" }) },
  { "an empty file", "", err = NOEV },
  { "only blank lines and comments", "\n  \n\t\n# x\n", err = NOEV },
  { "only headers", "version: 1\ncreator: x\npositions: instr line\nevents: Ir Dr\n",
    loads = ok({ "Ir", "Dr" }, { Ir = 0, Dr = 0 }, {}) },
  { "CRLF everywhere", "events: Ir\r\nfn=a\r\n1 5\r\ncfn=b\r\ncalls=1 2\r\n3 4\r\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a", "b" }),
    check = function(prof) assert.are.equal(4, prof:calls()():cost(1)) end },
  { "a lone CR is not a line end (events: names may hold it)", "events: Ir\rfn=a\r1 5\r",
    loads = ok({ "Ir\rfn=a\r1", "5" }, { ["Ir\rfn=a\r1"] = 0, ["5"] = 0 }, {}) },
  { "a CR inside a cost", E1 .. "1 5\r6\n", err = "m.out:3: expected a number for cost 1, found '5\\x0d6'" },
  { "tabs and runs of blanks, no final newline", "events:\tIr \t Dr\nfn=a\n1\t\t5   6  ",
    loads = ok({ "Ir", "Dr" }, { Ir = 5, Dr = 6 }, { "a" }) },

  -- relative positions before any absolute one: the base is 0
  { "+5 first is 5", E1 .. "+5 5\n", loads = ok({ "Ir" }, { Ir = 5 }, { "a" }),
    check = function(prof) assert.are.same({ { 5, 5 } }, lines_of(prof)) end },
  { "* first is 0", E1 .. "* 5\n", loads = ok({ "Ir" }, { Ir = 5 }, { "a" }),
    check = function(prof) assert.are.same({ { 0, 5 } }, lines_of(prof)) end },
  { "-1 first goes below 0", E1 .. "-1 5\n", err = "m.out:3: position 'line' '-1' goes below 0" },

  -- separators
  { "a separator line with nothing after it", E1 .. "1 5\n==== NEW PROFILING FILE ====\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" }, { parts = 2 }) },
  { "a separator as the only line", "==== NEW PROFILING FILE", err = NOEV },
  { "a line of '=' that is not the separator", E1 .. "1 5\n====\n",
    err = "m.out:4: expected a cost, name or header line, found '===='" },
  { "ids forgotten at a separator", "events: Ir\nfl=(1) a.c\nfn=a\n1 1\n==== NEW PROFILING FILE ====\n"
    .. "events: Ir\nfl=(1)\nfn=b\n1 2\n",
    loads = { events = { "Ir" }, totals = { Ir = 3 }, fns = { "a", "b" }, parts = 2,
              warnings = { "m.out:7: file id (1) is used but never defined" } },
    check = function(prof)
      assert.are.equal("a.c", prof:func("a").file)
      assert.are.equal("(1)", prof:func("b").file)
    end },

  -- unknown lines are skipped with a warning, even when not lenient
  { "unknown key=value and key: value lines", E1 .. "foo=bar\nfoo: bar\n1 5\n",
    loads = ok({ "Ir" }, { Ir = 5 }, { "a" },
      { warnings = { "m.out:3: unknown line 'foo=bar' skipped", "m.out:4: unknown line 'foo: bar' skipped" } }) },
}

describe("callgrind.parse on malformed input", function()
  it("has at least 60 cases", function()
    assert.is_true(#cases >= 60, #cases .. " cases")
  end)

  for _, c in ipairs(cases) do
    local what, text = c[1], c[2]
    if c.err then
      it("fails on " .. what .. ": " .. c.err, function()
        local prof, err = callgrind.parse(text, "m.out")
        assert.is_nil(prof)
        assert.are.equal(c.err, err)
        -- lenient mode skips the same line with the same message, or fails
        -- the same way where the error is not about one line; a call or jump
        -- missing its next line is dropped with a warning of its own
        local lp, lerr = callgrind.parse(text, "m.out", { lenient = true })
        if c.lenient then
          assert.is_not_nil(lp, lerr)
          assert.are.same(c.lenient, lp:warnings())
        elseif lp then
          local found = false
          for _, w in ipairs(lp:warnings()) do found = found or w == c.err end
          assert.is_true(found, "lenient warnings lack " .. c.err)
        else
          -- lenient_err: the bad line was the only events: line, so what is
          -- left is no callgrind profile
          assert.are.equal(c.lenient_err or c.err, lerr)
        end
      end)
    else
      it("loads " .. what, function()
        local prof, err = callgrind.parse(text, "m.out")
        assert.is_not_nil(prof, err)
        local got, want = shape(prof), c.loads
        for k, v in pairs(want) do assert.are.same(v, got[k], k) end
        if c.check then c.check(prof) end
        prof:close()
      end)
    end
  end
end)

describe("lenient mode", function()
  local function lenient(text)
    return assert(callgrind.parse(text, "m.out", { lenient = true }))
  end

  it("skips exactly the bad cost lines and keeps the good lines' totals", function()
    local prof = lenient(concat({
      "events: Ir Dr",   -- 1
      "fn=main",         -- 2
      "1 10 1",          -- 3  Ir 10, Dr 1
      "2 x",             -- 4  bad cost: skipped
      "3 5 5 5",         -- 5  too many costs: skipped
      "4 7",             -- 6  Ir 7, Dr 0 (dropped trailing zero)
      "cfn=f",           -- 7
      "calls=1 50",      -- 8
      "5 100 10",        -- 9  the call's inclusive cost, not self
      "6 1 1",           -- 10 Ir 1, Dr 1
    }, "\n") .. "\n")
    assert.are.same({ Ir = 18, Dr = 2 }, shape(prof).totals)
    assert.are.same({ "m.out:4: expected a number for cost 1, found 'x'",
                      "m.out:5: cost line has 3 costs but events: lists 2" }, prof:warnings())
    assert.are.same({ Ir = 18, Dr = 2 }, prof:func("main"):self())
    local c = prof:calls()()
    assert.are.same({ 1, 5, 50, 100, 10 }, { c.count, c.line, c.target_line, c:cost("Ir"), c:cost("Dr") })
    assert.are.same({ { 1, 10 }, { 4, 7 }, { 6, 1 } }, lines_of(prof))
  end)

  it("takes a bad calls= line's cost line with it", function()
    local prof = lenient("events: Ir\nfn=main\n1 10\ncfn=f\ncalls=x 5\n6 100\n7 3\n")
    assert.are.same({ Ir = 13 }, shape(prof).totals)
    assert.are.same({ "m.out:5: expected a number for the call count, found 'x'",
                      "m.out:6: skipped with the bad line 5 before it" }, prof:warnings())
    assert.is_nil(prof:calls()())
    assert.are.same({ { 1, 10 }, { 7, 3 } }, lines_of(prof))
  end)

  it("drops a calls= whose next line is not its cost line, and one at end of file", function()
    local prof = lenient("events: Ir\nfn=main\n1 10\ncfn=f\ncalls=2 5\nfn=g\n8 4\ncfn=h\ncalls=1 1\n")
    -- the callees stay known as functions (named by cfn=), with no cost
    assert.are.same({ events = { "Ir" }, totals = { Ir = 14 }, fns = { "main", "f", "g", "h" }, parts = 1,
                      warnings = { "m.out:5: calls= skipped: the line after it is not its cost line",
                                   "m.out:9: calls= skipped: the file ends before its cost line" } }, shape(prof))
    assert.is_nil(prof:calls()())
    assert.are.equal(4, prof:func("g"):self("Ir"))
  end)

  it("does not move the relative base or start a part for a skipped line", function()
    local prof = lenient(concat({
      "events: Ir",      -- 1
      "fn=a",            -- 2
      "10 1",            -- 3  line 10
      "+2 x",            -- 4  skipped: the base stays 10
      "+1 2",            -- 5  line 11
      "events: Ir Ir",   -- 6  skipped: no new part, base still 11
      "+1 3",            -- 7  line 12
      "positions: a a b c d e f g h i", -- 8 skipped (9 columns)
      "+1 4",            -- 9  line 13
    }, "\n") .. "\n")
    assert.are.same({ { 10, 1 }, { 11, 2 }, { 12, 3 }, { 13, 4 } }, lines_of(prof))
    assert.are.same({ events = { "Ir" }, totals = { Ir = 10 }, fns = { "a" }, parts = 1,
                      warnings = { "m.out:4: expected a number for cost 1, found 'x'",
                                   "m.out:6: events: lists 'Ir' twice",
                                   "m.out:8: positions: lists more than 8 columns" } }, shape(prof))
  end)

  it("leaves no event of a skipped events: line in the profile", function()
    local prof = lenient("events: A B B\nevents: Ir\nfn=a\n1 4\n")
    assert.are.same({ events = { "Ir" }, totals = { Ir = 4 }, fns = { "a" }, parts = 1,
                      warnings = { "m.out:1: events: lists 'B' twice" } }, shape(prof))
  end)

  it("skips a jump without its source line, garbage and unknown lines", function()
    local prof = lenient("events: Ir\nfn=a\n1 5\njump=3 9\n\1\2garbage\n2 6\nfoo=bar\n3 -1\n")
    assert.are.same({ events = { "Ir" }, totals = { Ir = 10 }, fns = { "a" }, parts = 1,
                      warnings = { "m.out:4: jump skipped: the line after it is not its source line",
                                   "m.out:5: expected a cost, name or header line, found '\\x01\\x02garbage'",
                                   "m.out:7: unknown line 'foo=bar' skipped" } }, shape(prof))
    assert.is_nil(prof:jumps()())
    assert.are.same({ { 1, 5 }, { 2, 6 }, { 3, -1 } }, lines_of(prof))
  end)

  it("takes a bad jcnd= line's source line with it", function()
    local prof = lenient("events: Ir\nfn=a\n1 5\njcnd=3\n4\n5 1\n")
    assert.are.same({ Ir = 6 }, shape(prof).totals)
    assert.are.same({ "m.out:4: expected a number for the second jcnd= count, found nothing",
                      "m.out:5: skipped with the bad line 4 before it" }, prof:warnings())
    assert.are.same({ { 1, 5 }, { 5, 1 } }, lines_of(prof))
  end)

  it("skips the cost line whose sum would overflow and keeps the rest exact", function()
    local prof = lenient("events: Ir\nfn=a\n1 9223372036854775807\n2 1\n3 -7\n4 7\n"
                         .. "events: Ir\nfn=b\n1 1\n")
    assert.are.same({ events = { "Ir" }, totals = { Ir = MAX }, fns = { "a", "b" }, parts = 2,
                      warnings = { "m.out:4: the sum of Ir costs does not fit in 64 bits",
                                   "m.out:9: the sum of Ir costs does not fit in 64 bits" } }, shape(prof))
    assert.are.equal(MAX, prof:func("a"):self("Ir"))
    assert.are.equal(0, prof:func("b"):self("Ir"))
  end)

  it("still fails on a version it does not know", function()
    assert.are.same({ nil, "m.out:1: version 2 is not supported (this reader knows versions 0 and 1)", "format" },
                    { callgrind.parse("version: 2\nevents: Ir\n", "m.out", { lenient = true }) })
  end)

  it("lists the first 1000 warnings and counts the rest", function()
    local t = { "events: Ir", "fn=a" }
    for i = 1, 1500 do t[#t + 1] = i .. " x" end
    t[#t + 1] = "1 9"
    local prof = lenient(concat(t, "\n"))
    local w = prof:warnings()
    assert.are.equal(1001, #w)
    assert.are.equal("m.out:3: expected a number for cost 1, found 'x'", w[1])
    assert.are.equal("m.out:1002: expected a number for cost 1, found 'x'", w[1000])
    assert.are.equal("m.out: 500 more warnings not listed", w[1001])
    assert.are.equal(9, prof:total("Ir"))
  end)
end)

describe("callgrind.load on malformed files", function()
  local dir

  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "'"))
  end)

  teardown(function()
    os.execute("rm -rf '" .. dir .. "'")
  end)

  local function write(name, s)
    local path = dir .. "/" .. name
    local f = assert(io.open(path, "wb"))
    f:write(s)
    f:close()
    return path
  end

  it("names the file and the line of the error", function()
    local path = write("bad.out", "events: Ir\nfn=a\n1 5\n2 \0\n")
    assert.are.same({ nil, path .. ":4: expected a number for cost 1, found '\\x00'", "format" },
      { callgrind.load(path) })
  end)

  it("loads a file with NUL bytes and CRLF leniently, listing the bad lines", function()
    local path = write("mixed.out", "events: Ir\r\nfn=a\r\n1 5\r\n\0\0\0\r\n2 7\r\n")
    local prof = assert(callgrind.load(path, { lenient = true }))
    assert.are.equal(12, prof:total("Ir"))
    assert.are.same({ path .. ":4: expected a cost, name or header line, found '\\x00\\x00\\x00'" }, prof:warnings())
  end)

  it("refuses an empty file: \"empty file\"", function()
    local path = write("empty.out", "")
    assert.are.same({ nil, path .. ": empty file", "format" }, { callgrind.load(path) })
    assert.are.same({ nil, path .. ": empty file", "format" },
      { callgrind.load(path, { lenient = true }) })
  end)

  it("reports a directory and a missing file as I/O errors", function()
    assert.are.same({ nil, dir .. ": Is a directory", "io" }, { callgrind.load(dir) })
    assert.are.same({ nil, dir .. "/none: No such file or directory", "io" }, { callgrind.load(dir .. "/none") })
  end)
end)
