# fuzz/fuzz.mk — the libFuzzer targets of every parser of hostile input
# (docs/fuzzing.md), included at the end of the Makefile.
#
#   make fuzz-build          build/fuzz/bin/<target>: lib/ built again with
#                            clang, libFuzzer's coverage, ASan and UBSan
#   make fuzz [SECONDS=N]    each target for N seconds (default 30), one
#                            after another, from a copy of its committed
#                            corpus fuzz/corpus/<target> in
#                            build/fuzz/corpus/<target>; what one finds goes
#                            to build/fuzz/artifacts/<target>/ (fuzz/run.sh)
#   make fuzz FUZZ_TARGETS="json msg" SECONDS=60     only some of them
#
# tests/fuzz.bats builds them (make fuzz-build) and replays every
# committed corpus once (make check).

FUZZ_CC      ?= clang
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_ALL     := json canon tuf manifest policy call msg rpc schema http witness archive pkey callrec secrets pgauth
FUZZ_TARGETS ?= $(FUZZ_ALL)
SECONDS      ?= 30
# The project's warnings (WARN, with -Werror); no _FORTIFY_SOURCE (ASan
# intercepts the calls it would rewrite); sanitizers that stop at the
# first report.
FUZZ_CFLAGS  := -std=gnu11 $(CLANG_WARN) -iquote lib -iquote hosts/exec -O1 -g -fno-omit-frame-pointer \
                -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
                -DGL_BUILD_HOST_DIR='"$(abspath $(BUILD))/host"'
FUZZ_LDFLAGS := -fsanitize=fuzzer,address,undefined
FUZZ_LIB_OBJ := $(patsubst lib/%.c,$(FUZZ_DIR)/lib/%.o,$(LIB_SRC))
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/bin/,$(FUZZ_ALL) canary)

.PHONY: fuzz fuzz-build fuzz-deps
# clang and its runtimes, which plain `make` does not install
fuzz-deps:
	@GL_DEPS_CHECK=1 scripts/deps.sh
fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory fuzz-build
	@fuzz/run.sh $(SECONDS) $(FUZZ_TARGETS)

$(FUZZ_DIR)/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<
$(FUZZ_DIR)/libgermline.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
# gl-exec-host's request parser (hosts/exec/relay_parse.h), for fuzz/http.c
$(FUZZ_DIR)/hosts/exec/%.o: hosts/exec/%.c hosts/exec/relay_parse.h $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<
$(FUZZ_DIR)/bin/http: $(FUZZ_DIR)/hosts/exec/relay_parse.o
$(FUZZ_DIR)/bin/%: fuzz/%.c fuzz/fuzz.h $(FUZZ_DIR)/libgermline.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_LDFLAGS) -o $@ $< $(filter %.o,$^) $(FUZZ_DIR)/libgermline.a $(LDLIBS)
