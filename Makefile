# germline — build, test, demo, bench. See README.md and ../shared/SPEC.md §1.
#
#   make            install missing Debian packages, build bin/gl-* and the host
#   make check      the same, then every test (plain, then ASan+UBSan builds),
#                   after building the whole tree with clang too (make clang)
#   make demo       the same, then the paper's running example end to end
#   make bench      benchmarks, reported as ratios against baselines in one run
#   make fuzz [SECONDS=N]  each libFuzzer target for N seconds (fuzz/fuzz.mk)
#   make install [PREFIX=/usr/local] [DESTDIR=]   (make uninstall: the same files)
#   make deb        build/deb/germline_VERSION_ARCH.deb (docs/install.md)

PREFIX  ?= /usr/local
CC      ?= cc
CMDS    := $(notdir $(wildcard cmd/gl-*))
LIB_SRC := $(sort $(wildcard lib/*/*.c))
LIB_HDR := $(wildcard lib/*/*.h)

WARN    := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wformat=2 \
           -Wno-unused-parameter
# A jump past an initialised variable: clang refuses it where the variable
# has a cleanup, GCC says nothing unless asked. Asked here, for GCC only
# (clang has no such flag); `make clang` builds the tree with the second
# compiler (STYLE: "Build with both compilers").
CC_IS_CLANG := $(shell $(CC) --version 2>/dev/null | grep -q clang && echo 1)
ifneq ($(CC_IS_CLANG),1)
WARN    += -Wjump-misses-init
endif
# the same warnings for clang (make clang, the fuzz targets)
CLANG_WARN := $(filter-out -Wjump-misses-init,$(WARN))
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -fPIC -fstack-protector-strong -D_FORTIFY_SOURCE=2 -iquote lib \
           -DGL_BUILD_HOST_DIR='"$(abspath build)/host"'
# full RELRO and immediate binding for what is installed (lintian: hardening)
LDFLAGS ?= -Wl,-z,relro,-z,now
LDLIBS  := -ljq -lsodium -larchive -lseccomp -lcurl -lcrypto -lz -lm

SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
             -fno-sanitize-recover=undefined

BUILD   := build
BINS    := $(addprefix bin/,$(CMDS))
ASAN_BINS := $(addprefix $(BUILD)/asan/bin/,$(CMDS))
UNIT_SRC   := $(wildcard tests/unit/*.c)
UNITS      := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
ASAN_UNITS := $(patsubst tests/unit/%.c,$(BUILD)/asan/tests/%,$(UNIT_SRC))

# the first target: plain `make` (SPEC §1)
.PHONY: all deps build host units asan check test demo bench install uninstall deb clean \
	matrix e7 replay-runtimes concurrency layers bench-compare testbed-variants clang
all: deps
	@$(MAKE) --no-print-directory build

units: $(UNITS) $(BUILD)/testing/bin/gl-run $(BUILD)/testing/bin/gl-replay $(BUILD)/testing/bin/gl-damp \
	$(BUILD)/testing/bin/gl-verify

deps:
	@scripts/deps.sh

build: $(BINS) host

# ---- the Python host: what runs inside germlines and copies (hosts/python) --
# _germline.so is the CPython extension that keeps the security-critical
# parts (fork, namespaces, Landlock, seccomp, descriptors) in C, built from
# lib/; germline_host.py is the tool glue. Both land in build/host, which
# gl-run finds through GL_BUILD_HOST_DIR (or PREFIX/lib/germline once installed).
PYTHON    := /usr/bin/python3
JOBS      := $(shell nproc 2>/dev/null || echo 2)
PY_INC    := $(shell /usr/bin/python3-config --includes 2>/dev/null)
HOST_PY   := $(patsubst hosts/python/%,$(BUILD)/host/%,$(wildcard hosts/python/*.py))
HOST_EXT  := $(if $(wildcard hosts/python/_germline.c),$(BUILD)/host/_germline.so)
# the fork server both runtimes' germlines share (hosts/common/fork_server.h)
HOST_COMMON := hosts/common/fork_server.c hosts/common/fork_server.h
NODE_INC  := /usr/include/node
HOST_NODE := $(if $(wildcard $(NODE_INC)/node_api.h),$(addprefix $(BUILD)/host/,germline_host.mjs germline.node gl-atfork.so))
host: $(HOST_PY) $(HOST_EXT) $(BUILD)/host/gl-exec-host $(BUILD)/host/twin.cjs $(HOST_NODE)
# The Node germline (docs/exec.md "The Node germline"): its host script, its
# Node-API addon and the at-fork recorder preloaded into it; built where
# Node's headers are (scripts/deps.sh installs them).
$(BUILD)/host/germline_host.mjs: hosts/node/germline_host.mjs
	@mkdir -p $(@D)
	cp $< $@
$(BUILD)/host/germline.node: hosts/node/germline.c $(HOST_COMMON) $(BUILD)/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -isystem $(NODE_INC) -shared -o $@ $(filter %.c,$^) $(BUILD)/libgermline.a -Wl,--as-needed $(LDLIBS)
$(BUILD)/host/gl-atfork.so: hosts/node/atfork.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $< -ldl
# twin.cjs: the twin inputs of a Node.js exec copy (docs/exec.md "Twin inputs")
$(BUILD)/host/twin.cjs: hosts/exec/twin.cjs
	@mkdir -p $(@D)
	cp $< $@
# gl-exec-host: the host half of a runtime "exec" copy (hosts/exec, docs/exec.md)
$(BUILD)/host/gl-exec-host: $(wildcard hosts/exec/*.c) $(wildcard hosts/exec/*.h) $(BUILD)/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libgermline.a -Wl,--as-needed -lssl $(LDLIBS)
$(BUILD)/host/%.py: hosts/python/%.py
	@mkdir -p $(@D)
	cp $< $@
$(BUILD)/host/_germline.so: hosts/python/_germline.c $(HOST_COMMON) $(BUILD)/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) $(PY_INC) -shared -o $@ $(filter %.c,$^) $(BUILD)/libgermline.a -Wl,--as-needed $(LDLIBS)

# ---- plain build -----------------------------------------------------------
LIB_OBJ := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRC))
$(BUILD)/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<
$(BUILD)/libgermline.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

.SECONDEXPANSION:
bin/%: $$(wildcard cmd/%/*.c) $$(wildcard cmd/%/*.h) $(BUILD)/libgermline.a $(LIB_HDR)
	@mkdir -p bin
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libgermline.a $(LDLIBS)

# ---- sanitizer build (make check runs the suites once more with these) ---
ASAN_LIB_OBJ := $(patsubst lib/%.c,$(BUILD)/asan/lib/%.o,$(LIB_SRC))
# The sanitizer build's host directory (GL_SAN_HOST_DIR, gl_host_dir in
# lib/runtime/germline.c): gl-exec-host built with the sanitizers, the rest
# of the host copied from build/host (_germline.so is loaded by an
# uninstrumented python3, so it stays the plain build). tests/run.sh's
# sanitizer pass runs build/asan/bin, which finds this directory.
ASAN_HOST := $(addprefix $(BUILD)/asan/host/,$(notdir $(HOST_PY) $(HOST_EXT)) twin.cjs gl-exec-host)
$(BUILD)/asan/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -DGL_SAN_HOST_DIR='"$(abspath build)/asan/host"' -c -o $@ $<
$(BUILD)/asan/host/gl-exec-host: $(wildcard hosts/exec/*.c) $(wildcard hosts/exec/*.h) $(BUILD)/asan/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -o $@ $(filter %.c,$^) $(BUILD)/asan/libgermline.a -lssl $(LDLIBS)
$(BUILD)/asan/host/%: $(BUILD)/host/%
	@mkdir -p $(@D)
	cp $< $@
$(BUILD)/asan/libgermline.a: $(ASAN_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/asan/bin/%: $$(wildcard cmd/%/*.c) $$(wildcard cmd/%/*.h) $(BUILD)/asan/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -o $@ $(filter %.c,$^) $(BUILD)/asan/libgermline.a $(LDLIBS)

asan: $(ASAN_BINS) $(ASAN_UNITS) $(ASAN_HOST)

# ---- the second compiler: the whole tree with clang, warnings as errors ------
# lib, cmd, the hosts and tests/unit, compiled and linked with Debian's clang
# and the same warnings (make check builds it: what one compiler forgives,
# the other may refuse). -O0: clang's warnings come from its front end, not
# its optimiser, so the cheapest build reads the same.
CLANG     := clang
CLANG_FLAGS := -O0 -std=gnu11 $(CLANG_WARN) -fPIC -iquote lib \
           -DGL_BUILD_HOST_DIR='"$(abspath build)/host"'
CLANG_LIB_OBJ := $(patsubst lib/%.c,$(BUILD)/clang/lib/%.o,$(LIB_SRC))
CLANG_OUT := $(addprefix $(BUILD)/clang/bin/,$(CMDS)) \
           $(patsubst tests/unit/%.c,$(BUILD)/clang/tests/%,$(UNIT_SRC)) \
           $(BUILD)/clang/host/gl-exec-host $(if $(HOST_EXT),$(BUILD)/clang/host/_germline.so) \
           $(if $(HOST_NODE),$(BUILD)/clang/host/germline.node $(BUILD)/clang/host/gl-atfork.so)
clang: $(CLANG_OUT)
$(BUILD)/clang/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CLANG) $(CLANG_FLAGS) -c -o $@ $<
$(BUILD)/clang/libgermline.a: $(CLANG_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/clang/bin/%: $$(wildcard cmd/%/*.c) $$(wildcard cmd/%/*.h) $(BUILD)/clang/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CLANG) $(CLANG_FLAGS) -o $@ $(filter %.c,$^) $(BUILD)/clang/libgermline.a $(LDLIBS)
$(BUILD)/clang/tests/%: tests/unit/%.c $(BUILD)/clang/libgermline.a $(LIB_HDR) tests/unit/check.h
	@mkdir -p $(@D)
	$(CLANG) $(CLANG_FLAGS) -o $@ $< $(BUILD)/clang/libgermline.a $(LDLIBS)
$(BUILD)/clang/host/gl-exec-host: $(wildcard hosts/exec/*.c) $(wildcard hosts/exec/*.h) $(BUILD)/clang/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CLANG) $(CLANG_FLAGS) -o $@ $(filter %.c,$^) $(BUILD)/clang/libgermline.a -lssl $(LDLIBS)
$(BUILD)/clang/host/germline.node: hosts/node/germline.c $(HOST_COMMON) $(BUILD)/clang/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CLANG) $(CLANG_FLAGS) -isystem $(NODE_INC) -shared -o $@ $(filter %.c,$^) $(BUILD)/clang/libgermline.a $(LDLIBS)
$(BUILD)/clang/host/gl-atfork.so: hosts/node/atfork.c
	@mkdir -p $(@D)
	$(CLANG) $(CLANG_FLAGS) -shared -o $@ $< -ldl
$(BUILD)/clang/host/_germline.so: hosts/python/_germline.c $(HOST_COMMON) $(BUILD)/clang/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CLANG) $(CLANG_FLAGS) $(PY_INC) -shared -o $@ $(filter %.c,$^) $(BUILD)/clang/libgermline.a $(LDLIBS)

# ---- the test build of gl-run (tests/receipts.bats) ------------------------
# lib/ compiled with GL_TESTING: honours GL_TEST_LANDLOCK_ABI, GL_TEST_NO_SECCOMP,
# GL_TEST_NO_USERNS, GL_TEST_NO_NETNS, GL_TEST_INTERPRETER and
# GL_TEST_SWAP_INTERPRETER (lib/runtime/germline.c, lib/sandbox/sandbox.c) so that each
# fail-closed case runs on this kernel. Never bin/gl-run, never installed.
TESTING_LIB_OBJ := $(patsubst lib/%.c,$(BUILD)/testing/lib/%.o,$(LIB_SRC))
$(BUILD)/testing/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DGL_TESTING -c -o $@ $<
$(BUILD)/testing/libgermline.a: $(TESTING_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/testing/bin/gl-run: $(wildcard cmd/gl-run/*.c) $(BUILD)/testing/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DGL_TESTING -o $@ $(filter %.c,$^) $(BUILD)/testing/libgermline.a $(LDLIBS)
# gl-replay's switch GL_TEST_REPLAY_RUNTIMES_OFF (tests/replay-runtimes.bats)
$(BUILD)/testing/bin/gl-replay: $(wildcard cmd/gl-replay/*.c) $(BUILD)/testing/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DGL_TESTING -o $@ $(filter %.c,$^) $(BUILD)/testing/libgermline.a $(LDLIBS)
# gl-damp's switch GL_TEST_DAMPLOCK_OFF (tests/concurrency.bats)
$(BUILD)/testing/bin/gl-damp: $(wildcard cmd/gl-damp/*.c) $(BUILD)/testing/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DGL_TESTING -o $@ $(filter %.c,$^) $(BUILD)/testing/libgermline.a $(LDLIBS)

# gl-verify's switches GL_TEST_TUF_OFF and GL_TEST_META_CAP_OFF (tests/tuf.bats)
$(BUILD)/testing/bin/gl-verify: $(wildcard cmd/gl-verify/*.c) $(BUILD)/testing/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DGL_TESTING -o $@ $(filter %.c,$^) $(BUILD)/testing/libgermline.a $(LDLIBS)

# ---- unit tests of lib/ (tests/unit/*.c), run by tests/lib.bats -------------
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libgermline.a $(LIB_HDR) tests/unit/check.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libgermline.a $(LDLIBS)
$(BUILD)/asan/tests/%: tests/unit/%.c $(BUILD)/asan/libgermline.a $(LIB_HDR) tests/unit/check.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -o $@ $< $(BUILD)/asan/libgermline.a $(LDLIBS)

# ---- make layers: no include points up lib/'s order (docs/design/README.md)
layers:
	@scripts/layers.sh
	@scripts/funclen.py --check $(wildcard lib/*/*.c cmd/*/*.c hosts/exec/*.c hosts/python/*.c hosts/common/*.c hosts/node/*.c) && echo "funclen: no function over 80 lines without a 'long:' reason"

# ---- tests -------------------------------------------------------------------
# (lintian too: tests/deb.bats checks the package with it)
check: deps
	@GL_DEPS_DEB=1 GL_DEPS_CHECK=1 scripts/deps.sh
	@if [ "$$(id -u)" = 0 ]; then scripts/delegate-uids.sh root nobody; fi
	@$(MAKE) --no-print-directory layers
	@$(MAKE) --no-print-directory -j$(JOBS) build units clang fuzz-build
	@GL_TEST_BUILD_ASAN=1 GL_TEST_MAKE_JOBS=$(JOBS) tests/run.sh

# The long counts below run without tests/run.sh's watchdog: its budgets
# come from make check's counts (tests/times.tsv).
# E7 at the issue's counts (issue 7: at least 30 calls per tool of the npm
# servers, 200 for the cheap ones); make check runs the same suite with 2.
e7: deps
	@$(MAKE) --no-print-directory -j$(JOBS) build units
	@GL_TEST_WATCHDOG=0 GL_E7_CALLS=30 GL_E7_CHEAP=200 GL_TEST_ONLY=tests/mcp-node.bats GL_TEST_NO_SAN=1 GL_TEST_NO_UNPRIV=1 tests/run.sh

# One GL_HOME, many processes at the issue's count (issue 19: two gl-run
# processes x 200 calls on one slot); make check runs the same suite with 40.
concurrency: deps
	@$(MAKE) --no-print-directory -j$(JOBS) build units
	@GL_TEST_WATCHDOG=0 GL_CC_CALLS=200 GL_TEST_ONLY=tests/concurrency.bats GL_TEST_NO_SAN=1 GL_TEST_NO_UNPRIV=1 tests/run.sh

# Replay for every runtime at the issue's count (issue 14: a flow-compliant
# exec and mcp-stdio release never suppressed over 200 calls); make check
# runs the same suite with 10.
replay-runtimes: deps
	@$(MAKE) --no-print-directory -j$(JOBS) build units
	@GL_TEST_WATCHDOG=0 GL_RT_CALLS=200 GL_TEST_ONLY=tests/replay-runtimes.bats GL_TEST_NO_SAN=1 GL_TEST_NO_UNPRIV=1 tests/run.sh

test: check

demo: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory build units
	@scripts/bench.sh

# make bench-compare BASE=REV: the same benches for REV's build and this
# tree's, in one run (scripts/bench-compare.sh; docs/performance.md)
BASE ?= HEAD~1
bench-compare: deps
	@scripts/bench-compare.sh $(BASE)

# The scripted security matrix (issue 6; docs/security-matrix.md):
# make matrix [TRIALS=3]; writes build/matrix/matrix.json.
TRIALS ?= 3
# The testbed's release modules, generated (docs/testbed.md "Releases"), for
# reading: assemble.sh (make matrix, the testbed suites) generates its own.
testbed-variants:
	@rm -rf $(BUILD)/testbed/releases
	@$(PYTHON) testbed/variants.py $(BUILD)/testbed/releases

matrix: deps
	@$(MAKE) --no-print-directory build
	@$(PYTHON) testbed/matrix.py --trials $(TRIALS)

# ---- install (docs/install.md) ----------------------------------------------
# gl-run finds its host at DIR/../lib/germline of its own executable (SPEC §1,
# lib/runtime/germline.c gl_host_dir), so PREFIX/bin and PREFIX/lib/germline must
# stay together; nothing else in the installed tree names the build tree.
# Modes: commands and gl-exec-host 0755 (gl-exec-host is exec'd: issue 17),
# everything else 0644, directories 0755.
MAN1      := $(wildcard man/*.1)
MAN7      := $(wildcard man/*.7)
HOST_EXEC := gl-exec-host
HOST_DATA := $(notdir $(HOST_PY) $(HOST_EXT) $(HOST_NODE)) twin.cjs
BASH_COMP := $(wildcard completions/bash/*)
ZSH_COMP  := $(wildcard completions/zsh/*)
D         := $(DESTDIR)$(PREFIX)
install: build
	umask 022; install -d -m 0755 $(D)/bin $(D)/lib/germline $(D)/share/man/man1 $(D)/share/man/man7 \
	  $(D)/share/bash-completion/completions $(D)/share/zsh/site-functions
	install -m 0755 $(BINS) $(D)/bin/
	install -m 0755 $(BUILD)/host/$(HOST_EXEC) $(D)/lib/germline/
	install -m 0644 $(addprefix $(BUILD)/host/,$(HOST_DATA)) $(D)/lib/germline/
	install -m 0644 $(MAN1) $(D)/share/man/man1/
	install -m 0644 $(MAN7) $(D)/share/man/man7/
	install -m 0644 $(BASH_COMP) $(D)/share/bash-completion/completions/
	install -m 0644 $(ZSH_COMP) $(D)/share/zsh/site-functions/

# removes exactly what install wrote, and the one directory that is ours
# (lib/germline); shared directories (bin, share/man/man1, …) stay.
uninstall:
	rm -f $(addprefix $(D)/bin/,$(CMDS))
	rm -f $(addprefix $(D)/lib/germline/,$(HOST_EXEC) $(HOST_DATA))
	rm -f $(addprefix $(D)/share/man/man1/,$(notdir $(MAN1)))
	rm -f $(addprefix $(D)/share/man/man7/,$(notdir $(MAN7)))
	rm -f $(addprefix $(D)/share/bash-completion/completions/,$(notdir $(BASH_COMP)))
	rm -f $(addprefix $(D)/share/zsh/site-functions/,$(notdir $(ZSH_COMP)))
	if [ -d $(D)/lib/germline ]; then rmdir $(D)/lib/germline; fi

# ---- the Debian package (scripts/deb.sh; docs/install.md) -------------------
deb: deps
	@GL_DEPS_DEB=1 scripts/deps.sh
	@$(MAKE) --no-print-directory build
	@scripts/deb.sh

clean:
	rm -rf $(BUILD) bin
include fuzz/fuzz.mk
