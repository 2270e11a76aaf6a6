#!/usr/bin/env bash
# bench/replay.sh — verifying one witness (run by `make bench`; issue 5).
#
# In one run on the same machine, with the within-call mixing release
# tests/fixtures/releases/demo-annotate (the demo's act 3) installed from a signed
# archive and ocr.example a real HTTP sink on loopback:
#   gl-replay --tries 5 WITNESS   one witness: a germline launch, the probe
#                                 and the control 5 times each (10 copies)
#   gl-run, 10 calls              one session of 10 single-copy calls of the
#                                 same release (a germline launch, 10 copies,
#                                 10 requests delivered)
# Each timing is the best of $GL_BENCH_RUNS runs (default 3). Printed: both
# times, their ratio, and the witness size in bytes, without and with item
# contents (gl-run --witness-items). The paper reports 0.35 s per witness and
# 7,450 bytes; those are printed beside ours for reference, not as goals.
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
runs=${GL_BENCH_RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/gl-bench-replay.XXXXXX")
sink_pid=
cleanup() {
  [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null
  chmod -R u+w "$work" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
export GL_HOME="$work/home"

now() { date +%s.%N; }
# best_of CMD... — the fastest wall-clock time of $runs runs, in seconds
best_of() {
  local best="" t0 t1 d i
  for ((i = 0; i < runs; i++)); do
    t0=$(now)
    "$@" >/dev/null
    t1=$(now)
    d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
    if [ -z "$best" ] || awk -v d="$d" -v b="$best" 'BEGIN { exit !(d < b) }'; then best=$d; fi
  done
  printf '%.3f' "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

gl-sign keygen --no-passphrase root >/dev/null
gl-sign keygen --no-passphrase tk >/dev/null
gl-sign init repo --root-key root --targets-key tk >/dev/null
gl-sign pack "$root/tests/fixtures/releases/demo-annotate" annotate.tar.gz >/dev/null
gl-sign add repo --key tk annotate.tar.gz >/dev/null
gl-verify pin repo >/dev/null
rel=$(gl-verify install repo annotate.tar.gz | jq -r .release.sha256)

/usr/bin/python3 "$root/tests/fixtures/sink.py" --port-file sink.port --log sink.log \
  </dev/null >/dev/null 2>&1 &
sink_pid=$!
for _ in $(seq 200); do [ -s sink.port ] && break; sleep 0.05; done
[ -s sink.port ] || { echo "bench/replay.sh: the sink did not start" >&2; exit 1; }
jq -n --arg a "127.0.0.1:$(cat sink.port)" \
  '{clearances:{"ocr.example":["finance"],agent:["finance","hr"]},routes:{"ocr.example":$a}}' >policy.json

mkdir items
printf 'INVOICE 2027-002: 5 pallets, total 2000 EUR' >items/invoice.pdf
printf 'name,monthly salary\nalice,5200\nbob,4100\n' >items/salary.csv
# envelope ID [salary] — ocr_annotate on the invoice (and the salary sheet)
envelope() {
  local items='[{name:"invoice.pdf",label:["finance"],path:($dir+"/invoice.pdf")}]'
  [ "${2:-}" = salary ] && items='[{name:"invoice.pdf",label:["finance"],path:($dir+"/invoice.pdf")},
    {name:"salary.csv",label:["hr"],path:($dir+"/salary.csv")}]'
  jq -cn --arg id "$1" --arg r "$rel" --arg dir "$work/items" \
    "{id:\$id,release:\$r,function:\"ocr_annotate\",args:{lang:\"en\"},consumers:[\"agent\"],items:$items}"
}

# one two-copy call with the salary sheet: a trigger and its witness
witness_of() {
  envelope w salary | gl-plan --policy policy.json |
    gl-run --policy policy.json "$@" | jq -er '.triggers[0].witness'
}
w_plain=$(witness_of)
w_items=$(witness_of --witness-items)
size_plain=$(stat -c %s "$w_plain")
size_items=$(stat -c %s "$w_items")

# the verdict must be what the demo shows, or the timing means nothing
gl-replay --tries 5 --items items "$w_plain" |
  jq -e '.outcome == "item_witness" and .tries == 5 and .probe_differs == 5 and .control_differs == 0' >/dev/null ||
  { echo "bench/replay.sh: the witness did not verify" >&2; exit 1; }

for i in $(seq 10); do envelope "s$i"; done | gl-plan --policy policy.json >single.jsonl
gl-run --policy policy.json <single.jsonl | jq -se 'length == 10 and all(.ok and .copies == 1)' >/dev/null ||
  { echo "bench/replay.sh: the baseline calls are not 10 single-copy calls" >&2; exit 1; }

t_replay=$(best_of gl-replay --tries 5 --items items "$w_plain")
ten_calls() { gl-run --policy policy.json <single.jsonl; }
t_calls=$(best_of ten_calls)

printf 'verify one witness (probe + control, 5 tries each): %s s\n' "$t_replay"
printf '10 single-copy gl-run calls of the same release:     %s s\n' "$t_calls"
printf 'ratio witness / 10 calls: %s   (paper: 0.35 s per witness; ours / paper: %s)\n' \
  "$(ratio "$t_replay" "$t_calls")" "$(ratio "$t_replay" 0.35)"
printf 'witness size: %s bytes, %s bytes with item contents   (paper: 7,450 bytes; ours / paper: %s)\n' \
  "$size_plain" "$size_items" "$(ratio "$size_plain" 7450)"
