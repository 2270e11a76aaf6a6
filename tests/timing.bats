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
  [ "$(printf '%s\n' "$output" | grep -cE '^  got  [01]{8}  \(offset [0-9]+ bins\)$')" -eq "$n" ]
}

@test "timing receiver: decode recovers a frame's bits and offset from a synthetic progress trace" {
  # No clock here: a trace built from a known frame (busy slots make fewer
  # loop chunks), with an idle lead, an offset and deterministic noise; the
  # receiver's own decode must find the preamble and read every bit.
  run "$SYSPY" -B - "$GL_ROOT/bench/releases/timing" <<'PY'
import random, sys
sys.path.insert(0, sys.argv[1])
import timing_tool as T
rng = random.Random(7)
for trial in range(20):
    secret = bytes(rng.randrange(256) for _ in range(4))
    bits = T._bits(secret)
    frame = T._symbols(bits)
    off = rng.randrange(0, 200)
    r = [rng.randrange(90, 110) for _ in range(off)]
    for s in frame:
        r += [rng.randrange(40, 60) if s else rng.randrange(90, 110) for _ in range(T.BINS)]
    r += [rng.randrange(90, 110) for _ in range(100)]
    got, o, busy, idle = T.decode(r, len(bits))
    # one bin early reads the same bins (a slot's first is skipped)
    assert got == bits and off - 1 <= o <= off, (trial, off, o, got, bits)
    assert busy < idle
print("ok 20")
PY
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$output" = "ok 20" ]
}
