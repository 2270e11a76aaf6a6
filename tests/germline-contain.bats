#!/usr/bin/env bats
# The germline contained (issue 13 items 2–5; SPEC §10; docs/sandbox.md
# "What a copy shares, and why each is closed"): releases written against
# the mechanism, each shown with the mechanism switched off (the channel
# carries a secret from one copy to a later one, or a helper outlives the
# broker) and on (refused, or nothing carried). The driver is
# tests/unit/germline_drive.c; its switches exist only there and in the
# GL_TESTING build of _germline.so made here (never in build/host).
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/drive

setup_file() { drive_setup_file; }

setup() { gl_setup; }

rel() { echo "$FIX/releases/contain-$1"; }

@test "stdio: init puts a release file on 0-2 -> refused (G2); off: its offset carries a secret" {
  run drive "$(rel stdio)" 'put={"secret":173}' get
  [ "$(at 1 .error)" = '"germline_check"' ] || { echo "$output"; false; }
  at 1 '.detail|test("G2: fd 0 is not /dev/null")'
  # G2 off: each copy still gets its own /dev/null, so the offset is not shared
  run drive --host "$TESTHOST" --no-g-check "$(rel stdio)" 'put={"secret":173}' get
  [ "$(at 2 .reply.value)" = 0 ]
  # both off: the later copy reads the earlier copy's secret
  run drive --host "$TESTHOST" --no-g-check --copy-off devnull "$(rel stdio)" 'put={"secret":173}' get
  [ "$(at 2 .reply.value)" = 173 ]
}

@test "stdio: the germline's /dev/null flags (O_NONBLOCK, O_APPEND) are no channel; off: they carry 2 bits" {
  r=$BATS_TEST_TMPDIR/plain
  cp -r "$(rel stdio)" "$r" && rm "$r/dup"
  run drive "$r" 'flags_put={"secret":3}' flags_get
  at 1 .ok && [ "$(at 2 .reply.value)" = 0 ]
  run drive --host "$TESTHOST" --copy-off devnull "$r" 'flags_put={"secret":3}' flags_get
  [ "$(at 2 .reply.value)" = 3 ]
}

# helper_pids TAG — live processes named TAG (the test's own helper only).
# A zombie is left out: it runs no code and holds no lock, and who reaps it
# (after the reference run's kill -9, the host's init) is not under test —
# on a CI host whose PID 1 reaps late it stayed listed into the next check.
helper_pids() {
  local p st
  for p in $(pgrep -x "$1"); do
    st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
    [ -z "$st" ] || [ "$st" = Z ] || echo "$p"
  done
}

@test "double-forked helper: refused (G1: it is in the germline's PID namespace) and gone with it; off: it relays a secret and outlives the broker" {
  r=$BATS_TEST_TMPDIR/helper tag=glh$$$RANDOM
  cp -r "$(rel helper)" "$r" && echo "${tag:0:15}" >"$r/TAG"
  run drive "$r" 'put={"secret":42}' get
  [ "$(at 1 .error)" = '"germline_check"' ] || { echo "$output"; false; }
  at 1 '.detail|test("G1: a process other than the germline lives in its PID namespace")'
  sleep 0.2
  [ -z "$(helper_pids "${tag:0:15}")" ]
  # reference: no PID namespace, no G1, no seccomp (locks): the helper relays
  # the first copy's lock to the second, and survives the broker
  run drive --host "$TESTHOST" --no-g-check --germline-off pidns,seccomp --copy-off seccomp \
    "$r" 'put={"secret":42}' get
  left=$(helper_pids "${tag:0:15}")
  [ -n "$left" ] && kill -9 $left
  [ "$(at 2 .reply.value)" = 42 ] || { echo "$output"; false; }
  # the PID namespace alone (G1 off): the helper still dies with the germline
  run drive --host "$TESTHOST" --no-g-check --germline-off seccomp --copy-off seccomp \
    "$r" 'put={"secret":42}' get
  sleep 0.2
  [ -z "$(helper_pids "${tag:0:15}")" ]
}

@test "C-level timer handler: no tick runs in the germline while a copy runs; off: it does (and G1 names the signal)" {
  # ticks start 2 s after init; the second copy runs across them
  run drive "$(rel timer)" ticks_seen 'burn={"s":3}' ticks_seen
  at 1 .ok && at 3 .ok || { echo "$output"; false; }
  [ "$(at 1 .reply.value)" = 0 ] && [ "$(at 3 .reply.value)" = 0 ]
  # signals left unblocked while copies run (and G1 off): the ticks run
  # (the counter rules off too: they deny timer_create, a POSIX timer's
  # preallocated signal being a per-user charge; docs/sandbox.md)
  GL_TEST_COUNTERS_OFF=1 run drive --host "$TESTHOST" --no-g-check --copy-off signals "$(rel timer)" ticks_seen 'burn={"s":3}' ticks_seen
  [ "$(at 1 .reply.value)" = 0 ] && [ "$(at 3 .reply.value)" -gt 0 ] || { echo "$output"; false; }
  # signals unblocked and G1 on: the next fork is refused, naming the signal
  run drive --host "$TESTHOST" --copy-off signals "$(rel timer)" ticks_seen ticks_seen
  [ "$(at 2 .error)" = '"germline_check"' ] || { echo "$output"; false; }
  at 2 '.detail|test("G1: signal [0-9]+ is not blocked")'
}

@test "at-fork hook: never runs in the germline, and copies' CPU time never reaches it; off: a copy's CPU time does" {
  run drive "$(rel atfork)" burn seen_list
  [ "$(at 2 .reply.value)" = '[]' ]
  # the hooks run but the copies are the init's children: no rusage
  run drive --host "$TESTHOST" --copy-off atfork --germline-off seccomp "$(rel atfork)" burn seen_list
  [ "$(at 2 '.reply.value|length')" = 2 ] && [ "$(at 2 '.reply.value[1] < 0.05')" = true ] || { echo "$output"; false; }
  # hooks and reaping by the germline (and seccomp) off: the burnt CPU shows
  # (four times the work: 5 M iterations are about 0.1 s on a fast CPU)
  run drive --host "$TESTHOST" --copy-off atfork,parent,seccomp --germline-off seccomp \
    "$(rel atfork)" 'burn={"n":20000000}' seen_list
  [ "$(at 2 '.reply.value[1] >= 0.1')" = true ] || { echo "$output"; false; }
}

@test "minimal root: a copy cannot stat /etc/shadow, /root, the checkout, nor list /proc; off: it can" {
  paths="[\"/etc/shadow\",\"/root\",\"$GL_ROOT/Makefile\",\"$BATS_TEST_TMPDIR\",\"/proc/1/status\",\"/run\"]"
  run drive "$(rel probe)" "stat_paths={\"paths\":$paths}" 'list_dir={"path":"/proc"}'
  [ "$(at 1 '.reply.value|[.[]]|unique')" = '["ENOENT"]' ] || { echo "$output"; false; }
  [ "$(at 2 .reply.value)" = '"ENOENT"' ]
  run drive --host "$TESTHOST" --germline-off root "$(rel probe)" "stat_paths={\"paths\":$paths}" 'list_dir={"path":"/proc"}'
  [ "$(at 1 ".reply.value[\"$GL_ROOT/Makefile\"]")" = '"ok"' ]
  [ "$(at 2 '.reply.value|length')" -gt 2 ]
}

@test "minimal root: ctypes.util.find_library answers in a copy as on the host (the root has no ldconfig, gcc or ld), and the library it names loads" {
  r=$BATS_TEST_TMPDIR/probe
  cp -r "$(rel probe)" "$r"
  cat >>"$r/contain_probe.py" <<'EOF'


def find_libs(call):
    import ctypes
    import ctypes.util
    out = {n: ctypes.util.find_library(n) for n in ("c", "m", "no-such-lib-gl")}
    out["loads"] = bool(out["c"]) and ctypes.CDLL(out["c"]).getpid() > 0
    return out
EOF
  jq '.functions.find_libs = {"destinations":[]}' "$r/manifest.json" >"$r/m" && mv "$r/m" "$r/manifest.json"
  want=$("$SYSPY" -c 'import ctypes.util as u, json; print(json.dumps({n: u.find_library(n) for n in ("c", "m", "no-such-lib-gl")}))')
  [[ $want == *'"c": "libc.so'* ]] # the host's own answer, the reference
  run drive "$r" find_libs
  printf '%s\n' "$output" | jq -se --argjson w "$want" '.[1].reply.value == ($w + {loads: true})' ||
    { echo "$output"; false; }
}

@test "minimal root: a copy cannot chmod or touch a release file, nor update its atime; off: all three are channels" {
  r=$BATS_TEST_TMPDIR/probe
  cp -r "$(rel probe)" "$r"
  cat >>"$r/contain_probe.py" <<'EOF'


def touch(call):
    here = os.path.dirname(os.path.abspath(__file__))
    out = {}
    with open(os.path.join(here, "data.txt")) as f:  # a read: atime (relatime)
        f.read()
    p = os.path.join(here, "target.txt")
    for name, f in (("chmod", lambda: os.chmod(p, 0o600)), ("utime", lambda: os.utime(p, (1, 1)))):
        try:
            f()
            out[name] = "ok"
        except OSError as e:
            out[name] = _err(e)
    return out
EOF
  jq '.functions.touch = {"destinations":[]}' "$r/manifest.json" >"$r/m" && mv "$r/m" "$r/manifest.json"
  echo data >"$r/data.txt" && echo target >"$r/target.txt"
  chmod -R a+rX "$r"
  touch -a -d 2020-01-01 "$r/data.txt" # older than its mtime: a read through a writable mount updates it
  before=$(stat -c '%X' "$r/data.txt") mode=$(stat -c '%a %Y' "$r/target.txt")
  # both layers: seccomp refuses the calls (EPERM); without it the read-only
  # mount of the minimal root still does (EROFS), and no read moves the atime
  run drive "$r" touch
  [ "$(at 1 .reply.value)" = '{"chmod":"EPERM","utime":"EPERM"}' ] || { echo "$output"; false; }
  run drive --host "$TESTHOST" --germline-off seccomp --copy-off seccomp "$r" touch
  [ "$(at 1 .reply.value)" = '{"chmod":"EROFS","utime":"EROFS"}' ] || { echo "$output"; false; }
  [ "$(stat -c '%X' "$r/data.txt")" = "$before" ] && [ "$(stat -c '%a %Y' "$r/target.txt")" = "$mode" ]
  # reference: the host's tree, as before the minimal root, and the seccomp
  # rules on inode metadata off too (the copy owns the files in its user
  # namespace: root's under root, nobody's under nobody)
  run drive --host "$TESTHOST" --germline-off root,seccomp --copy-off seccomp "$r" touch
  [ "$(stat -c '%X' "$r/data.txt")" != "$before" ]
  [ "$(at 1 .reply.value.chmod)" = '"ok"' ] && [ "$(stat -c '%a' "$r/target.txt")" = 600 ]
}

@test "pid counter: every copy is PID 3 of the germline's namespace, whatever earlier copies started; off: refused" {
  # spawn makes 50 processes; the next copy still has the same number there
  # (the broker refuses any other: lib/runtime/germline_fork.c)
  run drive "$(rel probe)" 'spawn={"n":50}' 'spawn={"n":1}' 'spawn={"n":1}'
  at 1 .ok && at 2 .ok && at 3 .ok || { echo "$output"; false; }
  # reference: a plain clone; its number is the namespace's counter, which
  # counts every process earlier copies started (and which the init moved
  # past the lanes' numbers at launch: lib/runtime/germline_child.c
  # skip_copy_numbers), so the first copy is already refused
  run drive --host "$TESTHOST" --copy-off-checked pidfix "$(rel probe)" 'spawn={"n":50}' 'spawn={"n":1}'
  [ "$(at 1 .error)" = '"fork"' ] || { echo "$output"; false; }
  at 1 '.detail|test("is not 3")'
}

@test "host counters: a copy reads neither the free blocks of GL_HOME's filesystem nor the host's free memory; off: the broker's writes show" {
  r=$BATS_TEST_TMPDIR/probe
  cp -r "$(rel probe)" "$r"
  run drive "$r" fs_free
  [ "$(at 1 .reply.value)" = '{"statvfs":"EPERM","avphys":-1}' ] || [ "$(at 1 '.reply.value.statvfs')" = '"EPERM"' ] || { echo "$output"; false; }
  at 1 '.reply.value.bfree == null'
  # reference (seccomp off): 200 MiB written beside the release between two
  # calls — what the broker does when it commits a horizon's slot — show
  # (up to three tries: the same suite in another pass frees its own file)
  for try in 1 2 3; do
    run drive --host "$TESTHOST" --germline-off seccomp --copy-off seccomp "$r" fs_free
    before=$(at 1 .reply.value.bfree) bsize=$(at 1 .reply.value.bsize)
    dd if=/dev/zero of="$BATS_TEST_TMPDIR/slot" bs=1M count=200 conv=fsync status=none
    run drive --host "$TESTHOST" --germline-off seccomp --copy-off seccomp "$r" fs_free
    rm -f "$BATS_TEST_TMPDIR/slot"
    after=$(at 1 .reply.value.bfree)
    [ $(((before - after) * bsize)) -lt $((100 << 20)) ] || break
  done
  [ $(((before - after) * bsize)) -ge $((100 << 20)) ] || { echo "before $before after $after"; false; }
}
