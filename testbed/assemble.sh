#!/usr/bin/env bash
# assemble.sh OUT — the testbed's release trees, ready to sign, in OUT/<name>/.
# An update SERVER-VARIANT holds only the files it changes; every other file
# comes from SERVER-1.0.0 (a release is a whole package once assembled, as
# the paper's updates are: the same helpers, one routine changed).
set -euo pipefail
src=$(cd "$(dirname "$0")/releases" && pwd)
out=${1:?usage: assemble.sh OUT}
mkdir -p "$out"
for d in "$src"/*/; do
  name=$(basename "$d")
  base="$src/${name%%-*}-1.0.0"
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name"
  [ "$d" = "$base/" ] || cp -R "$base"/. "$out/$name"/
  cp -R "$d". "$out/$name"/
done
