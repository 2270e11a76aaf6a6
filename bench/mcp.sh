#!/usr/bin/env bash
# bench/mcp.sh (make bench): per-call P50/P99 of a Python MCP server
# (tests/fixtures/mcp/notes, 5 tools) under germline (gl-run --serve-mcp,
# with and without --pool),
# as one persistent unprotected process, and as a fresh
# `bwrap --unshare-all` launch per call (Debian bubblewrap), in one run;
# prints the ratios (issue 7 "Benchmark": germline MCP calls at least 10x
# faster than the bwrap launch). Figures are kept in docs/mcp.md.
#   GL_BENCH_MCP_CALLS (per tool, default 100), GL_BENCH_MCP_BWRAP (100),
#   GL_BENCH_MCP_GAP_MS (20: the untimed pause before each call)
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
command -v bwrap >/dev/null || { echo "bench/mcp.sh: bwrap missing (scripts/deps.sh: bubblewrap)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-mcp.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GL_HOME="$work/home" HOME="$work"
unset GL_PASSPHRASE
(
  cd "$work"
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  gl-sign init repo --root-key root --targets-key tk >/dev/null
  gl-verify pin repo >/dev/null
  gl-sign pack "$root/tests/fixtures/mcp/notes" notes.tar.gz >/dev/null
  gl-sign add repo --key tk notes.tar.gz >/dev/null
)
sha=$(cd "$work" && gl-verify install repo notes.tar.gz | jq -er .release.sha256)
jq -n --arg d "$work/data/**" '{clearances:{agent:[]},labels:{($d):[]}}' >"$work/policy.json"
/usr/bin/python3 "$root/tests/fixtures/mcp/calls.py" notes "$work/data" \
  --cheap "${GL_BENCH_MCP_CALLS:-100}" | shuf --random-source=<(yes) >"$work/calls.jsonl"
echo "machine: $(nproc) CPUs, $(uname -sr), $(/usr/bin/python3 -V 2>&1), $(bwrap --version)"
echo "server: tests/fixtures/mcp/notes, $(wc -l <"$work/calls.jsonl") calls over its 5 tools"
/usr/bin/python3 "$root/bench/mcp/driver.py" --gl-run "$root/bin/gl-run" \
  --release "$GL_HOME/releases/$sha" --sha "$sha" --policy "$work/policy.json" \
  --calls "$work/calls.jsonl" --data "$work/data" --bwrap-calls "${GL_BENCH_MCP_BWRAP:-100}" \
  --gap-ms "${GL_BENCH_MCP_GAP_MS:-20}"
