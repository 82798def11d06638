#!/usr/bin/env lua5.4
-- A callgrind_annotate-like report, with inclusive costs that count
-- recursion once: what `callgrind-lua annotate` prints
-- (lua/callgrind/cli/init.lua; `callgrind-lua annotate --help` lists the options).
--
--   lua5.4 examples/annotate.lua FILE [options]
--     --event EV          event to sort by (default: the first; derived ones work: CEst, L1m ...)
--     --threshold PCT     list functions until PCT% of the total is covered (default 99)
--     --top N             at most N functions (default 50)
--     --inclusive         sort by inclusive cost instead of self cost
--     --tree=caller|callee  under each function, its callers or callees with their costs
--     --source FILE       annotate the lines of one source file (a path, a tail of it or a base name)
--     --root DIR          with --source, print the source text found under DIR
--
-- Run from the repository (it finds the library in lua/ and build/), or
-- with the library installed.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
os.exit(require("callgrind.cli").main({ "annotate", table.unpack(arg) }))
