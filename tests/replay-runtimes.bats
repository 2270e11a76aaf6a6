#!/usr/bin/env bats
# Replay for every runtime (issue 14 item 3; SPEC §7, §8; paper §IV-F,
# Definition 6, Theorem 2, Table XIV; docs/witness.md "Every runtime").
#
# Real sessions gl-plan | gl-run | gl-replay | gl-damp against a real HTTP
# sink: the python annotate example (tests/fixtures/releases/demo-annotate, paper Fig.
# 2c), the same tool as a runtime exec release with protocol germline
# (tests/fixtures/exec/rt-germline, Node) and as an MCP server
# (tests/fixtures/exec/rt-mcp, Node, protocol mcp-stdio, file items named by
# its arguments). Each leaking release is suppressed within the python
# example's count of calls (computed in the same test); the flow-compliant
# variants (LEAK = false) never are; with the mechanism switched off (the
# test build's GL_TEST_REPLAY_RUNTIMES_OFF: gl-replay answers exec releases
# unsupported_runtime, as before) the leaking Node release's penalty stays 0.
# Also: file items by path with --items DIR, a directory item, a forged
# witness that would bind a file over the release's code (unverified, 250,
# counted), a python mcp-stdio server, a release that tries to tell a
# replay by its items' metadata (GL_TEST_REPLAY_PRIVATE_ITEMS off/on), and
# an exec witness verified on a second machine from the signed archive.
#
# The compliant runs take GL_RT_CALLS calls each (default 10: every exec
# call is two Node starts, ~0.5 s here); `make replay-runtimes` runs the
# suite with 200, the issue's count (about 4 minutes here).
# unprivileged: yes — gl-run, gl-replay and exec copies work in a user namespace
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

CALLS=${GL_RT_CALLS:-$(count 10 3)} # 3 outside the plain pass (tests/helpers.bash count)
# gl-replay's probe and control runs per trigger (each exec run starts node):
# 3 in the plain pass, 2 in the others (verified still means every probe run
# differed and no control run did; tests/helpers.bash count)
TRIES=$(count 3 2)

setup() {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D/fin" "$D/hr"
  CANARY="SALARY-$RANDOM$RANDOM"
  printf 'INVOICE 42\n' >"$D/fin/invoice.pdf"
  printf 'name,monthly\nalice,%s\n' "$CANARY" >"$D/hr/salary.csv"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg d "$D" '{clearances:{agent:["finance","hr"],"ocr.example":["finance"]},
    labels:{($d + "/fin/**"):["finance"], ($d + "/hr/**"):["hr"]}, routes:{}}' >"$POLICY"
  sink ocr.example
}

teardown() {
  kill_pids
  release_cleanup
  chmod -R u+w "$BATS_TEST_TMPDIR" 2>/dev/null
  true
}

# items — the invoice (finance) and the salary sheet (hr) as data items
items() {
  jq -cn --arg i "$(base64 -w0 "$D/fin/invoice.pdf")" --arg s "$(base64 -w0 "$D/hr/salary.csv")" \
    '[{name:"invoice.pdf",label:["finance"],data:$i},{name:"salary.csv",label:["hr"],data:$s}]'
}

# calls SHA KIND N — N envelopes of ocr_annotate: KIND data (items in the
# envelope) or paths (the MCP server's file arguments, items_from_args)
# — one jq for the N (a jq 1.6 start costs ~45 ms of CPU; there were two a
# call): byte for byte the lines of envelope (tests/fixtures/run/helpers.bash)
calls() {
  local its='[]' extra
  if [ "$2" = paths ]; then
    extra='{args:{invoice:($d + "/fin/invoice.pdf"),salary:($d + "/hr/salary.csv")}}'
  else
    its=$(items)
    extra='{"args":{"lang":"en"}}'
  fi
  jq -cn --arg r "$1" --arg d "$D" --argjson items "$its" --argjson n "$3" 'range(1; $n + 1) as $i
    | {id: "c\($i)", release: $r, function: "ocr_annotate", args: {}, items: $items,
       consumers: ["agent"]} + '"$extra"
}

# variant DIR NAME — a copy of the fixture DIR with LEAK = false (flow-compliant)
variant() {
  cp -r "$1" "$BATS_TEST_TMPDIR/$2"
  chmod -R u+w "$BATS_TEST_TMPDIR/$2"
  sed -i 's/^const LEAK = true;/const LEAK = false;/' "$BATS_TEST_TMPDIR/$2"/*.js
  grep -q '^const LEAK = false;' "$BATS_TEST_TMPDIR/$2"/*.js
  echo "$BATS_TEST_TMPDIR/$2"
}

# pipeline TAG CALLS [GL-REPLAY] — gl-plan | gl-run | gl-replay | gl-damp over
# CALLS, item contents in the witnesses (this verifier is cleared for them);
# TAG.replay gets gl-replay's stream, TAG.damp gl-damp's records (one each)
pipeline() {
  local tag=$1 in=$2 replay=${3:-gl-replay}
  gl-plan --policy "$POLICY" <"$in" |
    gl-run --policy "$POLICY" --witness-items 2>"$tag.run.err" | tee "$tag.run" |
    "$replay" --tries "$TRIES" 2>"$tag.replay.err" | tee "$tag.replay" |
    gl-damp --state "$tag.state" >"$tag.damp" 2>"$tag.damp.err" || true
  [ "$(wc -l <"$tag.replay")" -eq "$(wc -l <"$tag.damp")" ] || {
    cat "$tag.run.err" "$tag.replay.err" "$tag.damp.err"; return 1; }
}

# to_suppress TAG — calls until gl-damp first says suppressed (0: never)
to_suppress() {
  jq -sn --slurpfile a "$1.replay" --slurpfile b "$1.damp" '[$a, $b] | transpose
    | reduce .[] as $p ({calls: 0, at: 0};
        if .at > 0 then . else
          (if ($p[0] | has("witness")) then . else .calls += 1 end)
          | if $p[1].suppressed == true then .at = .calls else . end end) | .at'
}

# max_penalty TAG — the highest penalty gl-damp wrote
max_penalty() { jq -s 'map(.penalty // 0) | max' "$1.damp"; }

# suppressed_next TAG SHA KIND — one more call through gl-run --damp: refused
suppressed_next() {
  calls "$2" "$3" 1 | gl-plan --policy "$POLICY" |
    gl-run --policy "$POLICY" --damp "$1.state" 2>/dev/null |
    jq -e '.ok == false and .error == "suppressed"'
}

@test "replay-runtimes: a leaking exec (Node, protocol germline) and a leaking mcp-stdio release are suppressed within the python annotate example's count of calls" {
  PY=$(install_release "$GL_ROOT/tests/fixtures/releases/demo-annotate")
  NODE=$(install_release "$FIX/exec/rt-germline")
  MCP=$(install_release "$FIX/exec/rt-mcp")
  calls "$PY" data 2 >py.calls
  calls "$NODE" data 2 >node.calls
  calls "$MCP" paths 2 >mcp.calls
  pipeline py py.calls
  pipeline node node.calls
  pipeline mcp mcp.calls
  local py node mcp
  py=$(to_suppress py)
  node=$(to_suppress node)
  mcp=$(to_suppress mcp)
  echo "calls to suppress: python annotate $py, exec/germline $node, exec/mcp-stdio $mcp"
  [ "$py" -ge 1 ]
  [ "$node" -ge 1 ] && [ "$node" -le "$py" ]
  [ "$mcp" -ge 1 ] && [ "$mcp" -le "$py" ]
  # each call ran two copies and raised a trigger whose witness replays
  # as an item witness of a release that declares determinism
  for t in py node mcp; do
    jq -se 'map(select(has("witness") | not)) | all(.ok and .copies == 2 and (.triggers | length) == 1)' "$t.replay"
    jq -se --argjson n "$TRIES" 'map(select(has("witness"))) | length == 2 and all(.outcome == "item_witness"
      and .event == "verified" and .weight == 2000 and .probe_differs == $n and .control_differs == 0)' "$t.replay"
  done
  # the witness says where each file item was, so the copy reads it there
  w=$(jq -r 'select(.triggers) | .triggers[0].witness' mcp.run | head -1)
  jq -e --arg d "$D" '[.items[] | .path] == [($d + "/fin/invoice.pdf"), ($d + "/hr/salary.csv")]' "$w"
  # and gl-run --damp refuses the next call to each
  suppressed_next py "$PY" data
  suppressed_next node "$NODE" data
  suppressed_next mcp "$MCP" paths
  # the salary sheet reached ocr.example from no copy serving it
  ! grep -q "$(base64 -w0 "$D/hr/salary.csv")" "$BATS_TEST_TMPDIR/ocr.example.log"
}

@test "replay-runtimes: flow-compliant exec and mcp-stdio releases are never suppressed ($CALLS calls each)" {
  NODE=$(install_release "$(variant "$FIX/exec/rt-germline" fair-germline)")
  MCP=$(install_release "$(variant "$FIX/exec/rt-mcp" fair-mcp)")
  calls "$NODE" data "$CALLS" >node.calls
  calls "$MCP" paths "$CALLS" >mcp.calls
  pipeline node node.calls
  pipeline mcp mcp.calls
  for t in node mcp; do
    jq -se "length == $CALLS and all(.ok and .copies == 2 and .triggers == [])" "$t.replay"
    jq -se "length == $CALLS and all(.penalty == 0 and (.suppressed | not))" "$t.damp"
  done
  # they did call ocr.example, with the invoice only
  [ "$(wc -l <"$BATS_TEST_TMPDIR/ocr.example.log")" -eq $((2 * CALLS)) ] # one delivered request per call and release
  ! grep -q "$(base64 -w0 "$D/hr/salary.csv")" "$BATS_TEST_TMPDIR/ocr.example.log"
}

@test "replay-runtimes: with exec replay switched off (unsupported_runtime, as before) the leaking Node release's penalty stays 0" {
  TREPLAY=$GL_ROOT/build/testing/bin/gl-replay
  [ -x "$TREPLAY" ] || skip "build/testing/bin/gl-replay is not built (make units)"
  NODE=$(install_release "$FIX/exec/rt-germline")
  calls "$NODE" data 2 >node.calls
  # off: every trigger's answer is an error record gl-damp cannot count
  GL_TEST_REPLAY_RUNTIMES_OFF=1 pipeline off node.calls "$TREPLAY"
  jq -se 'map(select(has("witness"))) | length == 2 and all(.ok == false
    and .error == "unsupported_runtime" and (has("event") | not))' off.replay
  [ "$(max_penalty off)" = 0 ]
  [ "$(to_suppress off)" -eq 0 ]
  grep -q bad_record off.damp
  # on (the same test build, no switch): verified witnesses, suppressed
  pipeline on node.calls "$TREPLAY"
  [ "$(to_suppress on)" -ge 1 ]
  [ "$(max_penalty on)" != 0 ]
  jq -se 'map(select(has("witness"))) | length == 2 and all(.event == "verified")' on.replay
}

# reseal W — a witness edited by a forger who holds the host's witness key
# (the strongest forger: the checks behind the signature must hold alone)
reseal() {
  "$SYSPY" "$GL_ROOT/tests/fixtures/witness_seal.py" "$1" "$1.new" --key "$GL_HOME/keys/witness.key"
  mv "$1.new" "$1"
}

@test "replay-runtimes: file items named by path replay with --items DIR (DIR mirrors the paths); a link leaving DIR is refused" {
  MCP=$(install_release "$FIX/exec/rt-mcp")
  calls "$MCP" paths 1 >mcp.calls
  gl-plan --policy "$POLICY" <mcp.calls | gl-run --policy "$POLICY" >mcp.run
  w=$(jq -r '.triggers[0].witness' mcp.run)
  jq -e '.items_included == false' "$w"
  # no contents: missing_item, as before
  run --separate-stderr gl-replay --tries 2 "$w"
  json '.error == "missing_item"'
  # --items DIR holding DIR/<path>: the MCP call's items are found
  mkdir -p "items$D/fin" "items$D/hr"
  cp "$D/fin/invoice.pdf" "items$D/fin/"
  cp "$D/hr/salary.csv" "items$D/hr/"
  run --separate-stderr gl-replay --tries 2 --items items "$w"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "item_witness" and .event == "verified" and .probe_differs == 2'
  # a symlink in DIR that leads out of it is not followed
  rm "items$D/hr/salary.csv"
  ln -s "$D/hr/salary.csv" "items$D/hr/salary.csv"
  run --separate-stderr gl-replay --tries 2 --items items "$w"
  json '.error == "bad_item" and (.detail | test("leaves"))'
  # an absolute link too, even to a file inside DIR's own tree
  ln -sf "$BATS_TEST_TMPDIR/items$D/fin/invoice.pdf" "items$D/hr/salary.csv"
  run --separate-stderr gl-replay --tries 2 --items items "$w"
  json '.error == "bad_item"'
}

@test "replay-runtimes: a forged witness that puts a file over the release's own code is not replayed: unverified (250), counted by gl-damp" {
  MCP=$(install_release "$FIX/exec/rt-mcp")
  calls "$MCP" paths 1 >mcp.calls
  gl-plan --policy "$POLICY" <mcp.calls | gl-run --policy "$POLICY" --witness-items >mcp.run
  w=$(jq -r '.triggers[0].witness' mcp.run)
  cp "$w" forged.json
  # the forger's "salary sheet" is bound where the release's server.js is
  jq --arg p "$GL_HOME/releases/$MCP/server.js" --arg d "$(b64 'process.exit(3)')" \
    '.items[1].path = $p | .items[1].data = $d' forged.json >f.new
  mv f.new forged.json
  reseal forged.json
  run --separate-stderr gl-replay --tries 2 forged.json
  [ "$status" -eq 1 ]
  json '.error == "unreplayable" and .event == "unverified" and .weight == 250'
  # gl-damp adds it (weight W), never drops it
  printf '%s\n' "$output" | gl-damp --state forged.state >forged.damp
  jq -e '.penalty == 250 and (.suppressed | not)' forged.damp
  # nor by another name, through a symlink of the host (merged /usr: /lib)
  if [ -L /lib ] && [ -e /usr/lib/x86_64-linux-gnu ]; then
    cp "$w" forged2.json
    jq --arg d "$(b64 'not a library')" \
      '.items[1].path = "/lib/x86_64-linux-gnu/libc.so.6" | .items[1].data = $d' forged2.json >f.new
    mv f.new forged2.json
    reseal forged2.json
    run --separate-stderr gl-replay --tries 2 forged2.json
    json '.error == "unreplayable" and .event == "unverified"'
  fi
  # the genuine witness replays as an item witness
  run --separate-stderr gl-replay --tries 2 "$w"
  json '.outcome == "item_witness"'
}

@test "replay-runtimes: a leaking python mcp-stdio server (tests/fixtures/mcp/ocr-hostile) is replayed too: item witness, suppressed" {
  REL=$(install_release "$FIX/mcp/ocr-hostile")
  envelope c1 "$REL" ocr_pair '[]' \
    "$(jq -cn --arg d "$D" '{args:{path:($d + "/fin/invoice.pdf"),ref:($d + "/hr/salary.csv")}}')" >py.calls
  pipeline pymcp py.calls
  jq -se 'map(select(has("witness"))) | length == 1 and all(.outcome == "item_witness"
    and .event == "verified" and .control_differs == 0)' pymcp.replay
  [ "$(to_suppress pymcp)" -eq 1 ]
  # switched off: refused as before, never counted
  GL_TEST_REPLAY_RUNTIMES_OFF=1 pipeline pyoff py.calls "$GL_ROOT/build/testing/bin/gl-replay"
  jq -se 'map(select(has("witness"))) | all(.error == "unsupported_runtime")' pyoff.replay
  [ "$(max_penalty pyoff)" = 0 ]
}

@test "replay-runtimes: an exec release cannot tell a replay by its items' metadata: the item's own file when it still holds the witness's bytes; with private copies (switch) it dodges" {
  TREPLAY=$GL_ROOT/build/testing/bin/gl-replay
  [ -x "$TREPLAY" ] || skip "build/testing/bin/gl-replay is not built (make units)"
  cp -r "$FIX/exec/rt-mcp" dodge
  sed -i 's/^const DODGE = false;/const DODGE = true;/' dodge/server.js
  grep -q '^const DODGE = true;' dodge/server.js
  MCP=$(install_release "$BATS_TEST_TMPDIR/dodge")
  chmod 0644 "$D/hr/salary.csv"
  calls "$MCP" paths 1 >mcp.calls
  gl-plan --policy "$POLICY" <mcp.calls | gl-run --policy "$POLICY" --witness-items >mcp.run
  w=$(jq -r '.triggers[0].witness' mcp.run)
  # off: every item from a private file (0400), as on a second machine; the
  # release sees it, behaves, and the leak is only a state divergence (250)
  # when the mirror run is off too; with it, the comparing copy's own
  # inputs no longer give its requests: declared_broken (2000)
  GL_TEST_REPLAY_PRIVATE_ITEMS=1 GL_TEST_REPLAY_MIRROR_OFF=1 run --separate-stderr "$TREPLAY" --tries 2 "$w"
  json '.outcome == "state_divergence" and .event == "unverified" and .probe_differs == 0'
  GL_TEST_REPLAY_PRIVATE_ITEMS=1 run --separate-stderr "$TREPLAY" --tries 2 "$w"
  json '.outcome == "nondeterminism" and .event == "declared_broken" and .probe_differs == 0
    and .mirror_differs == 2'
  # on: the file gl-run's copy read, unchanged, is the one the run reads
  run --separate-stderr "$TREPLAY" --tries 2 "$w"
  json '.outcome == "item_witness" and .event == "verified" and .probe_differs == 2'
  # a witness trusted by --trust alone is another host's: its paths are not
  # the auditor's files, whatever they hold (private copies: the release
  # behaves, in the mirror run too, which makes it declared_broken); off (GL_TEST_REPLAY_FOREIGN_FILES=1), the auditor's own file is
  # bound into the run whenever it holds the witness's bytes — a guess of
  # a file's contents told right from wrong by the verdict
  cp "$GL_HOME"/keys/trusted/*.pub host.pub
  GL_HOME=$BATS_TEST_TMPDIR/auditor GL_TEST_REPLAY_FOREIGN_FILES=1 run --separate-stderr \
    "$TREPLAY" --trust host.pub --release pub --tries 2 "$w"
  json '.outcome == "item_witness" and .probe_differs == 2'
  GL_HOME=$BATS_TEST_TMPDIR/auditor run --separate-stderr "$TREPLAY" --trust host.pub \
    --release pub --tries 2 "$w"
  json '.outcome == "nondeterminism" and .event == "declared_broken" and .probe_differs == 0
    and .mirror_differs == 2'
  # once the file changed, the witness's bytes come from a private file again
  printf 'changed\n' >>"$D/hr/salary.csv"
  run --separate-stderr "$TREPLAY" --tries 2 "$w"
  json '.outcome == "nondeterminism" and .event == "declared_broken"'
}

@test "replay-runtimes: second machine: an exec witness file, the signed archive and nothing else in a fresh GL_HOME give the same verdict" {
  NODE=$(install_release "$FIX/exec/rt-germline")
  calls "$NODE" data 1 >node.calls
  gl-plan --policy "$POLICY" <node.calls | gl-run --policy "$POLICY" --witness-items >node.run
  w=$(jq -r '.triggers[0].witness' node.run)
  # the witness file alone: it carries its slot snapshots (docs/witness.md)
  cp "$w" w.json
  # the verifier's machine: no trust, no releases, no slots; the archive
  # from the publisher's directory, picked by its hash
  # and the producing host's key, which the verifier chooses to trust
  cp "$GL_HOME"/keys/trusted/*.pub host.pub
  GL_HOME=$BATS_TEST_TMPDIR/verifier run --separate-stderr gl-replay --tries 2 --release pub \
    --trust host.pub w.json
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "item_witness" and .event == "verified" and .probe_differs == 2 and .control_differs == 0'
  [ ! -e "$BATS_TEST_TMPDIR/verifier/releases" ]
}

@test "replay-runtimes: a directory item (exec dirs_from_args) replays from --items DIR/<path>, never from the witness" {
  DIR=$(install_release "$FIX/exec/rt-dir")
  envelope c1 "$DIR" ocr_dir '[]' \
    "$(jq -cn --arg d "$D" '{args:{invoice:($d + "/fin/invoice.pdf"),dir:($d + "/hr")}}')" >dir.calls
  gl-plan --policy "$POLICY" <dir.calls | gl-run --policy "$POLICY" --witness-items >dir.run
  jq -e '.ok and .copies == 2 and (.triggers | length) == 1' dir.run
  w=$(jq -r '.triggers[0].witness' dir.run)
  jq -e --arg d "$D/hr" '.items[] | select(.path == $d) | .dir == true and .data == ""' "$w"
  # the witness holds no directory: without --items the run cannot have it
  run --separate-stderr gl-replay --tries 2 "$w"
  json '.error == "missing_item" and (.detail | test("directory item"))'
  # --items DIR mirroring the paths: the directory is bound where it was
  mkdir -p "items$D"
  cp -r "$D/hr" "items$D/hr"
  run --separate-stderr gl-replay --tries 2 --items items "$w"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.outcome == "item_witness" and .event == "verified" and .probe_differs == 2 and .control_differs == 0'
}
