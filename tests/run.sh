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
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log=$(mktemp)
unpriv_dir=
worker_pids=()
cleanup() {
  local p
  for p in "${worker_pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$log" "${jobdir:-}"
  if [ -n "$unpriv_dir" ]; then chmod -R u+w "$unpriv_dir" 2>/dev/null; rm -rf "$unpriv_dir"; fi
}
trap cleanup EXIT

suites=(${GL_TEST_ONLY:-tests/*.bats})
only=${GL_TEST_PASS:-}
case "$only" in
  "" | plain | sanitizers | unprivileged) ;;
  *) echo "tests/run.sh: GL_TEST_PASS must be plain, sanitizers or unprivileged" >&2; exit 2 ;;
esac
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }

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
  out=$(mktemp)
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
as_nobody() { # the caller's PATH (for bats and jq), nothing else of its environment
  setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env \
    env PATH="$PATH" LANG=C.UTF-8 "$@"
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
if command -v npm >/dev/null && grep -qlE 'tufjs_setup_file' "${suites[@]}"; then
  scripts/tufjs.sh >/dev/null 2>&1 || true
fi
if command -v npm >/dev/null && grep -qlE 'mcp-sdk.sh|npm-releases.sh' "${suites[@]}"; then
  npm_tmp=$(mktemp -d)
  scripts/mcp-sdk.sh >/dev/null 2>&1 || true
  # npm-releases.sh fetches what its cache lacks (the test below is its
  # own), then copies the three servers' node_modules out and starts each
  # once: with the cache full, that copy is all it would do (~7 s of CPU)
  npm_cached=1
  for n in server-filesystem server-memory server-everything; do
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
{
  while read -r pass s; do
    w=$(awk -v p="$pass" -v s="${s#"$root"/}" '$1 == p && $2 == s { print $3 }' "$seed" 2>/dev/null | tail -1)
    if [ -z "$w" ]; then
      if grep -q '^# lane: beside' "$s"; then w=600; else w=60; fi
    fi
    echo "$w $pass $s"
  done <"$jobdir/jobs"
} | sort -k1,1nr -s | cut -d' ' -f2- >"$jobdir/order"
mapfile -t order <"$jobdir/order"
njobs=${#order[@]}
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
# are left, wait for the build (its lock). Sets i, pass and s; false when
# no job is left.
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
      return 0
    done
    [ "$waiting" = 1 ] || return 1
    flock "$jobdir/asan.lock" true
  done
}

# worker — take the next job, run it, print its output and add its TAP to
# the log (under the lock: blocks never interleave). A sanitizer job after
# a failed sanitizer build is one failure saying so.
worker() {
  local i pass s t0 out times
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
      log=$jobdir/$i.log run_job "$pass" "$s" >"$out" 2>&1
    fi
    flock "$jobdir/next" sh -c 'cat "$1"; cat "$2" >>"$3"; echo "$4" >>"$5"' sh \
      "$out" "$jobdir/$i.log" "$log" "$pass ${s#"$root"/} $((SECONDS - t0))" "$times"
  done
}
workers=${GL_TEST_JOBS:-4}
[ "$workers" -ge 1 ] 2>/dev/null || workers=1
echo "== $njobs suite runs, $workers at a time, longest first"
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
# the times of this run, for the next one's order (a partial run adds to them)
if [ -d "$root/build" ] && [ -w "$root/build" ]; then
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
if [ "$failed" -gt 0 ]; then
  echo "failed tests:"; grep -E '^not ok [0-9]+' "$log"
fi
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
