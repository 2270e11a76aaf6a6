# npm-lock.bash — sourced by scripts/tufjs.sh, mcp-sdk.sh and npm-releases.sh.
#
#   npm_lock FILE   an exclusive flock on FILE, held on descriptor 9 until the
#                   script exits (or closes 9): several suites at once, one
#                   installs under build/npm (scripts/npm-install.sh), the
#                   others wait and find the finished tree.
# A user who may not write FILE (the unprivileged pass runs as nobody over a
# build/npm that root filled) locks it read-only, which flock allows; if FILE
# does not exist and cannot be made, no one could install there either, and
# the script goes on without the lock to find what is there (or fail).
npm_lock() {
  { exec 9>>"$1"; } 2>/dev/null || { exec 9<"$1"; } 2>/dev/null || return 0
  flock 9
}
