#!/usr/bin/env bats
# Directory items (dirs_from_args; docs/exec.md "Directory items", an
# extension of SPEC §11): a directory named by an argument is an item
# labelled by every policy glob that can match it or a path beneath it,
# without gl-plan touching the file system; an exec copy whose view holds it
# can list and read beneath it (Landlock), a copy whose view lacks it cannot
# (shown with Landlock and the minimal root off: the test build's
# GL_TEST_EXEC_OFF=129, GL_OFF_LANDLOCK|GL_OFF_ROOT); an item
# path, file or directory, never resolves through a symlink. Real node, real
# namespaces and Landlock (tests/fixtures/exec/lister).
# unprivileged: yes
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

setup() {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  run_setup
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D/hr" "$D/pub/sub"
  echo "public a" >"$D/pub/a.txt"
  echo "public b" >"$D/pub/b.txt"
  echo "public c" >"$D/pub/sub/c.txt"
  CANARY="SALARY-$RANDOM$RANDOM"
  echo "$CANARY" >"$D/hr/salary.txt"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg d "$D" '{clearances:{agent:["hr"],pubagent:[]},
    labels:{($d + "/hr/**"):["hr"], ($d + "/**"):[]}}' >"$POLICY"
  SHA=$(install_release "$FIX/exec/lister")
  TGLRUN=$GL_ROOT/build/testing/bin/gl-run
}

teardown() { release_cleanup; }

# call ID FUNCTION ARGS_JSON [CONSUMERS_JSON] [ITEMS_JSON] — one envelope line
call() {
  jq -cn --arg id "$1" --arg r "$SHA" --arg f "$2" --argjson a "$3" \
    --argjson c "${4:-[\"agent\"]}" --argjson it "${5:-[]}" \
    '{id:$id,release:$r,function:$f,args:$a,items:$it,consumers:$c}'
}
# rec ID — the record of call ID in $output
rec() { jq -sc ".[] | select(.id == \"$1\")" <<<"$output"; }
# of CONSUMER — the result of one consumer in the record on stdin
of() { jq -c ".results[] | select(.consumer == \"$1\")"; }

@test "dirs_from_args: a directory is an item labelled by every glob that can match beneath it, planned without the file system" {
  {
    call pub list "{\"path\":\"$D/pub\"}"
    call top list "{\"path\":\"$D\"}"
    call hr list "{\"path\":\"$D/hr\"}"
    call ghost list "{\"path\":\"$D/pub/not/there\"}"
  } >calls
  run --separate-stderr gl-plan --policy "$POLICY" <calls
  [ "$status" -eq 0 ]
  rec pub | jq -e --arg d "$D/pub" '.items == [{name:$d,label:[],path:$d,dir:true}]'
  # data/hr/** can match beneath data: the directory is hr
  rec top | jq -e '.items[0].label == ["hr"] and .items[0].dir'
  rec hr | jq -e '.items[0].label == ["hr"]'
  # gl-plan never opens an item's path: a directory that does not exist is planned
  rec ghost | jq -e '.items[0].label == [] and .items[0].dir'
  # a public-only consumer gets no view of an hr directory
  call top2 list "{\"path\":\"$D\"}" '["pubagent"]' | gl-plan --policy "$POLICY" >planned
  jq -e '.plan.groups == [{destinations:[],consumers:["pubagent"],view:[],horizon:[]}]' planned

  # No glob matches the directory and every path beneath it: refused.
  jq -n --arg d "$D" '{clearances:{}, labels:{($d + "/pub/*"):[], ($d + "/pub"):[]}}' >narrow.json
  run --separate-stderr gl-plan --policy narrow.json <<<"$(call n list "{\"path\":\"$D/pub\"}")"
  [ "$status" -eq 1 ]
  json '.error == "unlabelled_path"'
  json '.detail | test("matches it and every path beneath it") and test("/pub/\\*\\*")'
  # The same path as a file is labelled by its own glob (items_from_args is unchanged).
  run --separate-stderr gl-plan --policy narrow.json <<<"$(call f read "{\"path\":\"$D/pub/a.txt\"}")"
  [ "$status" -eq 0 ]
  json '.items[0].label == [] and (.items[0] | has("dir") | not)'

  # A path named both as a file and as a directory; malformed "dir".
  run --separate-stderr gl-plan --policy "$POLICY" <<<"$(call b both "{\"file\":\"$D/pub\",\"dir\":\"$D/pub\"}")"
  json '.error == "bad_args" and (.detail | test("both as a file"))'
  run --separate-stderr gl-plan --policy "$POLICY" <<<"$(call e peek '{}' '["agent"]' "[{\"name\":\"x\",\"label\":[],\"path\":\"$D/pub\",\"dir\":\"yes\"}]")"
  json '.error == "bad_envelope" and (.detail | test("dir: not a boolean"))'
  run --separate-stderr gl-plan --policy "$POLICY" <<<"$(call e peek '{}' '["agent"]' '[{"name":"x","label":[],"data":"","dir":true}]')"
  json '.error == "bad_envelope" and (.detail | test("needs a \"path\""))'
}

@test "dirs_from_args: only for runtime exec, never also in items_from_args (bad_manifest)" {
  mkdir rel
  m() { # NAME JSON — a manifest installed under rel/; prints its sha
    local sha
    sha=$(printf '%s' "$2" | sha256sum | cut -c1-64)
    mkdir -p "rel/$sha"
    printf '%s' "$2" >"rel/$sha/manifest.json"
    echo "$sha"
  }
  py=$(m py '{"name":"p","version":"1","runtime":"python","entry":"m","functions":{"ls":{"dirs_from_args":["path"]}}}')
  run --separate-stderr gl-plan --policy "$POLICY" --releases rel <<<"{\"release\":\"$py\",\"function\":\"ls\"}"
  [ "$status" -eq 1 ]
  json '.error == "bad_manifest" and (.detail | test("functions.ls.dirs_from_args: only for runtime exec"))'
  both=$(m both '{"name":"p","version":"1","runtime":"exec","entry":["/usr/bin/node","x.js"],"functions":{"ls":{"items_from_args":["path"],"dirs_from_args":["path"]}}}')
  run --separate-stderr gl-plan --policy "$POLICY" --releases rel <<<"{\"release\":\"$both\",\"function\":\"ls\"}"
  json '.error == "bad_manifest" and (.detail | test("\"path\" is also in items_from_args"))'
  bad=$(m bad '{"name":"p","version":"1","runtime":"exec","entry":["/usr/bin/node","x.js"],"functions":{"ls":{"dirs_from_args":"path"}}}')
  run --separate-stderr gl-plan --policy "$POLICY" --releases rel <<<"{\"release\":\"$bad\",\"function\":\"ls\"}"
  json '.error == "bad_manifest" and (.detail | test("dirs_from_args: not an array"))'
  # the publisher's gl-sign refuses to sign one too
  mkdir pyrel && cp "rel/$py/manifest.json" pyrel/ && touch pyrel/m.py
  cd "$BATS_TEST_TMPDIR/pub"
  gl-sign pack ../pyrel p.tar.gz >/dev/null
  run gl-sign add repo --key tk p.tar.gz
  [ "$status" -ne 0 ]
  [[ "$output" == *"only for runtime exec"* ]]
}

@test "exec: a copy lists and reads beneath exactly the directories of its view (Landlock on, then off)" {
  {
    call top list "{\"path\":\"$D\"}" '["agent","pubagent"]'
    call pub list "{\"path\":\"$D/pub\"}" '["pubagent"]'
    call peek peek "{\"path\":\"$D/hr\"}" '["pubagent"]'
    call peekpub peek "{\"path\":\"$D/pub\"}" '["pubagent"]'
  } >calls
  run session calls
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # the cleared consumer's copy lists data (an hr directory) and reads beneath it
  rec top | of agent | jq -e '.label == ["hr"] and .value.entries == ["hr","pub"]'
  # the public consumer's copy has no view of it: not even in its minimal root
  rec top | of pubagent | jq -e '.label == [] and .value == "denied:ENOENT"'
  # a public directory of its view: listed, its files read, a subdirectory seen
  rec pub | of pubagent | jq -e '.label == [] and .value.entries == ["a.txt","b.txt","sub"]'
  rec pub | of pubagent | jq -e '.value.files["a.txt"] == "public a\n"'
  # a hostile tool listing directories it was not given: nothing, hr or public
  rec peek | jq -e '.results[0].value == "denied:ENOENT"'
  rec peekpub | jq -e '.results[0].value == "denied:ENOENT"'
  ! grep -q "$CANARY" <<<"$output"
  [ -z "$(ls -A "$GL_HOME/scratch")" ]

  # Mechanism off (the test build, neither Landlock nor the minimal root
  # applied to exec copies): the
  # same calls list the hr directory and read the salary.
  [ -x "$TGLRUN" ] || skip "build/testing/bin/gl-run is not built (make units)"
  run bash -c "gl-plan --policy '$POLICY' <calls | GL_TEST_EXEC_OFF=129 '$TGLRUN' --policy '$POLICY' 3>&-"
  rec top | of pubagent | jq -e '.value.entries == ["hr","pub"]'
  rec peek | jq -e --arg c "$CANARY" '.results[0].value.files["salary.txt"] == $c + "\n"'
}

@test "exec: an item path that resolves through a symlink is refused; a symlink inside a directory item leads nowhere" {
  ln -s "$D/hr/salary.txt" "$D/pub/link.txt"
  ln -s "$D/hr" "$D/pub/hrdir"
  ln -s pub "$D/alias"
  {
    call plain read "{\"path\":\"$D/pub/a.txt\"}" '["pubagent"]'
    call link read "{\"path\":\"$D/pub/link.txt\"}" '["pubagent"]'
    call dirlink list "{\"path\":\"$D/pub/hrdir\"}" '["pubagent"]'
    call ancestor read "{\"path\":\"$D/alias/a.txt\"}" '["pubagent"]'
  } >calls
  run session calls
  # the control: a plain file of the same directory
  rec plain | jq -e '.ok and .results[0].value == "public a\n"'
  # labelled [] by its name, but it is the hr file: refused before any copy
  rec link | jq -e '.ok == false and .error == "bad_item" and (.detail | test("resolves through a symlink; an item is labelled by its path"))'
  rec dirlink | jq -e '.ok == false and .error == "bad_item" and (.detail | test("resolves through a symlink"))'
  rec ancestor | jq -e '.ok == false and .error == "bad_item" and (.detail | test("resolves through a symlink"))'
  ! grep -q "$CANARY" <<<"$output"

  # A directory item holding a symlink out of it: listed, never followed
  # (Landlock allows the directory's own tree only); off, the salary leaks.
  call pub list "{\"path\":\"$D/pub\"}" '["pubagent"]' >calls
  run session calls
  rec pub | jq -e '.results[0].value.entries | index("link.txt")'
  rec pub | jq -e '.results[0].value.files["link.txt"] == "denied:ENOENT"'
  ! grep -q "$CANARY" <<<"$output"
  [ -x "$TGLRUN" ] || skip "build/testing/bin/gl-run is not built (make units)"
  run bash -c "gl-plan --policy '$POLICY' <calls | GL_TEST_EXEC_OFF=129 '$TGLRUN' --policy '$POLICY' 3>&-"
  rec pub | jq -e --arg c "$CANARY" '.results[0].value.files["link.txt"] == $c + "\n"'
}

@test "exec: the broker checks an item's kind: a directory is not a file item, a file not a directory item" {
  {
    call d peek '{}' '["agent"]' "[{\"name\":\"x\",\"label\":[],\"path\":\"$D/pub\"}]"
    call f peek '{}' '["agent"]' "[{\"name\":\"x\",\"label\":[],\"path\":\"$D/pub/a.txt\",\"dir\":true}]"
    call ok peek "{\"path\":\"$D/pub\"}" '["agent"]' "[{\"name\":\"x\",\"label\":[],\"path\":\"$D/pub\",\"dir\":true}]"
  } >calls
  run session calls
  rec d | jq -e '.error == "bad_item" and (.detail | test("is a directory; a directory item says \"dir\": true"))'
  rec f | jq -e '.error == "bad_item" and (.detail | test("is not a directory"))'
  # an explicit directory item (the caller's label) is listable like any
  rec ok | jq -e '.ok and .results[0].value.entries == ["a.txt","b.txt","sub"]'
}
