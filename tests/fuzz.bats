#!/usr/bin/env bats
# The fuzz targets (fuzz/, docs/fuzzing.md): every parser of hostile input
# has a libFuzzer target, built with clang, ASan and UBSan by make
# fuzz-build (setup_file builds what is missing), and its committed seed
# corpus fuzz/corpus/TARGET is replayed here, each input exactly once: a
# crash, a sanitizer report, a leak or a timeout on a committed input fails
# the target's test. That the replay can fail is shown on the canary target
# (fuzz/canary.c aborts on an input starting "GL!"), with a crashing input
# made here and never committed; that make fuzz's runner (fuzz/run.sh)
# reports what a target finds and exits 1, on the canary fuzzed for a few
# seconds, and exits 0 when nothing is found, on a real target. The long
# runs are make fuzz SECONDS=N, not make check.
# sanitizers: no — the fuzz targets are their own ASan+UBSan build
# unprivileged: no — the same binaries; building them writes build/fuzz
load helpers

FUZZ_BIN=$GL_ROOT/build/fuzz/bin

setup_file() {
  command -v clang >/dev/null || skip "clang is not installed (scripts/deps.sh: clang, libclang-rt-14-dev)"
  printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return (int)(d[0] * 0 + n * 0); }\n' \
    >"$BATS_FILE_TMPDIR/probe.c"
  clang -fsanitize=fuzzer -o "$BATS_FILE_TMPDIR/probe" "$BATS_FILE_TMPDIR/probe.c" 2>/dev/null ||
    skip "clang cannot link libFuzzer (Debian: libclang-rt-14-dev)"
  make -s -C "$GL_ROOT" -j"${GL_TEST_MAKE_JOBS:-2}" fuzz-build >"$BATS_FILE_TMPDIR/build.log" 2>&1 ||
    { cat "$BATS_FILE_TMPDIR/build.log"; return 1; }
}

setup() { gl_setup; }

# replay TARGET [DIR] — every file of DIR (default the committed corpus of
# TARGET) given to TARGET once, as arguments (libFuzzer runs each file
# exactly once and writes nothing beside them); passes when the target
# exits 0 having executed every one of them.
replay() {
  local t=$1 dir=${2:-$GL_ROOT/fuzz/corpus/$1} files
  files=("$dir"/*)
  [ "${#files[@]}" -ge 2 ] || { echo "$dir: no corpus"; return 1; }
  run "$FUZZ_BIN/$t" -timeout=30 -rss_limit_mb=2048 -detect_leaks=1 \
    -artifact_prefix="$BATS_TEST_TMPDIR/" "${files[@]}"
  [ "$status" -eq 0 ] || { echo "$output" | tail -40; return 1; }
  [ "$(grep -c '^Executed ' <<<"$output")" -eq "${#files[@]}" ] ||
    { echo "$output" | tail -20; echo "not every input of $dir was executed"; return 1; }
}

@test "fuzz json: the strict JSON reader replays its corpus clean" { replay json; }
@test "fuzz canon: the canonical JSON reader replays its corpus clean" { replay canon; }
@test "fuzz tuf: TUF metadata (gl_json_parse_tuf, gl_meta_parse, a root's own signatures) replays its corpus clean" { replay tuf; }
@test "fuzz manifest: release manifests replay their corpus clean" { replay manifest; }
@test "fuzz policy: policies and their queries replay their corpus clean" { replay policy; }
@test "fuzz call: call envelopes (gl_call_read, then the plan) replay their corpus clean" { replay call; }
@test "fuzz msg: copy messages, parsed and read as framed streams, replay their corpus clean" { replay msg; }
@test "fuzz rpc: JSON-RPC streams (gl_rpc_read over a pipe) replay their corpus clean" { replay rpc; }
@test "fuzz schema: inputSchema and arguments pairs replay their corpus clean" { replay schema; }
@test "fuzz http: gl-exec-host's HTTP request parser replays its corpus clean" { replay http; }
@test "fuzz witness: witness records (as written, and resealed) replay their corpus clean" { replay witness; }
@test "fuzz archive: release archives (read_member, extract) replay their corpus clean" { replay archive; }
@test "fuzz pkey: TUF key objects and signatures replay their corpus clean" { replay pkey; }
@test "fuzz secrets: requests and replies searched for the operator's secrets (lib/broker/secrets.c) replay their corpus clean" { replay secrets; }
@test "fuzz pgauth: PostgreSQL startups and authentication exchanges (lib/broker/pgauth.c) replay their corpus clean" { replay pgauth; }
@test "fuzz callrec: result records given to gl-verify call (gl_call_verify) replay their corpus clean" { replay callrec; }

@test "fuzz: every target of make fuzz has a test here and a committed corpus" {
  local all t
  all=$(sed -n 's/^FUZZ_ALL *:= *//p' "$GL_ROOT/fuzz/fuzz.mk")
  [ -n "$all" ]
  for t in $all; do
    grep -q "{ replay $t; }" "$BATS_TEST_FILENAME" || { echo "no test replays $t"; return 1; }
    [ "$(find "$GL_ROOT/fuzz/corpus/$t" -type f | wc -l)" -ge 5 ] || { echo "$t: fewer than 5 seeds"; return 1; }
  done
}

@test "fuzz: a crashing input fails the replay (the canary, with an input made here)" {
  mkdir corpus
  cp "$GL_ROOT"/fuzz/corpus/canary/* corpus/
  replay canary corpus
  printf 'GL!' >corpus/made-here
  run "$FUZZ_BIN/canary" -artifact_prefix="$BATS_TEST_TMPDIR/" corpus/*
  [ "$status" -ne 0 ]
  [[ "$output" == *"deadly signal"* ]]
  [[ "$output" == *"made-here"* ]]
}

@test "fuzz: make fuzz's runner reports what a target finds and exits 1 (the canary), 0 when nothing is found" {
  corpus_sum() { (cd "$GL_ROOT/fuzz/corpus" && find . -type f | sort | xargs sha256sum); }
  before=$(corpus_sum)
  FUZZ_OUT=$BATS_TEST_TMPDIR/out run "$GL_ROOT/fuzz/run.sh" 20 canary
  [ "$status" -eq 1 ] || { echo "$output"; false; }
  grep -qE '^canary +[0-9]+ +[0-9]+ +1 +0 +0 +0 ' <<<"$output" || { echo "$output"; false; }
  [[ "$output" == *"FOUND something"* ]]
  crash=$(find out/artifacts/canary -name 'crash-*')
  [ "$(head -c3 "$crash")" = "GL!" ]
  # nothing to find: the same runner passes, for a real target, 2 seconds
  FUZZ_OUT=$BATS_TEST_TMPDIR/out run "$GL_ROOT/fuzz/run.sh" 2 http
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  grep -qE '^http +[1-9][0-9]* +[0-9]+ +0 +0 +0 +0 ' <<<"$output" || { echo "$output"; false; }
  [[ "$output" == *"nothing found"* ]]
  # the committed corpora are never written
  [ "$(corpus_sum)" = "$before" ]
}
