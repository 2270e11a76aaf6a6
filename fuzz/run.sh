#!/usr/bin/env bash
# fuzz/run.sh SECONDS TARGET... — make fuzz (fuzz/fuzz.mk; docs/fuzzing.md).
#
# Runs each target's build/fuzz/bin/TARGET for SECONDS seconds, one after
# another (one core), from a fresh copy of its committed corpus
# fuzz/corpus/TARGET in OUT/corpus/TARGET, where the inputs it finds land
# (the committed corpus is never written). What a target finds goes to
# OUT/artifacts/TARGET/ (crash-*, leak-*, timeout-*, oom-*: libFuzzer's
# names), its log to OUT/logs/TARGET.log. OUT is build/fuzz, or FUZZ_OUT.
# Prints per target its executions, corpus size and findings, then a
# total; exits 1 when any target found something (or could not run).
#
#   FUZZ_TIMEOUT=10     seconds one input may take (-timeout)
#   FUZZ_RSS_MB=2048    the process's memory bound (-rss_limit_mb; -malloc_limit_mb too)
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: fuzz/run.sh SECONDS TARGET..." >&2; exit 2; }
secs=$1
shift
case $secs in '' | *[!0-9]*) echo "fuzz/run.sh: SECONDS must be a number of seconds" >&2; exit 2 ;; esac
out=${FUZZ_OUT:-build/fuzz}
timeout_s=${FUZZ_TIMEOUT:-10}
rss=${FUZZ_RSS_MB:-2048}

failed=0
total_execs=0
printf '%-9s %12s %8s %7s %6s %8s %5s  %s\n' target executions corpus crashes leaks timeouts ooms "(seconds each: $secs)"
for t; do
  bin=build/fuzz/bin/$t
  corpus=$out/corpus/$t
  art=$out/artifacts/$t
  log=$out/logs/$t.log
  if [ ! -x "$bin" ]; then
    echo "$t: $bin is not built (make fuzz-build)"
    failed=1
    continue
  fi
  rm -rf "$corpus"
  mkdir -p "$corpus" "$art" "$(dirname "$log")"
  [ -d "fuzz/corpus/$t" ] && cp fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null
  seeds=$(find "$corpus" -type f | wc -l)
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  stamp=$(mktemp)
  "$bin" -max_total_time="$secs" -timeout="$timeout_s" -rss_limit_mb="$rss" -malloc_limit_mb="$rss" \
    -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$art/" "${dict[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  found=$(find "$art" -maxdepth 1 -type f -newer "$stamp" | sort)
  rm -f "$stamp"
  count() { grep -c "/$1-" <<<"$found"; }
  crashes=$(count crash) leaks=$(count leak) timeouts=$(count timeout) ooms=$(count oom)
  execs=$(awk '/^stat::number_of_executed_units:/ { print $2 }' "$log" | tail -1)
  execs=${execs:-0}
  total_execs=$((total_execs + execs))
  size=$(find "$corpus" -type f | wc -l)
  printf '%-9s %12s %8s %7s %6s %8s %5s  %s\n' "$t" "$execs" "$size" "$crashes" "$leaks" "$timeouts" "$ooms" "(from $seeds seeds)"
  if [ $((crashes + leaks + timeouts + ooms)) -gt 0 ] || [ "$rc" -ne 0 ]; then
    failed=1
    grep -m3 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | sed "s/^/  $t: /"
    [ $((crashes + leaks + timeouts + ooms)) -gt 0 ] || echo "  $t: exited $rc without an artifact; see $log"
    [ -n "$found" ] && sed 's/^/  input: /' <<<"$found"
  fi
done
echo "total: $total_execs executions; $([ "$failed" = 0 ] && echo "nothing found" || echo "FOUND something: see $out/artifacts and $out/logs")"
exit "$failed"
