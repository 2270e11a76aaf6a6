#!/usr/bin/env bash
# bench/mcp-exec.sh (make bench): per-call latency of the official Node.js MCP
# servers (scripts/npm-releases.sh) under runtime "exec" (docs/exec.md; issue
# 7 "Benchmark"), against, in the same run on the same machine:
#   persistent  one unprotected server process, one JSON-RPC client
#               (tests/fixtures/exec/mcp_ref.py): the floor
#   bwrap       a fresh `bwrap --unshare-all` launch of the server per call
#               (Debian's bubblewrap; initialize + the call): the goal line
#   exec        gl-plan | gl-run, one verified, confined copy per call
#               (the broker's elapsed_ms of each record)
# Prints P50/P99 per server and mode and the ratios exec/bwrap (goal: <= 1)
# and exec/persistent. GL_BENCH_EXEC_CALLS (default 40), GL_BENCH_EXEC_WARMUP (5).
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
calls=${GL_BENCH_EXEC_CALLS:-40}
warm=${GL_BENCH_EXEC_WARMUP:-5}
command -v node >/dev/null || { echo "mcp-exec: node missing (scripts/deps.sh); skipped"; exit 0; }
command -v bwrap >/dev/null || { echo "mcp-exec: bwrap missing (scripts/deps.sh); skipped"; exit 0; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-exec.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GL_HOME="$work/home" HOME="$work"
unset GL_PASSPHRASE
GL_NPM_SERVERS="server-everything server-memory server-filesystem" "$root/scripts/npm-releases.sh" "$work/rel" 2>/dev/null
(
  cd "$work"
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  gl-sign init repo --root-key root --targets-key tk >/dev/null
  gl-verify pin repo >/dev/null
  for s in server-everything server-memory server-filesystem; do
    gl-sign pack "rel/$s" "$s.tar.gz" >/dev/null
    gl-sign add repo --key tk "$s.tar.gz" >/dev/null
    gl-verify install repo "$s.tar.gz" | jq -er .release.sha256 >"$s.sha"
  done
)
data=$work/data
mkdir -p "$data"
printf 'a line\nanother\n' >"$data/doc.txt"
jq -n --arg d "$data" '{clearances:{agent:[]},labels:{($d + "/**"):[]}}' >"$work/policy.json"
echo "machine: $(nproc) CPUs, $(uname -sr), node $(node --version), $(bwrap --version)"
printf '%-18s %-11s %9s %9s\n' server mode P50_ms P99_ms

stats() { # FILE of ms values -> "p50 p99"
  /usr/bin/python3 -c '
import sys
v = sorted(float(x) for x in open(sys.argv[1]) if x.strip())
q = lambda p: v[min(len(v) - 1, int(round(p * (len(v) - 1))))]
print("%.1f %.1f" % (q(0.5), q(0.99)))' "$1"
}

for s in server-everything server-memory server-filesystem; do
  sha=$(cat "$work/$s.sha")
  rel=$GL_HOME/releases/$sha
  case $s in
    server-everything) fn=echo args='{"message":"hi"}' extra=() ;;
    server-memory) fn=read_graph args='{}' extra=() ;;
    server-filesystem) fn=read_text_file args="{\"path\":\"$data/doc.txt\"}" extra=(/) ;;
  esac
  jq -cn --arg f "$fn" --argjson a "$args" '{function:$f,args:$a}' >"$work/one"
  for _ in $(seq $((calls + warm))); do cat "$work/one"; done >"$work/calls"
  envs=(--env PATH=/usr/bin:/bin --env HOME=/nonexistent --env LANG=C.UTF-8
        --env "MEMORY_FILE_PATH=$work/mem-$s.jsonl")
  argv=(/usr/bin/node "node_modules/@modelcontextprotocol/$s/dist/index.js" "${extra[@]}")
  # persistent
  /usr/bin/python3 "$root/tests/fixtures/exec/mcp_ref.py" --cwd "$rel" "${envs[@]}" -- "${argv[@]}" \
    <"$work/calls" | tail -n +$((warm + 1)) | jq -r .ms >"$work/persistent.ms"
  # bwrap --unshare-all, a fresh launch per call
  /usr/bin/python3 "$root/tests/fixtures/exec/mcp_ref.py" --per-call --cwd "$rel" "${envs[@]}" \
    --wrap "bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $work $work --chdir $rel" \
    -- "${argv[@]}" <"$work/calls" | tail -n +$((warm + 1)) | jq -r .ms >"$work/bwrap.ms"
  # exec: gl-run
  jq -c --arg r "$sha" '{id:"b",release:$r,function:.function,args:.args,items:[],consumers:["agent"]}' \
    "$work/calls" | gl-plan --policy "$work/policy.json" | gl-run --policy "$work/policy.json" |
    tail -n +$((warm + 1)) | jq -r 'if .ok then .elapsed_ms else error("gl-run: \(.detail)") end' >"$work/exec.ms"
  read -r pp50 pp99 < <(stats "$work/persistent.ms")
  read -r bp50 bp99 < <(stats "$work/bwrap.ms")
  read -r ep50 ep99 < <(stats "$work/exec.ms")
  printf '%-18s %-11s %9s %9s\n' "$s" persistent "$pp50" "$pp99" "$s" bwrap "$bp50" "$bp99" \
    "$s" exec "$ep50" "$ep99"
  /usr/bin/python3 -c 'import sys; e,b,p,e9,b9=map(float,sys.argv[1:6]); print("%-18s exec/bwrap P50 %.2f  P99 %.2f   exec/persistent P50 %.1f   (goal exec/bwrap <= 1: %s)" % (sys.argv[6], e/b, e9/b9, e/p, "met" if e <= b else "NOT met"))' \
    "$ep50" "$bp50" "$pp50" "$ep99" "$bp99" "$s"
done
