#!/usr/bin/env bash
# bench/realistic.sh (make bench): a realistic release (issue 19, "Must show";
# the figures are kept in docs/performance.md "A realistic release").
#
# bench/releases/realistic imports Debian's python3-numpy, python3-pypdf and
# python3-requests at init, as real tools do; it is signed and installed
# through the real chain into a temporary GL_HOME, and
# bench/realistic/driver.py measures, in this one run, the single-copy call
# latency of each function under germline (gl-plan | gl-run) against a fresh
# process per call with the same imports and one persistent unprotected
# process, the PSS of the germline and of a live copy, and prints the
# ratios (the paper's Section VII footing: its 2-28x).
#
# numpy's extensions link libblas.so.3 and liblapack.so.3, which Debian
# installs as symlinks into /etc/alternatives: the germline's system paths
# carry those library alternatives (lib/sandbox/landlock.c), so the release
# needs no read_paths (docs/performance.md "What it takes to import numpy").
#   GL_BENCH_PASSES (3), GL_BENCH_CALLS (100), GL_BENCH_WARMUP (20),
#   GL_BENCH_FRESH_CALLS (20), GL_BENCH_FRESH_WARMUP (2)
set -euo pipefail
. "$(dirname "$0")/lib/setup.bash"
bench_setup realistic
if ! /usr/bin/python3 -c 'import numpy, pypdf, requests' 2>/dev/null; then
  echo "bench: realistic: python3-numpy, python3-pypdf and python3-requests are needed" \
    "(scripts/deps.sh installs them)" >&2
  exit 1
fi
bench_publisher
sha=$(bench_install "$root/bench/releases/realistic")
rel="$GL_HOME/releases/$sha"

echo '{"clearances":{"agent":[]}}' >"$work/policy.json"

echo "machine: $(nproc) CPUs, $(uname -sr), $(/usr/bin/python3 -V 2>&1);" \
  "$(/usr/bin/python3 -c 'import numpy, pypdf, requests; print("numpy", numpy.__version__,
  "pypdf", pypdf.__version__, "requests", requests.__version__)');" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$root/bench/realistic/driver.py" --root "$root" --release "$rel" \
  --policy "$work/policy.json" --work "$work" \
  --passes "${GL_BENCH_PASSES:-3}" --calls "${GL_BENCH_CALLS:-100}" \
  --warmup "${GL_BENCH_WARMUP:-20}" --fresh-calls "${GL_BENCH_FRESH_CALLS:-20}" \
  --fresh-warmup "${GL_BENCH_FRESH_WARMUP:-2}"
