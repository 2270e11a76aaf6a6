#!/usr/bin/env bats
# The deployer grants read_paths (issue 13 item 1; SPEC §4, §5, §7;
# docs/formats.md "Granted read_paths"; lib/plan/readpaths.c). A manifest's
# read_paths are read-only paths of the germline's (A2) and every copy's (A1)
# allowlist; the release chooses them, so a policy bounds them and some paths
# are never granted: GL_HOME, /proc, /sys, labelled paths and their
# ancestors, also through a symlink ("/" is refused by the manifest's own
# rules already, and by lib/plan/readpaths.c again).
#
# Real releases (tests/fixtures/releases/rpath-reader, tests/fixtures/exec/
# probe), signed and installed through the real chain, with manifests whose
# read_paths this suite writes. The attack is shown with the check switched
# off (build/testing/bin/gl-run, GL_TEST_READPATHS_OFF=1): another horizon's
# slot and a labelled file reach a public consumer; with it on, the release
# is refused before launch.
# unprivileged: yes — gl-run and gl-replay work in a user namespace
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  T=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
  TGLRUN=$GL_ROOT/build/testing/bin/gl-run
  D=$T/data
  mkdir -p "$D/hr" "$T/share"
  CANARY="SALARY-$RANDOM$RANDOM"
  printf 'name,monthly\nalice,%s\n' "$CANARY" >"$D/hr/salary.csv"
  echo "granted words" >"$T/share/words.txt"
  POLICY=$T/policy.json
  policy '[]'
}

teardown() {
  kill_started
  release_cleanup
}

# policy READ_PATHS_JSON — $POLICY: agent cleared for hr, pub public, $D/hr
# labelled hr
policy() {
  jq -n --arg d "$D" --argjson rp "$1" '{clearances:{agent:["hr"],"ocr.example":[]},
    labels:{($d + "/hr/*.csv"):["hr"]}, read_paths:$rp}' >"$POLICY"
}

# reader READ_PATHS_JSON — install rpath-reader with these manifest read_paths
reader() {
  local dir=$T/rel-$RANDOM$RANDOM
  cp -r "$FIX/releases/rpath-reader" "$dir"
  jq -c --argjson rp "$1" '.read_paths = $rp' "$FIX/releases/rpath-reader/manifest.json" \
    >"$dir/manifest.json"
  install_release "$dir"
}

# read_call ID SHA PATHS_JSON [CONSUMER] — read PATHS for CONSUMER (public pub)
read_call() {
  jq -cn --arg id "$1" --arg r "$2" --argjson p "$3" --arg c "${4:-pub}" \
    '{id:$id,release:$r,function:"read",args:{paths:$p},items:[],consumers:[$c]}'
}

# run_calls FILE [GL-RUN [FLAGS…|ENV…]] — gl-plan | gl-run (default bin/gl-run);
# words after GL-RUN starting with "--" are its flags, the others env settings
run_calls() {
  local f=$1 bin=${2:-gl-run} w envs=() flags=()
  shift 2 || shift
  for w in "$@"; do
    if [[ $w == --* || ${#flags[@]} -gt 0 && ${flags[-1]} == --* && $w != *=* ]]; then
      flags+=("$w")
    else
      envs+=("$w")
    fi
  done
  run bash -c "gl-plan --policy '$POLICY' <'$f' | env ${envs[*]} '$bin' --policy '$POLICY' ${flags[*]} 3>&-"
}

# refused PATH RULE — the last run: one record refusing read_paths, naming
# PATH and RULE, with nothing launched
refused() {
  [ "$status" -eq 1 ] || { echo "$output"; false; }
  json --arg p "$1" --arg r "$2" '.ok == false and .error == "read_paths"
    and (.detail | contains($p) and contains("refused: " + $r))
    and (has("copies") | not) and (has("enforcement") | not) and (has("results") | not)
    and (.release | length) == 64 and .id == "c1"'
}

@test "asking for /etc, GL_HOME, a labelled path's ancestor, /proc, /dev: refused before launch, even under a policy granting /**" {
  policy '["/**"]'
  local p rule
  while read -r p rule; do
    sha=$(reader "[\"$p\"]")
    read_call c1 "$sha" '[]' >calls
    run_calls calls
    if [ "$p" = /etc ]; then
      # /etc is only refused where the policy does not grant it
      [ "$status" -eq 0 ] || { echo "$p: $output"; false; }
      continue
    fi
    refused "$p" "$rule" || { echo "$p"; false; }
  done <<EOF
/etc -
$GL_HOME gl_home
$GL_HOME/slots gl_home
$T gl_home
/proc proc_sys
/proc/self proc_sys
/sys/kernel proc_sys
/dev host_runtime
/run host_runtime
$D labelled
$D/hr labelled
$D/hr/salary.csv labelled
EOF
  # and /etc under a policy that grants nothing: not granted
  policy '[]'
  sha=$(reader '["/etc"]')
  read_call c1 "$sha" '["/etc/passwd"]' >calls
  run_calls calls
  refused '"/etc"' not_granted
  # the same policy under a glob that names only some of /usr
  policy '["/usr/share/**"]'
  sha=$(reader '["/usr/lib"]')
  read_call c1 "$sha" '[]' >calls
  run_calls calls
  refused '"/usr/lib"' not_granted
}

@test "the host's other state (--host-key, --receipts, --damp, --releases) is never granted either" {
  policy '["/**"]'
  mkdir -p "$T/keys" "$T/rc"
  (cd "$T/keys" && gl-sign keygen --no-passphrase host >/dev/null)
  local p
  for p in "$T/keys" "$T/keys/host" "$T/rc" "$T/state/damp.json" "$T/state"; do
    sha=$(reader "[\"$p\"]")
    read_call c1 "$sha" '[]' >calls
    run_calls calls gl-run --receipts "$T/rc" --host-key "$T/keys/host" --damp "$T/state/damp.json"
    refused "\"$p\"" gl_home || { echo "$p"; false; }
  done
  # relative flags name the same state
  sha=$(reader "[\"$T/rel-state\"]")
  read_call c1 "$sha" '[]' >calls
  mkdir -p "$T/rel-state"
  run_calls calls gl-run --damp rel-state/damp.json
  refused "\"$T/rel-state\"" gl_home
  # the same release without those flags: granted by "/**" and served
  run_calls calls gl-run
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "a symlink into GL_HOME, or to a labelled directory, is refused under its own name granted" {
  mkdir -p "$GL_HOME/slots"
  ln -s "$GL_HOME/slots" "$T/innocent"
  ln -s "$D" "$T/notes"
  policy "[\"$T/innocent\",\"$T/notes\",\"$T/innocent/**\"]"
  sha=$(reader "[\"$T/innocent\"]")
  read_call c1 "$sha" '[]' >calls
  run_calls calls
  refused "\"$T/innocent\" (resolves to \"$T/glhome/slots\")" gl_home
  sha=$(reader "[\"$T/notes\"]")
  read_call c1 "$sha" '[]' >calls
  run_calls calls
  refused "\"$T/notes\" (resolves to \"$D\")" labelled
  # a path not there yet is resolved through its deepest existing ancestor
  sha=$(reader "[\"$T/innocent/later\"]")
  read_call c1 "$sha" '[]' >calls
  run_calls calls
  refused "resolves to \"$T/glhome/slots/later\"" gl_home
}

@test "granted by the policy: the copy reads it; ungranted paths stay unreadable" {
  policy "[\"$T/share\"]"
  sha=$(reader "[\"$T/share\"]")
  read_call c1 "$sha" "[\"$T/share\",\"$D/hr/salary.csv\",\"/etc/hostname\"]" >calls
  run_calls calls
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  json --arg s "$T/share" --arg f "$T/share/words.txt" --arg h "$D/hr/salary.csv" \
    '.ok and .results[0].ok and .results[0].label == []
     and .results[0].value[$s][$f] == "granted words\n"
     and (.results[0].value[$h] | startswith("denied:"))
     and (.results[0].value["/etc/hostname"] | startswith("denied:"))'
  # the deployer's glob, not the exact path, is what grants
  policy "[\"$T/sh*\"]"
  run_calls calls
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "no read_paths: the system's library alternatives load (libblas.so.3 -> /etc/alternatives), nothing else of /etc/alternatives is seen" {
  lib=$(/usr/bin/python3 -c 'import ctypes.util, sysconfig; print(sysconfig.get_config_var("MULTIARCH"))')
  link=/usr/lib/$lib/libblas.so.3
  [[ $(readlink "$link" 2>/dev/null) == /etc/alternatives/* ]] ||
    skip "$link is not a Debian alternatives link here (python3-numpy's libblas3 installs one)"
  alt=$(readlink "$link")
  sha=$(reader '[]')
  jq -cn --arg r "$sha" --arg alt "$alt" '{id:"c1",release:$r,function:"probe",
    args:{paths:["/etc/alternatives",$alt,"/etc/alternatives/editor"],libs:["libblas.so.3"]},
    items:[],consumers:["pub"]}' >calls
  run_calls calls
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # the link the loader follows is there, as a link, and loads; the
  # directory holds only the library alternatives, no other host name
  json --arg alt "$alt" '.ok and .results[0].value as $v
    | $v.libs["libblas.so.3"] == "loaded"
    and $v.paths[$alt].exists and $v.paths[$alt].link
    and ($v.paths["/etc/alternatives"].names | index($alt | ltrimstr("/etc/alternatives/")) != null)
    and ($v.paths["/etc/alternatives"].names | all(test("^lib[^/]*[.]so[.]")))
    and ($v.paths["/etc/alternatives/editor"].exists | not)'
}

@test "the attack with the check off: another horizon's slot reaches a public consumer; on: refused" {
  policy "[\"$GL_HOME/slots\"]"
  sha=$(reader "[\"$GL_HOME/slots\"]")
  item=$(jq -cn --arg d "$(b64 "$CANARY")" '[{name:"salary.csv",label:["hr"],data:$d}]')
  # the hr horizon's slot gets the salary (the check off: it gets launched at all)
  jq -cn --arg r "$sha" --argjson it "$item" \
    '{id:"c0",release:$r,function:"stash",args:{},items:$it,consumers:["agent"]}' >stash
  run_calls stash "$TGLRUN" GL_TEST_READPATHS_OFF=1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  grep -rq "$CANARY" "$GL_HOME/slots"
  # off: a public call, holding no item, reads the hr slot by path (host
  # uids off as well: a delegated uid cannot open the broker user's slot
  # files whatever the paths, a second layer that would hide this one)
  read_call c1 "$sha" "[\"$GL_HOME/slots\"]" >calls
  run_calls calls "$TGLRUN" GL_TEST_READPATHS_OFF=1 GL_TEST_UIDS_OFF=1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  json '.results[0].consumer == "pub" and .results[0].ok and .results[0].label == []'
  json '.results[0].value | tostring' | grep -q "$CANARY"
  # on (the same test build, and the shipped one): refused, nothing disclosed
  for bin in "$TGLRUN" gl-run; do
    run_calls calls "$bin"
    refused "\"$GL_HOME/slots\"" gl_home
    ! grep -q "$CANARY" <<<"$output"
  done
}

@test "the attack with the check off: a labelled file read by path reaches a public consumer; on: refused" {
  policy "[\"$D\"]"
  sha=$(reader "[\"$D\"]")
  read_call c1 "$sha" "[\"$D/hr/salary.csv\"]" >calls
  run_calls calls "$TGLRUN" GL_TEST_READPATHS_OFF=1
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  json --arg f "$D/hr/salary.csv" '.results[0].label == [] and .results[0].value[$f]' ||
    { echo "$output"; false; }
  json --arg f "$D/hr/salary.csv" '.results[0].value[$f]' | grep -q "$CANARY"
  run_calls calls gl-run
  refused "\"$D\"" labelled
  ! grep -q "$CANARY" <<<"$output"
}

@test "runtime exec: the same rule before its verified launch (off: the labelled file is read)" {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  policy "[\"$D/hr\"]"
  dir=$T/exec-probe
  cp -r "$FIX/exec/probe" "$dir"
  jq -c --arg d "$D/hr" '.read_paths = [$d]' "$FIX/exec/probe/manifest.json" >"$dir/manifest.json"
  sha=$(install_release "$dir")
  jq -cn --arg r "$sha" --arg s "$D/hr/salary.csv" \
    '{id:"c1",release:$r,function:"escape",args:{secret:$s,port:9},items:[],consumers:["pub"]}' >calls
  run_calls calls "$TGLRUN" GL_TEST_READPATHS_OFF=1
  json '.results[0].label == []' || { echo "$output"; false; }
  json '.results[0].value.read_secret' | grep -q "$CANARY"
  run_calls calls gl-run
  refused "\"$D/hr\"" labelled
  ! grep -q "$CANARY" <<<"$output"
}

@test "gl-replay: --policy grants read_paths as gl-run does; without it, an unverified event gl-damp counts" {
  policy "[\"$T/share\"]"
  start_sink # routes ocr.example in $POLICY
  sha=$(reader "[\"$T/share\"]")
  items=$(jq -cn --arg i "$(b64 INVOICE)" --arg s "$(b64 "$CANARY")" \
    '[{name:"invoice.pdf",label:[],data:$i},{name:"salary.csv",label:["hr"],data:$s}]')
  jq -cn --arg r "$sha" --argjson it "$items" \
    '{id:"c1",release:$r,function:"leak",args:{},items:$it,consumers:["agent"]}' >calls
  gl-plan --policy "$POLICY" <calls | gl-run --policy "$POLICY" >results 3>&-
  mkdir items && printf INVOICE >items/invoice.pdf && printf '%s' "$CANARY" >items/salary.csv
  jq -e '.ok and (.triggers | length) == 1' results
  # with the policy: a verdict
  run gl-replay --items items --tries 2 --policy "$POLICY" <results
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  printf '%s\n' "$output" | sed -n 2p | jq -e '.ok and .event == "verified_undeclared"'
  # without: not replayed, an unverified event (weight 250) for gl-damp
  run gl-replay --items items --tries 2 <results
  [ "$status" -eq 1 ]
  printf '%s\n' "$output" | sed -n 2p | jq -e --arg r "$sha" '.ok == false and .error == "read_paths"
    and (.detail | contains("not_granted")) and .release == $r and .event == "unverified"
    and .weight == 250'
  run bash -c "gl-replay --items items --tries 2 <results | gl-damp --state '$T/damp.json'"
  [ "$(printf '%s\n' "$output" | jq -s 'length')" -eq 2 ]
  printf '%s\n' "$output" | tail -1 | jq -e --arg r "$sha" '.release == $r and .penalty > 200'
  # a policy that refuses them refuses the replay the same way
  policy '[]'
  run gl-replay --items items --tries 2 --policy "$POLICY" <results
  printf '%s\n' "$output" | sed -n 2p | jq -e '.error == "read_paths"'
}

@test "policy read_paths is validated strictly (gl-run, gl-plan, gl-replay: usage error naming the field)" {
  local bad
  for bad in '"/usr"' '["usr/share"]' '["/usr/../etc"]' '["/usr/"]' '["//usr"]' '[1]' \
    "$(jq -cn '[range(257)] | map("/p\(.)")')"; do
    jq -n --argjson rp "$bad" '{clearances:{},read_paths:$rp}' >bad.json
    for cmd in gl-run gl-plan gl-replay; do
      run "$cmd" --policy bad.json </dev/null
      [ "$status" -eq 2 ] || { echo "$cmd $bad: $output"; false; }
      [[ "$output" == *"read_paths"* ]] || { echo "$cmd $bad: $output"; false; }
    done
  done
  jq -n '{clearances:{},read_paths:["/usr/share/**","/opt/m?dels/[ab]*"]}' >good.json
  run gl-run --policy good.json </dev/null
  [ "$status" -eq 0 ]
}
