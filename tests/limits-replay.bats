#!/usr/bin/env bats
# gl-replay bounds the release's germline and copies as gl-run does (issue
# 15; lib/replay/replay.c, cmd/gl-replay; docs/witness.md "Bounds of a replay"):
# the auditor's host must survive a hostile release that behaves during the
# call and bombs under replay only (tests/fixtures/releases/limits-replay:
# the probe alone runs d's slot with the comparing copy's items). Off — the
# test build's gl-replay with GL_TEST_LIMITS_OFF=1 — the probe holds 2 GiB
# of the host (bounded by the release itself); on — bin/gl-replay, the
# SPEC §4 defaults (memory_mb 512) — what the replay's processes hold never
# exceeds the bound plus a margin, and gl-replay still gives its verdict.
# unprivileged: yes — gl-replay bounds its copies with rlimits there
load helpers
load fixtures/run/helpers
load fixtures/run/replay
bats_require_minimum_version 1.5.0

setup() {
  replay_setup
  sink ocr.example
  REL=$(install_release "$FIX/releases/limits-replay")
  # c1: one copy (finance), its slot remembers "d"; c2: the hr item's copy
  # sends one request more than d's: a trigger whose witness holds d's slot
  { envelope c1 "$REL" ocr "$INVOICE_ONLY"; envelope c2 "$REL" ocr "$ITEMS"; } |
    gl-plan --policy "$POLICY" | gl-run --policy "$POLICY" >"$BATS_TEST_TMPDIR/results"
  jq -e -s '[.[] | (.triggers | length)] == [0, 1]' "$BATS_TEST_TMPDIR/results"
  W=$(jq -r '.triggers[]?.witness' "$BATS_TEST_TMPDIR/results")
}

teardown() { replay_teardown; }

# replay_sampled GLREPLAY — gl-replay --tries 1 of $W while the resident
# memory of this test's process tree (gl-replay, its germline and copies) is
# sampled (tests/fixtures/run/treerss.py: not moved by the suites running
# beside this one, as the host's MemAvailable is); sets $status, $output,
# $RPID (gl-replay's) and $held (MiB, the largest sample)
replay_sampled() {
  local sampler me=$BASHPID # (expanded after the & it would be the sampler's own)
  "$SYSPY" "$FIX/run/treerss.py" "$me" >"$BATS_TEST_TMPDIR/mem" &
  sampler=$!
  echo "$sampler" >>"$PIDS"
  until [ -s "$BATS_TEST_TMPDIR/mem" ] || ! kill -0 "$sampler" 2>/dev/null; do sleep 0.01; done # sampling before the replay runs
  "$1" --tries 1 --items "$BATS_TEST_TMPDIR/items" "$W" >"$BATS_TEST_TMPDIR/out" \
    2>"$BATS_TEST_TMPDIR/err" &
  RPID=$!
  status=0
  wait "$RPID" || status=$?
  output=$(cat "$BATS_TEST_TMPDIR/out")
  kill "$sampler"
  held=$(($(sort -n "$BATS_TEST_TMPDIR/mem" | tail -1) / 1024))
  echo "the replay's processes held at most ${held} MiB"
}

@test "off: under replay the probe copy takes 2 GiB of the auditor's host (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  GL_TEST_LIMITS_OFF=1 replay_sampled "$GL_ROOT/build/testing/bin/gl-replay"
  [ "$status" -eq 0 ] || { echo "$output"; cat "$BATS_TEST_TMPDIR/err"; false; }
  json '.ok == true and .witness != null'
  [ "$held" -ge 1200 ]
}

@test "on: under replay the probe copy is bounded; the host loses at most the bound; a verdict" {
  replay_sampled gl-replay
  [ "$status" -eq 0 ] || { echo "$output"; cat "$BATS_TEST_TMPDIR/err"; false; }
  json '.ok == true and .witness != null'
  # the sample saw the probe (it fills its bound before it is stopped), and
  # never more than the bound plus the germline and gl-replay themselves
  [ "$held" -ge 256 ]
  [ "$held" -le $((512 + 512)) ]
  # nothing of gl-replay's is left: no process of the release, no cgroup
  ! pgrep -f "$GL_HOME/releases/$REL"
  ! ls -d /sys/fs/cgroup/*/germline-"$RPID" /sys/fs/cgroup/*/*/germline-"$RPID" \
    /sys/fs/cgroup/*/*/*/germline-"$RPID" 2>/dev/null
}
