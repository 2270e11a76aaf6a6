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
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
name=${GL_BENCH_RESIDENT_RELEASE:-realistic}
src=$root/bench/releases/$name
[ -f "$src/manifest.json" ] || { echo "bench: resident: no release $src" >&2; exit 1; }
if [ "$name" = realistic ] && ! /usr/bin/python3 -c 'import numpy, pypdf, requests' 2>/dev/null; then
  echo "bench: resident: python3-numpy, python3-pypdf and python3-requests are needed" \
    "(scripts/deps.sh installs them)" >&2
  exit 1
fi
max=${GL_BENCH_RESIDENT_MAX:-20}
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-resident.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GL_HOME="$work/home" HOME="$work"
unset GL_PASSPHRASE

(
  cd "$work"
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  gl-sign init repo --root-key root --targets-key tk >/dev/null
  gl-verify pin repo >/dev/null
  for i in $(seq "$max"); do
    mkdir "r$i"
    cp -r "$src/." "r$i/"
    jq -c --arg v "1.0.$i" '.version = $v' "$src/manifest.json" >"r$i/manifest.json"
    gl-sign pack "r$i" "r$i.tar.gz" >/dev/null
    gl-sign add repo --key tk "r$i.tar.gz" >/dev/null
  done
)
shas=$(for i in $(seq "$max"); do
  (cd "$work" && gl-verify install repo "r$i.tar.gz" | jq -er .release.sha256)
done | paste -sd,)
first=$GL_HOME/releases/${shas%%,*}

# The policy grants the manifest's read_paths and what each resolves to on
# this machine (bench/realistic.sh: numpy's BLAS links in /etc/alternatives).
grants=$(jq -r '.read_paths[]' "$first/manifest.json" | while IFS= read -r p; do
    printf '%s\n' "$p"
    readlink -f -- "$p" || true
  done | jq -R . | jq -sc unique)
echo "{\"clearances\":{\"agent\":[]},\"read_paths\":$grants}" >"$work/policy.json"

echo "machine: $(nproc) CPUs, $(uname -sr), $(/usr/bin/python3 -V 2>&1);" \
  "release $name x $max installs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$root/bench/resident/driver.py" --root "$root" --policy "$work/policy.json" \
  --releases "$shas" --entry-dir "$first" --entry "$(jq -r .entry "$first/manifest.json")" \
  --counts "${GL_BENCH_RESIDENT_COUNTS:-1,5,10,20}" --cycles "${GL_BENCH_RESIDENT_CYCLES:-10}"
