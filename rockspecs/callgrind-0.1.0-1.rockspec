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
-- compressed input (gzip, zstd, xz): zlib, libzstd and liblzma, their
-- headers at build time, the libraries opened when a file first needs one
-- (libz.so.1, libzstd.so.1, liblzma.so.5, found as the system's loader finds
-- libraries) (pkg-config names: zlib, libzstd, liblzma; Debian: zlib1g-dev libzstd-dev
-- liblzma-dev; Fedora: zlib-devel libzstd-devel xz-devel). luarocks stops
-- with the name of the one it cannot find; ZLIB_DIR=..., ZSTD_DIR=...,
-- LZMA_DIR=... point it elsewhere. (A build without one of them: make
-- NO_ZSTD=1 and the like, see the README.)
external_dependencies = {
   ZLIB = { header = "zlib.h", library = "z" },
   ZSTD = { header = "zstd.h", library = "zstd" },
   LZMA = { header = "lzma.h", library = "lzma" },
}
-- The Makefile builds: `make rock-build` (the C module, every file of csrc/,
-- and the counting interpreter callgrind-lua5.4 where the installed Lua's
-- source can be had: apt-get source lua5.4 on Debian, with a deb-src entry;
-- otherwise the rock builds without it and says why), then `make
-- rock-install` into luarocks' directories: every module of lua/callgrind/,
-- callgrind/core.so, bin/callgrind-lua and the interpreter when built.
build = {
   type = "make",
   build_target = "rock-build",
   install_target = "rock-install",
   build_variables = {
      CFLAGS = "$(CFLAGS)",
      LUA_INCDIR = "$(LUA_INCDIR)",
      -- where external_dependencies found zlib, libzstd and liblzma
      ROCK_CPPFLAGS = "-I$(ZLIB_INCDIR) -I$(ZSTD_INCDIR) -I$(LZMA_INCDIR)",
      ROCK_LDFLAGS = "-L$(ZLIB_LIBDIR) -L$(ZSTD_LIBDIR) -L$(LZMA_LIBDIR)",
   },
   install_variables = {
      LUADIR = "$(LUADIR)",
      LIBDIR = "$(LIBDIR)",
      BINDIR = "$(BINDIR)",
   },
   -- the LuaLS definitions (README, "Editors"): types/callgrind/*.lua
   copy_directories = { "types" },
}
