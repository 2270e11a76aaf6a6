#!/usr/bin/env bats
# gl-run --jobs N (issue 19; docs/gl-run.md "--jobs"; lib/session/jobs.h):
# calls in worker processes, ordered per key (the release and its slots),
# records in input order or, with --unordered, as they end; the policy's
# "concurrency"; a worker killed during its call. Real components only:
# signed releases installed through gl-verify (tests/fixtures/releases/
# cc-counter, and a copy of it named jobs-counter: a counter in
# call.state that can sleep),
# real germlines and copies.
#
# Each property is shown with its mechanism off — the GL_TESTING build
# (build/testing/bin/gl-run) with GL_TEST_JOBS_NOKEYS=1 (no key wait) or
# GL_TEST_JOBS_NOREAP=1 (a dead worker's copies neither killed nor its
# germline stopped); sigpin (no mechanism) for two calls' copies — and on.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

N=$(count 40 10) # calls of the counter test (tests/helpers.bash count)

setup() {
  run_setup
  TBIN=$GL_ROOT/build/testing/bin
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":[]},"routes":{}}' >"$POLICY"
  A=$(install_release "$FIX/releases/cc-counter")
  # a second release: cc-counter under another name (two releases' calls
  # run at the same time)
  cp -r "$FIX/releases/cc-counter" "$BATS_TEST_TMPDIR/jobs-counter"
  jq -c '.name = "jobs-counter"' "$FIX/releases/cc-counter/manifest.json" \
    >"$BATS_TEST_TMPDIR/jobs-counter/manifest.json"
  B=$(install_release "$BATS_TEST_TMPDIR/jobs-counter")
}

teardown() { release_cleanup; }

# bump ID REL [ARGS_JSON] — one planned call of bump
bump() {
  envelope "$1" "$2" bump '[]' "$(jq -cn --argjson a "${3:-{\}}" '{args:$a}')" |
    gl-plan --policy "$POLICY"
}
slot_n() { # REL — the counter in the release's one slot ([] horizon)
  jq -e '.n.value' "$GL_HOME/slots/$1/$(printf '%s' '[]' | sha256sum | cut -c1-64).json"
}
ids() { jq -r .id "$1" | paste -sd' '; }
ms() { jq -r --arg i "$2" 'select(.id == $i) | .elapsed_ms' "$1"; }

@test "--jobs 2: a 5 s call does not delay a short call of another release (--unordered: its record first; else input order)" {
  { bump long "$A" '{"sleep":5}'; bump short "$B"; } >in
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o1
  cat o1
  [ "$(ids o1)" = "short long" ]
  jq -e -s 'all(.ok)' o1
  gl-run --policy "$POLICY" --jobs 2 <in >o2
  cat o2
  [ "$(ids o2)" = "long short" ]
  jq -e -s 'all(.ok)' o2
  # the short call's own time, not the long one's: far below it
  awk -v s="$(ms o2 short)" -v l="$(ms o2 long)" 'BEGIN { exit !(s * 4 < l && l >= 5000) }'
  # --jobs 1 and "concurrency":"none": one call at a time, in input order
  gl-run --policy "$POLICY" --jobs 1 --unordered <in >o3
  [ "$(ids o3)" = "long short" ]
  echo '{"clearances":{"agent":[]},"routes":{},"concurrency":"none"}' >"$POLICY"
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o4
  cat o4
  [ "$(ids o4)" = "long short" ]
}

@test "\"concurrency\": same-clearance (the default) runs calls of one horizon together, others one at a time; any on request" {
  echo '{"clearances":{"agent":[],"fin":["finance"]},"routes":{},"concurrency":"same-clearance"}' >"$POLICY"
  # long: horizon [] (agent); short: horizon [finance] (fin)
  bump long "$A" '{"sleep":3}' >in
  envelope short "$B" bump '[]' '{"consumers":["fin"]}' | gl-plan --policy "$POLICY" >>in
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o1
  cat o1
  [ "$(ids o1)" = "long short" ]
  # the same horizon: together
  { bump long "$A" '{"sleep":3}'; bump short "$B"; } >in2
  gl-run --policy "$POLICY" --jobs 2 --unordered <in2 >o2
  cat o2
  [ "$(ids o2)" = "short long" ]
  # the default (SPEC §4): the same as "same-clearance"; "any" on request
  # lets the other horizon's short call finish first
  echo '{"clearances":{"agent":[],"fin":["finance"]},"routes":{}}' >"$POLICY"
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o3
  [ "$(ids o3)" = "long short" ]
  echo '{"clearances":{"agent":[],"fin":["finance"]},"routes":{},"concurrency":"any"}' >"$POLICY"
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o4
  [ "$(ids o4)" = "short long" ]
  # a value outside the three is refused when the policy is loaded
  echo '{"clearances":{},"concurrency":"some"}' >"$POLICY"
  run --separate-stderr gl-run --policy "$POLICY" </dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"concurrency"* ]]
}

@test "--jobs 2: N calls on one slot keep their order and the count (off: the key wait dropped, they do not)" {
  local i
  for ((i = 1; i <= N; i++)); do bump "c$i" "$A"; done >in
  # GL_TEST_SLOTLOCK_OFF=1 throughout: the slot's flock between gl-run
  # processes (tests/concurrency.bats) is off, so only the key wait keeps
  # the calls of one gl-run apart.
  # Off: calls of one release and slot at once on one germline.
  local bad=0 try
  for try in 1 2 3; do
    rm -rf "$GL_HOME/slots"
    GL_TEST_SLOTLOCK_OFF=1 GL_TEST_JOBS_NOKEYS=1 "$TBIN/gl-run" --policy "$POLICY" --jobs 2 <in >off 2>eoff || true
    local got
    got=$(jq -r 'select(.ok) | .results[0].value' off | paste -sd' ')
    echo "off, try $try: slot $(slot_n "$A" 2>/dev/null || echo none), values $got"
    if [ "$got" != "$(seq -s' ' 1 "$N")" ] || [ "$(slot_n "$A" 2>/dev/null || echo 0)" -ne "$N" ]; then
      bad=1
      break
    fi
  done
  [ "$bad" -eq 1 ]
  # On: the testing build without the switch, then bin/
  for glrun in "$TBIN/gl-run" gl-run; do
    rm -rf "$GL_HOME/slots"
    GL_TEST_SLOTLOCK_OFF=1 "$glrun" --policy "$POLICY" --jobs 2 <in >on
    [ "$(jq -r '.results[0].value' on | paste -sd' ')" = "$(seq -s' ' 1 "$N")" ]
    [ "$(slot_n "$A")" -eq "$N" ]
  done
}

# wait_ids FILE ID… — until FILE holds a record of each ID (bounded)
wait_ids() {
  local f=$1 i id missing
  shift
  for i in $(seq 600); do
    missing=0
    for id in "$@"; do jq -s -e --arg i "$id" 'any(.[]; .id == $i)' "$f" >/dev/null 2>&1 || missing=1; done
    [ "$missing" -eq 0 ] && return 0
    sleep 0.05
  done
  cat "$f"
  return 1
}
# rec ID COND — the record of ID in o meets COND
rec() { jq -s -e --arg i "$1" "any(.[]; .id == \$i and ($2))" o >/dev/null; }
# alive PID — running, not a zombie
alive() { [ -e "/proc/$1/stat" ] && ! awk '{ exit !($3 == "Z" || $3 == "X") }' "/proc/$1/stat" 2>/dev/null; }

# kill_worker CMD… — gl-run (CMD…, e.g. env X=1 gl-run) (--jobs 2 --unordered, stdin the fifo on fd 4,
# pid in $p) with first and other done and doomed's copy sleeping: doomed's
# worker SIGKILLed; $copy is that copy's pid
kill_worker() {
  rm -f fifo o
  mkfifo fifo
  "$@" --policy "$POLICY" --jobs 2 --unordered <fifo >o 2>e 3>&- &
  p=$!
  exec 4>fifo
  bump first "$A" >&4
  bump doomed "$A" '{"sleep":30}' >&4
  bump other "$B" >&4
  wait_ids o first other
  # the one worker left is doomed's; its copy is PID 3 + its lane (its
  # input position, 1) of its germline's namespace, a child of that
  # germline's init (a child of gl-run)
  local w="" c i
  copy=""
  for i in $(seq 600); do # other's worker ends just after its record
    w=$(pgrep -P "$p" -x gl-run-job | paste -sd' ')
    [ "$(echo "$w" | wc -w)" -eq 1 ] && break
    sleep 0.05
  done
  [ "$(echo "$w" | wc -w)" -eq 1 ]
  for i in $(seq 600); do
    for c in $(pgrep -P "$(pgrep -d, -P "$p")"); do
      awk '/^NSpid:/ { exit !(NF == 4 && $3 == 4 && $4 == 1) }' "/proc/$c/status" 2>/dev/null && copy=$c
    done
    [ -n "$copy" ] && break
    sleep 0.05
  done
  [ -n "$copy" ]
  alive "$copy"
  kill -KILL "$w"
  wait_ids o doomed
  # labelled like every outcome that may follow what its copies did: the
  # call's bound (its items, horizons and destinations: all public here)
  rec doomed '.ok == false and .error == "internal" and .labels.call == []'
  jq -r 'select(.id == "doomed") | .detail' o | grep 'signal 9'
}

@test "SIGKILL of a worker during its call: its call refused, the others complete, no copy of it left, the slot a prefix (off: its copy runs on)" {
  # Off: the main process neither kills the dead worker's copies nor stops
  # its germline: the copy runs on beside the session, still running once
  # the release's next call has come and gone (the copy is in the live
  # table, so G1 takes it for a live copy of a call)
  kill_worker env GL_TEST_JOBS_NOREAP=1 "$TBIN/gl-run"
  alive "$copy"
  bump after "$A" >&4
  wait_ids o after
  alive "$copy"
  exec 4>&-
  wait "$p" || true
  cat o
  # On
  kill_worker gl-run
  ! alive "$copy"
  # the session goes on: the release's germline relaunched, the slot as
  # the committed history left it (the off run's first and after, 1 and 2;
  # this run's first, 3; doomed committed nothing)
  bump after "$A" >&4
  exec 4>&-
  wait "$p" || true
  cat o
  rec after '.ok and .results[0].value == 4'
  rec other '.ok and .results[0].value == 2'
  [ "$(slot_n "$A")" -eq 4 ]
}

@test "G1 while another call's copy is alive: a germline with a child or a thread is still refused" {
  local C T
  C=$(install_release "$FIX/releases/sandbox-child")
  T=$(install_release "$FIX/releases/sandbox-thread")
  {
    bump long "$A" '{"sleep":8}'
    envelope child "$C" hello | gl-plan --policy "$POLICY"
    envelope thread "$T" hello | gl-plan --policy "$POLICY"
    bump after "$A"
  } >in
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o || true
  cat o
  # both refused while long's copy ran (their records came before its)
  [ "$(ids o)" = "child thread long after" ]
  rec child '.ok == false and .error == "germline_check" and (.detail | test("^G1")) and (.copies // 0) == 0'
  rec thread '.ok == false and .error == "germline_check" and (.detail | test("^G1")) and (.copies // 0) == 0'
  rec long '.ok and .results[0].value == 1'
  rec after '.ok and .results[0].value == 2'
}

# live_copy PID — a copy is alive under gl-run PID: a process in a PID
# namespace of its own nested in its germline's (NSpid "H N 1")
live_copy() {
  local c
  for c in $(pgrep -P "$(pgrep -d, -P "$1")" 2>/dev/null); do
    awk '/^NSpid:/ { f = (NF == 4 && $4 == 1) } END { exit !f }' "/proc/$c/status" 2>/dev/null && return 0
  done
  return 1
}

# victim_probe MODE — gl-run --mode MODE --jobs 2 --unordered (pid $p, o
# its records): the victim's call first; the probe's only once the victim
# holds its secret (sigpin: its file in the host's /tmp; germline: its
# copy is alive), so the probe runs beside it, not before it
victim_probe() {
  local i
  rm -f fifo o
  mkfifo fifo
  gl-run --policy "$POLICY" --mode "$1" --jobs 2 --unordered <fifo >o 2>e 3>&- &
  p=$!
  exec 4>fifo
  sed -n 1p in >&4
  for i in $(seq 600); do
    if [ "$1" = sigpin ]; then [ -s "/tmp/gl-jobs-secret$T" ] && break
    else live_copy "$p" && break; fi
    sleep 0.05
  done
  sed -n 2p in >&4
  exec 4>&-
  wait "$p" || true
  cat o
}

@test "two calls in flight: a copy cannot reach another call's live copy (sigpin: it can)" {
  local V P S=canary-$RANDOM$RANDOM
  T=-t$$$RANDOM # this test's own /tmp name and abstract socket (the passes of tests/run.sh run side by side)
  V=$(install_release "$FIX/releases/jobs-victim")
  P=$(install_release "$FIX/releases/jobs-probe")
  {
    envelope hold "$V" hold '[]' "$(jq -cn --arg s "$S" --arg t "$T" '{args:{secret:$s,sleep:4,tag:$t}}')"
    envelope probe "$P" probe '[]' "$(jq -cn --arg t "$T" '{args:{tag:$t}}')"
  } | gl-plan --policy "$POLICY" >in
  # the probe runs while the victim holds its secret (4 s): its record comes first
  # Off: sigpin, no mechanism: the probe reads the secret
  victim_probe sigpin
  rm -f "/tmp/gl-jobs-secret$T" # sigpin's victim wrote the host's /tmp
  [ "$(ids o)" = "probe hold" ]
  jq -c 'select(.id == "probe") | .results[0].value' o | grep -q "$S"
  # On: germline, two calls at once; the probe found nothing of the victim
  victim_probe germline
  [ "$(ids o)" = "probe hold" ]
  rec probe '.ok'
  rec hold '.ok and .results[0].value == "held"'
  ! grep -q "$S" o
  rec probe '.results[0].value | index("signalled:0") and index("procs:0") and (map(select(startswith("file:") or startswith("socket:"))) == [])'
}
