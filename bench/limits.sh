#!/usr/bin/env bash
# bench/limits.sh (make bench): what the per-copy bounds cost (issue 15;
# docs/sandbox.md "Resource limits"). In this one run and on this machine:
#   - noop call latency (the records' elapsed_ms, median after a warm-up)
#     with the limits on (bin/gl-run: cgroups as root where the host has
#     them, else rlimits) against off (the test build's gl-run with
#     GL_TEST_LIMITS_OFF=1), passes interleaved, printed as a ratio;
#   - cgroup directories made: strace -f -e trace=mkdir,mkdirat of gl-run
#     over 1 call and over N calls; the same count for both means none is
#     made on the call path (the pool of slots is made when gl-run starts,
#     and the germline's group once per launch).
#   GL_BENCH_PASSES (default 3), GL_BENCH_CALLS (200), GL_BENCH_WARMUP (40)
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
tglrun=$root/build/testing/bin/gl-run
[ -x "$tglrun" ] || make -C "$root" -s "build/testing/bin/gl-run" >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-limits.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GL_HOME="$work/home" HOME="$work"
unset GL_PASSPHRASE
passes=${GL_BENCH_PASSES:-3} calls=${GL_BENCH_CALLS:-200} warm=${GL_BENCH_WARMUP:-40}

(
  cd "$work"
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  gl-sign init repo --root-key root --targets-key tk >/dev/null
  gl-verify pin repo >/dev/null
  gl-sign pack "$root/bench/releases/bench" bench.tar.gz >/dev/null
  gl-sign add repo --key tk bench.tar.gz >/dev/null
)
sha=$(cd "$work" && gl-verify install repo bench.tar.gz | jq -er .release.sha256)
echo '{"clearances":{"agent":[]}}' >"$work/policy.json"

# planned N — N planned noop envelopes
planned() {
  local i
  for ((i = 1; i <= $1; i++)); do
    printf '{"id":"n%d","release":"%s","function":"noop","args":{},"items":[],"consumers":["agent"]}\n' "$i" "$sha"
  done | gl-plan --policy "$work/policy.json"
}
planned $((warm + calls)) >"$work/calls"
planned 1 >"$work/one"

# median_ms GLRUN — the median elapsed_ms of the calls after the warm-up
median_ms() {
  "$1" --policy "$work/policy.json" <"$work/calls" |
    jq -s --argjson w "$warm" '[.[$w:][] | select(.ok) | .elapsed_ms] | sort | .[length / 2 | floor]'
}

echo "machine: $(nproc) CPUs, $(uname -sr); $calls noop calls a pass after $warm, $passes passes"
on_all=() off_all=()
for ((p = 1; p <= passes; p++)); do
  on_all+=("$(median_ms gl-run)")
  off_all+=("$(GL_TEST_LIMITS_OFF=1 median_ms "$tglrun")")
done
mech=$(gl-run --policy "$work/policy.json" <"$work/one" | jq -r '.enforcement.limits | "\(.memory)/\(.pids)/\(.cpu)"')
printf '%s\n' "${on_all[@]}" >"$work/on"
printf '%s\n' "${off_all[@]}" >"$work/off"
on=$(sort -n "$work/on" | sed -n "$(((passes + 1) / 2))p")
off=$(sort -n "$work/off" | sed -n "$(((passes + 1) / 2))p")
echo "noop latency, median of the passes' medians: limits on ($mech) $on ms, off $off ms"
echo "ratio on/off: $(jq -n --argjson a "$on" --argjson b "$off" '$a / $b * 1000 | round / 1000')"

# cgmkdirs FILE — cgroup directories gl-run made over the calls in FILE
cgmkdirs() {
  strace -f -qq -e trace=mkdir,mkdirat -o "$work/trace" gl-run --policy "$work/policy.json" <"$1" >/dev/null
  grep -c '"/sys/fs/cgroup/' "$work/trace" || true
}
if command -v strace >/dev/null; then
  one=$(cgmkdirs "$work/one")
  many=$(cgmkdirs "$work/calls")
  echo "cgroup mkdirs: over 1 call $one, over $((warm + calls)) calls $many" \
    "($([ "$one" = "$many" ] && echo "none on the call path" || echo "MADE ON THE CALL PATH"))"
else
  echo "cgroup mkdirs: strace not installed, not counted"
fi
