--- `callgrind.diff`, the name of `callgrind.check.diff` before 0.2.0: kept
-- for one release (CHANGES.md), then removed. Require the new name.
-- @module callgrind.diff
return require "callgrind.check.diff"
