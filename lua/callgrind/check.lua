--- `callgrind.check`, the name of `callgrind.check.limits` before 0.2.0: kept
-- for one release (CHANGES.md), then removed. Require the new name.
-- @module callgrind.check
return require "callgrind.check.limits"
