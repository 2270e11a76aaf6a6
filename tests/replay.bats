#!/usr/bin/env bats
# Witness records and gl-replay: paper §IV-F (twin execution, witnesses,
# probe replay), Definition 6, Theorem 2, Propositions 1–2, Table V and
# Table XIV (issue 5; SPEC §6, §7; docs/witness.md).
#
# Real gl-run sessions on real copies against a real HTTP sink on loopback,
# signed fixture releases (tests/fixtures/releases/rp-*), and gl-replay in
# the same confinement. Each evidence property is shown with its mechanism
# off where the paper has a reference: probe replay off (--no-probe, Table
# V) must misclassify the slot-only trigger, so the test can fail.
# unprivileged: yes — gl-run and gl-replay work in a user namespace
load helpers
load fixtures/run/helpers
load fixtures/run/replay
bats_require_minimum_version 1.5.0

setup() {
  replay_setup
}

teardown() { replay_teardown; }

# call ID FUNCTION ITEMS_JSON — an envelope for $REL, consumer agent
call() { envelope "$1" "$REL" "$2" "$3"; }

# session FILE [gl-run flags…] — gl-plan | gl-run; records in $BATS_TEST_TMPDIR/results
session() {
  local f=$1
  shift
  gl-plan --policy "$POLICY" <"$f" | gl-run --policy "$POLICY" "$@" >"$BATS_TEST_TMPDIR/results"
}

# archive_of SHA — the signed archive in the publisher's directory with that hash
archive_of() {
  local a
  for a in "$BATS_TEST_TMPDIR"/pub/*.tar.gz; do
    [ "$(sha256sum "$a" | cut -d' ' -f1)" = "$1" ] && { echo "$a"; return 0; }
  done
  return 1
}

# witnesses — the witness paths of every trigger in the results, in order
witnesses() { jq -r '.triggers[]?.witness' "$BATS_TEST_TMPDIR/results"; }

@test "item witnesses: added, omitted, duplicated, reordered requests are verified (Theorem 2)" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/rp-seq")
  for f in add omit dup swap fair; do call "$f" "ocr_$f" "$ITEMS"; done >calls
  session calls
  # One trigger per leaking function, none for the flow-compliant one.
  jq -e -s '[.[] | {(.id): [.triggers[].kind]}] | add ==
    {"add":["extra"],"omit":["missing"],"dup":["mismatch"],"swap":["mismatch"],"fair":[]}' \
    "$BATS_TEST_TMPDIR/results"
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" <"$BATS_TEST_TMPDIR/results"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  # Each result record passes through unchanged, then its verdicts.
  [ "$(printf '%s\n' "$output" | grep -c '"enforcement"')" -eq 5 ]
  json -s '[.[] | select(.outcome) | [.call, .outcome, .event, .weight, .probe_differs,
    .control_differs]] == [["add","item_witness","verified",2000,5,0],
    ["omit","item_witness","verified",2000,5,0],["dup","item_witness","verified",2000,5,0],
    ["swap","item_witness","verified",2000,5,0]]'
  json -s '[.[] | select(.outcome)] | all(.tries == 5 and .destination == "ocr.example"
    and .release == "'"$REL"'" and .replay == "probe")'
  # The order is gl-damp's: a call's record, then its verdicts.
  json -s '[.[] | if .outcome then "v" else .id end] == ["add","v","omit","v","dup","v","swap","v","fair"]'
  # gl-damp takes the stream as it comes: a call, then its verdict (+2000).
  run --separate-stderr bash -c 'gl-replay --items "$1" <"$2" | gl-damp --state "$3"' _ \
    "$BATS_TEST_TMPDIR/items" "$BATS_TEST_TMPDIR/results" "$BATS_TEST_TMPDIR/damp.json"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json -s '.[0].penalty == 0 and .[1].penalty == 2000 and .[1].suppressed'
  # The HR item never reached the OCR host, in the session or in replay.
  ! grep -q "$(b64 "$SALARY")" "$BATS_TEST_TMPDIR/ocr.example.log"
}


@test "Table V: capsule (a slot-only trigger) is a state divergence; with probe replay off, wrongly an item witness" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/rp-capsule")
  { call c1 ocr "$ITEMS"; call c2 ocr "$ITEMS"; } >calls
  session calls
  # Call 1: both slots empty, no trigger; call 2: the slots differ.
  jq -e -s '[.[] | .triggers | length] == [0, 1]' "$BATS_TEST_TMPDIR/results"
  w=$(witnesses)
  # Reference (Table V, probe replay off): the comparing copy's own slot.
  run --separate-stderr gl-replay --no-probe --items "$BATS_TEST_TMPDIR/items" "$w"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "item_witness" and .event == "verified" and .replay == "no_probe"'
  # Probe replay (Definition 6): d's slot and R(d) — Proposition 1.
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" "$w"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "state_divergence" and .event == "unverified" and .weight == 250'
  json '.probe_differs == 0 and .control_differs == 0 and .tries == 5'
  # the mirror run (the comparing copy's own slot and replies) gives back
  # the requests it made: the release is what it declared
  json '.mirror_differs == 0'
}

@test "O5: a per-horizon call counter fires the tripwire once, a state divergence of weight 250" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/rp-counter")
  {
    call c1 ocr "$INVOICE_ONLY"; call c2 ocr "$INVOICE_ONLY"
    call c3 ocr "$ITEMS"; call c4 ocr "$INVOICE_ONLY"
  } >calls
  session calls
  # One copy for finance-only calls; the hr call's two horizons' counters
  # differ (3 against 1): exactly one trigger in the session, on c3.
  jq -e -s '[.[] | [.id, .copies, (.triggers | length)]] ==
    [["c1",1,0],["c2",1,0],["c3",2,1],["c4",1,0]]' "$BATS_TEST_TMPDIR/results"
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" <"$BATS_TEST_TMPDIR/results"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json -s '[.[] | select(.outcome)] | length == 1'
  json -s '.[] | select(.outcome) | .call == "c3" and .outcome == "state_divergence"
    and .event == "unverified" and .weight == 250 and .mirror_differs == 0'
  # Reference: probe replay off confirms it (a false item witness).
  run --separate-stderr gl-replay --no-probe --items "$BATS_TEST_TMPDIR/items" "$(witnesses)"
  json '.outcome == "item_witness"'
}

@test "second machine: the witness file alone, signed archive and items in a fresh GL_HOME give the same verdict" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/rp-seq")
  OTHER=$(install_release "$FIX/releases/rp-counter")
  call c1 ocr_dup "$ITEMS" >calls
  # Off (GL_TEST_WITNESS_STORE=1, the test build): the witness names its
  # slot snapshots in the producer's store; moved alone it cannot be replayed.
  gl-plan --policy "$POLICY" <calls | GL_TEST_WITNESS_STORE=1 "$GL_ROOT/build/testing/bin/gl-run" \
    --policy "$POLICY" >"$BATS_TEST_TMPDIR/results"
  mkdir -p off
  cp "$(witnesses)" off/w.json
  jq -e '.version == 4 and (has("snapshots") | not)' off/w.json
  session calls
  w=$(witnesses)
  jq -e '.version == 6 and (.snapshots | length) >= 1' "$w"
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" "$w"
  [ "$status" -eq 0 ]
  local here=$output
  # Only the witness file (it carries the slot snapshots it names), the
  # archive and the items travel...
  mkdir -p m2/items
  cp "$w" m2/w.json
  cp "$(archive_of "$REL")" m2/rel.tar.gz
  cp "$BATS_TEST_TMPDIR/items"/* m2/items/
  # ...and the producing host's public key, which the auditor trusts
  cp "$GL_HOME"/keys/trusted/*.pub m2/host.pub
  export GL_HOME=$BATS_TEST_TMPDIR/fresh
  run --separate-stderr gl-replay --trust m2/host.pub --release m2/rel.tar.gz --items m2/items off/w.json
  [ "$status" -eq 1 ]
  json '.error == "missing_snapshot" and .event == "unverified"'
  # without the key, nobody vouches for the witness: not replayed, weight 0
  run --separate-stderr gl-replay --release m2/rel.tar.gz --items m2/items m2/w.json
  [ "$status" -eq 1 ]
  json '.error == "untrusted_witness" and .trusted == false and .weight == 0'
  run --separate-stderr gl-replay --trust m2/host.pub --release m2/rel.tar.gz --items m2/items m2/w.json
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$output" = "$here" ]
  json '.outcome == "item_witness" and .event == "verified"'
  [ ! -e "$GL_HOME/releases" ] && [ ! -e "$GL_HOME/witnesses" ]
  # --release DIR (SPEC §7): the archive in it whose hash matches is used.
  mkdir -p m2/dl
  cp "$(archive_of "$OTHER")" m2/dl/other.tar.gz
  cp m2/rel.tar.gz m2/dl/rel.tar.gz
  run --separate-stderr gl-replay --trust m2/host.pub --release m2/dl --items m2/items m2/w.json
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$output" = "$here" ]
  rm m2/dl/rel.tar.gz
  run --separate-stderr gl-replay --trust m2/host.pub --release m2/dl --items m2/items m2/w.json
  [ "$status" -eq 1 ]
  json '.ok == false and .error == "hash"'
  # Another release's archive: refused before anything runs (exit 1).
  run --separate-stderr gl-replay --trust m2/host.pub --release "$(archive_of "$OTHER")" --items m2/items m2/w.json
  [ "$status" -eq 1 ]
  json '.ok == false and .error == "hash" and (.detail | contains("'"$OTHER"'"))'
  # Without --release and nothing installed in the fresh GL_HOME.
  run --separate-stderr gl-replay --trust m2/host.pub --items m2/items m2/w.json
  [ "$status" -eq 1 ]
  json '.error == "unknown_release"'
  # Without the items the probe needs.
  rm m2/items/salary.csv
  run --separate-stderr gl-replay --trust m2/host.pub --release m2/rel.tar.gz --items m2/items m2/w.json
  [ "$status" -eq 1 ]
  json '.error == "missing_item" and (.detail | contains("salary.csv"))'
}

@test "tampered, truncated or edited witnesses and changed releases are refused (exit 1)" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/rp-seq")
  call c1 ocr_swap "$ITEMS" >calls
  session calls
  w=$(witnesses)
  cp "$w" orig.json
  # One byte changed inside a string (the seed): still canonical JSON.
  "$SYSPY" -c 'import sys; b = open(sys.argv[1], "rb").read(); i = b.index(b"\"seed\":\"") + 8
c = b"0" if b[i:i + 1] != b"0" else b"1"; sys.stdout.buffer.write(b[:i] + c + b[i + 1:])' orig.json >byte.json
  if cmp -s orig.json byte.json; then echo "byte.json is unchanged"; false; fi
  run --separate-stderr gl-replay --items items byte.json
  [ "$status" -eq 1 ]
  json '.error == "bad_witness" and (.detail | contains("record_sha256 does not match"))'
  # A field edited and the file re-written in key order.
  jq -cS '.destination = "evil.example"' orig.json | tr -d '\n' >edit.json
  run --separate-stderr gl-replay --items items edit.json
  [ "$status" -eq 1 ]
  json '.error == "bad_witness"'
  # Truncated.
  head -c 1000 orig.json >trunc.json
  run --separate-stderr gl-replay --items items trunc.json
  [ "$status" -eq 1 ]
  json '.error == "bad_witness" and (.detail | contains("canonical"))'
  # Re-sealed by someone who recomputed the digest: the fields are still
  # checked (an unknown field); re-signed with the host's own key, so the
  # checks behind the signature run too (an item name that escapes --items).
  "$SYSPY" "$FIX/witness_seal.py" orig.json unknown.json --set '{"note":"x"}'
  local items
  items=$(jq -c '.items[1].name = "sub/../salary.csv"' orig.json | jq -c '{items}')
  "$SYSPY" "$FIX/witness_seal.py" orig.json badname.json --key "$GL_HOME/keys/witness.key" \
    --set "$items" --set "$(jq -c '.comparing.view[1] = "sub/../salary.csv" | {comparing}' orig.json)"
  # the same edit without the key: its signature no longer verifies
  "$SYSPY" "$FIX/witness_seal.py" badname.json badsig.json --set '{"deadline_ms":1000}'
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" badsig.json
  [ "$status" -eq 1 ]
  json '.error == "bad_witness" and (.detail | contains("signature"))'
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" unknown.json
  [ "$status" -eq 1 ]
  json '.error == "bad_witness" and (.detail | contains("unknown field"))'
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" badname.json
  [ "$status" -eq 1 ]
  json '.error == "bad_item"'
  # The untouched witness still verifies (the checks above can pass).
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" orig.json
  [ "$status" -eq 0 ]
  json '.outcome == "item_witness"'
  # Stream mode: the file no longer has the trigger's witness_sha256.
  cp byte.json "$w"
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" <"$BATS_TEST_TMPDIR/results"
  [ "$status" -eq 1 ]
  json -s '.[1].error == "tampered_witness" and .[1].witness == .[0].triggers[0].id'
  json -s '.[0].id == "c1"'
  cp orig.json "$w"
  # A file of the installed release changed after install: refused.
  chmod -R u+w "$GL_HOME/releases/$REL"
  echo "# changed" >>"$GL_HOME/releases/$REL/rp_seq.py"
  run --separate-stderr gl-replay --items "$BATS_TEST_TMPDIR/items" orig.json
  [ "$status" -eq 1 ]
  json '.error == "hash" and (.detail | contains("rp_seq.py"))'
  # Usage and I/O errors are exit 2.
  run --separate-stderr gl-replay --tries 0 orig.json
  [ "$status" -eq 2 ]
  run --separate-stderr gl-replay nonexistent.json
  [ "$status" -eq 2 ]
  json '.error == "io"'
}

@test "trigger records name their witness; contents only with --witness-items" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/rp-seq")
  call c1 ocr_add "$ITEMS" >calls
  session calls
  w=$(witnesses)
  jq -e --arg h "$GL_HOME" '.triggers[0] | .witness == ($h + "/witnesses/" + .id + ".json")' \
    "$BATS_TEST_TMPDIR/results"
  [ "$(jq -r '.triggers[0].witness_sha256' "$BATS_TEST_TMPDIR/results")" = "$(sha256sum "$w" | cut -d' ' -f1)" ]
  [ "$(stat -c %a "$w")" = 600 ]
  jq -e '.items_included == false and ([.items[] | has("data")] == [false, false])' "$w"
  ! grep -q "$SALARY" "$w"
  ! grep -q "$(b64 "$SALARY")" "$w"
  session calls --witness-items
  w=$(witnesses)
  jq -e '.items_included == true' "$w"
  grep -q "$(b64 "$SALARY")" "$w"
  # A witness carrying its items verifies without --items.
  run --separate-stderr gl-replay "$w"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "item_witness"'
}

@test "--no-twin (ablation): copies get their own clock and seed; replay finds nondeterminism" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/annotate")
  envelope c1 "$REL" annotate "$ITEMS" '{"args":{"doc":"invoice.txt"}}' >calls
  # Twin inputs on (default): a flow-compliant tool reading clock and nonces, no trigger.
  session calls
  jq -e '.copies == 2 and .triggers == []' "$BATS_TEST_TMPDIR/results"
  session calls --no-twin
  jq -e '[.triggers[].kind] == ["mismatch"]' "$BATS_TEST_TMPDIR/results"
  w=$(witnesses)
  jq -e '.mode == "no_twin" and .served.twin != .comparing.twin' "$w"
  run --separate-stderr gl-replay --tries 2 --items "$BATS_TEST_TMPDIR/items" "$w"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "nondeterminism" and .event == "unverified" and .control_differs == 2'
}
