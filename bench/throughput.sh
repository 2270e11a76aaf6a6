#!/usr/bin/env bash
# bench/throughput.sh (make bench): calls/s of independent CPU-bound calls at
# parallelism 1, 2, 4 (issue 19, "Must show"; the table is kept in
# docs/performance.md "Concurrency").
#
# bench/releases/throughput (`burn`: pure Python arithmetic, no items, no
# state, no destination) is signed and installed through the real chain into
# a temporary GL_HOME; bench/throughput/driver.py measures gl-run against a
# fresh process per call and a fresh bwrap launch per call at the same
# parallelism, in this one run, and prints calls/s, ratios and scaling.
#   GL_BENCH_THROUGHPUT_CALLS (40), GL_BENCH_PASSES (3),
#   GL_BENCH_THROUGHPUT_JOBS (1,2,4), GL_BENCH_THROUGHPUT_N (200000)
set -euo pipefail
. "$(dirname "$0")/lib/setup.bash"
bench_setup throughput
bench_publisher
sha=$(bench_install "$root/bench/releases/throughput")
# eight agents, each cleared for its own tag: calls for different agents
# touch different horizon slots (bench/throughput/driver.py); "concurrency":
# "any" so that they may overlap at all (the default, "same-clearance",
# runs calls of different horizons in sequence: docs/performance.md)
jq -n '{concurrency: "any", clearances: ([range(8)] | map({key: "agent\(.)", value: ["t\(.)"]}) | from_entries)}' \
  >"$work/policy.json"

echo "machine: $(nproc) CPUs, $(uname -sr), $(/usr/bin/python3 -V 2>&1);" \
  "load average before $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$root/bench/throughput/driver.py" --root "$root" \
  --release "$GL_HOME/releases/$sha" --policy "$work/policy.json" --work "$work" \
  --calls "${GL_BENCH_THROUGHPUT_CALLS:-40}" --passes "${GL_BENCH_PASSES:-3}" \
  --jobs "${GL_BENCH_THROUGHPUT_JOBS:-1,2,4}" --n "${GL_BENCH_THROUGHPUT_N:-200000}"
echo "load average after $(cut -d' ' -f1-3 /proc/loadavg)"
