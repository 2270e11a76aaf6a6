#!/usr/bin/env bats
# A private scratch /tmp per copy and the exec workspace quota (issue 15;
# SPEC §4 limits.tmp_mb and limits.workspace_mb, §5 "each copy has an empty
# private scratch directory", §6 "disk"; docs/sandbox.md "The scratch
# directory"; lib/sandbox/scratch.h). Each property is shown with its mechanism off
# — the test build's GL_TEST_SCRATCH_OFF=1: no seal and no per-copy tmpfs,
# so every copy shares the germline's writable, unbounded /tmp, and an exec
# copy's /tmp and workspace are unbounded — and on. Host uids are off with
# it (GL_TEST_UIDS_OFF=1): the germline's /tmp is its own uid's, which a copy
# running as its lane's uid could not write, a second layer that would hide
# the one shown here.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  POLICY=$BATS_TEST_TMPDIR/policy.json
  # the toolchain, so that find_library really runs gcc with a tempfile
  jq -n '{clearances:{agent:["finance","hr"],fin:["finance"],hrc:["hr"]},
    read_paths:["/usr/bin","/usr/lib/gcc","/usr/libexec/gcc"],limits:{tmp_mb:2}}' >"$POLICY"
  TGL=$GL_ROOT/build/testing/bin/gl-run
  REL=$(install_release "$FIX/releases/scratch-tmp")
}

teardown() { release_cleanup; }

# calls GLRUN FILE [FLAGS…] — gl-plan | GLRUN over the envelopes in FILE
calls() {
  local glrun=$1 f=$2
  shift 2
  run --separate-stderr bash -c 'gl-plan --policy "$1" <"$2" | "$3" --policy "$1" "${@:4}"' \
    _ "$POLICY" "$f" "$glrun" "$@"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
}

# val N — the value of the first result of the N-th record
val() { printf '%s\n' "$output" | jq -sc ".[$1].results[0].value"; }

@test "tempfile and find_library (gcc with a NamedTemporaryFile) work at import and in a call; the germline's import scratch is not a copy's" {
  envelope c1 "$REL" probe >calls.jsonl
  calls gl-run calls.jsonl
  v=$(val 0)
  echo "$v" | jq -e '.import == {"tempfile":true,"find_library":"libc.so.6","tmpdir":"/tmp","marker":true}' \
    || { echo "$output $stderr"; false; }
  echo "$v" | jq -e '.tempfile == true and .find_library == "libc.so.6" and .environ_tmpdir == "/tmp"'
  # what the germline wrote at import is not in the copy's /tmp
  echo "$v" | jq -e '.germline_marker_visible == false and (.listing | index("germline-marker") == null)'
  # off: the copy's /tmp is the germline's, with its import-time file
  GL_TEST_SCRATCH_OFF=1 GL_TEST_UIDS_OFF=1 calls "$TGL" calls.jsonl
  [ "$(val 0 | jq .germline_marker_visible)" = true ] || { echo "$output"; false; }
}

@test "a file a copy writes in /tmp is not there in the next call (nor with --pool); off: it is" {
  { envelope c1 "$REL" put '[]' '{"args":{"secret":"s3cr3t"}}'; envelope c2 "$REL" get; } >calls.jsonl
  calls gl-run calls.jsonl
  [ "$(val 1)" = '"ENOENT"' ] || { echo "$output $stderr"; false; }
  calls gl-run calls.jsonl --pool
  [ "$(val 1)" = '"ENOENT"' ] || { echo "$output $stderr"; false; }
  GL_TEST_SCRATCH_OFF=1 GL_TEST_UIDS_OFF=1 calls "$TGL" calls.jsonl
  [ "$(val 1)" = '"s3cr3t"' ] || { echo "$output $stderr"; false; }
}

@test "another copy of the same call never reads what a copy wrote in /tmp (hr -> finance); off: it does" {
  items=$(jq -cn --arg a "$(b64 invoice-123)" --arg b "$(b64 salary-456)" \
    '[{name:"invoice.txt",label:["finance"],data:$a},{name:"salary.csv",label:["hr"],data:$b}]')
  envelope c1 "$REL" carry "$items" '{"consumers":["fin","hrc"]}' >calls.jsonl
  calls gl-run calls.jsonl
  printf '%s\n' "$output" | jq -e '.copies == 2 and ([.results[].value] == [null, null])' \
    || { echo "$output $stderr"; false; }
  # off: the second copy returns the first copy's item (a label it is not cleared for)
  GL_TEST_SCRATCH_OFF=1 GL_TEST_UIDS_OFF=1 calls "$TGL" calls.jsonl
  printf '%s\n' "$output" | jq -e '[.results[].value | select(. != null)] | length == 1 and
    (.[0] == "invoice-123" or .[0] == "salary-456")' || { echo "$output $stderr"; false; }
}

@test "a copy filling /tmp gets ENOSPC at limits.tmp_mb (2 MiB) and a normal result; off: it writes 8 MiB" {
  envelope c1 "$REL" fill '[]' '{"args":{"mb":8}}' >calls.jsonl
  calls gl-run calls.jsonl
  printf '%s\n' "$output" | jq -e '.results[0].ok' >/dev/null || { echo "$output"; false; }
  val 0 | jq -e '.error == "ENOSPC" and .written_mb <= 2' || { echo "$output $stderr"; false; }
  GL_TEST_SCRATCH_OFF=1 GL_TEST_UIDS_OFF=1 calls "$TGL" calls.jsonl
  val 0 | jq -e '.error == null and .written_mb == 8' || { echo "$output $stderr"; false; }
}

# ---- exec copies: their own root's tmpfs /tmp and workspace ----------------

# ws_keys SHA — the keys of the exec release's workspace slot ("gl.files")
ws_keys() { jq -c '.["gl.files"].value | keys' "$GL_HOME/slots/$1"/*.json; }

@test "exec: /tmp is a tmpfs of limits.tmp_mb; the workspace one of limits.workspace_mb: over it the call fails \"disk\" and the slot keeps what it had; off: both unbounded" {
  sha=$(install_release "$FIX/exec/workspace")
  jq '.limits = {tmp_mb:2, workspace_mb:2}' "$POLICY" >p2 && mv p2 "$POLICY"
  op() { jq -cn --argjson o "$1" '{args:{ops:$o}}'; }
  {
    envelope c1 "$sha" do '[]' "$(op '[{"op":"write","path":"keep.txt","data":"kept"},{"op":"big","path":"/tmp/t","bytes":3145728}]')"
    envelope c2 "$sha" do '[]' "$(op '[{"op":"big","path":"big","bytes":3145728}]')"
    envelope c3 "$sha" ls
  } >calls.jsonl
  calls gl-run calls.jsonl
  rec() { printf '%s\n' "$output" | jq -sc ".[] | select(.id == \"$1\") | .results[0]"; }
  # /tmp: ENOSPC at 2 MiB inside, a normal result outside
  rec c1 | jq -e '.ok and .value.done == ["ok","denied:ENOSPC"]' || { echo "$output $stderr"; false; }
  # the workspace: ENOSPC inside, "disk" outside, nothing stored
  rec c2 | jq -e '.ok == false and .error == "disk"' || { echo "$output $stderr"; false; }
  rec c3 | jq -e '.value.tree == {"keep.txt":"kept"}'
  [ "$(ws_keys "$sha")" = '["keep.txt"]' ]
  [ -z "$(ls -A "$GL_HOME/scratch")" ]
  # off: 3 MiB written to /tmp and to the workspace, and stored
  rm -rf "$GL_HOME/slots/$sha"
  GL_TEST_SCRATCH_OFF=1 GL_TEST_UIDS_OFF=1 calls "$TGL" calls.jsonl
  rec c1 | jq -e '.ok and .value.done == ["ok","ok"]' || { echo "$output $stderr"; false; }
  rec c2 | jq -e '.ok and .value.done == ["ok"]' || { echo "$output $stderr"; false; }
  [ "$(ws_keys "$sha")" = '["big","keep.txt"]' ]
}
