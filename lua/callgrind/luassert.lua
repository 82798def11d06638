--- `callgrind.luassert`, the name of `callgrind.check.luassert` before 0.2.0: kept
-- for one release (CHANGES.md), then removed. Require the new name.
-- @module callgrind.luassert
return require "callgrind.check.luassert"
