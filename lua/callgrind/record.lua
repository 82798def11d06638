--- `callgrind.record`, the name of `callgrind.check.record` before 0.2.0: kept
-- for one release (CHANGES.md), then removed. Require the new name.
-- @module callgrind.record
return require "callgrind.check.record"
