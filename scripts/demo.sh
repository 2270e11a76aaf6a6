#!/usr/bin/env bash
# make demo: the signing chain end to end (issue 2), in a scratch directory.
# A publisher generates keys, packs and signs a release; a host pins the
# publisher, installs the release, and then refuses a tampered archive and a
# rolled-back targets.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PATH="$root/bin:$PATH"
work=$(mktemp -d /tmp/germline-demo.XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GL_HOME="$work/host"
cd "$work"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }

say "Publisher: keys (unencrypted for this demo; CI keeps them encrypted, see docs/signing.md)"
show gl-sign keygen --no-passphrase root
show gl-sign keygen --no-passphrase targets

say "Publisher: a TUF-style repository, a reproducible archive, a signed target"
show gl-sign init repo --root-key root --targets-key targets
show gl-sign pack "$root/examples/releases/docs" docs-1.0.0.tar.gz
show gl-sign add repo --key targets docs-1.0.0.tar.gz
cp repo/targets.json targets-v2.json

say "Host: pin the publisher's root (trust on first use), install the release"
show gl-verify pin repo
show gl-verify install repo docs-1.0.0.tar.gz | tee install.json
sha=$(tail -1 install.json | jq -r .release.sha256)
printf 'installed read-only at %s:\n' "$GL_HOME/releases/$sha"
ls -l "$GL_HOME/releases/$sha"

say "Attack 1: the archive on the mirror is swapped for a tampered one"
cp -r "$root/examples/releases/docs" evil && chmod -R u+w evil
echo 'import os  # hidden code' >> evil/docs_tool.py
gl-sign pack evil evil.tar.gz
cp evil.tar.gz repo/targets/docs-1.0.0.tar.gz
set +e
show gl-verify install repo docs-1.0.0.tar.gz; rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "demo: tampered archive was not refused" >&2; exit 1; }
echo "refused (exit $rc)"
cp docs-1.0.0.tar.gz repo/targets/docs-1.0.0.tar.gz

say "Attack 2: the mirror serves an older, validly signed targets.json (rollback)"
cp -r "$root/examples/releases/docs" v101 && chmod -R u+w v101
sed -i 's/"version":"1.0.0"/"version":"1.0.1"/' v101/manifest.json
gl-sign pack v101 docs-1.0.1.tar.gz >/dev/null
gl-sign add repo --key targets docs-1.0.1.tar.gz >/dev/null
gl-verify install repo docs-1.0.1.tar.gz >/dev/null
echo "host accepted targets version $(jq -r .signed.version repo/targets.json)"
cp targets-v2.json repo/targets.json
set +e
show gl-verify install repo docs-1.0.0.tar.gz; rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "demo: rollback was not refused" >&2; exit 1; }
echo "refused (exit $rc)"

say "Done: a valid release installed; a tampered archive and a rollback refused."
