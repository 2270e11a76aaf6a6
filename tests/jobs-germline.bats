#!/usr/bin/env bats
# One germline, many live copies (issue 19; docs/design/run.md "Workers";
# lib/runtime/germline_fork.c, lib/sandbox/live.h, lib/sandbox/proc.c):
# with gl-run --jobs 2, calls of one release whose slots differ run at the
# same time on its one germline, each call in its lane (its copies are
# number 3 + lane in the germline's PID namespace, a function of the
# call's input position only), and G1 stays exactly as strict: a live
# copy of another call is accepted only when it is in the shared table
# (pid and start time); any other process in the germline's namespace is
# still refused. The loose rule an attacker wants is the GL_TESTING
# switch GL_TEST_LIVE_LOOSE=1 (build/testing/bin/gl-run): with it, a
# germline's double-forked helper passes G1 beside a live copy. Under
# "same-clearance" a germline's launch runs beside public copies only
# (GL_TEST_LAUNCH_RULE_OFF=1: beside any; the last test).
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  TBIN=$GL_ROOT/build/testing/bin
  POLICY=$BATS_TEST_TMPDIR/policy.json
  # agent's horizon is [], fin's [finance]: two slots of one release, run
  # at once only under "concurrency": "any" (the default, "same-clearance",
  # runs calls of different horizons in sequence)
  echo '{"clearances":{"agent":[],"fin":["finance"]},"routes":{},"concurrency":"any"}' >"$POLICY"
  A=$(install_release "$FIX/releases/cc-counter")
}

teardown() {
  kill_started 2>/dev/null || true
  release_cleanup
}

# call_of ID REL FUNCTION CONSUMER ARGS_JSON — one planned call
call_of() {
  envelope "$1" "$2" "$3" '[]' "$(jq -cn --arg c "$4" --argjson a "$5" '{args:$a,consumers:[$c]}')" |
    gl-plan --policy "$POLICY"
}
# bump ID REL CONSUMER [ARGS_JSON] — one planned call of bump
bump() { call_of "$1" "$2" bump "$3" "${4:-{\}}"; }
ids() { jq -r .id "$1" | paste -sd' '; }

# copies_of PID — the NSpid numbers (in the germline's namespace) of the
# live copies under gl-run PID: children of a germline's init (the init
# is gl-run's child; a copy is its child by CLONE_PARENT)
copies_of() {
  local c
  for c in $(pgrep -P "$(pgrep -d, -P "$1")" 2>/dev/null); do
    awk '/^NSpid:/ && NF == 4 && $4 == 1 { print $3 }' "/proc/$c/status" 2>/dev/null
  done | sort -n | paste -sd' '
}

@test "--jobs 2: two calls of one release (two slots) run at once on its one germline, each copy its lane's number" {
  mkfifo fifo
  gl-run --policy "$POLICY" --jobs 2 --unordered <fifo >o 2>e 3>&- &
  local p=$! i seen=""
  exec 4>fifo
  bump long "$A" agent '{"sleep":4}' >&4
  bump long2 "$A" fin '{"sleep":4}' >&4
  # both copies alive at once, forked from one germline: numbers 3 and 4
  for i in $(seq 400); do
    seen=$(copies_of "$p")
    [ "$seen" = "3 4" ] && break
    sleep 0.05
  done
  echo "live copies' numbers: $seen"
  [ "$seen" = "3 4" ]
  bump short "$A" fin >&4 # fin's slot: after long2 (one slot's calls in order)
  exec 4>&-
  wait "$p"
  cat o
  jq -e -s 'length == 3 and all(.ok)' o
  # one germline served all three: one launch
  [ "$(grep -c '"event":"launch"' e 2>/dev/null || true)" -le 1 ]
  jq -e -s 'map(select(.id == "short"))[0].results[0].value == 2' o
}

@test "--jobs 2: a short call of a release is not held behind a 4 s call of the same release in another slot" {
  { bump long "$A" agent '{"sleep":4}'; bump short "$A" fin; } >in
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o1
  cat o1
  [ "$(ids o1)" = "short long" ]
  gl-run --policy "$POLICY" --jobs 2 <in >o2
  [ "$(ids o2)" = "long short" ]
  awk -v s="$(jq -r 'select(.id == "short") | .elapsed_ms' o2)" \
    -v l="$(jq -r 'select(.id == "long") | .elapsed_ms' o2)" 'BEGIN { exit !(s * 4 < l) }'
}

@test "G1 beside a live copy: a germline's double-forked helper is refused (off: the loose rule passes it)" {
  local x=$BATS_TEST_TMPDIR/helper tag=glj$$$RANDOM
  cp -r "$FIX/releases/contain-helper" "$x" && echo "${tag:0:15}" >"$x/TAG"
  X=$(install_release "$x")
  { bump long "$A" agent '{"sleep":3}'
    envelope put "$X" put '[]' '{"args":{"secret":42}}' | gl-plan --policy "$POLICY"; } >in
  # on (bin/ and the testing build without the switch): refused, named
  for glrun in gl-run "$TBIN/gl-run"; do
    run --separate-stderr "$glrun" --policy "$POLICY" --jobs 2 --unordered <in
    echo "$output"
    [ "$status" -eq 1 ]
    printf '%s\n' "$output" | jq -e -s 'map(select(.id == "put"))[0] | .ok == false and .error == "germline_check"
      and (.detail | test("G1: a process other than the germline lives in its PID namespace"))'
    printf '%s\n' "$output" | jq -e -s 'map(select(.id == "long"))[0].ok'
  done
  # off: any child of the init passes G1 once copies are tracked (the
  # fork may then fail on its own: the helper can hold the lane's number)
  run --separate-stderr env GL_TEST_LIVE_LOOSE=1 "$TBIN/gl-run" --policy "$POLICY" --jobs 2 --unordered <in
  echo "$output"
  printf '%s\n' "$output" | jq -e -s 'map(select(.id == "put"))[0] | .ok or .error != "germline_check"'
  pkill -x "${tag:0:15}" || true
}

@test "two calls of one release at once on one germline: a copy cannot reach the other call's live copy (sigpin: it can)" {
  # one release with both functions: jobs-victim's hold and jobs-probe's probe
  local d=$BATS_TEST_TMPDIR/pair S=canary-$RANDOM$RANDOM T=-t$$$RANDOM
  mkdir "$d"
  cp "$FIX/releases/jobs-victim/victim.py" "$FIX/releases/jobs-probe/probe.py" "$d"/
  printf 'from victim import hold  # noqa: F401\nfrom probe import probe  # noqa: F401\n' >"$d/pair.py"
  jq -n '{name:"jobs-pair",version:"1.0.0",runtime:"python",entry:"pair",protocol:"germline",
    functions:{hold:{destinations:[]},probe:{destinations:[]}},read_paths:[],deterministic:true}' \
    >"$d/manifest.json"
  R=$(install_release "$d")
  # hold for agent (horizon []), probe for fin ([finance]): two slots, so
  # the two calls run at once, lanes 0 and 1 of one germline
  {
    envelope hold "$R" hold '[]' "$(jq -cn --arg s "$S" --arg t "$T" '{args:{secret:$s,sleep:4,tag:$t}}')"
    envelope probe "$R" probe '[]' "$(jq -cn --arg t "$T" '{args:{tag:$t},consumers:["fin"]}')"
  } | gl-plan --policy "$POLICY" >in
  # Off: sigpin (one unconfined process per release; its calls one at a
  # time, so the probe runs after the hold and finds what it left)
  gl-run --policy "$POLICY" --mode sigpin --jobs 2 --unordered <in >off || true
  cat off
  jq -c 'select(.id == "probe") | .results[0].value' off | grep -q "$S"
  rm -f "/tmp/gl-jobs-secret$T"
  # On: germline; the probe's record first (it ran beside the hold), and it
  # found nothing of it
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o
  cat o
  [ "$(ids o)" = "probe hold" ]
  jq -e -s 'all(.ok)' o
  ! grep -q "$S" o
  jq -c 'select(.id == "probe") | .results[0].value' o
  jq -e -s 'map(select(.id == "probe"))[0].results[0].value | index("signalled:0") and index("procs:0")
    and (map(select(startswith("file:") or startswith("socket:"))) == [])' o
}

@test "G1: a helper disguised as a zombie (its leader thread exited, another thread runs) is refused" {
  local d=$BATS_TEST_TMPDIR/zhelper
  mkdir "$d"
  cat >"$d/zh.py" <<'PY'
import ctypes, os, threading, time
if os.fork() == 0:
    if os.fork() == 0:  # re-parented to the germline's init
        threading.Thread(target=lambda: time.sleep(60)).start()
        ctypes.CDLL(None).pthread_exit(None)  # the leader goes: /proc says Z
    os._exit(0)
time.sleep(0.3)


def hello(call):
    return "hi"
PY
  jq -n '{name:"zhelper",version:"1.0.0",runtime:"python",entry:"zh",protocol:"germline",
    functions:{hello:{destinations:[]}},read_paths:[],deterministic:true}' >"$d/manifest.json"
  Z=$(install_release "$d")
  envelope z "$Z" hello | gl-plan --policy "$POLICY" >in
  mkfifo fifo
  gl-run --policy "$POLICY" --jobs 2 <fifo >o 2>e 3>&- &
  local p=$! c seen=""
  exec 4>fifo
  cat in >&4
  for i in $(seq 200); do [ -s o ] && break; sleep 0.05; done
  # the disguise: a child of the germline's init that /proc calls a zombie
  # while it has two tasks (what a rule passing every Z child lets live)
  for c in $(pgrep -P "$(pgrep -d, -P "$p")" 2>/dev/null); do
    awk '{ exit !($3 == "Z") }' "/proc/$c/stat" 2>/dev/null &&
      [ "$(ls "/proc/$c/task" | wc -l)" -ge 2 ] && seen=$c
  done
  exec 4>&-
  wait "$p" || true
  cat o
  echo "disguised helper: ${seen:-none}"
  [ -n "$seen" ]
  jq -e '.ok == false and .error == "germline_check"
    and (.detail | test("G1: a process other than the germline lives in its PID namespace"))' o
}

# tasks_below PID N — 0 once a descendant of PID has N or more tasks
tasks_below() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do
    [ "$(ls "/proc/$c/task" 2>/dev/null | wc -l)" -ge "$2" ] && return 0
    tasks_below "$c" "$2" && return 0
  done
  return 1
}

# threads_run BIN [VAR=VALUE] — at --jobs 2 --unordered: a quick call
# (lane 0), a copy that keeps 8 threads alive for 4 s (lane 1), then, once
# they are seen alive (plain pass: a descendant of gl-run with 9 tasks;
# as nobody they may not all start, and a pause stands in), four quick
# calls of the other slot (lanes 2-5: numbers 5-8 in the germline's PID
# namespace); the records' [id, ok, value or detail]. A fixed pause was
# not enough: on a loaded machine the threads came after lanes 2-5's
# forks, and the off half saw no collision (CI of 340e5ca).
threads_run() {
  local T=$THREADS p i
  rm -f fifo && mkfifo fifo
  env ${2:-GL_NONE=} "$1" --policy "$POLICY" --jobs 2 --unordered <fifo >raw 2>e &
  p=$!
  exec 4>fifo
  { call_of q0 "$T" quick agent '{}'; call_of hold "$T" hold agent '{"threads":8,"sleep":4}'; } >&4
  if plain_pass; then
    for i in $(seq 300); do tasks_below "$p" 9 && break; sleep 0.05; done
    tasks_below "$p" 9 || echo "# hold's 8 threads not seen in 15 s"
  else
    sleep 1.5
  fi
  for i in 2 3 4 5; do call_of "q$i" "$T" quick fin '{}'; done >&4
  exec 4>&-
  wait "$p" || true
  jq -c '[.id, .ok, (if .ok then .results[0].value else .detail end)]' raw >o
  cat o
}

@test "the pid counter beside live copies: a copy's threads never take another lane's number (the init moves the germline namespace's counter past the lanes); off: the next lanes' forks meet EEXIST" {
  THREADS=$(install_release "$FIX/releases/jobs-threads")
  # every thread of a copy has a number in the germline's namespace too
  # (lib/runtime/germline_child.c skip_copy_numbers); the copies' are fixed
  threads_run "$GL_BIN/gl-run"
  [ "$(wc -l <o)" -eq 6 ]
  jq -se 'all(.[]; .[1] == true)
    and ([.[] | select(.[0] | test("^q[2-5]$")) | .[2]] == ["quick","quick","quick","quick"])' o
  # as nobody (other suites' processes count against RLIMIT_NPROC) the
  # threads may not all start; as root they do, and the off half is here
  plain_pass || return 0 # the damage is the plain pass's (docs/testing.md)
  jq -se 'map(select(.[0] == "hold"))[0][2] == 8' o
  # off: the namespace's counter starts under the lanes; the 8 threads take
  # the numbers of lanes 2.. and those calls' forks fail closed
  threads_run "$TBIN/gl-run" GL_TEST_COPY_NUMBERS_OFF=1
  jq -se '[.[] | select(.[1] == false and (.[2] | test("clone: File exists")))] | length >= 1' o
}

# launch_beside GLRUN — under "same-clearance" (the default), an hr call of
# release HA (its copy holds salary.csv for 3 s) and then an hr call of
# release HB, not yet launched, at --jobs 2: prints how many germlines ran
# while HA's hr copy did (HB's import beside it: 2)
launch_beside() {
  hr_hold() {
    jq -cn --arg r "$1" --arg s "$(b64 7)" --argjson t "$2" '{id:$r[0:6],release:$r,function:"hold",
      args:{s:$t},items:[{name:"salary.csv",label:["hr"],data:$s}],consumers:["hrbot"]}' |
      gl-plan --policy same.json
  }
  rm -f fifo && mkfifo fifo
  "$1" --policy same.json --jobs 2 <fifo >o 2>e 3>&- &
  local p=$! most=0 n i ia
  exec 4>fifo
  hr_hold "$HA" 3 >&4
  # HA's germline is up and its hr copy runs: its init has two python3
  # children (the germline, the copy)
  for i in $(seq 300); do
    [ "$(pgrep -P "$(pgrep -d, -P "$p" gl-init)" python3 2>/dev/null | wc -l)" -ge 2 ] && break
    sleep 0.05
  done
  hr_hold "$HB" 0 >&4
  # while HA's copy runs (its init keeps two python3 children): the germlines
  for i in $(seq 80); do
    ia=$(pgrep -o -P "$p" gl-init) || break
    [ "$(pgrep -P "$ia" python3 | wc -l)" -ge 2 ] || break
    n=$(pgrep -P "$p" gl-init | wc -l)
    [ "$n" -gt "$most" ] && most=$n
    sleep 0.05
  done
  exec 4>&-
  wait "$p" || { cat o e >&2; return 1; }
  jq -se 'length == 2 and all(.ok)' o >/dev/null || { cat o e >&2; return 1; }
  echo "$most"
}

@test "\"same-clearance\": a germline's launch waits for running copies of a horizon other than ∅ (off: B's import runs beside A's hr copy)" {
  [ -x "$GL_ROOT/build/testing/bin/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  cd "$BATS_TEST_TMPDIR"
  echo '{"clearances":{"hrbot":["hr"]},"routes":{}}' >same.json
  HA=$(install_release "$FIX/releases/uid-sigq")
  cp -r "$FIX/releases/uid-sigq" uid-sigq-b
  jq '.name = "uid-sigq-b"' "$FIX/releases/uid-sigq/manifest.json" >uid-sigq-b/manifest.json
  HB=$(install_release "$BATS_TEST_TMPDIR/uid-sigq-b")
  GL_TEST_LAUNCH_RULE_OFF=1 run launch_beside "$GL_ROOT/build/testing/bin/gl-run"
  echo "off: $output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" = 2 ]
  # a fresh gl-run: HB is launched again
  run launch_beside gl-run
  echo "on: $output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" = 1 ]
}
