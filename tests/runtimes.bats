#!/usr/bin/env bats
# The runtimes of SPEC §6 as gl-run --mode (issue 6 item 5; paper §VII-A
# "Runtimes", Fig. 3, Lemma 2 and §VII-E "Existence bit"): real gl-plan |
# gl-run sessions against real HTTP sinks on loopback, the same envelopes
# under each mode. Each baseline must miss what its object cannot bind, and
# germline execution must miss none of them:
#
#   attack (fixture)                     discloses under        not under
#   carry-over pool (examples/pool)      sigpin sigifc confined fresh nosplit germline
#   within-call mixing (examples/annotate) fresh nosplit        germline
#   undeclared host (rt-direct)          sigpin sigifc          confined fresh germline
#   stored state vs per-call labels (rt-store): sigifc labels the recall []
#   existence bit (rt-bit, 64 calls, 16 outside the plain pass): lazy recovers 64/64 bits, no trigger;
#                                        germline 0 bits, a trigger per omission
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":["finance","hr"],"ocr.example":["finance"]}}' >"$POLICY"
  start_sink
  CANARY="CANARY-$RANDOM$RANDOM"
}

teardown() {
  kill_started
  release_cleanup
}

# start_evil — a second sink standing for evil.example (routed in $POLICY)
start_evil() {
  EVIL_LOG=$BATS_TEST_TMPDIR/evil.log
  "$SYSPY" "$FIX/sink.py" --port-file "$BATS_TEST_TMPDIR/evil.port" --log "$EVIL_LOG" \
    </dev/null >/dev/null 2>&1 3>&- &
  echo $! >>"$PIDS"
  disown
  local i
  for i in $(seq 200); do [ -s "$BATS_TEST_TMPDIR/evil.port" ] && break; sleep 0.05; done
  jq --arg a "127.0.0.1:$(cat "$BATS_TEST_TMPDIR/evil.port")" '.routes["evil.example"] = $a' \
    "$POLICY" >"$POLICY.new"
  mv "$POLICY.new" "$POLICY"
  : >"$EVIL_LOG"
}

# rsession MODE CALLS OUT — gl-plan | gl-run --mode MODE over CALLS (a fresh
# sink log per session); records to OUT, stderr to OUT.err
rsession() {
  local plan=germline
  [ "$1" = nosplit ] && plan=nosplit
  : >"$SINK_LOG"
  [ -n "${EVIL_LOG:-}" ] && : >"$EVIL_LOG"
  gl-plan --policy "$POLICY" --mode "$plan" <"$2" |
    gl-run --policy "$POLICY" --mode "$1" >"$3" 2>"$3.err" 3>&- ||
    { jq -c "select(.ok != true)" "$3"; cat "$3.err"; false; }
}

# all_ok OUT — every record and every consumer result is ok
all_ok() { [ "$(jq -s '[.[] | .ok and ([.results[] | .ok] | all)] | all' "$1")" = true ] || { cat "$1" "$1.err"; false; }; }

salary() { jq -cn --arg d "$(b64 "name,monthly
alice,$CANARY")" '{name:"salary.csv",label:["hr"],data:$d}'; }
invoice() { jq -cn --arg d "$(b64 "${1:-INVOICE 2027-001 total 1200 EUR}")" \
  '{name:"invoice.pdf",label:["finance"],data:$d}'; }

@test "gl-run --mode: every SPEC §6 mode is accepted and named in the record; others are usage errors" {
  REL=$(install_release "$GL_ROOT/tests/fixtures/releases/demo-pool")
  envelope c1 "$REL" summarize "[$(invoice)]" >calls.jsonl
  for m in germline nosplit lazy fresh confined sigifc sigpin; do
    rsession "$m" calls.jsonl out.jsonl || { cat out.jsonl out.jsonl.err; false; }
    [ "$(jq -r .mode out.jsonl)" = "$m" ]
    all_ok out.jsonl
    [ "$(jq -r '.results[0].value["invoice.pdf"]' out.jsonl)" = "INVOICE 2027-001 total 1200 EUR" ]
  done
  run gl-run --policy "$POLICY" --mode nosuch </dev/null
  [ "$status" -eq 2 ]
  [[ "$output" == *"--mode must be"* ]]
}

@test "pool (paper Fig. 2b, carry-over): discloses under sigpin, sigifc, confined; not under fresh, nosplit, germline" {
  POOL=$(install_release "$GL_ROOT/tests/fixtures/releases/demo-pool")
  {
    envelope c1 "$POOL" summarize "[$(salary)]"
    envelope c2 "$POOL" ocr_pdf "[$(invoice)]"
  } >calls.jsonl
  for m in sigpin sigifc confined; do
    rsession "$m" calls.jsonl out.jsonl
    all_ok out.jsonl
    # one persistent process served both calls
    [ "$(jq -s -c '[.[].copies]' out.jsonl)" = "[1,0]" ]
    sink_has "INVOICE 2027-001" || { echo "$m: no OCR request"; false; }
    sink_has "$CANARY" || { echo "$m: expected a disclosure"; false; }
  done
  for m in fresh nosplit germline; do
    rsession "$m" calls.jsonl out.jsonl
    all_ok out.jsonl
    sink_has "INVOICE 2027-001" || { echo "$m: no OCR request"; false; }
    ! sink_has "$CANARY" || { echo "$m: disclosed"; false; }
  done
  # fresh: a new confined process per call
  rsession fresh calls.jsonl out.jsonl
  [ "$(jq -s -c '[.[].copies]' out.jsonl)" = "[1,1]" ]
  [ "$(jq -r .enforcement.seccomp out.jsonl | sort -u)" = enforced ]
}

@test "annotate (paper Fig. 2c, within-call mixing): discloses under fresh and nosplit, not under germline" {
  ANN=$(install_release "$GL_ROOT/tests/fixtures/releases/demo-annotate")
  envelope c1 "$ANN" ocr_annotate "[$(invoice),$(salary)]" '{"args":{"lang":"en"}}' >calls.jsonl
  for m in fresh nosplit; do
    rsession "$m" calls.jsonl out.jsonl
    all_ok out.jsonl
    sink_has "$CANARY" || { echo "$m: expected a disclosure"; false; }
  done
  # fresh's per-call label is the join of the call's items
  rsession fresh calls.jsonl out.jsonl
  [ "$(jq -c '.results[0].label' out.jsonl)" = '["finance","hr"]' ]
  rsession germline calls.jsonl out.jsonl
  all_ok out.jsonl
  sink_has "INVOICE 2027-001"
  ! sink_has "$CANARY"
  [ "$(jq '.triggers | length' out.jsonl)" -eq 1 ]
}

@test "undeclared host (rt-direct): delivered under sigpin and sigifc, denied under confined, fresh, germline" {
  start_evil
  REL=$(install_release "$FIX/releases/rt-direct")
  envelope c1 "$REL" ocr_pdf "[$(invoice),$(salary)]" >calls.jsonl
  for m in sigpin sigifc; do
    rsession "$m" calls.jsonl out.jsonl
    all_ok out.jsonl
    "$SYSPY" "$FIX/run/sink_grep.py" "$EVIL_LOG" "$CANARY" || { echo "$m: expected a disclosure"; false; }
    [ "$(jq -c '[.delivered[] | select(.destination == "evil.example") | .requests]' out.jsonl)" = "[1]" ]
    [ "$(jq -c .enforcement.namespaces out.jsonl)" = "[]" ]
    [ "$(jq -r .enforcement.seccomp out.jsonl)" = not_enforced ]
  done
  for m in confined fresh germline; do
    rsession "$m" calls.jsonl out.jsonl
    all_ok out.jsonl
    [ ! -s "$EVIL_LOG" ] || { echo "$m: evil.example reached"; false; }
    # denied at the broker (germline: once per copy, 2 copies; one entry
    # per copy label, docs/gl-run.md "Field labels")
    [ "$(jq -c '[.denied[].destination] | unique' out.jsonl)" = '["evil.example"]' ]
    sink_has "invoice.pdf" # the declared OCR request still went out
  done
  [ "$(jq -r .enforcement.seccomp out.jsonl)" = enforced ]
}

@test "labels (rt-store): sigifc's per-call label misses stored state; germline's copy keeps nothing" {
  REL=$(install_release "$FIX/releases/rt-store")
  {
    envelope c1 "$REL" remember "[$(salary)]"
    envelope c2 "$REL" recall "[]"
  } >calls.jsonl
  for m in sigifc confined; do
    rsession "$m" calls.jsonl out.jsonl
    all_ok out.jsonl
    [ "$(jq -s -c '.[0].results[0].label' out.jsonl)" = '["hr"]' ]
    # the hr item comes back from a public-only call, labelled public
    [ "$(jq -s -r '.[1].results[0].value.kept[0]' out.jsonl)" = "name,monthly
alice,$CANARY" ]
    [ "$(jq -s -c '.[1].results[0].label' out.jsonl)" = '[]' ]
  done
  rsession sigpin calls.jsonl out.jsonl
  all_ok out.jsonl
  [ "$(jq -s '[.[].results[0] | has("label")] | any' out.jsonl)" = false ]
  [[ "$(jq -s -r '.[1].results[0].value.kept[0]' out.jsonl)" == *"$CANARY"* ]]
  rsession germline calls.jsonl out.jsonl
  all_ok out.jsonl
  [ "$(jq -s -c '.[1].results[0].value.kept' out.jsonl)" = '[]' ]
  [ "$(jq -s -c '.[1].results[0].label' out.jsonl)" = '[]' ]
}

@test "sigpin and sigifc run unconfined (no confinement leaks into the baseline); confined and fresh are confined" {
  REL=$(install_release "$FIX/releases/rt-store")
  envelope c1 "$REL" confinement "[]" >calls.jsonl
  me=$(jq -cn --arg s "$(awk '/^Seccomp:/ {print $2}' /proc/self/status)" \
    --arg n "$(awk '/^NoNewPrivs:/ {print $2}' /proc/self/status)" \
    --arg net "$(readlink /proc/self/ns/net)" --arg ipc "$(readlink /proc/self/ns/ipc)" \
    --arg pid "$(readlink /proc/self/ns/pid)" --arg user "$(readlink /proc/self/ns/user)" \
    '{Seccomp:$s,NoNewPrivs:$n,net:$net,ipc:$ipc,pid:$pid,user:$user}')
  for m in sigpin sigifc; do
    rsession "$m" calls.jsonl out.jsonl
    all_ok out.jsonl
    # exactly what the test's own shell has: gl-run added nothing
    [ "$(jq -cS '.results[0].value' out.jsonl)" = "$(jq -cS . <<<"$me")" ] || { echo "$m: $me"; cat out.jsonl; false; }
  done
  for m in confined fresh; do
    rsession "$m" calls.jsonl out.jsonl
    all_ok out.jsonl
    # the minimal root has no /proc at all (and Landlock would keep even
    # /proc/self/status from it; the broker checked the
    # copy from outside before sending it the call: germline.h)
    [ "$(jq -r '.results[0].value.unreadable' out.jsonl)" = "[Errno 2] No such file or directory: '/proc/self/status'" ]
    [ "$(jq -r .enforcement.landlock_abi out.jsonl)" -gt 0 ]
  done
}

# The secret's bits, one call each: 64 in the plain pass, 16 in the others
# (tests/helpers.bash count; the same calls, a shorter secret)
NBITS=$(count 64 16)

# bits_seen LOG — the NBITS-character bit string (bit i at position i) of the
# calls whose invoice reached the OCR sink
bits_seen() {
  "$SYSPY" - "$1" "$NBITS" <<'EOF'
import base64, json, sys
seen = set()
for line in open(sys.argv[1]):
    body = base64.b64decode(json.loads(line)["body"]).decode()
    seen.add(int(body.split()[1]))
print("".join("1" if i in seen else "0" for i in range(int(sys.argv[2]))))
EOF
}

@test "existence bit (Lemma 2, rt-bit, $NBITS calls): lazy leaks all $NBITS bits without a trigger; germline none, a trigger per omission" {
  REL=$(install_release "$GL_ROOT/testbed/rt-bit") # shared with testbed/matrix.py
  SECRET=$(od -An -N$((NBITS / 8)) -tx1 /dev/urandom | tr -d ' \n')
  BITS=$("$SYSPY" -c "import sys; s=int(sys.argv[1],16); print(''.join(str(s>>i&1) for i in range(int(sys.argv[2]))))" "$SECRET" "$NBITS")
  sec=$(jq -cn --arg d "$(b64 "$SECRET")" '{name:"secret.txt",label:["hr"],data:$d}')
  # one jq for the NBITS envelopes (byte for byte envelope's and invoice's;
  # a jq 1.6 start costs ~45 ms of CPU, and there were two a call)
  jq -cn --arg r "$REL" --argjson sec "$sec" --argjson n "$NBITS" 'range(0; $n) as $i
    | {id: "c\($i)", release: $r, function: "ocr_pdf", args: {},
       items: [{name: "invoice.pdf", label: ["finance"], data: ("INVOICE \($i)" | @base64)}, $sec],
       consumers: ["agent"]} + {args: {i: $i}}' >calls.jsonl

  rsession lazy calls.jsonl lazy.jsonl
  all_ok lazy.jsonl
  [ "$(wc -l <lazy.jsonl)" -eq "$NBITS" ]
  [ "$(bits_seen "$SINK_LOG")" = "$BITS" ] # the OCR host recovers the secret
  [ "$(jq -s '[.[].triggers | length] | add' lazy.jsonl)" -eq 0 ]

  rsession germline calls.jsonl gl.jsonl
  all_ok gl.jsonl
  # a request in every call, whatever the secret: 0 bits recovered
  [ "$(bits_seen "$SINK_LOG")" = "$(printf '1%.0s' $(seq "$NBITS"))" ]
  [ "$(wc -l <"$SINK_LOG")" -eq "$NBITS" ]
  # the tripwire fires on every secret-dependent omission, and only there
  want=$("$SYSPY" -c "import sys; print(' '.join('c%d' % i for i, b in enumerate(sys.argv[1]) if b == '0'))" "$BITS")
  got=$(jq -r 'select(.triggers | length > 0) | .id' gl.jsonl | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$want" ]
  [ "$(jq -r '.triggers[].kind' gl.jsonl | sort -u)" = missing ]
}
