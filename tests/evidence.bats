#!/usr/bin/env bats
# Evidence (issue 5; SPEC §6–§8; paper §IV-F, Definition 6, Theorem 2,
# Propositions 1–2, Tables V and XIV, Appendix B-E): real sessions through
# gl-plan | gl-run, their triggers replayed by gl-replay, and the pipeline
# into gl-damp. Each property is shown against its reference with the
# component switched off, so every test can fail:
#
#   property                                  reference (component off)
#   twin inputs: no false witnesses           gl-run --no-twin
#   secret-dependent noise is verified        gl-run --no-twin (urandom noise is deniable)
#   noise behind a coin raises nothing        gl-run --no-twin
#   declared_broken (weight 2000)             the same code without the declaration
#   dampening suppresses, refuses, recovers   the counts gl-damp's rule predicts
#
# Every call holds an invoice (finance) and a salary sheet (hr) for the agent
# (cleared for both), with ocr.example cleared for finance only: two copies
# (paper Fig. 2c), first {ocr.example} with the invoice, then {agent} with
# both, whose requests to ocr.example are compared with the delivered ones.
# Runs of 20 calls are one gl-run session of 20 calls.
# Fixtures: tests/fixtures/releases/ev-twin, ev-noise, ev-broken, ev-leak.
# sanitizers: no — its 20-call sessions and 100-attempt pipelines are counts whose time is the Python copies; the C stages they drive (gl-run --witness-items and --damp, gl-replay, gl-damp) run under ASan in tests/replay.bats, tests/gl-damp.bats, tests/broker.bats and tests/read-paths.bats
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
  CANARY="CANARY-$RANDOM$RANDOM"
}

teardown() { kill_started; }

# calls SHA FUNCTION [N] [FIRST] — N envelopes (ids c<FIRST>…): call i holds
# "INVOICE i" (finance) and a salary sheet with the canary (hr), for the agent.
# One jq for all N (each jq 1.6 start costs ~45 ms of CPU; the lines are byte
# for byte those of one envelope per call, tests/fixtures/run/helpers.bash)
calls() {
  jq -cn --arg r "$1" --arg f "$2" --arg canary "$CANARY" --argjson n "${3:-$N}" \
    --argjson first "${4:-1}" 'range($first; $first + $n) as $i
    | {id: "c\($i)", release: $r, function: $f, args: {},
       items: [{name: "invoice.pdf", label: ["finance"], data: ("INVOICE \($i)" | @base64)},
         {name: "salary.csv", label: ["hr"], data: ("name,monthly\nalice,\($canary)\($i)" | @base64)}],
       consumers: ["agent"]}'
}

# run_session CALLS OUT [GL-RUN FLAGS…] — gl-plan | gl-run over CALLS, with
# item contents in the witnesses (the verifier here is cleared for them)
run_session() {
  local in=$1 out=$2
  shift 2
  gl-plan --policy "$POLICY" <"$in" |
    gl-run --policy "$POLICY" --witness-items "$@" >"$out" 2>"$out.err" 3>&-
}

# replay RESULTS OUT — gl-replay over result records; OUT gets the verdicts
# only, and the records it forwarded are checked to be the input, unchanged
replay() {
  gl-replay <"$1" >"$2.all" 2>"$2.err" 3>&- || { cat "$2.err"; return 1; }
  jq -c 'select(has("outcome") | not)' "$2.all" | diff - <(jq -c . "$1")
  jq -c 'select(has("outcome"))' "$2.all" >"$2"
}

# triggered RESULTS — calls that recorded at least one trigger
triggered() { jq -s '[.[] | select((.triggers // []) | length > 0)] | length' "$1"; }

# count VERDICTS FILTER — verdicts for which FILTER holds
count() { jq -s "[.[] | select($2)] | length" "$1"; }

@test "twin inputs: a flow-compliant tool reading the clock and nonces — 0 false witnesses in $N calls; ≥ 19/$N without twin inputs" {
  # What we count. A false witness is evidence against a flow-compliant
  # tool. At the tripwire that is a trigger: ev-twin's request depends only
  # on the invoice, so any trigger is false. Replay is the second line of
  # defence and must not confirm any of them either. So: with twin inputs,
  # 0 triggers (hence 0 verdicts); without (gl-run --no-twin, the reference,
  # Table V "no twin: 20/20 false witnesses"), a trigger in ≥ 19 of 20 calls
  # — each a false alarm an operator would have to explain. gl-replay must
  # not turn them into item witnesses: it replays a --no-twin witness with a
  # fresh clock and seed per run, so the control differs (nondeterminism).
  REL=$(install_release "$FIX/releases/ev-twin")
  calls "$REL" stamp >calls.jsonl

  run_session calls.jsonl ref.jsonl --no-twin
  cat ref.jsonl.err
  jq -se "length == $N and all(.[]; .ok and .copies == 2)" ref.jsonl
  local fired
  fired=$(triggered ref.jsonl)
  echo "no twin: calls with a trigger: $fired of $N"
  [ "$fired" -ge 19 ]
  replay ref.jsonl ref.verdicts
  echo "no twin: verdicts: $(jq -sc 'group_by(.outcome) | map({(.[0].outcome): length}) | add' ref.verdicts)"
  [ "$(jq -s length ref.verdicts)" -eq "$(jq -s '[.[].triggers // [] | length] | add' ref.jsonl)" ]
  [ "$(count ref.verdicts '.outcome == "item_witness"')" -eq 0 ]

  run_session calls.jsonl results.jsonl
  cat results.jsonl.err
  jq -se "length == $N and all(.[]; .ok and .copies == 2 and .results[0].ok
          and .delivered == [{\"destination\":\"ocr.example\",\"requests\":1}])" results.jsonl
  [ "$(triggered results.jsonl)" -eq 0 ]
  replay results.jsonl verdicts
  [ "$(jq -s length verdicts)" -eq 0 ]
  # the inputs are twins within a call, not constants across calls
  [ "$(jq -r '.body | @base64d | fromjson | .urandom' "$SINK_LOG" | sort -u | wc -l)" -eq $((2 * N)) ]
  ! sink_has "$CANARY"
}

@test "secret-dependent noise from os.urandom and perf_counter: item witnesses in $N of $N calls each; both are deniable without twin inputs" {
  REL=$(install_release "$FIX/releases/ev-noise")

  { calls "$REL" noise_urandom "$N" 1; calls "$REL" noise_perf "$N" 101; } >calls.jsonl

  # Reference: twin inputs off (gl-run --no-twin; gl-replay then draws a
  # fresh clock and seed for every run of such a witness). The copies differ
  # (one trigger a call), but the os.urandom noise now differs in the control
  # too, so replay cannot attribute the difference to the salary sheet:
  # nondeterminism, not a witness — the deniability the noise was meant to
  # buy. The same holds for the perf_counter noise: the counter's origin is
  # derived from the seed (docs/python-host.md).
  run_session calls.jsonl ref.jsonl --no-twin
  cat ref.jsonl.err
  [ "$(triggered ref.jsonl)" -eq $((2 * N)) ]
  replay ref.jsonl ref.verdicts
  echo "no twin: $(jq -sc 'group_by(.function + " " + .outcome) | map({(.[0].function + " " + .[0].outcome): length}) | add' ref.verdicts)"
  [ "$(jq -s length ref.verdicts)" -eq $((2 * N)) ]
  [ "$(count ref.verdicts '.function == "noise_urandom"')" -eq "$N" ]
  [ "$(count ref.verdicts '.function == "noise_urandom" and .outcome == "item_witness"')" -eq 0 ]
  [ "$(count ref.verdicts '.function == "noise_perf"')" -eq "$N" ]
  [ "$(count ref.verdicts '.function == "noise_perf" and .outcome == "item_witness"')" -eq 0 ]

  # Twin inputs on: every call's trigger is verified — the probe differs on
  # every try, the control never.
  run_session calls.jsonl results.jsonl
  cat results.jsonl.err
  jq -se "length == $((2 * N)) and all(.[]; .ok and .copies == 2 and (.triggers | length == 1)
          and .triggers[0].destination == \"ocr.example\" and .triggers[0].kind == \"mismatch\")" results.jsonl
  replay results.jsonl verdicts
  local f
  for f in noise_urandom noise_perf; do
    jq -se --arg f "$f" --arg n "$N" --slurpfile r results.jsonl '
      ($r | map(select(.function == $f) | .triggers[0].id)) as $ids
      | [.[] | select(.witness as $w | $ids | index($w))]
      | length == ($n | tonumber) and all(.outcome == "item_witness" and .event == "verified_undeclared"
          and .weight == 250 and .release == $r[0].release and .destination == "ocr.example"
          and .tries >= 5 and .probe_differs == .tries and .control_differs == 0)' verdicts
  done
  # prevention held all along: the secret never reached ocr.example in clear
  ! sink_has "$CANARY"
}

@test "noise behind a random coin (not the secret) raises no trigger and no witness in $N calls; without twin inputs it does" {
  REL=$(install_release "$FIX/releases/ev-noise")
  calls "$REL" noise_coin >calls.jsonl

  # Reference: without twin inputs each copy flips its own coin (and draws
  # its own padding), so the copies differ in about 3 calls of 4.
  run_session calls.jsonl ref.jsonl --no-twin
  cat ref.jsonl.err
  local fired
  fired=$(triggered ref.jsonl)
  echo "no twin: calls with a trigger: $fired of $N"
  [ "$fired" -ge 5 ]

  : >"$SINK_LOG"
  run_session calls.jsonl results.jsonl
  cat results.jsonl.err
  jq -se "length == $N and all(.[]; .ok and .copies == 2)" results.jsonl
  [ "$(triggered results.jsonl)" -eq 0 ]
  replay results.jsonl verdicts
  [ "$(jq -s length verdicts)" -eq 0 ]
  # the coin really was flipped: some calls sent the padding, some did not
  local padded
  padded=$(jq -s '[.[] | select(.path == "/pad")] | length' "$SINK_LOG")
  echo "calls that sent padding: $padded of $N"
  [ "$padded" -ge 1 ] && [ "$padded" -le $((N - 1)) ]
}

@test "a release that declares determinism but reads the cycle counter through ctypes is declared_broken (2000); undeclared it is unverified (250)" {
  REL=$(install_release "$FIX/releases/ev-broken")
  # the reference: the same code, signed without the declaration
  cp -r "$FIX/releases/ev-broken" undeclared
  chmod -R u+w undeclared
  sed -i 's/"deterministic":true/"deterministic":false/' undeclared/manifest.json
  grep -q '"deterministic":false' undeclared/manifest.json
  UND=$(install_release "$BATS_TEST_TMPDIR/undeclared")
  { calls "$REL" ocr_tagged 3 1; calls "$UND" ocr_tagged 3 11; } >calls.jsonl

  run_session calls.jsonl results.jsonl
  cat results.jsonl.err
  # flow-compliant: only the invoice is sent, yet every call's copies differ
  jq -se 'length == 6 and all(.[]; .ok and .copies == 2 and (.triggers | length == 1)
          and .triggers[0].kind == "mismatch")' results.jsonl
  ! sink_has "$CANARY"
  replay results.jsonl verdicts
  cat verdicts
  jq -se --arg r "$REL" '[.[] | select(.release == $r)] | length == 3 and all(
      .outcome == "nondeterminism" and .event == "declared_broken" and .weight == 2000
      and .control_differs > 0)' verdicts
  jq -se --arg r "$UND" '[.[] | select(.release == $r)] | length == 3 and all(
      .outcome == "nondeterminism" and .event == "unverified" and .weight == 250
      and .control_differs > 0)' verdicts
}

# ---- the pipeline into gl-damp ----------------------------------------------
#
# gl-plan | gl-run --damp S | gl-replay | gl-damp --state S, fed one call at a
# time: the next call goes in only when gl-damp has written the state for
# the previous one (its output record comes after the write), so that
# gl-run's decision for call k+1 sees every event of calls 1..k. Without
# that, calls already in the pipe run before gl-damp catches up (see
# docs/pipeline.md); the test waits on records, it times nothing. The
# records reach the test through two fifos as well as the files (tee writes
# its standard output, the file, first): a blocking read per record, where
# polling the files' line counts cost a fork every 20 ms.

pipeline_start() {
  STATE=$BATS_TEST_TMPDIR/damp.json
  mkfifo feed run.fifo damp.fifo
  exec 7<>feed
  (gl-plan --policy "$POLICY" <feed |
    gl-run --policy "$POLICY" --witness-items --damp "$STATE" 2>run.err | tee run.fifo run.jsonl |
    gl-replay 2>replay.err | tee replay.jsonl |
    gl-damp --state "$STATE" 2>damp.err | tee damp.fifo >damp.jsonl) 3>&- 7>&- 8>&- 9>&- &
  PIPE_PID=$!
  exec 8<run.fifo 9<damp.fifo
  # one jq for every record the test looks into (a jq per record cost ~45 ms
  # of CPU each, ~350 a test): {"k":"n"|"s","r":RECORD} in, one answer out
  coproc EVJQ { exec jq --unbuffered -r 'if .k == "n" then 1 + ((.r.triggers // []) | length)
    else .r.suppressed end' 3>&- 7>&- 8>&- 9>&-; }
  echo "$EVJQ_PID" >>"$PIDS"
  FED=0
  LAST=
}

# ask K RECORD — the coprocess's answer for RECORD into ANS (n: how many
# gl-damp records the gl-run record RECORD brings; s: gl-damp's .suppressed)
ask() {
  printf '{"k":"%s","r":%s}\n' "$1" "$2" >&"${EVJQ[1]}"
  read -r -t 120 -u "${EVJQ[0]}" ANS || { echo "ask: no answer for $2" >&2; return 1; }
}

pipeline_stop() {
  local jqin=${EVJQ[1]}
  exec 7>&- {jqin}>&-
  wait "$PIPE_PID" || true
  exec 8<&- 9<&-
}

# next_record FD WHAT — the next line on FD into REC (at most 120 s: a hang,
# not a timing)
next_record() {
  read -r -t 120 -u "$1" REC && return 0
  echo "next_record: no $2 record after call $FED" >&2
  cat run.err replay.err damp.err >&2
  return 1
}

# attempt ENVELOPE — one call through the pipeline; waits for gl-damp: its
# record of the call's result and of each of the call's verdicts
attempt() {
  local n i
  printf '%s\n' "$1" >&7
  FED=$((FED + 1))
  next_record 8 gl-run
  ask n "$REC"
  n=$ANS
  for ((i = 0; i < n; i++)); do
    next_record 9 gl-damp
    LAST=$REC
  done
}

# suppressed_now — the last record gl-damp wrote says suppressed
suppressed_now() { ask s "$LAST" && [ "$ANS" = true ]; }

# joined — one record per record gl-damp read: what it read, what it wrote
joined() {
  jq -cn --slurpfile a replay.jsonl --slurpfile b damp.jsonl '[$a, $b] | transpose[]
    | {verdict: (.[0] | has("witness")), id: .[0].id, ok: .[0].ok, error: .[0].error,
       copies: .[0].copies, triggers: ((.[0].triggers // []) | length),
       event: .[0].event, outcome: .[0].outcome, weight: .[0].weight,
       release: .[1].release, penalty: .[1].penalty, suppressed: .[1].suppressed}'
}

@test "pipeline: an always-diverging release is suppressed after 9 calls, refused by gl-run --damp, and usable again once refused calls decay it" {
  REL=$(install_release "$FIX/releases/ev-leak")
  calls "$REL" ocr_leak 200 >calls.jsonl
  mapfile -t CALLS <calls.jsonl
  pipeline_start
  local k=0
  while [ "$k" -lt 30 ]; do
    k=$((k + 1))
    attempt "${CALLS[k - 1]}"
  done
  joined >session.jsonl
  cat session.jsonl

  # calls 1–9 ran as two copies, each with one trigger verified as an item
  # witness of an undeclared release (verified_undeclared, 250)
  jq -se 'map(select(.verdict | not)) | .[0:9] | all(.ok and .copies == 2 and .triggers == 1)' session.jsonl
  jq -se 'map(select(.verdict)) | length == 9 and all(.outcome == "item_witness"
          and .event == "verified_undeclared" and .weight == 250)' session.jsonl
  # suppressed by the 9th verdict, not before
  jq -se 'map(select(.verdict)) | (.[0:8] | all(.suppressed | not)) and .[8].suppressed' session.jsonl
  # gl-damp's rule, from its own records: decay (λ = 2^(-1/50)) then +250
  jq -se 'map(select(.verdict)) | to_entries | all(.value.penalty as $p
          | (250 * (1 - pow(2; -(.key + 1) / 50)) / (1 - pow(2; -1 / 50))) as $want
          | ($p - $want | fabs) < 1e-6)' session.jsonl
  # calls 10–30: refused by gl-run --damp, no copies, no triggers, and each
  # refusal advances the decay
  jq -se 'map(select(.verdict | not)) | .[9:30] | length == 21 and all(.ok == false
          and .error == "suppressed" and .copies == null and .triggers == 0 and .suppressed)' session.jsonl
  jq -se '(.[17:] | map(.penalty)) as $p | [range(1; $p | length) | $p[.] / $p[. - 1]]
          | length == 21 and all(. - pow(2; -1 / 50) | fabs < 1e-12)' session.jsonl
  ! sink_has "$CANARY"

  # further attempts, refused and decaying, until gl-damp says usable again
  local after=21
  while suppressed_now; do
    [ "$after" -lt 150 ]
    k=$((k + 1))
    attempt "${CALLS[k - 1]}"
    after=$((after + 1))
  done
  # the next call runs again (two copies: not refused)
  k=$((k + 1))
  attempt "${CALLS[k - 1]}"
  pipeline_stop
  joined >all.jsonl
  jq -se 'map(select(.verdict | not)) | .[-1] | .ok and .copies == 2' all.jsonl
  jq -se 'map(select(.verdict | not)) | .[9:-1] | all(.error == "suppressed")' all.jsonl
  # the number of attempts is what the rule predicts from the penalty at
  # suppression P9: the smallest n with P9·λ^n < R = 750 — 76 here, because
  # nine events overshoot S (P9 ≈ 2130); from exactly S it is 71 (next test)
  local p9 want
  p9=$(jq -s 'map(select(.verdict)) | .[8].penalty' all.jsonl)
  want=$(jq -n --argjson p "$p9" '[range(1; 1000) | select($p * pow(2; -. / 50) < 750)] | first')
  echo "P9 = $p9; usable again after $after attempts (rule: $want)"
  [ "$after" -eq "$want" ]
  [ "$after" -eq 76 ]
}

@test "pipeline: a verified witness of a release that declares determinism suppresses at once (2000); usable again after exactly 71 refused attempts" {
  cp -r "$FIX/releases/ev-leak" declared
  chmod -R u+w declared
  sed -i 's/"deterministic":false/"deterministic":true/' declared/manifest.json
  grep -q '"deterministic":true' declared/manifest.json
  REL=$(install_release "$BATS_TEST_TMPDIR/declared")
  calls "$REL" ocr_leak 100 >calls.jsonl
  mapfile -t CALLS <calls.jsonl
  pipeline_start
  local k=1 after=0
  attempt "${CALLS[0]}"
  while suppressed_now; do
    [ "$after" -lt 100 ]
    k=$((k + 1))
    attempt "${CALLS[k - 1]}"
    after=$((after + 1))
  done
  pipeline_stop
  joined >all.jsonl
  cat all.jsonl | head -3
  # one call, one verified witness: P = 0·λ + 2000 = S, suppressed at once
  jq -se '.[0].ok and .[0].copies == 2 and (.[0].suppressed | not)
          and .[1].verdict and .[1].outcome == "item_witness" and .[1].event == "verified"
          and .[1].weight == 2000 and .[1].penalty == 2000 and .[1].suppressed' all.jsonl
  jq -se '.[2:] | length == 71 and all(.error == "suppressed")' all.jsonl
  echo "usable again after $after refused attempts"
  [ "$after" -eq 71 ]
  gl-damp analyze | jq -e '.calls_to_recover == 71 and .calls_to_suppress == 9'
}
