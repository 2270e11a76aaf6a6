#!/usr/bin/env bats
# The adaptive corpus (issue 13 "Our own adaptive corpus"; docs/security-matrix.md
# "Adaptive variants"): docs releases written by an adversary who knows how
# germline execution works, one per class of issue 13's list, run through
# testbed/matrix.py like tests/matrix.bats (signed with a fresh key, installed
# with gl-verify, gl-plan | gl-run sessions, real sinks, the oracle), under
# sigpin (the baseline: no mechanism at all) and germline, beside the benign
# docs 1.0.0 in the same run.
#
# Each class has a baseline test (sigpin discloses an hr canary: the attack
# and the oracle work, the germline test below can fail) and a test marked
# "[after the fix]": germline discloses nothing. On the code this suite was
# written against (before the issue 13 fixes) every "[after the fix]" test
# FAILS, which is the proof that the attack is real; each names what closes
# it. Class 7 is measured by gl-replay and gl-damp, not by the oracle, and
# so are issue 14's docs-clock (replay told from the call by the import-time
# clock), whose reference is the test build of gl-run with the import twin
# off (GL_TEST_IMPORT_TWIN_OFF), and issue 31's dodger docs-native (replay
# told by a native clock no twin covers), whose reference is the test build
# of gl-replay without the mirror run (GL_TEST_REPLAY_MIRROR_OFF).
#
# unprivileged: yes — the matrix runs gl-run in user namespaces
# sanitizers: no — its sessions drive the gl-plan | gl-run paths that
# tests/matrix.bats runs under ASan; here they would only be slower
load helpers
bats_require_minimum_version 1.5.0

CASES=docs-1.0.0,docs-readpaths,docs-stdio,docs-helper,docs-sigalrm,docs-atfork,docs-pagecache,docs-inode,docs-denied,docs-bigresult,docs-deep,docs-clock,docs-native

setup_file() {
  export ADIR="$BATS_FILE_TMPDIR/adaptive"
  mkdir -p "$ADIR"
  cd "$ADIR"
  # --keep: the runs' records (class 7 replays them); TMPDIR: nothing outside ADIR
  TMPDIR=$ADIR "$SYSPY" "$GL_ROOT/testbed/matrix.py" --bin "$GL_BIN" --trials 1 \
    --seed ci-adaptive --cases "$CASES" --runtimes sigpin,germline --no-existence-bit \
    --keep "$ADIR/work" --out "$ADIR/matrix.json" >"$ADIR/table.txt" \
    2>"$ADIR/stderr.txt" || echo $? >"$ADIR/failed"
}

# the kept runs hold installed (read-only) releases: writable again, so that
# bats can remove its temporary directory as nobody too
teardown_file() { chmod -R u+w "$ADIR" 2>/dev/null || true; }
# and those a test keeps in its own directory (issue 14 clock, off)
teardown() { chmod -R u+w "$BATS_TEST_TMPDIR" 2>/dev/null || true; }

setup() {
  cd "$BATS_TEST_TMPDIR"
  M=$ADIR/matrix.json
  [ ! -e "$ADIR/failed" ] || { cat "$ADIR/table.txt" "$ADIR/stderr.txt"; false; }
}

# hr CASE RUNTIME — disclosures of an hr-labelled item in that run
hr() {
  jq --arg c "$1" --arg r "$2" \
    '[.runs[] | select(.case == $c and .runtime == $r) | .disclosures[] |
      select(.label | index("hr"))] | length' "$M"
}
# all CASE RUNTIME — every disclosure of that run
all() {
  jq --arg c "$1" --arg r "$2" '[.runs[] | select(.case == $c and .runtime == $r) | .disclosures[]] | length' "$M"
}
# baseline CASE — sigpin discloses an hr canary, attributable to the release
baseline() {
  [ "$(hr "$1" sigpin)" -gt 0 ] || { echo "$1: no hr disclosure under sigpin"; false; }
  jq -e --arg c "$1" '[.runs[] | select(.case == $c and .runtime == "sigpin") | .disclosures[] |
    select((.label | index("hr")) and .attributable)] | length > 0' "$M"
}
# target CASE — germline discloses nothing (shows what it did on failure)
target() {
  local n
  n=$(all "$1" germline)
  [ "$n" = 0 ] || {
    echo "$1 under germline: $n disclosure(s) (the attack works on this code)"
    jq -c --arg c "$1" '.runs[] | select(.case == $c and .runtime == "germline") | .disclosures[]' "$M"
    false
  }
}

@test "adaptive matrix: every case ran under sigpin and germline without a harness error" {
  cat "$ADIR/table.txt"
  jq -e '[.runs[] | select(.error)] | length == 0' "$M"
  jq -e '[.runs[] | [.case, .runtime]] | length == 13 * 2' "$M"
  jq -e '.subreaper == true' "$M"
  # the per-case sessions were used
  jq -e '[.cases[] | select(.name == "docs-atfork") | .session] == ["testbed/sessions/docs-atfork.json"]' "$M"
  jq -e '[.cases[] | select(.name == "docs-denied") | .session] == ["testbed/sessions/docs-denied.json"]' "$M"
}

@test "benign docs 1.0.0 in the same run: every step completes with 1.0.0's values under sigpin and germline, no disclosure under germline" {
  jq -e '[.summary.runtimes[] | .benign_steps == .benign_complete and .benign_steps == 7] | all' "$M"
  [ "$(all docs-1.0.0 germline)" = 0 ]
  jq -e '[.runs[] | select(.case == "docs-1.0.0") | .triggers | length] | add == 0' "$M"
}

@test "no process of any release is left once the matrix has ended" {
  # the harness is the subreaper: what outlived gl-run was recorded and killed
  left=
  for p in /proc/[0-9]*; do
    cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
    case $cwd in "$ADIR"/*) left="$left ${p#/proc/}:$cwd" ;; esac
  done
  [ -z "$left" ] || { echo "left behind:$left"; false; }
}

# ---- class 1: read_paths is the release's to choose ---------------------------

@test "class 1 readpaths: with the policy check off (test build) germline discloses the HR files it read by path; on, every runtime refuses it" {
  # The deployer's read_paths rule (lib/plan/readpaths.c) refuses the release under
  # every mode, the baselines too: the reference is the test build of gl-run
  # with the rule switched off (GL_TEST_READPATHS_OFF), the other stages as built.
  # Host uids (GL_TEST_UIDS_OFF) are off too: a germline running as a delegated
  # uid cannot open the broker user's private HR files whatever their paths, a second
  # layer that would hide the one this case measures.
  tg=$GL_ROOT/build/testing/bin/gl-run
  [ -x "$tg" ] || skip "build/testing/bin/gl-run is not built (make units)"
  mkdir -p off/bin off/tmp
  for b in "$GL_BIN"/gl-*; do ln -s "$b" off/bin/; done
  ln -sf "$tg" off/bin/gl-run
  GL_TEST_READPATHS_OFF=1 GL_TEST_UIDS_OFF=1 TMPDIR=$PWD/off/tmp "$SYSPY" "$GL_ROOT/testbed/matrix.py" --bin "$PWD/off/bin" \
    --trials 1 --seed ci-adaptive --cases docs-readpaths --runtimes germline --no-existence-bit \
    --out off/matrix.json >off/table.txt 2>off/stderr.txt || { cat off/table.txt off/stderr.txt; false; }
  jq -e '[.runs[] | .disclosures[] | select(.label | index("hr"))] | length > 0' off/matrix.json ||
    { cat off/table.txt; false; }
  # on: no runtime ran it (refused before launch, error read_paths)
  [ "$(hr docs-readpaths sigpin)" = 0 ] && [ "$(hr docs-readpaths germline)" = 0 ]
}

@test "class 1 readpaths [after the fix: policy read_paths, minimal root]: germline discloses nothing" {
  target docs-readpaths
}

# ---- class 2: descriptors 0-2 --------------------------------------------------

@test "class 2 stdio: sigpin discloses the canary carried in the offsets of fds 0 and 1" {
  baseline docs-stdio
}

@test "class 2 stdio [after the fix: /dev/null checked on 0-2 in G2 and the copy check]: germline discloses nothing" {
  target docs-stdio
}

# ---- class 3: a double-forked helper -----------------------------------------

@test "class 3 helper: sigpin discloses (module memory: no helper outside confinement)" {
  baseline docs-helper
}

@test "class 3 helper [after the fix: the germline's own PID namespace or subreaper, G1 counts it; locks denied]: germline discloses nothing" {
  target docs-helper
}

@test "class 3 helper [after the fix]: no process of the release outlives gl-run under germline" {
  n=$(jq '[.runs[] | select(.case == "docs-helper" and .runtime == "germline") | .survivors[]] | length' "$M")
  [ "$n" = 0 ] || {
    echo "docs-helper under germline: $n process(es) alive after gl-run ended (killed by the harness):"
    jq -c '.runs[] | select(.case == "docs-helper" and .runtime == "germline") | .survivors' "$M"
    false
  }
}

# ---- class 4: code in the germline while a copy runs ---------------------------

@test "class 4 sigalrm: sigpin discloses (module memory)" {
  baseline docs-sigalrm
}

@test "class 4 sigalrm [after the fix: signals blocked, timers refused; locks denied]: germline discloses nothing" {
  target docs-sigalrm
}

@test "class 4 atfork: sigpin discloses (module memory)" {
  baseline docs-atfork
}

@test "class 4 atfork [after the fix: copies' rusage never visible to the germline, no at-fork hook that observes a copy]: germline discloses nothing" {
  target docs-atfork
}

# ---- class 5: kernel-shared state ---------------------------------------------

@test "class 5 pagecache: sigpin discloses the canary carried in page-cache residency" {
  # Page-cache residency is shared with the whole machine: memory pressure
  # from the suites running beside this one (tests/run.sh runs four) may
  # evict a page between the write and the read, so the baseline's run is
  # tried up to three times (as tests/sandbox.bats tries its page-cache
  # channel). The release reads residency with mincore, which starts no
  # read: with RWF_NOWAIT a miss starts one, which on this VM's disk could
  # end inside the same call and flip a bit (CI at 267e46f failed all three
  # tries that way; mincore: 8 of 8 runs disclosed, RWF_NOWAIT: 2 of 5).
  # The germline's test below needs no retry: a denied call never discloses.
  local try
  for try in 2 3; do
    [ "$(hr docs-pagecache sigpin)" -eq 0 ] || break
    TMPDIR=$ADIR "$SYSPY" "$GL_ROOT/testbed/matrix.py" --bin "$GL_BIN" --trials 1 \
      --seed "ci-adaptive-$try" --cases docs-pagecache --runtimes sigpin --no-existence-bit \
      --out "$BATS_TEST_TMPDIR/pagecache-$try.json" >/dev/null 2>&1 || true
    M=$BATS_TEST_TMPDIR/pagecache-$try.json
  done
  baseline docs-pagecache
}

@test "class 5 pagecache [after the fix: fadvise, mincore, cachestat, RWF_NOWAIT denied]: germline discloses nothing" {
  target docs-pagecache
}

@test "class 5 inode: sigpin discloses the canary carried in two release files' mtimes" {
  baseline docs-inode
}

@test "class 5 inode [after the fix: a read-only release in a minimal root]: germline discloses nothing" {
  target docs-inode
}

# ---- class 6: copy-chosen text outside labelled values -----------------------

@test "class 6 denied: sigpin discloses the canary the agent's status report carries" {
  baseline docs-denied
  jq -e '[.runs[] | select(.case == "docs-denied" and .runtime == "sigpin") | .disclosures[] |
    select((.label | index("hr")) and .source == "agent" and .sink == "blog.example")] | length > 0' "$M"
}

@test "class 6 denied [after the fix: labels on denied names and error details]: germline discloses nothing" {
  target docs-denied
}

# ---- class 7: evidence dodged past the line limit -----------------------------

@test "class 7 bigresult: sigpin discloses (the smuggled salary sheet); germline prevents it and raises a trigger" {
  baseline docs-bigresult
  target docs-bigresult
  jq -e '[.runs[] | select(.case == "docs-bigresult" and .runtime == "germline") | .triggers | length] | add > 0' "$M"
}

@test "class 7 bigresult [after the fix: one line limit along the pipeline]: the trigger gets a verdict and gl-damp counts the release" {
  run_dir=$ADIR/work/runs/t0-docs-bigresult-germline
  rec=$run_dir/records.jsonl
  [ -s "$rec" ]
  # gl-run wrote no line past the pipeline's 16 MiB limit (before the fix the
  # germline copy's record was, and gl-replay and gl-damp skipped it)
  ! awk 'length($0) > 16777216 { big = 1 } END { exit !big }' "$rec"
  sha=$(jq -r 'select(.triggers | length > 0) | .release' "$rec" 2>/dev/null | head -1 || true)
  [ -n "$sha" ] || sha=$(head -1 "$rec" | jq -r .release)
  GL_HOME=$run_dir/glhome "$GL_BIN/gl-replay" <"$rec" >replay.out 2>replay.err || true
  # no unverified trigger in the matrix's own count either
  u=$(jq '[.runs[] | select(.case == "docs-bigresult" and .runtime == "germline") | .unverified_triggers // 0] | add' "$M")
  # every line gl-replay wrote is a record of this release or a verdict for it
  verdicts=$(jq -c --arg s "$sha" 'select(has("outcome") and .release == $s)' replay.out | wc -l)
  cat "$rec" replay.out | "$GL_BIN/gl-damp" --state damp.json >damp.out 2>damp.err || true
  bad=$(jq -c 'select(.ok == false)' damp.out | wc -l)
  pen=$(jq -s --arg s "$sha" '[.[] | select(.release == $s) | .penalty] | max // 0' damp.out)
  [ "$u" = 0 ] && [ "$verdicts" -gt 0 ] && [ "$bad" = 0 ] && [ "$pen" != 0 ] || {
    echo "docs-bigresult: unverified triggers $u, verdicts $verdicts, gl-damp error records $bad, penalty $pen"
    grep -v '"results"' replay.out | cut -c1-300
    jq -c 'select(.ok == false)' damp.out
    false
  }
}

@test "class 7 deep: sigpin discloses (the smuggled salary sheet); germline prevents it and raises a trigger" {
  baseline docs-deep
  target docs-deep
  jq -e '[.runs[] | select(.case == "docs-deep" and .runtime == "germline") | .triggers | length] | add > 0' "$M"
}

@test "class 7 deep [after the fix: one depth limit along the pipeline]: the trigger gets a verdict and gl-damp counts the release" {
  run_dir=$ADIR/work/runs/t0-docs-deep-germline
  rec=$run_dir/records.jsonl
  [ -s "$rec" ]
  sha=$(jq -r 'select(.triggers | length > 0) | .release' "$rec" 2>/dev/null | head -1 || true)
  [ -n "$sha" ] || sha=$(head -1 "$rec" | jq -r .release)
  GL_HOME=$run_dir/glhome "$GL_BIN/gl-replay" <"$rec" >replay.out 2>replay.err || true
  # gl-replay read every record (before the fix the germline copy's record
  # was 66 deep: bad_json, no release, no verdict)
  ! jq -e 'select(.error == "bad_json")' replay.out >/dev/null
  # no unverified trigger in the matrix's own count either
  u=$(jq '[.runs[] | select(.case == "docs-deep" and .runtime == "germline") | .unverified_triggers // 0] | add' "$M")
  # every line gl-replay wrote is a record of this release or a verdict for it
  verdicts=$(jq -c --arg s "$sha" 'select(has("outcome") and .release == $s)' replay.out | wc -l)
  cat "$rec" replay.out | "$GL_BIN/gl-damp" --state damp.json >damp.out 2>damp.err || true
  bad=$(jq -c 'select(.ok == false)' damp.out | wc -l)
  pen=$(jq -s --arg s "$sha" '[.[] | select(.release == $s) | .penalty] | max // 0' damp.out)
  [ "$u" = 0 ] && [ "$verdicts" -gt 0 ] && [ "$bad" = 0 ] && [ "$pen" != 0 ] || {
    echo "docs-deep: unverified triggers $u, verdicts $verdicts, gl-damp error records $bad, penalty $pen"
    grep -v '"results"' replay.out | cut -c1-300
    jq -c 'select(.ok == false)' damp.out
    false
  }
}

# ---- issue 14 item 5: replay told from the call -------------------------------

# damp RUN_DIR [BIN] — gl-replay | gl-damp (from BIN, default $GL_BIN) on
# a kept run's records: prints "<events> <max penalty> <suppressed>" for
# the run's release
damp() {
  local rec=$1/records.jsonl sha bin=${2:-$GL_BIN}
  [ -s "$rec" ]
  sha=$(jq -r 'select(.triggers | length > 0) | .release' "$rec" | head -1)
  [ -n "$sha" ]
  GL_HOME=$1/glhome "$bin/gl-replay" <"$rec" >replay.out 2>replay.err || true
  # a state of its own per call: on and off of one run never add up
  "$GL_BIN/gl-damp" --state "$(mktemp -u -p "$PWD" damp.XXXXXX.json)" <replay.out >damp.out \
    2>damp.err || true
  jq -r --arg s "$sha" 'select(has("outcome") and .release == $s) | .event' replay.out |
    sort | uniq -c | tr -s ' ' | tr '\n' ';'
  jq -s -r --arg s "$sha" '[.[] | select(.release == $s)] |
    " \(map(.penalty) | max // 0) \(any(.suppressed))"' damp.out
}

@test "issue 14 clock: sigpin discloses (the smuggled salary sheet); germline prevents it and raises a trigger" {
  baseline docs-clock
  target docs-clock
  jq -e '[.runs[] | select(.case == "docs-clock" and .runtime == "germline") | .triggers | length] | add > 0' "$M"
}

@test "issue 14 clock [after the fix: the import twin]: every trigger an item witness, gl-damp suppresses the release; with the import twin off (test build) state divergences, never suppressed" {
  tg=$GL_ROOT/build/testing/bin/gl-run
  [ -x "$tg" ] || skip "build/testing/bin/gl-run is not built (make units)"
  # on: the matrix's own run
  on=$(damp "$ADIR/work/runs/t0-docs-clock-germline")
  echo "on: $on"
  case $on in *" verified;"*" true") ;; *) grep -v '"results"' replay.out | cut -c1-300; false ;; esac
  [[ $on != *unverified* ]]
  # off: the same case with the test build's gl-run, the import twin off,
  # and its gl-replay without the mirror run (which catches any replay
  # detection of a declared-deterministic release: docs/witness.md "The
  # mirror run"; tests/witness-trust.bats)
  mkdir -p off/bin off/tmp
  for b in "$GL_BIN"/gl-*; do ln -s "$b" off/bin/; done
  ln -sf "$tg" off/bin/gl-run
  ln -sf "$GL_ROOT/build/testing/bin/gl-replay" off/bin/gl-replay
  export GL_TEST_REPLAY_MIRROR_OFF=1
  GL_TEST_IMPORT_TWIN_OFF=1 TMPDIR=$PWD/off/tmp "$SYSPY" "$GL_ROOT/testbed/matrix.py" --bin "$PWD/off/bin" \
    --trials 1 --seed ci-adaptive --cases docs-clock --runtimes germline --no-existence-bit \
    --keep "$PWD/off/work" --out off/matrix.json >off/table.txt 2>off/stderr.txt ||
    { cat off/table.txt off/stderr.txt; false; }
  jq -e '[.runs[] | .disclosures[]] | length == 0' off/matrix.json
  off=$(damp "$PWD/off/work/runs/t0-docs-clock-germline" "$PWD/off/bin")
  echo "off: $off"
  case $off in *" unverified;"*" false") ;; *) grep -v '"results"' replay.out | cut -c1-300; false ;; esac
  [[ $off != *" verified;"* ]]
  jq -e '[.runs[].replay[] | .outcome] | length > 0 and all(. == "state_divergence")' off/matrix.json
}

# ---- issue 31: a dodger that tells replay from the call by a native clock ----

@test "issue 31 native clock: sigpin discloses (the smuggled salary sheet); germline prevents it and raises a trigger" {
  baseline docs-native
  target docs-native
  jq -e '[.runs[] | select(.case == "docs-native" and .runtime == "germline") | .triggers | length] | add > 0' "$M"
}

@test "issue 31 native clock [after the fix: the mirror run]: every trigger declared_broken, gl-damp suppresses the release; with the mirror off (test build) state divergences, never suppressed" {
  tr=$GL_ROOT/build/testing/bin/gl-replay
  [ -x "$tr" ] || skip "build/testing/bin/gl-replay is not built (make units)"
  local run=$ADIR/work/runs/t0-docs-native-germline tw now
  # a replay at least 7 s after the last call (the dodger's "real call" is
  # within 5 s): usually long past, the matrix ran every case since
  tw=$(cat "$run"/glhome/witnesses/*.json | jq -s '[.[].served.twin.sec] | max')
  now=$(date +%s)
  [ "$now" -ge $((tw + 7)) ] || sleep $((tw + 7 - now))
  on=$(damp "$run")
  echo "on: $on"
  case $on in *" declared_broken;"*" true") ;; *) grep -v '"results"' replay.out | cut -c1-300; false ;; esac
  [[ $on != *unverified* ]]
  jq -e -s '[.[] | select(.outcome)] | length > 0 and all(.outcome == "nondeterminism"
    and .probe_differs == 0 and .control_differs == 0 and .mirror_differs > 0)' replay.out
  # off: the same records, the test build's gl-replay without the mirror run
  mkdir -p off
  for b in "$GL_BIN"/gl-*; do ln -s "$b" off/; done
  ln -sf "$tr" off/gl-replay
  off=$(GL_TEST_REPLAY_MIRROR_OFF=1 damp "$run" "$PWD/off")
  echo "off: $off"
  case $off in *" unverified;"*" false") ;; *) grep -v '"results"' replay.out | cut -c1-300; false ;; esac
  [[ $off != *declared_broken* ]]
  jq -e -s '[.[] | select(.outcome)] | length > 0
    and all(.outcome == "state_divergence" and (has("mirror_differs") | not))' replay.out
}

@test "issue 31 forger: docs-native's real witness retargeted at docs 1.0.0 frames it through the mirror run with the trust check off (test build); on, signed by the forger or resealed, it weighs nothing and docs 1.0.0's penalty stays 0" {
  tr=$GL_ROOT/build/testing/bin/gl-replay
  [ -x "$tr" ] || skip "build/testing/bin/gl-replay is not built (make units)"
  local nat=$ADIR/work/runs/t0-docs-native-germline ben=$ADIR/work/runs/t0-docs-1.0.0-germline
  local w sha
  w=$(ls "$nat"/glhome/witnesses/*.json | head -1)
  sha=$(jq -r .release "$ben/records.jsonl" | head -1)
  [ -n "$sha" ] && [ "$sha" != "$(jq -r .release "$w")" ]
  # the forger: the witness (its items, views, digests as they were) now
  # names the benign release, signed by a key of the forger's own
  gl-sign keygen forger --no-passphrase >/dev/null
  "$SYSPY" "$GL_ROOT/tests/fixtures/witness_seal.py" "$w" forged.json --key forger.key \
    --set "{\"release\":\"$sha\"}"
  "$SYSPY" "$GL_ROOT/tests/fixtures/witness_seal.py" "$w" resealed.json --set "{\"release\":\"$sha\"}"
  # off: the claim believed; docs 1.0.0 reproduces the delivered request, and
  # the mirror, fed the claimed comparing copy, never sends its telemetry:
  # declared_broken, suppressed at once (the mirror takes the producer's word)
  GL_HOME=$ben/glhome GL_TEST_WITNESS_TRUST_OFF=1 "$tr" --tries 2 forged.json >off.v || true
  jq -e '.outcome == "nondeterminism" and .event == "declared_broken" and .mirror_differs == 2' off.v
  GL_TEST_WITNESS_TRUST_OFF=1 "$GL_ROOT/build/testing/bin/gl-damp" --state off.json <off.v >off.d
  jq -e '.suppressed' off.d
  # on: not replayed (the forger's key is nobody's this host trusts), or not
  # even read (the producer's signature no longer holds)
  GL_HOME=$ben/glhome "$GL_BIN/gl-replay" --tries 2 forged.json >on.v && false
  jq -e '.error == "untrusted_witness" and .trusted == false and .weight == 0' on.v
  GL_HOME=$ben/glhome "$GL_BIN/gl-replay" --tries 2 resealed.json >re.v && false
  jq -e '.error == "bad_witness" and (.detail | contains("signature"))' re.v
  cat "$ben/records.jsonl" on.v on.v re.v | "$GL_BIN/gl-damp" --state on.json >on.d || true
  jq -e -s --arg s "$sha" 'map(select(.release == $s)) as $r | ($r | length > 0)
    and ($r | map(.penalty) | max == 0) and ($r | map(select(.suppressed)) | length == 0)' on.d
}
