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
#   GL_TEST_JOBS=1 tests/run.sh                passes one after the other (default 3:
#                                              the sanitizer and unprivileged passes
#                                              beside the plain one; 2: only sanitizers)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log=$(mktemp)
unpriv_dir=
cleanup() {
  if [ -n "${san_pid:-}" ]; then kill "$san_pid" 2>/dev/null; fi
  if [ -n "${unpriv_pid:-}" ]; then kill "$unpriv_pid" 2>/dev/null; fi
  rm -f "$log" "${san_out:-}" "${san_log:-}" "${unpriv_out:-}" "${unpriv_log:-}"
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

# run_pass LABEL BINDIR [SKIP_LANE] — every suite against BINDIR; with
# SKIP_LANE=1 the plain pass leaves out the suites marked "# lane: beside",
# which the unprivileged lane runs once it is done (run_beside), so that the
# two lanes take about as long.
lane_beside() { grep -q '^# lane: beside' "$1"; }
run_pass() {
  local label=$1 bindir=$2 skip=${3:-0} s
  for s in "${suites[@]}"; do
    if [ "$skip" = 1 ] && lane_beside "$s"; then
      echo "== $s ($label): in the unprivileged lane (# lane: beside)"
      continue
    fi
    if [ "$label" = sanitizers ] && grep -q '^# sanitizers: no' "$s"; then
      echo "== $s ($label): not run — $(grep -m1 '^# sanitizers: no' "$s" | sed 's/^# sanitizers: no *[—-]* *//')"
      continue
    fi
    echo "== $s ($label)"
    run_bats "$s ($label)" env GL_BIN="$bindir" GL_ROOT="$root" GL_TEST_LANE="$label" bats --tap "$s"
  done
}

# run_bats NAME CMD... — run one suite, its TAP into the log. A bats that
# fails without reporting a failed test (it could not start, a setup_file
# failed) counts as one failure, never as nothing.
run_bats() {
  local name=$1 out rc t0=$SECONDS
  shift
  out=$(mktemp)
  "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  echo "   ($name: $((SECONDS - t0)) s)"
  cat "$out" >>"$log"
  if [ "$rc" -ne 0 ] && ! grep -qE '^not ok [0-9]+' "$out"; then
    echo "not ok 1 $name: bats exited $rc without a failed test" | tee -a "$log"
  fi
  rm -f "$out"
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
    test -r examples/releases/pool/manifest.json && test -r tests/fixtures/run/persistent.py' \
    sh "$1" 2>/dev/null
}
unprivileged_root() { # sets uroot to the root nobody uses, or why
  if nobody_reads "$root"; then
    uroot=$root
    return 0
  fi
  unpriv_dir=$(mktemp -d "${TMPDIR:-/tmp}/gl-unpriv.XXXXXX") || { why="mktemp failed"; return 1; }
  mkdir -p "$unpriv_dir/build" "$unpriv_dir/lib" &&
    cp -a bin tests testbed examples hosts "$unpriv_dir"/ &&
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

run_unprivileged() {
  local s rel marked=() why= uroot=
  for s in "${suites[@]}"; do
    grep -q '^# unprivileged: yes' "$s" && marked+=("$s")
  done
  [ ${#marked[@]} -gt 0 ] || return 0
  if [ "$(id -u)" != 0 ]; then
    echo "== unprivileged pass: not run — the plain pass already ran as uid $(id -u)"
    return 0
  fi
  if ! command -v setpriv >/dev/null; then
    why="setpriv (util-linux) is missing"
  elif ! id nobody >/dev/null 2>&1 || ! getent group nogroup >/dev/null; then
    why="no user nobody or group nogroup"
  else
    unprivileged_root
  fi
  for s in "${marked[@]}"; do
    if [ -n "$why" ]; then
      skipped "$s" unprivileged "$why"
      continue
    fi
    rel=${s#"$root"/}
    if [ "$uroot" = "$root" ]; then
      echo "== $rel (unprivileged: nobody)"
    else
      echo "== $rel (unprivileged: nobody, from a copy in $uroot)"
    fi
    (cd "$uroot" && run_bats "$rel (unprivileged)" as_nobody GL_BIN="$uroot/bin" \
      GL_ROOT="$uroot" GL_TEST_LANE=unprivileged bats --tap "$uroot/$rel")
  done
}

sanitizers() {
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"
  run_pass sanitizers "$root/build/asan/bin"
}

# The npm packages some suites use are fetched once, before passes that may
# run side by side (each suite would otherwise fetch into build/npm itself).
if command -v npm >/dev/null && grep -qlE 'mcp-sdk.sh|npm-releases.sh' "${suites[@]}"; then
  npm_tmp=$(mktemp -d)
  scripts/mcp-sdk.sh >/dev/null 2>&1 || true
  scripts/npm-releases.sh "$npm_tmp" >/dev/null 2>&1 || true
  chmod -R u+w "$npm_tmp" 2>/dev/null
  rm -rf "$npm_tmp"
fi

# GL_TEST_JOBS (default 3): with 2 or more, the sanitizer pass runs beside
# the plain and unprivileged passes (its output is shown when it ends); with
# 3, the unprivileged pass too (below); with 1, the passes run one after the
# other. Suites share nothing but the build.
san_pid=
if want sanitizers && [ "${GL_TEST_NO_SAN:-0}" != 1 ]; then
  if [ "${GL_TEST_JOBS:-3}" -gt 1 ] && { want plain || want unprivileged; }; then
    san_out=$(mktemp)
    san_log=$(mktemp)
    (log=$san_log sanitizers) >"$san_out" 2>&1 &
    san_pid=$!
    echo "== the sanitizer pass runs beside this one (pid $san_pid); its output follows at the end"
  else
    sanitizers
  fi
fi
# GL_TEST_JOBS 3 (the default): the unprivileged pass runs beside the plain
# one too (most suites wait on processes, sinks and sleeps more than they
# compute, so three streams fit two CPUs).
unpriv_pid=
if want unprivileged && [ "${GL_TEST_NO_UNPRIV:-0}" != 1 ]; then
  if [ "${GL_TEST_JOBS:-3}" -gt 2 ] && want plain; then
    unpriv_out=$(mktemp)
    unpriv_log=$(mktemp)
    # (a subshell: it removes its own copy of the checkout, if it made one)
    (log=$unpriv_log run_unprivileged
     if [ -n "$unpriv_dir" ]; then chmod -R u+w "$unpriv_dir" 2>/dev/null; rm -rf "$unpriv_dir"; fi
     for s in "${suites[@]}"; do
       if lane_beside "$s"; then
         echo "== $s (plain, in the unprivileged lane)"
         log=$unpriv_log run_bats "$s (plain)" env GL_BIN="$root/bin" GL_ROOT="$root" GL_TEST_LANE=plain bats --tap "$s"
       fi
     done
    ) >"$unpriv_out" 2>&1 &
    beside=1
    unpriv_pid=$!
    echo "== the unprivileged pass runs beside this one (pid $unpriv_pid); its output follows"
  fi
fi
want plain && run_pass plain "$root/bin" "${beside:-0}"
if want unprivileged && [ "${GL_TEST_NO_UNPRIV:-0}" != 1 ] && [ -z "$unpriv_pid" ]; then
  run_unprivileged
fi
if [ -n "$unpriv_pid" ]; then
  wait "$unpriv_pid"
  cat "$unpriv_out"
  cat "$unpriv_log" >>"$log"
  rm -f "$unpriv_out" "$unpriv_log"
fi
if [ -n "$san_pid" ]; then
  wait "$san_pid"
  cat "$san_out"
  cat "$san_log" >>"$log"
  rm -f "$san_out" "$san_log"
fi

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
