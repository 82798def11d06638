--- `callgrind.run`, the name of `callgrind.check.run` before 0.2.0: kept
-- for one release (CHANGES.md), then removed. Require the new name.
-- @module callgrind.run
return require "callgrind.check.run"
