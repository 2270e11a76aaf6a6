#!/usr/bin/env bash
# bench/lone.sh (make bench): one call in flight at a time, gl-run --jobs 1
# against --jobs 2: the latency and CPU a call's worker process adds when
# nothing runs beside it (issue 19; docs/performance.md "One call alone:
# what a worker costs"). About 30 s.
#   GL_BENCH_CALLS (default 300), GL_BENCH_ROUNDS (3)
set -euo pipefail
. "$(dirname "$0")/lib/setup.bash"
bench_setup lone
bench_publisher
sha=$(bench_install "$root/bench/releases/bench")
echo '{"clearances":{"agent":["finance","hr"],"fin":["finance"],"pub":[]}}' >"$work/policy.json"
echo "machine: $(nproc) CPUs, $(uname -sr)"
/usr/bin/python3 "$root/bench/lone/driver.py" --root "$root" --policy "$work/policy.json" \
  --release "$sha" --calls "${GL_BENCH_CALLS:-300}" --rounds "${GL_BENCH_ROUNDS:-3}"
