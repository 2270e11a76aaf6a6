# germline — build, test, demo, bench. See README.md and ../shared/SPEC.md §1.
#
#   make            install missing Debian packages, build bin/gl-*
#   make check      the same, then every test (plain, then ASan+UBSan builds)
#   make demo       the same, then the paper's running example end to end
#   make bench      benchmarks, reported as ratios against baselines in one run
#   make install PREFIX=/usr/local

PREFIX  ?= /usr/local
CC      ?= cc
CMDS    := $(notdir $(wildcard cmd/gl-*))
LIB_SRC := $(sort $(wildcard lib/*.c))
LIB_HDR := $(wildcard lib/*.h)

WARN    := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wformat=2 \
           -Wno-unused-parameter
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -fPIC -fstack-protector-strong -D_FORTIFY_SOURCE=2 -iquote lib \
           -DGL_BUILD_HOST_DIR='"$(abspath build)/host"'
LDLIBS  := -ljq -lsodium -larchive -lseccomp -lcurl -lm

SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
             -fno-sanitize-recover=undefined

BUILD   := build
BINS    := $(addprefix bin/,$(CMDS))
ASAN_BINS := $(addprefix $(BUILD)/asan/bin/,$(CMDS))
UNIT_SRC   := $(wildcard tests/unit/*.c)
UNITS      := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
ASAN_UNITS := $(patsubst tests/unit/%.c,$(BUILD)/asan/tests/%,$(UNIT_SRC))

units: $(UNITS) $(BUILD)/testing/bin/gl-run $(BUILD)/testing/bin/gl-replay $(BUILD)/testing/bin/gl-verify

.PHONY: all deps build host units asan check test demo bench install clean matrix e7 replay-runtimes
all: deps
	@$(MAKE) --no-print-directory build

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
host: $(HOST_PY) $(HOST_EXT) $(BUILD)/host/gl-exec-host $(BUILD)/host/twin.cjs
# twin.cjs: the twin inputs of a Node.js exec copy (docs/exec.md "Twin inputs")
$(BUILD)/host/twin.cjs: hosts/exec/twin.cjs
	@mkdir -p $(@D)
	cp $< $@
# gl-exec-host: the host half of a runtime "exec" copy (hosts/exec, docs/exec.md)
$(BUILD)/host/gl-exec-host: $(wildcard hosts/exec/*.c) $(BUILD)/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libgermline.a -Wl,--as-needed $(LDLIBS)
$(BUILD)/host/%.py: hosts/python/%.py
	@mkdir -p $(@D)
	cp $< $@
$(BUILD)/host/_germline.so: hosts/python/_germline.c $(BUILD)/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PY_INC) -shared -o $@ $< $(BUILD)/libgermline.a -Wl,--as-needed $(LDLIBS)

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
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libgermline.a $(LDLIBS)

# ---- sanitizer build (make check runs the suites once more with these) ---
ASAN_LIB_OBJ := $(patsubst lib/%.c,$(BUILD)/asan/lib/%.o,$(LIB_SRC))
$(BUILD)/asan/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -c -o $@ $<
$(BUILD)/asan/libgermline.a: $(ASAN_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/asan/bin/%: $$(wildcard cmd/%/*.c) $$(wildcard cmd/%/*.h) $(BUILD)/asan/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -o $@ $(filter %.c,$^) $(BUILD)/asan/libgermline.a $(LDLIBS)

asan: $(ASAN_BINS) $(ASAN_UNITS)

# ---- the test build of gl-run (tests/receipts.bats) ------------------------
# lib/ compiled with GL_TESTING: honours GL_TEST_LANDLOCK_ABI, GL_TEST_NO_SECCOMP,
# GL_TEST_NO_USERNS, GL_TEST_NO_NETNS, GL_TEST_INTERPRETER and
# GL_TEST_SWAP_INTERPRETER (lib/germline.c, lib/sandbox.c) so that each
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

# ---- tests -------------------------------------------------------------------
check: deps
	@$(MAKE) --no-print-directory -j$(JOBS) build units asan
	@tests/run.sh

# E7 at the issue's counts (issue 7: at least 30 calls per tool of the npm
# servers, 200 for the cheap ones); make check runs the same suite with 5.
e7: deps
	@$(MAKE) --no-print-directory -j$(JOBS) build units
	@GL_E7_CALLS=30 GL_E7_CHEAP=200 GL_TEST_ONLY=tests/mcp-node.bats GL_TEST_NO_SAN=1 GL_TEST_NO_UNPRIV=1 tests/run.sh

# Replay for every runtime at the issue's count (issue 14: a flow-compliant
# exec and mcp-stdio release never suppressed over 200 calls); make check
# runs the same suite with 10.
replay-runtimes: deps
	@$(MAKE) --no-print-directory -j$(JOBS) build units
	@GL_RT_CALLS=200 GL_TEST_ONLY=tests/replay-runtimes.bats GL_TEST_NO_SAN=1 GL_TEST_NO_UNPRIV=1 tests/run.sh

test: check

demo: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory build
	@scripts/bench.sh

# The scripted security matrix (issue 6; docs/security-matrix.md):
# make matrix [TRIALS=3]; writes build/matrix/matrix.json.
TRIALS ?= 3
matrix: deps
	@$(MAKE) --no-print-directory build
	@$(PYTHON) testbed/matrix.py --trials $(TRIALS)

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	for c in completions/bash/*; do install -m 0644 $$c $(DESTDIR)$(PREFIX)/share/bash-completion/completions/; done
	install -d $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	for c in completions/zsh/*; do install -m 0644 $$c $(DESTDIR)$(PREFIX)/share/zsh/site-functions/; done
	install -d $(DESTDIR)$(PREFIX)/lib/germline
	for f in $(wildcard $(BUILD)/host/*); do install -m 0644 $$f $(DESTDIR)$(PREFIX)/lib/germline/; done

clean:
	rm -rf $(BUILD) bin
