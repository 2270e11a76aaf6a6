#!/usr/bin/env bash
# bench/install-http.sh — installing a release over HTTP (issue 16; run by
# `make bench`).
#
# The release: @modelcontextprotocol/server-filesystem with its whole
# node_modules (scripts/npm-releases.sh; about 40 MB, thousands of files),
# packed and signed by gl-sign, the repository served on loopback by
# tests/fixtures/tuf/serve.py. In one run, on the same server and page cache:
#   gl-verify install URL FILE   the TUF client workflow over HTTP (timestamp,
#                                snapshot, targets, the target's length and
#                                hashes), the private copy, safe extraction,
#                                the manifest, the record
#   curl + sha256sum + tar -x    the same download, hashing and extraction by
#                                the standard tools, no signature at all
# Each timing is the best of $GL_BENCH_RUNS runs (default 3); the figure is
# the ratio of the two.
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
runs=${GL_BENCH_RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-http.XXXXXX")
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  chmod -R u+w "$work" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

now() { date +%s.%N; }
best_of() { # best_of CMD... — the fastest of $runs runs (seconds); reset before each
  local best="" t0 t1 d i
  for ((i = 0; i < runs; i++)); do
    reset
    t0=$(now)
    "$@" >/dev/null
    t1=$(now)
    d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
    if [ -z "$best" ] || awk -v d="$d" -v b="$best" 'BEGIN { exit !(d < b) }'; then best=$d; fi
  done
  printf '%.3f' "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

GL_NPM_SERVERS=server-filesystem "$root/scripts/npm-releases.sh" "$work/npm" >/dev/null
rel=$work/npm/server-filesystem
files=$(find "$rel" -type f | wc -l)
gl-sign keygen --no-passphrase root >/dev/null
gl-sign keygen --no-passphrase ci >/dev/null
gl-sign init repo --root-key root --targets-key ci >/dev/null
gl-sign pack "$rel" fs.tar.gz >/dev/null
gl-sign add repo --key ci fs.tar.gz >/dev/null
bytes=$(stat -c %s fs.tar.gz)
unpacked=$(du -sb "$rel" | cut -f1)

/usr/bin/python3 "$root/tests/fixtures/tuf/serve.py" --dir repo --port-file port \
  >/dev/null 2>server.err &
server=$!
for ((i = 0; i < 100; i++)); do [ -s port ] && break; sleep 0.1; done
[ -s port ] || { cat server.err >&2; exit 1; }
url=http://127.0.0.1:$(cat port)

export GL_HOME=$work/home
gl-verify pin "$url" >/dev/null
reset() {
  chmod -R u+w "$GL_HOME/releases" out 2>/dev/null || true
  rm -rf "$GL_HOME/releases" out fs.dl
}
gl-verify install "$url" fs.tar.gz >/dev/null # warm the server and the page cache
t_gl=$(best_of gl-verify install "$url" fs.tar.gz)
baseline() {
  curl -sSf -o fs.dl "$url/targets/fs.tar.gz" && sha256sum fs.dl >/dev/null &&
    mkdir out && tar -xzf fs.dl -C out
}
t_std=$(best_of baseline)

printf 'release: server-filesystem + node_modules, %d files, %d MB unpacked, %d MB archive\n' \
  "$files" $((unpacked >> 20)) $((bytes >> 20))
printf 'gl-verify install over HTTP: %ss; curl + sha256sum + tar -x: %ss; ratio %s\n' \
  "$t_gl" "$t_std" "$(ratio "$t_gl" "$t_std")"
