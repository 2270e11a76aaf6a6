# Shared set-up for every bats suite. GL_BIN selects the build under test
# (bin/ or the sanitizer build); each test gets its own GL_HOME.
GL_ROOT=${GL_ROOT:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
GL_BIN=${GL_BIN:-$GL_ROOT/bin}
PATH="$GL_BIN:$PATH"
FIX="$GL_ROOT/tests/fixtures"
# Debian's interpreter, where python3-securesystemslib lives (a pyenv
# python3 may come first on PATH on developer machines).
SYSPY=/usr/bin/python3

gl_setup() {
  export GL_HOME="$BATS_TEST_TMPDIR/glhome"
  export HOME="$BATS_TEST_TMPDIR/home"
  mkdir -p "$HOME"
  unset GL_PASSPHRASE
  cd "$BATS_TEST_TMPDIR"
}

# json FILTER — run jq on $output (the last `run`'s stdout)
json() { printf '%s\n' "$output" | jq -er "$@"; }
