#!/usr/bin/env bats
# Table XII O3 and isolation between copies, through gl-plan | gl-run
# (issue 4; SPEC §10; paper Tables XII and XIII A1, Fig. 2b).
#
# Every test runs the same signed release twice: first as the reference with
# the mechanism switched off — one persistent, unconfined process
# (tests/fixtures/run/persistent.py, the paper's Sig+Pin) — which must leak,
# so the test can fail; then through gl-plan | gl-run, which must not.
# Fixtures: tests/fixtures/releases/ob-child (O3), ob-iso (channels between
# calls, ways out of a copy), pool (the paper's running example).
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody (issue 4 item 8)
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

setup() {
  TAG=glt$$$RANDOM                       # names of files, queues, sockets
  run_setup
  KEY=$((0x474c0000 + RANDOM))           # SysV key
  CANARY="CANARY-$RANDOM$RANDOM-salary"
  DROP=$BATS_TEST_TMPDIR/drop            # a directory the test can write
  mkdir -p "$DROP"
  PIDS=$BATS_TEST_TMPDIR/reference-pids  # host pids started by reference runs
  : >"$PIDS"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":["finance","hr"],"ocr.example":["finance"]}}' >"$POLICY"
}

teardown() {
  # Only processes this test started (the reference's lingering children,
  # victims, the sink), each by its pid.
  [ -n "${PIDS:-}" ] && kill_started
  # files the reference runs left (TAG is never empty here: set first in setup)
  case "${TAG:-}" in glt?*) rm -rf /tmp/"$TAG"* /dev/shm/"$TAG"* ;; esac
  release_cleanup
}

# marked MARKER — pids of live (not zombie) processes whose comm or argv
# holds MARKER
marked() {
  local d c s
  for d in /proc/[0-9]*; do
    c=$(cat "$d/comm" "$d/cmdline" 2>/dev/null | tr '\0' ' ') || continue
    s=$(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -c1) || continue
    [[ "$c" == *"$1"* && -n "$s" && "$s" != Z && "$s" != X ]] && echo "${d#/proc/}"
  done
  true
}

# gone MARKER — wait (at most 10 s) until no live process carries MARKER
gone() {
  local i
  for i in $(seq 200); do [ -z "$(marked "$1")" ] && return 0; sleep 0.05; done
  return 1
}

# iso CHANNEL — envelopes: put (the canary as an hr item), then get
iso() {
  local args
  args=$(jq -cn --arg ch "$1" --arg tag "$TAG" --arg key "$KEY" --arg dir "$DROP" \
    '{args:{channel:$ch,tag:$tag,key:$key,dir:$dir}}')
  envelope put "$ISO" put "[{\"name\":\"secret\",\"label\":[\"hr\"],\"data\":\"$(b64 "$CANARY")\"}]" "$args"
  envelope get "$ISO" get '[]' "$args"
}

# channel CHANNEL — the secret crosses from call 1 to call 2 under the
# reference, and not through gl-run; both calls must have run there.
channel() {
  ISO=$(install_release "$FIX/releases/ob-iso")
  iso "$1" >calls.jsonl
  reference "$ISO" calls.jsonl ref.jsonl
  jq -r 'select(.id == "put") | .value.child // empty' ref.jsonl >>"$PIDS"
  echo "reference: $(cat ref.jsonl)"
  jq -e --arg c "$CANARY" 'select(.id == "get") | .value.found | index($c) != null' ref.jsonl

  run --separate-stderr session calls.jsonl
  echo "gl-run: $output"
  echo "stderr: $stderr"
  [ "$status" -eq 0 ]
  [ "$(json -s 'length')" -eq 2 ]
  [ "$(json -s '[.[] | .ok and (.results | length == 1) and (.results[0].ok)] | all')" = true ]
  [ "$(json -s '.[1].results[0].value.found')" = "[]" ]
  [[ "$output" != *"$CANARY"* ]]
}

@test "O3: a tool's sleeping children are gone after the call (1 → 0 live processes)" {
  local marker=glo3$RANDOM$RANDOM
  REL=$(install_release "$FIX/releases/ob-child")
  envelope c1 "$REL" spawn '[]' "{\"args\":{\"marker\":\"$marker\"}}" >calls.jsonl

  # Mechanism off: one persistent process; its children outlive the call.
  reference "$REL" calls.jsonl ref.jsonl
  jq -e '.ok and (.value.started | length) == 2' ref.jsonl
  marked "$marker" >live
  cat live >>"$PIDS"
  echo "reference: $(cat ref.jsonl); live: $(cat live | tr '\n' ' ')"
  [ "$(wc -l <live)" -ge 1 ]
  kill_started
  : >"$PIDS"
  gone "$marker"

  # gl-run: the germline stays resident (stdin open) while we look.
  # (read-write opens of the fifos never block, whatever gl-run does)
  mkfifo in out
  exec 5<>in 6<>out
  gl-run --policy "$POLICY" <in >out 2>run.err 3>&- 5>&- 6>&- &
  local runner=$!
  gl-plan --policy "$POLICY" <calls.jsonl >&5
  local rec=
  SECONDS=0
  read -r -t 60 rec <&6 || echo "read: $? after $SECONDS s"
  echo "gl-run: $rec"
  cat run.err
  marked "$marker" >live
  exec 5>&- 6>&-
  wait "$runner"
  cat run.err
  # the tool really started its children inside the copy …
  jq -e '.ok and .results[0].ok and (.results[0].value.started | length) >= 1' <<<"$rec"
  # … and none of them is alive after the call.
  cat live
  [ ! -s live ]
}

@test "isolation: a module-level variable does not reach the next call" {
  channel global
}

@test "isolation: a file (writing outside the copy's own /tmp fails; nothing reaches the next call)" {
  channel file
  # the reference wrote both files; under gl-run only the one in the copy's
  # private scratch /tmp (SPEC §5, docs/sandbox.md "The scratch directory"),
  # which the next call's copy does not see (channel checks it found nothing)
  [ "$(json -s '.[0].results[0].value | to_entries | [.[] | select(.value == "written") | .key]
      | length == 1 and (.[0] | startswith("/tmp/glt"))')" = true ]
  [ "$(json -s '.[0].results[0].value | length')" -eq 3 ]
  [ "$(json -s '.[1].results[0].value.found')" = "[]" ]
}

@test "isolation: /dev/shm" {
  channel devshm
  [ "$(json -s '.[0].results[0].value.put')" != ok ]
}

@test "isolation: SysV shared memory" {
  channel sysv
  [ "$(json -s '.[0].results[0].value.put')" != ok ]
}

@test "isolation: a POSIX message queue" {
  channel mq
  [ "$(json -s '.[0].results[0].value.put')" != ok ]
}

@test "isolation: an abstract unix socket served by a lingering child" {
  channel abstract
}

@test "isolation: a lingering child pushing the secret to the next call" {
  channel child
}

@test "isolation: a copy cannot signal a process outside it" {
  ISO=$(install_release "$FIX/releases/ob-iso")
  sleep 600 </dev/null >/dev/null 2>&1 3>&- &
  local victim=$!
  echo "$victim" >>"$PIDS"
  envelope k "$ISO" kill '[]' "{\"args\":{\"pid\":$victim,\"sig\":10}}" >calls.jsonl
  # Mechanism off: the signal is delivered and ends the victim.
  reference "$ISO" calls.jsonl ref.jsonl
  cat ref.jsonl
  jq -e '.value == "delivered"' ref.jsonl
  run wait "$victim"
  [ "$status" -eq 138 ] # 128 + SIGUSR1

  sleep 600 </dev/null >/dev/null 2>&1 3>&- &
  victim=$!
  echo "$victim" >>"$PIDS"
  disown
  envelope k "$ISO" kill '[]' "{\"args\":{\"pid\":$victim,\"sig\":10}}" >calls.jsonl
  run --separate-stderr session calls.jsonl
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(json '.results[0].ok')" = true ]
  [ "$(json '.results[0].value')" != delivered ]
  kill -0 "$victim"
}

@test "isolation: no raw socket, no TCP or UDP to loopback; the sink sees nothing" {
  start_sink
  ISO=$(install_release "$FIX/releases/ob-iso")
  envelope n "$ISO" net '[]' "{\"args\":{\"port\":$SINK_PORT}}" >calls.jsonl
  # Mechanism off: the tool connects to the sink and sends it a request.
  reference "$ISO" calls.jsonl ref.jsonl
  cat ref.jsonl
  jq -e '.value.tcp4 == "connected"' ref.jsonl
  grep -q from-copy "$SINK_LOG"
  local before
  before=$(wc -l <"$SINK_LOG")

  run --separate-stderr session calls.jsonl
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(json '.results[0].ok')" = true ]
  [ "$(json '.results[0].value | keys | sort | join(",")')" = "raw,tcp4,tcp6,udp" ]
  [ "$(json '[.results[0].value[] | select(test("^(opened|connected|sent)$"))] | length')" -eq 0 ]
  [ "$(wc -l <"$SINK_LOG")" -eq "$before" ]
}

@test "isolation: writing any path but the copy's own scratch /tmp fails (/var/tmp, /dev/shm, \$HOME, the release, cwd)" {
  ISO=$(install_release "$FIX/releases/ob-iso")
  envelope w "$ISO" write_paths '[]' \
    "$(jq -cn --arg t "$TAG" --arg h "$HOME" --arg d "$DROP" '{args:{tag:$t,paths:[$h,$d]}}')" >calls.jsonl
  # Mechanism off: the same process writes where its user may.
  reference "$ISO" calls.jsonl ref.jsonl
  cat ref.jsonl
  jq -e --arg h "$HOME" --arg d "$DROP" \
    '.value["/tmp"] == "written" and .value[$h] == "written" and .value[$d] == "written"' ref.jsonl

  run --separate-stderr session calls.jsonl
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(json '.results[0].ok')" = true ]
  [ "$(json '.results[0].value | length')" -ge 7 ] # the copy's cwd may be one of the others
  # only the copy's private scratch /tmp (SPEC §5; gone with the copy: the
  # file test above) takes a write
  [ "$(json '.results[0].value | to_entries | [.[] | select(.value == "written" or .value == "made") | .key] | sort | join(",")')" = /tmp,mkdir ]
}

@test "paper Fig. 2b: the pool release discloses an HR item to ocr.example only as one process" {
  start_sink
  POOL=$(install_release "$GL_ROOT/tests/fixtures/releases/demo-pool")
  {
    envelope c1 "$POOL" summarize "[{\"name\":\"salary.csv\",\"label\":[\"hr\"],\"data\":\"$(b64 "name,salary
alice,$CANARY")\"}]"
    envelope c2 "$POOL" ocr_pdf "[{\"name\":\"invoice.pdf\",\"label\":[\"finance\"],\"data\":\"$(b64 "INVOICE 2027-001 total 1200 EUR")\"}]"
  } >calls.jsonl

  # Mechanism off: call 2's authorised OCR request carries call 1's salary sheet.
  reference "$POOL" calls.jsonl ref.jsonl
  cat ref.jsonl
  [ "$(jq -s '[.[] | .ok] | all' ref.jsonl)" = true ]
  sink_has "$CANARY"
  : >"$SINK_LOG"

  run --separate-stderr session calls.jsonl
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(json -s '[.[] | .ok and .results[0].ok] | all')" = true ]
  # the invoice still reached the OCR service, once, and its text came back
  [ "$(json -sc '.[1].delivered')" = '[{"destination":"ocr.example","requests":1}]' ]
  sink_has "INVOICE 2027-001"
  ! sink_has "$CANARY"
}
