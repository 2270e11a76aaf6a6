#!/usr/bin/env bash
# assemble.sh OUT — the testbed's release trees, ready to sign, in OUT/<name>/.
# testbed/variants.py writes every release module (the committed ones of
# testbed/releases/ and the variants generated from one template per attack,
# docs/testbed.md "Releases") to a private directory under OUT; an update
# SERVER-VARIANT holds only the files it changes, every other file comes from
# SERVER-1.0.0 (a release is a whole package once assembled, as the paper's
# updates are: the same helpers, one routine changed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: assemble.sh OUT}
mkdir -p "$out"
# private to this run: suites assemble in parallel (tests/run.sh)
src=$(mktemp -d "$out/.modules.XXXXXX")
trap 'rm -rf "$src"' EXIT
/usr/bin/python3 "$here/variants.py" "$src"
for d in "$src"/*/; do
  name=$(basename "$d")
  base="$src/${name%%-*}-1.0.0"
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name"
  [ "$d" = "$base/" ] || cp -R "$base"/. "$out/$name"/
  cp -R "$d". "$out/$name"/
done
