#!/usr/bin/env bats
# gl-run's broker: paper Algorithm 1 lines 5–28 (lib/broker/broker.c), Table VI
# (slot labels, the match bit, sequence comparison, the per-copy deadline,
# redirects, the two workflows), Table XII O4, hostile copy messages and bad
# envelopes (issue 4; SPEC §6; docs/gl-run.md).
#
# Every property is shown twice where the paper has a reference: first with
# the mechanism off — `--mode nosplit` (one copy holding everything: no
# split, nothing to compare) or the release run directly in one persistent
# python3 process (tests/fixtures/run/persistent.py, the unprotected run) —
# which must show the effect, so the test can fail; then under germline
# execution, which must not. Real components only: real HTTP sinks on
# loopback (tests/fixtures/sink.py), real copies, signed releases from
# tests/fixtures/releases/broker-*.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody (issue 4 item 8)
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":["finance","hr"],"fin-agent":["finance"],"pub-agent":[],
    "ocr.example":["finance"],"projx.example":["projx"]},"routes":{}}' >"$POLICY"
  SALARY="SALARY-$RANDOM$RANDOM"
  INVOICE="INVOICE-$RANDOM$RANDOM"
}

teardown() { kill_pids; release_cleanup; }

log_of() { echo "$BATS_TEST_TMPDIR/$1.log"; }
requests() { wc -l <"$(log_of "$1")" | tr -d ' '; }

# item NAME LABEL_JSON TEXT — one item with inline data
item() { jq -cn --arg n "$1" --argjson l "$2" --arg d "$(b64 "$3")" '{name:$n,label:$l,data:$d}'; }

# call ID FUNCTION ITEMS_JSON [ARGS_JSON] [CONSUMERS_JSON] — an envelope for $REL
call() {
  envelope "$1" "$REL" "$2" "${3:-[]}" \
    "$(jq -cn --argjson a "${4:-{\}}" --argjson c "${5:-[\"agent\"]}" '{args:$a,consumers:$c}')"
}

# session FILE [gl-run flags…] — gl-plan | gl-run over the envelopes in FILE
# (both in the same mode); output in $output, one record a line.
session() {
  local f=$1 mode=germline a
  shift
  for a in "$@"; do [ "$a" = nosplit ] && mode=nosplit; done
  run --separate-stderr bash -c 'gl-plan --policy "$1" --mode "$2" <"$3" |
    gl-run --policy "$1" "${@:4}"' _ "$POLICY" "$mode" "$f" "$@"
}

# unprotected FILE — the same envelopes in one persistent python3 process
unprotected() {
  run "$SYSPY" "$FIX/run/persistent.py" --release "$GL_HOME/releases/$REL" --policy "$POLICY" \
    <"$1"
}

# rec ID [JQ_ARGS…] FILTER — jq FILTER on the record with id ID in $output
rec() {
  local id=$1
  shift
  local f=${!#}
  printf '%s\n' "$output" | jq -sec --arg id "$id" "${@:1:$#-1}" \
    "[.[] | select(.id == \$id)] | if length == 1 then .[0] | ($f) else false end"
}

@test "O4: a projx host's reply never reaches a finance consumer (nosplit: it does)" {
  sink projx.example
  REL=$(install_release "$FIX/releases/broker-net")
  call o4 ask '[]' '{"q":"projx secret plan"}' '["fin-agent"]' >calls
  session calls --mode nosplit
  [ "$status" -eq 0 ]
  rec o4 '.copies == 1'
  rec o4 '.results[0].value.text == "projx secret plan"'
  session calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  rec o4 '.copies == 2'
  rec o4 '.results[0].consumer == "fin-agent" and .results[0].ok'
  rec o4 '.results[0].value.text == "" and .results[0].value.placeholder == "placeholder"'
  rec o4 '.results[0].label == []'
  rec o4 '.delivered == [{"destination":"projx.example","requests":1}] and .triggers == []'
}

@test "slot labels: an HR item stored and recalled by a public-only call comes back {hr}" {
  REL=$(install_release "$FIX/releases/broker-state")
  {
    call put remember "[$(item salary.csv '["hr"]' "$SALARY")]"
    call get recall '[]' '{"key":"salary.csv"}'
    call pput remember "[$(item menu.txt '[]' "soup")]" '{}' '["pub-agent"]'
    call pget recall '[]' '{"key":"menu.txt"}' '["pub-agent"]'
  } >calls
  # Reference (unprotected: one persistent process, no labels): the recall
  # does carry the HR item.
  unprotected calls
  [ "$status" -eq 0 ]
  rec get --arg s "$SALARY" '.value == $s'
  session calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  rec put '.results[0].label == ["hr"]'
  rec get --arg s "$SALARY" '.results[0].value == $s and .results[0].label == ["hr"]'
  # The public-only control: its own horizon, nothing uncleared, label [].
  rec pget '.results[0].value == "soup" and .results[0].label == []'
  # On disk: GL_HOME/slots/<release>/<sha256 of canonical ["finance","hr"]>.json
  local id
  id=$(printf '%s' '["finance","hr"]' | sha256sum | cut -c1-64)
  jq -e '."salary.csv".label == ["hr"]' "$GL_HOME/slots/$REL/$id.json"
}

@test "match bit: a request to an admissible host with a record joins its clearance" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/broker-net")
  # Copy 1 (ocr.example, empty view) sends an empty request when "always";
  # copy 2 (agent, view {salary}) sends the salary: a mismatch either way.
  {
    call rec send_items "[$(item salary.csv '["hr"]' "$SALARY")]" '{"always":true}'
    call norec send_items "[$(item salary.csv '["hr"]' "$SALARY")]" '{"always":false}'
  } >calls
  session calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  # With a record, the (mismatching) request learns from e's record: L ∋ finance.
  rec rec '.copies == 2 and .results[0].label == ["finance","hr"]'
  rec rec '[.triggers[].kind] == ["mismatch"]'
  # Without a record the same request learns nothing from e: L = {hr}.
  rec norec '.results[0].label == ["hr"]'
  rec norec '[.triggers[].kind] == ["extra"]'
  # The salary never reached the OCR host.
  ! grep -q "$(b64 "$SALARY")" "$(log_of ocr.example)"
}

@test "sequence comparison: extra, suppressed, duplicated, reordered → one trigger each" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/broker-net")
  local items="[$(item invoice.txt '["finance"]' "$INVOICE"),$(item salary.csv '["hr"]' "$SALARY")]"
  for f in extra suppressed duplicated reordered repeat; do
    call "$f" "seq_$f" "$items"
  done >calls
  # Reference (nosplit: one copy, nothing to compare): no trigger at all.
  session calls --mode nosplit
  [ "$status" -eq 0 ]
  [ "$(printf '%s\n' "$output" | jq -s '[.[].triggers[]] | length')" -eq 0 ]
  session calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  rec extra '[.triggers[] | [.kind, .position, .destination]] == [["extra",2,"ocr.example"]]'
  rec suppressed '[.triggers[] | [.kind, .position]] == [["missing",2]]'
  rec duplicated '[.triggers[] | [.kind, .position]] == [["mismatch",2]]'
  rec reordered '[.triggers[] | [.kind, .position]] == [["mismatch",1]]'
  rec extra '.triggers[0].id | test("^[0-9a-f]{32}$")'
  # Flow-compliant repeated identical request: no trigger, recorded replies.
  rec repeat '.triggers == [] and .results[0].value == ["A","A"]'
  rec repeat '.delivered == [{"destination":"ocr.example","requests":2}]'
}

@test "deadline: never finishes, keeps sending, waits on a slow host → killed; next call ok" {
  sink slow.example slow
  jq '.clearances["slow.example"] = []' "$POLICY" >"$POLICY.new" && mv "$POLICY.new" "$POLICY"
  REL=$(install_release "$FIX/releases/broker-deadline")
  {
    call spin spin
    call chatter chatter
    call slow wait_slow
    call quick quick
  } >calls
  session calls --deadline 2
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  for id in spin chatter slow; do
    rec "$id" '.ok and .results[0].ok == false and .results[0].error == "deadline"'
  done
  rec quick '.results[0].ok and .results[0].value == "quick"'
  # The slow host did receive the request (delivery started); chatter's
  # writes died with it (a killed copy leaves no state).
  [ "$(requests slow.example)" -eq 1 ]
  # no slot file (a slot's lock file, <id>.json.lock, is taken by every call)
  [ -z "$(ls "$GL_HOME/slots/$REL" 2>/dev/null | grep -v '\.json\.lock$')" ]
}

redirect_case() {
  local code=$1
  # The Location names the attacker sink by address, so a client (or a
  # broker) that followed it would really reach it.
  sink attacker.example
  local to="http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/attacker.example.port")/steal"
  sink redir.example "redirect$code" "$to"
  REL=$(install_release "$FIX/releases/broker-net")
  jq '.clearances["redir.example"] = ["finance"]' "$POLICY" >"$POLICY.new"
  mv "$POLICY.new" "$POLICY"
  local doc="twenty-one item bytes"
  call r submit "[$(item doc.txt '["finance"]' "$doc")]" '{"follow":true}' '["fin-agent"]' >calls
  # Reference (unprotected; the client follows the redirect): the attacker
  # host gets the request, for 307 with the item's bytes.
  unprotected calls
  [ "$status" -eq 0 ]
  [ "$(requests attacker.example)" -eq 1 ]
  if [ "$code" = 307 ]; then
    jq -e --arg b "$(b64 "$doc")" '.body == $b' "$(log_of attacker.example)"
  fi
  : >"$(log_of attacker.example)"
  : >"$(log_of redir.example)"
  session calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  # The broker did not follow: the copy got the 3xx, its own follow-up to an
  # undeclared host was denied, and 0 requests reached the attacker host.
  rec r ".results[0].value.status == $code"
  rec r '.results[0].value.followed == "refused: ConnectionRefusedError"'
  rec r '.denied == [{"destination":"127.0.0.1","requests":1}]'
  [ "$(requests redir.example)" -eq 1 ]
  [ "$(requests attacker.example)" -eq 0 ]
}

@test "redirects: a 302 to another host is not followed (0 requests reach it)" {
  redirect_case 302
}

@test "redirects: a body-preserving 307 to another host is not followed" {
  redirect_case 307
}

@test "workflows: notes through slots and invoice/payslip are identical to the unprotected run" {
  sink ocr.example
  REL=$(install_release "$FIX/releases/broker-state")
  {
    call n1 add_note '[]' '{"text":"first note."}'
    call n2 add_note '[]' '{"text":"second note."}'
    call n3 show_notes
  } >calls
  unprotected calls
  [ "$status" -eq 0 ]
  local ref
  ref=$(printf '%s\n' "$output" | jq -c -s 'map({id, value})')
  [ "$(printf '%s\n' "$output" | jq -r 'select(.id == "n3") | .value')" = "first note. second note." ]
  session calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(printf '%s\n' "$output" | jq -c -s 'map({id, value: .results[0].value})')" = "$ref" ]
  rec n3 '.results[0].label == [] and .triggers == []'

  # Invoice to the OCR host, payslip to the agent.
  REL=$(install_release "$FIX/releases/broker-net")
  call w ocr_annotate "[$(item invoice.txt '["finance"]' "$INVOICE"),$(item payslip.txt '["hr"]' "$SALARY")]" >calls2
  unprotected calls2
  [ "$status" -eq 0 ]
  ref=$(printf '%s\n' "$output" | jq -c '.value')
  local ref_req
  ref_req=$(jq -c '[.method, .path, .host, .body]' "$(log_of ocr.example)")
  : >"$(log_of ocr.example)"
  session calls2
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(rec w '.results[0].value')" = "$ref" ]
  [ "$(jq -c '[.method, .path, .host, .body]' "$(log_of ocr.example)")" = "$ref_req" ]
  rec w '.copies == 2 and .triggers == [] and .results[0].label == ["finance","hr"]'
}

@test "hostile messages kill that copy only (protocol), and the next call succeeds" {
  REL=$(install_release "$FIX/releases/broker-hostile")
  for k in malformed oversized unknown horizon second_call; do
    call "$k" raw '[]' "{\"kind\":\"$k\"}"
    call "after-$k" fine
  done >calls
  session calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  for k in malformed oversized unknown horizon second_call; do
    rec "$k" '.ok and .results[0].ok == false and .results[0].error == "protocol"'
    rec "$k" '.results[0].detail | length > 0'
    rec "after-$k" '.results[0].ok and .results[0].value == "fine"'
  done
  rec horizon '.results[0].detail | test("horizon")'
  [ -z "$(ls "$GL_HOME/slots/$REL" 2>/dev/null | grep -v '\.json\.lock$')" ] # no slot file
}

@test "bad envelopes give error records and the stream goes on (exit 1)" {
  REL=$(install_release "$FIX/releases/broker-state")
  call good show_notes | gl-plan --policy "$POLICY" >planned
  {
    echo 'not json'
    jq -c '.id = "tampered" | .plan.groups[0].view = ["x"]' planned
    jq -c '.id = "norel" | .release = ("0" * 64)' planned
    jq -c '.id = "nofn" | .function = "nope" | del(.plan)' planned
    jq -c '.id = "badid" | .items = [{"name":"a","label":["hr"],"data":"%%%"}] | del(.plan)' planned
    cat planned
  } >calls
  run --separate-stderr gl-run --policy "$POLICY" <calls
  [ "$status" -eq 1 ]
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 6 ]
  [ "$(printf '%s\n' "$output" | head -1 | jq -r .error)" = bad_json ]
  rec tampered '.ok == false and .error == "bad_plan"'
  rec norel '.ok == false and .error == "unknown_release"'
  rec nofn '.ok == false and .error == "unknown_function"'
  rec badid '.ok == false and .error == "bad_item"'
  rec good '.ok and .copies == 1 and .results[0].ok'
}

@test "--damp: a suppressed release is refused without copies" {
  REL=$(install_release "$FIX/releases/broker-state")
  jq -cn --arg r "$REL" '{witness:"w1",release:$r,destination:"ocr.example",
    outcome:"item_witness",event:"verified",weight:2000,tries:5,probe_differs:5,control_differs:0}' |
    gl-damp --state "$BATS_TEST_TMPDIR/damp.json" >/dev/null
  call s show_notes >calls
  session calls --damp "$BATS_TEST_TMPDIR/damp.json"
  [ "$status" -eq 1 ]
  rec s --arg r "$REL" '.ok == false and .error == "suppressed" and .release == $r'
  rec s '.copies == null'
}
