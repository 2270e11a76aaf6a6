#!/usr/bin/env bats
# Many resident releases (issue 19): gl-run --max-resident K keeps at most K
# germlines up at once and stops the least recently used idle one to make
# room; a later call of that release relaunches it, verified as always
# (admission, receipts, G1–G3), and finds its slots as they were
# (lib/session/resident.c gl_session_room; docs/gl-run.md "--max-resident").
#
# Real components only: three distinct signed installs of the counter
# release (tests/fixtures/releases/cc-counter, a counter in call.state, one
# version each), real germlines, signed receipts. gl-run is driven as a
# coprocess so that its germlines are counted after each record: each is
# an init (a child of gl-run, PID 1 of its namespace) whose child runs
# germline_host.py. The mechanism off is K = 256, the default: three up at
# once. The busy rule (never stop a release with a call in flight) is
# tests/unit/resident_test.c's (tests/lib.bats).
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
load fixtures/run/replay
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":[]},"routes":{}}' >"$POLICY"
  gl-sign keygen --no-passphrase host >/dev/null
  mkdir rc
  local v
  for v in a b c; do
    mkdir "rel-$v"
    cp "$FIX/releases/cc-counter/counter.py" "rel-$v/"
    jq -c --arg v "1.0.0-$v" '.version = $v' "$FIX/releases/cc-counter/manifest.json" \
      >"rel-$v/manifest.json"
  done
  A=$(install_release "$PWD/rel-a")
  B=$(install_release "$PWD/rel-b")
  C=$(install_release "$PWD/rel-c")
}

teardown() {
  [ -z "${GLR_PID:-}" ] || kill "$GLR_PID" 2>/dev/null || true
  kill_pids
  release_cleanup
}

# call ID SHA [FUNCTION] — a planned envelope of bump, or of FUNCTION with
# $ITEMS (default none) and $ARGS (default {})
call() {
  if [ -n "${3:-}" ]; then
    envelope "$1" "$2" "$3" "${ITEMS:-[]}" "$(jq -cn --argjson a "${ARGS:-{\}}" '{args:$a}')"
  else
    envelope "$1" "$2" bump
  fi |
    gl-plan --policy "$POLICY"
}

# germlines PID — how many germlines gl-run PID has up: its children that
# have a child running germline_host.py
germlines() {
  local n=0 i g
  for i in $(cat "/proc/$1/task/$1/children"); do
    for g in $(cat "/proc/$i/task/$i/children" 2>/dev/null); do
      if tr '\0' ' ' <"/proc/$g/cmdline" 2>/dev/null | grep -q germline_host.py; then
        n=$((n + 1))
        break
      fi
    done
  done
  echo "$n"
}

# residents PID — germlines (above) plus the baselines' unconfined processes
# (sigifc, sigpin: children of gl-run running germline_host.py themselves)
residents() {
  local n i
  n=$(germlines "$1")
  for i in $(cat "/proc/$1/task/$1/children"); do
    if tr '\0' ' ' <"/proc/$i/cmdline" 2>/dev/null | grep -q germline_host.py; then n=$((n + 1)); fi
  done
  echo "$n"
}

# receipts_of STATE — files in rc/ whose state is STATE
receipts_of() { for f in rc/*.json; do [ "$(jq -r .signed.state "$f")" = "$1" ] && echo "$f"; done; true; }
# launches_of SHA — the fully_enforced receipts' ids of a release, one a line
launches_of() {
  local f
  for f in $(receipts_of fully_enforced); do
    [ "$(jq -r .signed.release "$f")" = "$1" ] && basename "$f" .json
  done
  true
}

# session K ID:SHA[:FUNCTION]… — gl-run --max-resident K with receipts
# (and $MODE, default germline) as a coprocess; one call per argument, each record appended to records and
# the number of germlines up after it to counts (one a line); then the
# receipts in rc/ at that point (before the session ends) to mid, and
# stdin closed.
session() {
  local k=$1 a
  shift
  : >records
  : >counts
  coproc GLR { exec gl-run --policy "$POLICY" --max-resident "$k" --receipts rc \
    --host-key host --mode "${MODE:-germline}" 2>>"$BATS_TEST_TMPDIR/err" 3>&-; }
  for a in "$@"; do
    local f=${a#*:*:}
    [ "$f" != "$a" ] || f=
    a=${a%:"$f"}
    call "${a%%:*}" "${a#*:}" $f >&"${GLR[1]}"
    local rec
    IFS= read -r -t 120 rec <&"${GLR[0]}" || { cat "$BATS_TEST_TMPDIR/err"; false; }
    printf '%s\n' "$rec" >>records
    residents "$GLR_PID" >>counts
  done
  for f in rc/*.json; do echo "$(jq -r .signed.state "$f") $(basename "$f" .json)"; done >mid
  local pid=$GLR_PID fd=${GLR[1]}
  exec {fd}>&- # stdin closed: the session ends
  wait "$pid" || { cat "$BATS_TEST_TMPDIR/err"; false; }
  GLR_PID=
}

@test "--max-resident 2, calls A B C A: C's launch evicts A, A's next call relaunches it (off: K=256, three up)" {
  # Off: the default K keeps all three: three germlines after C, and A's
  # second call is served by its first launch.
  session 256 a1:"$A" b1:"$B" c1:"$C" a2:"$A"
  [ "$(paste -sd' ' counts)" = "1 2 3 3" ] || { cat counts; false; }
  [ "$(launches_of "$A" | wc -l)" -eq 1 ]
  [ "$(grep -c '^exited ' mid)" -eq 0 ]
  rm -f rc/*.json
  # On: K=2.
  session 2 a1:"$A" b1:"$B" c1:"$C" a2:"$A"
  jq -se 'map(.ok) | all' records
  # never more than 2 up (each eviction precedes its launch)
  [ "$(paste -sd' ' counts)" = "1 2 2 2" ] || { cat counts; false; }
  # two verified launches of A, one each of B and C
  [ "$(launches_of "$A" | wc -l)" -eq 2 ]
  [ "$(launches_of "$B" | wc -l)" -eq 1 ] && [ "$(launches_of "$C" | wc -l)" -eq 1 ]
  local a1 a2 c1
  a1=$(jq -r 'select(.id == "a1") | .receipts[0]' records)
  a2=$(jq -r 'select(.id == "a2") | .receipts[0]' records)
  [ "$a1" != "$a2" ] && launches_of "$A" | grep -qx "$a1" && launches_of "$A" | grep -qx "$a2"
  # the evicted launches were closed before the session ended: A's first
  # (for C) and then B's (the LRU when A came back), each by one exited
  # receipt named by no record (C's record names C's launch only)
  local b1 closed
  b1=$(launches_of "$B")
  closed=$(awk '$1 == "exited" {print "rc/" $2 ".json"}' mid | xargs jq -r .signed.closes | sort)
  [ "$closed" = "$(printf '%s\n' "$a1" "$b1" | sort)" ] || { cat mid; false; }
  c1=$(launches_of "$C")
  [ "$(jq -c 'select(.id == "c1") | .receipts' records)" = "[\"$c1\"]" ]
  [ "$(jq -c 'select(.id == "a2") | .receipts' records)" = "[\"$a2\"]" ]
  # at the end every launch is closed, and the receipts verify
  [ "$(receipts_of exited | wc -l)" -eq 4 ]
  run gl-verify receipt rc/*.json --host host.pub
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  json -s 'map(.ok) | all'
  # the relaunched germline passed G1–G3 like the first one: its record
  # says the copies were enforced as always
  jq -se 'map(.enforcement.seccomp == "enforced" and .enforcement.filesystem == "enforced") | all' records
}

@test "an evicted release's slot survives: its counter goes on across relaunches (K=1: A B A B A)" {
  session 1 a1:"$A" b1:"$B" a2:"$A" b2:"$B" a3:"$A"
  [ "$(paste -sd' ' counts)" = "1 1 1 1 1" ] || { cat counts; false; }
  # every call a fresh verified launch (K=1, the releases alternate)
  [ "$(launches_of "$A" | wc -l)" -eq 3 ] && [ "$(launches_of "$B" | wc -l)" -eq 2 ]
  [ "$(jq -sc 'map(.results[0].value)' records)" = "[1,1,2,2,3]" ]
  # a hit on the one resident needs no relaunch
  rm -f rc/*.json
  session 1 a4:"$A" a5:"$A"
  [ "$(launches_of "$A" | wc -l)" -eq 1 ]
  [ "$(jq -sc 'map(.results[0].value)' records)" = "[4,5]" ]
}

@test "an evicted mcp-stdio release is relaunched and checked again before it serves (K=1: M A M)" {
  M=$(install_release "$FIX/mcp/notes")
  ARGS='{"text":"one two three"}'
  session 1 m1:"$M":word_count a1:"$A" m2:"$M":word_count
  [ "$(paste -sd' ' counts)" = "1 1 1" ] || { cat counts; false; }
  [ "$(launches_of "$M" | wc -l)" -eq 2 ]
  jq -se 'map(.ok) | all' records
  jq -se '[.[] | select(.id != "a1") | .results[0].value.content[0].text] ==
    ["3 words, 1 lines, 13 characters", "3 words, 1 lines, 13 characters"]' records
}

@test "the baselines' persistent processes count too: sigpin and confined, K=1, A B: one up after B (off: K=256, two)" {
  for MODE in sigpin confined; do
    session 256 a1:"$A" b1:"$B"
    [ "$(paste -sd' ' counts)" = "1 2" ] || { echo "$MODE off"; cat counts; false; }
    session 1 a1:"$A" b1:"$B" a2:"$A"
    [ "$(paste -sd' ' counts)" = "1 1 1" ] || { echo "$MODE on"; cat counts; false; }
    jq -se 'map(.ok) | all' records
  done
}

@test "--max-resident 0, x, 257, 2x, -1: usage errors (exit 2); 1 and 256 are accepted" {
  local k
  for k in 0 x 257 2x -1 ""; do
    run --separate-stderr gl-run --policy "$POLICY" --max-resident "$k" </dev/null
    [ "$status" -eq 2 ] || { echo "K=$k: $status $stderr"; false; }
    [[ "$stderr" == *"--max-resident must be releases in 1..256"* ]] || { echo "$stderr"; false; }
  done
  run gl-run --policy "$POLICY" --max-resident </dev/null
  [ "$status" -eq 2 ]
  for k in 1 256; do
    run gl-run --policy "$POLICY" --max-resident "$k" </dev/null
    [ "$status" -eq 0 ]
  done
}

@test "a witness of a call served by a relaunched germline replays (K=1: S B S, S leaks)" {
  # the replay suites' world: an invoice (finance) and a salary (hr), the
  # OCR host cleared for finance only, a real sink on loopback
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  echo '{"clearances":{"agent":["finance","hr"],"ocr.example":["finance"]},"routes":{}}' >"$POLICY"
  mkdir -p items
  printf '%s' INVOICE-1 >items/invoice.txt
  printf '%s' SALARY-1 >items/salary.csv
  ITEMS="[$(item invoice.txt '["finance"]' INVOICE-1),$(item salary.csv '["hr"]' SALARY-1)]"
  sink ocr.example
  S=$(install_release "$FIX/releases/rp-seq")
  session 1 s1:"$S":ocr_dup b1:"$B" s2:"$S":ocr_dup
  # s2 ran on S's second launch (b1 evicted the first)
  [ "$(launches_of "$S" | wc -l)" -eq 2 ]
  [ "$(jq -r 'select(.id == "s1") | .receipts[0]' records)" != \
    "$(jq -r 'select(.id == "s2") | .receipts[0]' records)" ]
  jq -se '[.[] | select(.id != "b1") | .triggers[0].kind] == ["mismatch","mismatch"]' records
  w=$(jq -r 'select(.id == "s2") | .triggers[0].witness' records)
  [ -f "$w" ]
  run --separate-stderr gl-replay --items items "$w"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "item_witness" and .event == "verified"'
}

@test "--max-resident 1 --jobs 2: a call of another release waits while every resident has a call in flight, never refused (off: refused, a bit about the other call)" {
  TGLRUN=$GL_ROOT/build/testing/bin/gl-run
  [ -x "$TGLRUN" ] || skip "build/testing/bin/gl-run is not built (make units)"
  H=$(install_release "$FIX/releases/uid-sigq")
  # hold keeps its release resident and busy for 2 s; b1 needs a second one
  pair() {
    { ARGS='{"s":2}' ITEMS='[{"name":"salary.csv","label":[],"data":"MQo="}]' call h "$H" hold
      call b1 "$B"; } | "$@" --policy "$POLICY" --max-resident 1 --jobs 2 --unordered 3>&- >out 2>err
  }
  GL_TEST_ROOM_WAIT_OFF=1 pair "$TGLRUN" || true
  jq -se 'map(select(.id == "b1"))[0] | .ok == false and .error == "launch" and (.detail | test("max-resident"))' out ||
    { cat out err; false; }
  pair gl-run || { cat out err; false; }
  jq -se 'length == 2 and all(.ok)' out || { cat out err; false; }
}
