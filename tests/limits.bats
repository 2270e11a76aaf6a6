#!/usr/bin/env bats
# Per-copy resource bounds (issue 15; SPEC §4 "limits", §6 errors "memory",
# "pids", "cpu"; lib/sandbox/cgroup.c; docs/sandbox.md "Resource limits").
#
# A real release (tests/fixtures/releases/limits-hog), signed and installed
# through the real chain, whose copies touch memory, fork and spin. Each
# bound is shown off — the test build (build/testing/bin/gl-run) with
# GL_TEST_LIMITS_OFF=1, where the damage happens, bounded by the release's
# own arguments so that this shared machine is not endangered — and on
# (bin/gl-run as shipped), where the copy is stopped, its consumer gets the
# named error, no process of the copy outlives the call, and the next call
# of the same germline succeeds. As root the bounds are cgroups (v1 here, v2
# where delegated); as nobody, rlimits (RLIMIT_AS, RLIMIT_NPROC in the
# germline's user namespace, RLIMIT_CPU): "enforcement"."limits" names them.
# unprivileged: yes — gl-run bounds its copies with rlimits there
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  TGLRUN=$GL_ROOT/build/testing/bin/gl-run
  POLICY=$BATS_TEST_TMPDIR/policy.json
  REL=$(install_release "$FIX/releases/limits-hog")
}

teardown() { kill_pids; release_cleanup; }

# limits JSON — $POLICY with agent public and these limits
limits() { jq -n --argjson l "$1" '{clearances:{agent:[]},limits:$l}' >"$POLICY"; }

# call ID FUNCTION ARGS_JSON — one planned envelope line
# (one jq, byte for byte envelope's line: a jq 1.6 start costs ~45 ms of CPU)
call() {
  jq -cn --arg id "$1" --arg r "$REL" --arg f "$2" --argjson a "$3" \
    '{id: $id, release: $r, function: $f, args: {}, items: [], consumers: ["agent"]} + {args: $a}' |
    gl-plan --policy "$POLICY"
}

# serve GLRUN FILE [flags…] — run the planned calls of FILE through one
# gl-run, one at a time: after each record, the processes of the release
# still alive on the host (its germline and copies run the release
# directory) go to $BATS_TEST_TMPDIR/alive, one count a line. Records in
# $output.
serve() {
  local glrun=$1 f=$2 n i k out=$BATS_TEST_TMPDIR/out
  shift 2
  rm -f "$BATS_TEST_TMPDIR/in"
  mkfifo "$BATS_TEST_TMPDIR/in"
  "$glrun" --policy "$POLICY" "$@" <"$BATS_TEST_TMPDIR/in" >"$out" 2>"$BATS_TEST_TMPDIR/err" &
  local pid=$!
  echo "$pid" >>"$PIDS"
  exec 4>"$BATS_TEST_TMPDIR/in"
  : >"$BATS_TEST_TMPDIR/alive"
  n=0
  while IFS= read -r line; do
    printf '%s\n' "$line" >&4
    n=$((n + 1))
    for i in $(seq 6000); do
      k=$(wc -l <"$out")
      [ "$k" -ge "$n" ] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    pgrep -f -c "$GL_HOME/releases/$REL" >>"$BATS_TEST_TMPDIR/alive" || true
  done <"$f"
  exec 4>&-
  wait "$pid" || true
  output=$(cat "$out")
}

# rec N — the N-th record (1-based)
rec() { sed -n "${1}p" <<<"$output"; }

# memavail — MemAvailable in KiB
memavail() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }

@test "off: a copy touching 2 GiB against a 256 MiB limit gets all of it (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  limits '{"memory_mb":256}'
  call m1 touch '{"mib":2048}' >calls
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls
  rec 1 | cut -c1-600 # on failure: what the copy ended with
  rec 1 | jq -e '.results[0].ok == true and .results[0].value.mib == 2048'
  rec 1 | jq -e '.enforcement.limits.memory == "off"'
}

@test "on: a copy touching 6 GiB is stopped with memory; MemAvailable never drops past the limit" {
  limits '{"memory_mb":256}'
  { call m1 touch '{"mib":6144}'; call m2 noop '{}'; } >calls
  local base
  base=$(memavail)
  "$SYSPY" "$FIX/run/memavail.py" >"$BATS_TEST_TMPDIR/mem" &
  local sampler=$!
  echo "$sampler" >>"$PIDS"
  until [ -s "$BATS_TEST_TMPDIR/mem" ] || ! kill -0 "$sampler" 2>/dev/null; do sleep 0.01; done # sampling before the copy runs
  serve gl-run calls
  kill "$sampler"
  rec 1 | jq -e '.results[0].ok == false and .results[0].error == "memory"'
  rec 1 | jq -e '.results[0].label == []'
  rec 1 | jq -e '.enforcement.limits.memory | IN("cgroup_v1", "cgroup_v2", "rlimit_as")'
  rec 2 | jq -e '.results[0].ok == true and .results[0].value == "ok"'
  # the host lost at most the limit plus a margin (other tenants share it)
  local low drop
  low=$(sort -n "$BATS_TEST_TMPDIR/mem" | head -1)
  drop=$(((base - low) / 1024))
  echo "MemAvailable dropped by at most ${drop} MiB"
  [ "$drop" -le $((256 + 1024)) ]
  [ "$(sed -n 1p "$BATS_TEST_TMPDIR/alive")" -eq 1 ] # the germline alone
}

@test "off: a fork bomb of 2000 tries forks 2000 times (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  limits '{"pids":32}'
  call p1 forks '{"tries":2000}' >calls
  # a generous deadline: 2000 forks on a loaded shared machine
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls --deadline 120
  rec 1 | jq -e '.results[0].ok == true and .results[0].value.forked == 2000'
}

@test "on: a fork bomb is stopped with pids, and no process outlives the call" {
  limits '{"pids":32}'
  { call p1 forks '{"tries":2000}'; call p2 noop '{}'; } >calls
  serve gl-run calls
  # a cgroup counts every refused fork (pids.events max): the copy is
  # killed, "pids". Under RLIMIT_NPROC the broker sees the limit only while
  # the tree is at it: a bomb whose children already exited is bounded (the
  # copy got EAGAIN past pids) and may end with its own result
  # (docs/sandbox.md "Resource limits")
  rec 1 | jq -e '(.results[0].ok == false and .results[0].error == "pids") or
    (.enforcement.limits.pids == "rlimit_nproc" and .results[0].ok and .results[0].value.forked <= 32
     and .results[0].value.failed > 0)' || { rec 1 | cut -c1-800; false; }
  rec 1 | jq -e '.enforcement.limits.pids | IN("cgroup_v1", "cgroup_v2", "rlimit_nproc")'
  rec 2 | jq -e '.results[0].ok == true'
  # after each call only the germline runs the release: no copy, no child
  [ "$(sed -n 1p "$BATS_TEST_TMPDIR/alive")" -eq 1 ]
  [ "$(sed -n 2p "$BATS_TEST_TMPDIR/alive")" -eq 1 ]
}

@test "off: a CPU spinner runs past cpu_s (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  limits '{"cpu_s":1}'
  call c1 spin '{"n":60000000}' >calls
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls --deadline 300
  rec 1 | jq -e '.results[0].ok == true and .results[0].value.spun == 60000000'
}

@test "on: a CPU spinner with a long deadline is stopped by cpu_s" {
  limits '{"cpu_s":1}'
  { call c1 spin '{"n":1000000000000}'; call c2 noop '{}'; } >calls
  serve gl-run calls --deadline 3600
  rec 1 | jq -e '.results[0].ok == false and .results[0].error == "cpu"'
  rec 1 | jq -e '.enforcement.limits.cpu == "rlimit_cpu"'
  rec 2 | jq -e '.results[0].ok == true'
}

@test "a copy within its bounds is unaffected; every slot is gone with gl-run" {
  limits '{"memory_mb":256,"pids":16,"cpu_s":5}'
  { call n1 touch '{"mib":64}'; call n2 forks '{"tries":4}'; call n3 noop '{}'; } >calls
  serve gl-run calls
  rec 1 | jq -e '.results[0].ok == true and .results[0].value.mib == 64'
  rec 2 | jq -e '.results[0].ok == true and .results[0].value.forked == 4'
  rec 3 | jq -e '.results[0].ok == true'
  # nothing left behind: no per-copy cgroup of that gl-run
  ! ls -d /sys/fs/cgroup/*/germline-"$(head -1 "$PIDS")" /sys/fs/cgroup/*/*/germline-"$(head -1 "$PIDS")" \
    /sys/fs/cgroup/*/*/*/germline-"$(head -1 "$PIDS")" 2>/dev/null
}

# init_release MIB FORKS — REL: limits-init, whose import touches MIB MiB
# and keeps FORKS children at once (tests/fixtures/releases/limits-init)
init_release() {
  local d=$BATS_TEST_TMPDIR/limits-init
  cp -r "$FIX/releases/limits-init" "$d"
  sed -i "s/^MIB = 0$/MIB = $1/; s/^FORKS = 0$/FORKS = $2/" "$d/init.py"
  REL=$(install_release "$d")
}

# The germline's bound (gl_cg_germline_limits): memory_mb 64 -> 1024 MiB, 8
# tasks (RLIMIT_NPROC: the copies' pids + 2). Its import is bounded before
# the runtime's exec (gl_cg_bound_launch): a release's initialisation
# cannot take the host's memory nor fork without bound.
@test "off: an import touching 1.5 GiB (the bound: 1 GiB) and one forking 300 children are launched (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  limits '{"memory_mb":64,"pids":32}'
  init_release 1536 0
  call i1 noop '{}' >calls
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls
  rec 1 | jq -e '.results[0].ok == true and .results[0].value.mib == 1536' || { rec 1 | cut -c1-600; false; }
  rm -rf "$BATS_TEST_TMPDIR/limits-init"
  init_release 0 300
  call i2 noop '{}' >calls
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls
  rec 1 | jq -e '.results[0].ok == true and .results[0].value.forked == 300' || { rec 1 | cut -c1-600; false; }
}

@test "on: an import touching 1.5 GiB is refused at launch naming memory; MemAvailable drops by at most the germline's bound" {
  limits '{"memory_mb":64,"pids":32}'
  init_release 1536 0
  call i1 noop '{}' >calls
  local base
  base=$(memavail)
  "$SYSPY" "$FIX/run/memavail.py" >"$BATS_TEST_TMPDIR/mem" &
  local sampler=$!
  echo "$sampler" >>"$PIDS"
  until [ -s "$BATS_TEST_TMPDIR/mem" ] || ! kill -0 "$sampler" 2>/dev/null; do sleep 0.01; done # sampling before the copy runs
  serve gl-run calls
  kill "$sampler"
  # as root a cgroup's OOM kill is named by the broker; as nobody RLIMIT_AS
  # fails the import with MemoryError, which the launch's error carries
  local want='germline reached its memory bound'
  [ "$(id -u)" = 0 ] || want="$want|MemoryError"
  rec 1 | jq -e --arg w "$want" '.ok == false and .error == "launch" and (.detail | test($w))' ||
    { rec 1 | cut -c1-800; false; }
  local low drop
  low=$(sort -n "$BATS_TEST_TMPDIR/mem" | head -1)
  drop=$(((base - low) / 1024))
  echo "MemAvailable dropped by at most ${drop} MiB"
  [ "$drop" -le $((1024 + 256 + 512)) ]
  [ "$(sed -n 1p "$BATS_TEST_TMPDIR/alive")" -eq 0 ] # nothing of the release runs
}

@test "on: an import forking 300 children is refused at launch naming pids" {
  limits '{"memory_mb":64,"pids":32}'
  init_release 0 300
  call i1 noop '{}' >calls
  serve gl-run calls
  # as root a cgroup counts the refused forks (named by the broker); as
  # nobody RLIMIT_NPROC fails the release's fork, whose error the launch's
  local want='germline reached its pids bound'
  [ "$(id -u)" = 0 ] || want="$want|BlockingIOError|Resource temporarily unavailable"
  rec 1 | jq -e --arg w "$want" '.ok == false and .error == "launch" and (.detail | test($w))' ||
    { rec 1 | cut -c1-800; false; }
  [ "$(sed -n 1p "$BATS_TEST_TMPDIR/alive")" -eq 0 ]
}

# MCP discovery (lib/broker/mcp.c) forks a copy from the germline: a copy like any
# other, bounded by the copies' limits (gl_session_fork one_call)
@test "off: an MCP discovery copy forks 300 children (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  limits '{"pids":32}'
  REL=$(install_release "$FIX/releases/limits-mcp")
  call d1 echo '{"text":"hi"}' >calls
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls
  rec 1 | jq -e '.results[0].ok == true' || { rec 1 | cut -c1-600; false; }
}

@test "on: an MCP discovery copy is bounded by pids (its tool list shows a refused fork)" {
  limits '{"pids":32}'
  REL=$(install_release "$FIX/releases/limits-mcp")
  call d1 echo '{"text":"hi"}' >calls
  serve gl-run calls
  rec 1 | jq -e '.ok == false and .error == "discovery_changed" and
    (.detail | test("listed but not signed: \"bounded\""))' || { rec 1 | cut -c1-600; false; }
  [ "$(sed -n 1p "$BATS_TEST_TMPDIR/alive")" -le 1 ] # the germline at most: no copy, no child
}

# The confined baseline (--mode confined) keeps one copy for the session:
# the germline's memory, the copies' pids, no CPU-time limit
# (gl_cg_session_limits)
@test "off: the confined baseline's session process forks 300 times (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  limits '{"pids":32}'
  call b1 forks '{"tries":300}' >calls
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls --mode confined
  rec 1 | jq -e '.results[0].ok == true and .results[0].value.forked == 300' || { rec 1 | cut -c1-600; false; }
}

@test "on: the confined baseline's session process is bounded by pids" {
  limits '{"pids":32}'
  call b1 forks '{"tries":300}' >calls
  serve gl-run calls --mode confined
  rec 1 | jq -c .results
  rec 1 | jq -e '(.results[0].ok == false) or (.results[0].value.forked <= 32 and .results[0].value.failed > 0)' ||
    { rec 1 | cut -c1-600; false; }
}

# Exec copies (runtime exec, lib/runtime/exec.c): fresh verified launches, bounded
# after their launch and before the call message starts the target
# (tests/fixtures/exec/hog, a native binary compiled here)
exec_release() {
  local d=$BATS_TEST_TMPDIR/exec-hog
  cp -r "$FIX/exec/hog" "$d"
  cc -O2 -o "$d/hog" "$d/hog.c"
  REL=$(install_release "$d")
}

@test "off: an exec copy touches 1 GiB against 128 MiB and forks 300 times against 32 (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  limits '{"memory_mb":128,"pids":32}'
  exec_release
  { call x1 touch '{"mib":1024}'; call x2 forks '{"tries":300}'; } >calls
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls
  rec 1 | jq -e '.results[0].ok == true and .results[0].value.mib == 1024' || { rec 1 | cut -c1-600; false; }
  rec 2 | jq -e '.results[0].ok == true and .results[0].value.forked == 300' || { rec 2 | cut -c1-600; false; }
}

@test "on: an exec copy is stopped by memory and by pids; no process outlives the call; the next call runs" {
  limits '{"memory_mb":128,"pids":32}'
  exec_release
  { call x1 touch '{"mib":1024}'; call x2 forks '{"tries":300}'; call x3 noop '{}'; } >calls
  serve gl-run calls
  # cgroups name the bound; under RLIMIT_DATA (as nobody) the target's
  # malloc fails (it then reports what it held) and its forks get EAGAIN
  rec 1 | jq -e '(.results[0].ok == false and .results[0].error == "memory") or
    (.enforcement.limits.memory == "rlimit_data" and
     (.results[0].ok == false or .results[0].value.mib <= 128))' || { rec 1 | cut -c1-600; false; }
  rec 1 | jq -e '.enforcement.limits.memory | IN("cgroup_v1", "cgroup_v2", "rlimit_data")'
  rec 2 | jq -e '(.results[0].ok == false and .results[0].error == "pids") or
    (.enforcement.limits.pids == "rlimit_nproc" and .results[0].ok and .results[0].value.forked <= 32)' ||
    { rec 2 | cut -c1-600; false; }
  rec 3 | jq -e '.results[0].ok == true and .results[0].value == "ok"'
  # exec copies run the release directory's files: none left after each call
  [ "$(sed -n 1p "$BATS_TEST_TMPDIR/alive")" -eq 0 ]
  [ "$(sed -n 2p "$BATS_TEST_TMPDIR/alive")" -eq 0 ]
}

# gl-run --pool: the pooled copy, forked ahead of its call, is bounded
# when it is forked (gl_germline_fork), like any copy
@test "off: with --pool a pooled copy touches 1 GiB against 128 MiB (the damage)" {
  plain_pass || skip "the damage is the plain pass's (docs/testing.md); this pass runs the bound on"
  limits '{"memory_mb":128}'
  { call q1 noop '{}'; call q2 touch '{"mib":1024}'; } >calls
  GL_TEST_LIMITS_OFF=1 serve "$TGLRUN" calls --pool
  rec 2 | jq -e '.results[0].ok == true and .results[0].value.mib == 1024' || { rec 2 | cut -c1-600; false; }
}

@test "on: with --pool pooled copies are bounded: memory, then pids, then a normal call" {
  limits '{"memory_mb":128,"pids":32}'
  { call q1 noop '{}'; call q2 touch '{"mib":1024}'; call q3 forks '{"tries":300}'; call q4 noop '{}'; } >calls
  serve gl-run calls --pool
  rec 2 | jq -e '.results[0].ok == false and .results[0].error == "memory"' || { rec 2 | cut -c1-600; false; }
  rec 3 | jq -e '(.results[0].ok == false and .results[0].error == "pids") or
    (.enforcement.limits.pids == "rlimit_nproc" and .results[0].ok and .results[0].value.forked <= 32)' ||
    { rec 3 | cut -c1-600; false; }
  rec 4 | jq -e '.results[0].ok == true'
}
