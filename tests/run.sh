#!/usr/bin/env bash
# Run every bats suite in up to three passes (docs/testing.md):
#   plain          every suite against bin/;
#   sanitizers     every suite against the AddressSanitizer+UndefinedBehavior-
#                  Sanitizer build (build/asan/bin);
#   unprivileged   when run as root: the suites that carry a line
#                    # unprivileged: yes
#                  once more against bin/, as the user nobody (setpriv), so
#                  that gl-run is shown to work without privileges (issue 4
#                  item 8: user namespaces).
# The last line is the count CI reads: "N passed, N failed[, N skipped]".
#
# A suite that cannot run under the sanitizers says so on a line
#   # sanitizers: no — <reason>
# and the reason is also written in docs/testing.md.
#   GL_TEST_ONLY=tests/x.bats tests/run.sh     run one suite (every pass)
#   GL_TEST_PASS=unprivileged tests/run.sh     run one pass (plain|sanitizers|unprivileged)
#   GL_TEST_NO_SAN=1 tests/run.sh              skip the sanitizer pass
#   GL_TEST_NO_UNPRIV=1 tests/run.sh           skip the unprivileged pass
#   GL_TEST_JOBS=1 tests/run.sh                one suite run at a time (default 4:
#                                              suite runs of every pass, longest first)
#   GL_TEST_CPU=1 tests/run.sh                 print each suite run's CPU seconds beside its wall time
#   GL_TEST_BUILD_ASAN=1 tests/run.sh          build the sanitizer build (make asan) while
#                                              the plain and unprivileged jobs run; the
#                                              sanitizer jobs start when it is done (make check)
#
# The watchdog (docs/testing.md "The watchdog"): each job — one suite in one
# pass — has a budget in seconds; a job still running past it is killed with
# every process it started and counts as one failed test that names it
# ("not ok 1 tests/x.bats (plain): killed by the watchdog after N s (budget
# B s)", then the end of its output as TAP comments), and the run goes on.
#   budget = max(300, 10 × recorded + 180), the seconds tests/times.tsv
#   records for that pass and suite; 1500 for a job it does not record; a
#   suite's line "# budget: N" sets its own.
#   GL_TEST_WATCHDOG=0|1                       off / on (default: on; the Makefile's
#                                              long counts, make e7 and the like, turn it off)
#   GL_TEST_BUDGET_SCALE=2 tests/run.sh        every budget times 2 (up to 2 decimals)
#   GL_TEST_BUDGET=N tests/run.sh              every job's budget N seconds
#   GL_TEST_TIMES=FILE tests/run.sh            the budgets from FILE's times, not tests/times.tsv
#   GL_TEST_BUDGETS=1 tests/run.sh             print each job's budget and why; run nothing
#   GL_TEST_NO_TIMES=1 tests/run.sh            do not write build/test-times.tsv (nor when a
#                                              suite run is not one of tests/*.bats)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log=$(mktemp)
unpriv_dir=
worker_pids=()
cleanup() {
  local p f mark
  # (a second signal, as timeout sends one to the run and one to its
  # process group, must not end this half way)
  trap '' INT TERM HUP
  for p in "${worker_pids[@]}"; do kill "$p" 2>/dev/null; done
  # a run that ends early (a signal, an error): the jobs still running go
  # with it, everything they started too (the watchdog's sweep, by their
  # marker only: the worker that knew a job's first process is gone)
  for f in "${jobdir:-/nonexistent}"/running.*; do
    [ -f "$f" ] && read -r mark <"$f" && kill_job "$mark" "" /dev/null
  done
  rm -rf "$log" "${jobdir:-}"
  if [ -n "$unpriv_dir" ]; then chmod -R u+w "$unpriv_dir" 2>/dev/null; rm -rf "$unpriv_dir"; fi
}
trap cleanup EXIT

suites=(${GL_TEST_ONLY:-tests/*.bats})
# own: the suites of tests/*.bats among them (not a fixture suite that
# tests/watchdog.bats runs): only a run of those fetches npm packages for
# them and records its times in build/test-times.tsv
own=() foreign=0
for s in "${suites[@]}"; do
  case ${s#"$root"/} in
    tests/*/*) foreign=1 ;;
    tests/*.bats) own+=("$s") ;;
    *) foreign=1 ;;
  esac
done
only=${GL_TEST_PASS:-}
case "$only" in
  "" | plain | sanitizers | unprivileged) ;;
  *) echo "tests/run.sh: GL_TEST_PASS must be plain, sanitizers or unprivileged" >&2; exit 2 ;;
esac
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }
# the watchdog's settings (its budgets: below, before the jobs start)
case ${GL_TEST_WATCHDOG:-} in
  0 | 1) watchdog=$GL_TEST_WATCHDOG ;;
  "") watchdog=1 ;;
  *) echo "tests/run.sh: GL_TEST_WATCHDOG must be 0 or 1" >&2; exit 2 ;;
esac
if [[ ${GL_TEST_BUDGET_SCALE:-1} =~ ^([0-9]+)(\.([0-9]{0,2}))?$ ]]; then
  f=${BASH_REMATCH[3]}00
  scale_pct=$((10#${BASH_REMATCH[1]} * 100 + 10#${f:0:2}))
else
  scale_pct=0
fi
if [ "$scale_pct" -le 0 ]; then
  echo "tests/run.sh: GL_TEST_BUDGET_SCALE must be a number above 0 (up to 2 decimals)" >&2; exit 2
fi
if [ -n "${GL_TEST_BUDGET:-}" ] && ! [[ $GL_TEST_BUDGET =~ ^[1-9][0-9]*$ ]]; then
  echo "tests/run.sh: GL_TEST_BUDGET must be a number of seconds" >&2; exit 2
fi
if [ -n "${GL_TEST_TIMES:-}" ]; then
  [ -f "$GL_TEST_TIMES" ] || { echo "tests/run.sh: GL_TEST_TIMES: no file $GL_TEST_TIMES" >&2; exit 2; }
  budget_files=("$GL_TEST_TIMES")
else
  budget_files=("$root/tests/times.tsv")
fi

# skipped SUITE PASS REASON — a suite that a pass could not run: one TAP
# skip line in the log, so that it is counted as skipped (never as passed).
skipped() {
  echo "== $1 ($2): skipped — $3"
  echo "ok 1 $1 ($2) # skip $3" >>"$log"
}

# children_cpu FILE — append the user+system seconds of this shell's
# waited-for children so far to FILE (bash's times, run in this shell: in a
# $(…) it would count the children of that new shell, none)
children_cpu() {
  times >"$1.times"
  tail -1 "$1.times" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } } END { print s }' >>"$1"
}

# run_bats NAME CMD... — run one suite, its TAP into the log. A bats that
# fails without reporting a failed test (it could not start, a setup_file
# failed) counts as one failure, never as nothing.
run_bats() {
  local name=$1 out rc t0=$SECONDS cpu=
  shift
  out=${bats_out:-$(mktemp)} # the worker's $jobdir/N.tap: what the watchdog reports of a killed job
  : >"$out.cpu"
  children_cpu "$out.cpu"
  "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  children_cpu "$out.cpu"
  # GL_TEST_CPU=1: the CPU seconds of the suite too (what a 2-core machine
  # running several suites at once is short of; issue 18)
  [ "${GL_TEST_CPU:-0}" = 1 ] && cpu=", $(awk 'NR == 1 { a = $1 } END { printf "%.1f", $1 - a }' "$out.cpu") s CPU"
  echo "   ($name: $((SECONDS - t0)) s$cpu)"
  cat "$out" >>"$log"
  if [ "$rc" -ne 0 ] && ! grep -qE '^not ok [0-9]+' "$out"; then
    echo "not ok 1 $name: bats exited $rc without a failed test" | tee -a "$log"
  fi
  rm -f "$out" "$out.cpu" "$out.cpu.times"
}

# The unprivileged pass: the marked suites as nobody:nogroup, with a clean
# environment. nobody must be able to read the checkout and the build; if it
# cannot (a clone under /root, a umask of 077), what the suites need is
# copied to a directory nobody can read, laid out so that gl-run finds its
# Python host next to itself (DIR/lib/germline, as after `make install`).
as_nobody() { # the caller's PATH (for bats and jq) and the watchdog's job marker, nothing else of its environment
  setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env \
    env PATH="$PATH" LANG=C.UTF-8 ${GL_TEST_JOB_MARK:+GL_TEST_JOB_MARK="$GL_TEST_JOB_MARK"} "$@"
}
nobody_reads() { # nobody_reads ROOT — can nobody use the checkout at ROOT?
  as_nobody sh -c 'cd "$1" && test -x bin/gl-run && test -r build/host/germline_host.py &&
    test -r build/host/_germline.so && test -r tests/helpers.bash &&
    test -r tests/fixtures/releases/demo-pool/manifest.json && test -r tests/fixtures/run/persistent.py' \
    sh "$1" 2>/dev/null
}
unprivileged_root() { # sets uroot to the root nobody uses, or why
  if nobody_reads "$root"; then
    uroot=$root
    return 0
  fi
  unpriv_dir=$(mktemp -d "${TMPDIR:-/tmp}/gl-unpriv.XXXXXX") || { why="mktemp failed"; return 1; }
  mkdir -p "$unpriv_dir/build" "$unpriv_dir/lib" &&
    cp -a bin tests testbed hosts "$unpriv_dir"/ &&
    cp -a lib/. "$unpriv_dir/lib/" &&
    cp -a build/host build/tests build/libgermline.a "$unpriv_dir/build/" &&
    cp -a build/host "$unpriv_dir/lib/germline" &&
    chmod -R a+rX "$unpriv_dir" || { why="cannot copy the checkout to $unpriv_dir"; return 1; }
  if ! nobody_reads "$unpriv_dir"; then
    why="nobody cannot read the checkout, nor a copy in $unpriv_dir"
    return 1
  fi
  uroot=$unpriv_dir
}

# unprivileged_prepare — the unprivileged pass's set-up, once: marked (the
# suites it runs), and uroot (the root nobody reads) or why (why it cannot).
unprivileged_prepare() {
  local s
  marked=() why= uroot=
  for s in "${suites[@]}"; do
    grep -q '^# unprivileged: yes' "$s" && marked+=("$s")
  done
  [ ${#marked[@]} -gt 0 ] || return 0
  if [ "$(id -u)" != 0 ]; then
    echo "== unprivileged pass: not run — the plain pass already ran as uid $(id -u)"
    marked=()
    return 0
  fi
  if ! command -v setpriv >/dev/null; then
    why="setpriv (util-linux) is missing"
  elif ! id nobody >/dev/null 2>&1 || ! getent group nogroup >/dev/null; then
    why="no user nobody or group nogroup"
  elif [ "${GL_TEST_BUDGETS:-0}" = 1 ]; then
    uroot=$root # only the budgets are listed: nothing to copy
  else
    unprivileged_root || true
  fi
}

# run_job PASS SUITE — one suite in one pass (its TAP into $log)
run_job() {
  local pass=$1 s=$2 rel
  case $pass in
    plain)
      echo "== $s (plain)"
      run_bats "$s (plain)" env GL_BIN="$root/bin" GL_ROOT="$root" GL_TEST_LANE=plain bats --tap "$s" ;;
    sanitizers)
      echo "== $s (sanitizers)"
      run_bats "$s (sanitizers)" env ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87" \
        GL_BIN="$root/build/asan/bin" GL_ROOT="$root" GL_TEST_LANE=sanitizers bats --tap "$s" ;;
    unprivileged)
      rel=${s#"$root"/}
      if [ "$uroot" = "$root" ]; then
        echo "== $rel (unprivileged: nobody)"
      else
        echo "== $rel (unprivileged: nobody, from a copy in $uroot)"
      fi
      (cd "$uroot" && run_bats "$rel (unprivileged)" as_nobody GL_BIN="$uroot/bin" \
        GL_ROOT="$uroot" GL_TEST_LANE=unprivileged bats --tap "$uroot/$rel") ;;
  esac
}

# The npm packages some suites use are fetched once, before passes that may
# run side by side (each suite would otherwise fetch into build/npm itself;
# the scripts also take a lock, scripts/npm.bash, should one be missed).
# (not for GL_TEST_BUDGETS=1, which runs nothing)
[ "${GL_TEST_BUDGETS:-0}" = 1 ] && own=()
if [ ${#own[@]} -gt 0 ] && command -v npm >/dev/null && grep -qlE 'tufjs_setup_file' "${own[@]}"; then
  scripts/tufjs.sh >/dev/null 2>&1 || true
fi
if [ ${#own[@]} -gt 0 ] && command -v npm >/dev/null && grep -qlE 'mcp-sdk.sh|npm-releases.sh' "${own[@]}"; then
  npm_tmp=$(mktemp -d)
  scripts/mcp-sdk.sh >/dev/null 2>&1 || true
  scripts/mcp-sdk.sh 1.12.0 >/dev/null 2>&1 || true # an older client (serve-mcp.bats)
  # npm-releases.sh fetches what its cache lacks (the test below is its
  # own), then copies the three servers' node_modules out and starts each
  # once: with the cache full, that copy is all it would do (~7 s of CPU)
  npm_cached=1
  for n in server-filesystem server-memory server-everything server-github; do
    [ -f "${GL_NPM_CACHE:-$root/build/npm}/$n/package-lock.json" ] || npm_cached=0
  done
  if [ "$npm_cached" = 0 ] || [ "${GL_NPM_REFRESH:-0}" = 1 ]; then
    scripts/npm-releases.sh "$npm_tmp" >/dev/null 2>&1 || true
  fi
  chmod -R u+w "$npm_tmp" 2>/dev/null
  rm -rf "$npm_tmp"
fi

# The jobs: one per suite and pass. GL_TEST_JOBS workers (default 4: most
# suites wait on processes, sinks and sleeps more than they compute, so four
# streams fit two CPUs) take them longest first — by the times of the last
# run on this checkout (build/test-times.tsv, else tests/times.tsv) — and
# print each job's output when it ends.
jobdir=$(mktemp -d)
run_mark=gl-test.$$.${jobdir##*/} # each job's marker: $run_mark.N
: >"$jobdir/jobs"
if want plain; then
  for s in "${suites[@]}"; do echo "plain $s" >>"$jobdir/jobs"; done
fi
if want sanitizers && [ "${GL_TEST_NO_SAN:-0}" != 1 ]; then
  for s in "${suites[@]}"; do
    if grep -q '^# sanitizers: no' "$s"; then
      echo "== $s (sanitizers): not run — $(grep -m1 '^# sanitizers: no' "$s" | sed 's/^# sanitizers: no *[—-]* *//')"
    else
      echo "sanitizers $s" >>"$jobdir/jobs"
    fi
  done
fi
marked=() why= uroot=
if want unprivileged && [ "${GL_TEST_NO_UNPRIV:-0}" != 1 ]; then
  unprivileged_prepare
  for s in "${marked[@]}"; do
    if [ -n "$why" ]; then
      skipped "$s" unprivileged "$why"
    else
      echo "unprivileged $s" >>"$jobdir/jobs"
    fi
  done
fi
times=$root/build/test-times.tsv
# each job's weight: the seconds it took last time on this checkout, else
# in the run tests/times.tsv records (a clean clone), else 600 for a suite
# marked "# lane: beside" and 60 for the others
seed=$times
[ -f "$seed" ] || seed=$root/tests/times.tsv
declare -A weight_of=() record_of=() budget_line_of=()
if [ -f "$seed" ]; then
  while read -r p n sec _; do [ -n "$sec" ] && weight_of["$p $n"]=$sec; done <"$seed"
fi

# The watchdog's budgets (docs/testing.md "The watchdog"), from the seconds
# tests/times.tsv records for the job (GL_TEST_TIMES: another file's) — the
# same on every machine, unlike build/test-times.tsv, which a partial, a
# skipping or a loaded run would lower or raise:
#   budget = max(wd_floor, wd_k × recorded + wd_c); wd_default unrecorded
# wd_k 10: tests/times.tsv was recorded on a machine with nothing else
# running. CI's took 2 to 4× as long for the same suites (docs/testing.md
# "Where make check's time goes"); this project's machine on 2026-12-06,
# running three other checkouts' builds and tests beside a clean clone's
# make check (72 min), 4× at the median and up to 11.7× (the sanitizer
# pass of tests/gl-verify.bats, 269 s against 23) — yet every job ended
# within two thirds of its budget (tests/witness-bounds.bats 547 s of 830,
# gl-verify 269 of 410). A machine 3× slower running four suites on two
# cores keeps 2.5× or more. wd_c 180 s and the floor 300 s: a short suite
# is mostly fixed costs (process starts, a setup_file, a lock another suite
# holds) that a busy machine stretches more than its tests (the 11.7×
# above). wd_default 1500 s: about the longest recorded job's (127 s →
# 1450 s); a new suite gets its line in tests/times.tsv, or a "# budget:
# N" line, when it is added. A hang costs 5 to 25 minutes, not CI's 90.
wd_k=10 wd_c=180 wd_floor=300 wd_default=1500
for f in "${budget_files[@]}"; do
  [ -f "$f" ] || continue
  while read -r p n sec _; do
    [[ $sec =~ ^([0-9]+)(\.[0-9]*)?$ ]] || continue
    frac=${BASH_REMATCH[2]} sec=$((10#${BASH_REMATCH[1]}))
    [[ $frac == *[1-9]* ]] && sec=$((sec + 1)) # a fraction rounds up
    if [ -z "${record_of["$p $n"]:-}" ] || [ "$sec" -gt "${record_of["$p $n"]}" ]; then
      record_of["$p $n"]=$sec
    fi
  done <"$f"
done
# budget_of PASS SUITE — sets budget (seconds) and budget_how (why)
budget_of() {
  local key="$1 ${2#"$root"/}" r
  if [ -n "${GL_TEST_BUDGET:-}" ]; then
    budget=$GL_TEST_BUDGET budget_how=GL_TEST_BUDGET
    return
  fi
  if [ -z "${budget_line_of[$2]+set}" ]; then
    budget_line_of[$2]=$(sed -n 's/^# budget: *\([0-9][0-9]*\).*/\1/p' "$2" 2>/dev/null | head -1)
  fi
  if [ -n "${budget_line_of[$2]}" ]; then
    budget=$((10#${budget_line_of[$2]})) budget_how="its line \"# budget: $budget\""
  elif [ -n "${record_of[$key]:-}" ]; then
    r=${record_of[$key]}
    budget=$((wd_k * r + wd_c)) budget_how="$wd_k × $r s recorded + $wd_c s"
    if [ "$budget" -lt "$wd_floor" ]; then
      budget=$wd_floor budget_how="the floor ($budget_how = $((wd_k * r + wd_c)) s)"
    fi
  else
    budget=$wd_default budget_how="no recorded time: the default"
  fi
  if [ "$scale_pct" -ne 100 ]; then
    budget=$(((budget * scale_pct + 99) / 100)) budget_how="$budget_how, × ${GL_TEST_BUDGET_SCALE}"
  fi
  [ "$budget" -ge 1 ] || budget=1
}
{
  while read -r pass s; do
    w=${weight_of["$pass ${s#"$root"/}"]:-}
    if [ -z "$w" ]; then
      if grep -q '^# lane: beside' "$s"; then w=600; else w=60; fi
    fi
    budget_of "$pass" "$s"
    echo "$w|$pass|$budget|$s|$budget_how"
  done <"$jobdir/jobs"
} | sort -t'|' -k1,1nr -s >"$jobdir/order.how"
cut -d'|' -f2-4 "$jobdir/order.how" | tr '|' ' ' >"$jobdir/order"
mapfile -t order <"$jobdir/order"
njobs=${#order[@]}
if [ "${GL_TEST_BUDGETS:-0}" = 1 ]; then # print the budgets, run nothing
  echo "== $njobs suite runs, longest first: budget, pass, suite (how)"
  while IFS='|' read -r w pass b s how; do
    printf '%6d s  %-12s %s (%s)\n' "$b" "$pass" "${s#"$root"/}" "$how"
  done <"$jobdir/order.how"
  exit 0
fi
: >"$jobdir/next"
: >"$jobdir/times"

# The sanitizer build (GL_TEST_BUILD_ASAN=1, as make check does): started
# here, beside the first jobs, so that the plain and unprivileged jobs use
# the CPU its serial steps leave idle; a sanitizer job waits for it. While
# it runs the build holds a lock on $jobdir/asan.lock (taken here, before
# any worker exists), and writes its exit status to $jobdir/asan.rc.
san_build=0
if [ "${GL_TEST_BUILD_ASAN:-0}" = 1 ] && grep -q '^sanitizers ' "$jobdir/order"; then
  san_build=1
  san_log=$root/build/asan-build.log
  mkdir -p "$root/build"
  exec 9>"$jobdir/asan.lock"
  flock 9
  echo "== the sanitizer build (make asan) runs beside the first jobs: $san_log"
  (
    ${MAKE:-make} --no-print-directory -j"${GL_TEST_MAKE_JOBS:-2}" asan >"$san_log" 2>&1
    echo $? >"$jobdir/asan.rc"
  ) &
  exec 9>&-
fi
# san_ready — is the sanitizer build done (or not ours to make)?
san_ready() { [ "$san_build" = 0 ] || [ -e "$jobdir/asan.rc" ]; }
# san_failed — did the sanitizer build fail? (call once san_ready)
san_failed() { [ "$san_build" = 1 ] && [ "$(cat "$jobdir/asan.rc")" != 0 ]; }

# pick — claim (mkdir, atomic) the first job in the order that may start:
# any but a sanitizer job while the sanitizer build runs; when only those
# are left, wait for the build (its lock). Sets i, pass, budget and s; false
# when no job is left.
pick() {
  local n ready waiting
  while :; do
    ready=1
    san_ready || ready=0
    waiting=0
    for ((n = 0; n < njobs; n++)); do
      [ -e "$jobdir/claim.$n" ] && continue
      if [ "$ready" = 0 ] && [ "${order[n]%% *}" = sanitizers ]; then
        waiting=1
        continue
      fi
      mkdir "$jobdir/claim.$n" 2>/dev/null || continue
      i=$n pass=${order[n]%% *} s=${order[n]#* }
      budget=${s%% *} s=${s#* }
      return 0
    done
    [ "$waiting" = 1 ] || return 1
    flock "$jobdir/asan.lock" true
  done
}

# The watchdog's sweep. Every process a job starts inherits its marker, the
# environment variable GL_TEST_JOB_MARK (as_nobody passes it on through
# setpriv --reset-env); one that drops it (gl-run's germlines and copies
# have an environment of their own) is still a descendant of one that has
# it, or of the job's first process. A cgroup per job would hold them all,
# but it would move gl-run out of the cgroup it delegates its per-copy
# groups from (lib/sandbox/cgroup.c open_v2: on a cgroup v2 host the groups
# would go under the job's, where the memory and pids controllers may not
# be enabled), and the suites are to run as they do without a watchdog.
#
# job_procs MARK [ROOT] — the job's live processes, one pid a line (sorted):
# those whose environment holds GL_TEST_JOB_MARK=MARK, and every descendant
# of those and of ROOT; zombies left out, and never this shell nor ROOT
# (the worker's subshell that waits for the job, writes its status and
# ends with it: killed, bash would print "Killed" on the run's stderr).
job_procs() {
  {
    grep -lsFxz -- "GL_TEST_JOB_MARK=$1" /proc/[0-9]*/environ | sed -n 's,^/proc/\([0-9]*\)/environ$,m \1,p'
    cat /proc/[0-9]*/stat 2>/dev/null
  } | awk -v root="$2" -v self="$$" '
    $1 == "m" { want[$2] = 1; next }
    { s = $0; sub(/^.*\) /, "", s); split(s, f, " "); state[$1] = f[1]; kids[f[2]] = kids[f[2]] " " $1 }
    END {
      want[root] = 1
      for (p in want) q[++n] = p
      for (i = 1; i <= n; i++) {
        m = split(kids[q[i]], c, " ")
        for (j = 1; j <= m; j++) if (!(c[j] in want)) { want[c[j]] = 1; q[++n] = c[j] }
      }
      for (p in want) if ((p in state) && state[p] != "Z" && state[p] != "X" && p != self && p != root) print p
    }' | sort -n
}

# none_new OLD NEW — true when NEW (pids, one a word) holds none that OLD lacks
none_new() {
  local -A old=()
  local p
  for p in $1; do old[$p]=1; done
  for p in $2; do [ -n "${old[$p]:-}" ] || return 1; done
  return 0
}

# kill_job MARK ROOT REPORT — end a job and everything it started: stop its
# processes (SIGSTOP) until a second look finds none it has not stopped (a
# stopped process forks no more, and its children stay its children, so
# none escapes to init between the look and the kill), then SIGKILL them
# all; again until none is left (at most 100 rounds: one in an
# uninterruptible sleep dies when it wakes). Then what the job's processes
# would have removed as they ended: the run directories of its bats
# (BATS_RUN_TMPDIR of a bats whose BATS_ROOT_PID was one of them) and the
# per-copy cgroups of its gl-run processes. Writes what it killed to REPORT.
kill_job() {
  local mark=$1 root=$2 report=$3 pids more p v r d round
  local -A seen=() run_dir=()
  local -a killed=() env=()
  for ((round = 0; round < 100; round++)); do
    pids=$(job_procs "$mark" "$root")
    [ -n "$pids" ] || break
    # shellcheck disable=SC2086 # one pid a word
    kill -STOP $pids 2>/dev/null
    more=$(job_procs "$mark" "$root")
    # look again only for one it has not stopped: a process that ended
    # between the looks (a signal to the run's group ends many at once) is
    # none, and waiting for two equal looks while they end could outlast
    # the rounds and kill nothing
    none_new "$pids" "$more" || continue
    for p in $pids; do
      [ -n "${seen[$p]:-}" ] && continue
      seen[$p]=1
      mapfile -d '' -t env 2>/dev/null <"/proc/$p/cmdline"
      v="${env[*]}"
      killed+=("$(printf '%7s %s' "$p" "${v:0:200}")")
      mapfile -d '' -t env 2>/dev/null <"/proc/$p/environ"
      r='' d=''
      for v in "${env[@]}"; do
        case $v in
          BATS_ROOT_PID=*) r=${v#*=} ;;
          BATS_RUN_TMPDIR=?*) d=${v#*=} ;;
        esac
      done
      [ -n "$r" ] && [ -n "$d" ] && run_dir[$r]=$d
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
    sleep 0.1
  done
  pids=$(job_procs "$mark" "$root")
  for r in "${!run_dir[@]}"; do
    d=${run_dir[$r]}
    if [ -n "${seen[$r]:-}" ] && [[ ${d##*/} == bats-run-* ]] && [ -d "$d" ]; then
      chmod -R u+w "$d" 2>/dev/null
      rm -rf "$d"
    fi
  done
  cgroup_leftovers "${!seen[@]}"
  {
    echo "the watchdog killed ${#killed[@]} processes of the job:"
    printf '%s\n' "${killed[@]:0:40}"
    [ "${#killed[@]}" -le 40 ] || echo "  … and $((${#killed[@]} - 40)) more"
    # shellcheck disable=SC2086
    [ -z "$pids" ] || echo "still there after $round rounds of SIGKILL:" $pids
  } >"$report"
}

# cgroup_leftovers PID... — the per-copy cgroups that gl-run processes
# among PIDs, killed, did not remove (lib/sandbox/cgroup.c: germline-<pid>
# and its slots under the cgroup it runs in, this shell's; on cgroup v2 the
# leaf gl-broker-<pid> it may have moved into). Only empty groups go (rmdir).
cgroup_leftovers() {
  local ctl path base p d
  [ $# -gt 0 ] || return 0
  while IFS=: read -r _ ctl path; do
    case $ctl in
      "") base=/sys/fs/cgroup ;;
      memory | pids) base=/sys/fs/cgroup/$ctl ;;
      *) continue ;;
    esac
    for p in "$@"; do
      for d in "$base${path%/}/germline-$p" "$base${path%/}/gl-broker-$p"; do
        [ -d "$d" ] || continue
        rmdir "$d"/*/ "$d" 2>/dev/null
      done
    done
  done </proc/self/cgroup
}

# worker — take the next job, run it, print its output and add its TAP to
# the log (under the lock: blocks never interleave). A sanitizer job after
# a failed sanitizer build is one failure saying so. Each job runs in the
# background with its marker (GL_TEST_JOB_MARK) while the worker waits for
# the status it writes to a fifo, at most its budget with the watchdog on;
# past it, kill_job ends it and its log is one failure naming it, after the
# results it had reported, then the end of its output as TAP comments (not
# counted). A killed job's time is not kept for the next run's order.
worker() {
  local i pass s budget t0 out times mark jpid fd rc left spent
  while pick; do
    times=$jobdir/times
    out=$jobdir/$i.out
    t0=$SECONDS
    if [ "$pass" = sanitizers ] && san_failed; then
      { echo "== $s (sanitizers)"
        echo "not ok 1 $s (sanitizers): the sanitizer build failed (make asan exited $(cat "$jobdir/asan.rc"); $san_log)"
      } | tee "$jobdir/$i.log" >"$out"
      times=/dev/null # no duration to keep for the next run's order
    else
      mark=$run_mark.$i
      mkfifo "$jobdir/$i.fifo"
      exec {fd}<>"$jobdir/$i.fifo"
      {
        (
          exec {fd}>&-
          export GL_TEST_JOB_MARK=$mark
          log=$jobdir/$i.log bats_out=$jobdir/$i.tap run_job "$pass" "$s"
        ) >"$out" 2>&1
        echo "$?" >&"$fd"
      } 2>/dev/null &
      jpid=$!
      echo "$mark" >"$jobdir/running.$i"
      rc=
      if [ "$watchdog" = 1 ]; then
        while [ -z "$rc" ] && left=$((t0 + budget - SECONDS)) && [ "$left" -gt 0 ]; do
          read -r -t "$left" -u "$fd" rc || rc=
        done
        [ -n "$rc" ] || read -r -t 0.5 -u "$fd" rc || rc= # it ended as its time ran out
      else
        read -r -u "$fd" rc || rc=
      fi
      if [ -z "$rc" ]; then
        spent=$((SECONDS - t0))
        kill_job "$mark" "$jpid" "$jobdir/$i.killed"
        {
          grep -E '^(not )?ok [0-9]+' "$jobdir/$i.tap" 2>/dev/null
          echo "not ok 1 ${s#"$root"/} ($pass): killed by the watchdog after $spent s (budget $budget s)"
          echo "# the last lines of its output:"
          tail -n 20 "$out" | sed 's/^/#   /'
          sed 's/^/# /' "$jobdir/$i.killed"
        } >"$jobdir/$i.log"
        {
          echo "not ok 1 ${s#"$root"/} ($pass): killed by the watchdog after $spent s (budget $budget s)"
          sed 's/^/# /' "$jobdir/$i.killed"
        } >>"$out"
        times=/dev/null
      fi
      wait "$jpid" 2>/dev/null
      exec {fd}<&-
      rm -f "$jobdir/running.$i" "$jobdir/$i.fifo"
    fi
    flock "$jobdir/next" sh -c 'cat "$1"; cat "$2" >>"$3"; echo "$4" >>"$5"' sh \
      "$out" "$jobdir/$i.log" "$log" "$pass ${s#"$root"/} $((SECONDS - t0))" "$times"
  done
}
workers=${GL_TEST_JOBS:-4}
[ "$workers" -ge 1 ] 2>/dev/null || workers=1
if [ "$watchdog" = 1 ]; then
  echo "== $njobs suite runs, $workers at a time, longest first; the watchdog kills a job past its budget ($(cut -d' ' -f2 "$jobdir/order" | sort -n | sed -n '1p;$p' | paste -sd'-') s; GL_TEST_BUDGETS=1 lists them)"
else
  echo "== $njobs suite runs, $workers at a time, longest first; no watchdog (GL_TEST_WATCHDOG=0)"
fi
worker_pids=()
for ((w = 0; w < workers; w++)); do
  worker &
  worker_pids+=($!)
done
for p in "${worker_pids[@]}"; do wait "$p"; done
worker_pids=()
if [ "$san_build" = 1 ]; then
  flock "$jobdir/asan.lock" true
  if san_failed; then
    echo "== the sanitizer build failed (make asan exited $(cat "$jobdir/asan.rc")); the end of $san_log:"
    tail -n 30 "$san_log"
  fi
fi
# the times of this run, for the next one's order (a partial run adds to
# them); not a run of a suite other than tests/*.bats (tests/watchdog.bats'
# fixture suites, in a make check whose own times are still to be written)
if [ "$foreign" = 0 ] && [ "${GL_TEST_NO_TIMES:-0}" != 1 ] && [ -d "$root/build" ] && [ -w "$root/build" ]; then
  { [ -f "$times" ] && cat "$times"; cat "$jobdir/times"; } |
    awk '{ t[$1 " " $2] = $3 } END { for (k in t) print k, t[k] }' | sort >"$times.tmp" &&
    mv "$times.tmp" "$times"
fi
rm -rf "$jobdir"

passed=$(grep -cE '^ok [0-9]+' "$log" | tr -d ' ' || true)
skipped=$(grep -cE '^ok [0-9]+ .*# skip' "$log" || true)
failed=$(grep -cE '^not ok [0-9]+' "$log" || true)
passed=$((passed - skipped))
echo
if [ "$failed" -gt 0 ]; then # (a job the watchdog killed: with the end of its output)
  echo "failed tests:"
  awk '/^not ok [0-9]+/ { print; wd = /killed by the watchdog/; next } wd && /^#/ { print; next } { wd = 0 }' "$log"
fi
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
