#!/usr/bin/env bats
# runtime "exec" (SPEC §5, §9, §11; docs/exec.md; issue 7 item 2): every copy
# is a fresh verified launch of gl-exec-host and the release's entry, with the
# confinement of a forked copy. Real node, real namespaces, Landlock and
# seccomp, real HTTP over loopback (tests/fixtures/sink.py). Each property is
# shown with its mechanism on (gl-run) and off (the same code run directly by
# node, or the split off: --mode nosplit, or the baseline --mode sigpin).
# unprivileged: yes
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

setup() {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D/hr"
  echo "public notes" >"$D/pub.txt"
  CANARY="SALARY-$RANDOM$RANDOM"
  echo "$CANARY" >"$D/hr/salary.txt"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg d "$D" '{clearances:{agent:["hr"],pubagent:[],"sink.example":[]},
    labels:{($d + "/hr/**"):["hr"], ($d + "/**"):[]}}' >"$POLICY"
  EX=$FIX/exec
}

teardown() {
  kill_started
  pkill -9 -f "GLMARK-$BATS_TEST_NUMBER-$$" 2>/dev/null || true
  release_cleanup
}

# start_sink_for HOST — tests/fixtures/sink.py routed as HOST in $POLICY
start_sink_for() {
  start_sink
  jq --arg h "$1" --arg a "127.0.0.1:$SINK_PORT" '.routes = {($h): $a}' "$POLICY" >"$POLICY.new"
  mv "$POLICY.new" "$POLICY"
}

# call ID SHA FUNCTION ARGS_JSON CONSUMERS_JSON — one envelope line
call() {
  jq -cn --arg id "$1" --arg r "$2" --arg f "$3" --argjson a "$4" --argjson c "${5:-[\"agent\"]}" \
    '{id:$id,release:$r,function:$f,args:$a,items:[],consumers:$c}'
}

# receipts_in DIR STATE — receipt files in DIR whose state is STATE
# (one jq for every file, in the glob's order: a jq 1.6 start costs ~45 ms of
# CPU; should a file not be JSON, one jq a file as before)
receipts_in() {
  local out f
  if out=$(jq -r --arg s "$2" 'select(.signed.state? == $s) | input_filename' "$1"/*.json 2>/dev/null); then
    [ -z "$out" ] || printf '%s\n' "$out"
  else
    for f in "$1"/*.json; do [ "$(jq -r .signed.state "$f")" = "$2" ] && echo "$f"; done
  fi
  true
}

# direct FUNCTION ARGS_JSON — the probe run by node with nothing in the way
direct() {
  jq -cn --arg f "$1" --argjson a "$2" '{function:$f,args:$a,items:[]}' |
    (cd "$EX/probe" && node probe.js)
}

@test "exec: a germline-protocol call runs in a verified, confined copy" {
  sha=$(install_release "$EX/probe")
  call c1 "$sha" read "{\"paths\":[\"$D/pub.txt\"]}" >calls
  run session calls
  [ "$status" -eq 0 ]
  json '.ok and .copies == 1'
  json ".results[0].value[\"$D/pub.txt\"] == \"public notes\n\""
  json '.enforcement | .filesystem == "enforced" and .seccomp == "enforced" and .network == "enforced"'
  json '.enforcement.namespaces == ["ipc","mnt","net","pid","user"]'
  # nothing of the copy is left behind
  [ -z "$(ls -A "$GL_HOME/scratch")" ]
}

@test "exec: a copy reads exactly the item files of its view (items_from_args + Landlock)" {
  sha=$(install_release "$EX/probe")
  call c1 "$sha" read "{\"paths\":[\"$D/pub.txt\",\"$D/hr/salary.txt\"]}" '["agent","pubagent"]' >calls
  run session calls
  [ "$status" -eq 0 ]
  # the public consumer's copy cannot open the hr file although it names it:
  # the file is not even in its minimal root (ENOENT), only its view's are
  json ".results[] | select(.consumer == \"pubagent\") | .value[\"$D/hr/salary.txt\"] | startswith(\"denied:ENOENT\")"
  json ".results[] | select(.consumer == \"pubagent\") | .label == []"
  json ".results[] | select(.consumer == \"agent\") | .value[\"$D/hr/salary.txt\"] == \"$CANARY\n\""
  json ".results[] | select(.consumer == \"agent\") | .label == [\"hr\"]"
  # a file that no item names is never readable, even by a cleared consumer
  call c2 "$sha" escape "{\"secret\":\"$D/hr/salary.txt\",\"port\":1}" >calls
  run session calls
  json '.results[0].value.read_secret | startswith("denied")'
  # mechanism off: the same code run directly reads it
  run direct escape "{\"secret\":\"$D/hr/salary.txt\",\"port\":1}"
  [ "$(jq -r .read_secret <<<"$output")" = "$CANARY" ]
}

@test "exec: no writable path but its own /tmp, no network, no other program, no /proc of the host, no host path to stat" {
  sha=$(install_release "$EX/probe")
  start_sink_for sink.example
  args=$(jq -cn --arg h "$HOME" --argjson p "$SINK_PORT" '{home:$h,port:$p,secret:"/nonexistent"}')
  call c1 "$sha" escape "$args" >calls
  run session calls
  echo "$output"
  [ "$status" -eq 0 ]
  for k in write_release write_home read_passwd list_proc tcp_host exec_sh stat_shadow stat_home; do
    json ".results[0].value.$k | startswith(\"denied\")" || { echo "$k: $output"; false; }
  done
  # /tmp is the copy's own tmpfs (SPEC §5; tests/scratch.bats), not the host's
  json '.results[0].value.write_tmp == "ok"'
  # the host's paths are not even there (the minimal root)
  json '.results[0].value.stat_shadow == "denied:ENOENT" and .results[0].value.stat_home == "denied:ENOENT"'
  # mechanism off: directly, node can do all of it (its /tmp file in this
  # test's own directory: the passes run side by side, and another's file in
  # the host's /tmp is not ours to remove)
  run direct escape "$(jq -c --arg t "$BATS_TEST_TMPDIR" '.tmp = $t' <<<"$args")"
  for k in write_tmp write_home read_passwd list_proc tcp_host exec_sh stat_shadow stat_home; do
    [ "$(jq -r ".$k" <<<"$output")" = ok ] || { echo "$k not ok directly: $output"; false; }
  done
  rm -f "$HOME/gl-exec-probe"
}

@test "exec: a copy's descendants die with it" {
  sha=$(install_release "$EX/probe")
  marker="GLMARK-$BATS_TEST_NUMBER-$$"
  call c1 "$sha" linger "{\"marker\":\"$marker\"}" >calls
  run session calls
  [ "$status" -eq 0 ]
  json '.results[0].value.spawned'
  sleep 0.3
  ! pgrep -f "$marker"
  # mechanism off: run directly, the grandchild outlives the call
  run direct linger "{\"marker\":\"$marker\"}"
  sleep 0.3
  pgrep -f "$marker"
}

@test "exec: HTTP from the copy goes through the broker (effect), to declared hosts only" {
  sha=$(install_release "$EX/probe")
  start_sink_for sink.example
  call c1 "$sha" post '{"text":"hello sink"}' >calls
  run session calls
  [ "$status" -eq 0 ]
  json '.delivered == [{"destination":"sink.example","requests":1}]'
  json '.results[0].value.status == 200'
  sink_has "hello sink"
  # a chunked body is relayed whole
  call c2 "$sha" post_chunked '{"text":"chunked hello"}' >calls
  run session calls
  json '.delivered == [{"destination":"sink.example","requests":1}] and .results[0].value.status == 200'
  sink_has "chunked hello"
  # an undeclared name does not even resolve inside the copy
  call c3 "$sha" post_undeclared '{"text":"to evil"}' >calls
  run session calls
  json '.results[0].value.error == "ENOTFOUND" or .results[0].value.error == "EAI_AGAIN"'
  ! sink_has "to evil"
}

@test "exec: twin inputs — a Node.js tool's clocks and nonces agree across a call's copies (0 triggers); --no-twin: they do not" {
  # The call names an hr file (items_from_args), so it runs as two copies:
  # {sink.example} without it, then {agent} with it, whose request to
  # sink.example is compared with the delivered one (hosts/exec/twin.cjs).
  sha=$(install_release "$EX/probe")
  start_sink_for sink.example
  local n
  n=$(count 6 3) # calls: 6 in the plain pass, 3 in the others (tests/helpers.bash count)
  local a
  a=$(jq -cn --arg p "$D/hr/salary.txt" '{paths:[$p]}')
  for ((i = 1; i <= n; i++)); do call "t$i" "$sha" twin "$a"; done >calls
  run --separate-stderr session calls
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  printf '%s\n' "$output" >results.jsonl
  jq -se --argjson n "$n" 'length == $n and (map(.ok and .copies == 2
    and .delivered == [{"destination":"sink.example","requests":1}]) | all)' results.jsonl
  [ "$(jq -s '[.[].triggers // [] | length] | add' results.jsonl)" -eq 0 ]
  # Each call its own twin inputs: every nonce differs from call to call,
  # and the clock is the call's frozen instant.
  [ "$(wc -l <"$SINK_LOG")" -eq "$n" ]
  for k in uuid bytes web random int hr; do
    [ "$(jq -r ".body | @base64d | fromjson | .$k" "$SINK_LOG" | sort -u | wc -l)" -eq "$n" ]
  done
  jq -e '.body | @base64d | fromjson | (.date | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) == (.now / 1000 | floor)' "$SINK_LOG"
  # Mechanism off: each copy its own twin inputs, and the comparison fires.
  run --separate-stderr bash -c 'gl-plan --policy "$1" <calls | gl-run --no-twin --policy "$1" 3>&-' _ "$POLICY"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(printf '%s\n' "$output" | jq -s '[.[] | select((.triggers // []) | length > 0)] | length')" -eq "$n" ]
}

@test "exec: an entry replaced on disk after install never runs, and the refusal says so" {
  sha=$(install_release "$EX/probe")
  f=$GL_HOME/releases/$sha/probe.js
  chmod u+w "$f" "$(dirname "$f")"
  printf '\nrequire("fs").writeFileSync("%s/ran", "x");\n' "$BATS_TEST_TMPDIR" >>"$f"
  call c1 "$sha" read '{"paths":[]}' >calls
  run session calls
  [ "$status" -eq 1 ]
  json '.ok == false and .error == "rejected"'   # admission refused it (docs/gl-run.md)
  json '.detail | test("verified launch: probe.js changed after install")'
  [ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "exec: an entry swapped while gl-run runs never runs (re-checked before every copy)" {
  sha=$(install_release "$EX/probe")
  f=$GL_HOME/releases/$sha/probe.js
  call c1 "$sha" read '{"paths":[]}' >c1
  call c2 "$sha" read '{"paths":[]}' >c2
  out=$BATS_TEST_TMPDIR/out
  gl-sign keygen --no-passphrase host >/dev/null
  mkdir rc
  {
    gl-plan --policy "$POLICY" <c1
    for _ in $(seq 300); do [ -s "$out" ] && break; sleep 0.1; done
    chmod u+w "$f" "$(dirname "$f")"
    cp "$f" "$f.new" && echo '// swapped' >>"$f.new" && mv "$f.new" "$f"
    gl-plan --policy "$POLICY" <c2
  } | gl-run --policy "$POLICY" --receipts rc --host-key host >"$out" 3>&- || true
  cat "$out"
  [ "$(jq -s length "$out")" -eq 2 ]
  jq -se '.[0].ok == true' "$out"
  jq -se '.[1].ok == false and (.[1].detail | test("probe.js changed after it was verified"))' "$out"
  # the refused copy's receipt: rejected, binding tree, named by the second record
  r=$(receipts_in rc rejected)
  [ "$(echo "$r" | wc -l)" -eq 1 ] && [ -n "$r" ]
  jq -e '.signed.binding == "tree"' "$r"
  jq -se --arg id "$(basename "$r" .json)" '.[1].receipts == [$id]' "$out"
  [ "$(receipts_in rc fully_enforced | wc -l)" -eq 1 ]
}

@test "exec: a copied interpreter inside the release is verified too" {
  rel=$BATS_TEST_TMPDIR/probe-own-node
  mkdir -p "$rel/bin"
  cp "$EX/probe/probe.js" "$rel/"
  cp /usr/bin/node "$rel/bin/node"
  jq '.entry = ["bin/node","probe.js"]' "$EX/probe/manifest.json" >"$rel/manifest.json"
  sha=$(install_release "$rel")
  call c1 "$sha" read "{\"paths\":[\"$D/pub.txt\"]}" >calls
  run session calls
  json '.ok and .results[0].ok'
  n=$GL_HOME/releases/$sha/bin/node
  chmod u+w "$n" "$(dirname "$n")"
  cp /bin/true "$n"
  run session calls
  [ "$status" -eq 1 ]
  json '.detail | test("verified launch: bin/node changed after install")'
}

@test "exec: a hostile npm-style release discloses nothing under germline, and does without it" {
  sha=$(install_release "$EX/hostile")
  start_sink_for sink.example
  # call 1 reads the hr file for the agent; call 2 publishes the public file
  # to sink.example while also naming the hr file: fmt-helper's hidden code
  # appends every file it has seen to the request.
  {
    call c1 "$sha" read_docs "{\"paths\":[\"$D/hr/salary.txt\"]}"
    call c2 "$sha" publish "{\"paths\":[\"$D/pub.txt\",\"$D/hr/salary.txt\"]}"
    call c3 "$sha" publish "{\"paths\":[\"$D/pub.txt\"]}"
  } >calls
  run session calls
  [ "$status" -eq 0 ]
  jq -se '.[0].results[0].value.content[0].text | contains("SALARY")' <<<"$output"
  # the server's log message of the call, in the record as its result's
  jq -se '.[0].results[0].log == [{level: "info", logger: "hostile", data: "read_docs: 1 documents"}]' <<<"$output"
  sink_has "public notes"
  ! sink_has "$CANARY"
  # the agent's copy asked for more than the sink's copy: a trigger, not a delivery
  jq -se '.[1].triggers[0].kind == "mismatch"' <<<"$output"
  # mechanism off (1): one copy with every item (--mode nosplit)
  : >"$SINK_LOG"
  gl-plan --policy "$POLICY" --mode nosplit <calls | gl-run --policy "$POLICY" --mode nosplit >/dev/null 3>&-
  sink_has "$CANARY"
  # mechanism off (2): one persistent process (--mode sigpin) remembers call 1
  : >"$SINK_LOG"
  gl-plan --policy "$POLICY" <calls | gl-run --policy "$POLICY" --mode sigpin >sigpin.out 3>&-
  jq -se '.[2].ok' sigpin.out
  sink_has "$CANARY"
}

@test "exec: the discovery check runs the server's own tools/list" {
  rel=$BATS_TEST_TMPDIR/hostile-more
  cp -r "$EX/hostile" "$rel"
  jq '.functions.extra = {"destinations":[]}' "$EX/hostile/manifest.json" >"$rel/manifest.json"
  sha=$(install_release "$rel")
  call c1 "$sha" read_docs '{"paths":[]}' >calls
  run session calls
  echo "$output"
  [ "$status" -eq 1 ]
  json '.error == "discovery_changed"'
}

@test "exec: modes fresh and confined refuse an exec release; the refusal says why" {
  sha=$(install_release "$EX/probe")
  call c1 "$sha" read '{"paths":[]}' >calls
  run bash -c "gl-plan --policy '$POLICY' <calls | gl-run --policy '$POLICY' --mode confined"
  [ "$status" -eq 1 ]
  json '.error == "unsupported_runtime" and (.detail | test("exec"))'
}

@test "exec: a manifest's env and state_dir are checked, and for runtime exec only" {
  rel=$BATS_TEST_TMPDIR/bad
  cp -r "$EX/probe" "$rel"
  jq '.env = {"lower":"x"}' "$EX/probe/manifest.json" >"$rel/manifest.json"
  run install_release "$rel"
  [ "$status" -ne 0 ]
  jq '.runtime = "python" | .entry = "probe" | .state_dir = true' "$EX/probe/manifest.json" >"$rel/manifest.json"
  run install_release "$rel"
  [ "$status" -ne 0 ]
  jq '.env = {"MEMORY_FILE_PATH":"${GL_STATE_DIR}/m"} | .state_dir = true' "$EX/probe/manifest.json" >"$rel/manifest.json"
  run install_release "$rel"
  [ "$status" -eq 0 ]
}


@test "exec: every copy is a verified launch with its own receipts: fully_enforced, then exited" {
  sha=$(install_release "$EX/probe")
  gl-sign keygen --no-passphrase host >/dev/null
  mkdir rc
  call c1 "$sha" read "{\"paths\":[\"$D/pub.txt\",\"$D/hr/salary.txt\"]}" '["agent","pubagent"]' >calls
  run bash -c "gl-plan --policy '$POLICY' <calls | gl-run --policy '$POLICY' --receipts rc --host-key host 3>&-"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  json '.ok and .copies == 2'
  launched=$(receipts_in rc fully_enforced)
  exited=$(receipts_in rc exited)
  [ "$(echo "$launched" | wc -l)" -eq 2 ] && [ "$(echo "$exited" | wc -l)" -eq 2 ]
  [ "$(ls rc | wc -l)" -eq 4 ]
  # the call's record names exactly these four
  [ "$(json -c '.receipts | sort')" = "$(ls rc | sed 's/\.json$//' | jq -Rsc 'split("\n") | map(select(. != "")) | sort')" ]
  node=$(sha256sum "$(readlink -f /usr/bin/node)" | cut -c1-64)
  rec=$GL_HOME/releases/$sha.json
  for f in $launched; do
    jq -e --arg n "$node" --arg m "$(jq -r '.files["manifest.json"]' "$rec")" '.signed |
      .target_sha256 == $n and .target == "/usr/bin/node" and .manifest_sha256 == $m
      and (.tree_sha256 | length == 64) and (.interpreter_sha256 | length == 64)
      and .filesystem == "enforced" and .seccomp == "enforced" and .network == "enforced"
      and .namespaces == ["ipc","mnt","net","pid","user"] and .profile == "full"' "$f"
    id=$(basename "$f" .json)
    # its exited receipt closes it, and the pair verifies with the public key only
    ex=$(for e in $exited; do [ "$(jq -r .signed.closes "$e")" = "$id" ] && echo "$e"; done; true)
    [ -n "$ex" ]
    jq -e '.signed.exit | has("code") or has("signal")' "$ex"
    run gl-verify receipt "$f" "$ex" --host host.pub --expect-release "$sha" --expect-target-sha256 "$node"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    printf '%s\n' "$output" | jq -se 'map(.ok) | all'
    printf '%s\n' "$output" | jq -se '.[1].checks | index("closes_launch")'
  done
  # two launches, not one: their launch ids differ
  [ "$(for f in $launched; do jq -r .signed.launch "$f"; done | sort -u | wc -l)" -eq 2 ]
  # another target hash: the verifier exits 1
  other=$(printf x | sha256sum | cut -c1-64)
  run gl-verify receipt $(echo "$launched" | head -1) --host host.pub --expect-release "$sha" --expect-target-sha256 "$other"
  [ "$status" -eq 1 ] && [ "$(json .failed)" = target_sha256_binding ]
  # without --receipts nothing is written
  rm rc/*
  gl-plan --policy "$POLICY" <calls | gl-run --policy "$POLICY" 3>&- >/dev/null
  [ -z "$(ls rc)" ]
}

@test "exec: a release file changed after install gives a rejected receipt naming the binding; nothing ran" {
  sha=$(install_release "$EX/probe")
  gl-sign keygen --no-passphrase host >/dev/null
  mkdir rc
  f=$GL_HOME/releases/$sha/probe.js
  chmod u+w "$f" "$(dirname "$f")"
  printf '\nrequire("fs").writeFileSync("%s/ran", "x");\n' "$BATS_TEST_TMPDIR" >>"$f"
  call c1 "$sha" read '{"paths":[]}' >calls
  run bash -c "gl-plan --policy '$POLICY' <calls | gl-run --policy '$POLICY' --receipts rc --host-key host 3>&-"
  [ "$status" -eq 1 ]
  json '.ok == false'
  [ "$(ls rc | wc -l)" -eq 1 ]
  r=$(receipts_in rc rejected)
  [ -n "$r" ]
  jq -e '.signed | .binding == "tree" and (.detail | test("probe.js changed after install"))' "$r"
  [ "$(json -c .receipts)" = "[\"$(basename "$r" .json)\"]" ]
  run gl-verify receipt "$r" --host host.pub --expect-release "$sha" --expect-state rejected
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "exec: a kernel without the required Landlock ABI: bootstrap_failed naming it, no copy launched" {
  sha=$(install_release "$EX/probe")
  gl-sign keygen --no-passphrase host >/dev/null
  mkdir rc
  call c1 "$sha" read '{"paths":[]}' >calls
  run bash -c "gl-plan --policy '$POLICY' <calls | GL_TEST_LANDLOCK_ABI=5 '$GL_ROOT/build/testing/bin/gl-run' --policy '$POLICY' --receipts rc --host-key host 3>&-"
  [ "$status" -eq 1 ] || { echo "$output"; false; }
  echo "$output"
  json '.ok == false and .error == "bootstrap_failed"'
  [ "$(ls rc | wc -l)" -eq 1 ]
  r=$(receipts_in rc bootstrap_failed)
  [ -n "$r" ]
  jq -e '.signed | .missing == ["landlock"] and (.detail | test("Landlock ABI 5"))' "$r"
  run gl-verify receipt "$r" --host host.pub --expect-release "$sha" --expect-state bootstrap_failed
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # the same binary and kernel with nothing lowered: the copy launches
  rm rc/*
  run bash -c "gl-plan --policy '$POLICY' <calls | '$GL_ROOT/build/testing/bin/gl-run' --policy '$POLICY' --receipts rc --host-key host 3>&-"
  [ -n "$(receipts_in rc fully_enforced)" ]
}

# ---- the workspace: "state_dir": true (docs/exec.md "File state through slots") ----

# ws_slot SHA — the one slot file of release SHA
ws_slot() { ls "$GL_HOME/slots/$1"/*.json; }

# ws_set SHA PY_EXPR — replace the slot's "gl.files" value with the JSON of
# a Python expression (b is base64 of a str)
ws_set() {
  "$SYSPY" - "$(ws_slot "$1")" "$2" <<'PY'
import base64, json, sys
b = lambda s: base64.b64encode(s.encode()).decode()
p = sys.argv[1]
s = json.load(open(p))
s["gl.files"]["value"] = eval(sys.argv[2])
json.dump(s, open(p, "w"))
PY
}

@test "exec: the workspace is /run/germline/state, nested, and kept through the horizon's slot; symlinks are not" {
  sha=$(install_release "$EX/workspace")
  ops=$(jq -cn --arg d "$D/pub.txt" '{ops:[{op:"mkdir",path:"a/b/c"},{op:"write",path:"a/b/c/f.txt",data:"deep"},
    {op:"mkdir",path:"empty"},{op:"write",path:"top.txt",data:"top"},{op:"symlink",path:"l",data:"/etc/passwd"},
    {op:"write",path:"/run/germline/x",data:"no"},{op:"write",path:$d,data:"no"}]}')
  { call c1 "$sha" do "$ops"; call c2 "$sha" ls '{}'; } >calls
  run session calls
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  rec() { jq -sc ".[] | select(.id == \"$1\") | .results[0]" <<<"$output"; }
  rec c1 | jq -e '.value.ws == "/run/germline/state"'
  # inside the workspace everything; beside it on /run and outside it nothing
  rec c1 | jq -e '.value.done[0:5] == ["ok","ok","ok","ok","ok"] and (.value.done[5:7] | all(startswith("denied")))'
  [ "$(cat "$D/pub.txt")" = "public notes" ]
  # the next copy has the tree back, empty directory included, but not the symlink
  rec c2 | jq -e '.value.tree == {"a":"dir","a/b":"dir","a/b/c":"dir","a/b/c/f.txt":"deep","empty":"dir","top.txt":"top"}'
  jq -e '.["gl.files"].value | keys == ["a/","a/b/","a/b/c/","a/b/c/f.txt","empty/","top.txt"]' "$(ws_slot "$sha")"
  [ -z "$(ls -A "$GL_HOME/scratch")" ]
}

@test "exec: a hostile workspace slot is refused and nothing stored; a well-formed one, old flat ones too, restores" {
  sha=$(install_release "$EX/workspace")
  call c1 "$sha" do '{"ops":[{"op":"write","path":"x.txt","data":"x"}]}' >calls
  session calls >/dev/null
  # control: a nested slot written by hand, and a flat one as server-memory's
  ws_set "$sha" '{"memory.jsonl": b("old flat"), "p/q/r.txt": b("nested"), "e/": "", "p/0": ""}'
  call c2 "$sha" ls '{}' >calls
  run session calls
  json '.results[0].value.tree == {"e":"dir","memory.jsonl":"old flat","p":"dir","p/0":"","p/q":"dir","p/q/r.txt":"nested"}'
  deep=$(printf 'a/%.0s' $(seq 16))x
  local bads=('{"../x": ""}' '{"a/../../x": b("x")}' '{"/abs": b("x")}' '{"a//b": b("x")}'
             '{"sp ace": b("x")}' '{".": ""}' '{"d/": b("x")}' '{"x": 5}' '{"x": "!!!"}' '"flat"'
             '{"f%d" % i: "" for i in range(1025)}' "{\"$deep\": b(\"x\")}"
             '{"big": "eHh4" * ((8 << 20) // 3 + 2)}' '{"x": b("x"), "x/y": b("y")}')
  # the slot's validation is gl-exec-host's, the plain build in every pass
  # (docs/testing.md): the other passes try four of them
  plain_pass || bads=("${bads[@]:0:2}" "${bads[@]:9:2}")
  for bad in "${bads[@]}"; do
    ws_set "$sha" "$bad"
    before=$(sha256sum <"$(ws_slot "$sha")")
    run session calls
    [ "$status" -eq 0 ] || [ "$status" -eq 1 ]
    json '.results[0].ok == false' || { echo "accepted: $bad: $output"; false; }
    json '.results[0].detail | test("workspace not restored")' || { echo "$bad: $output"; false; }
    [ "$before" = "$(sha256sum <"$(ws_slot "$sha")")" ]
  done
  [ -z "$(ls -A "$GL_HOME/scratch")" ]
}

@test "exec: a workspace out of bounds is not stored: the call fails, the slot keeps what it had" {
  sha=$(install_release "$EX/workspace")
  many=$(jq -cn '{ops:[range(1025) | {op:"write",path:"f\(.)",data:""}]}')
  deep=$(jq -cn '{ops:[{op:"mkdir",path:([range(17) | "d"] | join("/"))}]}')
  total=$(jq -cn '{ops:[range(5) | {op:"big",path:"b\(.)",bytes:(7 * 1048576)}]}')
  {
    call c0 "$sha" do '{"ops":[{"op":"write","path":"keep.txt","data":"kept"}]}'
    call c1 "$sha" do '{"ops":[{"op":"big","path":"big","bytes":8388609}]}'
    call c2 "$sha" do "$many"
    call c3 "$sha" do "$deep"
    call c4 "$sha" do '{"ops":[{"op":"write","path":"sp ace","data":"x"}]}'
    call c5 "$sha" do "$total"
    call c6 "$sha" ls '{}'
  } >calls
  run session calls
  rec() { jq -sc ".[] | select(.id == \"$1\") | .results[0]" <<<"$output"; }
  for c in c1 c2 c3 c4 c5; do
    rec $c | jq -e '.ok == false and (.detail | test("workspace not stored"))' || { rec $c; false; }
  done
  rec c6 | jq -e '.value.tree == {"keep.txt":"kept"}'
  jq -e '.["gl.files"].value | keys == ["keep.txt"]' "$(ws_slot "$sha")"
  [ -z "$(ls -A "$GL_HOME/scratch")" ]
}

@test "exec: a workspace that cannot be mounted is a bootstrap failure naming it; nothing runs" {
  sha=$(install_release "$EX/workspace")
  gl-sign keygen --no-passphrase host >/dev/null
  mkdir rc
  call c1 "$sha" ls '{}' >calls
  run bash -c "gl-plan --policy '$POLICY' <calls | GL_TEST_WORKSPACE_SOURCE=/nonexistent '$GL_ROOT/build/testing/bin/gl-run' --policy '$POLICY' --receipts rc --host-key host 3>&-"
  [ "$status" -eq 1 ] || { echo "$output"; false; }
  json '.ok == false and .error == "launch" and (.detail | test("launch failed at workspace bind mount"))'
  r=$(receipts_in rc bootstrap_failed)
  jq -e '.signed | .missing == ["workspace"] and (.detail | test("workspace bind mount"))' "$r"
  # the same binary with the scratch directory bound: the copy runs
  rm rc/*
  run bash -c "gl-plan --policy '$POLICY' <calls | '$GL_ROOT/build/testing/bin/gl-run' --policy '$POLICY' --receipts rc --host-key host 3>&-"
  json '.ok and .results[0].value.ws == "/run/germline/state"'
  [ -n "$(receipts_in rc fully_enforced)" ]
}
