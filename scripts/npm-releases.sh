#!/usr/bin/env bash
# npm-releases.sh OUT — the official Node.js MCP servers from the npm registry
# (@modelcontextprotocol/server-filesystem, server-memory, server-everything,
# server-github: its tools call https://api.github.com, its only destination;
# server-postgres: its query tool speaks PostgreSQL's protocol to the
# stream destination postgres:5432, the database URL the operator's
# argument, e.g. postgresql://USER@postgres:5432/DB; server-redis
# (2025.4.25): RESP to redis:6379, its URL the operator's argument,
# redis://redis:6379; docs/streams.md; server-sequential-thinking)
# as release trees for runtime "exec" (SPEC §5, §11; docs/exec.md), unmodified:
#
#   OUT/server-filesystem/{manifest.json,node_modules/…}   (and the other two)
#
# npm installs each into a cache under build/npm/ (reused while its
# package-lock.json is there; GL_NPM_REFRESH=1 reinstalls); the tree is then
# copied without node_modules/.bin (symlinks into the tree, unused) and a
# manifest is written: runtime exec, entry ["/usr/bin/node",
# "node_modules/@modelcontextprotocol/NAME/dist/index.js", …], protocol
# mcp-stdio, functions = the names of the server's own tools/list (asked of
# the unmodified server once, here), items_from_args for the file arguments
# of server-filesystem and dirs_from_args for its directory tools' path, and a
# workspace ("state_dir": true, /run/germline/state in each copy) for
# server-filesystem's write tools and server-memory's graph
# (MEMORY_FILE_PATH). Sign and install the trees with gl-sign pack /
# gl-verify install as any release. The only network access is npm's
# registry (npm install). Versions: GL_NPM_VERSION (default "latest" at the
# time of the cached install). GL_NPM_SERVERS names the servers to make
# (default: all seven).
set -euo pipefail
out=${1:?usage: npm-releases.sh OUT}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${GL_NPM_CACHE:-$root/build/npm}
node=${GL_NODE:-/usr/bin/node}
ver=${GL_NPM_VERSION:-latest}
command -v npm >/dev/null || { echo "npm-releases: npm is missing (scripts/deps.sh)" >&2; exit 2; }
mkdir -p "$out" "$cache"
out=$(cd "$out" && pwd) # absolute: the servers are probed from their own directory
. "$root/scripts/npm.bash"

# tools NAME DIR — the tool names of the server's tools/list, one a line, and
# resources/read, prompts/get and completion/complete when its initialize
# declares resources, prompts or completions (docs/mcp.md "Resources and
# prompts").
tools() {
  local entry=$2/node_modules/@modelcontextprotocol/$1/dist/index.js
  shift 2
  {
    printf '%s\n' \
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"npm-releases","version":"1"}}}' \
      '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
      '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    sleep 2
  } | (cd "$(dirname "$entry")" && timeout 20 env -i PATH=/usr/bin:/bin HOME=/nonexistent \
        MEMORY_FILE_PATH=/dev/null "$node" "$entry" "$@" 2>/dev/null) |
    jq -r 'if .id == 2 then .result.tools[].name
           elif .id == 1 then (.result.capabilities | (if .resources then "resources/read" else empty end),
                                                      (if .prompts then "prompts/get" else empty end),
                                                      (if .completions then "completion/complete" else empty end))
           else empty end'
}

# GL_NPM_SERVERS: only these (names as below), e.g. "server-postgres"
for name in ${GL_NPM_SERVERS:-server-filesystem server-memory server-everything server-github server-postgres server-redis server-sequential-thinking}; do
  c=$cache/$name
  # several suites at once (tests/run.sh): one installs, the others wait and
  # copy the finished tree (scripts/npm.bash)
  npm_lock "$c.lock"
  if [ "${GL_NPM_REFRESH:-0}" = 1 ] || [ ! -f "$c/package-lock.json" ]; then
    # server-redis: the version whose tools are listed below
    v=$ver
    [ "$name" = server-redis ] && v=2025.4.25
    npm_install "$c" '{"name":"gl-npm-cache","private":true}' \
      --omit=dev --ignore-scripts "@modelcontextprotocol/$name@$v"
  fi
  d=$out/$name
  rm -rf "$d"
  mkdir -p "$d"
  cp -a "$c/node_modules" "$d/"
  exec 9>&-
  rm -rf "$d/node_modules/.bin" "$d/node_modules/.package-lock.json"
  find "$d" -type l -delete
  version=$(jq -r .version "$d/node_modules/@modelcontextprotocol/$name/package.json")
  entry="node_modules/@modelcontextprotocol/$name/dist/index.js"
  extra='[]' env='{}' state=false
  case $name in
    # every path allowed; Landlock lets a copy read its items and write its workspace
    # only. The workspace is named too: the server resolves a new file's path by
    # listing each directory from the longest allowed directory that holds it,
    # and a copy may list nothing outside its workspace.
    server-filesystem) extra='["/","/run/germline/state"]' state=true ;;
    server-memory) env='{"MEMORY_FILE_PATH":"${GL_STATE_DIR}/memory.jsonl"}' state=true ;;
  esac
  # server-postgres will not start without a database URL; it lists its
  # tools without connecting
  probe_args=$(jq -r '.[]' <<<"$extra")
  [ "$name" = server-postgres ] && probe_args=postgresql://postgres@postgres:5432/postgres
  # shellcheck disable=SC2086
  if [ "$name" = server-redis ]; then
    # it connects to Redis before it answers anything: its four tools, as
    # its 2025.4.25 source registers them (the discovery check compares)
    fns='["set","get","delete","list"]'
  else
    fns=$(tools "$name" "$d" $probe_args | jq -R . | jq -cs .)
  fi
  [ "$(jq length <<<"$fns")" -gt 0 ] || { echo "npm-releases: $name listed no tools" >&2; exit 1; }
  jq -n --arg name "$name" --arg version "$version" --arg node "$node" --arg entry "$entry" \
    --argjson extra "$extra" --argjson env "$env" --argjson state "$state" --argjson fns "$fns" '
    # the path arguments of server-filesystem name files: labelled items
    def items($t): {read_file:["path"], read_text_file:["path"], read_media_file:["path"],
                    read_multiple_files:["paths"], get_file_info:["path"]}[$t];
    # and the path arguments of its directory tools name directories
    def dirs($t): {list_directory:["path"], list_directory_with_sizes:["path"],
                   directory_tree:["path"], search_files:["path"]}[$t];
    # server-github calls https://api.github.com, written into its code
    def dests: if $name == "server-github" then ["api.github.com"]
               elif $name == "server-postgres" then ["postgres:5432"]
               elif $name == "server-redis" then ["redis:6379"] else [] end;
    {name:$name, version:$version, runtime:"exec", protocol:"mcp-stdio",
     entry:([$node, $entry] + $extra),
     functions:(reduce $fns[] as $t ({}; .[$t] = ({destinations:dests} +
       (if $name == "server-filesystem" and items($t) then {items_from_args:items($t)} else {} end) +
       (if $name == "server-filesystem" and dirs($t) then {dirs_from_args:dirs($t)} else {} end)))),
     read_paths:[], deterministic:false}
    + (if $env != {} then {env:$env} else {} end)
    + (if $state then {state_dir:true} else {} end)' >"$d/manifest.json"
  echo "npm-releases: $d ($version, $(jq length <<<"$fns") tools)" >&2
done
