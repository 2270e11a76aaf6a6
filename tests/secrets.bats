#!/usr/bin/env bats
# The operator's configuration and secrets (SPEC §4 "config"; docs/secrets.md;
# lib/release/config.c, lib/broker/secrets.c). A release's public args and env
# are part of its germline; a secret never is: the germline and every copy
# hold the placeholder GERMLINE_SECRET_API_TOKEN, and the broker puts the
# value in its place only in what it sends to the secret's "to", and takes it
# out of every reply.
#
# Real releases (tests/fixtures/releases/sec-dump, tests/fixtures/exec/secret)
# signed and installed through the real chain, real sinks on loopback
# (tests/fixtures/sink.py) as api.example (echoing each request back) and
# sink.example. The releases use the token as they should and then send their
# environment, /proc/self/environ, argv and the echoed reply to sink.example.
# Each mechanism is shown off (the test build's gl-run: GL_TEST_SECRETS_EVERYWHERE=1
# puts the value in every destination's requests, GL_TEST_SECRETS_NO_REDACT=1
# leaves it in replies) and on (bin/gl-run as shipped).
# unprivileged: yes — gl-run works in a user namespace
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  T=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
  TGLRUN=$GL_ROOT/build/testing/bin/gl-run
  TOKEN="tok-$RANDOM$RANDOM-$RANDOM$RANDOM"
  SALARY="SALARY-$RANDOM$RANDOM"
  mkdir -p "$T/data/hr"
  echo "$SALARY" >"$T/data/hr/salary.csv"
  POLICY=$T/policy.json
  jq -n --arg d "$T/data" --arg t "$TOKEN" '{clearances:{agent:["hr"]},
    labels:{($d + "/hr/**"):["hr"], ($d + "/**"):[]},
    config:{"sec-dump":{args:["--region","eu west"],env:{LOG_LEVEL:"debug"},
                        secrets:{API_TOKEN:{value:$t,to:["api.example"]}}},
            "exec-secret":{args:["--region","eu"],env:{LOG_LEVEL:"warn"},
                        secrets:{API_TOKEN:{value:$t,to:["api.example"]}}},
            "exec-tls":{secrets:{API_TOKEN:{value:$t,to:["api.example"]}}}}}' >"$POLICY"
  sink api.example echo
  sink sink.example
}

teardown() { kill_pids; release_cleanup; }

# use SHA — one call of the release's use for agent
use() { envelope c1 "$1" use; }

# in_log NAME TEXT — the sink NAME received TEXT anywhere (path, headers, body)
in_log() {
  jq -r '.path, (.headers[] | .[1])' "$BATS_TEST_TMPDIR/$1.log" | grep -qF -- "$2" ||
    bodies "$1" | grep -qF -- "$2"
}

# stolen — the token reached sink.example, or the agent's record
stolen() { in_log sink.example "$TOKEN" || grep -qF -- "$TOKEN" <<<"$output"; }

# off_then_on SWITCH SHA — the release's use under the test build with
# SWITCH=1 (the token is stolen), the sinks' logs emptied, then under
# bin/gl-run as shipped; $output is the second run's
off_then_on() {
  run env "$1=1" "$TGLRUN" --policy "$POLICY" <<<"$(use "$2")"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  stolen
  : >"$BATS_TEST_TMPDIR/api.example.log"
  : >"$BATS_TEST_TMPDIR/sink.example.log"
  run gl-run --policy "$POLICY" <<<"$(use "$2")"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "a secret reaches its bound destination only: sink.example gets the token with the binding off, the placeholder with it on" {
  local rel
  rel=$(install_release "$FIX/releases/sec-dump")
  # off: the value in every destination's requests; then on
  off_then_on GL_TEST_SECRETS_EVERYWHERE "$rel"
  json '.ok and .results[0].ok'
  ! stolen
  # api.example got the value, in the header and (percent-encoded) the query
  jq -e --arg t "$TOKEN" 'select(.path == "/user?key=" + $t) |
    .headers | any(.[0] == "Authorization" and .[1] == "Bearer " + $t)' \
    "$BATS_TEST_TMPDIR/api.example.log" >/dev/null
  # and was asked for bytes a search can see into
  jq -e '.headers | any(.[0] == "Accept-Encoding" and .[1] == "identity")' \
    "$BATS_TEST_TMPDIR/api.example.log" >/dev/null
  # what the copy had, and sent on, is the placeholder, germline and copy alike
  in_log sink.example '"API_TOKEN": "GERMLINE_SECRET_API_TOKEN"'
  in_log sink.example '"at_import": "GERMLINE_SECRET_API_TOKEN"'
  json '.results[0].value.token == "GERMLINE_SECRET_API_TOKEN"'
  # the public configuration: the release's sys.argv[1:] and environment
  json '.results[0].value.args == ["--region", "eu west"] and .results[0].value.level == "debug"'
  # nothing germline keeps holds the value
  ! grep -rqF -- "$TOKEN" "$GL_HOME"
}

@test "a bound destination that echoes the token back: the copy gets it with redaction off, the placeholder with it on" {
  local rel
  rel=$(install_release "$FIX/releases/sec-dump")
  off_then_on GL_TEST_SECRETS_NO_REDACT "$rel"
  ! stolen
  # the echo came back with the placeholder where the value was
  json '.results[0].value.echo | fromjson | .headers |
    any(.[0] == "Authorization" and .[1] == "Bearer GERMLINE_SECRET_API_TOKEN")'
}

@test "an encoded reply to a request that carried a secret is refused, not searched" {
  local rel
  rel=$(install_release "$FIX/releases/sec-dump")
  kill_pids
  : >"$PIDS"
  rm -f "$BATS_TEST_TMPDIR"/*.port
  sink api.example echo-gzip
  sink sink.example
  run --separate-stderr gl-run --policy "$POLICY" <<<"$(use "$rel")"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # the copy got a 502 (marked secret-refused): its urlopen raised
  json '.results[0].ok == false and (.results[0].detail | contains("502"))'
  [[ "$stderr" == *"request carrying a secret is encoded (gzip)"* ]]
  ! stolen
}

@test "an exec server: its args and env from the operator, the token only in what reaches api.example" {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  local rel
  rel=$(install_release "$FIX/exec/secret")
  off_then_on GL_TEST_SECRETS_EVERYWHERE "$rel"
  ! stolen
  jq -e --arg t "$TOKEN" '.headers | any(.[0] == "Authorization" and .[1] == "Bearer " + $t)' \
    "$BATS_TEST_TMPDIR/api.example.log" >/dev/null
  # the operator's env wins over the manifest's for a name both set
  json '.results[0].value | .args == ["--region", "eu"] and .level == "warn"
    and .token == "GERMLINE_SECRET_API_TOKEN"'
  in_log sink.example '"API_TOKEN":"GERMLINE_SECRET_API_TOKEN"'
}

@test "a witness records the public configuration, never a value; replay launches with it (and without it cannot reproduce)" {
  local rel w
  rel=$(install_release "$FIX/releases/sec-dump")
  jq -cn --arg r "$rel" --arg p "$T/data/hr/salary.csv" '{id:"p1",release:$r,function:"post",
    args:{doc:$p},items:[],consumers:["agent"]}' >call
  jq '.config["sec-dump"].env.MODE = "leak"' "$POLICY" >p2 && mv p2 "$POLICY"
  run gl-run --policy "$POLICY" <call
  # sink.example is public: its copy held no salary, the agent's did
  json '.triggers | length == 1'
  ! in_log sink.example "$SALARY"
  w=$(printf '%s\n' "$output" | jq -r '.triggers[0].witness')
  jq -e '.config == {args:["--region","eu west"],env:{LOG_LEVEL:"debug",MODE:"leak"},
    secrets:{API_TOKEN:{to:["api.example"],in:["url","headers","body"]}}}' "$w" >/dev/null
  ! grep -qF -- "$TOKEN" "$w"
  # the auditor needs no policy: the germline is launched as the witness says
  mkdir -p "items$T/data/hr"
  cp "$T/data/hr/salary.csv" "items$T/data/hr/"
  run --separate-stderr gl-replay --tries 2 --items items "$w"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "item_witness" and .event == "verified"'
  # off: the same witness without its configuration (resealed with the host's
  # key): the replayed release never posts, and the trigger is not reproduced
  "$SYSPY" "$FIX/witness_seal.py" "$w" noconf.json --key "$GL_HOME/keys/witness.key" \
    --set '{"config":null}'
  run --separate-stderr gl-replay --tries 2 --items items noconf.json
  json '.event != "verified"'
  # a witness that carries a secret's value is refused, whoever signed it
  "$SYSPY" "$FIX/witness_seal.py" "$w" valued.json --key "$GL_HOME/keys/witness.key" \
    --set "$(jq -c --arg t "$TOKEN" '{config: (.config | .secrets.API_TOKEN.value = $t)}' "$w")"
  run --separate-stderr gl-replay --tries 2 --items items valued.json
  json '.error == "bad_witness" and (.detail | contains("present in a public configuration"))'
}

@test "a configuration that could leak or break is refused by name" {
  local bad
  for bad in \
    '{"x":{"secrets":{"T":{"value":"short","to":["api.example"]}}}}' \
    '{"x":{"secrets":{"T":{"value":"a-long-enough\nvalue","to":["api.example"]}}}}' \
    '{"x":{"secrets":{"T":{"value":"GERMLINE_SECRET_U-long","to":["api.example"]}}}}' \
    '{"x":{"secrets":{"T":{"value":"long-enough-value","to":[]}}}}' \
    '{"x":{"secrets":{"T":{"value":"long-enough-value","to":["API.example"]}}}}' \
    '{"x":{"secrets":{"T":{"value":"long-enough-value","to":["a.example"],"in":["cookie"]}}}}' \
    '{"x":{"secrets":{"PATH":{"value":"long-enough-value","to":["a.example"]}}}}' \
    '{"x":{"env":{"T":"1"},"secrets":{"T":{"value":"long-enough-value","to":["a.example"]}}}}' \
    '{"x":{"env":{"LD_PRELOAD":"/tmp/x.so"}}}' \
    '{"x":{"env":{"NODE_OPTIONS":"--inspect"}}}' \
    '{"x":{"args":["a",1]}}' \
    '{"x":{"argv":[]}}' \
    '{"x":{"env":{"NODE_EXTRA_CA_CERTS":"/tmp/mine.pem"}}}' \
    '{"x":{"secrets":{"T":{"value":"long-enough-value","to":["db.example:5432"]}}}}' \
    '{"x":{"secrets":{"T":{"value":"long-enough-value","to":["a.example"],"in":["auth:redis"]}}}}' \
    '{"x":{"secrets":{"T":{"value":"long-enough-value","to":["r.example:6379"],"in":["auth:redis","body"]}}}}' \
    '{"x":{"secrets":{"T":{"value":"long-enough-value","to":["r.example:6379"],"in":["auth:redis"]},"U":{"value":"long-enough-value2","to":["r.example:6379"],"in":["auth:postgres"]}}}}'; do
    jq --argjson c "$bad" '.config = $c' "$POLICY" >bad.json
    run gl-run --policy bad.json </dev/null
    [ "$status" -eq 2 ] || { echo "$bad: $output"; false; }
    [[ "$output" == *config.* ]] || { echo "$bad: $output"; false; }
  done
}

@test "HTTPS upstream: a destination whose CA only the policy's ca_file names is reached with it and not without; its name must be the URL's; the secret goes over TLS" {
  local rel
  rel=$(install_release "$FIX/releases/sec-dump")
  cert ca "germline test CA" self
  cert api api.example ca
  cert other other.example ca
  tls_sink api.example api.pem
  # off: no ca_file: the system store does not know the test CA
  run --separate-stderr gl-run --policy "$POLICY" <<<"$(envelope t1 "$rel" tls)"
  json '.results[0].value == {status: 502, germline: "unreachable"}'
  [ ! -s "$BATS_TEST_TMPDIR/api.example.log" ]
  # on: the CA in ca_file; the token in the header, over TLS
  jq --arg c "$PWD/ca.pem" '.ca_file = $c' "$POLICY" >p2 && mv p2 "$POLICY"
  run --separate-stderr gl-run --policy "$POLICY" <<<"$(envelope t1 "$rel" tls)"
  json '.results[0].value.status == 200'
  json '.results[0].value.body | fromjson | .headers |
    any(.[0] == "Authorization" and .[1] == "Bearer GERMLINE_SECRET_API_TOKEN")'
  jq -e --arg t "$TOKEN" 'select(.path == "/tls") | .headers |
    any(.[0] == "Authorization" and .[1] == "Bearer " + $t)' \
    "$BATS_TEST_TMPDIR/api.example.log" >/dev/null
  # a certificate the same CA issued for another name, served at api.example's
  # route: refused (the name is checked against the URL's host)
  kill_pids
  : >"$PIDS"
  tls_sink api.example other.pem
  run --separate-stderr gl-run --policy "$POLICY" <<<"$(envelope t1 "$rel" tls)"
  json '.results[0].value == {status: 502, germline: "unreachable"}'
  [[ "$stderr" == *"api.example"* ]]
  [ ! -s "$BATS_TEST_TMPDIR/api.example.log" ]
}

@test "a ca_file that is not a readable PEM certificate refuses the policy by name" {
  local f
  printf 'not a certificate\n' >none.pem
  printf -- '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' >broken.pem
  for f in none.pem broken.pem missing.pem relative; do
    if [ "$f" = relative ]; then
      jq '.ca_file = "ca.pem"' "$POLICY" >bad.json
    else
      jq --arg c "$PWD/$f" '.ca_file = $c' "$POLICY" >bad.json
    fi
    run gl-run --policy bad.json </dev/null
    [ "$status" -eq 2 ] || { echo "$f: $output"; false; }
    [[ "$output" == *ca_file:* ]] || { echo "$f: $output"; false; }
  done
}

# tls_pair — a test CA in the policy's ca_file, and api.example (echo) and
# sink.example served over HTTPS with certificates it issued
tls_pair() {
  kill_pids
  : >"$PIDS"
  cert ca "germline test CA" self
  cert api api.example ca
  cert sink sink.example ca
  tls_sink api.example api.pem
  tls_sink sink.example sink.pem
  jq --arg c "$PWD/ca.pem" '.ca_file = $c' "$POLICY" >p2 && mv p2 "$POLICY"
}

@test "an exec server's own https:// ends at its copy's relay and is delivered over TLS: the token only to api.example (binding off, then on)" {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  local rel
  rel=$(install_release "$FIX/exec/tls")
  tls_pair
  off_then_on GL_TEST_SECRETS_EVERYWHERE "$rel"
  ! stolen
  # Node verified the relay (NODE_EXTRA_CA_CERTS, the session's authority) and
  # api.example got the token over TLS; the echo the copy read has the placeholder
  json '.results[0].value | .status == 200 and .dump == 200 and .token == "GERMLINE_SECRET_API_TOKEN"'
  json '.results[0].value.echo | fromjson | .headers |
    any(.[0] == "Authorization" and .[1] == "Bearer GERMLINE_SECRET_API_TOKEN")'
  jq -e --arg t "$TOKEN" 'select(.path == "/user") | .headers |
    any(.[0] == "Authorization" and .[1] == "Bearer " + $t)' \
    "$BATS_TEST_TMPDIR/api.example.log" >/dev/null
  in_log sink.example '"API_TOKEN":"GERMLINE_SECRET_API_TOKEN"'
  in_log sink.example '"NODE_EXTRA_CA_CERTS":"/etc/germline/ca.pem"'
  json '.delivered | length == 2'
  # what the copy trusts is a certificate, never a key; no key is left under
  # GL_HOME but germline's own (keys/)
  json '.results[0].value.ca | contains("BEGIN CERTIFICATE") and (contains("PRIVATE") | not)'
  ! grep -rl "PRIVATE KEY" --exclude-dir=keys "$GL_HOME"
}

@test "a hostile exec release's TLS: an undeclared name or another Host is denied and counted, verification refuses an undeclared name, raw TCP reaches nothing" {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  local rel
  rel=$(install_release "$FIX/exec/tls")
  tls_pair
  run --separate-stderr gl-run --policy "$POLICY" <<<"$(envelope h1 "$rel" hostile)"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  # neither gets an answer: the relay ends a denied request's connection
  json '.results[0].value | [.undeclared, .other_host] | all(startswith("HTTP/") | not)'
  # the relay's certificate names the declared hosts only
  json '.results[0].value.verified_undeclared == "ERR_TLS_CERT_ALTNAME_INVALID"'
  # Landlock allows TCP connect to the relay's two ports only
  json '.results[0].value.tcp == "EACCES"'
  # both counted: evil.example (undeclared), api.example (its Host named sink.example)
  json '([.denied[] | .destination] | sort == ["api.example", "evil.example"]) and .delivered == []'
  [ ! -s "$BATS_TEST_TMPDIR/api.example.log" ]
  [ ! -s "$BATS_TEST_TMPDIR/sink.example.log" ]
}
