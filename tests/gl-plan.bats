#!/usr/bin/env bats
# gl-plan (SPEC §4; paper §IV-B, Algorithm 1 lines 1–4, Theorem 3, Lemma 2).
# Fixtures: tests/fixtures/plan/ — policy.json, manifests/*.json (installed
# per test as GL releases named by their SHA-256), calls/*.jsonl (@DOCS@ is
# the docs release's hash), policies/*.json.
load helpers
bats_require_minimum_version 1.5.0

P=$FIX/plan

setup() {
  gl_setup
  REL=$BATS_TEST_TMPDIR/releases
  DOCS=$(install_manifest "$P/manifests/docs.json")
}

# install_manifest FILE — install FILE as a release's manifest.json; prints
# the release hash (the SHA-256 of the manifest bytes stands in for the
# archive's: gl-plan only ever builds the path from it).
install_manifest() {
  local sha
  sha=$(sha256sum "$1" | cut -c1-64)
  mkdir -p "$REL/$sha"
  cp "$1" "$REL/$sha/manifest.json"
  echo "$sha"
}

calls() { sed -e "s/@DOCS@/$DOCS/g" -e "s#@UNREADABLE@#$BATS_TEST_TMPDIR/unreadable.pdf#g" "$P/calls/$1"; }
plan() { gl-plan --policy "$P/policy.json" --releases "$REL" "$@"; }
# line N of $output
line() { printf '%s\n' "$output" | sed -n "${1}p"; }

@test "usage: --help, --version, and usage errors exit 2" {
  run gl-plan --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"--policy FILE"* ]]
  run gl-plan --version
  [ "$status" -eq 0 ]
  [[ "$output" == "gl-plan "* ]]
  run --separate-stderr gl-plan </dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--policy is required"* ]]
  run --separate-stderr gl-plan --policy "$P/policy.json" --mode lazy </dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"germline or nosplit"* ]]
  run --separate-stderr gl-plan --policy "$P/policy.json" --frobnicate </dev/null
  [ "$status" -eq 2 ]
  run --separate-stderr gl-plan --policy "$BATS_TEST_TMPDIR/none.json" </dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == "gl-plan: policy "*"none.json: No such file"* ]]
  run --separate-stderr gl-plan --policy "$P/policy.json" --releases "$BATS_TEST_TMPDIR/nope" </dev/null
  [ "$status" -eq 2 ]
  [ -z "$output" ]
}

@test "paper Fig. 2c: {ocr.example} view {invoice}, then {agent} view {invoice, salary}" {
  run --separate-stderr plan < <(calls fig2c.jsonl)
  [ "$status" -eq 0 ]
  [ "$(json -c .plan)" = '{"destinations":["ocr.example"],"groups":[{"consumers":[],"destinations":["ocr.example"],"horizon":["finance"],"view":["invoice"]},{"consumers":["agent"],"destinations":[],"horizon":["finance","hr"],"view":["invoice","salary"]}]}' ]
  # The envelope itself comes back unchanged.
  [ "$(json -c 'del(.plan)')" = "$(calls fig2c.jsonl | jq -c .)" ]
}

@test "paper §IV-A: a public-only call to ocr.example (finance) and mail.example (projx) gives two groups with one view" {
  run --separate-stderr plan < <(calls public-two-hosts.jsonl)
  [ "$status" -eq 0 ]
  [ "$(json '.plan.groups | length')" = 2 ]
  [ "$(json -c '[.plan.groups[].view] | unique')" = '[["notes.txt","readme.txt"]]' ]
  [ "$(json -c '[.plan.groups[] | [.destinations, .horizon]]')" = '[[["ocr.example"],["finance"]],[["mail.example"],["projx"]]]' ]
  # With the agent (finance, hr) as consumer it joins ocr.example's group,
  # whose clearance lies inside its own: still two groups.
  run --separate-stderr plan < <(calls public-two-hosts.jsonl | jq -c 'del(.consumers)')
  [ "$(json -c '[.plan.groups[] | [.destinations, .consumers]]')" = '[[["ocr.example"],["agent"]],[["mail.example"],[]]]' ]
}

@test "a call whose members share one view and one clearance gives one group" {
  run --separate-stderr plan < <(calls one-group.jsonl)
  [ "$status" -eq 0 ]
  [ "$(json -c .plan.groups)" = '[{"consumers":["accountant"],"destinations":["ocr.example"],"horizon":["finance"],"view":["invoice","terms"]}]' ]
}

@test "the same input gives byte-identical output" {
  for f in fig2c public-two-hosts one-group bad-inputs; do calls $f.jsonl; done > in.jsonl
  for i in 1 2 3; do plan < in.jsonl > out$i.jsonl || true; done
  [ -s out1.jsonl ]
  cmp out1.jsonl out2.jsonl
  cmp out1.jsonl out3.jsonl
}

@test "data independence: unreadable or missing paths and invalid base64 plan identically (Definition 7)" {
  echo secret > unreadable.pdf
  chmod 000 unreadable.pdf
  run --separate-stderr plan < <(calls unreadable.jsonl)
  [ "$status" -eq 0 ]
  want=$(plan < <(calls fig2c.jsonl) | jq -c .plan)
  [ "$(line 1 | jq -c .plan)" = "$want" ]
  [ "$(line 2 | jq -c .plan)" = "$want" ]
  # and the item fields travel on untouched
  [ "$(line 2 | jq -r '.items[0].data')" = "%%% not base64 %%%" ]
}

@test "every bad input yields its error record and the next envelope still plans" {
  run --separate-stderr plan < <(calls bad-inputs.jsonl)
  [ "$status" -eq 1 ]
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 14 ]
  errs=$(printf '%s\n' "$output" | jq -c 'select(.ok == false) | [.id, .error]' | tr '\n' ' ')
  [ "$errs" = '[null,"bad_json"] ["b2","unknown_release"] ["b3","unknown_function"] ["b4","bad_label"] ["b5","bad_label"] ["b6","destinations_not_allowed"] ["b7","duplicate_item"] ' ]
  for i in 2 4 6 8 10 12 14; do
    [ "$(line $i | jq -r '.id + " " + (.plan.groups | length | tostring)')" = "ok$((i / 2)) 1" ]
  done
  [[ "$(line 1 | jq -r .detail)" == *"at byte"* ]]
  [[ "$(line 5 | jq -r .detail)" == *'no function "rm_rf"'* ]]
  [[ "$(line 9 | jq -r .detail)" == *"element 1 is a number"* ]]
  [[ "$(line 13 | jq -r .detail)" == *'two items are named "invoice"'* ]]
}

@test "an oversized line yields too_long and the stream goes on" {
  {
    $SYSPY -c 'import sys; sys.stdout.write("{\"id\":\"big\",\"pad\":\"" + "x" * (17 << 20) + "\"}\n")'
    calls fig2c.jsonl
  } > in.jsonl
  run --separate-stderr plan < in.jsonl
  [ "$status" -eq 1 ]
  [ "$(line 1 | jq -r .error)" = too_long ]
  [ "$(line 2 | jq -r '.plan.groups | length')" = 2 ]
}

@test "the release field is 64 lowercase hex, never a path" {
  mkdir -p "$BATS_TEST_TMPDIR/etc" && cp "$P/manifests/docs.json" "$BATS_TEST_TMPDIR/etc/manifest.json"
  for r in "../etc" "${DOCS^^}" "${DOCS}0" 42; do
    run --separate-stderr plan <<<"{\"id\":\"r\",\"release\":$(jq -n --arg r "$r" '$r'),\"function\":\"ocr_pdf\"}"
    [ "$status" -eq 1 ]
    [ "$(json -r .error)" = bad_envelope ]
    [[ "$(json -r .detail)" == "release: "* ]]
  done
}

@test "missing consumers means the agent; error records carry the envelope's id" {
  run --separate-stderr plan <<<"{\"id\":17,\"release\":\"$DOCS\",\"function\":\"summarize\"}"
  [ "$status" -eq 0 ]
  [ "$(json -c .plan.groups)" = '[{"consumers":["agent"],"destinations":[],"horizon":["finance","hr"],"view":[]}]' ]
  run --separate-stderr plan <<<"{\"id\":17,\"release\":\"$DOCS\",\"function\":\"summarize\",\"consumers\":\"agent\"}"
  [ "$(json -c '[.id, .error]')" = '[17,"bad_envelope"]' ]
  run --separate-stderr plan <<<"{\"id\":{\"x\":1},\"release\":\"$DOCS\",\"function\":\"summarize\"}"
  [ "$(json -c '[.id, .error]')" = '[null,"bad_envelope"]' ]
  # Zero members: nothing to serve, no group.
  run --separate-stderr plan <<<"{\"release\":\"$DOCS\",\"function\":\"summarize\",\"consumers\":[]}"
  [ "$(json -c .plan)" = '{"destinations":[],"groups":[]}' ]
}

@test "destinations come from the call only where the function declares destinations_from_call" {
  run --separate-stderr plan <<<"{\"release\":\"$DOCS\",\"function\":\"fetch\",\"destinations\":[\"blog.example\",\"x.example\"],\"consumers\":[]}"
  [ "$status" -eq 0 ]
  [ "$(json -c .plan.destinations)" = '["blog.example","x.example"]' ]
  [ "$(json -c '[.plan.groups[].destinations]')" = '[["blog.example","x.example"]]' ]
  # annotate_to: the manifest's ocr.example plus the call's.
  run --separate-stderr plan <<<"{\"release\":\"$DOCS\",\"function\":\"annotate_to\",\"destinations\":[\"mail.example\"],\"consumers\":[]}"
  [ "$(json -c .plan.destinations)" = '["mail.example","ocr.example"]' ]
  # A call destination must be a plain lowercase host.
  for d in "https://x.example" "X.example" "x.example:443" ""; do
    run --separate-stderr plan <<<"{\"release\":\"$DOCS\",\"function\":\"fetch\",\"destinations\":[\"$d\"]}"
    [ "$(json -r .error)" = bad_destination ]
  done
  # Omitted destinations on a from-call function: only the manifest's.
  run --separate-stderr plan <<<"{\"release\":\"$DOCS\",\"function\":\"fetch\"}"
  [ "$(json -c .plan.destinations)" = '[]' ]
}

@test "nosplit: one group holding every item and every member" {
  run --separate-stderr plan --mode nosplit < <(calls fig2c.jsonl)
  [ "$status" -eq 0 ]
  [ "$(json -c .plan.groups)" = '[{"consumers":["agent"],"destinations":["ocr.example"],"horizon":["finance"],"view":["invoice","salary"]}]' ]
}

@test "upstream error records pass through; blank lines are no records" {
  printf '%s\n' '{"ok":false,"error":"bad_json","detail":"x"}' '' '   ' > in.jsonl
  calls one-group.jsonl >> in.jsonl
  run --separate-stderr plan < in.jsonl
  [ "$status" -eq 1 ]
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 2 ]
  [ "$(line 1)" = '{"detail":"x","error":"bad_json","ok":false}' ]
  [ "$(line 2 | jq -r .id)" = one ]
}

@test "an envelope's own plan is replaced, never trusted" {
  run --separate-stderr plan < <(calls fig2c.jsonl | jq -c '.plan = {"groups":[{"destinations":["ocr.example"],"consumers":["agent"],"view":["invoice","salary"],"horizon":[]}]}')
  [ "$status" -eq 0 ]
  [ "$(json '.plan.groups | length')" = 2 ]
  [ "$(json -r '.plan.groups[0].view | join(",")')" = invoice ]
}

@test "items_from_args: files become items labelled by the policy's first matching glob" {
  run --separate-stderr plan <<<"{\"id\":\"f\",\"release\":\"$DOCS\",\"function\":\"read_files\",\"args\":{\"path\":\"/data/hr/2027/salary.csv\",\"paths\":[\"/data/finance/invoice.pdf\",\"/data/public/readme.txt\",\"/data/hr/2027/salary.csv\"]}}"
  [ "$status" -eq 0 ]
  [ "$(json -c '[.items[] | [.name, .label, .path]]')" = '[["/data/hr/2027/salary.csv",["hr"],"/data/hr/2027/salary.csv"],["/data/finance/invoice.pdf",["finance"],"/data/finance/invoice.pdf"],["/data/public/readme.txt",[],"/data/public/readme.txt"]]' ]
  [ "$(json -c '.plan.groups[0].view')" = '["/data/finance/invoice.pdf","/data/hr/2027/salary.csv","/data/public/readme.txt"]' ]
  # First match wins, in the policy's document order.
  run --separate-stderr gl-plan --policy "$P/policies/labels-reversed.json" --releases "$REL" \
    <<<"{\"release\":\"$DOCS\",\"function\":\"read_files\",\"args\":{\"path\":\"/data/hr/salary.csv\"}}"
  [ "$(json -c '.items[0].label')" = '[]' ]
  # '*' stays inside one component: /data/finance/*.pdf does not match a subdirectory.
  run --separate-stderr plan <<<"{\"id\":\"u\",\"release\":\"$DOCS\",\"function\":\"read_files\",\"args\":{\"path\":\"/data/finance/2027/invoice.pdf\"}}"
  [ "$(json -c '[.id, .error]')" = '["u","unlabelled_path"]' ]
  for p in "/data/public/../hr/salary.csv" "data/public/x" "/data/public//x" 7; do
    run --separate-stderr plan <<<"{\"release\":\"$DOCS\",\"function\":\"read_files\",\"args\":{\"path\":$(jq -n --argjson p "$(jq -n --arg p "$p" 'try ($p|tonumber) catch $p')" '$p')}}"
    [ "$(json -r .error)" = bad_args ]
  done
  # A caller's item cannot stand in for the policy's label of the same file.
  run --separate-stderr plan <<<"{\"release\":\"$DOCS\",\"function\":\"read_files\",\"args\":{\"path\":\"/data/hr/x.csv\"},\"items\":[{\"name\":\"/data/hr/x.csv\",\"label\":[],\"path\":\"/data/hr/x.csv\"}]}"
  [ "$(json -r .error)" = duplicate_item ]
}

@test "manifests: every invalid manifest is refused with bad_manifest naming the field" {
  while read -r name fn want; do
    sha=$(install_manifest "$P/manifests/$name.json")
    run --separate-stderr plan <<<"{\"id\":\"$name\",\"release\":\"$sha\",\"function\":\"$fn\"}"
    [ "$status" -eq 1 ] || { echo "$name: $output"; false; }
    [ "$(json -r .error)" = bad_manifest ] || { echo "$name: $output"; false; }
    [[ "$(json -r .detail)" == *"$want"* ]] || { echo "$name: $output"; false; }
  done <<'EOF'
bad-unknown-field ocr_pdf manifest.json: unknown field "network"
bad-host-upper ocr_pdf functions.ocr_pdf.destinations[0]: "OCR.example" is not a lowercase host
bad-host-port ocr_pdf "ocr.example:443" is not a lowercase host
bad-host-scheme ocr_pdf "https://ocr.example" is not
bad-host-path ocr_pdf "ocr.example/v1" is not
bad-host-ipv4 ocr_pdf "10.1.2" is not
bad-host-dup ocr_pdf "a.example" listed twice
bad-fn-name ocr-pdf "ocr-pdf" is not a function name
bad-fn-field ocr_pdf functions.ocr_pdf: unknown field "network"
bad-fn-from-call fetch destinations_from_call: not a boolean
bad-fn-args read items_from_args[0]: not a string
bad-no-functions f functions: 0 declared
bad-entry-python f entry: "docs/tool.py" is not a dotted Python module name
bad-entry-exec-empty f entry: not a non-empty argv array
bad-entry-exec-dotdot f entry[0]: "../../bin/sh"
bad-runtime f runtime: "node"
bad-protocol ocr_pdf protocol: "http"
bad-read-paths-dotdot ocr_pdf read_paths[0]
bad-read-paths-relative ocr_pdf read_paths[0]: "share/dict"
bad-deterministic ocr_pdf deterministic: not a boolean
bad-missing-name f name: missing
bad-duplicate-key ocr_pdf duplicate key
bad-not-object f not a JSON object
EOF
  # Larger than 1 MiB: refused before parsing.
  $SYSPY -c 'import json; print(json.dumps({"name":"big","version":"1","runtime":"python","entry":"m","functions":{"f":{}},"description":"x"*(1<<20)}))' > big.json
  sha=$(install_manifest big.json)
  run --separate-stderr plan <<<"{\"release\":\"$sha\",\"function\":\"f\"}"
  [ "$(json -r .error)" = bad_manifest ]
  [[ "$(json -r .detail)" == *"larger than 1 MiB"* ]]
}

@test "manifests: valid ones plan (exec + mcp-stdio, MCP tool names, IP literal hosts)" {
  sha=$(install_manifest "$P/manifests/valid-exec-mcp.json")
  run --separate-stderr plan <<<"{\"release\":\"$sha\",\"function\":\"ping\",\"consumers\":[]}"
  [ "$status" -eq 0 ]
  [ "$(json -c .plan.destinations)" = '["10.0.0.1","2001:db8::1","localhost"]' ]
  run --separate-stderr plan <<<"{\"release\":\"$sha\",\"function\":\"web.fetch\",\"destinations\":[\"::1\"]}"
  [ "$status" -eq 0 ]
  run --separate-stderr plan <<<"{\"release\":\"$sha\",\"function\":\"web.fetch\",\"destinations\":[\"0:0::1\"]}"
  [ "$(json -r .error)" = bad_destination ]
}

@test "policies: every invalid policy is a usage error naming the field" {
  while read -r name want; do
    run --separate-stderr gl-plan --policy "$P/policies/$name.json" </dev/null
    [ "$status" -eq 2 ] || { echo "$name: $stderr"; false; }
    [[ "$stderr" == *"$want"* ]] || { echo "$name: $stderr"; false; }
  done <<'EOF'
bad-unknown-field unknown field "clearence"
bad-no-clearances clearances: missing
bad-tag-not-string clearances."agent": element 1 is a number
bad-clearance-not-array clearances."agent": is a string
bad-route-no-port routes."ocr.example": not "addr:port"
bad-route-host routes: "OCR.example"
bad-glob-relative labels: "data/*" is not an absolute glob
bad-glob-dotdot labels: "/data/../etc/*"
bad-not-json not JSON
bad-duplicate-key duplicate key
EOF
}

@test "property: 10,000 seeded random calls satisfy P1, P2, P3, consumer placement and Theorem 3's bound" {
  run $SYSPY "$GL_ROOT/tests/plan_prop.py" --gl-plan "$GL_BIN/gl-plan" --seed 20270131 --calls 10000
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"10000 calls (germline, checked as germline)"*", 0 failed"* ]]
}

@test "property: nosplit is one group per call, and fails the germline properties (the check can fail)" {
  run $SYSPY "$GL_ROOT/tests/plan_prop.py" --gl-plan "$GL_BIN/gl-plan" --seed 5 --calls 2000 --mode nosplit
  echo "$output"
  [ "$status" -eq 0 ]
  run $SYSPY "$GL_ROOT/tests/plan_prop.py" --gl-plan "$GL_BIN/gl-plan" --seed 5 --calls 2000 --mode nosplit --check-as germline
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"FAIL"* ]]
}
