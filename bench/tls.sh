#!/usr/bin/env bash
# bench/tls.sh (make bench): an HTTPS call under germline against the same
# call unprotected, as ratios in one run (issue 32; docs/performance.md
# "HTTPS"). The release bench/releases/tls makes one GET per call to a real
# HTTPS sink on loopback (tests/fixtures/sink.py --tls, a test CA made here
# and named by the policy's ca_file), its operator token a secret the broker
# substitutes (docs/secrets.md). Measured in this run: per call, its https
# function under germline (one gl-run session of N calls), its http function
# under germline (the same call without TLS), and bench/tls/direct.py (one
# persistent unprotected process, a new verified TLS connection per call).
# The same two calls from a Node.js release (bench/releases/tls-exec, runtime
# exec): its own https:// ends at its copy's relay (docs/exec.md "HTTPS"),
# so the ratio of its https to its http call is what the relay's TLS adds.
#   GL_BENCH_TLS_CALLS (default 100), GL_BENCH_TLS_EXEC_CALLS (default 20)
set -euo pipefail
. "$(dirname "$0")/lib/setup.bash"
bench_setup tls
bench_publisher
n=${GL_BENCH_TLS_CALLS:-100}
sha=$(bench_install "$root/bench/releases/tls")
sha_exec=$(bench_install "$root/bench/releases/tls-exec")
nx=${GL_BENCH_TLS_EXEC_CALLS:-20}
cd "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -keyout ca.key -out ca.pem -subj "/CN=bench CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout api.key \
  -out api.csr -subj "/CN=api.example" 2>/dev/null
printf 'subjectAltName=DNS:api.example\n' >api.ext
openssl x509 -req -in api.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out api.pem \
  -days 2 -extfile api.ext 2>/dev/null
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
start_sink() { # NAME [--tls CERT KEY]
  local name=$1 i
  shift
  /usr/bin/python3 "$root/tests/fixtures/sink.py" --port-file "$name.port" --log /dev/null "$@" \
    </dev/null >/dev/null 2>&1 &
  pids+=($!)
  for i in $(seq 200); do [ -s "$name.port" ] && break; sleep 0.05; done
  cat "$name.port"
}
tport=$(start_sink tls --tls api.pem api.key)
pport=$(start_sink plain)
token="bench-token-$RANDOM$RANDOM"
jq -n --arg t "127.0.0.1:$tport" --arg p "127.0.0.1:$pport" --arg ca "$work/ca.pem" \
  --arg tok "$token" '{clearances:{agent:[]}, routes:{"api.example":$t, "plain.example":$p},
    ca_file:$ca, config:{"bench-tls":{secrets:{API_TOKEN:{value:$tok,to:["api.example"]}}},
                         "bench-tls-exec":{secrets:{API_TOKEN:{value:$tok,to:["api.example"]}}}}}' \
  >policy.json
calls() { # FUNCTION N [SHA]
  local i
  for i in $(seq "$2"); do
    printf '{"id":"%s-%d","release":"%s","function":"%s","args":{},"items":[],"consumers":["agent"]}\n' \
      "$1" "$i" "${3:-$sha}" "$1"
  done
}
per_call() { # FUNCTION N [SHA] -> mean ms per call of one gl-run session (after one warm-up call)
  calls "$1" 1 "${3:-}" | gl-run --policy policy.json >/dev/null
  calls "$1" "$2" "${3:-}" >calls.jsonl
  local t0 t1
  t0=$(date +%s%N)
  gl-run --policy policy.json <calls.jsonl >out.jsonl
  t1=$(date +%s%N)
  # a value with an error (the Node release's failed request) is no success
  [ "$(jq -s 'map(select(.results[0].ok and (.results[0].value | type != "object" or (has("error") | not)))) | length' \
    out.jsonl)" -eq "$2" ] ||
    { echo "bench/tls.sh: not every $1 call succeeded" >&2; head -2 out.jsonl >&2; exit 1; }
  awk -v a="$t0" -v b="$t1" -v n="$2" 'BEGIN { printf "%.3f", (b - a) / 1e6 / n }'
}
g_https=$(per_call https "$n")
g_http=$(per_call http "$n")
direct=$(/usr/bin/python3 "$root/bench/tls/direct.py" "$tport" ca.pem "$token" "$n")
x_https=$(per_call https "$nx" "$sha_exec")
x_http=$(per_call http "$nx" "$sha_exec")
echo "machine: $(nproc) CPUs, $(uname -sr); $n calls each"
printf '%-46s %10s\n' "per call (ms)" ""
printf '%-46s %10s\n' "https, unprotected (one process, new TLS)" "$direct"
printf '%-46s %10s\n' "https under germline (secret substituted)" "$g_https"
printf '%-46s %10s\n' "http under germline (same call, no TLS)" "$g_http"
printf '%-46s %10s\n' "exec (node) https under germline ($nx calls)" "$x_https"
printf '%-46s %10s\n' "exec (node) http under germline ($nx calls)" "$x_http"
awk -v g="$g_https" -v d="$direct" -v h="$g_http" -v xs="$x_https" -v xh="$x_http" 'BEGIN {
  printf "ratio germline https / unprotected https: %.1f\n", g / d
  printf "ratio germline https / germline http:     %.2f (what TLS upstream adds)\n", g / h
  printf "ratio exec https / exec http:             %.2f (what the relay'"'"'s TLS adds)\n", xs / xh }'
