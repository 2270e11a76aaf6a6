#!/usr/bin/env bash
# bench/slotlock.sh (make bench): what the per-slot lock costs an
# uncontended call (issue 19, "One GL_HOME, many processes"; docs/design/
# run.md). One gl-run process runs GL_BENCH_LOCK_CALLS (200) calls of the
# counter release tests/fixtures/releases/cc-counter (each reads and writes
# its slot), with the lock (build/testing/bin/gl-run) and without it (the
# same binary, GL_TEST_SLOTLOCK_OFF=1), alternating over GL_BENCH_PASSES (3)
# passes; prints the ratio of the median wall times, on/off. Nothing else
# runs on the slot, so the lock is never waited for: the ratio is the cost
# of open + flock + close per call against the whole call.
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
tglrun=$root/build/testing/bin/gl-run
[ -x "$tglrun" ] || { echo "slotlock: $tglrun missing (make units)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-lock.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GL_HOME="$work/home" HOME="$work"
unset GL_PASSPHRASE
calls=${GL_BENCH_LOCK_CALLS:-200} passes=${GL_BENCH_PASSES:-3}

(
  cd "$work"
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  gl-sign init repo --root-key root --targets-key tk >/dev/null
  gl-verify pin repo >/dev/null
  gl-sign pack "$root/tests/fixtures/releases/cc-counter" cc.tar.gz >/dev/null
  gl-sign add repo --key tk cc.tar.gz >/dev/null
)
sha=$(cd "$work" && gl-verify install repo cc.tar.gz | jq -er .release.sha256)
echo '{"clearances":{"agent":[]},"routes":{}}' >"$work/policy.json"
for ((i = 1; i <= calls; i++)); do
  jq -cn --arg id "c$i" --arg r "$sha" \
    '{id:$id,release:$r,function:"bump",args:{},items:[],consumers:["agent"]}'
done | gl-plan --policy "$work/policy.json" >"$work/planned"

# run [ENV…] — wall seconds of one gl-run over the planned calls
run() {
  local t0 t1
  t0=$(date +%s%N)
  env "$@" "$tglrun" --policy "$work/policy.json" <"$work/planned" >"$work/out"
  t1=$(date +%s%N)
  [ "$(jq -s 'map(select(.ok)) | length' "$work/out")" -eq "$calls" ]
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }'
}
on=() off=()
for ((p = 0; p < passes; p++)); do
  if ((p % 2)); then on+=("$(run)"); off+=("$(run GL_TEST_SLOTLOCK_OFF=1)")
  else off+=("$(run GL_TEST_SLOTLOCK_OFF=1)"); on+=("$(run)"); fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mon=$(median "${on[@]}") moff=$(median "${off[@]}")
awk -v a="$mon" -v b="$moff" -v n="$calls" -v p="$passes" 'BEGIN {
  printf "uncontended slot lock, %d calls x %d passes (one gl-run, launch included):\n", n, p
  printf "  per call: lock on %.2f ms, off %.2f ms; on/off = %.3f\n", 1000 * a / n, 1000 * b / n, a / b }'
