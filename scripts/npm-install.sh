#!/usr/bin/env bash
# npm-install.sh DIR PACKAGE_JSON NPM_ARGS… — install npm packages into DIR
# once, safely when several test suites ask at the same time (tests/run.sh
# runs up to four suites at once, in the plain and the sanitizer passes).
#
# Used by scripts/tufjs.sh, scripts/mcp-sdk.sh and scripts/npm-releases.sh,
# which take an exclusive flock on DIR.lock before they look whether DIR is
# complete and hold it until this script is done: a second caller waits, then
# finds the finished tree. This script installs into DIR.new.PID and renames
# it into place, so a reader never sees a half-written node_modules and a
# killed install leaves no DIR that looks complete (the lock dies with its
# descriptor).
# A CI run failed tests/tufjs.bats twice for want of this: the plain
# and the sanitizer runs of tufjs.bats and tufjs-interop.bats each ran
# `npm install` into one directory at once, and one suite's node found
# modules the other's npm was rewriting.
set -euo pipefail
dir=${1:?usage: npm-install.sh DIR PACKAGE_JSON NPM_ARGS…}
pkg=${2:?usage: npm-install.sh DIR PACKAGE_JSON NPM_ARGS…}
shift 2
stage=$dir.new.$$
trap 'rm -rf "$stage"' EXIT
# under the caller's lock no other install runs: a DIR.new.* left is a killed
# install's, and goes
rm -rf "$dir".new.*
mkdir -p "$stage"
printf '%s\n' "$pkg" >"$stage/package.json"
(cd "$stage" && npm install --no-audit --no-fund "$@" >&2)
rm -rf "$dir"
mv "$stage" "$dir"
trap - EXIT
