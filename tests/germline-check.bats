#!/usr/bin/env bats
# G1–G3 through gl-run (issue 4, Deliver 2; paper §IV-D, A2, Table XII):
# a release whose initialisation leaves a thread, a pipe or a shared
# writable mapping in its germline is refused with error "germline_check"
# naming the check, and no copy runs. tests/sandbox.bats shows, with its
# driver, that each of these carries data between copies when the check is
# switched off; here the same fixture releases go through the real chain.
# unprivileged: yes
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":["finance","hr"]}}' >"$POLICY"
}

teardown() { release_cleanup; }

# refused_with RELEASE_DIR FUNCTION CHECK_REGEX
refused_with() {
  local sha
  sha=$(install_release "$FIX/releases/$1")
  envelope c1 "$sha" "$2" >calls.jsonl
  run --separate-stderr bash -c "gl-plan --policy '$POLICY' <calls.jsonl | gl-run --policy '$POLICY'"
  [ "$status" -eq 1 ] || { echo "status $status: $output $stderr"; return 1; }
  [ "$(json .ok)" = false ]
  [ "$(json .error)" = germline_check ] || { echo "$output"; return 1; }
  json ".detail|test(\"$3\")" >/dev/null || { echo "detail: $(json .detail)"; return 1; }
  [ "$(json '.copies // 0')" = 0 ]
}

@test "G1 through gl-run: a thread started at init refuses the release" {
  refused_with sandbox-thread hello '^G1'
}

@test "G2 through gl-run: a pipe opened at init refuses the release" {
  refused_with sandbox-pipe pipe_write '^G2: fd [0-9]+ is a pipe'
}

@test "G3 through gl-run: shared writable memory mapped at init refuses the release" {
  refused_with sandbox-shm shared_write '^G3'
}

@test "control: the same chain runs a release whose germline is clean" {
  local sha
  sha=$(install_release "$FIX/releases/sandbox-probe")
  envelope c1 "$sha" hello >calls.jsonl
  run --separate-stderr bash -c "gl-plan --policy '$POLICY' <calls.jsonl | gl-run --policy '$POLICY'"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; return 1; }
  [ "$(json .ok)" = true ]
}
