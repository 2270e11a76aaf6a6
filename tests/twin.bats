#!/usr/bin/env bats
# Twin inputs (paper §IV-F, assumption A4, Table XIII; SPEC §10;
# docs/python-host.md "Twin inputs"). All copies of one call receive the same
# frozen clock and seed, from which the Python host derives time, datetime,
# the performance counters, random, os.urandom and uuid4: a flow-compliant
# tool that reads the clock and draws nonces sends the same request from
# every copy, so the tripwire stays silent. The control draws its nonce from
# the kernel through ctypes, outside the twin scope: its copies differ and
# the tripwire fires, which shows that the comparison is live.
#
# Each call holds an invoice (finance) and a salary sheet (hr) and is planned
# as two copies (paper Fig. 2c): {ocr.example} with the invoice, then {agent}
# with both, whose request to ocr.example is compared with the delivered one.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody (issue 4 item 8)
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

N=20

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":["finance","hr"],"ocr.example":["finance"]}}' >"$POLICY"
  start_sink
  REL=$(install_release "$FIX/releases/annotate")
}

teardown() {
  kill_started
  release_cleanup
}

# calls FUNCTION — N envelopes, call i: "INVOICE i" (finance), a salary sheet (hr)
# (one jq for the N, the lines envelope wrote: a jq 1.6 start costs ~45 ms
# of CPU, and there were two a call; each call's salary its own $RANDOM$RANDOM)
calls() {
  local i r=()
  for ((i = 1; i <= N; i++)); do r+=("$RANDOM$RANDOM"); done
  jq -cn --arg r "$REL" --arg f "$1" --arg rnd "${r[*]}" 'range(1; ($rnd | split(" ") | length) + 1) as $i
    | {id: "t\($i)", release: $r, function: $f, args: {},
       items: [{name: "invoice.pdf", label: ["finance"], data: ("INVOICE \($i)" | @base64)},
         {name: "salary.csv", label: ["hr"], data: ("alice,\($rnd | split(" ") | .[$i - 1])" | @base64)}],
       consumers: ["agent"]} + {args: {doc: "invoice.pdf"}}'
}

@test "twin: 2 copies per call send identical requests — 0 triggers in $N calls" {
  calls annotate >calls.jsonl
  run --separate-stderr session calls.jsonl
  echo "$stderr"
  [ "$status" -eq 0 ]
  printf '%s\n' "$output" >results.jsonl
  [ "$(jq -s length results.jsonl)" -eq "$N" ]
  # every call ran as two copies, its one consumer got a value, one request delivered
  jq -se 'map(.ok and .copies == 2 and (.results | length == 1) and .results[0].ok
              and .delivered == [{"destination":"ocr.example","requests":1}]) | all' results.jsonl
  # the agent's copy saw both items, the OCR copy only the invoice
  jq -se 'map(.results[0].value.seen == ["invoice.pdf","salary.csv"]) | all' results.jsonl
  # no trigger in any call
  [ "$(jq -s '[.[].triggers // [] | length] | add' results.jsonl)" -eq 0 ]

  # What the OCR copy delivered (the sink's log) is byte for byte what the
  # agent's copy would have sent (its return value), call by call.
  [ "$(wc -l <"$SINK_LOG")" -eq "$N" ]
  jq -r '.body | @base64d' "$SINK_LOG" | sort >delivered
  jq -r '.results[0].value.sent' results.jsonl | sort >compared
  diff delivered compared

  # The inputs are twins within a call, not constants: every call has its
  # own nonces, and the clock a tool reads is one frozen instant.
  [ "$(jq -r '.nonce.urandom' delivered | sort -u | wc -l)" -eq "$N" ]
  [ "$(jq -r '.nonce.uuid4' delivered | sort -u | wc -l)" -eq "$N" ]
  [ "$(jq -r '.nonce.random' delivered | sort -u | wc -l)" -eq "$N" ]
  "$SYSPY" - delivered <<'EOF'
import datetime, json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    t = datetime.datetime.fromtimestamp(r["time"])
    assert r["now"] == t.isoformat(), (r["now"], t)
    assert r["utcnow"] == datetime.datetime.utcfromtimestamp(r["time"]).isoformat(), r
    assert r["elapsed"] > 0, r  # the counter moves, deterministically
EOF
}

@test "twin control: a nonce outside the twin scope (getrandom via ctypes) triggers in ≥ 19 of $N calls" {
  calls annotate_native >calls.jsonl
  run --separate-stderr session calls.jsonl
  echo "$stderr"
  printf '%s\n' "$output" >results.jsonl
  [ "$(jq -s length results.jsonl)" -eq "$N" ]
  jq -se 'map(.copies == 2 and .delivered == [{"destination":"ocr.example","requests":1}]) | all' results.jsonl
  local fired
  fired=$(jq -s '[.[] | select([.triggers[]? | select(.destination == "ocr.example" and .kind == "mismatch")] | length > 0)] | length' results.jsonl)
  echo "calls with a mismatch trigger: $fired of $N"
  [ "$fired" -ge 19 ]
}
