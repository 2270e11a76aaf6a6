#!/usr/bin/env bats
# The timing-channel harness of bench/timing-channel.sh runs end to end
# (issue 19, "Timing is a channel we measure"; docs/sandbox.md "Timing
# between concurrent copies"): the hostile release bench/releases/timing,
# signed and installed through the real chain, its `send` call holding a
# secret item and its `receive` call, public, decoding what it measured and
# POSTing it to a real loopback sink, in every configuration gl-run offers
# (sequential; two gl-run processes at once, or --jobs 2 with each
# "concurrency" policy once gl-run has --jobs). A smoke test at tiny counts
# so that the harness cannot rot: it asserts that both calls ran, that the
# receiver's bits reached the sink and were scored, and nothing about the
# bit rate itself (no timed assertions: the figures are `make bench`'s).
load helpers
load fixtures/run/helpers

setup() { run_setup; }
teardown() { release_cleanup; }

@test "timing harness: sender and receiver run as real calls, the bits reach the sink, scored" {
  local rel
  rel=$(install_release "$GL_ROOT/bench/releases/timing")
  run "$SYSPY" "$GL_ROOT/bench/timing/driver.py" --root "$GL_ROOT" --gl-run "$GL_BIN/gl-run" \
    --release "$rel" --work "$BATS_TEST_TMPDIR" --trials 1 --bits 8 --slot-ms 20 \
    --lead-s 0.3 --listen-s 0.5 --modes cpu,mem --verbose
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  rows=$(printf '%s\n' "$output" | sed -n 's/^json: //p')
  # every configuration, in both modes, scored 8 bits
  n=$(jq 'length' <<<"$rows")
  [ "$n" -ge 4 ] && [ $((n % 2)) -eq 0 ]
  jq -e 'all(.[]; .bits == 8 and .errors >= 0 and .errors <= 8
              and .capacity_bps >= 0 and .capacity_bps <= 25)' <<<"$rows"
  jq -e '[.[].config] | index("seq") != null' <<<"$rows"
  jq -e '[.[].mode] | unique == ["cpu","mem"]' <<<"$rows"
  # what was sent is the item's own bits: 8 of them, one line per trial
  [ "$(printf '%s\n' "$output" | grep -cE '^  sent [01]{8}$')" -eq "$n" ]
  [ "$(printf '%s\n' "$output" | grep -cE '^  got  [01]{8}$')" -eq "$n" ]
}
