#!/usr/bin/env bats
# Germlines and copies on the real kernel (docs/sandbox.md): verified launch
# (SPEC §9), G1–G3 before a fork (paper §IV-D, A2; Table XII O1, O2), O3,
# and isolation between copies (A1). Each property is shown with its
# mechanism switched off (the reference) and on. The driver is
# tests/unit/germline_drive.c; the switches exist only in it and in a
# GL_TESTING build of _germline.so made here (never in build/host).
# The release code runs in Debian's python3 (not built with ASan); the
# sanitizer pass runs the driver (launch, checks, fork protocol) under ASan.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody (issue 4 item 8)
load helpers
load fixtures/run/drive

setup_file() { drive_setup_file; }

setup() { gl_setup; }

rel() { echo "$FIX/releases/sandbox-$1"; }
ALL_OFF=(--germline-off landlock,seccomp,pidns,root --copy-off landlock,seccomp,newpid,newnet,newipc,parent,devnull)

@test "launch: fds 0-2 on /dev/null and 3 the control socket, restrictions recorded" {
  run drive "$(rel probe)" info fds check hello
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(at 2 '.fds')" = '{"0":"/dev/null","1":"/dev/null","2":"/dev/null","3":"control socket"}' ]
  [ "$(at 1 .exe)" = "\"$(readlink -f /usr/bin/python3)\"" ]
  [ "$(at 1 .interpreter_sha256)" = "\"$(sha256sum "$(readlink -f /usr/bin/python3)" | cut -c1-64)\"" ]
  at 1 '|(.landlock_abi >= 6 and .fs and .net and .scoped and .seccomp)'
  [ "$(at 1 '.namespaces|join(",")')" = '"ipc,mnt,net,pid,user"' ]
  at 1 '.seccomp_filter_sha256|test("^[0-9a-f]{64}$")'
  at 3 .ok
  # a copy is PID 1 of its own namespace, its parent invisible
  [ "$(at 4 '.reply.value|[.pid,.ppid]')" = '[1,0]' ]
}

@test "launch fails closed below Landlock ABI 6 (GL_TEST_LANDLOCK_ABI, driver only)" {
  GL_TEST_LANDLOCK_ABI=5 run drive "$(rel probe)" hello
  [ "$status" -eq 1 ]
  [ "$(at 0 .step)" = '"landlock"' ]
  at 0 '.error|test("ABI 5 is below the required 6")'
  GL_TEST_LANDLOCK_ABI=0 run drive "$(rel probe)" hello
  [ "$status" -eq 1 ] && [ "$(at 0 .step)" = '"landlock"' ]
}

@test "launch: a failing import is reported with its traceback (handshake), sanitized" {
  run drive "$(rel badimport)"
  [ "$status" -eq 1 ]
  [ "$(at 0 .step)" = '"handshake"' ]
  at 0 '.error|test("RuntimeError: initialisation failed on purpose")'
  ! at 0 '.error|test("\u001b")'
}

@test "verified launch: the retained interpreter runs, not the file swapped in after hashing" {
  mkdir py && cp "$(readlink -f /usr/bin/python3)" py/python3.11 && cp /bin/false py/swap
  want=$(sha256sum py/python3.11 | cut -c1-64)
  run drive --interpreter "$PWD/py/python3.11" --swap "$PWD/py/swap" "$(rel probe)" info hello
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(at 1 .interpreter_sha256)" = "\"$want\"" ]
  at 1 '.exe|endswith("python3.11 (deleted)")'
  at 2 .ok
  # reference: what the path holds now (false) cannot start a germline
  cmp -s py/python3.11 /bin/false
  run drive --interpreter "$PWD/py/python3.11" "$(rel probe)" hello
  [ "$status" -eq 1 ] && [ "$(at 0 .step)" = '"handshake"' ]
}

@test "O1: init opens a pipe -> refused (G2); off: the pipe carries data between copies" {
  run drive "$(rel pipe)" 'pipe_write={"data":"secret"}'
  [ "$(at 1 .error)" = '"germline_check"' ]
  at 1 '.detail|test("^G2: fd [0-9]+ is a pipe$")'
  # reference: G2 off and the copy's close_range off
  run drive --host "$TESTHOST" --no-g-check --copy-off fdclose "$(rel pipe)" \
    'pipe_write={"data":"secret"}' pipe_read
  [ "$(at 2 .reply.value.data)" = '"secret"' ]
  # G2 off alone: the copy's descriptor hygiene still cuts the pipe
  run drive --no-g-check "$(rel pipe)" 'pipe_write={"data":"secret"}' pipe_read
  [ "$(at 2 .reply.value.error)" = '"Bad file descriptor"' ]
}

@test "O2: init maps shared memory -> refused (G3); off: it carries data between copies" {
  run drive "$(rel shm)" 'shared_write={"data":"secret"}'
  [ "$(at 1 .error)" = '"germline_check"' ]
  at 1 '.detail|test("^G3: shared writable mapping ")'
  # G3 off: the broker's check of the copy still refuses it
  run drive --no-g-check "$(rel shm)" 'shared_write={"data":"secret"}'
  at 1 '.detail|test("copy: shared writable mapping")'
  run drive --no-g-check --no-copy-check "$(rel shm)" 'shared_write={"data":"secret"}' shared_read
  [ "$(at 2 .reply.value.data)" = '"secret"' ]
}

@test "G1: a thread started at init -> refused; off: the copy runs" {
  run drive "$(rel thread)" hello
  [ "$(at 1 .detail)" = '"G1: the germline has 2 threads"' ]
  # (the thread holds the number every copy gets, GL_COPY_PID: pidfix off)
  run drive --host "$TESTHOST" --no-g-check --copy-off pidfix "$(rel thread)" hello
  at 1 .ok
}

@test "G1 strengthened: a process spawned at init -> refused; off: the copy runs" {
  run drive "$(rel child)" hello
  at 1 '.detail|test("^G1: the germline has a live child process")'
  run drive --host "$TESTHOST" --no-g-check --copy-off pidfix "$(rel child)" hello
  at 1 .ok
}

@test "O3: a copy leaves a sleeping child -> 0 live processes after the kill; newpid off: 1" {
  run drive "$(rel probe)" leave_child
  at 1 .ok && [ "$(at 1 .survivors)" = 0 ]
  run drive --host "$TESTHOST" --copy-off newpid "$(rel probe)" leave_child
  at 1 .ok && [ "$(at 1 .survivors)" = 1 ]
}

@test "isolation: no path is writable but the copy's own /tmp (files, /dev/shm, release, host); off: a later copy reads it" {
  chmod 1777 "$BATS_TEST_TMPDIR"
  f=$BATS_TEST_TMPDIR/leak-$$ s=/dev/shm/gl-test-$$ t=/tmp/gl-scratch-$$
  w="write_paths={\"paths\":[\"$f\",\"$s\",\"$(rel probe)/x\",\"$GL_ROOT/build/host/x\",\"x\",\"$t\"],\"data\":\"secret\"}"
  run drive "$(rel probe)" "$w" "read_path={\"path\":\"$f\"}" "read_path={\"path\":\"$s\"}" \
    "read_path={\"path\":\"$t\"}"
  # host paths are not in the minimal root (ENOENT); what is, is read-only;
  # /tmp is the copy's own tmpfs (SPEC §5), gone with it (tests/scratch.bats)
  [ "$(at 1 ".reply.value|del(.[\"$t\"])|[.[]]|unique|map(select(. != \"EACCES\" and . != \"ENOENT\" and . != \"EROFS\"))")" = '[]' ]
  [ "$(at 1 ".reply.value[\"$t\"]")" = '"ok"' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value.error)" = '"ENOENT"' ] && [ "$(at 3 .reply.value.error)" = '"ENOENT"' ]
  [ "$(at 4 .reply.value.error)" = '"ENOENT"' ]
  run drive --host "$TESTHOST" "${ALL_OFF[@]}" "$(rel probe)" \
    "write_paths={\"paths\":[\"$f\",\"$s\"],\"data\":\"secret\"}" "read_path={\"path\":\"$f\"}" \
    "read_path={\"path\":\"$s\"}"
  rm -f "$f" "$s"
  [ "$(at 2 .reply.value.data)" = '"secret"' ] && [ "$(at 3 .reply.value.data)" = '"secret"' ]
}

@test "isolation: SysV shared memory and POSIX message queues; off: they carry data" {
  k=$((40000 + $$ % 10000)) q=/gl-test-$$
  run drive "$(rel probe)" "sysv_put={\"key\":$k,\"data\":\"secret\"}" "sysv_get={\"key\":$k}" \
    "mq_put={\"name\":\"$q\",\"data\":\"secret\"}" "mq_get={\"name\":\"$q\"}"
  [ "$(at 1 .reply.value.error)" = '"EPERM"' ] && [ "$(at 2 .reply.value.error)" = '"EPERM"' ]
  [ "$(at 3 .reply.value.error)" = '"EPERM"' ] && [ "$(at 4 .reply.value.error)" = '"EPERM"' ]
  # (the counter limits off too: RLIMIT_MSGQUEUE 0 refuses the queue itself)
  GL_TEST_COUNTERS_OFF=1 run drive --host "$TESTHOST" "${ALL_OFF[@]}" "$(rel probe)" \
    "sysv_put={\"key\":$k,\"data\":\"secret\"}" "sysv_get={\"key\":$k}" \
    "mq_put={\"name\":\"$q\",\"data\":\"secret\"}" "mq_get={\"name\":\"$q\"}"
  [ "$(at 2 .reply.value.data)" = '"secret"' ] && [ "$(at 4 .reply.value.data)" = '"secret"' ] ||
    { echo "$output"; false; }
}

@test "isolation: an abstract socket served by a lingering child; off: a later copy reads it" {
  n=gl-test-$$
  run drive "$(rel probe)" "abstract_serve={\"name\":\"$n\",\"data\":\"secret\"}" \
    "abstract_fetch={\"name\":\"$n\"}"
  [ "$(at 1 .reply.value.error)" = '"EPERM"' ] && [ "$(at 2 .reply.value.error)" = '"EPERM"' ]
  run drive --host "$TESTHOST" "${ALL_OFF[@]}" "$(rel probe)" \
    "abstract_serve={\"name\":\"$n\",\"data\":\"secret\"}" "abstract_fetch={\"name\":\"$n\"}"
  [ "$(at 2 .reply.value.data)" = '"secret"' ]
}

@test "isolation: a signal to an earlier copy's child; newpid off: scoped (EPERM); all off: delivered" {
  run drive "$(rel probe)" leave_child 'signal_probe={"pid":@child}'
  [ "$(at 1 .reply.value.child)" = 2 ] && [ "$(at 2 .reply.value.result)" = '"ESRCH"' ]
  # newpid off: the child lingers in the germline's PID namespace, where
  # G1 sees it (the next fork is refused) ...
  run drive --host "$TESTHOST" --copy-off newpid "$(rel probe)" leave_child 'signal_probe={"pid":@child}'
  [ "$(at 1 .survivors)" = 1 ] && [ "$(at 2 .error)" = '"germline_check"' ]
  at 2 '.detail|test("G1: a process other than the germline lives in its PID namespace")'
  # ... and without G1, Landlock's signal scope still stops the signal
  run drive --host "$TESTHOST" --no-g-check --copy-off newpid "$(rel probe)" leave_child 'signal_probe={"pid":@child}'
  [ "$(at 1 .survivors)" = 1 ] && [ "$(at 2 .reply.value.result)" = '"EPERM"' ]
  run drive --host "$TESTHOST" "${ALL_OFF[@]}" "$(rel probe)" leave_child 'signal_probe={"pid":@child}'
  [ "$(at 2 .reply.value.result)" = '"ok"' ]
}

@test "isolation: raw sockets and TCP to 127.0.0.1 fail; with every mechanism off TCP connects" {
  /usr/bin/python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
print(s.getsockname()[1], flush=True); sys.stdout.close()
for _ in range(2):
    c, _ = s.accept(); c.sendall(b"hello"); c.close()
' > port &
  lp=$!
  while [ ! -s port ]; do sleep 0.05; done
  port=$(cat port)
  run drive "$(rel probe)" raw_socket "tcp_connect={\"port\":$port}"
  [ "$(at 1 .reply.value.result)" = '"EPERM"' ] && [ "$(at 2 .reply.value.result)" = '"EPERM"' ]
  run drive --host "$TESTHOST" --germline-off landlock,seccomp,newnet \
    --copy-off landlock,seccomp,newpid,newnet,newipc "$(rel probe)" "tcp_connect={\"port\":$port}"
  kill $lp 2>/dev/null || true
  [ "$(at 1 .reply.value.data)" = '"hello"' ]
}

# ---- shared kernel state (docs/sandbox.md "What a copy shares") ----------
SECCOMP_OFF=(--germline-off seccomp --copy-off seccomp)
# a writable copy of the probe release: files a copy may read, owned by us
own_probe() { P=$BATS_TEST_TMPDIR/probe; cp -r "$(rel probe)" "$P"; }

@test "shared state: fd 0's description (flags, F_SETSIG, OFD lock, flock); devnull/seccomp off: a later copy reads them" {
  # a standard signal: F_SETSIG to a real-time one is denied outright
  # (docs/sandbox.md, the counter table)
  set_get=('ofd_set={"sig":10}' ofd_get 'lock_set={"mode":"ofd","offset":4242}' 'lock_get={"mode":"record"}'
           'lock_set={"mode":"flock"}' 'lock_get={"mode":"flock"}')
  run drive "$(rel probe)" "${set_get[@]}"
  [ "$(at 1 .reply.value)" = '{"flags":"ok","sig":"ok"}' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value)" = '{"nonblock":false,"append":false,"sig":0}' ]
  [ "$(at 3 .reply.value.result)" = '"ENOLCK"' ] && [ "$(at 4 .reply.value.result)" = '"ENOLCK"' ]
  [ "$(at 5 .reply.value.result)" = '"ENOLCK"' ] && [ "$(at 6 .reply.value.result)" = '"ENOLCK"' ]
  # reference: the germline's /dev/null on 0-2 (devnull off) carries flags and signal
  run drive --host "$TESTHOST" --copy-off devnull "$(rel probe)" "${set_get[@]}"
  [ "$(at 2 .reply.value)" = '{"nonblock":true,"append":true,"sig":10}' ] || { echo "$output"; false; }
  [ "$(at 3 .reply.value.result)" = '"ENOLCK"' ]
  # and with seccomp off too, an OFD lock and a flock outlive the copy that set them
  run drive --host "$TESTHOST" --germline-off seccomp --copy-off seccomp,devnull "$(rel probe)" "${set_get[@]}"
  [ "$(at 4 .reply.value)" = '{"result":"locked","offset":4242}' ] || { echo "$output"; false; }
  [ "$(at 6 .reply.value.result)" = '"EAGAIN"' ]
  # seccomp off alone: the lock is on the copy's own description, gone with it
  run drive --host "$TESTHOST" "${SECCOMP_OFF[@]}" "$(rel probe)" "${set_get[@]}"
  [ "$(at 3 .reply.value.result)" = '"ok"' ] && [ "$(at 4 .reply.value.result)" = '"unlocked"' ]
  [ "$(at 5 .reply.value.result)" = '"ok"' ] && [ "$(at 6 .reply.value.result)" = '"unlocked"' ]
}

@test "shared state: record/OFD locks and flock held by a lingering process; seccomp off: a later copy reads them" {
  own_probe
  calls=("lock_set={\"mode\":\"record\",\"path\":\"$P/probe.py\",\"offset\":4242,\"linger\":true}"
         "lock_get={\"mode\":\"record\",\"path\":\"$P/probe.py\"}"
         "lock_set={\"mode\":\"ofd\",\"path\":\"$P/manifest.json\",\"offset\":77,\"linger\":true}"
         "lock_get={\"mode\":\"ofd\",\"path\":\"$P/manifest.json\"}"
         "lock_set={\"mode\":\"flock\",\"path\":\"$P/probe.py\",\"linger\":true}"
         "lock_get={\"mode\":\"flock\",\"path\":\"$P/probe.py\"}")
  # newpid off in both runs, so the holder outlives its copy (the reference of
  # O3), and G1 off: it would refuse the next fork, the holder being alive in
  # the germline's PID namespace (tests/germline-contain.bats)
  run drive --host "$TESTHOST" --no-g-check --germline-off seccomp --copy-off seccomp,newpid "$P" "${calls[@]}"
  [ "$(at 2 .reply.value)" = '{"result":"locked","offset":4242}' ] || { echo "$output"; false; }
  [ "$(at 4 .reply.value)" = '{"result":"locked","offset":77}' ]
  [ "$(at 6 .reply.value.result)" = '"EAGAIN"' ]
  run drive --host "$TESTHOST" --no-g-check --copy-off newpid "$P" "${calls[@]}"
  [ "$(at 1 '.reply.value.result')" = '"ENOLCK"' ] || { echo "$output"; false; }
  for n in 2 3 4 5 6; do [ "$(at $n .reply.value.result)" = '"ENOLCK"' ]; done
}

@test "shared state: page-cache residency (fadvise + RWF_NOWAIT, mincore, cachestat); seccomp off: a later copy reads the bits" {
  own_probe
  dd if=/dev/urandom of="$P/pages" bs=1M count=3 status=none && sync "$P/pages"
  w="cache_write={\"path\":\"$P/pages\",\"bits\":\"10110010\"}"
  r() { echo "cache_read={\"path\":\"$P/pages\",\"how\":\"$1\",\"n\":8}"; }
  # nowait last: a miss it reports starts a read of that page, and on a
  # fast disk that read can end inside the same call (a 1 read as 0, about
  # one miss in 200). The page cache is the host's: another suite's memory
  # pressure may evict a page between the write and the reads (make check
  # runs suites side by side). So the channel is tried up to three times.
  local try
  for try in 1 2 3; do
    run drive --host "$TESTHOST" "${SECCOMP_OFF[@]}" "$P" "$w" "$(r mincore)" "$(r cachestat)" "$(r nowait)"
    [ "$(at 1 .reply.value.result)" = '"ok"' ] || { echo "$output"; false; }
    [ "$(at 2 .reply.value.bits)" = '"10110010"' ] && [ "$(at 3 .reply.value.bits)" = '"10110010"' ] &&
      [ "$(at 4 .reply.value.bits)" = '"10110010"' ] && break
    echo "try $try: $output"
  done
  [ "$(at 2 .reply.value.bits)" = '"10110010"' ] && [ "$(at 3 .reply.value.bits)" = '"10110010"' ]
  [ "$(at 4 .reply.value.bits)" = '"10110010"' ]
  run drive "$P" "$w" "$(r mincore)" "$(r cachestat)" "$(r nowait)"
  [ "$(at 1 .reply.value.result)" = '"EPERM"' ] || { echo "$output"; false; }
  for n in 2 3 4; do [ "$(at $n .reply.value.bits)" = '"EPERM"' ]; done
}

@test "shared state: rusage (getrusage, wait4, times) and inotify; seccomp off: each answers" {
  i="inotify={\"path\":\"$(rel probe)/probe.py\"}"
  run drive "$(rel probe)" rusage "$i"
  [ "$(at 1 .reply.value)" = '{"getrusage":"EPERM","wait4":"EPERM","times":"EPERM"}' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value.result)" = '"EPERM"' ]
  run drive --host "$TESTHOST" "${SECCOMP_OFF[@]}" "$(rel probe)" rusage "$i"
  [ "$(at 1 .reply.value)" = '{"getrusage":"ok","wait4":"ok","times":"ok"}' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value.result)" = '"event"' ]
}

@test "shared state: sendmsg with msg_name to a host datagram socket; Landlock lets it through, the minimal root and seccomp each stop it" {
  sock=$BATS_TEST_TMPDIR/log.sock
  /usr/bin/python3 -c '
import signal, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
print("ready", flush=True); signal.sigwait([signal.SIGUSR1]); s.setblocking(False)
got = []
try:
    while True: got.append(s.recv(100).decode())
except BlockingIOError: pass
print(",".join(got), flush=True)
' "$sock" > got &
  lp=$!
  while [ ! -s got ]; do sleep 0.05; done
  send() { echo "dgram_send={\"path\":\"$sock\",\"type\":\"$1\",\"data\":\"$2\"}"; }
  calls=("$(send dgram secret-d)" "$(send stream secret-s)" "$(send seqpacket secret-q)")
  run drive "$(rel probe)" "${calls[@]}"
  on=$output
  # seccomp off, the minimal root on: the socket's path is not there
  run drive --host "$TESTHOST" "${SECCOMP_OFF[@]}" "$(rel probe)" "${calls[0]}"
  [ "$(at 1 .reply.value.result)" = '"sendmsg ENOENT"' ] || { echo "$output"; false; }
  run drive --host "$TESTHOST" --germline-off seccomp,root --copy-off seccomp "$(rel probe)" "${calls[@]}"
  kill -USR1 $lp && wait $lp
  # seccomp and the minimal root off, Landlock on: the datagram reaches the host socket
  [ "$(at 1 .reply.value.result)" = '"ok"' ] || { echo "$output"; false; }
  [ "$(sed -n 2p got)" = secret-d ]
  output=$on
  [ "$(at 1 .reply.value.result)" = '"socketpair EPERM"' ] || { echo "$output"; false; }
  # the kernel itself refuses an address on a stream socket, ignores it on seqpacket
  [ "$(at 2 .reply.value.result)" = '"sendmsg EISCONN"' ] && [ "$(at 3 .reply.value.result)" = '"ok"' ]
}

@test "shared state: chmod, utime, xattr of a release file and a host file; seccomp and the minimal root off: a later copy stats them" {
  own_probe
  v=$BATS_TEST_TMPDIR/victim && echo x > "$v" && chmod 600 "$v"
  m() { echo "meta_set={\"path\":\"$1\",\"mode\":438,\"mtime\":1000000000,\"data\":\"secret\"}"; }
  calls=("$(m "$P/probe.py")" "meta_get={\"path\":\"$P/probe.py\"}" "$(m "$v")")
  # seccomp off, the minimal root on: the release is read-only, the host file absent
  run drive --host "$TESTHOST" "${SECCOMP_OFF[@]}" "$P" "${calls[@]}"
  [ "$(at 1 .reply.value)" = '{"chmod":"EROFS","utime":"EROFS","xattr":"EROFS"}' ] || { echo "$output"; false; }
  [ "$(at 3 .reply.value)" = '{"chmod":"ENOENT","utime":"ENOENT","xattr":"ENOENT"}' ]
  run drive --host "$TESTHOST" --germline-off seccomp,root --copy-off seccomp "$P" "${calls[@]}"
  [ "$(at 1 .reply.value)" = '{"chmod":"ok","utime":"ok","xattr":"ok"}' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value)" = '{"mode":438,"mtime":1000000000,"xattr":"secret"}' ]
  [ "$(stat -c %a "$v")" = 666 ]   # a host file outside every Landlock rule
  rm -rf "$P" && own_probe && chmod 600 "$v"
  run drive "$P" "${calls[@]}"
  [ "$(at 1 .reply.value)" = '{"chmod":"EPERM","utime":"EPERM","xattr":"EPERM"}' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value.mode)" = "$(printf %d 0$(stat -c %a "$P/probe.py"))" ]
  [ "$(at 2 .reply.value.xattr)" = '"ENODATA"' ]
  [ "$(at 3 .reply.value)" = '{"chmod":"EPERM","utime":"EPERM","xattr":"EPERM"}' ]
  [ "$(stat -c %a "$v")" = 600 ]
}

@test "shared state: a copy's SIGCHLD (pid, CPU time) taken by the germline's at-fork hook; hooks, CLONE_PARENT and seccomp off: the next copy reads it" {
  # no at-fork hook runs in the germline at all
  run drive "$(rel sigchld)" burn report
  [ "$(at 2 .reply.value.seen)" = '[]' ] || { echo "$output"; false; }
  # the hooks run (atfork off), but the copies are the init's children and
  # seccomp denies the wait: nothing
  run drive --host "$TESTHOST" --copy-off atfork "$(rel sigchld)" burn report
  [ "$(at 2 .reply.value.seen)" = '["EPERM","EPERM"]' ] || { echo "$output"; false; }
  # hooks, the germline as the copies' parent, and seccomp all off: it reads it
  run drive --host "$TESTHOST" --germline-off seccomp --copy-off seccomp,atfork,parent "$(rel sigchld)" burn report
  [ "$(at 2 '.reply.value.seen[0]')" = '"EAGAIN"' ] || { echo "$output"; false; }
  at 2 '.reply.value.seen[1]|(.signo == 17 and (.pid|type) == "number" and (.cpu_ticks|type) == "number")'
}

@test "shared state: a copy's core dump is not written; Landlock and the minimal root off: it lands in the release, which every copy reads" {
  [ "$(cat /proc/sys/kernel/core_pattern)" = core ] && [ "$(cat /proc/sys/kernel/core_uses_pid)" = 0 ] ||
    skip "core_pattern is not a plain 'core' (a pipe handler: docs/sandbox.md)"
  [ "$(ulimit -Hc)" != 0 ] || skip "hard RLIMIT_CORE is 0"
  own_probe && chmod 777 "$P"
  run drive "$P" crash "read_path={\"path\":\"$P/core\"}"
  [ "$(at 1 .error)" = '"protocol"' ] && [ ! -e "$P/core" ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value.error)" = '"ENOENT"' ]
  run drive --host "$TESTHOST" --germline-off landlock,root --copy-off landlock "$P" crash
  [ -s "$P/core" ]
}

@test "probe: from inside a copy every route is denied — stat of /etc/shadow, /root, GL_HOME; /proc; a host datagram socket; locks; fadvise" {
  own_probe
  mkdir -p "$GL_HOME/slots"
  sock=$BATS_TEST_TMPDIR/probe.sock
  /usr/bin/python3 -c 'import socket, sys, time; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); time.sleep(30)' "$sock" &
  lp=$!
  while [ ! -S "$sock" ]; do sleep 0.05; done
  calls=("stat_paths={\"paths\":[\"/etc/shadow\",\"/root\",\"$GL_HOME\",\"$GL_HOME/slots\",\"$sock\"]}"
         'list_dir={"path":"/proc"}'
         "dgram_send={\"path\":\"$sock\",\"type\":\"dgram\",\"data\":\"secret\"}"
         "lock_set={\"mode\":\"record\",\"path\":\"$P/probe.py\",\"offset\":7}"
         "lock_set={\"mode\":\"flock\",\"path\":\"$P/probe.py\"}"
         "cache_write={\"path\":\"$P/probe.py\",\"bits\":\"1\"}")
  run drive "$P" "${calls[@]}"
  [ "$(at 1 '.reply.value|[.[]]|unique')" = '["ENOENT"]' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value.result)" = '"ENOENT"' ]
  [ "$(at 3 .reply.value.result)" = '"socketpair EPERM"' ]
  [ "$(at 4 .reply.value.result)" = '"ENOLCK"' ] && [ "$(at 5 .reply.value.result)" = '"ENOLCK"' ]
  [ "$(at 6 .reply.value.result)" = '"EPERM"' ]
  # reference: every mechanism off — each route answers
  run drive --host "$TESTHOST" "${ALL_OFF[@]}" "$P" "${calls[@]}"
  kill $lp 2>/dev/null || true
  [ "$(at 1 '.reply.value|[.[]]|unique')" = '["ok"]' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value.result)" = '"ok"' ] && [ "$(at 3 .reply.value.result)" = '"ok"' ]
  [ "$(at 4 .reply.value.result)" = '"ok"' ] && [ "$(at 5 .reply.value.result)" = '"ok"' ]
  [ "$(at 6 .reply.value.result)" = '"ok"' ]
}

@test "unprivileged (nobody): launch, descriptors, G2 refusal, O3" {
  command -v setpriv >/dev/null || skip "setpriv missing"
  [ "$(id -u)" = 0 ] || skip "already unprivileged (uid $(id -u)): needs root to switch to nobody"
  t=$(mktemp -d /tmp/gl-sandbox.XXXXXX)
  d=$GL_ROOT/build/tests/germline_drive
  case "$GL_BIN" in *asan*) d=$GL_ROOT/build/asan/tests/germline_drive ;; esac
  cp "$d" "$t/drive" && cp -r "$GL_ROOT/build/host" "$t/host"
  cp -r "$(rel probe)" "$t/probe" && cp -r "$(rel pipe)" "$t/pipe"
  chmod -R a+rX "$t"
  run setpriv --reuid=nobody --regid=nogroup --clear-groups "$t/drive" --host "$t/host" \
    "$t/probe" fds hello leave_child
  run2=$output
  run setpriv --reuid=nobody --regid=nogroup --clear-groups "$t/drive" --host "$t/host" \
    "$t/pipe" hello
  rm -rf "$t"
  [ "$(at 1 .detail|cut -c1-10)" = '"G2: fd 4 ' ] || { echo "$output"; false; }
  output=$run2
  [ "$(at 1 '.fds')" = '{"0":"/dev/null","1":"/dev/null","2":"/dev/null","3":"control socket"}' ]
  [ "$(at 2 '.reply.value.pid')" = 1 ]
  [ "$(at 3 .survivors)" = 0 ]
}

@test "seccomp: an x32 system call kills the copy; with seccomp off it returns" {
  run drive "$(rel probe)" x32_syscall hello
  [ "$(at 1 .error)" = '"protocol"' ] && at 2 .ok
  run drive --host "$TESTHOST" --germline-off seccomp --copy-off seccomp "$(rel probe)" x32_syscall
  at 1 '.reply.value.result|type == "number"'
}

@test "the germline and its copies die with the broker (PR_SET_PDEATHSIG)" {
  python3=/usr/bin/python3
  $python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
print(s.getsockname()[1], flush=True); sys.stdout.close()
c, _ = s.accept(); import time; time.sleep(30)
' > port &
  lp=$!
  while [ ! -s port ]; do sleep 0.05; done
  # The copy must stay alive in a blocking recv: that needs a TCP connection
  # to the listener, so the network namespace, the seccomp filter (which
  # denies connect) and Landlock (whose TCP rules deny it: EACCES, and the
  # copy would end at once) are off for this test of the death signal alone.
  drive --host "$TESTHOST" --germline-off landlock,newnet,seccomp \
    --copy-off landlock,newnet,seccomp "$(rel probe)" \
    "tcp_connect={\"port\":$(cat port)}" > out &
  dp=$!
  g= c=
  for _ in $(seq 400); do   # until the copy is up (bounded: no hang if it never is)
    g=$(pgrep -P "$dp" | head -1); [ -n "$g" ] && c=$(pgrep -P "$g" | head -1)
    [ -n "$c" ] && break; sleep 0.05
  done
  [ -n "$c" ] || { kill -9 "$dp" "$lp"; cat out; false; }
  kill -9 "$dp"
  wait "$dp" || true
  kill "$lp" 2>/dev/null || true
  for p in $g $c; do
    for _ in $(seq 100); do [ -d /proc/$p ] && ! grep -q '^State:.*Z' /proc/$p/status 2>/dev/null || break; sleep 0.05; done
    ! grep -qs '^State:.*[RSD]' /proc/$p/status
  done
}
