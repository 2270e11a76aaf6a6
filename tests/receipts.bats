#!/usr/bin/env bats
# Signed enforcement receipts and gl-verify receipt (SPEC §9, issue 8, seed
# 002; docs/receipts.md): real kernel, real signatures. The fail-closed cases
# run the test build of gl-run (build/testing/bin/gl-run, lib/ compiled with
# GL_TESTING: GL_TEST_LANDLOCK_ABI, GL_TEST_NO_SECCOMP, GL_TEST_NO_USERNS,
# GL_TEST_NO_NETNS, GL_TEST_INTERPRETER, GL_TEST_SWAP_INTERPRETER); bin/gl-run
# has none of them (checked below). The test build of gl-verify skips the
# file-name check with GL_TEST_RECEIPT_NAME_OFF=1 (a receipt swapped into
# another's file then verifies), and GL_TEST_CALL_BINDING_OFF=1 believes a
# result record's own list of receipts (gl-verify call).
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  gl-sign keygen --no-passphrase host >/dev/null
  gl-sign keygen --no-passphrase other >/dev/null
  echo '{"clearances":{"agent":[]}}' >pol.json
  mkdir rc
  TGLRUN=$GL_ROOT/build/testing/bin/gl-run
}
teardown() {
  [ -z "${WRITER:-}" ] || kill "$WRITER" 2>/dev/null || true
  release_cleanup
}

# call ID SHA [FUNCTION] — a planned envelope on stdout
call() { envelope "$1" "$2" "${3:-hello}" | gl-plan --policy pol.json; }
# receipts_of STATE — files in rc/ whose state is STATE
# (one jq for every file, in the glob's order: a jq 1.6 start costs ~45 ms of
# CPU; should a file not be JSON, one jq a file as before)
receipts_of() {
  local out f
  if out=$(jq -r --arg s "$1" 'select(.signed.state? == $s) | input_filename' rc/*.json 2>/dev/null); then
    [ -z "$out" ] || printf '%s\n' "$out"
  else
    for f in rc/*.json; do [ "$(jq -r .signed.state "$f")" = "$1" ] && echo "$f"; done
  fi
  true
}
verify() { gl-verify receipt "$@" --host host.pub; }
# canon FILE FILTER — apply FILTER to the receipt, keep it canonical JSON
canon() { printf '%s' "$(jq -cS "$2" "$1")" >"$1.new" && mv "$1.new" "$1"; }
sha() { sha256sum "$1" | cut -c1-64; }

# sentinel_release — a release whose initialisation opens a FIFO the test
# holds: the blocked writer's open completes only if the module's code ran.
sentinel_release() {
  mkdir -p s rel-sent
  mkfifo s/fifo
  chmod 0777 s s/fifo
  # the deployer grants the release's read_paths (SPEC §4)
  jq -cn --arg s "$PWD/s" '{clearances:{agent:[]},read_paths:[$s]}' >pol.json
  cat >rel-sent/manifest.json <<JSON
{"name":"sentinel","version":"1.0.0","runtime":"python","entry":"sent","protocol":"germline",
 "functions":{"hello":{"destinations":[]}},"read_paths":["$PWD/s"],"deterministic":true}
JSON
  cat >rel-sent/sent.py <<PY
import os
os.close(os.open("$PWD/s/fifo", os.O_RDONLY | os.O_NONBLOCK))
def hello(call):
    return "hi"
PY
  ( exec 3>s/fifo; echo ran >marker ) </dev/null >/dev/null 2>&1 &
  WRITER=$!
  R=$(install_release "$PWD/rel-sent")
}

@test "bin/gl-run has no test switch; the test build has them" {
  ! grep -q GL_TEST_ "$GL_ROOT/bin/gl-run"
  grep -q GL_TEST_NO_SECCOMP "$TGLRUN"
}

@test "a session: fully_enforced then exited, named by the result record, verified offline with only the host's public key" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  run bash -c "{ $(declare -f call envelope); call c1 $R; call c2 $R; } | gl-run --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  launched=$(receipts_of fully_enforced)
  [ "$(echo "$launched" | wc -l)" -eq 1 ]
  id=$(basename "$launched" .json)
  # both calls were served by that launch and name it
  [ "$(printf '%s\n' "$output" | jq -sc '[.[].receipts]')" = "[[\"$id\"],[\"$id\"]]" ]
  exited=$(receipts_of exited)
  [ "$(jq -r .signed.closes "$exited")" = "$id" ]
  jq -e '.signed.exit.signal == 9 and .signed.stopped_by_host' "$exited"
  # the receipt binds what was verified at install
  rec=$GL_HOME/releases/$R.json
  [ "$(jq -r .signed.target_sha256 "$launched")" = "$(jq -r '.files["probe.py"]' "$rec")" ]
  [ "$(jq -r .signed.manifest_sha256 "$launched")" = "$(jq -r '.files["manifest.json"]' "$rec")" ]
  [ "$(jq -r .signed.interpreter_sha256 "$launched")" = "$(sha "$(readlink -f /usr/bin/python3)")" ]
  jq -e '.signed | .landlock_abi >= 6 and .filesystem == "enforced" and .network == "enforced"
         and .scoped == "enforced" and .seccomp == "enforced" and .profile == "full"' "$launched"
  # offline: a fresh GL_HOME holding only the host's public key
  mkdir -p auditor && cp host.pub "$launched" "$exited" auditor/
  cd auditor
  GL_HOME=$PWD/home run gl-verify receipt "$(basename "$launched")" "$(basename "$exited")" \
    --host host.pub --expect-release "$R" --expect-target-sha256 "$(jq -r '.files["probe.py"]' "$rec")" \
    --expect-manifest-sha256 "$(jq -r '.files["manifest.json"]' "$rec")"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(printf '%s\n' "$output" | jq -s 'map(.ok)|all')" = true ]
  printf '%s\n' "$output" | jq -se '.[0].checks | index("signature") and index("release_binding") and index("target_sha256_binding")'
  printf '%s\n' "$output" | jq -se '.[1].checks | index("closes_launch")'
  printf '%s\n' "$output" | jq -se '.[0].unchecked | index("live_pid_linkage") and index("target_death") and index("call_completion") and index("log_inclusion")'
  [ ! -e home/trust ]
}

@test "the operator's configuration is bound: config_sha256 of its public form in the launch and exit receipts (none without one), printed by gl-verify" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  name=$(jq -r .name "$FIX/releases/sandbox-probe/manifest.json")
  jq --arg n "$name" '.config = {($n): {args: ["--a"], env: {LEVEL: "2"},
    secrets: {TOK: {value: "not-in-any-receipt", to: ["api.example"]}}}}' pol.json >pc.json
  run bash -c "{ $(declare -f call envelope); call c1 $R; } | gl-run --policy pc.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  want=$("$SYSPY" -c 'import hashlib, json, sys
pub = {"args": ["--a"], "env": {"LEVEL": "2"},
       "secrets": {"TOK": {"to": ["api.example"], "in": ["url", "headers", "body"]}}}
print(hashlib.sha256(json.dumps(pub, sort_keys=True, separators=(",", ":")).encode()).hexdigest())')
  launched=$(receipts_of fully_enforced)
  exited=$(receipts_of exited)
  [ "$(jq -r .signed.config_sha256 "$launched")" = "$want" ]
  [ "$(jq -r .signed.config_sha256 "$exited")" = "$want" ]
  ! grep -q "not-in-any-receipt" rc/*.json
  run verify "$launched" "$exited"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  printf '%s\n' "$output" | jq -se --arg w "$want" 'all(.config_sha256 == $w and .ok)'
  # an auditor requiring it: met; another configuration: mismatch
  run verify "$launched" --expect-config-sha256 "$want"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  json '.ok and (.checks | index("config_sha256_binding"))'
  run verify "$launched" --expect-config-sha256 "$(printf '%064d' 7)"
  [ "$status" -eq 1 ]
  json '.error == "mismatch" and .failed == "config_sha256_binding"'
  # an edited binding breaks the signature
  cp "$launched" edited.json
  canon edited.json '.signed.config_sha256 = ("0" * 64)'
  run verify edited.json
  [ "$status" -eq 1 ]
  json '.error == "bad_signature"'
  # the same release without a configuration: no config_sha256
  rm -rf rc && mkdir rc
  run bash -c "{ $(declare -f call envelope); call c2 $R; } | gl-run --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  jq -se 'all(.signed | has("config_sha256") | not)' rc/*.json
  # which cannot meet an expected configuration
  run verify "$(receipts_of fully_enforced)" --expect-config-sha256 "$want"
  [ "$status" -eq 1 ]
  json '.error == "mismatch" and (.detail | contains("absent"))'
}

@test "changing only --expect-target-sha256 makes the verifier exit 1; so does another release or manifest" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  call c1 "$R" | gl-run --policy pol.json --receipts rc --host-key host >/dev/null
  f=$(receipts_of fully_enforced)
  t=$(jq -r .signed.target_sha256 "$f")
  run verify "$f" --expect-release "$R" --expect-target-sha256 "$t"
  [ "$status" -eq 0 ]
  other=$(printf '%s' x | sha256sum | cut -c1-64)
  run verify "$f" --expect-release "$R" --expect-target-sha256 "$other"
  [ "$status" -eq 1 ] && [ "$(json .failed)" = target_sha256_binding ] && [ "$(json .error)" = mismatch ]
  run verify "$f" --expect-manifest-sha256 "$other"
  [ "$status" -eq 1 ] && [ "$(json .failed)" = manifest_sha256_binding ]
  run verify "$f" --expect-interpreter-sha256 "$other"
  [ "$status" -eq 1 ] && [ "$(json .failed)" = interpreter_sha256_binding ]
  run verify "$f" --expect-state exited
  [ "$status" -eq 1 ] && [ "$(json .failed)" = state ]
}

@test "a receipt from another release passed with --expect-release is refused (release binding)" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  cp -r "$FIX/releases/sandbox-probe" probe2
  jq '.version = "2.0.0"' "$FIX/releases/sandbox-probe/manifest.json" >probe2/manifest.json
  R2=$(install_release "$PWD/probe2")
  call c1 "$R2" | gl-run --policy pol.json --receipts rc --host-key host >/dev/null
  f=$(receipts_of fully_enforced)
  run verify "$f" --expect-release "$R2"
  [ "$status" -eq 0 ]
  run verify "$f" --expect-release "$R"
  [ "$status" -eq 1 ] && [ "$(json .failed)" = release_binding ]
}

@test "a different host key, an edited target_sha256 or release: bad_signature" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  call c1 "$R" | gl-run --policy pol.json --receipts rc --host-key host >/dev/null
  f=$(receipts_of fully_enforced)
  run gl-verify receipt "$f" --host other.pub
  [ "$status" -eq 1 ] && [ "$(json .error)" = bad_signature ] && [ "$(json .failed)" = signature ]
  # the canonical rewrite alone leaves a valid receipt (the reference)
  cp "$f" same.json && canon same.json .
  run verify same.json
  [ "$status" -eq 0 ]
  other=$(printf '%s' x | sha256sum | cut -c1-64)
  cp "$f" t.json && canon t.json ".signed.target_sha256 = \"$other\""
  run verify t.json --expect-target-sha256 "$other"
  [ "$status" -eq 1 ] && [ "$(json .error)" = bad_signature ]
  cp "$f" r.json && canon r.json ".signed.release = \"$other\""
  run verify r.json --expect-release "$other"
  [ "$status" -eq 1 ] && [ "$(json .error)" = bad_signature ]
  # a signature by another key added does not help, the host's still decides
  cp "$f" s.json && canon s.json '.signatures += [{"keyid":"'"$(printf 0%.0s {1..64})"'","sig":"00"}]'
  run verify s.json
  [ "$status" -eq 0 ]
}

@test "a release file changed after install: rejected, the binding named, nothing launched" {
  for what in target manifest added; do
    R=$(install_release "$FIX/releases/sandbox-probe")
    d=$GL_HOME/releases/$R
    chmod u+w "$d" "$d"/*
    case $what in
      target) echo 'raise SystemExit("substituted")' >>"$d/probe.py"; want=target_sha256 ;;
      manifest) jq -c '.version = "9.9.9"' "$d/manifest.json" >m && cat m >"$d/manifest.json"; want=manifest_sha256 ;;
      added) echo 'import os' >"$d/json.py"; want=tree ;;
    esac
    rm -f rc/*
    run bash -c "$(declare -f call envelope); call c1 $R | gl-run --policy pol.json --receipts rc --host-key host"
    [ "$status" -eq 1 ]
    [ "$(json .error)" = rejected ] || { echo "$what: $output"; false; }
    f=$(receipts_of rejected)
    [ -n "$f" ] && [ -z "$(receipts_of fully_enforced)" ]
    [ "$(jq -r .signed.binding "$f")" = "$want" ] || { echo "$what: $(cat "$f")"; false; }
    run verify "$f" --expect-release "$R"
    [ "$status" -eq 0 ] && [ "$(json .state)" = rejected ]
    run verify "$f" --expect-state fully_enforced
    [ "$status" -eq 1 ]
  done
}

@test "the interpreter swapped after it was hashed: the retained descriptor runs, never the new bytes" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  mkdir py && cp "$(readlink -f /usr/bin/python3)" py/python3.11 && cp /bin/false py/swap
  want=$(sha py/python3.11)
  run bash -c "$(declare -f call envelope); call c1 $R | GL_TEST_INTERPRETER=$PWD/py/python3.11 GL_TEST_SWAP_INTERPRETER=$PWD/py/swap $TGLRUN --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  cmp -s py/python3.11 /bin/false # the path holds the new bytes now
  f=$(receipts_of fully_enforced)
  [ "$(jq -r .signed.interpreter_sha256 "$f")" = "$want" ]
  run verify "$f" --expect-interpreter-sha256 "$want"
  [ "$status" -eq 0 ]
  run verify "$f" --expect-interpreter-sha256 "$(sha py/python3.11)"
  [ "$status" -eq 1 ] && [ "$(json .failed)" = interpreter_sha256_binding ]
  # reference: launched from what the path holds now, nothing is served
  rm -f rc/*
  run bash -c "$(declare -f call envelope); call c1 $R | GL_TEST_INTERPRETER=$PWD/py/python3.11 $TGLRUN --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 1 ] && [ "$(json .error)" = launch ]
  [ "$(jq -r .signed.interpreter_sha256 "$(receipts_of fully_enforced)")" = "$(sha /bin/false)" ]
  jq -e '.signed.binding == "initialisation" and .signed.exit.code == 1' "$(receipts_of exited)" || { cat "$(receipts_of exited)"; false; }
}

@test "a lowered Landlock ABI without network rules: bootstrap_failed and no tool code ran" {
  sentinel_release
  run bash -c "$(declare -f call envelope); call c1 $R | GL_TEST_LANDLOCK_ABI=3 $TGLRUN --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 1 ]
  [ "$(json .error)" = bootstrap_failed ]
  json '.detail|test("landlock_network")'
  f=$(receipts_of bootstrap_failed)
  [ "$(jq -c .signed.missing "$f")" = '["landlock_network"]' ]
  [ "$(jq -r .signed.landlock_abi "$f")" = 3 ]
  [ -z "$(receipts_of fully_enforced)" ]
  [ "$(printf '%s\n' "$output" | jq -c .receipts)" = "[\"$(basename "$f" .json)\"]" ]
  run verify "$f" --expect-release "$R" --expect-state bootstrap_failed
  [ "$status" -eq 0 ]
  [ ! -e marker ] # the module never ran
  # reference: on the kernel's own ABI the same release runs, and the sentinel appears
  run bash -c "$(declare -f call envelope); call c1 $R | $TGLRUN --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  for _ in $(seq 100); do [ -e marker ] && break; sleep 0.1; done
  [ "$(cat marker)" = ran ]
  WRITER=
}

@test "profile full refuses ABI 5 (scoping); the named weaker profile no-scope runs and says so" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  run bash -c "$(declare -f call envelope); call c1 $R | GL_TEST_LANDLOCK_ABI=5 $TGLRUN --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 1 ] && [ "$(json .error)" = bootstrap_failed ]
  [ "$(jq -c .signed.missing "$(receipts_of bootstrap_failed)")" = '["landlock_scope"]' ]
  rm -f rc/*
  run bash -c "$(declare -f call envelope); call c1 $R | GL_TEST_LANDLOCK_ABI=5 $TGLRUN --profile no-scope --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  f=$(receipts_of fully_enforced)
  jq -e '.signed | .profile == "no-scope" and .landlock_abi == 5 and .scoped == "not_enforced" and .network == "enforced"' "$f"
  jq -e '.signed.profile == "no-scope"' "$(receipts_of exited)"
  run verify "$f"
  [ "$status" -eq 0 ] && [ "$(json .profile)" = no-scope ]
  # the same receipt relabelled "full" claims what was not installed
  canon "$f" '.signed.profile = "full"'
  run verify "$f"
  [ "$status" -eq 1 ]
  # no-scope still needs network rules
  rm -f rc/*
  run bash -c "$(declare -f call envelope); call c1 $R | GL_TEST_LANDLOCK_ABI=3 $TGLRUN --profile no-scope --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 1 ] && [ "$(jq -c .signed.missing "$(receipts_of bootstrap_failed)")" = '["landlock_network"]' ]
  run gl-run --profile none --policy pol.json </dev/null
  [ "$status" -eq 2 ]
}

@test "no Landlock, no seccomp, no user or net namespaces: each refused with bootstrap_failed naming it" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  for c in GL_TEST_LANDLOCK_ABI=0:landlock GL_TEST_NO_SECCOMP=1:seccomp \
           GL_TEST_NO_USERNS=1:user_namespace GL_TEST_NO_NETNS=1:net_ipc_namespaces; do
    rm -f rc/*
    run bash -c "$(declare -f call envelope); call c1 $R | env ${c%%:*} $TGLRUN --policy pol.json --receipts rc --host-key host"
    [ "$status" -eq 1 ] && [ "$(json .error)" = bootstrap_failed ] || { echo "$c: $output"; false; }
    f=$(receipts_of bootstrap_failed)
    [ "$(jq -r '.signed.missing[0]' "$f")" = "${c##*:}" ] || { echo "$c: $(cat "$f")"; false; }
    [ -z "$(receipts_of fully_enforced)" ]
    run verify "$f" --expect-state bootstrap_failed
    [ "$status" -eq 0 ]
  done
  # reference: the test build with no switch set launches
  rm -f rc/*
  run bash -c "$(declare -f call envelope); call c1 $R | $TGLRUN --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] && [ -n "$(receipts_of fully_enforced)" ]
}

@test "fresh: a launch per call, each call names its launch and exit; sigpin: no receipt" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  run bash -c "{ $(declare -f call envelope); call c1 $R; call c2 $R; } | gl-run --mode fresh --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(ls rc | wc -l)" -eq 4 ]
  recs=$output
  for n in 0 1; do
    ids=$(printf '%s\n' "$recs" | jq -sr ".[$n].receipts[]")
    [ "$(echo "$ids" | wc -l)" -eq 2 ]
    run verify $(for i in $ids; do echo "rc/$i.json"; done)
    [ "$status" -eq 0 ]
  done
  rm -f rc/*
  run bash -c "$(declare -f call envelope); call c1 $R | gl-run --mode sigpin --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] && [ "$(json -c .receipts)" = '[]' ] && [ -z "$(ls rc)" ]
}

@test "unknown release: a rejected receipt" {
  R=$(printf '%s' nothing | sha256sum | cut -c1-64)
  run bash -c "$(declare -f envelope); envelope c1 $R hello | gl-run --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 1 ]
  f=$(receipts_of rejected)
  [ -n "$f" ] && [ "$(jq -r .signed.binding "$f")" = release ]
  run verify "$f" --expect-release "$R"
  [ "$status" -eq 0 ]
}

@test "malformed and hostile receipts: exit 1, never a crash; usage: exit 2" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  call c1 "$R" | gl-run --policy pol.json --receipts rc --host-key host >/dev/null
  f=$(receipts_of fully_enforced)
  head -c 100 "$f" >trunc.json
  : >empty.json
  printf 'not json' >notjson.json
  jq -cS '.signed.landlock_abi = "7"' "$f" | tr -d '\n' >type.json
  jq -cS '.signed.state = "running"' "$f" | tr -d '\n' >state.json
  jq -cS '.signatures = "x"' "$f" | tr -d '\n' >sigs.json
  jq -cS '.signed.namespaces = [1,2]' "$f" | tr -d '\n' >ns.json
  jq -cS '.signed.at = "2999-01-01T00:00:00Z"' "$f" | tr -d '\n' >future.json
  jq -cS '.signed.extra = 1' "$f" | tr -d '\n' >extra.json
  jq -cS '.' "$f" >newline.json # a trailing newline is not canonical
  sed 's/"_type"/"_type":"x","_type"/' "$f" >dup.json
  head -c 70000 /dev/zero | tr '\0' 'a' >huge.json
  printf '%0.s[' $(seq 5000) >deep.json
  for x in trunc empty notjson type state sigs ns future extra newline dup huge deep; do
    run verify "$x.json"
    [ "$status" -eq 1 ] || { echo "$x: $status $output"; false; }
    json -e '.ok == false and (.error|length > 0) and (.checks|type == "array") and (.unchecked|type == "array")' >/dev/null
  done
  run gl-verify receipt "$f"
  [ "$status" -eq 2 ]
  run verify "$f" --expect-release nothex
  [ "$status" -eq 2 ]
  run verify nonexistent.json
  [ "$status" -eq 2 ]
  run gl-run --policy pol.json --receipts rc </dev/null
  [ "$status" -eq 2 ]
}

# tree_sha256_of ARCHIVE — what an auditor recomputes from the release
# archive alone (docs/receipts.md "Recomputing tree_sha256"): every regular
# file's SHA-256 by its path in the archive, as canonical JSON, hashed
tree_sha256_of() {
  local t
  t=$(mktemp -d "$BATS_TEST_TMPDIR/tree.XXXXXX")
  tar -xzf "$1" -C "$t"
  (cd "$t" && find . -type f -printf '%P\0' | sort -z | xargs -0 -r sha256sum) |
    jq -Rn '[inputs | capture("^(?<h>[0-9a-f]{64})  (?<p>.+)$") | {(.p): .h}] | add // {}' -cjS |
    sha256sum | cut -c1-64
}

@test "mode: a nosplit launch verifies as fully_enforced but is refused with --expect-mode germline, accepted with nosplit" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  run bash -c "$(declare -f call envelope); call c1 $R | gl-run --mode nosplit --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  f=$(receipts_of fully_enforced)
  [ -n "$f" ] && [ "$(jq -r .signed.mode "$f")" = nosplit ]
  # without an expectation: ok, the mode printed, its binding unchecked
  run verify "$f" --expect-state fully_enforced
  [ "$status" -eq 0 ]
  json '.ok and .mode == "nosplit" and (.tree_sha256 | length) == 64
    and (.unchecked | index("mode_binding")) and (.unchecked | index("tree_sha256_binding"))'
  # what was a germline launch claim is refused
  run verify "$f" --expect-state fully_enforced --expect-mode germline
  [ "$status" -eq 1 ]
  json '.ok == false and .error == "mismatch" and .failed == "mode_binding"
    and (.detail | contains("nosplit"))'
  run verify "$f" --expect-mode nosplit
  [ "$status" -eq 0 ]
  json '.ok and (.checks | index("mode_binding")) and (.unchecked | index("mode_binding") | not)'
  # the exited receipt carries the mode too
  run verify "$(receipts_of exited)" --expect-mode germline
  [ "$status" -eq 1 ] && json '.failed == "mode_binding"'
  # a mode gl-run does not have is a usage error
  run verify "$f" --expect-mode split
  [ "$status" -eq 2 ]
}

@test "tree_sha256: the hash an auditor recomputes from the archive; another tree is refused; a receipt without one cannot meet it" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  call c1 "$R" | gl-run --policy pol.json --receipts rc --host-key host >/dev/null
  f=$(receipts_of fully_enforced)
  archive=$(ls "$BATS_TEST_TMPDIR"/pub/sandbox-probe-*.tar.gz)
  H=$(tree_sha256_of "$archive")
  [ "$(jq -r .signed.tree_sha256 "$f")" = "$H" ]
  run verify "$f" --expect-release "$R" --expect-tree-sha256 "$H"
  [ "$status" -eq 0 ]
  json --arg h "$H" '.ok and .tree_sha256 == $h and (.checks | index("tree_sha256_binding"))'
  # another tree: the same release with one more file (what a receipt of a
  # tampered or other install binds) does not meet the reviewed hash
  mkdir other && cp -r "$FIX/releases/sandbox-probe/." other/ && echo x >other/extra.py
  (cd other && tar -czf ../other.tar.gz .)
  H2=$(tree_sha256_of other.tar.gz)
  [ "$H2" != "$H" ]
  run verify "$f" --expect-tree-sha256 "$H2"
  [ "$status" -eq 1 ]
  json '.error == "mismatch" and .failed == "tree_sha256_binding"'
  run verify "$f" --expect-tree-sha256 "nothex"
  [ "$status" -eq 2 ]
  # a rejected receipt (unknown release) binds no tree: it cannot be
  # checked, so it does not pass, and says so
  U=$(printf '%s' nothing | sha256sum | cut -c1-64)
  rm -f rc/*
  run bash -c "$(declare -f envelope); envelope c1 $U hello | gl-run --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 1 ]
  run verify "$(receipts_of rejected)" --expect-tree-sha256 "$H"
  [ "$status" -eq 1 ]
  json '.error == "mismatch" and .failed == "tree_sha256_binding"
    and (.detail | contains("absent")) and (.unchecked | index("tree_sha256_binding"))'
}

@test "a receipt copied over another's file is refused (file_name), and --expect-receipt and --expect-profile bind the id and the profile (off, test build: the swap verifies)" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  mkdir rc2
  run bash -c "$(declare -f call envelope); call c1 $R | gl-run --policy pol.json --receipts rc --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  run bash -c "$(declare -f call envelope); call c2 $R | gl-run --mode nosplit --policy pol.json --receipts rc2 --host-key host"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  g=$(receipts_of fully_enforced)
  n=$(jq -r 'select(.signed.state == "fully_enforced") | input_filename' rc2/*.json)
  [ -n "$g" ] && [ -n "$n" ] && [ "$(jq -r .signed.mode "$n")" = nosplit ]
  nid=$(basename "$n" .json)
  gid=$(basename "$g" .json)
  # each as written: its name is its id
  run verify "$n" --expect-receipt "$nid" --expect-profile full
  [ "$status" -eq 0 ]
  json '.ok and .receipt == "'"$nid"'" and (.checks | index("file_name")) and (.checks | index("receipt_id"))
    and (.checks | index("profile_binding"))'
  # the germline launch's receipt copied over the nosplit call's file
  cp "$g" "$n"
  run verify "$n" --expect-mode germline
  [ "$status" -eq 1 ]
  json '.ok == false and .error == "mismatch" and .failed == "file_name"'
  [ -x "$GL_ROOT/build/testing/bin/gl-verify" ] || skip "build/testing/bin/gl-verify is not built (make units)"
  run env GL_TEST_RECEIPT_NAME_OFF=1 "$GL_ROOT/build/testing/bin/gl-verify" receipt "$n" --host host.pub --expect-mode germline
  [ "$status" -eq 0 ]
  json '.ok and .mode == "germline"' # off: what the nosplit call's record names verifies as a germline launch
  # under another name the file's name proves nothing, the id asked for does
  cp "$g" other.json
  run verify other.json --expect-receipt "$nid"
  [ "$status" -eq 1 ]
  json '.failed == "receipt_id"'
  run verify other.json --expect-receipt "$gid"
  [ "$status" -eq 0 ]
  json '.ok and (.unchecked | index("file_name"))'
  # the profile
  run verify "$g" --expect-profile no-scope
  [ "$status" -eq 1 ]
  json '.failed == "profile_binding"'
  run verify "$g" --expect-profile partial
  [ "$status" -eq 2 ]
  run verify "$g" --expect-receipt nothex
  [ "$status" -eq 2 ]
}

@test "a call's record is bound to its receipts: gl-verify call verifies gl-run's records; one edited to name another launch's receipt is refused (off, test build: it verifies)" {
  R=$(install_release "$FIX/releases/sandbox-probe")
  bash -c "$(declare -f call envelope); call c1 $R | gl-run --policy pol.json --receipts rc --host-key host" >g.jsonl
  bash -c "$(declare -f call envelope); call c2 $R | gl-run --mode nosplit --policy pol.json --receipts rc --host-key host" >n.jsonl
  jq -e '(.receipts_signature | length) == 128' g.jsonl n.jsonl
  # a call id that is a number but no integer (1.5) has no canonical
  # statement: its record is written unsigned, gl-run says why, the session
  # goes on (never a crash); gl-verify call refuses it as unsigned
  { bash -c "$(declare -f envelope); envelope c3 $R hello" | jq -c '.id = 1.5' | gl-plan --policy pol.json
    bash -c "$(declare -f call envelope); call c4 $R"; } |
    gl-run --policy pol.json --receipts rc --host-key host >f.jsonl 2>f.err
  jq -e -s 'length == 2 and (.[0] | .id == 1.5 and .ok and (has("receipts_signature") | not))
    and (.[1] | .id == "c4" and (.receipts_signature | length) == 128)' f.jsonl
  grep -q "receipts are not signed" f.err
  # as written: each record and the receipts it names verify
  run --separate-stderr gl-verify call g.jsonl --host host.pub --receipts rc
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.ok and .call == "c1" and .line == 1 and (.receipts | length) >= 1
    and all(.receipts[]; .ok and .release == "'"$R"'")'
  run --separate-stderr gl-verify call - --host host.pub --receipts rc <n.jsonl
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.ok and .call == "c2" and any(.receipts[]; .mode == "nosplit")'
  # the nosplit call's record edited to name the germline launch's receipt
  jq -c --arg g "$(jq -r '.receipts[0]' g.jsonl)" '.receipts = [$g]' n.jsonl >edited.jsonl
  [ -x "$GL_ROOT/build/testing/bin/gl-verify" ] || skip "build/testing/bin/gl-verify is not built (make units)"
  run --separate-stderr env GL_TEST_CALL_BINDING_OFF=1 "$GL_ROOT/build/testing/bin/gl-verify" call edited.jsonl --host host.pub --receipts rc
  [ "$status" -eq 0 ]
  json '.ok and all(.receipts[]; .mode == "germline")' # off: passes for a germline call
  run --separate-stderr gl-verify call edited.jsonl --host host.pub --receipts rc
  [ "$status" -eq 1 ]
  json '.ok == false and .error == "bad_signature" and .call == "c2" and (has("receipts") | not)'
  # the mode edited; the signature removed; another host's key
  jq -c '.mode = "germline"' n.jsonl >mode.jsonl
  jq -c 'del(.receipts_signature)' n.jsonl >nosig.jsonl
  for f in mode nosig; do
    run --separate-stderr gl-verify call "$f.jsonl" --host host.pub --receipts rc
    [ "$status" -eq 1 ]
    json '.error == "bad_signature"'
  done
  run --separate-stderr gl-verify call n.jsonl --host other.pub --receipts rc
  [ "$status" -eq 1 ]
  json '.error == "bad_signature"'
  # hostile lines: each answered, never a crash
  printf '%s\n' 'not json' '[1]' '{"receipts":"x","receipts_signature":"00"}' \
    '{"receipts":["'"$(printf 'a%.0s' $(seq 64))"'",5]}' >bad.jsonl
  run --separate-stderr gl-verify call bad.jsonl --host host.pub --receipts rc
  [ "$status" -eq 1 ]
  [ "$(jq -sc 'map(.error)' <<<"$output")" = '["bad_record","bad_record","bad_record","bad_record"]' ]
  # a receipt the record names that is not there: an I/O error, exit 2
  mkdir empty
  run --separate-stderr gl-verify call n.jsonl --host host.pub --receipts empty
  [ "$status" -eq 2 ]
  run --separate-stderr gl-verify call n.jsonl --host host.pub
  [ "$status" -eq 2 ]
}
