#!/usr/bin/env bats
# The scripted security matrix, CI smoke subset (issue 6 items 4 and 6;
# paper §VII-C Fig. 3, Table XI, §VII-E; docs/security-matrix.md): one trial
# of testbed/matrix.py over docs 1.0.0 (benign) and the docs releases pool,
# direct, launder, capsule, evasive and smuggle, under all six runtimes, plus
# the existence bit under lazy and germline. Real releases signed with a
# fresh key, real gl-plan | gl-run sessions, real sinks, the real oracle and
# gl-replay. The baselines are the runtimes with a mechanism switched off,
# so each assertion that germline discloses nothing sits beside one that a
# baseline does (the test can fail).
# (Not in the unprivileged pass: tests/adaptive.bats runs testbed/matrix.py
# as nobody, the same harness and runtimes, and make check stays under 15
# minutes.)
load helpers
bats_require_minimum_version 1.5.0

SMOKE=docs-1.0.0,docs-pool,docs-direct,docs-launder,docs-capsule,docs-evasive,docs-smuggle

setup_file() {
  export MATRIX_DIR="$BATS_FILE_TMPDIR/smoke"
  mkdir -p "$MATRIX_DIR"
  cd "$MATRIX_DIR"
  "$SYSPY" "$GL_ROOT/testbed/matrix.py" --bin "$GL_BIN" --trials 1 --seed ci-smoke \
    --cases "$SMOKE" --out "$MATRIX_DIR/matrix.json" >"$MATRIX_DIR/table.txt" \
    2>"$MATRIX_DIR/stderr.txt" || echo $? >"$MATRIX_DIR/failed"
}

setup() {
  cd "$BATS_TEST_TMPDIR"
  M=$MATRIX_DIR/matrix.json
  [ ! -e "$MATRIX_DIR/failed" ] || { cat "$MATRIX_DIR/table.txt" "$MATRIX_DIR/stderr.txt"; false; }
}

# cell VARIANT RUNTIME — "k/n" disclosing runs
cell() { jq -r --arg v "$1" --arg r "$2" '.summary.variants[$v][$r] | "\(.disclosing)/\(.runs)"' "$M"; }

@test "matrix smoke: every case ran under every runtime, without harness errors, and the table was printed" {
  cat "$MATRIX_DIR/table.txt"
  jq -e '[.runs[] | select(.error)] | length == 0' "$M"
  jq -e '.runtimes == ["sigpin","sigifc","confined","fresh","nosplit","germline"]' "$M"
  jq -e '[.runs[] | [.case, .runtime]] | length == 7 * 6' "$M"
  jq -e '.trials == 1 and .seed == "ci-smoke"' "$M"
  grep -q '^pool  *1/1  *1/1  *1/1 ' "$MATRIX_DIR/table.txt"
  grep -q '^benign steps ' "$MATRIX_DIR/table.txt"
}

@test "germline: no disclosure in any attack run; every benign step completes under every runtime" {
  jq -e '.summary.runtimes.germline | .disclosing == 0 and .attack_runs == 6' "$M"
  jq -e '[.runs[] | select(.runtime == "germline") | .disclosures | length] | add == 0' "$M"
  jq -e '[.summary.runtimes[] | .benign_steps == .benign_complete and .benign_steps > 0] | all' "$M"
  # the benign release discloses nothing by itself under germline
  jq -e '.summary.runtimes.germline.benign_disclosing == 0' "$M"
}

@test "each baseline misses what its object cannot bind (Fig. 3 shape)" {
  # sigpin and sigifc: pool discloses through the declared OCR host
  [ "$(cell pool sigpin)" = 1/1 ]
  [ "$(cell pool sigifc)" = 1/1 ]
  # confined stops the undeclared host (direct) but not pool
  [ "$(cell direct sigpin)" = 1/1 ]
  [ "$(cell direct confined)" = 0/1 ]
  [ "$(cell pool confined)" = 1/1 ]
  [ "$(cell launder confined)" = 1/1 ]
  # fresh and nosplit: no carry-over, but one call still mixes labels
  for rt in fresh nosplit; do
    [ "$(cell pool $rt)" = 1/1 ] || { echo "pool $rt"; false; }
    [ "$(cell evasive $rt)" = 1/1 ] || { echo "evasive $rt"; false; }
    [ "$(cell smuggle $rt)" = 1/1 ] || { echo "smuggle $rt"; false; }
    [ "$(cell launder $rt)" = 1/1 ] || { echo "launder $rt"; false; }
  done
  # a tool disclosure reaches a sink whose clearance excludes it: the
  # oracle's record says which item went where
  jq -e '[.runs[] | select(.case == "docs-pool" and .runtime == "confined") | .disclosures[] |
    select(.sink == "ocr.example" and .source == "tool")] | length > 0' "$M"
}

@test "germline triggers replay through gl-replay: pool, launder and evasive item witnesses, capsule a state divergence" {
  jq -e '.summary.runtimes.germline.triggers_attack > 0' "$M"
  jq -e '.summary.runtimes.germline.triggers_benign == 0' "$M"
  # every trigger got a verdict (no replay error)
  jq -e '[.runs[] | select(.runtime == "germline") | select((.triggers | length) != (.replay // [] | length))] | length == 0' "$M"
  jq -e '[.runs[].replay[]? | .outcome] | all(. == "item_witness" or . == "state_divergence" or . == "nondeterminism")' "$M"
  for v in pool launder evasive capsule; do
    jq -e --arg v "$v" '.summary.replay_expected[$v].ok' "$M" || { echo "$v"; false; }
  done
  jq -e '.summary.replay_expected.capsule.expected == "state_divergence"' "$M"
  jq -e '[.runs[] | select(.case == "docs-evasive" and .runtime == "germline") | .replay[] |
    .outcome == "item_witness" and .probe_differs == .tries and .control_differs == 0] | all' "$M"
}

@test "existence bit (Lemma 2): lazy recovers the secret without a trigger; germline recovers nothing and trips on every secret-dependent call" {
  jq -e '[.existence_bit[] | select(.runtime == "lazy")] | length == 1 and
    all(.bits_recovered == 64 and .observed == .secret_bits and .triggers == 0)' "$M"
  jq -e '[.existence_bit[] | select(.runtime == "germline")] | length == 1 and
    all(.bits_recovered == 0 and .mutual_information == 0 and .triggers_on_dependent == .dependent
        and .dependent > 0 and .triggers_elsewhere == 0)' "$M"
}

@test "deterministic given the seed: two runs give the same matrix apart from timings" {
  plain_pass || skip "a property of the harness (testbed/matrix.py), not of the build: the plain pass's"
  for i in 1 2; do
    "$SYSPY" "$GL_ROOT/testbed/matrix.py" --bin "$GL_BIN" --trials 1 --seed det \
      --cases docs-evasive,docs-1.0.0 --runtimes sigpin,germline --no-existence-bit \
      --out "m$i.json" >/dev/null
    jq -S 'del(.timing) | del(.runs[].elapsed_s)' "m$i.json" >"m$i.norm"
  done
  diff m1.norm m2.norm
  # not trivially equal: the runs hold triggers and replay verdicts
  jq -e '[.runs[] | select(.runtime == "germline") | .triggers | length] | add > 0' m1.json
}

# session_procs SID — processes of session SID (the harness's, under setsid)
session_procs() { ps -eo sid=,pid=,comm= | awk -v s="$1" '$1 == s'; }

@test "killing the harness (SIGTERM, SIGINT) leaves no process and no temporary directory behind" {
  plain_pass || skip "a property of the harness (testbed/matrix.py), not of the build: the plain pass's"
  for sig in TERM INT; do
    mkdir -p "tmp-$sig"
    TMPDIR=$BATS_TEST_TMPDIR/tmp-$sig setsid "$SYSPY" "$GL_ROOT/testbed/matrix.py" \
      --bin "$GL_BIN" --trials 2 --cases docs-pool,docs-dormant,docs-1.0.0 \
      --out "$BATS_TEST_TMPDIR/k.json" </dev/null >"k-$sig.out" 2>&1 &
    pid=$!
    [ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] # its own session
    # wait until sessions are under way (a gl-run in the harness's session)
    for i in $(seq 600); do
      session_procs "$pid" | grep -q gl-run && break
      sleep 0.05
    done
    session_procs "$pid" | grep -q gl-run # the check below can fail
    [ "$(session_procs "$pid" | wc -l)" -gt 2 ]
    kill -"$sig" "$pid"
    st=0
    wait "$pid" || st=$?
    [ "$st" -eq 130 ] || { echo "exit $st"; cat "k-$sig.out"; false; }
    sleep 0.5
    left=$(session_procs "$pid")
    [ -z "$left" ] || { echo "left behind: $left"; false; }
    [ -z "$(ls -A "tmp-$sig")" ] # its work directory is gone
  done
}
