#!/usr/bin/env bash
# Install the official MCP TypeScript SDK (@modelcontextprotocol/sdk, from
# the npm registry) into build/npm/mcp-sdk, once, for the tests and bench
# that drive gl-run --serve-mcp with a real MCP client (docs/mcp.md).
# Prints the directory. Needs node and npm (scripts/deps.sh: nodejs).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$PWD/build/npm/mcp-sdk
version=1.32.2
. scripts/npm.bash
npm_lock "$dir.lock"
if [ ! -f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
  [ "$(jq -r .version "$dir/node_modules/@modelcontextprotocol/sdk/package.json")" != "$version" ]; then
  npm_install "$dir" '{"name":"gl-mcp-sdk-client","private":true}' \
    --silent "@modelcontextprotocol/sdk@$version"
fi
echo "$dir"
