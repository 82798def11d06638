std = "lua54"
max_line_length = 120
files["spec"] = { std = "+busted" }
exclude_files = { "build" }
files["examples/perf"] = { std = "+busted" }
files["examples/busted"] = { std = "+busted" }
