#!/usr/bin/env bats
# gl-run --jobs N keeps a worker for further calls (issue 19;
# lib/session/jobs_pool.c; docs/design/run.md "Workers"): a worker forked
# for a python germline's call waits (named gl-run-idle) and serves the
# next call, but only while the session's germlines are the ones it was
# forked with (gl_session_fingerprint).
#
# Real components only: three signed installs of the counter release
# (tests/fixtures/releases/cc-counter: a counter in call.state), real
# germlines and copies. gl-run is driven as a coprocess, one call at a
# time, so that its workers are looked at after each record. Each property
# is shown with its mechanism off — the GL_TESTING build
# (build/testing/bin/gl-run) with GL_TEST_JOBS_NOREUSE=1 (a fork per call)
# or GL_TEST_JOBS_STALE=1 (a worker given calls whatever became of its
# germlines) — and on.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  TBIN=$GL_ROOT/build/testing/bin
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":[]},"routes":{}}' >"$POLICY"
  local v
  for v in a b; do
    mkdir "rel-$v"
    cp "$FIX/releases/cc-counter/counter.py" "rel-$v/"
    jq -c --arg v "1.0.0-$v" '.version = $v' "$FIX/releases/cc-counter/manifest.json" \
      >"rel-$v/manifest.json"
  done
  A=$(install_release "$PWD/rel-a")
  B=$(install_release "$PWD/rel-b")
}

teardown() {
  [ -z "${GLR_PID:-}" ] || kill "$GLR_PID" 2>/dev/null || true
  release_cleanup
}

# idle PID — the pids of gl-run PID's idle workers, sorted, on one line
idle() { pgrep -P "$1" -x gl-run-idle | sort -n | paste -sd' '; }

# session ENV… -- ARG… -- ID:SHA… — gl-run --jobs 2 ARG… as a coprocess
# (with ENV…, the GL_TESTING build under env ENV…); one call of bump per ID:SHA, each record appended to
# records and gl-run's idle workers after it to idles (one line a call;
# the worker names itself idle just after its record: waited for up to
# 5 s when $WANT_IDLE is set). Before the last call, $BEFORE_LAST (a
# command) runs. Then stdin is closed and gl-run awaited.
session() {
  local envs=() args=() a
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  : >records
  : >idles
  local bin=gl-run # the pass's own (plain, sanitizers); a switch: the GL_TESTING build's
  [ "${#envs[@]}" -eq 0 ] || bin=$TBIN/gl-run
  coproc GLR { exec env "${envs[@]}" "$bin" --policy "$POLICY" --jobs 2 "${args[@]}" \
    2>>"$BATS_TEST_TMPDIR/err" 3>&-; }
  local n=0 i rec
  for a in "$@"; do
    n=$((n + 1))
    [ "$n" -lt "$#" ] || [ -z "${BEFORE_LAST:-}" ] || eval "$BEFORE_LAST"
    { envelope "${a%%:*}" "${a#*:}" bump | gl-plan --policy "$POLICY"; } >&"${GLR[1]}"
    IFS= read -r -t 120 rec <&"${GLR[0]}" || { cat "$BATS_TEST_TMPDIR/err"; false; }
    printf '%s\n' "$rec" >>records
    for i in $(seq 100); do
      [ -z "${WANT_IDLE:-}" ] || [ -n "$(idle "$GLR_PID")" ] && break
      sleep 0.05
    done
    idle "$GLR_PID" >>idles
  done
  local pid=$GLR_PID fd=${GLR[1]}
  exec {fd}>&- # stdin closed: the session ends
  wait "$pid" || { cat "$BATS_TEST_TMPDIR/err"; false; }
  GLR_PID=
}

@test "--jobs 2: one worker serves call after call (off: a worker forked per call, none left idle)" {
  # Off: every call forks its worker, which ends with it.
  session GL_TEST_JOBS_NOREUSE=1 -- -- a1:"$A" a2:"$A" a3:"$A" a4:"$A"
  jq -se 'map(.ok) | all' records
  [ "$(jq -sc 'map(.results[0].value)' records)" = "[1,2,3,4]" ]
  [ -z "$(sort -u idles | paste -sd' ')" ] || { cat idles; false; }
  # On: the first call's worker waits, and serves the three others.
  WANT_IDLE=1 session -- -- a5:"$A" a6:"$A" a7:"$A" a8:"$A"
  jq -se 'map(.ok) | all' records
  [ "$(jq -sc 'map(.results[0].value)' records)" = "[5,6,7,8]" ] || { cat records; false; }
  [ "$(sort -u idles | wc -l)" -eq 1 ] && [ -n "$(head -1 idles)" ] || { cat idles; false; }
  # the same receipts, enforcement and mode as a worker of one call gives
  jq -se 'map(.enforcement.seccomp == "enforced" and .mode == "germline") | all' records
  # nothing left behind once gl-run has ended
  ! kill -0 "$(head -1 idles)" 2>/dev/null
}

@test "a kept worker never serves germlines launched after its fork (off: it sends the call to the evicted one's germline)" {
  # --max-resident 1 and the releases alternating: every call evicts the
  # other release and launches its own, so the worker kept after the first
  # call was forked with germlines that are gone by the next.
  session -- --max-resident 1 -- a1:"$A" b1:"$B" a2:"$A" b2:"$B"
  cat records
  jq -se 'map(.ok) | all' records
  [ "$(jq -sc 'map(.results[0].value)' records)" = "[1,1,2,2]" ]
  # Off: the kept worker takes the next calls on what it has: no germline
  # of B, then A's evicted one.
  rm -f records
  run session GL_TEST_JOBS_STALE=1 -- --max-resident 1 -- a3:"$A" b3:"$B" a4:"$A" b4:"$B"
  cat records
  # b3 finds no germline of B in the worker's registry; a4 meets A's
  # evicted germline, which G1 refuses
  jq -se '.[0].ok and (.[1] | .ok == false and .error == "internal") and (.[2].ok | not)' records
}

@test "an idle worker killed between calls: the next call forks another, nothing is lost" {
  WANT_IDLE=1 BEFORE_LAST='kill -KILL $(idle "$GLR_PID")' \
    session -- -- a1:"$A" a2:"$A" a3:"$A"
  cat records idles
  jq -se 'map(.ok) | all' records
  [ "$(jq -sc 'map(.results[0].value)' records)" = "[1,2,3]" ]
  # a new worker served a3 and waits in the killed one's place
  [ "$(sed -n 1p idles)" = "$(sed -n 2p idles)" ] && [ "$(sed -n 2p idles)" != "$(sed -n 3p idles)" ]
}
