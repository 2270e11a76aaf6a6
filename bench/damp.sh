#!/usr/bin/env bash
# bench/damp.sh (make bench): gl-damp simulate against the paper's Table XV.
#
# 1. CPU time (user+sys) of Table XV's largest cell, 500 releases x 100,000
#    calls at 3% random divergence, against the goal of one CPU second.
# 2. The whole of Table XV as reproduced (seed 1) next to the paper's
#    numbers, as the markdown table kept in docs/damp.md. z is the difference
#    over its standard error (two independent estimates, pooled); the tests
#    accept |z| <= 3.
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
table="$root/tests/fixtures/damp/table15.json"

TIMEFORMAT='%U %S'
cpu=$({ time gl-damp simulate --schedule random --rate 0.03 --calls 100000 \
        --releases 500 --seed 1 > /dev/null; } 2>&1)
awk -v t="$cpu" 'BEGIN { split(t, a, " "); s = a[1] + a[2];
  printf "largest cell (random 3%%, 500 releases x 100,000 calls): %.3f s CPU, %.2fx the 1 s goal: %s\n",
         s, s / 1.0, (s < 1.0) ? "met" : "NOT met" }'

echo
echo "Table XV reproduced: gl-damp simulate --schedule S --rate P --calls N --releases R --seed 1"
echo
echo "| schedule | p | N calls | releases | paper % | gl-damp % | 1 SE % | z |"
echo "|---|---|---|---|---|---|---|---|"
jq -c '.cells[]' "$table" | while read -r cell; do
  read -r sched rate calls rel paper < <(jq -r '"\(.schedule) \(.rate) \(.calls) \(.releases) \(.percent)"' <<<"$cell")
  out=$(gl-damp simulate --schedule "$sched" --rate "$rate" --calls "$calls" --releases "$rel" --seed 1)
  jq -r --argjson paper "$paper" '
    (.probability) as $a | ($paper / 100) as $b | (($a + $b) / 2) as $p
    | ($p * (1 - $p) * 2 / .releases | sqrt) as $se
    | (if $se > 0 then (($a - $b) / $se * 100 | round / 100) else 0 end) as $z
    | "| \(.schedule) | \(.rate * 100)% | \(.calls) | \(.releases) | \($paper) | \($a * 10000 | round / 100) | \(.stderr * 10000 | round / 100) | \($z) |"' <<<"$out"
done
