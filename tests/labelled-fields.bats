#!/usr/bin/env bats
# Labelled fields (issue 13 item 6; issue 14 items 2 and 6; SPEC §6 "Nothing
# a copy chose reaches a consumer outside a labelled value"; docs/gl-run.md
# "Field labels"). A release that knows the mechanism (tests/fixtures/
# releases/lf-leak) has its hr-viewing copy encode an hr secret in what the
# broker reports — a denied host name, the count of requests delivered to
# its own hr destination, the position of a trigger it raises on purpose,
# the text of a tool error — rather than in anything it sends. Real gl-run,
# real sinks on loopback, a release signed and installed through the chain.
#
# Off/on: the test build (build/testing/bin/gl-run) with
# GL_TEST_META_UNLABELLED=1 passes every field to every MCP consumer, as
# before: the public consumer recovers the secret from _meta.germline and
# from the error. With the mechanism on (the same binary, no switch; and
# bin/gl-run) the public consumer gets none of it, while the record on
# stdout (the operator's) keeps every field, each with its label.
#
# Denied names are tallied per copy (tests/unit/tally_test.c): an hr copy
# flooding names cannot push a public copy's into "(other)".
#
# And the field table: every field gl-run emitted in these runs (record and
# _meta.germline, as jq paths with array indices folded) must be a row of
# the table in docs/gl-run.md, so that a new field cannot slip in
# unclassified.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D/pub" "$D/hr"
  K=$((3 + RANDOM % 7))            # what the counts and the position encode
  SECRET="$K-$RANDOM$RANDOM"       # what the names and the texts encode
  echo "$SECRET" >"$D/hr/secret.txt"
  echo "public text" >"$D/pub/doc.txt"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg pub "$D/pub/**" --arg hr "$D/hr/**" \
    '{clearances:{pub:[],"pub.example":[],"hr.example":["hr"],op:["hr"]},routes:{},
      labels:{($pub):[],($hr):["hr"]}}' >"$POLICY"
  sink pub.example
  sink hr.example
  REL=$(install_release "$FIX/releases/lf-leak")
  TGLRUN=$GL_ROOT/build/testing/bin/gl-run
  ARGS=$(jq -cn --arg d "$D/pub/doc.txt" --arg s "$D/hr/secret.txt" '{doc:$d,secret:$s}')
}

teardown() { kill_pids; release_cleanup; }

# mcp BIN CONSUMER [flags…] — one tools/call of leak and one of fail through
# BIN --serve-mcp; the answers in $BATS_TEST_TMPDIR/mcp.out
mcp() {
  local bin=$1 consumer=$2
  shift 2
  jq -cn --argjson a "$ARGS" \
    '{jsonrpc:"2.0",id:1,method:"initialize",params:{protocolVersion:"2025-06-18",capabilities:{},clientInfo:{name:"t",version:"1"}}},
     {jsonrpc:"2.0",id:2,method:"tools/call",params:{name:"leak",arguments:$a}}' |
    "$bin" --serve-mcp --release "$REL" --policy "$POLICY" --consumer "$consumer" "$@" \
      >"$BATS_TEST_TMPDIR/mcp.out" 2>"$BATS_TEST_TMPDIR/mcp.err" 3>&-
  jq -cn --argjson a "$ARGS" '{jsonrpc:"2.0",id:3,method:"tools/call",params:{name:"fail",arguments:$a}}' |
    "$bin" --serve-mcp --release "$REL" --policy "$POLICY" --consumer "$consumer" --mode nosplit "$@" \
      >>"$BATS_TEST_TMPDIR/mcp.out" 2>>"$BATS_TEST_TMPDIR/mcp.err" 3>&- || true # a refused call: 1
  [ "$(wc -l <"$BATS_TEST_TMPDIR/mcp.out")" -eq 3 ]
  ! grep -E 'Sanitizer|runtime error' "$BATS_TEST_TMPDIR/mcp.err" # the sanitizer pass
}

# recovered FILE — what of the secret a reader of FILE gets: the name, the
# request count 1+K to hr.example, the trigger position K, the error text
recovered() {
  jq -sc --arg s "$SECRET" --argjson k "$K" '
    (tostring | contains($s)) as $text
    | [.[] | .. | objects | select(.destination == "hr.example") | .requests] as $req
    | [.[] | .. | objects | select(.kind == "mismatch") | .position] as $pos
    | {text: $text, requests: ($req | index(1 + $k) != null), position: ($pos | index($k) != null)}' "$1"
}

@test "the record: every field the hr copy chose is there for the operator, labelled hr; the public entries hold none of it" {
  jq -cn --arg r "$REL" --argjson a "$ARGS" \
    '{id:"c1",release:$r,function:"leak",args:$a,items:[],consumers:["pub"]}' >calls.jsonl
  gl-run --policy "$POLICY" <calls.jsonl >out.jsonl 2>err.txt 3>&- || { cat err.txt; false; }
  cat out.jsonl >>"$BATS_TEST_TMPDIR/emitted.jsonl"
  jq -e --arg s "$SECRET" --argjson k "$K" '
    .ok and .copies == 2 and (.results | map(del(.withheld))) == [{consumer:"pub",ok:true,value:"public",label:[]}]
    # from the plan: the hr item its copy was not given, by the name the call gave
    and (.results[0].withheld | length) == 1
    # the hr copy chose these; each is there, labelled hr
    and ([.denied, .labels.denied] | transpose | map(select(.[0].destination == "k\($s).evil.example")) == [[{destination:"k\($s).evil.example",requests:1},["hr"]]])
    and ([.delivered, .labels.delivered] | transpose | map(select(.[0].destination == "hr.example")) == [[{destination:"hr.example",requests:(1 + $k)},["hr"]]])
    and (.triggers | length == 1) and .triggers[0].position == $k and .labels.triggers == [["hr"]]
    # the public copy chose these: public
    and ([.denied, .labels.denied] | transpose | map(select(.[0].destination == "pub-fixed.evil.example")) == [[{destination:"pub-fixed.evil.example",requests:1},[]]])
    and ([.delivered, .labels.delivered] | transpose | map(select(.[0].destination == "pub.example")) == [[{destination:"pub.example",requests:10},[]]])
    and .labels.call == ["hr"]' out.jsonl
  # What the record's rule gives the public consumer (its results entry and
  # the entries labelled []): none of the secret.
  jq -c '{results: [.results[] | select(.consumer == "pub")],
          denied: [[.denied, .labels.denied] | transpose[] | select(.[1] == []) | .[0]],
          delivered: [[.delivered, .labels.delivered] | transpose[] | select(.[1] == []) | .[0]],
          triggers: [[.triggers, .labels.triggers] | transpose[] | select(.[1] == []) | .[0]]}' out.jsonl >pub.json
  [ "$(recovered pub.json)" = '{"text":false,"requests":false,"position":false}' ]
  # The old shape (no labels) held the secret in all three for any reader.
  [ "$(recovered out.jsonl)" = '{"text":true,"requests":true,"position":true}' ]
}

@test "serve-mcp, mechanism off (test build): a public consumer recovers the secret from _meta.germline and the error text" {
  [ -x "$TGLRUN" ] || skip "build/testing/bin/gl-run is not built (make units)"
  export GL_TEST_META_UNLABELLED=1
  mcp "$TGLRUN" pub
  unset GL_TEST_META_UNLABELLED
  [ "$(recovered "$BATS_TEST_TMPDIR/mcp.out")" = '{"text":true,"requests":true,"position":true}' ] ||
    { cat "$BATS_TEST_TMPDIR/mcp.out" "$BATS_TEST_TMPDIR/mcp.err"; false; }
  jq -se --arg s "$SECRET" '.[2].error.data.detail | contains("SECRET=" + $s)' "$BATS_TEST_TMPDIR/mcp.out"
}

@test "serve-mcp, mechanism on: the public consumer gets none of it; a consumer cleared for hr gets it, labelled" {
  for bin in "$GL_ROOT/bin/gl-run" "$TGLRUN"; do
    [ -x "$bin" ] || continue
    mcp "$bin" pub
    cat "$BATS_TEST_TMPDIR/mcp.out" >>"$BATS_TEST_TMPDIR/emitted.mcp"
    [ "$(recovered "$BATS_TEST_TMPDIR/mcp.out")" = '{"text":false,"requests":false,"position":false}' ] ||
      { cat "$BATS_TEST_TMPDIR/mcp.out" "$BATS_TEST_TMPDIR/mcp.err"; false; }
    # the public copy's own fields stay, with their labels; the tool error
    # labelled hr is a fixed text
    jq -se '.[1].result._meta.germline
      | .delivered == [{destination:"pub.example",requests:10}] and .labels.delivered == [[]]
        and .denied == [{destination:"pub-fixed.evil.example",requests:1}] and .labels.denied == [[]]
        and .triggers == [] and .copies == 2 and .label == []' "$BATS_TEST_TMPDIR/mcp.out"
    jq -se '.[2].error | .data == {error:"not_cleared"} and (.message | startswith("germline: not_cleared"))' \
      "$BATS_TEST_TMPDIR/mcp.out"
  done
  # op is cleared for hr: it is given the fields (and the error) with their label
  mcp "$GL_ROOT/bin/gl-run" op
  cat "$BATS_TEST_TMPDIR/mcp.out" >>"$BATS_TEST_TMPDIR/emitted.mcp"
  jq -se --arg s "$SECRET" --argjson k "$K" '
    (.[1].result._meta.germline | (.delivered | map(select(.destination == "hr.example")) == [{destination:"hr.example",requests:(1 + $k)}])
      and .triggers[0].position == $k and .labels.triggers == [["hr"]])
    and .[2].error.data.error == "tool_error" and .[2].error.data.label == ["hr"]
    and (.[2].error.data.detail | contains("SECRET=" + $s))' "$BATS_TEST_TMPDIR/mcp.out"
}

@test "every field emitted (record, results, errors, _meta.germline) is a row of the field table in docs/gl-run.md" {
  # The rows: `path` in the first column of the table under "## Field labels".
  awk '/^## Field labels/{t=1; next} /^## /{t=0} t && /^\| `/' "$GL_ROOT/docs/gl-run.md" |
    sed -E 's/^\| `([^`]+)`.*/\1/' | sort -u >table.txt
  [ -s table.txt ]
  # Runs covering results, denied, delivered, triggers, tool errors,
  # refusals, MCP answers for a public and an hr-cleared consumer.
  jq -cn --arg r "$REL" --argjson a "$ARGS" \
    '{id:"c1",release:$r,function:"leak",args:$a,items:[],consumers:["pub","op"]},
     {id:"c2",release:$r,function:"fail",args:$a,items:[],consumers:["pub"]},
     {id:"c3",release:$r,function:"nope",args:{},items:[],consumers:["pub"]},
     {id:"c4",release:("0" * 64),function:"leak",args:{},items:[],consumers:["pub"]}' >calls.jsonl
  local m
  for m in germline nosplit lazy fresh; do
    # exit 1: c2–c4 are refused; anything else (a sanitizer's 86, 87) fails
    gl-run --policy "$POLICY" --mode $m <calls.jsonl >>out.jsonl 2>>err.txt 3>&- || [ $? -eq 1 ]
  done
  ! grep -E 'Sanitizer|runtime error' err.txt
  jq -se '[.[] | select(.id == "c1") | .mode] == ["germline", "nosplit", "lazy", "fresh"]
          and all(.[] | select(.id == "c1"); .ok and (.labels.denied | length) == (.denied | length))' out.jsonl
  mcp "$GL_ROOT/bin/gl-run" pub
  cat "$BATS_TEST_TMPDIR/mcp.out" >mcp.jsonl
  mcp "$GL_ROOT/bin/gl-run" op
  cat "$BATS_TEST_TMPDIR/mcp.out" >>mcp.jsonl
  jq -se 'map(select(.id == "c2") | .results[0].error) | length == 4 and all(. == "tool_error")' out.jsonl
  # paths, array indices folded to [] and dropped at the end (an array
  # and its elements, a label and its tags, are one row)
  fold='[paths | map(if type == "number" then "[]" else . end) | join(".")] | unique | .[]'
  {
    jq -r "$fold" out.jsonl | sed 's/^/record./'
    jq -r '.result._meta.germline // empty | '"$fold" mcp.jsonl | sed 's/^/_meta.germline./'
    jq -r '.error.data // empty | '"$fold" mcp.jsonl | sed 's/^/error.data./'
  } | sed -E 's/\.\[\]/[]/g; s/(\[\])+$//' |
    # what a copy's value is made of is its own (labelled by results[].label)
    grep -Ev '^record\.results\[\]\.value\.|^record\.enforcement\.|^record\.receipts\[\]\.' |
    sort -u >emitted.txt
  [ -s emitted.txt ]
  comm -23 emitted.txt table.txt >missing.txt
  [ ! -s missing.txt ] || { echo "fields missing from docs/gl-run.md's table:"; cat missing.txt; false; }
}
