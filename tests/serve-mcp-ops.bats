#!/usr/bin/env bats
# gl-run --serve-mcp as an operator and an agent host meet it (issue 17;
# SPEC §11; docs/mcp.md): it fails fast, before its first message, naming
# what is wrong; it negotiates MCP 2025-11-25 and 2025-06-18; it checks
# tools/call arguments against the tool's inputSchema (-32602 naming the
# field); it honours notifications/cancelled (the copy is killed, no answer)
# and progress tokens; and it keeps an operator's log (--log) without item
# contents. The client is the official MCP TypeScript SDK (scripts/mcp-sdk.sh)
# or raw lines. Also gl-replay on bare trigger records (SPEC §7).
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup_file() {
  GL_MCP_SDK=$("$GL_ROOT/scripts/mcp-sdk.sh")
  export GL_MCP_SDK
}

setup() {
  run_setup
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D/pub" "$D/hr"
  SALARY="SALARY-$RANDOM$RANDOM"
  echo "$SALARY" >"$D/hr/salary.csv"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg pub "$D/pub/**" --arg hr "$D/hr/**" \
    '{clearances:{agent:["hr"]},routes:{},labels:{($pub):[],($hr):["hr"]}}' >"$POLICY"
  INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
}

teardown() { release_cleanup; }

# serve REL [flags…] — raw lines on stdin to gl-run --serve-mcp
serve() {
  local rel=$1
  shift
  run --separate-stderr gl-run --serve-mcp --release "$rel" --policy "$POLICY" "$@"
}

@test "--serve-mcp fails fast: an uninstalled release, a bad policy, a missing GL_HOME exit 2 before serving, the cause on stderr" {
  REL=$(install_release "$FIX/mcp/slow")
  NONE=$(printf '0%.0s' $(seq 64))
  # the release is not installed (no tree)
  serve "$NONE" <<<"$INIT"
  [ "$status" -eq 2 ] && [ -z "$output" ] # nothing was served
  [[ "$stderr" == *"gl-run: --serve-mcp: release $NONE is not installed: $GL_HOME/releases/$NONE: No such file or directory"* ]] || { echo "$stderr"; false; }
  # its tree without the verified install record gl-verify wrote
  mv "$GL_HOME/releases/$REL.json" "$BATS_TEST_TMPDIR/record.json"
  serve "$REL" <<<"$INIT"
  [ "$status" -eq 2 ] && [ -z "$output" ]
  [[ "$stderr" == *"no verified install record: $GL_HOME/releases/$REL.json"* ]] || { echo "$stderr"; false; }
  mv "$BATS_TEST_TMPDIR/record.json" "$GL_HOME/releases/$REL.json"
  # a policy that is not JSON, and one that is not there
  echo '{"clearances":' >"$BATS_TEST_TMPDIR/bad.json"
  run --separate-stderr gl-run --serve-mcp --release "$REL" --policy "$BATS_TEST_TMPDIR/bad.json" <<<"$INIT"
  [ "$status" -eq 2 ] && [ -z "$output" ]
  [[ "$stderr" == *"gl-run: policy $BATS_TEST_TMPDIR/bad.json: "* ]] || { echo "$stderr"; false; }
  run --separate-stderr gl-run --serve-mcp --release "$REL" --policy "$BATS_TEST_TMPDIR/nope.json" <<<"$INIT"
  [ "$status" -eq 2 ] && [ -z "$output" ]
  [[ "$stderr" == *"$BATS_TEST_TMPDIR/nope.json: No such file or directory"* ]] || { echo "$stderr"; false; }
  # GL_HOME missing, and GL_HOME without releases
  GL_HOME=$BATS_TEST_TMPDIR/nohome serve "$REL" <<<"$INIT"
  [ "$status" -eq 2 ] && [ -z "$output" ]
  [[ "$stderr" == *"gl-run: GL_HOME $BATS_TEST_TMPDIR/nohome: No such file or directory"* ]] || { echo "$stderr"; false; }
  mkdir "$BATS_TEST_TMPDIR/empty"
  GL_HOME=$BATS_TEST_TMPDIR/empty serve "$REL" <<<"$INIT"
  [ "$status" -eq 2 ] && [ -z "$output" ]
  [[ "$stderr" == *"holds no releases directory: $BATS_TEST_TMPDIR/empty/releases"* ]] || { echo "$stderr"; false; }
  # the same, all in order: it serves
  serve "$REL" <<<"$INIT"
  [ "$status" -eq 0 ] || { echo "$stderr"; false; }
  echo "$output" | jq -e '.id == 1 and .result._meta.germline.serverInfo.name == "germline"'
}

@test "initialize: the client's revision when it is one of the four, else the latest; none is -32602" {
  REL=$(install_release "$FIX/mcp/slow")
  serve "$REL" <<EOF
$INIT
{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"capabilities":{}}}
{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
EOF
  [ "$status" -eq 0 ] || { echo "$stderr"; false; }
  [ "$(echo "$output" | jq -c '[.id, (.result.protocolVersion // .error.code)]' | tr '\n' ' ')" = \
    '[1,"2025-11-25"] [2,"2025-06-18"] [3,"2024-11-05"] [4,-32602] [5,"2025-11-25"] ' ]
}

@test "SDK client: negotiates 2025-11-25, -32602 names the field, a cancelled 5 s call's copy is gone and unanswered, the next call answered" {
  REL=$(install_release "$FIX/mcp/slow")
  LOG=$BATS_TEST_TMPDIR/ops.log
  GL_LOG=$LOG GL_OPS_MARK="$GL_HOME/releases/$REL" run --separate-stderr node "$FIX/mcp/sdk_ops.mjs" \
    gl-run --serve-mcp --release "$REL" --policy "$POLICY"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq .
  echo "$output" | jq -e '.negotiated == "2025-11-25" and .sdkErrors == []'
  # wrong type, missing required, enum, a nested array item, an extra member
  echo "$output" | jq -e '[.errors[] | .code] == [-32602,-32602,-32602,-32602,-32602]
    and (.errors | all(.error == "bad_args"))'
  echo "$output" | jq -e '.errors[0].message | contains("arguments.text: expected string")'
  echo "$output" | jq -e '.errors[1].message | contains("arguments: missing required property \"text\"")'
  echo "$output" | jq -e '.errors[2].message | contains("arguments.mode: not one of")'
  echo "$output" | jq -e '.errors[3].message | contains("arguments.opts.tags[1]: expected string")'
  echo "$output" | jq -e '.errors[4].message | contains("arguments.extra: not allowed")'
  echo "$output" | jq -e '.valid.content[0].text == "HI"'
  # the sleeping copy ran (one process more), got progress, and was gone
  # after the cancellation: polled for at most 3 s, less than the 4 s its
  # sleep had left (the issue asks for 1 s; gone_ms is only reported)
  echo "$output" | jq -e '.during == .before + 1 and .after == .before and (.progress | length) >= 1'
  echo "# the cancelled copy was gone $(echo "$output" | jq .gone_ms) ms after notifications/cancelled" >&3
  echo "$output" | jq -e '.slow.error | contains("the test cancels")'
  # no answer of the cancelled request (id 8) came; the next one's did
  echo "$output" | jq -e '.answered_ids == [1,2,3,4,5,6,7,9] and .next.content[0].text == "after"'
  # stderr: one line per refusal, and the cancellation
  [ "$(grep -c '^gl-run: tools/call echo: refused: bad_args: arguments' <<<"$stderr")" -eq 5 ] || { echo "$stderr"; false; }
  # the cancellation said as such, naming the call (its envelope id and the
  # client's request id), never as the CPU bound its SIGKILL looks like
  grep -qE '^gl-run: tools/call sleep: cancelled by the client: cancelled: no answer sent \(call mcp-[0-9]+, request 8\)$' <<<"$stderr"
  grep -qx 'gl-run: copy 1 of 1: cancelled' <<<"$stderr"
  ! grep -E ': cpu$|copy failed' <<<"$stderr"
  jq -se 'map(select(.event == "cancelled")) | length == 1 and (.[0] | .request == 8
    and (.id | test("^mcp-[0-9]+$")) and .function == "sleep")' "$LOG"
  jq -se --arg id "$(jq -r 'select(.event == "cancelled") | .id' "$LOG")" '
    map(select(.id == $id and (.event == "limit" or .event == "copy_failed"))) | length == 1
    and .[0].event == "copy_failed" and .[0].error == "cancelled"' "$LOG"
  ! grep -E 'Sanitizer|runtime error' <<<"$stderr" # the sanitizer pass: threads, jv, the kill
}

@test "--log and GL_LOG: one JSON line per event (calls, refusals, copy failures), never an item's contents" {
  REL=$(install_release "$FIX/mcp/notes")
  LOG=$BATS_TEST_TMPDIR/ops.log
  jq -cn --arg s "$D/hr/salary.csv" '
    {jsonrpc:"2.0",id:1,method:"initialize",params:{protocolVersion:"2025-06-18",capabilities:{},clientInfo:{name:"t",version:"1"}}},
    {jsonrpc:"2.0",id:2,method:"tools/call",params:{name:"read_note",arguments:{path:$s}}},
    {jsonrpc:"2.0",id:3,method:"tools/call",params:{name:"read_note",arguments:{path:"/etc/hostname"}}},
    {jsonrpc:"2.0",id:4,method:"tools/call",params:{name:"word_count",arguments:{text:5}}}' >in.jsonl
  serve "$REL" --log "$LOG" <in.jsonl
  [ "$status" -eq 1 ] || { echo "$stderr"; false; } # two calls refused
  # the secret went to the client (cleared for hr), so it was there to leak
  echo "$output" | jq -se --arg S "$SALARY" '.[1].result.structuredContent.title == $S'
  # the same call as a JSON Lines envelope, the log from GL_LOG, appended
  jq -cn --arg r "$REL" --arg s "$D/hr/salary.csv" \
    '{id:"j1",release:$r,function:"read_note",args:{path:$s},items:[],consumers:["agent"]}' |
    gl-plan --policy "$POLICY" | GL_LOG=$LOG gl-run --policy "$POLICY" >run.out
  jq -e --arg S "$SALARY" '.results[0].value.structuredContent.title == $S' run.out
  cat "$LOG"
  jq -e . "$LOG" >/dev/null # every line is JSON
  jq -se --arg r "$REL" '
    (map(.event) | index("serve_start") != null and index("serve_end") != null)
    and ([.[] | select(.event == "call_end" and .function == "read_note" and .ok)] | length == 2
         and all(.release == $r and .copies == 1 and (.elapsed_ms | type) == "number"))
    and ([.[] | select(.event == "call_start")] | length == 2)
    and ([.[] | select(.event == "refusal") | .error] | sort == ["bad_args","unlabelled_path"])
    and all(.ts and .prog and .pid)' "$LOG"
  ! grep -q "$SALARY" "$LOG"
  ! grep -q "$(printf '%s\n' "$SALARY" | base64 -w0)" "$LOG"
  # stderr, the agent host's log of a stdio server: one line per refusal
  [[ "$stderr" == *"gl-run: tools/call read_note: refused: unlabelled_path"* ]] || { echo "$stderr"; false; }
  [[ "$stderr" == *"gl-run: tools/call word_count: refused: bad_args: arguments.text: expected string"* ]]
  [[ "$stderr" != *"$SALARY"* ]]
  # a log that cannot be opened is a usage error, before anything runs
  run --separate-stderr gl-run --policy "$POLICY" --log /nonexistent/dir/x.log </dev/null
  [ "$status" -eq 2 ] && [[ "$stderr" == *"--log /nonexistent/dir/x.log"* ]]
}

@test "--log: a copy stopped at its cpu bound is one limit event, the call's end another" {
  REL=$(install_release "$FIX/releases/limits-hog")
  jq -n '{clearances:{agent:[]},limits:{cpu_s:1}}' >"$POLICY"
  LOG=$BATS_TEST_TMPDIR/limits.log
  envelope c1 "$REL" spin '[]' '{"args":{"n":1000000000000}}' | gl-plan --policy "$POLICY" |
    gl-run --policy "$POLICY" --deadline 3600 --log "$LOG" >run.out || true
  jq -e '.results[0].error == "cpu"' run.out
  cat "$LOG"
  jq -se --arg r "$REL" '[.[] | select(.event == "limit")] == [.[] | select(.event == "limit")
      | select(.release == $r and .function == "spin" and .consumer == "agent" and .error == "cpu")]
    and ([.[] | select(.event == "limit")] | length == 1)
    and ([.[] | select(.event == "call_end")][0] | .ok and .copies == 1)' "$LOG"
}

# first_after_cancel BIN REL — BIN --serve-mcp as a coprocess: a 5 s sleep
# with a progress token; after its first notifications/progress (the copy
# runs), notifications/cancelled for it and a ping, then the end of input.
# Prints the progress line, then the ids of every answer that came after
# the cancellation, in order (the ping may pass the call at --jobs > 1).
first_after_cancel() {
  local bin=$1 rel=$2 line id= pid
  coproc GLR { exec "$bin" --serve-mcp --release "$rel" --policy "$POLICY" 2>>"$BATS_TEST_TMPDIR/err" 3>&-; }
  pid=$GLR_PID
  echo "$INIT" >&"${GLR[1]}"
  read -r -t 60 line <&"${GLR[0]}" # the initialize answer
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"seconds":5},"_meta":{"progressToken":"tok"}}}' >&"${GLR[1]}"
  read -r -t 60 line <&"${GLR[0]}"
  echo "$line"
  echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}' >&"${GLR[1]}"
  echo '{"jsonrpc":"2.0","id":3,"method":"ping"}' >&"${GLR[1]}"
  eval "exec ${GLR[1]}>&-"
  while read -r -t 60 line <&"${GLR[0]}"; do
    id+="$(jq -r '.id // empty' <<<"$line") "
  done
  wait "$pid" || true
  echo "$id" | tr -s ' ' | sed 's/ $//'
}

@test "mechanism off (test build): a wrong type reaches the server, a cancelled call is answered; on: -32602, no answer" {
  TBIN=$GL_ROOT/build/testing/bin/gl-run
  NOTES=$(install_release "$FIX/mcp/notes")
  SLOW=$(install_release "$FIX/mcp/slow")
  CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"word_count","arguments":{"text":5}}}'
  # off: the notes server gets {"text":5} and dies on it (the issue's report)
  GL_TEST_SCHEMA_OFF=1 run --separate-stderr "$TBIN" --serve-mcp --release "$NOTES" --policy "$POLICY" <<<"$INIT
$CALL"
  echo "$output" | sed -n 2p | jq -e '.error.data.error == "tool_error"' || { echo "$output"; false; }
  run --separate-stderr "$TBIN" --serve-mcp --release "$NOTES" --policy "$POLICY" <<<"$INIT
$CALL"
  echo "$output" | sed -n 2p | jq -e '.error.code == -32602 and .error.data.error == "bad_args"'
  # off: the cancelled call runs its 5 s and is answered
  GL_TEST_CANCEL_OFF=1 run first_after_cancel "$TBIN" "$SLOW"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  echo "$output" | head -1 | jq -e '.method == "notifications/progress" and .params.progressToken == "tok" and .params.progress == 1'
  [[ " $(echo "$output" | tail -1) " == *" 2 "* ]] || { echo "$output"; false; }
  # on: no answer for it; the ping is the next answer
  run first_after_cancel "$TBIN" "$SLOW"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  echo "$output" | head -1 | jq -e '.method == "notifications/progress"'
  [ "$(echo "$output" | tail -1)" = 3 ] || { echo "$output"; false; }
}
