--- `callgrind.events`, the name of `callgrind.model.events` before 0.2.0: kept
-- for one release (CHANGES.md), then removed. Require the new name.
-- @module callgrind.events
return require "callgrind.model.events"
