#!/usr/bin/env bats
# gl-run --serve-mcp: gl-run as an MCP server on stdio (issue 7 item 5;
# SPEC §11; docs/mcp.md). JSON-RPC conformance with raw lines (lib/json/jsonrpc.c:
# parse errors, invalid requests, unknown methods, notifications, bounded
# lines), and a real MCP client — the official TypeScript SDK from npm
# (scripts/mcp-sdk.sh), run by node — driving it against the Python MCP
# servers of tests/fixtures/mcp: same results as from the server itself, and
# a hostile server that discloses nothing through it (while --mode sigpin,
# the mechanism off, does).
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup_file() {
  # The SDK is fetched once (npm registry), into build/npm/mcp-sdk.
  GL_MCP_SDK=$("$GL_ROOT/scripts/mcp-sdk.sh")
  export GL_MCP_SDK
}

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D/pub" "$D/hr"
  SALARY="SALARY-$RANDOM$RANDOM"
  printf 'Title one\nline two\n' >"$D/pub/a.txt"
  echo "$SALARY" >"$D/hr/salary.csv"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg pub "$D/pub/**" --arg hr "$D/hr/**" \
    '{clearances:{agent:["hr"],"ocr.example":[]},routes:{},labels:{($pub):[],($hr):["hr"]}}' >"$POLICY"
  SDK=$FIX/mcp/sdk_client.mjs
}

teardown() { kill_pids; release_cleanup; }


# serve REL [flags…] — raw lines on stdin to gl-run --serve-mcp; answers in $output
serve() {
  local rel=$1
  shift
  run --separate-stderr gl-run --serve-mcp --release "$rel" --policy "$POLICY" "$@"
}

@test "serve-mcp: initialize, ping, tools/list from the signed manifest, tools/call with its label" {
  REL=$(install_release "$FIX/mcp/notes")
  serve "$REL" <<EOF
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"p","method":"ping"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"$D/hr/salary.csv"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"Hello, World"}}}
EOF
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(echo "$output" | wc -l)" -eq 5 ] # the notification got no answer
  echo "$output" | jq -se --arg S "$SALARY" '
    (.[0] | .id == 1 and .result.protocolVersion == "2025-06-18"
       and .result.serverInfo == {name: "notes", version: "1.0.0"}
       and (.result.instructions | startswith("Team notes"))
       and .result._meta.germline.serverInfo.name == "germline" and .result._meta.germline.label == []
       and .result.capabilities.tools.listChanged == false)
    and (.[1] | .id == "p" and .result == {})
    and (.[2].result.tools | map(.name) == ["read_note","search_notes","slugify","summarize","word_count"])
    and (.[2].result.tools[0].inputSchema.required == ["path"])
    and (.[3].result.structuredContent.title == $S and .[3].result._meta.germline.label == ["hr"]
       and .[3].result._meta.germline.copies == 1)
    and (.[4].result.content[0].text == "hello-world" and .[4].result._meta.germline.label == [])'
}

@test "serve-mcp: every revision the SDK speaks is negotiated; an older session gets only its revision's fields" {
  REL=$(install_release "$FIX/mcp/notes")
  local rev
  for rev in 2025-11-25 2025-06-18 2025-03-26 2024-11-05 1999-01-01; do
    serve "$REL" <<EOF
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"$rev","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"$D/pub/a.txt"}}}
EOF
    [ "$status" -eq 0 ] || { echo "$rev: $output $stderr"; false; }
    echo "$output" | jq -se --arg r "$rev" '
      (.[0].result.protocolVersion == (if $r == "1999-01-01" then "2025-11-25" else $r end))
      and (.[1].result.tools | length == 5)
      and ((.[2].result | has("structuredContent")) == ($r >= "2025-06-18" or $r == "1999-01-01"))
      and (.[2].result.content[0].type == "text")' >/dev/null || { echo "$rev: $output"; false; }
  done
}

@test "SDK 1.12 (revision 2025-03-26) connects, lists and calls, and gets the server's own answers" {
  local old
  old=$("$GL_ROOT/scripts/mcp-sdk.sh" 1.12.0)
  REL=$(install_release "$FIX/mcp/notes")
  "$SYSPY" "$FIX/mcp/calls.py" notes "$D/pub" --cheap 2 --costly 1 >calls.jsonl
  GL_MCP_SDK=$old sdk "$REL" calls.jsonl
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -c '.result.content // .' >germline.out
  GL_MCP_SDK=$old run --separate-stderr node "$SDK" "$SYSPY" \
    "$FIX/mcp/notes/notes_server.py" <calls.jsonl
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -c '.result.content // .' >plain.out
  [ "$(wc -l <plain.out)" -eq "$(($(wc -l <calls.jsonl) + 1))" ]
  diff germline.out plain.out
}

@test "serve-mcp: what a server says of itself is passed on only typed and bounded" {
  cp -r "$FIX/mcp/notes" notes
  chmod -R u+w notes
  # serverInfo with a number for a name, 20 KB of instructions
  sed -i 's/^SERVER_INFO = .*/SERVER_INFO = {"name": 5, "version": "1"}/;
    s/^INSTRUCTIONS = .*/INSTRUCTIONS = "x" * 20000/' notes/notes_server.py
  REL=$(install_release "$PWD/notes")
  serve "$REL" <<EOF
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
EOF
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  # germline's own take their place
  json '.result.serverInfo.name == "germline" and (.result.instructions | startswith("Every tools/call"))'
}

@test "serve-mcp: the server's log messages and progress go to a consumer cleared for them, labelled, before the answer; never past the clearance (off: the test build's unlabelled _meta)" {
  REL=$(install_release "$FIX/mcp/notes")
  # the operator turns the server's logging on (policy config, docs/secrets.md)
  jq '.config["mcp-notes"].env.NOTES_LOG = "1"' "$POLICY" >p2 && mv p2 "$POLICY"
  local calls
  calls=$(cat <<EOF
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"$D/hr/salary.csv"},"_meta":{"progressToken":"p2"}}}
{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"$D/pub/a.txt"}}}
EOF
)
  # the agent, cleared for hr: both messages of the hr read, labelled hr, then
  # the answer; after setLevel info, the debug message is left out
  serve "$REL" <<<"$calls"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  # the server's progress for the client's token p2, before the answer:
  # increasing (its repeated 1 left out), the salary's labelled hr; a
  # notification of germline's own may come first on a slow machine, and
  # the server's values not above it are then left out
  echo "$output" | jq -se --arg S "$SALARY" '
    (map(.id) | index(2)) as $answer
    | [to_entries[] | select(.value.method == "notifications/progress")] as $p
    | ($p | length) >= 1 and all($p[]; .key < $answer and .value.params.progressToken == "p2")
    and ([$p[].value.params.progress] | . == (sort | unique))
    and ($p[-1].value.params | .progress == 2 and .message == "done" and .total == 2
         and ._meta.germline.label == ["hr"])
    and all($p[].value.params; (.message | startswith("running in germline")) or ._meta.germline.label == ["hr"])
    and all($p[].value.params; .message != "again")
    and (if $p[0].value.params.progress == 0 then $p[1].value.params.message == "read " + $S else true end)' \
    >/dev/null || { echo "$output"; false; }
  output=$(echo "$output" | jq -c 'select(.method != "notifications/progress")')
  echo "$output" | jq -se --arg S "$SALARY" '
    (.[0].result.capabilities.logging == {})
    and ([.[1], .[2]] | map(.method) == ["notifications/message", "notifications/message"])
    and (.[1].params | .level == "info" and .logger == "notes" and .data == "read_note: " + $S
         and ._meta.germline.label == ["hr"])
    and (.[2].params.level == "debug") and (.[3].id == 2 and .[3].result._meta.germline.label == ["hr"])
    and (.[4] | .id == 3 and .result == {})
    and (.[5].method == "notifications/message" and .[5].params.level == "info"
         and .[5].params._meta.germline.label == [])
    and (.[6].id == 4) and length == 7' >/dev/null || { echo "$output"; false; }
  # a public consumer served by one copy holding every item (nosplit: its
  # answer is labelled hr): not_cleared for the hr read, and no log of it
  serve "$REL" --consumer pub --mode nosplit <<<"$calls"
  [ "$status" -eq 1 ] || { echo "$output $stderr"; false; } # a refusal was answered
  [[ "$output" != *"$SALARY"* ]] || { echo "$output"; false; }
  echo "$output" | jq -se '(.[1] | .id == 2 and .error.data.error == "not_cleared")' >/dev/null
  # off: every field to every consumer: the log carries the salary to pub
  run --separate-stderr env GL_TEST_META_UNLABELLED=1 "$GL_ROOT/build/testing/bin/gl-run" \
    --serve-mcp --release "$REL" --policy "$POLICY" --consumer pub --mode nosplit <<<"$calls"
  [[ "$output" == *"read_note: $SALARY"* ]] || { echo "$output"; false; }
}

@test "serve-mcp: resources and prompts: public lists from the discovery copy; a read is a call labelled by its file, never past the clearance (off: the test build's unlabelled _meta)" {
  REL=$(install_release "$FIX/mcp/notes")
  local calls
  calls=$(cat <<EOF
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}
{"jsonrpc":"2.0","id":3,"method":"prompts/list"}
{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file://$D/hr/salary.csv"}}
{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"note-summary","arguments":{"topic":"budget"}}}
{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{}}
{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"file://$D/pub/a%20b.txt"}}
{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"file://$D/pub/%zz"}}
EOF
)
  printf 'spaced title\n' >"$D/pub/a b.txt"
  # the agent, cleared for hr: the read is the hr file's (an item by its
  # file:/// URI: items_from_args ["uri"], percent-decoded), the prompt public
  serve "$REL" <<<"$calls"
  [ "$status" -eq 1 ] || { echo "$output $stderr"; false; } # id 6 was refused
  echo "$output" | jq -se --arg S "$SALARY" '
    (.[0].result.capabilities | .resources.listChanged == false and .prompts.listChanged == false)
    and (.[1].result.resourceTemplates == [{uriTemplate: "file:///{path}", name: "note file",
                                           mimeType: "text/plain"}])
    and (.[2].result.prompts[0].name == "note-summary")
    and (.[3].result | (.contents[0].text | startswith($S)) and ._meta.germline.label == ["hr"])
    and (.[4].result | (.messages[0].content.text | contains("Budget notes"))
         and ._meta.germline.label == [])
    and (.[5] | .id == 6 and .error.code == -32602)
    and (.[6].result | .contents[0].text == "spaced title\n" and ._meta.germline.label == [])
    and (.[7] | .id == 8 and .error.data.error == "bad_args") and length == 8' >/dev/null ||
    { echo "$output"; false; }
  # a public consumer served by one copy holding every item (nosplit: the
  # read is labelled hr): not_cleared, and nothing of the file
  serve "$REL" --consumer pub --mode nosplit <<<"$calls"
  [[ "$output" != *"$SALARY"* ]] || { echo "$output"; false; }
  echo "$output" | jq -se '.[3] | .id == 4 and .error.data.error == "not_cleared"' >/dev/null
  # off: every field to every consumer: the read carries the salary to pub
  run --separate-stderr env GL_TEST_META_UNLABELLED=1 "$GL_ROOT/build/testing/bin/gl-run" \
    --serve-mcp --release "$REL" --policy "$POLICY" --consumer pub --mode nosplit <<<"$calls"
  [[ "$output" == *"$SALARY"* ]] || { echo "$output"; false; }
}

@test "serve-mcp: malformed input gets JSON-RPC errors and the stream goes on" {
  REL=$(install_release "$FIX/mcp/notes")
  # A 9 MiB line (above the 8 MiB cap), then more requests.
  {
    echo '{"jsonrpc":"2.0","id":1,"method":"ping"'
    echo '[{"jsonrpc":"2.0","id":2,"method":"ping"}]'
    echo '{"jsonrpc":"1.0","id":3,"method":"ping"}'
    echo '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}'
    echo '{"jsonrpc":"2.0","id":5,"method":"ping","extra":1}'
    echo '{"jsonrpc":"2.0","id":6,"method":"completion/complete"}'
    printf '\xff\xfe\n'
    head -c $((9 << 20)) /dev/zero | tr '\0' 'a'
    echo
    echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}'
    echo '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}'
    echo '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"/etc/passwd"}}}'
    echo '{"jsonrpc":"2.0","id":10,"result":{}}'
    echo '{"jsonrpc":"2.0","id":11,"method":"ping"}'
  } >"$BATS_TEST_TMPDIR/in"
  serve "$REL" <"$BATS_TEST_TMPDIR/in"
  [ "$status" -eq 1 ] # some call was refused
  echo "$output" | jq -c '[.id, .error.code, .error.data.error?]'
  [ "$(echo "$output" | jq -c '[.id, .error.code, (.error.data.error? // null)]' | tr '\n' ' ')" = \
    '[null,-32700,null] [null,-32600,null] [3,-32600,null] [null,-32600,null] [5,-32600,null] [6,-32601,null] [null,-32700,null] [null,-32600,null] [7,-32602,"unknown_function"] [8,-32602,null] [9,-32602,"unlabelled_path"] [11,null,null] ' ]
}

@test "serve-mcp: an answer above the 8 MiB line cap is an internal error, and the stream goes on" {
  REL=$(install_release "$FIX/mcp/notes")
  { echo title; head -c $((5 << 20)) /dev/zero | tr '\0' 'b'; echo; } >"$D/pub/big.txt"
  {
    jq -cn --arg p "$D/pub/big.txt" '{jsonrpc:"2.0",id:1,method:"tools/call",params:{name:"read_note",arguments:{path:$p}}}'
    echo '{"jsonrpc":"2.0","id":2,"method":"ping"}'
  } >"$BATS_TEST_TMPDIR/in"
  serve "$REL" <"$BATS_TEST_TMPDIR/in"
  [ "$status" -eq 0 ] || { echo "$stderr"; false; }
  [ "$(echo "$output" | jq -c '[.id, .error.code, .error.data.error]' | tr '\n' ' ')" = '[1,-32603,"too_long"] [2,null,null] ' ]
}

@test "serve-mcp: usage errors exit 2" {
  run gl-run --serve-mcp --policy "$POLICY"
  [ "$status" -eq 2 ]
  [[ "$output" == *"--serve-mcp needs --release"* ]]
  run gl-run --release abc --policy "$POLICY" </dev/null
  [ "$status" -eq 2 ]
}

# slug SPEC — initialize and one tools/call of slugify through --release SPEC
slug() {
  serve "$1" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"Hello, World"}}}
EOF
}

@test "serve-mcp: --release NAME or NAME@VERSION names an installed release, gl-verify list shows them; a name two versions fit is refused, never guessed" {
  REL=$(install_release "$FIX/mcp/notes")
  run --separate-stderr gl-verify list
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json -s --arg r "$REL" 'map(select(.name == "mcp-notes")) == [{"release":$r,"name":"mcp-notes",
    "version":"1.0.0","runtime":"python","protocol":"mcp-stdio","deterministic":true}]'
  local spec
  for spec in mcp-notes mcp-notes@1.0.0 "$REL"; do
    slug "$spec"
    [ "$status" -eq 0 ] || { echo "$spec: $output $stderr"; false; }
    json -s '.[1].result.isError != true and (.[1].result.content | length) > 0'
  done
  # a second version of the same name
  cp -r "$FIX/mcp/notes" notes2
  sed -i 's/"version":"1.0.0"/"version":"1.1.0"/' notes2/manifest.json
  REL2=$(install_release "$BATS_TEST_TMPDIR/notes2")
  run --separate-stderr gl-verify list --releases "$GL_HOME/releases"
  json -s '[.[] | select(.name == "mcp-notes") | .version] == ["1.0.0","1.1.0"]'
  run --separate-stderr gl-verify list --releases "$BATS_TEST_TMPDIR/none"
  [ "$status" -eq 0 ] && [ -z "$output" ]
  run --separate-stderr gl-verify list extra
  [ "$status" -eq 2 ]
  serve mcp-notes </dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"2 installed releases fit"*"1.0.0"*"1.1.0"* ]]
  slug mcp-notes@1.1.0
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  for spec in mcp-notes@2.0.0 no-such-release "mcp-notes@"; do
    serve "$spec" </dev/null
    [ "$status" -eq 2 ]
  done
  [[ "$stderr" == *"not a sha256, NAME or NAME@VERSION"* ]]
}

@test "serve-mcp: a tool that fails on a file its consumer's copy was not given is told so: the items withheld named in the answer and in _meta (an MCP server's isError result, a germline function's error), and in the record" {
  REL=$(install_release "$FIX/mcp/notes")
  jq '.clearances.pub = []' "$POLICY" >p2 && POLICY=$BATS_TEST_TMPDIR/p2
  serve "$REL" --consumer pub <<EOF
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"$D/hr/salary.csv"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"$D/pub/a.txt"}}}
EOF
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -se --arg p "$D/hr/salary.csv" '
    (.[1].result | .isError and ._meta.germline.withheld == [$p]
      and (.content | map(.text) | any(startswith("germline: withheld from this consumer'"'"'s copy") and contains($p))))
    and (.[2].result | (.isError | not) and (._meta.germline | has("withheld") | not))' ||
    { echo "$output"; false; }  # a germline-protocol function: its failure is a JSON-RPC error, whose
  # message names the items withheld; gl-run's record names them too
  WH=$(install_release "$FIX/releases/wh-read")
  serve "$WH" --consumer pub <<EOF
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"doc":"$D/hr/salary.csv"}}}
EOF
  [ "$status" -le 1 ] || { echo "$output $stderr"; false; } # 1: a call failed
  echo "$output" | jq -se --arg p "$D/hr/salary.csv" '.[1].error
    | (.message | contains("cannot read") and contains("; withheld from this consumer") and contains($p))
      and .data.error == "tool_error"' || { echo "$output"; false; }
  jq -cn --arg r "$WH" --arg p "$D/hr/salary.csv" \
    '{id:"c1",release:$r,function:"read",args:{doc:$p},consumers:["pub","agent"]}' |
    gl-plan --policy "$POLICY" | gl-run --policy "$POLICY" >rec.jsonl
  jq -e --arg p "$D/hr/salary.csv" '.results | (map(select(.consumer == "pub"))[0]
    | .ok == false and .withheld == [$p]) and (map(select(.consumer == "agent"))[0]
    | .ok and (has("withheld") | not))' rec.jsonl
}

# sdk REL CALLS_FILE [gl-run flags…] — the SDK client through gl-run --serve-mcp
sdk() {
  local rel=$1 calls=$2
  shift 2
  run --separate-stderr node "$SDK" gl-run --serve-mcp --release "$rel" --policy "$POLICY" "$@" <"$calls"
}

@test "SDK client: lists tools and gets the same results as from the server itself" {
  sink ocr.example
  for kind in notes ocr; do
    dir=$FIX/mcp/$kind
    REL=$(install_release "$dir")
    # 5 calls per tool in the plain pass, 2 in the others (tests/helpers.bash count)
    "$SYSPY" "$FIX/mcp/calls.py" "$kind" "$D/pub" --cheap "$(count 5 2)" --costly "$(count 5 2)" \
      >"$BATS_TEST_TMPDIR/calls.jsonl"
    sdk "$REL" "$BATS_TEST_TMPDIR/calls.jsonl"
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    echo "$output" | jq -cS 'del(.result._meta)' >"$BATS_TEST_TMPDIR/germline.out"
    echo "$output" | sed 1d | jq -e '.result._meta.germline.label == []' >/dev/null
    # The same client against the server itself (one process, no germline).
    http_proxy="http://$(jq -r '.routes["ocr.example"]' "$POLICY")" \
      run --separate-stderr node "$SDK" "$SYSPY" "$dir/$(jq -r .entry "$dir/manifest.json").py" \
      <"$BATS_TEST_TMPDIR/calls.jsonl"
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    # the server's own name and version, passed on: the first line too is the same
    echo "$output" | jq -cS . >"$BATS_TEST_TMPDIR/plain.out"
    n=$(($(wc -l <"$BATS_TEST_TMPDIR/calls.jsonl") + 1))
    [ "$(wc -l <"$BATS_TEST_TMPDIR/plain.out")" -eq "$n" ]
    diff "$BATS_TEST_TMPDIR/germline.out" "$BATS_TEST_TMPDIR/plain.out"
    echo "# SDK $kind: tools/list and $((n - 1)) tools/call answers identical" >&3
  done
}

@test "SDK client: a hostile server discloses no earlier file through gl-run (sigpin: it does)" {
  sink ocr.example
  REL=$(install_release "$FIX/mcp/ocr-hostile")
  # An hr file first (for the agent), then a public file to ocr.example: the
  # hidden code appends every file it read earlier to that request.
  jq -cn --arg s "$D/hr/salary.csv" --arg a "$D/pub/a.txt" \
    '{name:"stats",arguments:{path:$s}}, {name:"ocr",arguments:{path:$a}}' >"$BATS_TEST_TMPDIR/calls.jsonl"
  sdk "$REL" "$BATS_TEST_TMPDIR/calls.jsonl" --mode sigpin
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  run bodies ocr.example
  [[ "$output" == *"$SALARY"* ]] || { echo "sigpin did not disclose: $output"; false; }
  : >"$BATS_TEST_TMPDIR/ocr.example.log"
  sdk "$REL" "$BATS_TEST_TMPDIR/calls.jsonl"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | sed -n 2p | jq -e '.result._meta.germline.label == ["hr"]'
  echo "$output" | sed -n 3p | jq -e '.result._meta.germline.label == [] and
    .result._meta.germline.delivered == [{"destination":"ocr.example","requests":1}]'
  run bodies ocr.example
  [ "$output" = "$(printf 'Title one\nline two\n')" ] || { echo "disclosed: $output"; false; }
}

@test "SDK client: a refusal is an McpError carrying the SPEC §2 code" {
  mkdir -p "$BATS_TEST_TMPDIR/rel"
  cp -r "$FIX/mcp/notes" "$BATS_TEST_TMPDIR/rel/changed"
  jq '.functions.translate = {"destinations":[]}' "$FIX/mcp/notes/manifest.json" \
    >"$BATS_TEST_TMPDIR/rel/changed/manifest.json"
  REL=$(install_release "$FIX/mcp/notes")
  echo '{"name":"read_note","arguments":{"path":"/etc/hostname"}}' >"$BATS_TEST_TMPDIR/calls.jsonl"
  sdk "$REL" "$BATS_TEST_TMPDIR/calls.jsonl"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | sed -n 2p | jq -e '.error.code == -32602 and .error.data.error == "unlabelled_path"'
  # A release whose discovery changed: the client cannot even list its tools.
  REL=$(install_release "$BATS_TEST_TMPDIR/rel/changed")
  sdk "$REL" "$BATS_TEST_TMPDIR/calls.jsonl"
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"discovery changed after signing"* ]] || { echo "$stderr"; false; }
}

@test "SDK client: an official Node.js server from npm (runtime exec) through gl-run --serve-mcp" {
  # server-everything from the npm registry, unmodified, packed as a runtime
  # "exec" release by scripts/npm-releases.sh (docs/exec.md).
  GL_NPM_SERVERS=server-everything "$GL_ROOT/scripts/npm-releases.sh" "$BATS_TEST_TMPDIR/npm" 2>/dev/null
  dir=$BATS_TEST_TMPDIR/npm/server-everything
  REL=$(install_release "$dir")
  # 5 rounds of two calls in the plain pass, 2 in the others (each call is
  # a Node start per copy; tests/helpers.bash count)
  local n
  n=$(count 5 2)
  jq -cn --argjson n "$n" 'range($n) as $i | {name:"echo",arguments:{message:"m\($i)"}},
    {name:"get-sum",arguments:{a:$i,b:7}}' >"$BATS_TEST_TMPDIR/calls.jsonl"
  # its resources and prompts: the lists (the discovery copy's), a read and a
  # get (each through copies, as a tool call)
  jq -cn '{method:"resources/list",params:{}}, {method:"resources/templates/list",params:{}},
    {method:"prompts/list",params:{}},
    {method:"resources/read",params:{uri:"demo://resource/static/document/architecture.md"}},
    {method:"prompts/get",params:{name:"args-prompt",arguments:{city:"Paris"}}}' \
    >>"$BATS_TEST_TMPDIR/calls.jsonl"
  sdk "$REL" "$BATS_TEST_TMPDIR/calls.jsonl"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -cS 'del(.result._meta) | del(.server)' >"$BATS_TEST_TMPDIR/germline.out"
  echo "$output" | sed 1d | head -$((2 * n)) | jq -e '.result._meta.germline.copies == 1' >/dev/null
  # a read and a get are labelled calls; the lists are public
  echo "$output" | tail -2 | jq -e '.result._meta.germline.label == [] and
    .result._meta.germline.copies == 1' >/dev/null
  echo "$output" | tail -2 | head -1 | jq -e '.result.contents[0].text | contains("rchitecture")' \
    >/dev/null
  echo "$output" | tail -1 | jq -e '.result.messages[0].content.text | contains("Paris")' >/dev/null
  # The same client against the server itself, one process in its tree.
  mapfile -t argv < <(jq -r '.entry[]' "$dir/manifest.json")
  run --separate-stderr bash -c 'cd "$1" && shift && node "$@"' _ "$dir" "$SDK" "${argv[@]}" \
    <"$BATS_TEST_TMPDIR/calls.jsonl"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -cS 'del(.server)' >"$BATS_TEST_TMPDIR/plain.out"
  [ "$(wc -l <"$BATS_TEST_TMPDIR/plain.out")" -eq $((2 * n + 6)) ]
  diff "$BATS_TEST_TMPDIR/germline.out" "$BATS_TEST_TMPDIR/plain.out"
  grep -q "\"Echo: m$((n - 1))\"" "$BATS_TEST_TMPDIR/germline.out"
}

@test "SDK client: the npm-style hostile release (runtime exec) discloses nothing through gl-run (sigpin: it does)" {
  # tests/fixtures/exec/hostile: a hand-written Node MCP server whose
  # dependency fmt-helper appends every file the process read to each
  # request it publishes to sink.example.
  sink sink.example
  REL=$(install_release "$FIX/exec/hostile")
  jq -cn --arg s "$D/hr/salary.csv" --arg a "$D/pub/a.txt" \
    '{name:"read_docs",arguments:{paths:[$s]}}, {name:"publish",arguments:{paths:[$a]}}' \
    >"$BATS_TEST_TMPDIR/calls.jsonl"
  sdk "$REL" "$BATS_TEST_TMPDIR/calls.jsonl" --mode sigpin
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  run bodies sink.example
  [[ "$output" == *"$SALARY"* ]] || { echo "sigpin did not disclose: $output"; false; }
  : >"$BATS_TEST_TMPDIR/sink.example.log"
  sdk "$REL" "$BATS_TEST_TMPDIR/calls.jsonl"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | sed -n 2p | jq -e --arg S "$SALARY" '(.result.content[0].text | contains($S))
    and .result._meta.germline.label == ["hr"]'
  echo "$output" | sed -n 3p | jq -e '.result._meta.germline.label == []
    and .result._meta.germline.delivered == [{"destination":"sink.example","requests":1}]'
  run bodies sink.example
  [[ "$output" == *"Title one"* && "$output" != *"$SALARY"* ]] || { echo "disclosed: $output"; false; }
}
