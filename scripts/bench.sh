#!/usr/bin/env bash
# make bench: every bench/*.sh, each printing ratios against baselines it
# runs itself in the same script (never absolute timings on a noisy machine).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/bin:$PATH" GL_ROOT="$root"
rc=0
for b in "$root"/bench/*.sh; do
  [ -e "$b" ] || continue
  echo "== $(basename "$b")"
  bash "$b" || { echo "bench: $(basename "$b") failed" >&2; rc=1; }
done
exit $rc
