#!/usr/bin/env lua5.4
-- Prints a profile's summary and its top functions by self cost: what
-- `callgrind-lua top FILE [N] [EVENT]` prints (lua/callgrind/cli/init.lua).
--   lua5.4 examples/top.lua callgrind.out.1234 [N] [EVENT]
-- Run from the repository (it finds the library in lua/ and build/), or
-- with the library installed.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
os.exit(require("callgrind.cli").main({ "top", table.unpack(arg) }))
