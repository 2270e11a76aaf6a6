#!/usr/bin/env bats
# One line limit along gl-plan | gl-run | gl-replay | gl-damp (issue 13 item
# 7; SPEC §2; lib/jsonl.h; docs/pipeline.md "Line limit"). A copy may return
# up to 64 MiB, but no stage reads a line over 16 MiB: a release that pads its
# result past it would, if gl-run wrote the record as it is, get no verdict for
# its trigger and no penalty. gl-run writes instead an "oversized" record that
# keeps the triggers and the release; every stage answers a line over the
# limit with a record naming the release, which gl-damp counts.
#
# Real release (tests/fixtures/releases/pl-pad) signed and installed through
# the real chain, a real sink for ocr.example. The reference with the cap off
# is the record gl-run wrote before (the padded result as it is), fed to the
# same gl-replay | gl-damp. Lines are about 17 MiB: the limit plus 1 MiB.
# unprivileged: yes — gl-run and gl-replay work in a user namespace
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

LIMIT=$((16 << 20))

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":["finance","hr"],"ocr.example":["finance"]}}' >"$POLICY"
  R=$(install_release "$FIX/releases/pl-pad")
  CANARY="CANARY-$RANDOM$RANDOM"
}

teardown() {
  kill_started
  release_cleanup
}

# pad_call ID PAD — the padded call: an invoice (finance), a salary sheet (hr)
pad_call() {
  jq -cn --arg id "$1" --arg r "$R" --argjson pad "$2" --arg i "$(b64 INVOICE)" \
    --arg s "$(b64 "$CANARY")" '{id:$id,release:$r,function:"pad",args:{pad:$pad},
    items:[{name:"invoice.pdf",label:["finance"],data:$i},{name:"salary.csv",label:["hr"],data:$s}],
    consumers:["agent"]}'
}

# big_line FILE BYTES PREFIX_JSON — FILE holds one line of BYTES bytes: the
# object PREFIX_JSON (compact) with a "pad" string member added at its end
big_line() {
  "$SYSPY" - "$1" "$2" "$3" <<'PY'
import json, sys
path, n, prefix = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
head = json.dumps(prefix, separators=(",", ":"))[:-1] + ',"pad":"'
with open(path, "w") as f:
    f.write(head + "x" * (n - len(head) - 2) + '"}\n')
PY
}

# maxline FILE — bytes of FILE's longest line
maxline() { awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$1"; }

@test "a padded result that triggers: gl-run writes an oversized record with its triggers; gl-replay gives a verdict and the penalty grows (off: none)" {
  start_sink
  pad_call c1 $((LIMIT + (1 << 20))) >calls
  run bash -o pipefail -c "gl-plan --policy '$POLICY' <calls | gl-run --policy '$POLICY' --witness-items 3>&- |
    tee run.jsonl | gl-replay 2>replay.err | tee replay.jsonl | gl-damp --state damp.json"
  [ "$status" -eq 1 ] || { echo "$output"; cat replay.err; false; }
  # gl-run: one record within the limit, the values withheld, the trigger kept
  [ "$(wc -l <run.jsonl)" -eq 1 ]
  [ "$(maxline run.jsonl)" -le "$LIMIT" ]
  jq -e --arg r "$R" '.ok == false and .error == "oversized" and .id == "c1" and .release == $r
    and .function == "pad" and .mode == "germline" and .copies == 2
    and .results == [{consumer:"agent",ok:false,error:"oversized"}]
    and (.triggers | length) == 1 and (.detail | test("16 MiB"))' run.jsonl
  [ -f "$(jq -r '.triggers[0].witness' run.jsonl)" ]
  ! grep -q "$CANARY" run.jsonl
  # gl-replay: the record, then its verdict
  [ "$(wc -l <replay.jsonl)" -eq 2 ]
  sed -n 2p replay.jsonl | jq -e --arg r "$R" '.release == $r and .event == "verified_undeclared"'
  # gl-damp: the call, then the event: the penalty grew by the weight
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 2 ]
  printf '%s\n' "$output" | tail -1 | jq -e --arg r "$R" '.release == $r and .penalty >= 249'

  # off: the record as gl-run wrote it before the cap (the padded value and
  # the same trigger) — gl-replay cannot read it: no verdict, no penalty
  big_line old.jsonl $((LIMIT + (1 << 20))) "$(jq -c '{copies, elapsed_ms, enforcement,
    function, id, mode, ok:true, release, triggers}' run.jsonl)"
  run bash -o pipefail -c "gl-replay <old.jsonl 2>/dev/null | tee old-replay.jsonl | gl-damp --state old.json"
  [ "$status" -eq 1 ]
  [ "$(wc -l <old-replay.jsonl)" -eq 1 ]
  jq -e '.error == "too_long" and (has("event") | not)' old-replay.jsonl
  printf '%s\n' "$output" | jq -e --arg r "$R" '.release == $r and .penalty == 0'
}

@test "a line over the limit at every stage: an ok:false record naming the release, which gl-damp counts; none named: only the error" {
  env=$(jq -cn --arg r "$R" '{id:"big",release:$r,function:"pad",args:{}}')
  big_line env.jsonl $((LIMIT + 1)) "$env"
  local k=0
  for cmd in "gl-plan --policy $POLICY" "gl-run --policy $POLICY" gl-replay; do
    k=$((k + 1))
    run bash -c "$cmd <env.jsonl 3>&-"
    [ "$status" -eq 1 ] || { echo "$cmd: $output"; false; }
    json --arg r "$R" '.ok == false and .error == "too_long" and .release == $r and .id == "big"
      and (.detail | test("16777216"))' || { echo "$cmd: $output"; false; }
    # gl-damp counts it as a call to the release
    run bash -c "$cmd <env.jsonl 3>&- | gl-damp --state s$k.json"
    json --arg r "$R" '.release == $r and .suppressed == false and (.penalty | type) == "number"'
  done
  # gl-damp itself: counted, and said so
  run gl-damp --state d.json <env.jsonl
  [ "$status" -eq 1 ]
  json --arg r "$R" '.ok == false and .error == "too_long" and .release == $r and .id == "big"
    and .penalty == 0 and (.detail | test("counted as a call"))'
  # a line naming no release (its first bytes are no object): only the error
  head -c $((LIMIT + 10)) /dev/zero | tr '\0' x >anon.jsonl
  echo >>anon.jsonl
  run gl-damp --state d2.json <anon.jsonl
  [ "$status" -eq 1 ]
  json '.ok == false and .error == "too_long" and (has("release") | not)'
  # a release named inside a nested value is not taken for the record's
  big_line nested.jsonl $((LIMIT + 1)) "$(jq -cn --arg r "$R" '{id:"n",args:{release:$r}}')"
  run gl-damp --state d3.json <nested.jsonl
  json '.error == "too_long" and (has("release") | not)'
}

@test "gl-plan never writes a line over the limit: a planned envelope that would be is an oversized record gl-run passes on and gl-damp counts" {
  # an envelope a few bytes under the limit: the plan pushes it over
  env=$(jq -cn --arg r "$R" '{id:"edge",release:$r,function:"pad",args:{},consumers:["agent"],
    items:[{name:"invoice.pdf",label:["finance"],data:""}]}')
  "$SYSPY" - "$env" $((LIMIT - 40)) >edge.jsonl <<'PY'
import json, sys
env, n = json.loads(sys.argv[1]), int(sys.argv[2])
env["items"][0]["data"] = ""
base = len(json.dumps(env, separators=(",", ":")))
env["items"][0]["data"] = "A" * ((n - base) // 4 * 4)
print(json.dumps(env, separators=(",", ":")))
PY
  [ "$(maxline edge.jsonl)" -le "$LIMIT" ]
  run bash -c "gl-plan --policy '$POLICY' <edge.jsonl"
  [ "$status" -eq 1 ]
  json --arg r "$R" '.ok == false and .error == "oversized" and .release == $r and .id == "edge"'
  run bash -o pipefail -c "gl-plan --policy '$POLICY' <edge.jsonl | gl-run --policy '$POLICY' 3>&- |
    gl-replay | gl-damp --state d.json"
  [ "$status" -eq 1 ]
  json --arg r "$R" '.release == $r and (.penalty | type) == "number"'
}
