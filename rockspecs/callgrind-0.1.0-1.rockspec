package = "callgrind"
version = "0.1.0-1"
source = {
   url = "git+file:///dev/null",
   tag = "v0.1.0",
}
description = {
   summary = "Read callgrind-format profiles and ask questions of them",
   detailed = [[
A Lua 5.4 library with a C core that loads profiles written by valgrind's
callgrind and cachegrind, Xdebug, pprof, pyprof2calltree and others, and
answers questions about functions, calls, lines and costs.
]],
   license = "MIT",
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
-- compressed input (gzip, zstd, xz); Debian: zlib1g-dev libzstd-dev liblzma-dev.
-- Their headers build the module; the libraries are opened (dlopen) when a
-- compressed file is first read, so they are not linked.
external_dependencies = {
   ZLIB = { header = "zlib.h", library = "z" },
   ZSTD = { header = "zstd.h", library = "zstd" },
   LZMA = { header = "lzma.h", library = "lzma" },
}
build = {
   type = "builtin",
   modules = {
      ["callgrind.core"] = {
         sources = {
            "csrc/lua/cg_lua.c", "csrc/lua/cg_lua_cost.c", "csrc/lua/cg_lua_func.c",
            "csrc/lua/cg_lua_handle.c", "csrc/lua/cg_lua_lines.c", "csrc/lua/cg_lua_load.c",
            "csrc/lua/cg_lua_profile.c", "csrc/lua/cg_lua_query.c", "csrc/lua/cg_lua_write.c",
            "csrc/model/cg_graph.c",
            "csrc/model/cg_mem.c", "csrc/model/cg_model.c", "csrc/model/cg_names.c",
            "csrc/model/cg_query.c", "csrc/model/cg_write.c", "csrc/profiler/cg_prof.c", "csrc/profiler/cg_prof_lua54.c",
            "csrc/reader/cg_cursor.c",
            "csrc/reader/cg_decompress.c", "csrc/reader/cg_load.c", "csrc/reader/cg_prescan.c",
            "csrc/reader/cg_scan.c", "csrc/reader/cg_source.c",
         },
         incdirs = { "csrc/reader", "csrc/model", "csrc/lua", "csrc/profiler", "$(ZLIB_INCDIR)", "$(ZSTD_INCDIR)", "$(LZMA_INCDIR)" },
         libraries = { "dl", "pthread" },
      },
      ["callgrind"] = "lua/callgrind/init.lua",
      ["callgrind.writer"] = "lua/callgrind/writer.lua",
      ["callgrind.run"] = "lua/callgrind/run.lua",
      ["callgrind.diff"] = "lua/callgrind/diff.lua",
      ["callgrind.check"] = "lua/callgrind/check.lua",
      ["callgrind.baseline"] = "lua/callgrind/baseline.lua",
      ["callgrind.luassert"] = "lua/callgrind/luassert.lua",
      ["callgrind.profiler"] = "lua/callgrind/profiler.lua",
      ["callgrind.start"] = "lua/callgrind/start.lua",
   },
}
