#!/usr/bin/env bash
# bench/postgres.sh (make bench): a PostgreSQL query under germline against
# the same query unprotected, as ratios in one run (docs/performance.md
# "Streams"). @modelcontextprotocol/server-postgres (scripts/npm-releases.sh),
# unmodified, runs its query tool against PostgreSQL 15 on loopback
# (tests/fixtures/pg_start.sh), reached as the stream destination
# postgres:5432 (docs/streams.md). Measured in this run, per call: one gl-run
# session of N calls (each call a fresh verified launch of the server: Node
# starts, connects and queries through the relay), bench/postgres/direct.py
# with one persistent unprotected server, and with a fresh unprotected
# server per call (what a launch per call costs without germline).
#   GL_BENCH_PG_CALLS (default 20)
set -euo pipefail
. "$(dirname "$0")/lib/setup.bash"
bench_setup postgres
[ -x /usr/lib/postgresql/15/bin/postgres ] || { echo "bench/postgres.sh: postgresql-15 is missing; skipped"; exit 0; }
command -v node >/dev/null || { echo "bench/postgres.sh: node is missing; skipped"; exit 0; }
bench_publisher
n=${GL_BENCH_PG_CALLS:-20}
GL_NPM_SERVERS=server-postgres "$root/scripts/npm-releases.sh" "$work/rel" 2>/dev/null
sha=$(bench_install "$work/rel/server-postgres")
mkdir -p "$work/pg"
port=$("$root/tests/fixtures/pg_start.sh" "$work/pg")
trap '"$root/tests/fixtures/pg_stop.sh" "$work/pg"; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
jq -n --arg a "127.0.0.1:$port" '{clearances:{agent:[]}, routes:{"postgres:5432":$a},
  config:{"server-postgres":{args:["postgresql://postgres@postgres:5432/postgres"]}}}' >policy.json
calls() { # N
  local i
  for i in $(seq "$1"); do
    jq -cn --arg r "$sha" --arg i "$i" '{id:("q" + $i),release:$r,function:"query",
      args:{sql:"SELECT name FROM staff WHERE team = '"'"'eng'"'"' ORDER BY name"},items:[],consumers:["agent"]}'
  done
}
calls 1 | gl-run --policy policy.json >/dev/null # warm-up
calls "$n" >calls.jsonl
t0=$(date +%s%N)
gl-run --policy policy.json <calls.jsonl >out.jsonl
t1=$(date +%s%N)
[ "$(jq -s 'map(select(.results[0].ok and .results[0].value.isError == false)) | length' out.jsonl)" -eq "$n" ] ||
  { echo "bench/postgres.sh: not every call succeeded" >&2; head -2 out.jsonl >&2; exit 1; }
germline=$(awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.3f", (b - a) / 1e6 / n }')
entry=(/usr/bin/node "$work/rel/server-postgres/node_modules/@modelcontextprotocol/server-postgres/dist/index.js")
url=postgresql://postgres@127.0.0.1:$port/postgres
persistent=$(/usr/bin/python3 "$root/bench/postgres/direct.py" "$url" "$n" "${entry[@]}")
fresh=$(/usr/bin/python3 "$root/bench/postgres/direct.py" "$url" "$n" --fresh "${entry[@]}")
echo "machine: $(nproc) CPUs, $(uname -sr); $n calls each"
printf '%-52s %10s\n' "per call (ms)" ""
printf '%-52s %10s\n' "query, unprotected (one persistent server)" "$persistent"
printf '%-52s %10s\n' "query, unprotected (a fresh server per call)" "$fresh"
printf '%-52s %10s\n' "query under germline (a verified launch per call)" "$germline"
awk -v g="$germline" -v p="$persistent" -v f="$fresh" 'BEGIN {
  printf "ratio germline / unprotected persistent: %.1f\n", g / p
  printf "ratio germline / unprotected fresh:      %.2f (what the sandbox and the relay add)\n", g / f }'
