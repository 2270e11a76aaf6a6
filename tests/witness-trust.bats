#!/usr/bin/env bats
# Who may make gl-damp suppress: signed witnesses and the auditor's trusted
# keys (SPEC §7; docs/witness.md "Who made a witness"; paper §III: the
# adversary writes any file and knows our mechanism, §IV-F: witnesses).
#
# The forger of these tests knows a benign release's hash and one function
# name, and holds real witnesses of another release (from any host's
# GL_HOME, a bug report, a shared bundle). With the trust mechanism off
# (the test build's GL_TEST_WITNESS_TRUST_OFF=1: every witness taken as the
# host's) the forgeries frame the benign release; on, they weigh nothing,
# and only a witness signed by a trusted key moves a penalty. A view that
# its own labels and horizon contradict is refused even when signed
# (GL_TEST_WITNESS_VIEWS_OFF). A witness carries its slot snapshots; the
# snapshot store is read only for this host's own older witnesses, never
# to answer another's guess (GL_TEST_REPLAY_FOREIGN_STORE). The dodgers (wt-dodge, wt-scan) tell a
# replay from the call by the copies' bounds or by a file's time through
# os.scandir; the replay gets the call's bounds, the auditor's time caps
# and the twin's file times (GL_TEST_REPLAY_BOUNDS_OFF,
# GL_TEST_SCAN_TWIN_OFF), and every refusal of a trusted witness counts. A
# third (wt-pad) pads its destination's replies past the transcript's
# budget: the rest is carried by hash (GL_TEST_WITNESS_REPLIES_DROP drops
# it, as before). A trigger whose witness is gone still counts when its
# result record's triggers are signed by a trusted key, and a made-up
# result record counts for nothing (GL_TEST_REPLAY_TRIGGERS_UNSIGNED: the
# record believed, a missing witness free).
# sanitizers: no — the signing, trust check, derived views and replay bounds it drives run under ASan on every witness of tests/replay.bats and tests/replay-import.bats (docs/testing.md)
# unprivileged: yes — gl-run and gl-replay work in a user namespace
load helpers
load fixtures/run/helpers
load fixtures/run/replay
bats_require_minimum_version 1.5.0

setup() {
  replay_setup
  sink ocr.example
  TBIN=$GL_ROOT/build/testing/bin
}

teardown() { replay_teardown; }

# run_calls FILE — gl-plan | gl-run; records in FILE.run
run_calls() {
  gl-plan --policy "$POLICY" <"$1" | gl-run --policy "$POLICY" >"$1.run"
}

# penalty STATE RELEASE — RELEASE's penalty in the damp output file STATE.out
penalty() { jq -s --arg r "$2" '[.[] | select(.release == $r) | .penalty] | last // 0' "$1.out"; }

# A real witness of the leaking rp-seq (ocr_dup), and the benign wt-fair
# whose real pipeline raises no trigger.
real_witness() {
  LEAK=$(install_release "$FIX/releases/rp-seq")
  FAIR=$(install_release "$FIX/releases/wt-fair")
  envelope c1 "$LEAK" ocr_dup "$ITEMS" >leak.calls
  run_calls leak.calls
  W=$(jq -r '.triggers[0].witness' leak.calls.run)
  [ -f "$W" ]
  for i in 1 2 3; do envelope "f$i" "$FAIR" ocr_fair "$ITEMS"; done >fair.calls
  run_calls fair.calls
  jq -se 'all(.ok and (.triggers | length) == 0)' fair.calls.run
}

# forge OUT [witness_seal.py flags…] — the real witness retargeted at wt-fair,
# claiming a request wt-fair never sends
forge() {
  local out=$1
  shift
  "$SYSPY" "$FIX/witness_seal.py" "$W" "$out" \
    --set "$(jq -cn --arg r "$FAIR" '{release:$r,function:"ocr_fair",
      delivered:["0000000000000000000000000000000000000000000000000000000000000bad"]}')" "$@"
}

@test "witness-trust: a witness names its producer and is signed; the host's own key is recorded as trusted in its GL_HOME" {
  real_witness
  jq -e '.version == 6 and (.producer.keyid | length) == 64 and (.signature | length) == 128
    and (.snapshots | length) >= 1 and (.comparing_transcript | type) == "array"
    and (. as $w | [$w.comparing_transcript[] | select(.host == $w.destination
      and .source != "denied") | .digest] == $w.compared)' "$W"
  local id
  id=$(jq -r .producer.keyid "$W")
  [ -f "$GL_HOME/keys/trusted/$id.pub" ]
  [ "$(stat -c %a "$GL_HOME/keys/witness.key")" = 600 ]
  run --separate-stderr gl-replay --tries 1 --items items "$W"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json --arg id "$id" '.producer == $id and .trusted and .event == "verified" and .weight == 2000'
  # a second gl-run in the same GL_HOME signs with the same key
  run_calls leak.calls
  [ "$(jq -r '.triggers[0].witness' leak.calls.run | xargs jq -r .producer.keyid)" = "$id" ]
  [ "$(ls "$GL_HOME/keys/trusted" | wc -l)" -eq 1 ]
}

@test "witness-trust: framing by a claim — a forged witness suppresses a benign release with trust off, weighs nothing with it on" {
  real_witness
  forge unsigned.json --unsigned
  gl-sign keygen forger --no-passphrase >/dev/null
  forge forger.json --key forger.key
  # off: the claim is believed; the replay cannot reproduce a sequence the
  # release never sends: declared_broken (2000), suppressed at once
  GL_TEST_WITNESS_TRUST_OFF=1 "$TBIN/gl-replay" --tries 2 --items items forger.json >off.replay || true
  jq -e '.event == "declared_broken" and .weight == 2000' off.replay
  GL_TEST_WITNESS_TRUST_OFF=1 "$TBIN/gl-damp" --state off.state <off.replay >off.state.out
  jq -e '.suppressed' off.state.out
  # on: unsigned, not replayed, weight 0; gl-damp reports it and adds nothing
  "$TBIN/gl-replay" --tries 2 --items items unsigned.json >on.replay && false
  jq -e '.error == "untrusted_witness" and .trusted == false and .producer == null
    and .event == "unverified" and .weight == 0' on.replay
  # the benign release's real calls, then the forgery, through gl-damp
  cat fair.calls.run on.replay on.replay | gl-damp --state on.state >on.state.out || true
  [ "$(penalty on.state "$FAIR")" = 0 ]
  jq -se 'map(select(.untrusted)) | length == 2' on.state.out
  # signed by the forger's own key: named, still not trusted
  run --separate-stderr gl-replay --tries 2 --items items forger.json
  [ "$status" -eq 1 ]
  json --arg id "$(jq -r .producer.keyid forger.json)" \
    '.producer == $id and .trusted == false and .weight == 0'
  # trust is the auditor's choice of key, never the record's: trusting the
  # forger's key makes the same file count (so the check above can fail)
  run --separate-stderr gl-replay --trust forger.pub --tries 2 --items items forger.json
  json '.trusted and .event == "declared_broken" and .weight == 2000'
}

@test "witness-trust: $(count 1000 100) mutations of real witnesses (fields, labels, views, digests, snapshots, signatures) leave a benign release at penalty 0; the leaking release is still suppressed" {
  real_witness
  local n
  n=$(count 1000 100)
  gl-sign keygen forger --no-passphrase >/dev/null
  "$SYSPY" "$FIX/witness_mutate.py" "$W" muts "$n" "$FAIR" forger.key
  [ "$(ls muts | wc -l)" -eq "$n" ]
  # every mutation as a bare trigger record, one gl-replay, one gl-damp
  for f in muts/*.json; do jq -cn --arg w "$PWD/$f" '{witness:$w}'; done >muts.triggers
  gl-replay --tries 1 --items items <muts.triggers >muts.replay || true
  [ "$(wc -l <muts.replay)" -eq "$n" ]
  # none was trusted, none carried weight
  jq -se 'all(.trusted != true and (.weight // 0) == 0)' muts.replay
  gl-damp --state m.state <muts.replay >m.state.out || true
  [ "$(penalty m.state "$FAIR")" = 0 ]
  [ "$(penalty m.state "$LEAK")" = 0 ]
  jq -se 'all(.suppressed | not)' m.state.out
  # the genuine witness through the documented pipeline: the leaking
  # release is suppressed
  gl-replay --tries 1 --items items <leak.calls.run | gl-damp --state m.state >m2.out || true
  jq -se --arg r "$LEAK" 'map(select(.release == $r)) | last | .suppressed' m2.out
}

@test "witness-trust: the snapshot store answers no witness of another host — a right and a wrong guess of a slot get the same answer, untrusted or trusted" {
  # A store as an upgraded host keeps it: a version 4 witness (the test
  # build's GL_TEST_WITNESS_STORE=1) left its snapshots in
  # GL_HOME/witnesses/slots/. A version 5 witness carries its own, and
  # gl-replay reads a version 5 witness's snapshots from it alone.
  LEAK=$(install_release "$FIX/releases/rp-seq")
  FAIR=$(install_release "$FIX/releases/wt-fair")
  envelope c1 "$LEAK" ocr_dup "$ITEMS" | gl-plan --policy "$POLICY" |
    GL_TEST_WITNESS_STORE=1 "$TBIN/gl-run" --policy "$POLICY" >leak.calls.run
  W=$(jq -r '.triggers[0].witness' leak.calls.run)
  jq -e '.version == 4 and (has("snapshots") | not)' "$W"
  local real
  real=$(jq -r .served.slot_sha256 "$W")
  [ -f "$GL_HOME/witnesses/slots/$real.json" ]
  wrong=$(jq -c '.served.slot_sha256 = ("f" * 64) | {served}' "$W")
  forge right.json --unsigned
  forge wrong.json --unsigned --set "$wrong"
  # untrusted, off: the store is an oracle (missing_snapshot only for the wrong guess)
  GL_TEST_WITNESS_TRUST_OFF=1 "$TBIN/gl-replay" --tries 1 --items items wrong.json >off.wrong || true
  GL_TEST_WITNESS_TRUST_OFF=1 "$TBIN/gl-replay" --tries 1 --items items right.json >off.right || true
  jq -e '.error == "missing_snapshot"' off.wrong
  jq -e '.error != "missing_snapshot"' off.right
  # untrusted, on: refused before the store is read, the same words either way
  "$TBIN/gl-replay" --tries 1 --items items wrong.json >on.wrong || true
  "$TBIN/gl-replay" --tries 1 --items items right.json >on.right || true
  jq -e '.error == "untrusted_witness"' on.wrong
  [ "$(jq -c 'del(.witness)' on.wrong)" = "$(jq -c 'del(.witness)' on.right)" ]
  # Signed by another host's key that the auditor trusts (--trust): the
  # store is this host's, not that host's. Off (GL_TEST_REPLAY_FOREIGN_STORE=1)
  # it answers the guess; on, neither guess reads it.
  gl-sign keygen other --no-passphrase >/dev/null
  forge right.json --key other.key
  forge wrong.json --key other.key --set "$wrong"
  jq -e '.version == 4' right.json
  GL_TEST_REPLAY_FOREIGN_STORE=1 "$TBIN/gl-replay" --trust other.pub --tries 1 --items items wrong.json >off.wrong || true
  GL_TEST_REPLAY_FOREIGN_STORE=1 "$TBIN/gl-replay" --trust other.pub --tries 1 --items items right.json >off.right || true
  jq -e '.trusted and .error == "missing_snapshot"' off.wrong
  jq -e '.trusted and .error != "missing_snapshot"' off.right
  "$TBIN/gl-replay" --trust other.pub --tries 1 --items items wrong.json >on.wrong || true
  "$TBIN/gl-replay" --trust other.pub --tries 1 --items items right.json >on.right || true
  jq -e '.trusted and .error == "missing_snapshot" and (.detail | contains("not read here"))' on.wrong
  [ "$(jq -c 'del(.witness, .detail)' on.wrong)" = "$(jq -c 'del(.witness, .detail)' on.right)" ]
}

# dodge_witness — a witness of wt-dodge's call under the deployer's
# limits.tmp_mb 32 ($W, $DODGE)
dodge_witness() {
  DODGE=$(install_release "$FIX/releases/wt-dodge")
  jq '.limits = {tmp_mb: 32}' "$POLICY" >p32.json
  envelope c1 "$DODGE" ocr_dodge "$ITEMS" | gl-plan --policy p32.json |
    gl-run --policy p32.json >dodge.run
  W=$(jq -r '.triggers[0].witness' dodge.run)
  [ -f "$W" ]
  jq -e '.limits.tmp_mb == 32 and .limits.memory_mb == 512' "$W"
}

@test "witness-trust: replay detection by the copies' bounds — with the auditor's limits the dodger is a state divergence (250); with the call's, recorded in the witness, a verified item witness (2000)" {
  dodge_witness
  GL_TEST_REPLAY_BOUNDS_OFF=1 "$TBIN/gl-replay" --tries 2 --items items "$W" >off.v
  jq -e '.outcome == "state_divergence" and .event == "unverified" and .weight == 250' off.v
  "$TBIN/gl-replay" --tries 2 --items items "$W" >on.v
  jq -e '.outcome == "item_witness" and .event == "verified" and .weight == 2000' on.v
  # each bound at most the auditor's: a witness of 100 MiB gets the
  # default 64 (the dodger behaves), or --policy's 32 (it leaks)
  "$SYSPY" "$FIX/witness_seal.py" "$W" big.json --key "$GL_HOME/keys/witness.key" \
    --set "$(jq -c '.limits.tmp_mb = 100 | {limits}' "$W")"
  "$TBIN/gl-replay" --tries 2 --items items big.json >cap64.v
  jq -e '.outcome == "state_divergence"' cap64.v
  "$TBIN/gl-replay" --policy p32.json --tries 2 --items items big.json >cap32.v
  jq -e '.outcome == "item_witness"' cap32.v
}

@test "witness-trust: the witness does not choose the replay's time — an hour per copy is cut to --max-deadline, the runs to --max-time; every refusal of a trusted witness counts" {
  dodge_witness
  # the host's own gl-run could have run with --deadline 3600
  "$SYSPY" "$FIX/witness_seal.py" "$W" hour.json --key "$GL_HOME/keys/witness.key" \
    --set '{"deadline_ms":3600000}'
  # off: the hour is taken as given (every run started, each allowed 3600 s)
  GL_TEST_REPLAY_BOUNDS_OFF=1 "$TBIN/gl-replay" --max-time 5 --tries 1 --items items hour.json >off.v
  jq -e 'has("outcome") and .tries == 1' off.v
  # on: a run that could pass --max-time is not started; the trigger counts
  "$TBIN/gl-replay" --max-time 5 --tries 1 --items items hour.json >on.v && false
  jq -e '.error == "replay_time" and (.detail | startswith("0 of 2 runs"))
    and .event == "unverified" and .weight == 250 and .trusted' on.v
  # with --max-deadline under --max-time, the runs go ahead, each cut
  "$TBIN/gl-replay" --max-deadline 2 --max-time 30 --tries 1 --items items hour.json >cut.v
  jq -e '.outcome == "item_witness"' cut.v
  # incomplete (a bound cut its replies) or its items missing: still an event
  "$SYSPY" "$FIX/witness_seal.py" "$W" cut.json --key "$GL_HOME/keys/witness.key" \
    --set '{"complete":false}'
  mkdir -p none
  cat on.v <("$TBIN/gl-replay" --tries 1 --items items cut.json || true) \
    <("$TBIN/gl-replay" --tries 1 --items none "$W" || true) >refusals.v
  jq -se 'map(.error) == ["replay_time","incomplete_witness","missing_item"]
    and all(.event == "unverified" and .weight == 250)' refusals.v
  # each is counted (one witness id: each on a state of its own)
  for i in 1 2 3; do
    sed -n "${i}p" refusals.v | gl-damp --state "r$i.state" >"r$i.out"
    [ "$(penalty "r$i" "$DODGE")" = 250 ]
  done
}

@test "witness-trust: no free trigger by padding — reply text past the transcript's 4 MiB is carried by hash: off, every witness incomplete (250); on, complete and verified (2000)" {
  PAD=$(install_release "$FIX/releases/wt-pad")
  envelope c1 "$PAD" ocr_pad "$ITEMS" >pad.calls
  # off (GL_TEST_WITNESS_REPLIES_DROP=1): the replies past 4 MiB are dropped
  gl-plan --policy "$POLICY" <pad.calls |
    GL_TEST_WITNESS_REPLIES_DROP=1 "$TBIN/gl-run" --policy "$POLICY" >off.run
  w=$(jq -r '.triggers[0].witness' off.run)
  jq -e '.complete == false and .replies == {}' "$w"
  gl-replay --tries 1 --items items <off.run >off.v || true
  jq -se 'map(select(.witness)) | .[0] | .error == "incomplete_witness" and .weight == 250' off.v
  # on: the same call; the pages past the budget travel in "replies"
  run_calls pad.calls
  w=$(jq -r '.triggers[0].witness' pad.calls.run)
  jq -e '.complete and (.replies | length) >= 2
    and ([.transcript[] | select(.reply_sha256)] | length) == (.replies | length)' "$w"
  gl-replay --tries 2 --items items <pad.calls.run >on.v
  jq -se 'map(select(.witness)) | .[0] | .outcome == "item_witness" and .event == "verified"
    and .weight == 2000 and .trusted' on.v
  # a carried reply edited and re-signed by the host: bad_snapshot, still counted
  h=$(jq -r '.replies | keys[0]' "$w")
  printf '{"text":"other"}' | carry |
    jq -c --arg h "$h" --slurpfile o "$w" '{replies: ($o[0].replies + {($h): .})}' >set.json
  "$SYSPY" "$FIX/witness_seal.py" "$w" edited.json --key "$GL_HOME/keys/witness.key" --set @set.json
  "$TBIN/gl-replay" --tries 1 --items items edited.json >edited.v && false
  jq -e '.error == "bad_snapshot" and (.detail | startswith("reply")) and .weight == 250' edited.v
}

@test "witness-trust: framing by a view — a witness whose view leaves out an item its horizon covers is refused, even signed by the host; with the derivation off it frames an honest flow" {
  FAIR=$(install_release "$FIX/releases/wt-fair")
  # a real witness: the invoice labelled hr, so ocr.example (finance) may
  # not see it, and the release that sends it there is a leak
  envelope c1 "$FAIR" ocr_fair "[$(item invoice.txt '["hr"]' "$INVOICE")]" >hr.calls
  run_calls hr.calls
  W=$(jq -r '.triggers[0].witness' hr.calls.run)
  jq -e '.served.view == [] and .served.horizon == ["finance"]' "$W"
  "$TBIN/gl-replay" --tries 2 --items items "$W" >real.v
  jq -e '.outcome == "item_witness" and .trusted' real.v
  # the forgery: the invoice public ([]), the view still [] — an honest
  # release's public invoice to ocr.example made to look like a leak
  "$SYSPY" "$FIX/witness_seal.py" "$W" view.json --key "$GL_HOME/keys/witness.key" \
    --set "$(jq -c '.items[0].label = [] | {items}' "$W")"
  GL_TEST_WITNESS_VIEWS_OFF=1 "$TBIN/gl-replay" --tries 2 --items items view.json >off.v
  jq -e '.outcome == "item_witness" and .event == "verified" and .weight == 2000' off.v
  "$TBIN/gl-replay" --tries 2 --items items view.json >on.v && false
  jq -e '.error == "bad_witness" and (.detail | contains("served.view: leaves out item \"invoice.txt\""))' on.v
}

@test "witness-trust: replay detection by os.scandir — a file the copy writes shows the twin's time through DirEntry.stat() too; off, the dodger behaves under replay, and the mirror run makes it declared_broken" {
  SCAN=$(install_release "$FIX/releases/wt-scan")
  envelope c1 "$SCAN" ocr_scan "$ITEMS" >scan.calls
  local mode
  for mode in off on; do
    local sw=()
    [ "$mode" = off ] && sw=(env GL_TEST_SCAN_TWIN_OFF=1)
    gl-plan --policy "$POLICY" <scan.calls | "${sw[@]}" "$TBIN/gl-run" --policy "$POLICY" >"$mode.run"
    W=$(jq -r '.triggers[0].witness' "$mode.run")
    [ -f "$W" ]
    # a replay 100 s after the call: every recorded clock 100 s back
    "$SYSPY" "$FIX/witness_seal.py" "$W" "$mode.json" --key "$GL_HOME/keys/witness.key" \
      --set "$(jq -c '.import_twin.sec -= 100 | .served.twin.sec -= 100
        | .comparing.twin.sec -= 100 | {import_twin, served, comparing}' "$W")"
    env "${sw[@]:1}" GL_TEST_REPLAY_MIRROR_OFF=1 "$TBIN/gl-replay" --tries 2 --items items "$mode.json" >"$mode.v"
  done
  jq -e '.outcome == "state_divergence" and .weight == 250' off.v
  jq -e '.outcome == "item_witness" and .event == "verified" and .weight == 2000' on.v
  # With the twin off, the mirror run still catches the dodge: the
  # comparing copy's own inputs (W, its slot, its replies) no longer give
  # the requests it made, which a declared-deterministic release must
  GL_TEST_SCAN_TWIN_OFF=1 "$TBIN/gl-replay" --tries 2 --items items off.json >mirror.v
  jq -e '.outcome == "nondeterminism" and .event == "declared_broken" and .weight == 2000
    and .probe_differs == 0 and .control_differs == 0 and .mirror_differs == 2' mirror.v
  # a version 6 witness whose comparing transcript did not fit (null) has
  # no mirror run: the dodge is a state divergence again
  "$SYSPY" "$FIX/witness_seal.py" off.json nomirror.json --key "$GL_HOME/keys/witness.key" \
    --set '{"comparing_transcript":null}'
  GL_TEST_SCAN_TWIN_OFF=1 "$TBIN/gl-replay" --tries 2 --items items nomirror.json >nomirror.v
  jq -e '.outcome == "state_divergence" and (has("mirror_differs") | not)' nomirror.v
}

# madeup N — N result records of wt-fair (its real record, edited), each
# with one trigger whose witness "was too large to be written"
madeup() {
  local i
  for i in $(seq 1 "$1"); do
    head -1 fair.calls.run | jq -c --arg i "$i" --arg t "$(printf '%032x' "$i")" \
      '.id = "m\($i)" | .triggers = [{id: $t, destination: "ocr.example", kind: "extra",
        position: 1, witness: null,
        witness_error: "too_large: the witness is larger than the per-witness cap"}]
      | del(.triggers_signature)'
  done
}

@test "witness-trust: no free trigger from the stream — a pruned witness counts (the result record's triggers signed by the host); a made-up result record frames nobody" {
  real_witness
  # the record's triggers are signed with the key of its witnesses
  jq -e --slurpfile w "$W" '(.triggers_signature | keys) == ["keyid","public","signature"]
    and .triggers_signature.keyid == $w[0].producer.keyid' leak.calls.run
  # its witness pruned (or deleted) before gl-replay read it
  rm "$W"
  local mode
  for mode in off on; do
    local sw=()
    [ "$mode" = off ] && sw=(GL_TEST_REPLAY_TRIGGERS_UNSIGNED=1)
    env "${sw[@]}" "$TBIN/gl-replay" <leak.calls.run >"$mode.pruned" || true
    env "${sw[@]}" "$TBIN/gl-damp" --state "$mode.p" <"$mode.pruned" >"$mode.p.out" || true
  done
  jq -e -s 'map(select(.error == "io")) | length == 1 and (.[0] | has("event") | not)' off.pruned
  [ "$(penalty off.p "$LEAK")" = 0 ]
  jq -e -s --arg r "$LEAK" 'map(select(.error == "io")) | length == 1 and (.[0] | .release == $r
    and .event == "unverified" and .weight == 250 and .trusted and (.producer | length) == 64)' on.pruned
  [ "$(penalty on.p "$LEAK")" = 250 ]
  # a made-up results file naming the benign wt-fair: eight triggers "too
  # large to be written" — unsigned; signed by a forger's key; the host's
  # signature of the leak's record with its release changed
  madeup 8 >unsigned.jsonl
  gl-sign keygen forger --no-passphrase >/dev/null
  "$SYSPY" "$FIX/triggers_seal.py" unsigned.jsonl forger.jsonl forger.key
  jq -c --arg r "$FAIR" '.release = $r' leak.calls.run >edited.jsonl
  { GL_TEST_REPLAY_TRIGGERS_UNSIGNED=1 "$TBIN/gl-replay" <unsigned.jsonl || true; } |
    "$TBIN/gl-damp" --state off.m >off.m.out || true
  jq -e -s --arg r "$FAIR" '[.[] | select(.release == $r) | .penalty] | max > 1000' off.m.out
  local f
  for f in unsigned forger edited; do
    gl-replay <"$f.jsonl" >"$f.v" || true
    jq -e -s --arg r "$FAIR" 'map(select(.error)) | length > 0
      and all(.release == $r and .event == "unverified" and .weight == 0 and .trusted == false)' "$f.v"
    gl-damp --state "$f.s" <"$f.v" >"$f.s.out" || true
    [ "$(penalty "$f.s" "$FAIR")" = 0 ]
  done
  # trust is the auditor's choice of key: trusting the forger's makes the
  # same records count (so the check above can fail)
  { gl-replay --trust forger.pub <forger.jsonl || true; } | gl-damp --state trusted.s >trusted.s.out || true
  [ "$(penalty trusted.s "$FAIR")" != 0 ]
}
