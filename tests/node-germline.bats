#!/usr/bin/env bats
# The Node germline (docs/exec.md "The Node germline"; paper §IV-D, A1, A2):
# a Node server imported once with no data, forked per call by
# hosts/node/germline.node under the germline's confinement, its copies
# checked from outside. Releases written against the mechanism, each shown
# with the mechanism switched off (a secret crosses from one copy to a
# later one, or release code runs in the germline while a copy runs) and
# on (nothing crosses, or refused). The driver is tests/unit/germline_drive.c;
# the copy-side switches exist only in the GL_TESTING build of the addon
# made here (never in build/host).
#
# unprivileged: no — the driver's germlines take no delegated uids, so that pass would
# repeat this one (the copy check for a broker that may not list /proc/P/fd is
# shown with GL_TEST_FD_PROBE)
load helpers
load fixtures/run/drive

setup_file() {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  [ -e "$GL_ROOT/build/host/germline.node" ] || skip "Node's headers missing: no germline.node"
  export TESTHOST="$BATS_FILE_TMPDIR/host-test"
  mkdir -p "$TESTHOST"
  cp "$GL_ROOT"/build/host/* "$TESTHOST"/
  (cd "$GL_ROOT" && cc -std=gnu11 -O1 -fPIC -shared -DGL_TESTING -iquote lib -isystem /usr/include/node \
    -o "$TESTHOST/germline.node" hosts/node/germline.c hosts/common/fork_server.c lib/sandbox/sandbox.c \
    build/libgermline.a -lseccomp -lsodium -ljq -lcrypto)
  GL_NPM_SERVERS=server-memory "$GL_ROOT/scripts/npm-releases.sh" "$BATS_FILE_TMPDIR/rel" 2>/dev/null
}

setup() { gl_setup; }

# probe MODE — a release dir of tests/fixtures/releases/node-probe doing MODE at import
probe() {
  local d=$BATS_TEST_TMPDIR/probe-$1
  mkdir -p "$d"
  cp "$FIX/releases/node-probe/probe.mjs" "$d/"
  jq -n --arg m "$1" '{name:"probe",version:"0",runtime:"exec",protocol:"mcp-stdio",
    entry:["/usr/bin/node","probe.mjs",$m]}' >"$d/manifest.json"
  echo "$d"
}

# calls NAME TOOL [ARGS] — a file of JSON-RPC lines: initialize, then one tools/call
calls() {
  local f=$BATS_TEST_TMPDIR/$1.jsonl
  jq -cn '{jsonrpc:"2.0",id:1,method:"initialize",params:{protocolVersion:"2025-06-18",
    capabilities:{},clientInfo:{name:"t",version:"0"}}}' >"$f"
  jq -cn --arg t "$2" --argjson a "${3:-{\}}" \
    '{jsonrpc:"2.0",id:2,method:"tools/call",params:{name:$t,arguments:$a}}' >>"$f"
  echo "$f"
}

# tool N — the text the tools/call of the N-th output line answered
tool() { at "$1" '.replies[1].result.content[0].text' | jq -r .; }

@test "server-memory, unmodified: each call a copy of one warm germline, under its confinement and checks" {
  local c
  c=$(calls read read_graph)
  run drive --warm "$BATS_FILE_TMPDIR/rel/server-memory" check "mcp=$c" "mcp=$c"
  at 0 .ok || { echo "$output"; false; }
  at 1 .ok
  at 2 '.replies[0].result.serverInfo.name == "memory-server"'
  at 2 '.replies[1].result.structuredContent == {entities: [], relations: []}'
  at 3 .ok
  at 3 '.survivors == 0'
}

@test "the copy protocol: the copy splits, gl-exec-host adopts the server it forked and answers the call message; nothing outlives the call" {
  run drive --warm --exec-host "$BATS_FILE_TMPDIR/rel/server-memory" check 'read_graph={}' 'read_graph={}'
  at 1 .ok || { echo "$output"; false; }
  at 2 '| .reply.type == "result" and .reply.value.structuredContent == {entities: [], relations: []}' ||
    { echo "$output"; false; }
  at 3 '| .ok and .survivors == 0'
}

@test "the workspace: server-memory's graph goes from one copy to the next only through the slot gl-exec-host stores; the germline's /tmp never holds it" {
  run drive --warm --exec-host --state-dir /tmp/ws "$BATS_FILE_TMPDIR/rel/server-memory" \
    'create_entities={"entities":[{"name":"ada","entityType":"person","observations":["wrote notes"]}]}' \
    'read_graph={}' proc=root/tmp/ws/memory.jsonl
  at 1 '| .ok and .stored' || { echo "$output"; false; }
  at 2 '| .reply.value.structuredContent.entities | map(.name) == ["ada"]' || { echo "$output"; false; }
  at 3 '| has("text") | not'
  # off (no /tmp of each copy's own): the graph is left in the germline's /tmp for every later copy
  GL_TEST_SCRATCH_OFF=1 run drive --warm --exec-host --state-dir /tmp/ws "$BATS_FILE_TMPDIR/rel/server-memory" \
    'create_entities={"entities":[{"name":"ada","entityType":"person","observations":["wrote notes"]}]}' \
    proc=root/tmp/ws/memory.jsonl
  at 2 '.text | test("wrote notes")' || { echo "$output"; false; }
}

@test "pipes and eventfds: each copy's own; off: a secret one copy writes into them the next one reads" {
  local r put get
  r=$(probe plain)
  put=$(calls put put '{"secret":"s3cret"}')
  get=$(calls get get)
  run drive "$r" "mcp=$put" "mcp=$get"
  [ "$(tool 1 | jq .written)" -gt 3 ] || { echo "$output"; false; }
  tool 2 | jq -e '.seen | all(. != "s3cret" and . != "6000018")'
  # off: the copies keep the germline's own descriptors (and are not checked)
  run drive --host "$TESTHOST" --copy-off fdclose "$r" "mcp=$put" "mcp=$get"
  tool 2 | jq -e '.seen | index("s3cret") and index("6000018")' || { echo "$output"; false; }
}

@test "copy check: a copy that holds an open file of the germline's is refused (kcmp), whatever the addon did" {
  run drive --host "$TESTHOST" --copy-off-checked fdclose "$(probe plain)" "mcp=$(calls fds fds)"
  at 1 '.error == "fork"' || { echo "$output"; false; }
  at 1 '.detail | test("copy: fd [0-9]+ is the germline.s fd [0-9]+ \\(a shared open file\\)")'
  # a broker that may not list /proc/P/fd (a delegated uid's copy) finds them by kcmp alone
  GL_TEST_FD_PROBE=1 run drive --host "$TESTHOST" --copy-off-checked fdclose "$(probe plain)" "mcp=$(calls fds fds)"
  at 1 '.detail | test("copy: fd [0-9]+ is the germline.s fd [0-9]+ \\(a shared open file\\)")' ||
    { echo "$output"; false; }
  GL_TEST_FD_PROBE=1 run drive "$(probe plain)" "mcp=$(calls fds fds)"
  at 1 .ok || { echo "$output"; false; }
}

@test "a worker thread with a timer: refused (G1 names the thread); off: it runs in the germline while copies run" {
  local r c
  r=$(probe worker)
  c=$(calls fds fds)
  run drive "$r" check "mcp=$c"
  at 1 '.ok == false' || { echo "$output"; false; }
  at 1 '.detail | test("G1: thread [0-9]+ of the germline (waits with a time limit|is running)")'
  at 2 '.error == "germline_check"'
  # off: the germline's CPU time (utime, /proc/P/stat) grows while a copy runs and after
  run drive --no-g-check "$r" proc=stat "mcp=$c" sleep=300 proc=stat
  a=$(at 1 '.text | split(") ")[1] | split(" ")[11] | tonumber')
  b=$(at 3 '.text | split(") ")[1] | split(" ")[11] | tonumber')
  at 2 .ok
  [ "$b" -gt $((a + 5)) ] || { echo "$output"; false; }
}

@test "a main-thread timer: harmless — it never runs in the germline once ready, and runs in each copy" {
  local r
  r=$(probe timer)
  run drive "$r" check proc=root/tmp/ticks "mcp=$(calls ticks ticks)" sleep=100 proc=root/tmp/ticks
  at 1 .ok || { echo "$output"; false; }
  [ "$(at 2 .text)" = "$(at 4 .text)" ]
  tool 3 | jq -e '.ticks >= 1'
}

@test "a signal handler: none in the germline (SigCgt empty, checked by G1), the copy's own again" {
  run drive "$(probe signal)" check proc=status "mcp=$(calls signal signal)"
  at 1 .ok || { echo "$output"; false; }
  at 2 '.text | test("SigCgt:\\\\x090000000000000000")'
  tool 3 | jq -e '.handled == true'
}

@test "a socket: the import cannot make one (the germline's seccomp filter), and the launch fails naming why" {
  run drive "$(probe socket)" check
  at 0 '.ok == false' || { echo "$output"; false; }
  at 0 '.error | test("entry module failed to import: Error: listen EPERM")'
}

@test "without gl-atfork.so the germline refuses to serve (a copy would wait for thread-pool workers that were never copied)" {
  local h=$BATS_TEST_TMPDIR/host
  mkdir -p "$h"
  cp "$GL_ROOT"/build/host/* "$h"/
  rm "$h/gl-atfork.so"
  run drive --host "$h" "$(probe plain)" check
  at 0 '.ok == false' || { echo "$output"; false; }
  at 0 '.error | test("gl-atfork.so is not preloaded")'
}
