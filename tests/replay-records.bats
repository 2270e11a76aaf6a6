#!/usr/bin/env bats
# What gl-replay reads on stdin (SPEC §7, §2; issue 17): a result record of
# gl-run passes through, then its verdicts; a bare trigger record (SPEC §6's
# trigger object, which names its witness) gets the same verdict; an
# earlier verdict passes through; anything else is an ok:false "bad_record"
# (exit 1), never a silently skipped line. And the operator's log of both
# commands (--log / GL_LOG) names the trigger and the verdict, never an
# item's contents.
#
# unprivileged: yes — gl-run and gl-replay work in a user namespace
load helpers
load fixtures/run/helpers
load fixtures/run/replay
bats_require_minimum_version 1.5.0

setup() {
  replay_setup
}

teardown() { replay_teardown; }

@test "gl-replay: a bare trigger record gets the verdict its result record gets; other records are bad_record" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/rp-seq")
  LOG=$BATS_TEST_TMPDIR/ops.log
  envelope add "$REL" ocr_add "$ITEMS" | gl-plan --policy "$POLICY" --log "$LOG" |
    GL_LOG=$LOG gl-run --policy "$POLICY" >results
  jq -e '.triggers | length == 1' results
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" --log "$LOG" <results
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  printf '%s\n' "$output" | sed -n 2p | jq -cS . >from-result
  jq -e '.outcome == "item_witness" and .event == "verified"' from-result
  # the trigger object alone
  jq -c '.triggers[0]' results >trigger.jsonl
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" <trigger.jsonl
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ] # a verdict, not the trigger passed on
  printf '%s\n' "$output" | jq -cS . >from-trigger
  diff from-result from-trigger
  # a verdict passes through; a record of no kind, a bare array, a trigger
  # naming no witness: each answered, in order, exit 1
  { cat from-result; echo '{"hello":1}'; echo '[1,2]'; echo '{"id":"t","witness_error":"not written"}'; } >mixed.jsonl
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" <mixed.jsonl
  [ "$status" -eq 1 ]
  [ "$(printf '%s\n' "$output" | jq -c '[.event // .error]' | tr '\n' ' ')" = \
    '["verified"] ["bad_record"] ["bad_record"] ["no_witness"] ' ]
  # gl-damp counts the call and the verdict, and logs both
  gl-damp --state damp.json --log "$LOG" <<<"$(head -1 results; cat from-trigger)" >damp.out
  jq -se '.[1].penalty == 2000' damp.out
  # the log: the plan, the call, its trigger, the verdict, the penalties; no contents
  cat "$LOG"
  jq -se '(map(.event) | index("plan") and index("call_end") and index("trigger") and index("verdict"))
    and ([.[] | select(.event == "trigger")][0] | .destination == "ocr.example" and .kind == "extra")
    and ([.[] | select(.event == "verdict")][0].verdict_event == "verified")
    and ([.[] | select(.event == "damp") | [.kind, .penalty]] == [["call",0],["event",2000]])' "$LOG"
  for s in "$SALARY" "$INVOICE" "$(b64 "$SALARY")" "$(b64 "$INVOICE")"; do ! grep -q "$s" "$LOG"; done
}
