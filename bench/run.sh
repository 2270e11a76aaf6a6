#!/usr/bin/env bash
# bench/run.sh (make bench): gl-run's per-call latency and memory (issue 4,
# "Benchmark"; the figures are kept in docs/performance.md).
#
# The release bench/releases/bench (noop, stats, summarize, summarize_many,
# hold) is signed and installed through the real chain into a temporary
# GL_HOME; bench/run/driver.py then measures, in this one run and on the
# same machine, every function under germline (gl-plan | gl-run), under one
# persistent unprotected process and under a fresh process per call, a bare
# fork-and-wait of a warm Python process, and the PSS of a resident germline
# and a live copy, and prints the tables and the goals' ratios.
#   GL_BENCH_PASSES (default 3), GL_BENCH_CALLS (200), GL_BENCH_WARMUP (40)
#   GL_BENCH_JOBS=N: the germline sessions at gl-run --jobs N (default gl-run's, the online CPUs)
set -euo pipefail
. "$(dirname "$0")/lib/setup.bash"
bench_setup run
bench_publisher
sha=$(bench_install "$root/bench/releases/bench")
# Clearances: three consumers with different views of the labelled items,
# so that summarize_many's call plans into three groups (checked by driver.py).
echo '{"clearances":{"agent":["finance","hr"],"fin":["finance"],"pub":[]}}' >"$work/policy.json"

echo "machine: $(nproc) CPUs, $(uname -sr), $(/usr/bin/python3 -V 2>&1)"
/usr/bin/python3 "$root/bench/run/driver.py" --root "$root" \
  --release "$GL_HOME/releases/$sha" --policy "$work/policy.json" --work "$work" \
  --passes "${GL_BENCH_PASSES:-3}" --calls "${GL_BENCH_CALLS:-200}" \
  --warmup "${GL_BENCH_WARMUP:-40}"
