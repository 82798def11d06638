# callgrind for Lua: build, test, lint, check, bench, demo, install.
# Every tool and path can be overridden: make LUA=lua5.4 CC=clang ...

LUA ?= lua5.4
LUA_VERSION ?= 5.4
BUSTED ?= busted
LUACHECK ?= luacheck
LUAROCKS ?= luarocks
CC ?= cc
PKG_CONFIG ?= pkg-config
LUA_INCDIR ?= $(shell $(PKG_CONFIG) --variable=includedir lua$(LUA_VERSION) 2>/dev/null || echo /usr/include)/lua$(LUA_VERSION)
BUILD ?= build
PREFIX ?= /usr/local
INSTALL_LMOD ?= $(PREFIX)/share/lua/$(LUA_VERSION)
INSTALL_CMOD ?= $(PREFIX)/lib/lua/$(LUA_VERSION)

WARN = -Wall -Wextra -pedantic -Wshadow -Wstrict-prototypes \
       -Wmissing-prototypes -Wcast-qual
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c99 $(WARN) -fPIC -fvisibility=hidden $(CFLAGS)
CPPFLAGS += -I$(LUA_INCDIR) $(CSRC_DIRS:%=-I%) $(COMPRESS_DEFS) $(ROCK_CPPFLAGS)
LDFLAGS ?=
# compressed input (csrc/reader/cg_decompress.c) and gzip output: zlib,
# libzstd and liblzma, their headers at build time, the libraries opened
# at their first use (csrc/base/cg_libs.c: dlopen of libz.so.1,
# libzstd.so.1, liblzma.so.5; a process that compresses nothing never
# maps them); NO_ZLIB=1, NO_ZSTD=1, NO_LZMA=1 build without one (its files
# then fail "path: zstd input needs a build with libzstd"); the load's
# worker thread (csrc/reader/cg_prescan.c): pthreads
NO_ZLIB ?=
NO_ZSTD ?=
NO_LZMA ?=
COMPRESS_DEFS = $(if $(NO_ZLIB),-DCG_NO_ZLIB) $(if $(NO_ZSTD),-DCG_NO_ZSTD) $(if $(NO_LZMA),-DCG_NO_LZMA)
LIBS ?= -ldl -lpthread
SHARED = -shared

# csrc/ by part, from the lowest floor up (an include only points down a
# floor, spec/layout_c_spec.lua): base (types, limits, memory), scan (the
# line scanner the reader and the cursor share), model (the profile, its
# cursor and queries), reader (bytes -> records -> model) and writer
# (emitter, profile writer, atomic files), profiler (the Lua debug hook and
# its Lua face), binding (Lua <-> C only, luaopen_callgrind_core). Only
# profiler/ and binding/ include lua.h.
CSRC_DIRS = csrc/base csrc/scan csrc/model csrc/reader csrc/writer csrc/profiler csrc/binding
SRC = $(wildcard $(CSRC_DIRS:%=%/*.c))
OBJ = $(SRC:csrc/%.c=$(BUILD)/obj/%.o)
MODULE = $(BUILD)/callgrind/core.so

# Debian packages each job needs; .ci/deps installs the missing ones
# (python3: spec/inclusive_spec.lua profiles the interpreter; lua-check:
# spec/vm_same_spec.lua runs luacheck; git: spec/docs_spec.lua's git
# ls-files; cmark, cmark-gfm: spec/escape_spec.lua renders the Markdown
# summary). spec/deps_spec.lua fails when a spec runs a command or
# requires a module that the list of its make target does not install.
DEPS_BUILD = gcc make pkgconf lua5.4 liblua5.4-dev zlib1g-dev libzstd-dev liblzma-dev
# make vm: the Lua source (apt-get source: dpkg-dev), patch, readline
DEPS_VM = $(DEPS_BUILD) dpkg-dev patch libreadline-dev
DEPS_TEST = $(DEPS_VM) lua-lpeg lua-busted valgrind perl gzip zstd xz-utils python3 lua5.1 graphviz golang-go \
  lua-check git cmark cmark-gfm lua-sql-sqlite3 lua-sql-postgres postgresql binutils
DEPS_DEMO = $(DEPS_BUILD) valgrind
DEPS_LINT = lua-check
DEPS_BENCH = $(DEPS_BUILD) valgrind g++ time perl lua-dkjson lua-check lua-sql-sqlite3 lua-sql-postgres postgresql lua-socket
DEPS_ROCK = luarocks
DEPS_FUZZ = $(DEPS_BUILD) clang libclang-rt-14-dev
# the HTML report in a real browser: Debian's chromium and node, and
# puppeteer-core from npm into $(BUILD)/node (not in git)
DEPS_BROWSER = $(DEPS_BUILD) lua-busted chromium firefox-esr nodejs lua-sql-sqlite3
PUPPETEER_CORE ?= puppeteer-core@24

.PHONY: vm vm-trixie test-vm vm-compare deps-vm all build test lint check check-werror check-asan memcheck bench demo \
        install uninstall rock-build rock-install clean deps-test deps-demo deps-lint deps-bench rock-test check-browser

all: $(MODULE)

# the same (without it, `make build` names the build directory: "Nothing
# to be done")
build: all

$(BUILD)/obj/%.o: csrc/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(MODULE): $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(SHARED) $(ALL_CFLAGS) $(LDFLAGS) $(ROCK_LDFLAGS) -o $@ $(OBJ) $(LIBS)

-include $(OBJ:.o=.d)

# The counting interpreter: the installed lua5.4's own source (or
# LUA_SRC=DIR|TARBALL) with csrc/vm/lua-<release>.patch (tools/vm_build.sh).
VM = $(BUILD)/bin/callgrind-lua5.4
vm: deps-vm
	@sh tools/vm_build.sh $(BUILD) $(CC)

# The same for Debian 13's Lua 5.4.7 (its source package, a deb-src entry
# for trixie), then spec/vm_spec.lua against it.
vm-trixie: deps-vm deps-test
	@LUA_DEB_SUITE=trixie sh tools/vm_build.sh $(BUILD)/trixie $(CC)
	@$(MAKE) --no-print-directory all
	CALLGRIND_VM=$(BUILD)/trixie/bin/callgrind-lua5.4 $(BUSTED) --lua=$(LUA) spec/vm_spec.lua

deps-vm:
	@sh .ci/deps $(DEPS_VM)
deps-test:
	@sh .ci/deps $(DEPS_TEST)
deps-demo:
	@sh .ci/deps $(DEPS_DEMO)
deps-lint:
	@sh .ci/deps $(DEPS_LINT)
deps-bench:
	@sh .ci/deps $(DEPS_BENCH)

# The specs, against this checkout (.busted points lpath/cpath at lua/ and
# $(BUILD)/): each spec file its own busted process, JOBS at once (the
# number of cores), a line per file as it ends, then busted's summary
# summed (tools/test_parallel.sh). BUSTED_ARGS given: one busted with
# them, as before (make test BUSTED_ARGS="spec/tree_spec.lua"). The core
# is built JOBS files at once first (15 s of a clean checkout's run, one
# at a time).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: deps-test
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@$(MAKE) --no-print-directory vm
	@if [ -n "$(BUSTED_ARGS)" ]; then \
	  echo "$(BUSTED) --lua=$(LUA) $(BUSTED_ARGS)"; $(BUSTED) --lua=$(LUA) $(BUSTED_ARGS); \
	else \
	  JOBS=$(JOBS) LUA=$(LUA) BUSTED=$(BUSTED) BUILD=$(BUILD) bash tools/test_parallel.sh; \
	fi

# The whole suite run by the counting interpreter (issue 29: it changes
# nothing but the counting), and Penlight's own tests under both
# interpreters with the same output.
test-vm: deps-test
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@$(MAKE) --no-print-directory vm
	@if [ -n "$(BUSTED_ARGS)" ]; then \
	  $(BUSTED) --lua=$(BUILD)/bin/callgrind-lua5.4 $(BUSTED_ARGS); \
	else \
	  JOBS=$(JOBS) LUA=$(BUILD)/bin/callgrind-lua5.4 BUSTED=$(BUSTED) BUILD=$(BUILD) bash tools/test_parallel.sh; \
	fi

vm-compare: deps-test
	@$(MAKE) --no-print-directory vm
	sh tools/vm_compare.sh $(BUILD)

# The HTML report opened in headless Chromium (spec/browser/): no console
# error, no network request, sorting, filtering, the numbers of a clicked
# function and of a diff against the API, the flame graph's zoom; the
# history's trend page (its charts, the steps marked, a click on one).
check-browser:
	@sh .ci/deps $(DEPS_BROWSER)
	@command -v npm >/dev/null || sh .ci/deps npm
	@$(MAKE) --no-print-directory all
	@# (again when PUPPETEER_CORE names another version than the one there)
	@test -f $(BUILD)/node/installed-$(PUPPETEER_CORE) || \
	  (mkdir -p $(BUILD)/node && cd $(BUILD)/node && npm install --no-audit --no-fund --silent $(PUPPETEER_CORE) && \
	   touch installed-$(PUPPETEER_CORE))
	NODE_PATH=$(BUILD)/node/node_modules $(BUSTED) --lua=$(LUA) --pattern=_browser spec/browser

lint: deps-lint
	$(LUACHECK) lua spec examples bench tools bin/callgrind-lua

# Zero warnings with -Werror, then the specs under ASan+UBSan and
# memcheck, then the long cases: the dump oracle's full set of runs.
check: deps-test
	$(MAKE) --no-print-directory check-werror
	$(MAKE) --no-print-directory check-asan
	$(MAKE) --no-print-directory memcheck
	$(MAKE) --no-print-directory check-long

# spec/dump_oracle_spec.lua with every interval and option set (33 pairs
# of valgrind runs, about 2 minutes; make test runs 11 of them), and
# spec/truth_spec.lua's slowest surfaces on every profile (make test: on
# the fresh ones and a tenth of the corpus's small files; about 2 minutes)
# and spec/stacks_prune_spec.lua's invariants on gprof2dot's three large
# files (make test: on the small ones; about 15 s), spec/compressed_spec.lua's
# two builds of the core without a library (about 15 s),
# spec/stack_record_spec.lua's round trip on every bench workload with
# both engines (make test: 6 of the 16; about 30 s), spec/writer_spec.lua's
# round trip of the corpus's files over 1 MB (make test: one) and
# spec/writer_dot_spec.lua's writers killed at 16 random points (make
# test: 4), spec/walks_deep_spec.lua's recursion 150,000 calls deep, and
# spec/inclusive_spec.lua's profile of cc1 (gcc -O2, 14 s under callgrind;
# make test: python3's and lua5.4's).
.PHONY: check-long
check-long: deps-test
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory vm
	CALLGRIND_DUMP_ORACLE=full $(BUSTED) --lua=$(LUA) spec/dump_oracle_spec.lua
	CALLGRIND_TRUTH=full $(BUSTED) --lua=$(LUA) spec/truth_spec.lua spec/stacks_prune_spec.lua
	CALLGRIND_RECORD=full $(BUSTED) --lua=$(LUA) spec/stack_record_spec.lua
	CALLGRIND_WRITER=full $(BUSTED) --lua=$(LUA) spec/writer_spec.lua spec/writer_dot_spec.lua
	CALLGRIND_DEEP=full $(BUSTED) --lua=$(LUA) spec/walks_deep_spec.lua
	CALLGRIND_INCLUSIVE=full $(BUSTED) --lua=$(LUA) spec/inclusive_spec.lua
	CALLGRIND_VM_LONG=full $(BUSTED) --lua=$(LUA) --filter="2.32" spec/vm_spec.lua
	CALLGRIND_BUILDS=full $(BUSTED) --lua=$(LUA) spec/compressed_spec.lua

check-werror:
	$(MAKE) --no-print-directory BUILD=$(BUILD)/werror CFLAGS="-O2 -Werror" all

ASAN_LIB = $(shell $(CC) -print-file-name=libasan.so)
check-asan:
	$(MAKE) --no-print-directory BUILD=$(BUILD)/asan \
	  CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" all
	LD_PRELOAD=$(ASAN_LIB) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  CALLGRIND_BUILD=$(BUILD)/asan $(BUSTED) --lua=$(LUA) \
	  --cpath="$(BUILD)/asan/?.so" $(BUSTED_ARGS)

# The specs under valgrind memcheck: a definite leak or an invalid access
# fails. lua5.4 runs busted's runner itself (--ignore-lua: no child
# interpreter, so nothing to trace into); the specs that run valgrind
# themselves many times (valgrind, writer_*, run, baseline, perf_example,
# dump_oracle, call_costs) are left out, and so are truth_spec and match_spec
# (valgrind runs of their own too) and engines_gen (500 programs run by
# child interpreters: nothing of the core to check in this process).
VALGRIND ?= valgrind
memcheck: deps-test
	@$(MAKE) --no-print-directory all
	$(VALGRIND) --tool=memcheck --leak-check=full \
	  --errors-for-leak-kinds=definite --error-exitcode=99 \
	  --trace-children=no $(LUA) "$$(command -v $(BUSTED))" --ignore-lua \
	  --exclude-pattern=valgrind_spec --exclude-pattern=writer_ \
	  --exclude-pattern=run_spec --exclude-pattern=baseline_spec \
	  --exclude-pattern=perf_example_spec --exclude-pattern=truth_spec \
	  --exclude-pattern=match_spec --exclude-pattern=dump_oracle_spec \
	  --exclude-pattern=call_costs_spec --exclude-pattern=engines_gen_spec $(BUSTED_ARGS)

# The main job: profile a workload under valgrind, load it, report.
demo: deps-demo
	@$(MAKE) --no-print-directory all
	@sh examples/demo.sh "$(LUA)" "$(CC)" "$(BUILD)"

bench: deps-bench
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory vm
	LUA=$(LUA) CC=$(CC) BUILD=$(BUILD) bash bench/run.sh
	LUA=$(LUA) BUILD=$(BUILD) bash bench/history.sh

# luarocks make into a local tree, then the specs against the installed rock
# alone (empty lpath/cpath: only what `luarocks path` gives).
rock-test: deps-test
	@sh .ci/deps $(DEPS_ROCK)
	rm -rf $(BUILD)/rocktree
	$(LUAROCKS) --lua-version=$(LUA_VERSION) --tree=$(BUILD)/rocktree make \
	  rockspecs/callgrind-scm-1.rockspec
	eval "$$($(LUAROCKS) --lua-version=$(LUA_VERSION) --tree=$(BUILD)/rocktree path \
	  | sed -e 's/LUA_PATH=/LUA_PATH_5_4=/' -e 's/LUA_CPATH=/LUA_CPATH_5_4=/')" && \
	  CALLGRIND_INSTALLED=1 $(BUSTED) --lua=$(LUA) --lpath="" --cpath="" $(BUSTED_ARGS)

# luarocks (build.type = "make" in rockspecs/): the C module, and the
# counting interpreter where the installed Lua's source can be had (the
# rock builds without it otherwise, saying why; it never adds a package
# source). rock-install takes luarocks' directories.
rock-build: all
	@VM_NO_APT=1 sh tools/vm_build.sh $(BUILD) $(CC) || \
	  echo "callgrind: the counting interpreter (callgrind-lua5.4) is not built: the reason is above;" \
	    "the rock installs without it (make vm in a checkout, as root, builds it)"

rock-install:
	cd lua && for f in $$(find callgrind -name '*.lua'); do \
	  install -D -m 644 "$$f" "$(LUADIR)/$$f" || exit 1; done
	install -D -m 755 $(MODULE) $(LIBDIR)/callgrind/core.so
	install -D -m 755 bin/callgrind-lua $(BINDIR)/callgrind-lua
	if [ -x $(VM) ]; then install -m 755 $(VM) $(BINDIR)/callgrind-lua5.4; fi

install: all
	install -d $(DESTDIR)$(INSTALL_CMOD)/callgrind
	cd lua && for f in $$(find callgrind -name '*.lua'); do \
	  install -D -m 644 "$$f" "$(DESTDIR)$(INSTALL_LMOD)/$$f" || exit 1; done
	install -m 755 $(MODULE) $(DESTDIR)$(INSTALL_CMOD)/callgrind/core.so
	@# the LuaLS definitions: workspace.library = "$(INSTALL_LMOD)/callgrind/types"
	for f in types/callgrind/*.lua; do \
	  install -D -m 644 "$$f" "$(DESTDIR)$(INSTALL_LMOD)/callgrind/types/$${f##*/}" || exit 1; done
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 bin/callgrind-lua $(DESTDIR)$(PREFIX)/bin/callgrind-lua
	@# the counting interpreter, when make vm built it (callgrind-lua exec finds it on PATH)
	if [ -x $(VM) ]; then install -m 755 $(VM) $(DESTDIR)$(PREFIX)/bin/callgrind-lua5.4; fi

uninstall:
	rm -rf $(DESTDIR)$(INSTALL_LMOD)/callgrind $(DESTDIR)$(INSTALL_CMOD)/callgrind
	rm -f $(DESTDIR)$(PREFIX)/bin/callgrind-lua $(DESTDIR)$(PREFIX)/bin/callgrind-lua5.4

# libFuzzer targets of fuzz/ (the core alone, through Lua, and the vector
# paths against the byte-by-byte one), each for
# FUZZ_SECONDS; the working corpus stays in $(BUILD)/fuzz/.
FUZZ_SECONDS ?= 60
.PHONY: fuzz deps-fuzz fuzz-lua
deps-fuzz:
	@sh .ci/deps $(DEPS_FUZZ)
fuzz: deps-fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=$(BUILD) LUA_INCDIR=$(LUA_INCDIR) \
	  sh fuzz/run.sh

# The profiler's two engines and a count hook on SEEDS generated Lua
# programs from seed FROM (tools/fuzz_lua.lua; a failure is printed shrunk).
SEEDS ?= 2000
FROM ?= 1000000
fuzz-lua: all vm
	LUA_PATH_5_4='lua/?.lua;lua/?/init.lua;;' LUA_CPATH_5_4='$(BUILD)/?.so;;' \
	  $(LUA) tools/fuzz_lua.lua $(SEEDS) $(FROM) $(VM)

clean:
	rm -rf $(BUILD)

# docs/reference.md and the LuaLS definitions (types/), both made from
# lua/callgrind/api.lua, the one declaration (spec/types_spec.lua fails
# when they are stale); docs/cli.md from the command line's declaration
# in lua/callgrind/cli/init.lua (spec/cli_docs_spec.lua); docs/internals.md.
# `types` is the old name of the target.
.PHONY: docs types
docs: all
	$(LUA) tools/gen_docs.lua
types: docs
