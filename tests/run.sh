#!/usr/bin/env bash
# Run every bats suite: once against bin/ and once against the
# AddressSanitizer+UndefinedBehaviorSanitizer build. The last line is the
# count CI reads: "N passed, N failed[, N skipped]".
#
# A suite that cannot run under the sanitizers says so on a line
#   # sanitizers: no — <reason>
# and the reason is also written in docs/testing.md.
#   GL_TEST_ONLY=tests/x.bats tests/run.sh     run one suite
#   GL_TEST_NO_SAN=1 tests/run.sh              skip the sanitizer pass
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log=$(mktemp)
trap 'rm -f "$log"' EXIT

suites=(${GL_TEST_ONLY:-tests/*.bats})

run_pass() {
  local label=$1 bindir=$2 s
  for s in "${suites[@]}"; do
    if [ "$label" = sanitizers ] && grep -q '^# sanitizers: no' "$s"; then
      echo "== $s ($label): not run — $(grep -m1 '^# sanitizers: no' "$s" | sed 's/^# sanitizers: no *[—-]* *//')"
      continue
    fi
    echo "== $s ($label)"
    GL_BIN="$bindir" GL_ROOT="$root" bats --tap "$s" 2>&1 | tee -a "$log"
  done
}

run_pass plain "$root/bin"
if [ "${GL_TEST_NO_SAN:-0}" != 1 ]; then
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"
  run_pass sanitizers "$root/build/asan/bin"
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
