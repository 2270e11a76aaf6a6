#!/usr/bin/env bash
# make bench-compare BASE=REV: every bench/*.sh for the build of REV and for
# this tree, one after the other in one run, so that a refactor's ratios are
# read against the code before it on the same machine at the same moment
# (issue 18 "make bench: every ratio within noise of before (same run, both
# builds)"). REV is built in build/bench-base (a git worktree, removed at the
# end); each side runs its own tree's bench scripts and fixtures.
#   GL_BENCH_ONLY="run.sh plan.sh"   only these bench scripts
#   GL_BENCH_BASE_DIR=DIR             a checkout of REV to use (built here if not yet)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:?usage: scripts/bench-compare.sh REV}
rev=$(git -C "$root" rev-parse --verify "$base^{commit}") || exit 2
if [ -n "${GL_BENCH_BASE_DIR:-}" ]; then
  # a checkout of REV already built (make build units) by the caller
  wt=$GL_BENCH_BASE_DIR
  [ "$(git -C "$wt" rev-parse HEAD)" = "$rev" ] ||
    { echo "bench-compare: $wt is not at $base ($rev)" >&2; exit 2; }
else
  wt="$root/build/bench-base"
  git -C "$root" worktree remove --force "$wt" 2>/dev/null
  rm -rf "$wt"
  git -C "$root" worktree add -q --detach "$wt" "$rev" || exit 2
  trap 'git -C "$root" worktree remove --force "$wt" 2>/dev/null' EXIT
fi
echo "bench-compare: building $base ($rev) in $wt" >&2
make -C "$wt" --no-print-directory -j"$(nproc)" build units >"$wt.log" 2>&1 ||
  { echo "bench-compare: the build of $base failed (see $wt.log)" >&2; exit 2; }
make -C "$root" --no-print-directory -j"$(nproc)" build units >/dev/null || exit 2
rc=0
for b in "$root"/bench/*.sh; do
  name=$(basename "$b")
  if [ -n "${GL_BENCH_ONLY:-}" ] && [[ " $GL_BENCH_ONLY " != *" $name "* ]]; then continue; fi
  for side in base this; do
    if [ $side = base ]; then tree=$wt; label="$base"; else tree=$root; label="this tree"; fi
    [ -e "$tree/bench/$name" ] || { echo "== $name ($label): not in this tree"; continue; }
    echo "== $name ($label)"
    (export GL_ROOT="$tree" PATH="$tree/bin:$PATH"; bash "$tree/bench/$name") ||
      { echo "bench-compare: $name ($label) failed" >&2; rc=1; }
  done
done
exit $rc
