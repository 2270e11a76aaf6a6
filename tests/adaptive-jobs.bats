#!/usr/bin/env bats
# The adaptive attacks with calls really in flight at once (issue 19 "Must
# show": the adaptive attacks at --jobs 2 disclose nothing;
# docs/security-matrix.md "Pipelined runs"). testbed/matrix.py --pipeline:
# the scripted agent sends every step whose inputs are known without waiting
# for earlier records, through gl-run --jobs 2 --unordered, and the OCR
# sink holds each reply 0.5 s, so that a call posting to it stays in flight
# while the next ones run. The sessions of testbed/sessions/jobs add to
# docs.json (and docs-atfork.json) four calls of docs in other slots than
# the agent's (other consumers), so that calls of ONE germline run at once
# (docs/gl-run.md "--jobs": calls of one release in different slots run
# together on its germline).
#
# The cases are the adaptive variants whose channel crosses calls (issue 13:
# stdio offsets, a double-forked helper, code in the germline on SIGALRM or
# at fork, the page cache, inode times; and, between copies alive at once,
# the signals a user has queued); each signed and installed through
# the real chain, judged by the oracle. Off: sigpin, the same sessions with
# no mechanism (the attack and the oracle work). On: germline, and the
# calls did overlap — shown by the copies themselves: two copies of one
# germline alive at once (testbed/agent.py Overlap; the copies of one call
# run one after another, so they are copies of two calls).
#
# unprivileged: yes — the matrix runs gl-run in user namespaces
# sanitizers: no — the same gl-plan | gl-run paths tests/matrix.bats runs
# under ASan, and tests/jobs-germline.bats runs two copies of one germline
# at once there
load helpers
bats_require_minimum_version 1.5.0

CASES=docs-stdio,docs-helper,docs-sigalrm,docs-atfork,docs-pagecache,docs-inode,docs-sigq

setup_file() {
  export JDIR="$BATS_FILE_TMPDIR/adaptive-jobs"
  mkdir -p "$JDIR"
  cd "$JDIR"
  TMPDIR=$JDIR "$SYSPY" "$GL_ROOT/testbed/matrix.py" --bin "$GL_BIN" --trials 1 \
    --seed ci-adaptive-jobs --cases "$CASES" --runtimes sigpin,germline --no-existence-bit \
    --pipeline --sessions "$GL_ROOT/testbed/sessions/jobs:$GL_ROOT/testbed/sessions" \
    --out "$JDIR/matrix.json" >"$JDIR/table.txt" 2>"$JDIR/stderr.txt" || echo $? >"$JDIR/failed"
}

teardown_file() { chmod -R u+w "$JDIR" 2>/dev/null || true; }

setup() {
  M=$JDIR/matrix.json
  [ ! -e "$JDIR/failed" ] || { cat "$JDIR/table.txt" "$JDIR/stderr.txt"; false; }
}

# runs RUNTIME — the runs of RUNTIME, one JSON object a line
runs() { jq -c --arg r "$1" '.runs[] | select(.runtime == $r)' "$M"; }
# hr CASE RUNTIME — disclosures of an hr-labelled item by the tool in that run
hr() {
  jq --arg c "$1" --arg r "$2" '[.runs[] | select(.case == $c and .runtime == $r) |
    .disclosures[] | select((.label | index("hr")) and .source == "tool")] | length' "$M"
}

@test "pipelined: every case ran under sigpin and germline, from the jobs sessions, every step sent" {
  cat "$JDIR/table.txt"
  jq -e '.pipeline == true and ([.runs[] | select(.error)] | length == 0)' "$M"
  jq -e '[.runs[] | [.case, .runtime]] | length == 7 * 2' "$M"
  jq -e '[.cases[] | .session] | unique == ["testbed/sessions/jobs/docs-atfork.json", "testbed/sessions/jobs/docs.json"]' "$M"
  # every step got its record (jobs/docs.json: 11 steps; jobs/docs-atfork.json: 18)
  jq -e '[.runs[] | (.pipeline.order | length) == (.steps | length) and
    (.steps | length) == (if .case == "docs-atfork" then 18 else 11 end)] | all' "$M"
}

@test "pipelined germline: calls overlapped — two copies of one germline alive at once in every run that forked copies" {
  # the runs whose calls ran copies (docs-helper and docs-sigalrm may be
  # refused before any fork: G1, the timer check)
  local n=0 line c
  while read -r line; do
    c=$(jq -r .case <<<"$line")
    jq -e '[.steps[] | select(.ok)] | length >= 2' <<<"$line" >/dev/null || continue
    n=$((n + 1))
    jq -c '{case, pipeline: (.pipeline | del(.order))}' <<<"$line"
    jq -e '.pipeline.max_live_one_germline >= 2 and .pipeline.snapshots_two_calls >= 1' <<<"$line" >/dev/null ||
      { echo "$c: no two copies of one germline seen alive at once"; false; }
  done < <(runs germline)
  [ "$n" -ge 2 ]
  # and the records came out of input order somewhere (--unordered)
  jq -e '[.runs[] | select(.runtime == "germline") | .pipeline.reordered] | any' "$M"
}

@test "off — sigpin, the same pipelined sessions: each cross-call attack discloses an hr canary" {
  local c miss=
  for c in ${CASES//,/ }; do
    # the page cache is a timing channel other suites' memory pressure may
    # flush (tests/adaptive.bats retries it); it is not required here
    [ "$c" = docs-pagecache ] && { echo "docs-pagecache under sigpin: $(hr "$c" sigpin) hr disclosure(s)"; continue; }
    [ "$(hr "$c" sigpin)" -gt 0 ] || miss="$miss $c"
  done
  [ -z "$miss" ] || { echo "no hr disclosure under sigpin:$miss"; false; }
}

@test "on — germline at --jobs 2 with calls in flight at once: no case discloses anything" {
  local n
  n=$(jq '[.runs[] | select(.runtime == "germline") | .disclosures[]] | length' "$M")
  [ "$n" = 0 ] || {
    jq -c '.runs[] | select(.runtime == "germline") | {case, disclosures}' "$M"
    false
  }
}

@test "no process of any release outlives its run under germline (docs-helper's helper included)" {
  jq -e '[.runs[] | select(.runtime == "germline") | .survivors[]] | length == 0' "$M" ||
    { jq -c '.runs[] | select(.runtime == "germline") | {case, survivors}' "$M"; false; }
}

# germline_off NAME ENV… — docs-sigq pipelined under the test build of
# gl-run (the other stages as built) with ENV: matrix.json in NAME/
germline_off() {
  local d=$JDIR/$1 tg=$GL_ROOT/build/testing/bin/gl-run b
  shift
  mkdir -p "$d/bin" "$d/tmp"
  for b in "$GL_BIN"/gl-*; do ln -sf "$b" "$d/bin/"; done
  ln -sf "$tg" "$d/bin/gl-run"
  env "$@" TMPDIR="$d/tmp" "$SYSPY" "$GL_ROOT/testbed/matrix.py" --bin "$d/bin" --trials 1 \
    --seed ci-adaptive-jobs --cases docs-sigq --runtimes germline --no-existence-bit --pipeline \
    --sessions "$GL_ROOT/testbed/sessions/jobs:$GL_ROOT/testbed/sessions" \
    --out "$d/matrix.json" >"$d/table.txt" 2>"$d/stderr.txt" || { cat "$d/table.txt" "$d/stderr.txt"; false; }
  jq -e '[.runs[] | select(.error)] | length == 0' "$d/matrix.json"
}

# (the uid alone closes this route too: tests/host-uids.bats, the first case)
@test "docs-sigq, queued signals between live copies: off (host uids and the counter limits off, test build) the hr canary reaches ocr.example; on, nothing" {
  [ -x "$GL_ROOT/build/testing/bin/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  germline_off sigq-off GL_TEST_UIDS_OFF=1 GL_TEST_COUNTERS_OFF=1
  jq -e '[.runs[] | .disclosures[] | select((.label | index("hr")) and .source == "tool")] | length > 0' \
    "$JDIR/sigq-off/matrix.json" || { cat "$JDIR/sigq-off/table.txt"; false; }
  [ "$(hr docs-sigq germline)" = 0 ]
}
