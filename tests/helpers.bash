# Shared set-up for every bats suite. GL_BIN selects the build under test
# (bin/ or the sanitizer build); each test gets its own GL_HOME.
GL_ROOT=${GL_ROOT:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
GL_BIN=${GL_BIN:-$GL_ROOT/bin}
PATH="$GL_BIN:$PATH"
FIX="$GL_ROOT/tests/fixtures"
# Debian's interpreter, where python3-securesystemslib lives (a pyenv
# python3 may come first on PATH on developer machines).
SYSPY=/usr/bin/python3
# ...and the python3 of every script a test starts (sinks, fixtures, the
# testbed, `#!/usr/bin/env python3`): the interpreter gl-run's germlines use
# and make deps installs. A pyenv shim first on PATH (this machine image's)
# is a bash script that runs pyenv's own scripts before the interpreter:
# about 190 ms of CPU a start against 22 ms, some 2000 starts a make check
# (docs/testing.md "Where make check's time goes").
if [ "$(command -v python3)" != "$SYSPY" ] && [ -x "$SYSPY" ] && [ -n "${BATS_RUN_TMPDIR:-}" ]; then
  mkdir -p "$BATS_RUN_TMPDIR/syspy" && ln -sf "$SYSPY" "$BATS_RUN_TMPDIR/syspy/python3"
  PATH="$BATS_RUN_TMPDIR/syspy:$PATH"
fi

# The pass a suite runs in (tests/run.sh sets GL_TEST_LANE: plain, sanitizers
# or unprivileged; a suite run by hand is plain). docs/testing.md "Counts and
# the mechanism off in the other passes": a count (200 calls, 60 kills) and a
# mechanism-off run (the damage) are the plain pass's; the sanitizer and
# unprivileged passes run the same code paths with small counts, since what
# they add is the sanitized build and the missing privileges, not statistics.
GL_TEST_LANE=${GL_TEST_LANE:-plain}
plain_pass() { [ "$GL_TEST_LANE" = plain ]; }
# count PLAIN OTHER — PLAIN in the plain pass, OTHER in the others
count() { if plain_pass; then echo "$1"; else echo "$2"; fi; }

gl_setup() {
  export GL_HOME="$BATS_TEST_TMPDIR/glhome"
  export HOME="$BATS_TEST_TMPDIR/home"
  mkdir -p "$HOME"
  unset GL_PASSPHRASE
  cd "$BATS_TEST_TMPDIR"
}

# json FILTER — run jq on $output (the last `run`'s stdout)
json() { printf '%s\n' "$output" | jq -er "$@"; }

# kill_pids — teardown: end every process whose pid a test appended to $PIDS
# (sinks, servers it started), each by its pid with SIGTERM; none when $PIDS
# was never made.
kill_pids() {
  local p
  [ -f "${PIDS:-}" ] || return 0
  while read -r p; do [ -n "$p" ] && kill "$p" 2>/dev/null; done <"$PIDS"
  true
}
