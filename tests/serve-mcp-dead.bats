#!/usr/bin/env bats
# gl-run --serve-mcp with a server that never answers, and with one that
# exits at once (docs/mcp.md "A server that does not start"): every request
# gets an answer — a named error for what needs the server, a result for
# what does not — and the host lives on to the end of its input.
#
# A long-running host is shared by every request of an agent: before this
# suite, the second tools/list after a discovery deadline freed an
# uninitialised cleanup variable (a goto past it in lib/broker/mcp.c) and
# aborted gl-run with every request in flight. The sanitizer pass runs the
# same requests under ASan and UBSan.
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":[]},"routes":{},"labels":{}}' >"$POLICY"
}

teardown() { release_cleanup; }

# requests — initialize, tools/list three times, a tools/call, ping; each
# after a pause, so that every request arrives while the host is busy with
# (or done with) the one before.
requests() {
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  for i in 2 3 4; do
    echo "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/list\"}"
    sleep 0.2
  done
  echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{}}}'
  echo '{"jsonrpc":"2.0","id":"p","method":"ping"}'
}

# serve_dead FIXTURE DETAIL — the requests to a host serving FIXTURE; every
# one answered in order, the lists and the call with a germline_check error
# whose detail starts with DETAIL, ping with a result; gl-run exits 1 (a
# refused request, SPEC §2), not by a signal.
serve_dead() {
  REL=$(install_release "$FIX/mcp/$1")
  run --separate-stderr bash -c 'requests | gl-run --serve-mcp --release "$1" --policy "$2" --deadline 1' \
    _ "$REL" "$POLICY"
  echo "status $status" "$output" "$stderr"
  [ "$status" -eq 1 ]
  [ "$(echo "$output" | wc -l)" -eq 6 ]
  echo "$output" | jq -se --arg d "$2" '
    (.[0] | .id == 1 and .result._meta.germline.serverInfo.name == "germline")
    and ([.[1:5][] | .id] == [2,3,4,5])
    and all(.[1:5][]; .error.code == -32000 and .error.data.error == "germline_check"
                      and (.error.data.detail | startswith($d)))
    and (.[5] | .id == "p" and .result == {})'
}

@test "serve-mcp-dead: a server that never answers: three lists, a call and ping answered, the host alive" {
  export -f requests
  serve_dead mute "discovery copy: deadline: the server did not list its tools within 1 s"
}

@test "serve-mcp-dead: a server that exits at once: three lists, a call and ping answered, the host alive" {
  export -f requests
  serve_dead gone "discovery copy: the server ended before it listed its tools"
}
