#!/usr/bin/env bash
# bench/node-fork.sh (make bench): what the Node germline gives, and its ceiling
# (issue 33; docs/performance.md "Node servers: a fork of a warm process").
# The official servers (scripts/npm-releases.sh), in one run:
#   fresh  `node ENTRY` started per call (initialize + the call)
#   fork   one warm Node process, forked per call by a Node-API addon
#          (bench/node-fork/fork.c), the child's stdio the call's socket
#   confined  the Node germline itself (docs/exec.md "The Node germline"):
#          tests/unit/germline_drive.c launches it under its namespaces,
#          minimal root, Landlock and seccomp, warm, and forks a confined,
#          checked copy per call; from the fork request to the call's answer,
#          the copy killed after; with the germline's launch (what the first
#          call of a session waits for), the copy's CPU time (its main thread)
#          and memory (PSS, private) as it answered, and the idle
#          germline's PSS. No broker yet (the call is sent on the
#          copy's channel as MCP; with_exec_host: as a call message, the copy
#          split in two and gl-exec-host adopting the server, as gl-run will
#          send it); server-filesystem reads its file through
#          read_paths, standing in for the view it will be given.
# fresh and fork are not germline: no sandbox, no broker. The ratio
# fresh/fork is the ceiling of the Node-germline route against the per-call
# start every exec call pays today (bench/mcp-exec.sh); fresh/confined is
# what the germline keeps of it. GL_BENCH_FORK_CALLS (default 20).
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
drive=$root/build/tests/germline_drive
# confined NAME TOOL_JSON [READ_PATH] — P50 and P90 of the Node germline's calls
confined() {
  local name=$1 tool=$2 rp=${3:-} d=$work/rel/$1
  if [ ! -x "$drive" ] || [ ! -e "$root/build/host/germline.node" ]; then
    echo '{"confined":"not run: make units (build/tests/germline_drive) and Node'"'"'s headers"}'
    return
  fi
  jq --arg r "$rp" 'if $r == "" then . else .read_paths = [$r] end' "$d/manifest.json" >"$d/m.json"
  mv "$d/m.json" "$d/manifest.json"
  jq -cn '{jsonrpc:"2.0",id:1,method:"initialize",params:{protocolVersion:"2025-06-18",
    capabilities:{},clientInfo:{name:"bench",version:"1"}}}' >"$work/req"
  jq -cn '{jsonrpc:"2.0",method:"notifications/initialized"}' >>"$work/req"
  jq -cn --argjson t "$tool" '{jsonrpc:"2.0",id:2,method:"tools/call",params:$t}' >>"$work/req"
  local acts=()
  for _ in $(seq "$calls"); do acts+=("mcp=$work/req"); done
  local fn args proto=()
  fn=$(jq -r .name <<<"$tool")
  args=$(jq -c '.arguments // {}' <<<"$tool")
  for _ in $(seq "$calls"); do proto+=("$fn=$args"); done
  # the same calls as call messages, gl-exec-host adopting each copy's server
  local pms
  pms=$("$drive" --warm --exec-host --state-dir /tmp/ws "$d" "${proto[@]}" |
    jq -r 'select(.action == "call") | if .ok then .ms else error("protocol: \(.)") end' |
    python3 -c 'import sys; v = sorted(float(x) for x in sys.stdin); print(round(v[len(v) // 2], 1))')
  "$drive" --warm "$d" proc=smaps_rollup "${acts[@]}" | python3 -c 'import json, sys
rows = [json.loads(l) for l in sys.stdin]
calls = [r for r in rows if r.get("action") == "mcp"]
bad = [r for r in rows if r.get("ok") is False]
if bad or not calls:
    sys.exit("confined: %s" % json.dumps(bad[:1] or rows[:1]))
text = next(r["text"] for r in rows if r.get("action") == "proc")
launch = next(r["ms"] for r in rows if r.get("action") == "launch")
germ = int(text.split("Pss:")[1].split("kB")[0])
def med(k, q=0.5):
    v = sorted(r[k] for r in calls)
    return round(v[min(len(v) - 1, int(len(v) * q))], 1)
print(json.dumps({"launch_ms": round(launch, 1), "confined_p50_ms": med("ms"), "confined_p90_ms": med("ms", 0.9),
    "with_exec_host_p50_ms": float(sys.argv[1]),
    "copy_cpu_p50_ms": med("copy_cpu_ms"), "copy_pss_mib": round(med("copy_pss_kb") / 1024, 1),
    "copy_private_mib": round(med("copy_private_kb") / 1024, 1),
    "germline_idle_pss_mib": round(germ / 1024, 1)}))' "$pms"
}
run() { # NAME TOOL_JSON [ARG…]
  local name=$1 tool=$2
  shift 2
  local entry=$work/rel/$name/node_modules/@modelcontextprotocol/$name/dist/index.js
  printf '%-18s ' "$name"
  (cd "$work/rel/$name" && MEMORY_FILE_PATH=$work/memory.jsonl \
    python3 "$root/bench/node-fork/drive.py" "$work/fork.node" "$entry" "$calls" "$tool" -- "$@")
  printf '%-18s ' "$name"
  confined "$name" "$tool" "$([ "$name" = server-filesystem ] && echo "$work/data")"
}
run server-everything '{"name":"echo","arguments":{"message":"hi"}}'
run server-memory '{"name":"read_graph","arguments":{}}'
run server-filesystem "$(jq -cn --arg p "$work/data/doc.txt" '{name:"read_text_file",arguments:{path:$p}}')" "$work/data"
