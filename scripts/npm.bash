# npm.bash — sourced by scripts/tufjs.sh, mcp-sdk.sh and npm-releases.sh, which
# install npm packages under build/npm once, safely when several test suites
# ask at the same time (tests/run.sh runs up to four suites at once, in the
# plain and the sanitizer passes). A CI run failed tests/tufjs.bats for want
# of this: two suites ran `npm install` into one directory at once, and one
# suite's node found modules the other's npm was rewriting.
#
#   npm_lock FILE   an exclusive flock on FILE (its folder made if missing),
#                   held on descriptor 9 until the script exits or closes 9.
#                   Callers take it before they look whether a tree is
#                   complete: a second caller waits, then finds it finished.
#   npm_install DIR PACKAGE_JSON NPM_ARGS…
#                   under that lock: install into DIR.new.PID, then rename it
#                   to DIR, so a reader never sees a half-written node_modules
#                   and a killed install leaves no DIR that looks complete.
#
# A user who may not write FILE (the unprivileged pass runs as nobody over a
# build/npm that root filled) locks it read-only, which flock allows; if FILE
# does not exist and cannot be made, no one could install there either, and
# the script goes on without the lock to find what is there (or fail).
npm_lock() {
  mkdir -p "$(dirname "$1")" 2>/dev/null
  { exec 9>>"$1"; } 2>/dev/null || { exec 9<"$1"; } 2>/dev/null || return 0
  flock 9
}

npm_install() ( # a subshell: its trap is its own
  local dir=$1 pkg=$2 stage=$1.new.$BASHPID
  shift 2
  trap 'rm -rf "$stage"' EXIT
  # under the lock no other install runs: a DIR.new.* left is a killed one's
  rm -rf "$dir".new.*
  mkdir -p "$stage"
  printf '%s\n' "$pkg" >"$stage/package.json"
  (cd "$stage" && npm install --no-audit --no-fund "$@" >&2)
  rm -rf "$dir"
  mv "$stage" "$dir"
)
