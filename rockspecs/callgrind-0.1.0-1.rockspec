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
-- compressed input (gzip, zstd, xz): zlib, libzstd and liblzma, linked
-- (pkg-config names: zlib, libzstd, liblzma; Debian: zlib1g-dev libzstd-dev
-- liblzma-dev; Fedora: zlib-devel libzstd-devel xz-devel). luarocks stops
-- with the name of the one it cannot find; ZLIB_DIR=..., ZSTD_DIR=...,
-- LZMA_DIR=... point it elsewhere. (A build without one of them: make
-- NO_ZSTD=1 and the like, see the README.)
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
            "csrc/base/cg_mem.c", "csrc/binding/cg_lua.c", "csrc/binding/cg_lua_cost.c",
            "csrc/binding/cg_lua_fs.c", "csrc/binding/cg_lua_proc.c", "csrc/binding/cg_lua_func.c", "csrc/binding/cg_lua_handle.c",
            "csrc/binding/cg_lua_lines.c", "csrc/binding/cg_lua_load.c", "csrc/binding/cg_lua_profile.c",
            "csrc/binding/cg_lua_query.c", "csrc/binding/cg_lua_visuals.c", "csrc/binding/cg_lua_write.c",
            "csrc/model/cg_cursor.c", "csrc/model/cg_graph.c", "csrc/model/cg_model.c",
            "csrc/model/cg_names.c", "csrc/model/cg_query.c", "csrc/model/cg_stacks.c",
            "csrc/profiler/cg_prof.c", "csrc/profiler/cg_prof_collect.c", "csrc/profiler/cg_prof_lua54.c",
            "csrc/reader/cg_decompress.c", "csrc/reader/cg_folded.c", "csrc/reader/cg_load.c", "csrc/reader/cg_load_head.c",
            "csrc/reader/cg_load_lines.c", "csrc/reader/cg_load_names.c", "csrc/reader/cg_prescan.c",
            "csrc/reader/cg_source.c", "csrc/reader/cg_vec.c", "csrc/scan/cg_scan.c",
            "csrc/writer/cg_atomic.c", "csrc/writer/cg_deflate.c", "csrc/writer/cg_emit.c",
            "csrc/writer/cg_write.c",
         },
         incdirs = { "csrc/base", "csrc/scan", "csrc/model", "csrc/reader", "csrc/writer", "csrc/profiler", "csrc/binding", "$(ZLIB_INCDIR)", "$(ZSTD_INCDIR)", "$(LZMA_INCDIR)" },
         libdirs = { "$(ZLIB_LIBDIR)", "$(ZSTD_LIBDIR)", "$(LZMA_LIBDIR)" },
         libraries = { "z", "zstd", "lzma", "pthread" },
      },
      ["callgrind"] = "lua/callgrind/init.lua",
      ["callgrind.api"] = "lua/callgrind/api.lua",
      ["callgrind.args"] = "lua/callgrind/args.lua",
      ["callgrind.baseline"] = "lua/callgrind/baseline.lua",
      ["callgrind.check"] = "lua/callgrind/check.lua",
      ["callgrind.check.baseline"] = "lua/callgrind/check/baseline.lua",
      ["callgrind.check.diff"] = "lua/callgrind/check/diff.lua",
      ["callgrind.check.limits"] = "lua/callgrind/check/limits.lua",
      ["callgrind.check.luassert"] = "lua/callgrind/check/luassert.lua",
      ["callgrind.check.record"] = "lua/callgrind/check/record.lua",
      ["callgrind.check.run"] = "lua/callgrind/check/run.lua",
      ["callgrind.check.spread"] = "lua/callgrind/check/spread.lua",
      ["callgrind.cli"] = "lua/callgrind/cli/init.lua",
      ["callgrind.diff"] = "lua/callgrind/diff.lua",
      ["callgrind.encode"] = "lua/callgrind/encode.lua",
      ["callgrind.events"] = "lua/callgrind/events.lua",
      ["callgrind.export.dot"] = "lua/callgrind/export/dot.lua",
      ["callgrind.export.flame"] = "lua/callgrind/export/flame.lua",
      ["callgrind.export.html"] = "lua/callgrind/export/html.lua",
      ["callgrind.export.pprof"] = "lua/callgrind/export/pprof.lua",
      ["callgrind.export.stacks"] = "lua/callgrind/export/stacks.lua",
      ["callgrind.export.write"] = "lua/callgrind/export/write.lua",
      ["callgrind.help"] = "lua/callgrind/help.lua",
      ["callgrind.luassert"] = "lua/callgrind/luassert.lua",
      ["callgrind.model.annotate"] = "lua/callgrind/model/annotate.lua",
      ["callgrind.model.events"] = "lua/callgrind/model/events.lua",
      ["callgrind.model.graph"] = "lua/callgrind/model/graph.lua",
      ["callgrind.model.load"] = "lua/callgrind/model/load.lua",
      ["callgrind.model.query"] = "lua/callgrind/model/query.lua",
      ["callgrind.model.report"] = "lua/callgrind/model/report.lua",
      ["callgrind.model.show"] = "lua/callgrind/model/show.lua",
      ["callgrind.model.tree"] = "lua/callgrind/model/tree.lua",
      ["callgrind.profiler"] = "lua/callgrind/profiler/init.lua",
      ["callgrind.record"] = "lua/callgrind/record.lua",
      ["callgrind.run"] = "lua/callgrind/run.lua",
      ["callgrind.start"] = "lua/callgrind/start.lua",
      ["callgrind.util"] = "lua/callgrind/util.lua",
   },
   install = {
      bin = { ["callgrind-lua"] = "bin/callgrind-lua" },
   },
   -- the LuaLS definitions (README, "Editors"): types/callgrind/*.lua
   copy_directories = { "types" },
}
