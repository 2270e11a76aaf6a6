#!/usr/bin/env bash
# bench/install.sh — installing a signed release (run by `make bench`).
#
# For a 50 MB and a 200 MB release of incompressible files, in one run on
# the same machine and the same (warm) page cache:
#   gl-verify install   refresh root chain, verify targets.json, length,
#                       SHA-256, private copy, safe extraction, manifest, record
#   sha256sum + tar xzf the same hashing and extraction by the standard tools
#   minisign -Vm        verifying a detached minisign signature of the archive
# Each timing is the best of $GL_BENCH_RUNS runs (default 3). Peak RSS of
# gl-verify (/usr/bin/time -v) is printed per size: it must not grow with the
# archive (streaming, constant-memory hashing and extraction).
# Goal (issue 2): gl-verify within 1.3x of sha256sum + tar xzf.
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
runs=${GL_BENCH_RUNS:-3}
sizes=${GL_BENCH_SIZES:-50 200}
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-install.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"

now() { date +%s.%N; }
# best_of CMD... — the fastest wall-clock time of $runs runs, in seconds;
# `reset` (a function) runs untimed before each run.
best_of() {
  local best="" t0 t1 d i
  for ((i = 0; i < runs; i++)); do
    reset
    t0=$(now)
    "$@" >/dev/null
    t1=$(now)
    d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
    if [ -z "$best" ] || awk -v d="$d" -v b="$best" 'BEGIN { exit !(d < b) }'; then best=$d; fi
  done
  printf '%.3f' "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# peak_rss_kib CMD... — maximum resident set size of CMD, KiB.
peak_rss_kib() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
  else
    /usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
  fi
}

gl-sign keygen --no-passphrase root >/dev/null
gl-sign keygen --no-passphrase tk >/dev/null
minisign -G -W -p mini.pub -s mini.key >/dev/null
gl-sign init repo --root-key root --targets-key tk >/dev/null
export GL_HOME="$work/home"
rss_line=""

for mb in $sizes; do
  rel="rel$mb"
  mkdir -p "$rel/data"
  printf '{"name":"bench","version":"%s.0.0","runtime":"python","entry":"docs_tool","protocol":"germline","functions":{"summarize":{"destinations":[]}},"read_paths":[],"deterministic":false}' \
    "$mb" >"$rel/manifest.json"
  printf 'def summarize(call):\n    return "ok"\n' >"$rel/docs_tool.py"
  for ((i = 0; i < mb; i++)); do
    head -c $((1 << 20)) /dev/urandom >"$rel/data/blob$i.bin"
  done
  archive="bench-$mb.tar.gz"
  gl-sign pack "$rel" "$archive" >/dev/null
  gl-sign add repo --key tk "$archive" >/dev/null
  minisign -Sm "repo/targets/$archive" -s mini.key >/dev/null
  [ -d "$GL_HOME/trust" ] || gl-verify pin repo >/dev/null
  sha=$(sha256sum "$archive" | cut -d' ' -f1)
  bytes=$(stat -c %s "$archive")

  reset() { chmod -R u+w "$GL_HOME/releases" 2>/dev/null || true; rm -rf "$GL_HOME/releases"; }
  gl-verify install repo "$archive" >/dev/null # warm the page cache
  t_gl=$(best_of gl-verify install repo "$archive")
  reset
  rss=$(peak_rss_kib gl-verify install repo "$archive")

  reset() { rm -rf out && mkdir out; }
  base() { sha256sum "repo/targets/$1" && tar xzf "repo/targets/$1" -C out; }
  t_base=$(best_of base "$archive")
  reset() { :; }
  minisign -Vm "repo/targets/$archive" -p mini.pub >/dev/null # it verifies
  t_mini=$(best_of minisign -Vm "repo/targets/$archive" -p mini.pub)

  echo "install-${mb}MB: gl-verify ${t_gl}s, sha256sum+tar ${t_base}s," \
    "ratio $(ratio "$t_gl" "$t_base")x; minisign -Vm ${t_mini}s" \
    "(archive $((bytes >> 20)) MiB, sha256 ${sha:0:12}…)"
  rss_line="$rss_line${rss_line:+, }${mb}MB $((rss / 1024)) MiB"
  rm -rf "$rel" out "$archive"
done
echo "peak RSS of gl-verify install: $rss_line"
