# bench/lib/setup.bash — the set-up every bench/*.sh shares (sourced; not a
# bench itself: scripts/bench.sh runs bench/*.sh only).
#
#   bench_setup NAME      root (the checkout), bin/ first on PATH, a fresh
#                         $work (removed at exit) holding GL_HOME and HOME,
#                         no GL_PASSPHRASE
#   bench_publisher       in $work: keys root and tk, a repository "repo"
#                         whose root gl-verify pins
#   bench_install DIR     pack DIR, add it to the repository, install it
#                         through gl-verify: prints its sha256

bench_setup() {
  root=${GL_ROOT:-$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)}
  export PATH="$root/bin:$PATH"
  work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-$1.XXXXXX")
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  export GL_HOME="$work/home" HOME="$work"
  unset GL_PASSPHRASE
}

bench_publisher() {
  (
    cd "$work"
    gl-sign keygen --no-passphrase root >/dev/null
    gl-sign keygen --no-passphrase tk >/dev/null
    gl-sign init repo --root-key root --targets-key tk >/dev/null
    gl-verify pin repo >/dev/null
  )
}

bench_install() {
  local name
  name=$(basename "$1")-$RANDOM$RANDOM.tar.gz
  (
    cd "$work"
    gl-sign pack "$1" "$name" >/dev/null
    gl-sign add repo --key tk "$name" >/dev/null
    gl-verify install repo "$name" | jq -er .release.sha256
  )
}
