#!/usr/bin/env bats
# A host uid of its own for every process that runs release code while
# another may (SPEC §5; docs/sandbox.md "Host uids"; lib/sandbox/uids.h).
# The kernel counts queued signals per user: with one uid for every copy,
# a public copy reads what an hr copy alive at the same time holds
# (tests/fixtures/releases/uid-sigq: hold queues V signals, probe counts
# what is left under its own lowered RLIMIT_SIGPENDING). Off (the test build,
# GL_TEST_UIDS_OFF=1): every copy runs as gl-run's uid and the public
# consumer decodes V exactly; on: 0. The same for pipe pages, which the
# kernel counts per host uid (tests/fixtures/releases/uid-pipes: hold keeps
# 16 V pipes open, probe counts the full-size pipes it can still make), for
# tasks under RLIMIT_NPROC (uid-nproc, as a user other than root: a count,
# and a germline's fork refused while an hr copy holds every task),
# and for gl-replay's probe copy beside another gl-run's call (uid-pipes'
# ocr leaves a witness whose comparing view holds the pipes).
# (Across two gl-run processes each copy is in its own germline's user
# namespace, where the count is its own with
# or without this mechanism; what they share is the count one level up,
# charged to gl-run's uid for every germline, which a copy reaches only by
# queueing towards the namespace's whole limit: the per-copy counter limits
# and seccomp rules close that (lib/sandbox/counters.h, GL_TEST_COUNTERS_OFF=1
# their damage), shown by fill and count in two gl-runs. The first tests turn
# them off to show the uid alone.)
# Without a delegated range every call runs alone (enforcement "uid":
# "serialized"), and the same pair decodes nothing.
#
# make check delegates a range to root and nobody (scripts/delegate-uids.sh).
# unprivileged: yes — as nobody the maps are written by newuidmap/newgidmap
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  # one test of this suite at a time host-wide: every pass runs it (make
  # check runs passes side by side), and each test fills or counts its
  # user's queued signals, which root's other passes share
  local lk=/tmp/germline-test-host-uids.lock
  [ -e "$lk" ] || touch "$lk" 2>/dev/null || true
  exec 9<"$lk"
  flock 9
  run_setup
  TBIN=$GL_ROOT/build/testing/bin
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"hrbot":["hr"],"agent":[]},"routes":{},"concurrency":"any"}' >"$POLICY"
  REL=$(install_release "$FIX/releases/uid-sigq")
  me=$(id -un)
  grep -q "^$me:" /etc/subuid && grep -q "^$me:" /etc/subgid ||
    skip "no range is delegated to $me in /etc/subuid and /etc/subgid (make check: scripts/delegate-uids.sh)"
}

# within D V LO HI — D, decoded of secret V, lies in LO..HI
within() {
  echo "decoded $1 of $2"
  [ "$1" -ge "$3" ] && [ "$1" -le "$4" ]
}

teardown() {
  kill_pids
  release_cleanup
  exec 9<&-
}

# hold SECRET / probe — the two calls (planned): hold's copy holds the hr
# item SECRET for HOLD_S seconds (2), probe's is public and probes after
# PROBE_WAIT seconds (1), while hold's sleeps
hold() {
  jq -cn --arg r "$REL" --arg s "$(b64 "$1")" '{id:"h",release:$r,function:"hold",args:{s:2},
    items:[{name:"salary.csv",label:["hr"],data:$s}],consumers:["hrbot"]} | .args.s = ($ENV.HOLD_S // "2" | tonumber)' |
    gl-plan --policy "$POLICY"
}
probe() {
  jq -cn --arg r "$REL" '{id:"p",release:$r,function:"probe",args:{wait:($ENV.PROBE_WAIT // "1" | tonumber)},
    items:[],consumers:["agent"]}' |
    gl-plan --policy "$POLICY"
}

# decoded GLRUN SECRET — both calls at --jobs 2 in one GLRUN: what the agent got
decoded() {
  { hold "$2"; probe; } | "$1" --policy "$POLICY" --jobs 2 --unordered 3>&- >out 2>err ||
    { cat out err; return 1; }
  jq -ser 'map(select(.id == "p"))[0].results[0].value' out # (-s: jq 1.6's -e fails when the last record yields nothing)
}

@test "queued signals: a public copy beside an hr copy decodes its secret with one uid for both (off), nothing with a uid each (on); --jobs 2" {
  [ -x "$TBIN/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  export GL_TEST_COUNTERS_OFF=1 # the uid alone: the counter limits deny probe's sigqueue too
  # off: V, plus what gl-run's user has pending elsewhere at that moment (a
  # few signals while other suites run: the copies share that user's count)
  within "$(GL_TEST_UIDS_OFF=1 decoded "$TBIN/gl-run" 37)" 37 37 45
  within "$(GL_TEST_UIDS_OFF=1 decoded "$TBIN/gl-run" 12)" 12 12 20
  [ "$(decoded "$TBIN/gl-run" 37)" = 0 ]
  [ "$(decoded "$TBIN/gl-run" 12)" = 0 ]
  jq -se 'all(.ok and .enforcement.uid == "per-copy")' out
}

@test "pipe pages: a public copy beside an hr copy decodes the pipes it holds with one uid for both (off), nothing with a uid each (on); --jobs 2" {
  [ -x "$TBIN/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  # probe needs about 2 × fs.pipe-user-pages-soft / 16 descriptors to meet the soft limit
  [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 4096 ] ||
    skip "a hard descriptor limit of $(ulimit -Hn): probe cannot make enough pipes"
  export GL_TEST_COUNTERS_OFF=1 # the uid alone: the descriptor limit would stop probe first
  REL=$(install_release "$FIX/releases/uid-pipes")
  # off: V, give or take the pipes the user's other processes opened or
  # closed between probe's two counts (other suites' shells, as root)
  within "$(GL_TEST_UIDS_OFF=1 decoded "$TBIN/gl-run" 11)" 11 9 13
  within "$(GL_TEST_UIDS_OFF=1 decoded "$TBIN/gl-run" 4)" 4 2 6
  [ "$(decoded "$TBIN/gl-run" 11)" = 0 ]
  [ "$(decoded "$TBIN/gl-run" 4)" = 0 ]
  jq -se 'all(.ok and .enforcement.uid == "per-copy")' out
}

@test "tasks under RLIMIT_NPROC (no pids controller, not root): a public copy counts the children an hr copy keeps with one uid for both (off), not with a uid each (on); --jobs 2" {
  [ -x "$TBIN/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  [ "$(id -u)" != 0 ] || skip "root is exempt from RLIMIT_NPROC: the unprivileged pass shows this route"
  export GL_TEST_COUNTERS_OFF=1 # the uid alone: the counter rules deny probe its lower limit
  REL=$(install_release "$FIX/releases/uid-nproc")
  # off: what probe reads is V plus the uid's other tasks in the germline's
  # namespace (its init, the germline, the two copies): the two secrets'
  # readings differ by what they differ by
  local a b
  a=$(GL_TEST_UIDS_OFF=1 decoded "$TBIN/gl-run" 11)
  jq -se 'map(select(.id == "p"))[0].enforcement.limits.pids == "rlimit_nproc"' out ||
    skip "a pids controller bounds the copies here: RLIMIT_NPROC is not their bound"
  b=$(GL_TEST_UIDS_OFF=1 decoded "$TBIN/gl-run" 4)
  echo "off: $a and $b"
  [ "$((a - b))" = 7 ]
  # on: probe counts only its own tasks, whatever hold keeps
  a=$(decoded "$TBIN/gl-run" 11)
  b=$(decoded "$TBIN/gl-run" 4)
  echo "on: $a and $b"
  [ "$a" = "$b" ] && [ "$a" -le 1 ]
}

# refused GLRUN — fill (hr) holds every task its limit allows while a call
# of another release (uid-sigq's probe, 1.5 s: its germline counts its own)
# takes the second job, then ping (public) needs the germline to fork:
# ping's record
refused() {
  jq -cn --arg r "$REL" --arg o "$OTHER" --arg s "$(b64 1)" '
    {id:"f",release:$r,function:"fill",args:{s:6},items:[{name:"salary.csv",label:["hr"],data:$s}],consumers:["hrbot"]},
    {id:"n",release:$o,function:"probe",args:{wait:1.5},items:[],consumers:["agent"]},
    {id:"p",release:$r,function:"ping",args:{},items:[],consumers:["agent"]}' |
    gl-plan --policy "$POLICY" | "$1" --policy "$POLICY" --jobs 2 --unordered 3>&- >out 2>err ||
    true # exit 1: a call refused
  jq -sc 'map(select(.id == "p"))[0] | {ok, error, value: .results[0].value}' out
}

@test "a germline's fork while an hr copy holds every task its limit allows (RLIMIT_NPROC, not root): the public call is refused with one uid for all (off), served with a uid each (on); --jobs 2" {
  [ -x "$TBIN/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  [ "$(id -u)" != 0 ] || skip "root is exempt from RLIMIT_NPROC: the unprivileged pass shows this route"
  OTHER=$REL
  REL=$(install_release "$FIX/releases/uid-nproc")
  local r
  r=$(GL_TEST_UIDS_OFF=1 refused "$TBIN/gl-run")
  echo "off: $r"
  jq -se 'map(select(.id == "f"))[0].enforcement.limits.pids == "rlimit_nproc"' out ||
    skip "a pids controller bounds the copies here: RLIMIT_NPROC is not their bound"
  jq -e '.ok == false' <<<"$r"
  r=$(refused "$TBIN/gl-run")
  echo "on: $r"
  jq -e '.ok and .value == "ran"' <<<"$r"
}

# under PID… — "uid gid ppid comm" of every germline and copy of the
# gl-runs PID…: the children of their inits (other suites' germlines run in
# the same delegated range beside this one in make check)
under() {
  ps -eo pid=,ppid=,uid=,gid=,comm= | awk -v roots="$*" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) root[r[i]] = 1 }
    { pp[NR] = $2; ln[NR] = $3 " " $4 " " $2 " " $5; if ($5 == "gl-init" && ($2 in root)) init[$1] = 1 }
    END { for (k = 1; k <= NR; k++) if (pp[k] in init) print ln[k] }'
}

@test "the germline and each live copy run as host ids of the delegated range, no two alike; the germline's block is another gl-run's never" {
  read -r _ ub un < <(awk -F: -v u="$me" '$1 == u { print $1, $2, $3; exit }' /etc/subuid)
  export HOLD_S=5 PROBE_WAIT=4
  { hold 5; probe; } | gl-run --policy "$POLICY" --jobs 2 --unordered 3>&- >out 2>err &
  local p=$!
  # another session: a GL_HOME of its own (its slots; hold's would wait
  # for the first session's hold on the shared slot's lock)
  mkdir -p home2
  hold 6 | GL_HOME=$PWD/home2 gl-run --policy "$POLICY" --releases "$GL_HOME/releases" --jobs 1 \
    3>&- >out3 2>err3 &
  local q=$!
  # every process of release code, once the three copies run (hold's
  # sleep 5 s from their start, probe's 4 s)
  for _ in $(seq 60); do
    under "$p" "$q" | awk -v b="$ub" -v n="$un" '$4 ~ /^python3/ && $1 >= b && $1 < b + n' >ids
    [ "$(wc -l <ids)" -ge 5 ] && break
    sleep 0.1
  done
  wait "$p" && wait "$q" || { cat out err out3 err3; false; }
  cat ids
  # two germlines (one per gl-run), a copy of hold and one of probe beside
  # the first, one copy of hold beside the second: five processes, five uids
  [ "$(wc -l <ids)" -eq 5 ]
  [ "$(awk '{ print $1 }' ids | sort -u | wc -l)" -eq 5 ]
  awk '$1 != $2 { exit 1 }' ids # gid alike
  jq -se 'all(.ok)' out out3
}

@test "a block is leased host-wide: a second gl-run finds it held and is refused; once its holder is killed, it comes back" {
  [ -x "$TBIN/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  # one block of the delegated range only (65 ids near its end)
  read -r ub un < <(awk -F: -v u="$me" '$1 == u { print $2, $3; exit }' /etc/subuid)
  read -r gb gn < <(awk -F: -v u="$me" '$1 == u { print $2, $3; exit }' /etc/subgid)
  echo "$me:$((ub + un - 65)):65" >subuid
  echo "$me:$((gb + gn - 65)):65" >subgid
  export GL_TEST_SUBUID=$PWD/subuid GL_TEST_SUBGID=$PWD/subgid
  mkfifo fifo
  "$TBIN/gl-run" --policy "$POLICY" --jobs 1 <fifo 3>&- >out1 2>err1 &
  local p=$!
  exec 4>fifo
  hold 3 >&4 # its germline leases the one block and keeps it while gl-run runs
  for _ in $(seq 100); do [ -s out1 ] && break; sleep 0.1; done
  jq -e '.ok and .enforcement.uid == "per-copy"' out1
  hold 4 | "$TBIN/gl-run" --policy "$POLICY" --jobs 1 3>&- >out2 2>err2 || true
  jq -e '.ok == false and .error == "bootstrap_failed" and (.detail | test("host_uids.*every block of 65 host ids"))' out2
  kill -KILL "$p"
  exec 4>&-
  wait "$p" || true
  # its germline and copies went with it (pdeathsig); the block is free again
  hold 4 | "$TBIN/gl-run" --policy "$POLICY" --jobs 1 3>&- >out3 2>err3
  jq -e '.ok and .enforcement.uid == "per-copy" and .results[0].value == "held"' out3
}

@test "no delegated range: every call alone (--jobs 1, serialized in the record, the reason on stderr), and the pair decodes nothing" {
  [ -x "$TBIN/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  export GL_TEST_SUBUID=/nonexistent GL_TEST_SUBGID=/nonexistent GL_TEST_COUNTERS_OFF=1
  # probe runs after hold, as gl-run's uid: it counts only what that user
  # has pending elsewhere (0 on a quiet machine, a few while other suites
  # run), nothing of the 37
  d=$(decoded "$TBIN/gl-run" 37)
  echo "decoded $d"
  [ "$d" -le 8 ]
  jq -se 'length == 2 and all(.ok and .enforcement.uid == "serialized")' out
  grep -q 'no range of host ids is delegated to .* each call runs alone host-wide (--jobs 1, no --pool' err
}

# queued PID — the most signals any germline or copy of gl-run PID has
# queued (its /proc status "SigQ", counted for its uid)
queued() {
  local c
  for c in $(pgrep -P "$(pgrep -d, -P "$1" gl-init)" 2>/dev/null); do
    sed -n 's/^SigQ:[[:space:]]*\([0-9]*\)\/.*/\1/p' "/proc/$c/status" 2>/dev/null
  done | sort -n | tail -1
}

# across GLRUN SECRET — fill SECRET (hr) in one gl-run and count (public) in
# another, each --jobs 1 under "concurrency": "none", the second started once
# fill's copy has queued all it will (its count holds still; or, denied,
# once it runs): what the agent got. fill holds its signals until count has
# queued all it could (at most 80 s, within its call's deadline of 120: the
# second gl-run launches a germline of its own first, which took more than
# a fixed wait on a loaded machine, and more than 25 s once in make check's
# sanitizer pass), or 8 s when it could queue none.
across() {
  echo '{"clearances":{"hrbot":["hr"],"agent":[]},"routes":{},"concurrency":"none"}' >none.json
  jq -cn --arg r "$REL" --arg s "$(b64 "$2")" '{id:"f",release:$r,function:"fill",args:{s:80,hold:8},
    items:[{name:"salary.csv",label:["hr"],data:$s}],consumers:["hrbot"]}' |
    gl-plan --policy none.json | "$1" --policy none.json --jobs 1 --deadline 120 3>&- >outf 2>errf &
  local p=$! q
  for _ in $(seq 600); do
    q=$(queued "$p")
    [ "${q:-0}" -gt 0 ] && sleep 0.3 && [ "$(queued "$p")" = "$q" ] && break
    [ -z "$GL_TEST_COUNTERS_OFF" ] && [ "$(under "$p" | awk '$4 ~ /^python3/' | wc -l)" -ge 2 ] && sleep 1 && break
    sleep 0.1
  done
  mkdir -p home2
  jq -cn --arg r "$REL" '{id:"c",release:$r,function:"count",args:{},items:[],consumers:["agent"]}' |
    gl-plan --policy none.json |
    GL_HOME=$PWD/home2 "$1" --policy none.json --releases "$GL_HOME/releases" --jobs 1 3>&- \
      >outc 2>errc || { cat outc errc; return 1; }
  wait "$p" || { cat outf errf; return 1; }
  jq -er '.results[0].value' outc
}

# across_off V LO HI — across with the counter limits off decodes LO..HI of
# V, in one of three tries
across_off() {
  local i
  for i in 1 2 3; do
    within "$(GL_TEST_COUNTERS_OFF=1 across "$TBIN/gl-run" "$1")" "$1" "$2" "$3" && return 0
  done
  return 1
}

@test "queued signals one level up: across two gl-runs (--jobs 1, \"none\") count decodes what fill queued towards the user's limit with the counter limits off, nothing with them on" {
  [ -x "$TBIN/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  # off: V less the signals the user's other processes have pending at that
  # moment (a few while other suites run). The count is the user's, host
  # wide: another suite's processes that queue signals between fill and
  # count move it either way (72 of 37 seen in make check's sanitizer
  # pass), so the off measurement gets three tries; on must be 0 at once.
  across_off 37 29 37
  across_off 12 4 12
  [ "$(across gl-run 37)" = 0 ]
  [ "$(across gl-run 12)" = 0 ]
  jq -e '.ok and .results[0].value == 0' outf # fill queued nothing: real-time signals are denied
}

# beside_replay GLREPLAY GLRUN — GLREPLAY replays the witness of ocr
# (--tries 1: its probe copy holds the hr view, so it keeps 16 V pipes for
# 6 s); once its copies run, probe (public) counts in a GLRUN of its own:
# what the agent got
beside_replay() {
  "$1" --tries 1 --items items <witnessed 3>&- >outr 2>errr &
  local p=$!
  for _ in $(seq 300); do
    [ "$(pgrep -P "$(pgrep -d, -P "$p" gl-init)" 2>/dev/null | wc -l)" -ge 2 ] && break
    sleep 0.1
  done
  sleep 0.5
  mkdir -p home2
  jq -cn --arg r "$REL" '{id:"p",release:$r,function:"probe",args:{wait:0.5,after:7},items:[],consumers:["agent"]}' |
    gl-plan --policy "$POLICY" |
    GL_HOME=$PWD/home2 "$2" --policy "$POLICY" --releases "$GL_HOME/releases" --jobs 1 3>&- \
      >outp 2>errp || { cat outp errp; return 1; }
  wait "$p" || { cat outr errr; return 1; }
  jq -er '.results[0].value' outp
}

@test "pipe pages beside gl-replay: a public call counts the pipes a replay's probe copy (the hr view) holds with one uid for both (off), nothing with a uid each (on)" {
  [ -x "$TBIN/gl-run" ] && [ -x "$TBIN/gl-replay" ] || skip "build/testing/bin is not built (make units)"
  [ "$GL_TEST_LANE" != sanitizers ] || skip "a kernel counter between processes: the plain and unprivileged passes show it"
  [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 4096 ] ||
    skip "a hard descriptor limit of $(ulimit -Hn): probe cannot make enough pipes"
  export GL_TEST_COUNTERS_OFF=1 # the uid alone: the descriptor limit would stop probe first
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  echo '{"clearances":{"hrbot":["hr"],"agent":[],"ocr.example":[]},"routes":{}}' >"$POLICY"
  sink ocr.example
  REL=$(install_release "$FIX/releases/uid-pipes")
  mkdir -p items
  printf 11 >items/salary.csv
  # the call leaves a witness: its hr copy says 2 bytes, the delivered one 0
  jq -cn --arg r "$REL" --arg s "$(b64 11)" '{id:"o",release:$r,function:"ocr",args:{s:6},
    items:[{name:"salary.csv",label:["hr"],data:$s}],consumers:["hrbot"]}' |
    gl-plan --policy "$POLICY" | gl-run --policy "$POLICY" 3>&- >witnessed
  jq -e '.ok and (.triggers | length) == 1' witnessed
  # off: V, give or take the pipes the user's other processes opened or closed
  within "$(GL_TEST_UIDS_OFF=1 beside_replay "$TBIN/gl-replay" "$TBIN/gl-run")" 11 9 13
  jq -e 'select(.outcome) | .tries == 1' outr
  [ "$(beside_replay "$TBIN/gl-replay" "$TBIN/gl-run")" = 0 ]
  jq -e 'select(.outcome) | .tries == 1' outr
  kill_pids
}
