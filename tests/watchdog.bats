#!/usr/bin/env bats
# tests/run.sh's watchdog (docs/testing.md "The watchdog"): a job past its
# budget is killed with everything it started and reported as a failure
# that names it, and the run goes on. Each test runs tests/run.sh itself on
# the fixture suites of tests/fixtures/watchdog/ (GL_TEST_ONLY, plain pass
# only): hang.bats ("# budget: 6") starts processes that leave the job's
# tree in every way the sweep must still find (a background grandchild, a
# setsid'ed orphan, one without the job's marker, one in new PID and user
# namespaces) and sleeps; pass.bats passes. With the watchdog off, the same
# run is still hanging when an outer timeout of four budgets ends it.
# sanitizers: no — it tests the test runner, not gl-*
load helpers
bats_require_minimum_version 1.5.0

WDFIX=$FIX/watchdog
SUITES="$WDFIX/hang.bats $WDFIX/pass.bats"

# inner TAG PIDS [VAR=VALUE...] [CMD...] — tests/run.sh (run by CMD, e.g.
# timeout 24) on the two fixture suites, plain pass only, the watchdog on
# unless a VAR says otherwise; none of the outer run's settings. Every
# process of its jobs has WD_TAG=TAG in its environment (this shell does
# not), and hang.bats writes the pids it started to PIDS.
inner() {
  local tag=$1 pids=$2
  shift 2
  env -u GL_TEST_BUDGET -u GL_TEST_BUDGET_SCALE -u GL_TEST_TIMES -u GL_TEST_BUDGETS \
    -u GL_TEST_PASS -u GL_TEST_JOBS -u GL_TEST_CPU -u GL_TEST_BUILD_ASAN -u GL_TEST_NO_TIMES \
    GL_TEST_ONLY="$SUITES" GL_TEST_NO_SAN=1 GL_TEST_NO_UNPRIV=1 GL_TEST_WATCHDOG=1 \
    WD_TAG="$tag" WD_PIDS="$pids" "$@" "$GL_ROOT/tests/run.sh"
}

# tagged TAG — the live processes whose environment holds WD_TAG=TAG
tagged() {
  local f p
  for f in $(grep -lsFxz -- "WD_TAG=$1" /proc/[0-9]*/environ); do
    p=${f#/proc/}
    p=${p%/environ}
    [ "$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$p/stat" 2>/dev/null)" = Z ] || echo "$p"
  done
}

# alive PID — is PID a process that has not ended (a zombie has)?
alive() {
  local st
  st=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}

# One run with the watchdog on, and beside it the same run with the
# watchdog off under `timeout 24` (four times hang.bats' budget): the first
# ends when the watchdog has killed hang.bats, the second only when its
# timeout ends it. (The first has a timeout too, 120 s, so that a watchdog
# that never fires fails these tests rather than hanging them.)
setup_file() {
  D=$BATS_FILE_TMPDIR
  export D ON_TAG=wd-on-$$-$RANDOM OFF_TAG=wd-off-$$-$RANDOM
  times=$GL_ROOT/build/test-times.tsv
  sha256sum "$times" >"$D/times.before" 2>/dev/null || echo none >"$D/times.before"
  (
    t0=$SECONDS
    rc=0
    inner "$OFF_TAG" "$D/off.pids" GL_TEST_WATCHDOG=0 timeout 24 >"$D/off.out" 2>&1 || rc=$?
    echo "$rc $((SECONDS - t0))" >"$D/off.rc"
  ) &
  echo $! >"$D/off.job"
  t0=$SECONDS
  rc=0
  inner "$ON_TAG" "$D/on.pids" timeout 120 >"$D/on.out" 2>&1 || rc=$?
  echo "$rc $((SECONDS - t0))" >"$D/on.rc"
  # right after the watchdog's run: the off run's hanging processes still there
  for p in $(awk '$1 != "rundir" { print $2 }' "$D/off.pids" 2>/dev/null); do
    alive "$p" && echo "$p"
  done >"$D/off.alive"
  tagged "$ON_TAG" >"$D/on.left"
  sha256sum "$times" >"$D/times.after" 2>/dev/null || echo none >"$D/times.after"
  wait "$(cat "$D/off.job")"
  # a process run.sh killed as the timeout ended it may take a moment to go
  # (SIGKILL is delivered, not awaited; a loaded machine's namespace teardown
  # is slow); one that hangs is still there after 15 s
  for _ in $(seq 150); do
    tagged "$OFF_TAG" >"$D/off.left"
    [ -s "$D/off.left" ] || break
    sleep 0.1
  done
  # what is left, should anything be: for the failure's message
  for p in $(cat "$D/off.left"); do
    ps -o pid=,ppid=,pgid=,sid=,stat=,etime=,args= -p "$p" 2>/dev/null
    tr '\0' ' ' <"/proc/$p/environ" 2>/dev/null | grep -o 'GL_TEST_JOB_MARK=[^ ]*'
  done >"$D/off.left.ps"
}

teardown_file() {
  local p
  # should a test have failed for processes left: end them
  for p in $(tagged "$ON_TAG") $(tagged "$OFF_TAG"); do kill -9 "$p" 2>/dev/null; done
  true
}

@test "the hanging suite is killed and named, with the end of its output; the counts count it as one failure" {
  read -r rc _ <"$D/on.rc"
  cat "$D/on.out"
  [ "$rc" = 1 ] # not 124: the run ended by itself
  grep -qE '^not ok 1 tests/fixtures/watchdog/hang\.bats \(plain\): killed by the watchdog after [0-9]+ s \(budget 6 s\)$' "$D/on.out"
  # the summary at the end: the failure, then the end of the suite's output as TAP comments
  sed -n '/^failed tests:$/,$p' "$D/on.out" >"$D/summary"
  grep -q '^not ok 1 tests/fixtures/watchdog/hang.bats (plain): killed by the watchdog' "$D/summary"
  grep -qx '#   ok 1 hang.bats: the test before the hang' "$D/summary"
  grep -qx '#   # hang.bats: about to hang' "$D/summary"
  grep -q '^# the watchdog killed [0-9]* processes of the job:' "$D/summary"
  grep -qE '^# +[0-9]+ sleep 600$' "$D/summary"
  # 3 passed: pass.bats' two and the hang.bats test that ended before the hang
  [ "$(tail -1 "$D/on.out")" = "3 passed, 1 failed" ]
}

@test "the other suite still ran and passed" {
  grep -qx 'ok 1 pass.bats: one' "$D/on.out"
  grep -qx 'ok 2 pass.bats: two' "$D/on.out"
  [ "$(grep -c '^not ok' "$D/on.out")" = 2 ] # the failure, and again in the summary
  run ! grep -q 'pass.bats.*killed' "$D/on.out"
}

@test "nothing the killed suite started is left: no process with its tag, none of its pids, not its bats run directory" {
  cat "$D/on.pids"
  # the four kinds of process hang.bats starts (userns only where unshare may)
  for k in bg setsid nomark; do grep -q "^$k [0-9]" "$D/on.pids"; done
  [ ! -s "$D/on.left" ]
  for p in $(awk '$1 != "rundir" { print $2 }' "$D/on.pids"); do
    run ! alive "$p"
  done
  d=$(awk '$1 == "rundir" { print $2 }' "$D/on.pids")
  [[ $d == */bats-run-* ]]
  [ ! -e "$d" ]
}

@test "off: with GL_TEST_WATCHDOG=0 the same run is still hanging when its outer timeout ends it (24 s)" {
  read -r rc _ <"$D/off.rc"
  cat "$D/off.out"
  [ "$rc" = 124 ]
  grep -q 'no watchdog' "$D/off.out"
  run ! grep -q 'killed by the watchdog' "$D/off.out"
  # the watchdog of the run beside it (another marker) left its processes alone
  [ "$(wc -l <"$D/off.alive")" -ge 3 ]
  # and run.sh, ended by the timeout, still took its jobs' processes with it
  [ ! -s "$D/off.left" ] || { cat "$D/off.left.ps"; false; }
}

@test "tests/run.sh with fixture suites leaves build/test-times.tsv as it was" {
  diff "$D/times.before" "$D/times.after"
}

@test "budgets: the formula, a suite's # budget: line, GL_TEST_TIMES, GL_TEST_BUDGET_SCALE, GL_TEST_BUDGET, the default" {
  printf 'plain tests/fixtures/watchdog/pass.bats 100\nplain tests/fixtures/watchdog/hang.bats 100\n' >"$BATS_TEST_TMPDIR/t100"
  printf 'plain tests/fixtures/watchdog/pass.bats 10\n' >"$BATS_TEST_TMPDIR/t10"
  run inner x /dev/null GL_TEST_BUDGETS=1 GL_TEST_TIMES="$BATS_TEST_TMPDIR/t100"
  [ "$status" -eq 0 ]
  [[ "$output" == *"1180 s  plain        tests/fixtures/watchdog/pass.bats (10 × 100 s recorded + 180 s)"* ]]
  [[ "$output" == *"6 s  plain        tests/fixtures/watchdog/hang.bats (its line \"# budget: 6\")"* ]]
  run inner x /dev/null GL_TEST_BUDGETS=1 GL_TEST_TIMES="$BATS_TEST_TMPDIR/t10" GL_TEST_BUDGET_SCALE=1.5
  [[ "$output" == *"450 s  plain        tests/fixtures/watchdog/pass.bats (the floor (10 × 10 s recorded + 180 s = 280 s), × 1.5)"* ]]
  [[ "$output" == *"9 s  plain        tests/fixtures/watchdog/hang.bats (its line \"# budget: 6\", × 1.5)"* ]]
  run inner x /dev/null GL_TEST_BUDGETS=1
  [[ "$output" == *"1500 s  plain        tests/fixtures/watchdog/pass.bats (no recorded time: the default)"* ]]
  run inner x /dev/null GL_TEST_BUDGETS=1 GL_TEST_BUDGET=7
  [[ "$output" == *"7 s  plain        tests/fixtures/watchdog/pass.bats (GL_TEST_BUDGET)"* ]]
  [[ "$output" == *"7 s  plain        tests/fixtures/watchdog/hang.bats (GL_TEST_BUDGET)"* ]]
  run inner x /dev/null GL_TEST_BUDGET_SCALE=0
  [ "$status" -eq 2 ]
}
