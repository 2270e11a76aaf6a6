#!/usr/bin/env bash
# bench/node-fork.sh (make bench): what a Node germline could give at best
# (issue 33; docs/performance.md "Node servers: a fork of a warm process").
# The official servers (scripts/npm-releases.sh), unconfined, in one run:
#   fresh  `node ENTRY` started per call (initialize + the call)
#   fork   one warm Node process, forked per call by a Node-API addon
#          (bench/node-fork/fork.c), the child's stdio the call's socket
# Neither is germline: no sandbox, no broker. The ratio fresh/fork is the
# ceiling of the Node-germline route against the per-call start every exec
# call pays today (bench/mcp-exec.sh). GL_BENCH_FORK_CALLS (default 20).
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
calls=${GL_BENCH_FORK_CALLS:-20}
command -v node >/dev/null || { echo "node-fork: node missing (scripts/deps.sh); skipped"; exit 0; }
[ -f /usr/include/node/node_api.h ] ||
  { echo "node-fork: Node's headers (/usr/include/node) missing; skipped"; exit 0; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-fork.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -std=gnu11 -Wall -Wextra -Werror -shared -fPIC -I/usr/include/node \
  -o "$work/fork.node" "$root/bench/node-fork/fork.c"
GL_NPM_SERVERS="server-everything server-memory server-filesystem" \
  "$root/scripts/npm-releases.sh" "$work/rel" 2>/dev/null
mkdir -p "$work/data"
echo "a line" >"$work/data/doc.txt"
run() { # NAME TOOL_JSON [ARG…]
  local name=$1 tool=$2
  shift 2
  local entry=$work/rel/$name/node_modules/@modelcontextprotocol/$name/dist/index.js
  printf '%-18s ' "$name"
  (cd "$work/rel/$name" && MEMORY_FILE_PATH=$work/memory.jsonl \
    python3 "$root/bench/node-fork/drive.py" "$work/fork.node" "$entry" "$calls" "$tool" -- "$@")
}
run server-everything '{"name":"echo","arguments":{"message":"hi"}}'
run server-memory '{"name":"read_graph","arguments":{}}'
run server-filesystem "$(jq -cn --arg p "$work/data/doc.txt" '{name:"read_text_file",arguments:{path:$p}}')" "$work/data"
