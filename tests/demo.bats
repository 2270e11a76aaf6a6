#!/usr/bin/env bats
# make demo's script (scripts/demo.sh, the README's first command) end to
# end, against the build under test (GL_BIN: bin/, or build/asan/bin in the
# sanitizer pass) — not `make demo`, which would run scripts/deps.sh and
# rebuild. Nothing else in make check runs the demo: its last act, a second
# machine replaying the witness, once broke unseen (the machine was not given
# the slot snapshots the witness names, gl-replay answered
# missing_snapshot, and the pipeline before it ended in `|| true`).
#
# The demo works in GL_DEMO_DIR (kept, so the test can read what each machine
# wrote) and gives each of its machines a fresh GL_HOME there; the caller's
# GL_HOME is never used. About 13 s (most of it the Python copies, the
# replays and the scripts' Python start-ups).
#
# sanitizers: no — the README's command is tested as a user runs it, with
# the plain build; the sanitizer pass runs the same stages in the pipeline
# suites (evidence, pipeline-limits, replay), and the demo again there cost
# 22 s of make check for no path of its own
load helpers
bats_require_minimum_version 1.5.0

setup() {
  gl_setup
  DEMO=$BATS_TEST_TMPDIR/demo
}

teardown() { chmod -R u+w "$BATS_TEST_TMPDIR" 2>/dev/null || true; } # releases are installed read-only

@test "demo: every act passes, and the second machine reaches the first machine's verdict from what docs/witness.md says it needs" {
  run --separate-stderr env GL_BIN="$GL_BIN" GL_DEMO_DIR="$DEMO" "$GL_ROOT/scripts/demo.sh"
  [ "$status" -eq 0 ] || { printf '%s\n--- stderr:\n%s\n' "$output" "$stderr"; false; }
  # no step complained, and the demo reached its last line
  if grep '^demo:' <<<"$stderr"; then false; fi
  grep -q '== Done:' <<<"$output"
  # the caller's GL_HOME is untouched: each machine had its own, fresh
  [ ! -e "$GL_HOME" ]
  cd "$DEMO"
  # the first machine's verdict (gl-replay in the pipeline, its GL_HOME's
  # store) is an item witness
  jq -cS 'select(.outcome)' verdicts.jsonl >first
  [ "$(wc -l <first)" -eq 1 ]
  jq -e '.ok and .outcome == "item_witness" and .event == "verified" and .weight == 2000' first
  # the second machine's: the same record, field for field (release, witness
  # id, destination, tries, probe_differs, control_differs...)
  [ "$(wc -l <verifier/verdict2.json)" -eq 1 ]
  jq -cS . verifier/verdict2.json >second
  diff first second
  # what it carried: the witness file alone (it carries every slot snapshot
  # it names, and nothing else beside it), the signed archive, the items
  w=$(jq -r .witness first).json
  [ -f "verifier/$w" ]
  jq -e '([.served.slot_sha256, .comparing.slot_sha256] | unique) == (.snapshots | keys)' "verifier/$w"
  [ ! -e verifier/slots ]
  [ -f verifier/annotate-1.0.0.tar.gz ] && [ -f verifier/items/salary.csv ] && [ -f verifier/items/invoice.pdf ]
  # ...and its GL_HOME held no snapshot, witness or release to fall back on
  [ ! -e verifier-home/witnesses ] && [ ! -e verifier-home/releases ]
}

@test "demo: a step that fails stops the demo, its stderr shown and the step named" {
  # a build whose gl-verify fails: the first act's pin must stop the demo
  # (cheap: it is the first gl-verify the demo runs)
  mkdir fakebin
  for c in "$GL_BIN"/gl-*; do ln -s "$c" fakebin/; done
  rm fakebin/gl-verify
  printf '#!/bin/sh\necho "gl-verify: a failure of the test" >&2\nexit 2\n' >fakebin/gl-verify
  chmod +x fakebin/gl-verify
  run --separate-stderr env GL_BIN="$PWD/fakebin" GL_DEMO_DIR="$DEMO" "$GL_ROOT/scripts/demo.sh"
  [ "$status" -ne 0 ]
  grep -q '^gl-verify: a failure of the test$' <<<"$stderr"
  grep -q '^demo: stopped: scripts/demo.sh line [0-9]* exited 2: show gl-verify pin repo$' <<<"$stderr"
  if grep -q '== Done:' <<<"$output"; then false; fi
}
