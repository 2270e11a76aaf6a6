#!/usr/bin/env bash
# bench/resident.sh (make bench): the memory of many resident germlines and
# the cost of an eviction (issue 19 "many resident releases", gl-run
# --max-resident; the paper's Fig. 4(c); the figures are kept in
# docs/performance.md "Many resident releases").
#
# GL_BENCH_RESIDENT_RELEASE (default realistic: bench/releases/realistic,
# which imports numpy, pypdf and requests at init, as real tools do; or
# bench, bench/releases/bench, stdlib only) is installed as
# GL_BENCH_RESIDENT_MAX (20) distinct signed releases — the same code with a
# different version each — through the real chain into a temporary GL_HOME.
# bench/resident/driver.py then measures, in this one run, the PSS summed
# over every process of 1, 5, 10 and 20 resident germlines against as many
# plain python3 processes with the same imports, and the median call of a
# session where every call evicts and relaunches (--max-resident 1) against
# one where every call is a resident hit, and prints the ratios.
#   GL_BENCH_RESIDENT_COUNTS (1,5,10,20), GL_BENCH_RESIDENT_CYCLES (10)
set -euo pipefail
. "$(dirname "$0")/lib/setup.bash"
bench_setup resident
name=${GL_BENCH_RESIDENT_RELEASE:-realistic}
src=$root/bench/releases/$name
[ -f "$src/manifest.json" ] || { echo "bench: resident: no release $src" >&2; exit 1; }
if [ "$name" = realistic ] && ! /usr/bin/python3 -c 'import numpy, pypdf, requests' 2>/dev/null; then
  echo "bench: resident: python3-numpy, python3-pypdf and python3-requests are needed" \
    "(scripts/deps.sh installs them)" >&2
  exit 1
fi
max=${GL_BENCH_RESIDENT_MAX:-20}
bench_publisher
shas=$(for i in $(seq "$max"); do
  mkdir "$work/r$i"
  cp -r "$src/." "$work/r$i/"
  jq -c --arg v "1.0.$i" '.version = $v' "$src/manifest.json" >"$work/r$i/manifest.json"
  bench_install "$work/r$i"
done | paste -sd,)
first=$GL_HOME/releases/${shas%%,*}

# The bench releases name no read_paths (numpy's BLAS links are system
# paths: docs/performance.md "What it takes to import numpy").
echo '{"clearances":{"agent":[]}}' >"$work/policy.json"

echo "machine: $(nproc) CPUs, $(uname -sr), $(/usr/bin/python3 -V 2>&1);" \
  "release $name x $max installs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$root/bench/resident/driver.py" --root "$root" --policy "$work/policy.json" \
  --releases "$shas" --entry-dir "$first" --entry "$(jq -r .entry "$first/manifest.json")" \
  --counts "${GL_BENCH_RESIDENT_COUNTS:-1,5,10,20}" --cycles "${GL_BENCH_RESIDENT_CYCLES:-10}"
