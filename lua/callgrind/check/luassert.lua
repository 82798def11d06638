--- luassert assertions for performance tests. `require "callgrind.check.luassert"`
-- registers them with luassert's own `assert:register` and `say`, so they
-- work as `assert.cost_at_most(...)` and negated as
-- `assert.is_not.cost_at_most(...)`; a failure message is the check's own
-- message (what was measured, actual against the limit, by how much, the
-- profiles, how to accept new numbers), with no argument dump.
--
--  * `assert.cost_at_most(limit, target, ev [, kind])`: target a Function
--    (kind "inclusive" by default, or "self"), a Selection (sum of self
--    costs by default) or a Profile (total);
--  * `assert.no_regression(old, new, limits [, opts])`;
--  * `assert.within_baseline(name, prof, limits [, opts])`: the baseline
--    is saved on first use (with a notice on stderr) or when
--    `CALLGRIND_BASELINES=update`; under `CI` or
--    `CALLGRIND_BASELINES=require` a missing baseline fails;
--  * `assert.calls_at_most(limit, fn)`: calls into a function.
--
-- A function may be given as `{ prof, "name" }`: when the profile has no
-- such function the assertion fails naming it, with the closest names.
-- Misuse (a NaN limit, an unknown event) raises at the spec's own line,
-- naming the assertion.
--
-- Requiring it twice registers them once more (harmless). The module
-- returns the luassert `assert` it registered with.
-- @module callgrind.check.luassert
local luassert = require "luassert"
local say = require "say"
local check = require "callgrind.check.limits"
local baseline = require "callgrind.check.baseline"

-- Each assertion: its check, and the say keys of its two messages. The
-- check's message replaces the arguments, so say prints it as is.
local function register(name, run, negative_prefix)
  local pos, neg = "assertion." .. name .. ".positive", "assertion." .. name .. ".negative"
  say:set(pos, "%s")
  say:set(neg, negative_prefix .. "\n%s")
  luassert:register("assertion", name, function(_, arguments)
    local ok, message = run(table.unpack(arguments, 1, arguments.n))
    for i = 1, arguments.n do arguments[i] = nil end
    arguments[1], arguments.n, arguments.nofmt = message, 1, { true }
    return ok
  end, pos, neg)
end

register("cost_at_most", function(limit, target, ev, kind, opts)
  return check.cost_at_most(limit, target, ev, kind, opts)
end, "Expected the cost to exceed the limit, but it does not:")

register("calls_at_most", function(limit, fn, opts)
  return check.calls_at_most(limit, fn, opts)
end, "Expected the calls to exceed the limit, but they do not:")

register("no_regression", function(old, new, limits, opts)
  return check.no_regression(old, new, limits, opts)
end, "Expected a regression beyond the limits, but there is none:")

register("within_baseline", function(name, prof, limits, opts)
  local ok, message, saved = baseline.check(name, prof, limits, opts)
  if saved and not (opts and opts.quiet) then io.stderr:write(message, "\n") end
  return ok, message
end, "Expected a regression beyond the baseline's limits, but there is none:")

return luassert
