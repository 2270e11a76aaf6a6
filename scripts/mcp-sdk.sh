#!/usr/bin/env bash
# Install the official MCP TypeScript SDK (@modelcontextprotocol/sdk, from
# the npm registry) into build/npm/mcp-sdk, once, for the tests and bench
# that drive gl-run --serve-mcp with a real MCP client (docs/mcp.md).
# scripts/mcp-sdk.sh VERSION installs that version into
# build/npm/mcp-sdk-VERSION instead (an older client: 1.12.0 speaks
# revision 2025-03-26). Prints the directory. Needs node and npm
# (scripts/deps.sh: nodejs).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$PWD/build/npm/mcp-sdk
version=1.32.2
if [ $# -gt 0 ] && [ "$1" != "$version" ]; then
  [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "mcp-sdk.sh: not a version: $1" >&2; exit 2; }
  version=$1
  dir=$PWD/build/npm/mcp-sdk-$version
fi
. scripts/npm.bash
npm_lock "$dir.lock"
if [ ! -f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
  [ "$(jq -r .version "$dir/node_modules/@modelcontextprotocol/sdk/package.json")" != "$version" ]; then
  npm_install "$dir" '{"name":"gl-mcp-sdk-client","private":true}' \
    --silent "@modelcontextprotocol/sdk@$version"
fi
echo "$dir"
