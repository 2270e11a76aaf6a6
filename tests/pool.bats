#!/usr/bin/env bats
# gl-run --pool (paper §VI: "An optional pool keeps pre-forked, data-free
# copies ready"; docs/gl-run.md "--pool"; docs/performance.md "The pool").
# A pooled copy is forked, confined and checked after the previous copy has
# ended with its descendants, before its call arrives, and is the next copy
# to run; under "concurrency": "any" an MCP server's start and handshake
# run in it before the call (docs/mcp.md "Before the call"), under the
# default it is held before any release code until its call (the last
# test; GL_TEST_POOL_HOLD_OFF=1 its damage). What must not change: every call is a
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

# pool_beside GLRUN — gl-run --pool --jobs 1 (default "same-clearance"): a
# public call of release PA (pool-spin: its at-fork hook spins about a
# second in every copy that runs), then an hr call of release PB holding
# its copy 3 s: prints the CPU ticks PA's pooled copy (forked after the
# first call) had spent when PB's hr copy ended
pool_beside() {
  echo '{"clearances":{"hrbot":["hr"],"agent":[]},"routes":{}}' >same.json
  rm -f fifo && mkfifo fifo
  "$1" --policy same.json --pool --jobs 1 <fifo >o 2>e 3>&- &
  local p=$! i ia ib cb ca ticks=0
  exec 4>fifo
  jq -cn --arg r "$PA" '{id:"a",release:$r,function:"quick",args:{},items:[],consumers:["agent"]}' |
    gl-plan --policy same.json >&4
  jq -cn --arg r "$PB" --arg s "$(b64 7)" '{id:"b",release:$r,function:"hold",args:{s:3},
    items:[{name:"salary.csv",label:["hr"],data:$s}],consumers:["hrbot"]}' |
    gl-plan --policy same.json >&4
  # PB's germline (the second init) up and its hr copy running (two python3)
  for i in $(seq 400); do
    ib=$(pgrep -n -P "$p" gl-init) && ia=$(pgrep -o -P "$p" gl-init) && [ "$ia" != "$ib" ] &&
      [ "$(pgrep -P "$ib" python3 | wc -l)" -ge 2 ] && break
    sleep 0.05
  done
  cb=$(pgrep -n -P "$ib" python3)
  ca=$(pgrep -n -P "$ia" python3) # PA's pooled copy, the newest of its init
  while [ -d "/proc/$cb" ]; do
    ticks=$(awk '{ print $14 + $15 }' "/proc/$ca/stat" 2>/dev/null || echo "$ticks")
    sleep 0.1
  done
  exec 4>&-
  wait "$p" || { cat o e >&2; return 1; }
  jq -se 'length == 2 and all(.ok)' o >/dev/null || { cat o e >&2; return 1; }
  echo "$ticks"
}

@test "--pool: a pooled copy is held before any release code until its call (off: its at-fork hook runs beside another release's hr copy)" {
  [ -x "$GL_ROOT/build/testing/bin/gl-run" ] || skip "build/testing/bin/gl-run is not built (make units)"
  cd "$BATS_TEST_TMPDIR"
  PA=$(install_release "$FIX/releases/pool-spin")
  PB=$(install_release "$FIX/releases/uid-sigq")
  GL_TEST_POOL_HOLD_OFF=1 run pool_beside "$GL_ROOT/build/testing/bin/gl-run"
  echo "off: $output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" -ge 30 ]
  run pool_beside gl-run
  echo "on: $output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" -le 5 ]
}
