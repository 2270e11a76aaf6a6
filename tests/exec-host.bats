#!/usr/bin/env bats
# gl-exec-host's own loop, driven directly and unconfined (issue 18): one
# call, and a session of several (docs/exec.md), each answered with its
# result, and the host then ends by returning from main. In the sanitizer
# pass the host is build/asan/host/gl-exec-host (make asan), so that
# AddressSanitizer and LeakSanitizer see every path of the loop: a leak
# exits 86 (tests/run.sh's ASAN_OPTIONS) and fails these tests. Inside a
# copy LeakSanitizer cannot run (its ptrace is denied by the copy's seccomp
# filter), so this suite is where a leak of the loop shows; the copies of
# tests/exec.bats still run that host under AddressSanitizer.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers

setup() {
  gl_setup
  if [ "$GL_TEST_LANE" = sanitizers ]; then
    HOST=$GL_ROOT/build/asan/host/gl-exec-host
  else
    HOST=$GL_ROOT/build/host/gl-exec-host
  fi
  [ -x "$HOST" ]
  DRIVE=$GL_ROOT/tests/fixtures/exec-host/drive.py
}

@test "exec-host: one call is answered with its result, and the host exits 0" {
  run "$SYSPY" "$DRIVE" "$HOST" '[{"type":"call","function":"f","args":{"a":1}}]'
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  printf '%s\n' "$output" | jq -se '.[0].type == "result" and .[0].value.function == "f" and .[0].value.args == {"a":1}' || { echo "$output"; false; }
  printf '%s\n' "$output" | jq -se '.[-1] == {"exit": 0}' || { echo "$output"; false; }
}

@test "exec-host: a session serves call after call until the broker closes the channel" {
  run "$SYSPY" "$DRIVE" "$HOST" '[{"type":"call","function":"f","args":{"n":1},"session":true},
    {"type":"call","function":"g","args":{"n":2},"session":true},
    {"type":"call","function":"h","args":{"n":3},"session":true}]'
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  printf '%s\n' "$output" | jq -se '[.[] | select(.type == "result") | .value.function] == ["f","g","h"]' || { echo "$output"; false; }
  # the broker's EOF ends the session: exit 3 (recv_msg), after every result
  printf '%s\n' "$output" | jq -se '.[-1] == {"exit": 3}' || { echo "$output"; false; }
}

@test "exec-host: a refused workspace slot is the call's error, and the host still ends cleanly" {
  mkdir -p "$BATS_TEST_TMPDIR/ws"
  run "$SYSPY" - "$HOST" "$BATS_TEST_TMPDIR/ws" <<'PY'
import json, os, socket, struct, subprocess, sys
host, ws = sys.argv[1], sys.argv[2]
b, c = socket.socketpair()
r = socket.socket(); r.bind(("127.0.0.1", 0)); r.listen(1)
t = os.open("/bin/cat", os.O_RDONLY)
def fds():
    for want, fd in ((3, c.fileno()), (4, r.fileno()), (5, t)):
        os.dup2(fd, want); os.set_inheritable(want, True)
p = subprocess.Popen([host, "germline", ws, "--", "cat"], preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL)
c.close()
m = json.dumps({"type": "call", "function": "f", "args": {}, "state": {"gl.files": {"../x": ""}}}).encode()
b.sendall(struct.pack(">I", len(m)) + m)
def rx(n):
    d = b""
    while len(d) < n:
        k = b.recv(n - len(d))
        if not k: raise EOFError
        d += k
    return d
(n,) = struct.unpack(">I", rx(4)); print(rx(n).decode())
b.close(); print(json.dumps({"exit": p.wait()}))
PY
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  printf '%s\n' "$output" | jq -se '.[0].type == "result" and (.[0].error | test("workspace not restored"))' || { echo "$output"; false; }
  printf '%s\n' "$output" | jq -se '.[-1] == {"exit": 0}' || { echo "$output"; false; }
}

@test "exec-host: --adopt takes only a pid with a socket on fd 5, and refuses anything else with exit 2" {
  run "$HOST" mcp-stdio - -- --adopt notapid 5</dev/null
  [ "$status" -eq 2 ] && [[ "$output" == *"--adopt PID, with the server's socket on fd 5"* ]] || { echo "$output"; false; }
  run "$HOST" mcp-stdio - -- --adopt 1234 5</dev/null
  [ "$status" -eq 2 ] || { echo "$output"; false; }
  run "$HOST" mcp-stdio - -- --adopt 1 5</dev/null
  [ "$status" -eq 2 ] || { echo "$output"; false; }
}
