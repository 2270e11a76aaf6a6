#!/usr/bin/env bats
# gl-run --pool (paper §VI: "An optional pool keeps pre-forked, data-free
# copies ready"; docs/gl-run.md "--pool"; docs/performance.md "The pool").
# A pooled copy is forked, confined and checked after the previous copy has
# ended with its descendants, before its call arrives, and is the next copy
# to run; an MCP server's start and handshake run in it before the call
# (docs/mcp.md "Before the call"). What must not change: every call is a
# fresh copy (nothing of one call reaches the next), the twin inputs of a
# call are the same in all its copies, and answers are those without the
# pool. The mechanism off (--mode sigpin: one persistent process) shows
# what these tests would catch.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg d "$D/**" '{clearances:{agent:["finance","hr"],"ocr.example":["finance"]},
    routes:{},labels:{($d):[]}}' >"$POLICY"
  CLIENT=$FIX/mcp/client.py
}

teardown() {
  kill_started
  release_cleanup
}

# A notes server whose import draws a token and whose tool `bump` counts
# the calls its process has served (the memory a pooled copy must not keep).
bump_release() {
  mkdir -p "$BATS_TEST_TMPDIR/rel"
  cp -r "$FIX/mcp/notes" "$BATS_TEST_TMPDIR/rel/bump"
  cat "$FIX/mcp/bump_tail.py" >>"$BATS_TEST_TMPDIR/rel/bump/notes_server.py"
  jq '.functions.bump = {"destinations":[]}' "$FIX/mcp/notes/manifest.json" \
    >"$BATS_TEST_TMPDIR/rel/bump/manifest.json"
  install_release "$BATS_TEST_TMPDIR/rel/bump"
}

@test "--pool: every call is a fresh copy; nothing one call left in memory reaches the next" {
  REL=$(bump_release)
  for i in 1 2 3 4 5 6; do echo '{"name":"bump","arguments":{}}'; done >calls.jsonl
  run "$SYSPY" "$CLIENT" -- gl-run --pool --serve-mcp --release "$REL" --policy "$POLICY" <calls.jsonl
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  echo "$output" | jq -se 'map(.result.structuredContent) | (map(.count) == [1,1,1,1,1,1])
    and (map(.token) | unique | length == 1)'
  # Mechanism off: one persistent process keeps its memory across calls.
  run "$SYSPY" "$CLIENT" -- gl-run --serve-mcp --release "$REL" --policy "$POLICY" --mode sigpin <calls.jsonl
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  echo "$output" | jq -se 'map(.result.structuredContent.count) == [1,2,3,4,5,6]'
}

@test "--pool: the same answers as without it (notes server, 100 calls over its 5 tools)" {
  REL=$(install_release "$FIX/mcp/notes")
  "$SYSPY" "$FIX/mcp/calls.py" notes "$D" --cheap 20 >calls.jsonl
  [ "$(wc -l <calls.jsonl)" -eq 100 ]
  "$SYSPY" "$CLIENT" -- gl-run --serve-mcp --release "$REL" --policy "$POLICY" <calls.jsonl >plain.out
  "$SYSPY" "$CLIENT" -- gl-run --pool --serve-mcp --release "$REL" --policy "$POLICY" <calls.jsonl >pool.out
  [ "$(wc -l <pool.out)" -eq 100 ]
  jq -se 'map(has("result")) | all' pool.out
  diff plain.out pool.out
}

@test "--pool: a call's two copies (one pooled, one forked on demand) get the same twin inputs: 0 triggers" {
  echo '{"clearances":{"agent":["finance","hr"],"ocr.example":["finance"]}}' >"$POLICY"
  start_sink
  REL=$(install_release "$FIX/releases/annotate")
  for i in $(seq 10); do
    envelope "t$i" "$REL" annotate "$(jq -cn --arg inv "$(b64 "INVOICE $i")" --arg sal "$(b64 "alice,$RANDOM")" \
      '[{name:"invoice.pdf",label:["finance"],data:$inv},{name:"salary.csv",label:["hr"],data:$sal}]')" \
      '{"args":{"doc":"invoice.pdf"}}'
  done >calls.jsonl
  run --separate-stderr bash -c 'gl-plan --policy "$1" <"$2" | gl-run --pool --policy "$1" 3>&-' _ "$POLICY" calls.jsonl
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  printf '%s\n' "$output" >results.jsonl
  jq -se 'length == 10 and (map(.ok and .copies == 2 and .results[0].ok
    and .delivered == [{"destination":"ocr.example","requests":1}]) | all)' results.jsonl
  [ "$(jq -s '[.[].triggers // [] | length] | add' results.jsonl)" -eq 0 ]
  # Twins within a call, not constants across calls: each call its own nonce.
  [ "$(wc -l <"$SINK_LOG")" -eq 10 ]
  [ "$(jq -r '.body | @base64d | fromjson | .nonce.urandom' "$SINK_LOG" | sort -u | wc -l)" -eq 10 ]
}

@test "--pool: no copy outlives gl-run; --pool with a baseline mode is a usage error" {
  REL=$(bump_release)
  echo '{"name":"bump","arguments":{}}' >calls.jsonl
  run "$SYSPY" "$CLIENT" -- gl-run --pool --serve-mcp --release "$REL" --policy "$POLICY" <calls.jsonl
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  pid=$(echo "$output" | jq -r '.result.structuredContent.pid')
  [ -n "$pid" ]
  # the release's processes (germline, pooled copy) are gone once gl-run
  # has exited: none runs the release's tree any more
  sleep 0.2
  ! pgrep -f "$GL_HOME/releases/$REL" >/dev/null
  run gl-run --pool --mode sigpin --policy "$POLICY" </dev/null
  [ "$status" -eq 2 ]
  [[ "$output" == *"--pool goes with modes germline, nosplit and lazy"* ]]
}
