#!/usr/bin/env bash
# Install tuf-js (the TUF client of npm and sigstore-js) and @tufjs/models
# (its metadata classes), from the npm registry, pinned, into
# build/npm/tufjs, once, for the tests that check gl-sign's repositories with
# a real TUF client and gl-verify against repositories a TUF writer wrote
# (issue 16; tests/fixtures/tuf/updater.mjs, write-repo.mjs). Never vendored.
# Prints the directory. Needs node (20.17+) and npm (scripts/deps.sh: nodejs).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$PWD/build/npm/tufjs
version=4.1.0 # tuf-js; @tufjs/models is pinned to the same version
have() { [ "$(jq -r .version "$dir/node_modules/$1/package.json" 2>/dev/null)" = "$version" ]; }
. scripts/npm.bash
npm_lock "$dir.lock"
if ! have tuf-js || ! have @tufjs/models; then
  npm_install "$dir" '{"name":"gl-tufjs-client","private":true,"type":"module"}' \
    --silent --save-exact "tuf-js@$version" "@tufjs/models@$version"
fi
echo "$dir"
