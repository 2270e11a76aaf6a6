#!/usr/bin/env bats
# host:port destinations (SPEC §5; docs/streams.md): an exec copy's TCP
# connection to a declared host:port is relayed by the broker as a byte
# stream (lib/broker/stream.c, hosts/exec/stream.c): the serving copy's is
# delivered to a real server on loopback (tests/fixtures/tcp_sink.py, a
# line protocol that speaks first; PostgreSQL 15, started here), every
# other copy's is compared with it turn by turn and answered from the
# record. @modelcontextprotocol/server-postgres and server-redis run
# unmodified against Debian's PostgreSQL 15 and redis-server, also when
# they require a password: the broker authenticates with the operator's
# secret (lib/broker/stream_auth.c) and masks its value in what comes back.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup_file() {
  command -v node >/dev/null || return 0
  GL_NPM_SERVERS="server-postgres server-redis" "$GL_ROOT/scripts/npm-releases.sh" \
    "$BATS_FILE_TMPDIR/rel" 2>/dev/null
}

setup() {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D/pub" "$D/hr"
  SALARY=SALARY-$RANDOM$RANDOM
  echo "$SALARY" >"$D/hr/salary.csv"
  echo "public note" >"$D/pub/note.txt"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg pub "$D/pub/**" --arg hr "$D/hr/**" \
    '{clearances:{agent:["hr"]},routes:{},labels:{($pub):[],($hr):["hr"]}}' >"$POLICY"
  tcp_sink echo.example:7070
  REL=$(install_release "$FIX/exec/stream")
}

teardown() {
  kill_pids
  "$FIX/pg_stop.sh" "$BATS_TEST_TMPDIR/pg"
  release_cleanup
}

# tcp_sink DEST — tests/fixtures/tcp_sink.py, routed as DEST in $POLICY; its
# lines logged in $BATS_TEST_TMPDIR/sink.log
tcp_sink() {
  : >"$BATS_TEST_TMPDIR/sink.log"
  "$SYSPY" "$FIX/tcp_sink.py" --port-file "$BATS_TEST_TMPDIR/sink.port" \
    --log "$BATS_TEST_TMPDIR/sink.log" </dev/null >/dev/null 2>&1 3>&- &
  echo $! >>"$PIDS"
  route_port "$1" "$BATS_TEST_TMPDIR/sink.port"
}

# talk PATH [MODE] — one call of talk, its lines "one" and "two" and the
# file at PATH, for agent
talk() {
  jq -cn --arg r "$REL" --arg p "$1" '{id:"t1",release:$r,function:"talk",
    args:{lines:["one","two"],path:$p},items:[],consumers:["agent"]}' |
    gl-plan --policy "$POLICY" | gl-run --policy "$POLICY" ${2:+--mode "$2"}
}

@test "streams: a public file: the serving copy's stream is delivered once, the agent's copy gets the same answers from the record" {
  run --separate-stderr talk "$D/pub/note.txt"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e '.ok and .triggers == [] and .results[0].ok' >/dev/null || { echo "$output"; false; }
  echo "$output" | jq -e '.results[0].value == {got:["HELLO","A:one","A:two","A:public note","CIAO"],error:null}' ||
    { echo "$output"; false; }
  # one connection, each line once
  [ "$(jq -sc 'map(.line)' "$BATS_TEST_TMPDIR/sink.log")" = '["one","two","public note","BYE"]' ] ||
    { cat "$BATS_TEST_TMPDIR/sink.log"; false; }
  echo "$output" | jq -e '.delivered == [{destination:"echo.example:7070",requests:4}]'
}

@test "streams: an hr line in the agent's copy is a trigger; the destination never gets it (off: --mode sigpin sends it)" {
  run --separate-stderr talk "$D/hr/salary.csv" sigpin
  grep -qF "$SALARY" "$BATS_TEST_TMPDIR/sink.log"
  : >"$BATS_TEST_TMPDIR/sink.log"
  run --separate-stderr talk "$D/hr/salary.csv"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  ! grep -qF "$SALARY" "$BATS_TEST_TMPDIR/sink.log"
  # the serving copy could not read the file: "(none)"
  [ "$(jq -sc 'map(.line)' "$BATS_TEST_TMPDIR/sink.log")" = '["one","two","(none)","BYE"]' ]
  echo "$output" | jq -e '.triggers | length == 1 and .[0].destination == "echo.example:7070"
    and .[0].kind == "mismatch" and .[0].position == 1' || { echo "$output"; false; }
  # the agent's copy got nothing past the difference: its connection closed
  echo "$output" | jq -e '.results[0].value.got == ["HELLO","A:one","A:two"]' || { echo "$output"; false; }
}

@test "streams: a copy's turns count as its requests (1024, what a witness holds): 1100 lines end it with protocol" {
  run --separate-stderr bash -c 'jq -cn --arg r "$1" "{id:\"b\",release:\$r,function:\"talk\",
    args:{lines:[range(1100) | tostring]},items:[],consumers:[\"agent\"]}" |
    gl-plan --policy "$2" | gl-run --policy "$2"' _ "$REL" "$POLICY"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e '.results[0].error == "protocol"
    and (.results[0].detail | contains("more than 1024 requests and stream turns"))' ||
    { echo "$output"; false; }
}

@test "streams: the witness of a stream trigger verifies by replay: the replay copy is cut at the record's turns (item_witness, probe differs, control not)" {
  jq -cn --arg r "$REL" --arg p "$D/hr/salary.csv" '{id:"t1",release:$r,function:"talk",
    args:{lines:["one","two"],path:$p},items:[],consumers:["agent"]}' |
    gl-plan --policy "$POLICY" | gl-run --policy "$POLICY" --witness-items >run 2>run.err
  jq -e '.triggers | length == 1' run || { cat run run.err; false; }
  run --separate-stderr gl-replay --tries 2 --policy "$POLICY" <run
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e '.destination == "echo.example:7070" and .outcome == "item_witness"
    and .event == "verified" and .probe_differs == 2 and .control_differs == 0' ||
    { echo "$output $stderr"; false; }
  # the replay delivered nothing: the sink saw the serving copy's one connection
  [ "$(jq -s 'map(.conn) | unique | length' "$BATS_TEST_TMPDIR/sink.log")" -eq 1 ]
}

@test "streams: server-postgres, unmodified, queries a real PostgreSQL 15 through the relay (the operator's database URL names postgres:5432)" {
  pg_peer # the operator's route and argument (policy config: public, data-free)
  PG=$(install_release "$BATS_FILE_TMPDIR/rel/server-postgres")
  run --separate-stderr bash -c 'jq -cn --arg r "$1" "{id:\"q\",release:\$r,function:\"query\",
    args:{sql:\"SELECT name FROM staff WHERE team = \u0027eng\u0027 ORDER BY name\"},items:[],consumers:[\"agent\"]}" |
    gl-plan --policy "$2" | gl-run --policy "$2"' _ "$PG" "$POLICY"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e '.ok and .results[0].ok and .triggers == []
    and (.results[0].value.content[0].text | fromjson) == [{name:"ada"},{name:"grace"}]
    and .delivered[0].destination == "postgres:5432"' || { echo "$output $stderr"; false; }
}

@test "streams: server-redis, unmodified, sets and gets a key in a real redis-server (it connects as it starts: the discovery copy reaches the public redis:6379)" {
  redis_peer redis://redis:6379
  RD=$(install_release "$BATS_FILE_TMPDIR/rel/server-redis")
  run --separate-stderr bash -c '{
    jq -cn --arg r "$1" "{id:\"s\",release:\$r,function:\"set\",args:{key:\"k1\",value:\"v1\"},items:[],consumers:[\"agent\"]}"
    jq -cn --arg r "$1" "{id:\"g\",release:\$r,function:\"get\",args:{key:\"k1\"},items:[],consumers:[\"agent\"]}"
  } | gl-plan --policy "$2" | gl-run --policy "$2"' _ "$RD" "$POLICY"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -se '.[0].results[0].value.content[0].text == "Successfully set key: k1"
    and .[1].results[0].value.content[0].text == "v1" and all(.[]; .triggers == [])' ||
    { echo "$output $stderr"; false; }
  [ "$(redis-cli -p "$REDIS_PORT" get k1)" = v1 ]
}

# auth_secret RELEASE NAME DEST PROTOCOL VALUE — the operator's secret NAME
# in $POLICY, with which the broker authenticates DEST (in: auth:PROTOCOL;
# docs/streams.md "Passwords")
auth_secret() {
  jq --arg r "$1" --arg n "$2" --arg d "$3" --arg p "auth:$4" --arg v "$5" \
    '.config[$r].secrets[$n] = {value:$v, to:[$d], in:[$p]}' "$POLICY" >"$POLICY.new" &&
    mv "$POLICY.new" "$POLICY"
}

@test "streams: server-postgres against a PostgreSQL that requires SCRAM-SHA-256: the broker answers it with the operator's secret (without it: the client has no password; a wrong one: the server's refusal)" {
  export PG_PASSWORD=pg-$RANDOM$RANDOM$RANDOM
  pg_peer
  PG=$(install_release "$BATS_FILE_TMPDIR/rel/server-postgres")
  query() {
    jq -cn --arg r "$PG" '{id:"q",release:$r,function:"query",
      args:{sql:"SELECT count(*)::int AS n FROM staff"},items:[],consumers:["agent"]}' |
      gl-plan --policy "$POLICY" | gl-run --policy "$POLICY"
  }
  run --separate-stderr query
  [[ "$output" == *"password must be a string"* ]] || { echo "$output $stderr"; false; }
  auth_secret server-postgres PGPASSWORD postgres:5432 postgres wrong-password
  run --separate-stderr query
  [[ "$output" == *"password authentication failed"* ]] || { echo "$output $stderr"; false; }
  auth_secret server-postgres PGPASSWORD postgres:5432 postgres "$PG_PASSWORD"
  run --separate-stderr query
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e '.results[0].ok and .triggers == []
    and (.results[0].value.content[0].text | fromjson) == [{n:3}]' || { echo "$output $stderr"; false; }
  [[ "$output" != *"$PG_PASSWORD"* ]] || { echo "$output"; false; }
}

@test "streams: server-redis against a redis-server that requires a password: the broker authenticates with the operator's secret, the server is given none (without the secret: NOAUTH)" {
  REDIS_PASS=pw-$RANDOM$RANDOM$RANDOM
  redis_peer redis://redis:6379
  RD=$(install_release "$BATS_FILE_TMPDIR/rel/server-redis")
  calls() {
    jq -cn --arg r "$RD" '{id:"s",release:$r,function:"set",args:{key:"k2",value:"v2"},items:[],consumers:["agent"]}' |
      gl-plan --policy "$POLICY" | gl-run --policy "$POLICY"
  }
  run --separate-stderr calls
  [[ "$output" == *NOAUTH* ]] || { echo "$output $stderr"; false; }
  auth_secret server-redis REDIS_PASSWORD redis:6379 redis "$REDIS_PASS"
  run --separate-stderr calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e '.results[0].value.content[0].text == "Successfully set key: k2"
    and .triggers == []' || { echo "$output $stderr"; false; }
  [ "$(REDISCLI_AUTH=$REDIS_PASS redis-cli --no-auth-warning -p "$REDIS_PORT" get k2)" = v2 ]
  # the value is nowhere in what germline wrote
  ! grep -rqF "$REDIS_PASS" "$GL_HOME" <(echo "$output")
}

@test "streams: a password's value never reaches a copy from its stream: CONFIG GET requirepass comes back masked (off: the test build's GL_TEST_SECRETS_NO_REDACT)" {
  REDIS_PASS=pw-$RANDOM$RANDOM$RANDOM
  redis_peer redis://redis:6379
  # talk's destination routed to the same Redis; the operator's secret
  # authenticates it
  echo "$REDIS_PORT" >"$BATS_TEST_TMPDIR/redis.port"
  route_port echo.example:7070 "$BATS_TEST_TMPDIR/redis.port"
  auth_secret exec-stream PW echo.example:7070 redis "$REDIS_PASS"
  call() {
    jq -cn --arg r "$REL" '{id:"c",release:$r,function:"talk",
      args:{lines:["CONFIG GET requirepass","QUIT"],first:true},items:[],consumers:["agent"]}' |
      gl-plan --policy "$POLICY" | "$@" --policy "$POLICY"
  }
  run --separate-stderr call env GL_TEST_SECRETS_NO_REDACT=1 "$GL_ROOT/build/testing/bin/gl-run"
  [[ "$output" == *"$REDIS_PASS"* ]] || { echo "$output $stderr"; false; }
  run --separate-stderr call gl-run
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e --arg m "${REDIS_PASS//?/*}" '.results[0].value.got | index("requirepass\r") as $i
    | .[$i + 2] == ($m + "\r")' || { echo "$output $stderr"; false; }
  [[ "$output" != *"$REDIS_PASS"* ]] || { echo "$output"; false; }
}

@test "streams: the discovery copy reaches a public stream destination only: a server's greeting in its instructions is public (off: the test build's GL_TEST_DISCOVERY_STREAMS_ANY hands an hr destination's to a public client)" {
  SM=$(install_release "$FIX/exec/stream-mcp")
  init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  # public: the discovery copy reads the greeting, every client may see it
  run --separate-stderr gl-run --serve-mcp --release "$SM" --policy "$POLICY" --consumer pub <<<"$init"
  [ "$(jq -r .result.instructions <<<"$output")" = "greeting: HELLO" ] || { echo "$output $stderr"; false; }
  # echo.example cleared for hr: its connection is refused, nothing of it
  # reaches the public client
  jq '.clearances["echo.example"] = ["hr"]' "$POLICY" >"$POLICY.new" && mv "$POLICY.new" "$POLICY"
  run --separate-stderr env GL_TEST_DISCOVERY_STREAMS_ANY=1 "$GL_ROOT/build/testing/bin/gl-run" \
    --serve-mcp --release "$SM" --policy "$POLICY" --consumer pub <<<"$init"
  [ "$(jq -r .result.instructions <<<"$output")" = "greeting: HELLO" ] || { echo "$output $stderr"; false; }
  run --separate-stderr gl-run --serve-mcp --release "$SM" --policy "$POLICY" --consumer pub <<<"$init"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [[ "$(jq -r .result.instructions <<<"$output")" != *HELLO* ]] || { echo "$output"; false; }
}
