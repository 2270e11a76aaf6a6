#!/usr/bin/env bats
# The unit tests of lib/ (tests/unit/*_test.c, built by `make units` into
# build/tests and by `make asan` into build/asan/tests, matching GL_BIN): one
# @test per program. Each reports TAP through tests/unit/check.h (one point
# per CHECK site); unit_ok requires exit 0, a plan with at least one point
# and no "not ok", so a program that checked nothing fails, and one that
# cannot run here ("1..0 # SKIP why") is a skipped test.
# The drivers (tests/unit/*_drive.c) are not unit tests: the suites of their
# commands run them (fetch, minisign, pkey, sandbox).
#
# unprivileged: yes — the programs run as nobody too (cgroup_v2_test skips there)
load helpers
load fixtures/run/helpers

setup() {
  gl_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{},"routes":{}}' >"$POLICY"
}

teardown() { kill_pids; }

unit() {
  local dir=$GL_ROOT/build/tests
  case "$GL_BIN" in *asan*) dir=$GL_ROOT/build/asan/tests ;; esac
  echo "$dir/$1"
}

# unit_ok NAME [ARG…] — run the unit test NAME; it passes on exit 0 with a TAP
# plan of at least one point and no failed point.
unit_ok() {
  local t
  t=$(unit "$1")
  [ -x "$t" ] || { echo "$t is not built (make units / make asan)"; false; }
  run "$t" "${@:2}"
  case "$output" in *"1..0 # SKIP "*) skip "${output##*# SKIP }" ;; esac
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ "$output" =~ (^|$'\n')1\.\.[1-9][0-9]*($'\n'|$) ]] || { echo "$output"; echo "no TAP plan"; false; }
  ! grep -q '^not ok' <<<"$output" || { echo "$output"; false; }
}

@test "live: the workers' shared table: a robust mutex, a dead worker's copy killed at its reap, cgroup slot claims (lib/sandbox/live.c; live_test)" {
  unit_ok live_test
}

@test "json: strict reader, compact writer and canonical form (json_test)" {
  unit_ok json_test
}

@test "uids: the delegated range from subid files (malformed entries, a range holding an account refused), leases one at a time, a released block back (uids_test)" {
  unit_ok uids_test
}

@test "numbers: whatever the strict reader, its TUF variant, canonical JSON or a copy message takes, the writer writes back as text it reads as the same value (numbers_test)" {
  unit_ok numbers_test
}

@test "jsonrpc: validation, the bounded line reader and the writer (lib/json/jsonrpc.c; jsonrpc_test)" {
  unit_ok jsonrpc_test
}

@test "jsonschema: the keywords checked and ignored, the field each error names, the bounds (lib/json/jsonschema.c; jsonschema_test)" {
  unit_ok jsonschema_test
}

@test "labels: tag sets (union, intersection, subset, order), policy globs, host and path rules (labels_test)" {
  unit_ok labels_test
}

@test "policy: directory items are labelled by every glob that can match beneath them (dirglob_test)" {
  unit_ok dirglob_test
}

@test "mcp_revision: the four revisions negotiated, each session's tools/list and results with only its revision's fields, initialize with the server's own serverInfo and instructions (lib/broker/mcp_revision.c; mcp_revision_test)" {
  unit_ok mcp_revision_test
}

@test "secrets: a value only in what a bound host is sent (url, headers, body as its \"in\" allows), out of every reply, the growth bounded; the public form (lib/broker/secrets.c, lib/release/config.c; secrets_test)" {
  unit_ok secrets_test
}

@test "policy: limits — SPEC §4 defaults, global and per-release fields, every malformed field refused by name (bounds_test)" {
  unit_ok bounds_test
}

@test "read paths: every rule of lib/plan/readpaths.c on a real tree (symlinks, paths not there yet) and lib/json/jsonl.c's top-level scan (readpaths_test)" {
  unit_ok readpaths_test
}

@test "broker parts: framing, strict parsing, slots and curl delivery against real sinks (broker_parts_test)" {
  sink ocr.example
  sink redir.example redirect302
  mkdir -p "$BATS_TEST_TMPDIR/slots"
  unit_ok broker_parts_test "$BATS_TEST_TMPDIR/slots" "$(cat "$BATS_TEST_TMPDIR/ocr.example.port")" \
    "$(cat "$BATS_TEST_TMPDIR/redir.example.port")" "$BATS_TEST_TMPDIR/attacker.log"
  # The routed request kept the tool's Host header; the redirect target got nothing.
  jq -e 'select(.path == "/ocr") | .host == "ocr.example"' "$BATS_TEST_TMPDIR/ocr.example.log"
  [ ! -s "$BATS_TEST_TMPDIR/attacker.log" ]
}

@test "denied names are capped per copy: an hr copy's flood never pushes a public copy's name into (other) (tally_test)" {
  unit_ok tally_test
}

@test "--max-resident: room for one more stops the LRU idle resident, never a busy one; all busy refuses \"launch\" (off: K=256 stops none) (resident_test)" {
  unit_ok resident_test
}

# cgroup v2 (docs/sandbox.md "Which mechanism is tested where"): this
# host's cgroup2 is the hybrid /sys/fs/cgroup/unified without controllers,
# so only the v2 end of a copy is exercised: gl_cg_drain (cgroup.kill,
# then cgroup.procs until empty) and gl_cg_close on a real cgroup2 group
@test "cgroup v2: a copy's group is emptied (cgroup.kill, cgroup.procs) and removed (cgroup_v2_test)" {
  unit_ok cgroup_v2_test
}

@test "warnings: each line reaches a shared stderr pipe whole, four processes warning at once; a line past the buffer complete (lib/core/util.c; warn_test)" {
  unit_ok warn_test
}

@test "pgauth: a PostgreSQL server's authentication messages, cut across reads, each answered once; a foreign nonce, a wrong signature, md5 and the server's refusal end it with an ErrorResponse (lib/broker/pgauth.c; pgauth_test)" {
  unit_ok pgauth_test
}

@test "fail: lib/sandbox and lib/runtime fill a struct gl_fail with their callers' code (bootstrap_failed, germline_check, germline, launch, mismatch, rejected) and detail; empty on success (runfail_test)" {
  unit_ok runfail_test
}

@test "fail: every enum gl_code has SPEC's name and an exit status; the record's detail is sanitised; every code of SPEC §3/§6 and docs/gl-run.md has a value (fail_test)" {
  local spec=
  for s in "${GL_SPEC:-}" "$GL_ROOT/../shared/SPEC.md" "$GL_ROOT/../../shared/SPEC.md"; do
    [ -n "$s" ] && [ -f "$s" ] && { spec=$s; break; }
  done
  [ -n "$spec" ] || skip "SPEC.md not found (set GL_SPEC)"
  run "$(unit fail_test)" "$spec" "$GL_ROOT/docs/gl-run.md"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "private descriptors: a copy's pipes, eventfds, epoll instances and /dev/null are its own, at the same numbers with the same flags and contents, and nothing it writes reaches the germline's; others closed; a pipe it could not be given refused (lib/sandbox/private_fds.c; private_fds_test)" {
  unit_ok private_fds_test
}
