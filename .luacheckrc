std = "lua54"
max_line_length = 120
files["spec"] = { std = "+busted" }
exclude_files = { "build" }
files["examples/perf"] = { std = "+busted" }
files["examples/busted"] = { std = "+busted" }
-- bin/callgrind-lua is a shell script and a Lua script: its shell part is
-- a long string Lua assigns to the global _
files["bin/callgrind-lua"] = { globals = { "_" } }
