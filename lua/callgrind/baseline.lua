--- `callgrind.baseline`, the name of `callgrind.check.baseline` before 0.2.0: kept
-- for one release (CHANGES.md), then removed. Require the new name.
-- @module callgrind.baseline
return require "callgrind.check.baseline"
