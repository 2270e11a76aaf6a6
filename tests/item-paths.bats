#!/usr/bin/env bats
# Item paths never name host state (issue 14 item 1; SPEC §4; docs/plan.md
# "Item paths"; lib/broker/itempath.c). Under a natural policy ("$T/**": [] —
# $HOME and GL_HOME both lie under $T — beside a narrower labelled glob, or
# "/**": []) an item path naming GL_HOME/slots/… would hand another horizon's
# slot to a public consumer and a blog, a directory item on GL_HOME every
# slot, and /proc/<gl-run>/environ the host key's passphrase.
#
# Real releases (tests/fixtures/releases/ip-post, broker-state, tests/
# fixtures/exec/lister), signed and installed through the real chain; a real
# sink (tests/fixtures/sink.py) as blog.example. The attack is shown with the
# checks switched off (build/testing/bin/gl-run, GL_TEST_ITEMPATH_OFF=1): the
# slot's and the environment's canaries reach the public consumer and the
# sink; with them on (bin/gl-run as shipped) the call is refused "item_path"
# and nothing reaches it. The bind-mount case passes gl-plan (its path is
# public) and is refused by the broker alone, on what it opened.
# unprivileged: yes — gl-run works in a user namespace
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  T=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
  G=$(cd "$GL_HOME" && pwd -P) # the item path as a caller names it: no symlink
  TGLRUN=$GL_ROOT/build/testing/bin/gl-run
  D=$T/data
  mkdir -p "$D/hr" "$D/pub"
  SALARY="SALARY-$RANDOM$RANDOM"
  echo "menu" >"$D/pub/menu.txt"
  POLICY=$T/policy.json
  policy "$T/**"
  sink blog.example
  POST=$(install_release "$FIX/releases/ip-post")
}

teardown() { kill_pids; release_cleanup; }

# policy PUBLIC_GLOB — $POLICY: agent cleared for hr, pub public, $D/hr/**
# labelled hr, everything else under PUBLIC_GLOB public (the routes kept)
policy() {
  local routes='{}'
  [ -s "$POLICY" ] && routes=$(jq -c '.routes // {}' "$POLICY")
  jq -n --arg d "$D" --arg g "$1" --argjson r "$routes" '{clearances:{agent:["hr"],pub:[]},
    labels:{($d + "/hr/**"):["hr"], ($g):[]}, routes:$r}' >"$POLICY"
}

# post ID PATH [CONSUMER] — ip-post's post of the file PATH for CONSUMER (pub)
post() {
  jq -cn --arg id "$1" --arg r "$POST" --arg p "$2" --arg c "${3:-pub}" \
    '{id:$id,release:$r,function:"post",args:{doc:$p},items:[],consumers:[$c]}'
}

# hr_slot — a real hr slot: broker-state stores an hr item for agent; prints
# the slot file's path (another horizon's state, under GL_HOME/slots)
hr_slot() {
  local rel
  rel=$(install_release "$FIX/releases/broker-state")
  jq -cn --arg r "$rel" --arg s "$(b64 "$SALARY")" '{id:"put",release:$r,function:"remember",
    args:{},items:[{name:"salary.csv",label:["hr"],data:$s}],consumers:["agent"]}' >put
  gl-run --policy "$POLICY" <put >/dev/null 3>&-
  local f
  f=$(grep -l "$SALARY" "$G/slots/$rel"/*.json)
  [ -n "$f" ]
  echo "$f"
}

# leaked — the last run's output or the sink holds the salary canary
leaked() { grep -q "$SALARY" <<<"$output$(bodies blog.example)"; }

# refused_item_path — the last run: one record refusing item_path, no copy
refused_item_path() {
  [ "$status" -eq 1 ] || { echo "$output"; false; }
  json '.ok == false and .error == "item_path" and (has("copies") | not)
    and (.detail | contains("refused:"))'
}

@test "an item path naming another horizon's slot: the public blog gets it with the check off, item_path with it on" {
  local slot
  slot=$(hr_slot)
  post c1 "$slot" >calls
  # the attack, checks off: the slot's hr salary reaches pub and the blog
  run --separate-stderr env GL_TEST_ITEMPATH_OFF=1 "$TGLRUN" --policy "$POLICY" <calls 3>&-
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.ok and .results[0].consumer == "pub" and .results[0].label == []'
  [ "$(json -r '.results[0].value' | base64 -d | grep -c "$SALARY")" -ge 1 ]
  bodies blog.example | grep -q "$SALARY"
  # on (bin/gl-run, as shipped): refused before any copy, nothing reaches the blog
  : >"$BATS_TEST_TMPDIR/blog.example.log"
  run --separate-stderr gl-run --policy "$POLICY" <calls 3>&-
  refused_item_path
  json --arg s "$slot" '.detail | contains($s) and contains("gl_home")'
  ! leaked
  [ ! -s "$BATS_TEST_TMPDIR/blog.example.log" ]
  # and bin/gl-run, planned by gl-plan: refused by gl-plan already
  run --separate-stderr bash -c "gl-plan --policy '$POLICY' <calls | gl-run --policy '$POLICY' 3>&-"
  refused_item_path
  ! leaked
}

@test "/proc/<gl-run pid>/environ under \"/**\": the passphrase reaches the blog with the check off, item_path with it on" {
  policy "/**"
  local secret="PASS-$RANDOM$RANDOM" mode
  for mode in off on; do
    : >"$BATS_TEST_TMPDIR/blog.example.log"
    rm -f in out
    mkfifo in
    # gl-run's own pid, known before it reads its first envelope
    if [ $mode = off ]; then
      (exec env GL_PASSPHRASE="$secret" GL_TEST_ITEMPATH_OFF=1 "$TGLRUN" --policy "$POLICY" \
        <in >out 2>err 3>&-) &
    else
      (exec env GL_PASSPHRASE="$secret" gl-run --policy "$POLICY" <in >out 2>err 3>&-) &
    fi
    local pid=$!
    post c1 "/proc/$pid/environ" >in
    wait "$pid" || true
    output=$(cat out)
    if [ $mode = off ]; then
      json '.ok and .results[0].consumer == "pub"' || { cat err; false; }
      json -r '.results[0].value' | base64 -d | tr '\0' '\n' | grep -qx "GL_PASSPHRASE=$secret"
      bodies blog.example | tr '\0' '\n' | grep -q "$secret"
    else
      status=1 refused_item_path
      json '.detail | contains("proc_sys")'
      ! grep -q "$secret" out
      [ ! -s "$BATS_TEST_TMPDIR/blog.example.log" ]
    fi
  done
}

@test "a directory item on GL_HOME's slots: listed to a public consumer with the check off, item_path with it on" {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  local slot lister
  slot=$(hr_slot)
  lister=$(install_release "$FIX/exec/lister")
  jq -cn --arg r "$lister" --arg p "$(dirname "$slot")" \
    '{id:"d1",release:$r,function:"list",args:{path:$p},items:[],consumers:["pub"]}' >calls
  run --separate-stderr env GL_TEST_ITEMPATH_OFF=1 "$TGLRUN" --policy "$POLICY" <calls 3>&-
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json '.results[0].consumer == "pub" and .results[0].label == []'
  leaked
  run --separate-stderr gl-run --policy "$POLICY" <calls 3>&-
  refused_item_path
  ! leaked
  # GL_HOME itself, and an ancestor of it ($T holds GL_HOME): refused too
  local p
  for p in "$G" "$T"; do
    jq -c --arg p "$p" '.args.path = $p' calls >calls2
    run --separate-stderr gl-run --policy "$POLICY" <calls2 3>&-
    refused_item_path
    json '.detail | contains("gl_home")'
  done
}

@test "the broker checks what it opened: a bind mount of the slots under a public path is GL_HOME" {
  # root: a mount namespace of its own; anyone else: in a user namespace too
  local U=-m
  [ "$(id -u)" -eq 0 ] || U=-rm
  unshare $U true 2>/dev/null || skip "no mount namespace here"
  local slot f
  slot=$(hr_slot)
  f=$D/pub/mnt/$(basename "$slot")
  mkdir -p "$D/pub/mnt"
  post c1 "$f" >calls
  # by its path $f is public data: gl-plan's check (a path's own) lets it through
  run --separate-stderr unshare $U --propagation private bash -c \
    "mount --bind '$(dirname "$slot")' '$D/pub/mnt' && gl-plan --policy '$POLICY' <calls"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  json --arg p "$f" '.items[0].path == $p and .items[0].label == []'
  echo "$output" >planned
  local m
  for m in off on; do
    : >"$BATS_TEST_TMPDIR/blog.example.log"
    # off: the test build with the switch; on: bin/gl-run as shipped
    local e="GL_TEST_ITEMPATH_OFF=1 $TGLRUN"
    [ $m = on ] && e=$(command -v gl-run)
    run --separate-stderr unshare $U --propagation private bash -c \
      "mount --bind '$(dirname "$slot")' '$D/pub/mnt' &&
       env $e --policy '$POLICY' <planned 3>&-"
    if [ $m = off ]; then
      [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
      leaked
    else
      refused_item_path
      json '.detail | contains("in its file system, as opened")'
      ! leaked
      [ ! -s "$BATS_TEST_TMPDIR/blog.example.log" ]
    fi
  done
}

@test "gl-plan refuses item paths under host state: path, items_from_args, dirs_from_args" {
  policy "/**"
  local state
  state=$(install_release "$FIX/releases/broker-state")
  echo secret >"$G/scratch-note"
  ln -s "$G" "$D/pub/home-link"
  local p rule
  while read -r p rule; do
    # an explicit item's path (broker-state's remember takes items as given)
    jq -cn --arg r "$state" --arg p "$p" '{id:"e",release:$r,function:"remember",args:{},
      items:[{name:"x",label:[],path:$p}],consumers:["pub"]}' >calls
    # items_from_args
    post a "$p" >>calls
    run --separate-stderr gl-plan --policy "$POLICY" <calls
    [ "$status" -eq 1 ] || { echo "$p: $output"; false; }
    [ "$(jq -sc '[.[] | select(.error == "item_path")] | length' <<<"$output")" -eq 2 ] ||
      { echo "$p: $output"; false; }
    jq -se --arg r "$rule" 'all(.[]; .detail | contains("refused: " + $r))' <<<"$output" ||
      { echo "$p: $output"; false; }
  done <<EOF
$G/scratch-note gl_home
$G/releases/$POST.json gl_home
$D/pub/home-link/scratch-note gl_home
/proc/self/environ proc_sys
/proc/1/environ proc_sys
/sys/kernel/notes proc_sys
/dev/sda host_runtime
/run/secrets host_runtime
/var/run/x host_runtime
EOF
  # a public file is planned as before
  post ok "$D/pub/menu.txt" >calls
  run --separate-stderr gl-plan --policy "$POLICY" <calls
  [ "$status" -eq 0 ]
  json --arg p "$D/pub/menu.txt" '.items == [{name:$p,label:[],path:$p}]'
}

@test "gl-plan refuses directory items on GL_HOME, beneath it, above it and on /" {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  policy "/**"
  local lister p
  lister=$(install_release "$FIX/exec/lister")
  for p in "$G" "$G/slots" "$T" /proc "$D/pub"; do
    jq -cn --arg r "$lister" --arg p "$p" \
      '{id:"d",release:$r,function:"list",args:{path:$p},items:[],consumers:["pub"]}'
  done >calls
  # "/" is no normalised argument path (bad_args); as an explicit directory item
  jq -cn --arg r "$lister" '{id:"root",release:$r,function:"peek",args:{},
    items:[{name:"root",label:[],path:"/",dir:true}],consumers:["pub"]}' >>calls
  run --separate-stderr gl-plan --policy "$POLICY" <calls
  [ "$status" -eq 1 ]
  [ "$(jq -sc '[.[] | .error]' <<<"$output")" = \
    '["item_path","item_path","item_path","item_path",null,"item_path"]' ] || { echo "$output"; false; }
  # the public directory is planned
  jq -se --arg p "$D/pub" '.[4].items == [{name:$p,label:[],path:$p,dir:true}]' <<<"$output"
  # the rules named: GL_HOME and its ancestor, /proc, the root
  jq -se '(.[0:3] | all(.detail | contains("refused: gl_home")))
    and (.[3].detail | contains("refused: proc_sys")) and (.[5].detail | contains("refused: root"))' \
    <<<"$output"
}

@test "bin/gl-run ignores GL_TEST_ITEMPATH_OFF" {
  local slot
  slot=$(hr_slot)
  post c1 "$slot" >calls
  run --separate-stderr env GL_TEST_ITEMPATH_OFF=1 gl-run --policy "$POLICY" <calls 3>&-
  refused_item_path
  ! leaked
}
