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
. "$(dirname "$0")/lib/setup.bash"
bench_setup mcp
command -v bwrap >/dev/null || { echo "bench/mcp.sh: bwrap missing (scripts/deps.sh: bubblewrap)" >&2; exit 2; }
bench_publisher
sha=$(bench_install "$root/tests/fixtures/mcp/notes")
jq -n --arg d "$work/data/**" '{clearances:{agent:[]},labels:{($d):[]}}' >"$work/policy.json"
/usr/bin/python3 "$root/tests/fixtures/mcp/calls.py" notes "$work/data" \
  --cheap "${GL_BENCH_MCP_CALLS:-100}" | shuf --random-source=<(yes) >"$work/calls.jsonl"
echo "machine: $(nproc) CPUs, $(uname -sr), $(/usr/bin/python3 -V 2>&1), $(bwrap --version)"
echo "server: tests/fixtures/mcp/notes, $(wc -l <"$work/calls.jsonl") calls over its 5 tools"
/usr/bin/python3 "$root/bench/mcp/driver.py" --gl-run "$root/bin/gl-run" \
  --release "$GL_HOME/releases/$sha" --sha "$sha" --policy "$work/policy.json" \
  --calls "$work/calls.jsonl" --data "$work/data" --bwrap-calls "${GL_BENCH_MCP_BWRAP:-100}" \
  --gap-ms "${GL_BENCH_MCP_GAP_MS:-20}"
