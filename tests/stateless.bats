#!/usr/bin/env bats
# Calls that provably keep no state run side by side (issue 19;
# docs/formats.md "state", docs/gl-run.md "--jobs"): a manifest function
# may declare "state": "none", signed by its publisher. Enforced by the
# broker (lib/broker/broker.c keeps_no_state), fail closed: such a call's
# copies read no slot (an empty call.state), take no slot lock, and a
# state_put of theirs ends the copy ("protocol") with nothing written; so
# the dispatcher (lib/session/jobs.c job_keys) gives them no slot key and
# calls of one slot overlap at --jobs 2. Real gl-run, real germline; the
# fixture is tests/fixtures/releases/sl-nap (nap: declared, nap_slot: the
# same code undeclared, bump: a counter in its slot, liar: bump declared
# "none"; and tests/fixtures/mcp/liar, an MCP server that writes a
# state_put on fd 3 itself). The enforcement off is the GL_TESTING build's
# GL_TEST_STATELESS_UNENFORCED=1 (the broker ignores the declaration).
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  TBIN=$GL_ROOT/build/testing/bin
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":[]},"routes":{}}' >"$POLICY"
  R=$(install_release "$FIX/releases/sl-nap")
  SLOT=$GL_HOME/slots/$R/$(printf '%s' '[]' | sha256sum | cut -c1-64).json
}

teardown() {
  [ -s "$BATS_TEST_TMPDIR/bg" ] && kill -9 "$(cat "$BATS_TEST_TMPDIR/bg")" 2>/dev/null
  release_cleanup
}

# call ID FUNCTION [ARGS_JSON] — one planned call of sl-nap for agent
call() {
  envelope "$1" "$R" "$2" '[]' "$(jq -cn --argjson a "${3:-{\}}" '{args:$a}')" |
    gl-plan --policy "$POLICY"
}
ids() { jq -r .id "$1" | paste -sd' '; }
value() { jq -c --arg i "$2" 'select(.id == $i) | .results[0].value' "$1"; }

@test "manifest: \"state\" is \"slot\" or \"none\"; anything else, or \"none\" with state_dir, is bad_manifest (gl-plan, gl-sign)" {
  mkdir rel
  m() { # JSON — a manifest installed under rel/; prints its sha
    local sha
    sha=$(printf '%s' "$1" | sha256sum | cut -c1-64)
    mkdir -p "rel/$sha"
    printf '%s' "$1" >"rel/$sha/manifest.json"
    echo "$sha"
  }
  plan() { run --separate-stderr gl-plan --policy "$POLICY" --releases rel <<<"$(envelope x "$1" f)"; }
  py='{"name":"p","version":"1","runtime":"python","entry":"m","functions":{"f":{"state":STATE}}}'
  for st in '"none"' '"slot"'; do
    plan "$(m "${py/STATE/$st}")"
    [ "$status" -eq 0 ] || { echo "$st: $output"; false; }
  done
  for st in '"None"' '"stateless"' 'true' 'null' '["none"]' '""'; do
    plan "$(m "${py/STATE/$st}")"
    [ "$status" -eq 1 ]
    json '.error == "bad_manifest" and (.detail | test("functions.f.state: not \"slot\" or \"none\""))'
  done
  ex='{"name":"p","version":"1","runtime":"exec","entry":["/usr/bin/true"],"state_dir":true,"functions":{"f":{"state":"none"}}}'
  plan "$(m "$ex")"
  json '.error == "bad_manifest" and (.detail | test("functions.f.state: \"none\" with \"state_dir\": true"))'
  local none='"none"' slot='"slot"'
  plan "$(m "${ex/$none/$slot}")"
  [ "$status" -eq 0 ]
  # the publisher's gl-sign refuses to sign one; sl-nap's (none and slot) it signed in setup
  local nothing='"nothing"'
  mkdir bad && printf '%s' "${py/STATE/$nothing}" >bad/manifest.json && touch bad/m.py
  cd "$BATS_TEST_TMPDIR/pub"
  gl-sign pack ../bad bad.tar.gz >/dev/null
  run --separate-stderr gl-sign add repo --key tk bad.tar.gz
  [ "$status" -ne 0 ]
  json '.error == "bad_manifest" and (.detail | test("state"))'
}

@test "--jobs 2: two calls of one slot overlap when stateless (the short one's record first); undeclared, they keep input order" {
  # on: nap, declared "none": no slot key, the short call is not held
  { call long nap '{"sleep":4}'; call short nap; } >in
  gl-run --policy "$POLICY" --jobs 2 --unordered <in >o1
  cat o1
  [ "$(ids o1)" = "short long" ]
  jq -e -s 'all(.ok) and all(.results[0].value == {saw: []})' o1
  # off: nap_slot, the same code without the declaration: one slot, one
  # call after the other, the short one's record after the long one's
  { call long nap_slot '{"sleep":4}'; call short nap_slot; } >in2
  gl-run --policy "$POLICY" --jobs 2 --unordered <in2 >o2
  cat o2
  [ "$(ids o2)" = "long short" ]
  jq -e -s 'all(.ok)' o2
  # the policy's "concurrency": "none" still runs them one at a time
  jq '.concurrency = "none"' "$POLICY" >p2
  gl-run --policy p2 --jobs 2 --unordered <in >o3
  [ "$(ids o3)" = "long short" ]
}

@test "a stateless call sees an empty call.state, whatever its slot holds (off: unenforced, it reads the slot)" {
  { call seed bump; call look nap; call look_slot nap_slot; } >in
  gl-run --policy "$POLICY" <in >o
  cat o
  [ "$(value o seed)" = 1 ]
  [ "$(value o look)" = '{"saw":[]}' ]
  [ "$(value o look_slot)" = '{"saw":["n"]}' ]
  plain_pass || return 0 # the damage is the plain pass's (docs/testing.md)
  call look nap | GL_TEST_STATELESS_UNENFORCED=1 "$TBIN/gl-run" --policy "$POLICY" >off
  [ "$(value off look)" = '{"saw":["n"]}' ]
}

@test "a release that declares \"none\" and still writes: the call fails protocol, the slot is untouched (off: the write lands)" {
  call seed bump | gl-run --policy "$POLICY" >o0
  [ "$(jq -c .n.value "$SLOT")" = 1 ]
  cp "$SLOT" before
  { call lie liar; call lie2 liar; } >in
  for jobs in 1 2; do
    run --separate-stderr gl-run --policy "$POLICY" --jobs "$jobs" <in
    echo "$output"
    json -s 'length == 2 and all(.results[0] | .ok == false and .error == "protocol"
      and (.detail | startswith("state_put: the function declares \"state\": \"none\"")))'
    cmp before "$SLOT"
  done
  # the counter goes on from what the honest call wrote
  call next bump | gl-run --policy "$POLICY" >o1
  [ "$(value o1 next)" = 2 ]
  plain_pass || return 0
  # off: the broker ignores the declaration, the liar's write lands
  call lie liar | GL_TEST_STATELESS_UNENFORCED=1 "$TBIN/gl-run" --policy "$POLICY" >off
  cat off
  [ "$(value off lie)" = 3 ]
  [ "$(jq -c .n.value "$SLOT")" = 3 ]
}

@test "two gl-run processes: a stateless call takes no slot lock, so it is not held by another process's call of its slot" {
  mkfifo fifo
  # process 1: a 30 s call of the slot, holding its lock while it runs
  gl-run --policy "$POLICY" <fifo >o1 2>e1 3>&- &
  echo $! >"$BATS_TEST_TMPDIR/bg"
  exec 4>fifo
  call hold nap_slot '{"sleep":30}' >&4
  local i held=no
  for i in $(seq 600); do # until process 1 holds the slot's lock (flock(1) cannot take it)
    [ -e "$SLOT.lock" ] && ! flock -n "$SLOT.lock" true && held=yes && break
    sleep 0.05
  done
  [ "$held" = yes ]
  # process 2, its calls' budget 3 s: the stateless one runs; the same
  # code undeclared waits for the lock past its budget (slot_busy)
  { call free nap; call held nap_slot; } >in
  run --separate-stderr gl-run --policy "$POLICY" --deadline 3 <in
  [ "$status" -eq 1 ] # a refused call
  echo "$output" >o2
  cat o2
  [ "$(value o2 free)" = '{"saw":[]}' ]
  jq -e 'select(.id == "held") | .ok == false and .error == "slot_busy"' o2
  kill -0 "$(cat "$BATS_TEST_TMPDIR/bg")" # process 1 still runs its call
  exec 4>&-
}

# copies_of PID — the NSpid numbers (in the germline's namespace) of the
# live copies under gl-run PID (tests/jobs-germline.bats)
copies_of() {
  local c
  for c in $(pgrep -P "$(pgrep -d, -P "$1")" 2>/dev/null); do
    awk '/^NSpid:/ && NF == 4 && $4 == 1 { print $3 }' "/proc/$c/status" 2>/dev/null
  done | sort -n | paste -sd' '
}

@test "G1 beside two live mcp-stdio copies of one stateless germline: a double-forked helper is still refused (off: the loose rule passes it)" {
  cp -r "$FIX/mcp/slow" mcp-slow-none
  jq '.name = "mcp-slow-none" | .functions |= map_values(. + {state: "none"})' \
    "$FIX/mcp/slow/manifest.json" >mcp-slow-none/manifest.json
  S=$(install_release "$BATS_TEST_TMPDIR/mcp-slow-none")
  local x=$BATS_TEST_TMPDIR/helper tag=gls$$$RANDOM
  cp -r "$FIX/releases/contain-helper" "$x" && echo "${tag:0:15}" >"$x/TAG"
  X=$(install_release "$x")
  nap() { envelope "$1" "$S" sleep '[]' '{"args":{"seconds":4}}' | gl-plan --policy "$POLICY"; }
  put() { envelope put "$X" put '[]' '{"args":{"secret":42}}' | gl-plan --policy "$POLICY"; }
  # glrun GLRUN [ENV...] — two sleeps of S, then (once both copies live)
  # X's put, at --jobs 3; the records in o
  glrun() {
    rm -f fifo && mkfifo fifo
    env "${@:2}" "$1" --policy "$POLICY" --jobs 3 --unordered <fifo >o 2>e 3>&- &
    local p=$! i seen=""
    exec 4>fifo
    { nap s1; nap s2; } >&4
    for i in $(seq 600); do # both mcp-stdio copies of S's germline alive at once
      seen=$(copies_of "$p")
      [ "$seen" = "3 4" ] && break
      sleep 0.05
    done
    echo "live copies' numbers: $seen"
    put >&4
    exec 4>&-
    wait "$p" || true
    cat o
    [ "$seen" = "3 4" ]
  }
  glrun gl-run
  jq -e -s 'map(select(.id == "s1" or .id == "s2")) | length == 2 and all(.ok and .results[0].ok)' o
  jq -e -s 'map(select(.id == "put"))[0] | .ok == false and .error == "germline_check"
    and (.detail | test("G1: a process other than the germline lives in its PID namespace"))' o
  pkill -x "${tag:0:15}" || true
  plain_pass || return 0
  # off: the loose rule (any child of an init passes once copies are live)
  glrun "$TBIN/gl-run" GL_TEST_LIVE_LOOSE=1
  jq -e -s 'map(select(.id == "put"))[0] | .ok or .error != "germline_check"' o
  pkill -x "${tag:0:15}" || true
}

@test "an mcp-stdio server that declares \"none\" and writes a state_put on the host's channel itself: protocol, no slot (off: it lands)" {
  L=$(install_release "$FIX/mcp/liar")
  LSLOT=$GL_HOME/slots/$L/$(printf '%s' '[]' | sha256sum | cut -c1-64).json
  envelope n "$L" note '[]' '{"args":{"text":"kept"}}' | gl-plan --policy "$POLICY" >in
  run --separate-stderr gl-run --policy "$POLICY" <in
  echo "$output"
  json '.results[0] | .ok == false and .error == "protocol"
    and (.detail | startswith("state_put: the function declares"))'
  [ ! -e "$LSLOT" ]
  plain_pass || return 0
  # off: the broker ignores the declaration, the server's own write lands
  run --separate-stderr env GL_TEST_STATELESS_UNENFORCED=1 "$TBIN/gl-run" --policy "$POLICY" <in
  echo "$output"
  json '.results[0].ok and .results[0].value.content[0].text == "broker said ok"'
  [ "$(jq -c .stolen.value "$LSLOT")" = '"kept"' ]
}
