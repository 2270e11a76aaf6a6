#!/usr/bin/env bash
# bench/plan.sh (make bench): gl-plan against `jq -c .` on the same stream.
#
# 100,000 call envelopes (1-4 labelled items, 0-3 destinations, 1-2
# consumers; the docs release of tests/fixtures/plan) go through
# `gl-plan --policy … --releases …` and through `jq -c .`, which only parses
# and prints; best wall time of 3 runs each, in this one run. The goal
# (issue 3) is a ratio of at most 2x.
set -euo pipefail
root=${GL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$root/bin:$PATH"
fix="$root/tests/fixtures/plan"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sha=$(sha256sum "$fix/manifests/docs.json" | cut -c1-64)
mkdir -p "$work/releases/$sha"
cp "$fix/manifests/docs.json" "$work/releases/$sha/manifest.json"

python3 - "$sha" > "$work/in.jsonl" <<'PY'
import json, random, sys
sha = sys.argv[1]
rng = random.Random(1)
tags = ["finance", "hr", "projx", "legal"]
hosts = ["ocr.example", "mail.example", "blog.example", "api.example"]
consumers = ["agent", "accountant", "mail.example"]
out = []
for k in range(100000):
    items = []
    for i in range(rng.randint(1, 4)):
        it = {"name": "doc%d.pdf" % i, "label": rng.sample(tags, rng.randint(0, 2))}
        if rng.random() < 0.5:
            it["path"] = "/data/doc%d.pdf" % i
        else:
            it["data"] = "aGVsbG8gd29ybGQ=" * rng.randint(1, 8)
        items.append(it)
    env = {"id": "c%d" % k, "release": sha, "args": {"lang": "en", "page": k % 7},
           "items": items, "consumers": rng.sample(consumers, rng.randint(1, 2))}
    if rng.random() < 0.5:
        env["function"] = "fetch"
        env["destinations"] = rng.sample(hosts, rng.randint(0, 3))
    else:
        env["function"] = rng.choice(["ocr_annotate", "share", "summarize"])
    out.append(json.dumps(env, separators=(",", ":")))
sys.stdout.write("\n".join(out) + "\n")
PY

best() { # best wall time of 3 runs of "$@" < in.jsonl > /dev/null
  local t b=
  for _ in 1 2 3; do
    t=$( { TIMEFORMAT=%R; time "$@" < "$work/in.jsonl" > /dev/null; } 2>&1 )
    if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
  done
  echo "$b"
}

# One checked pass first: every envelope must plan (exit 0, 100,000 lines).
n=$(gl-plan --policy "$fix/policy.json" --releases "$work/releases" < "$work/in.jsonl" | wc -l)
[ "$n" -eq 100000 ] || { echo "bench/plan.sh: $n lines out for 100000 envelopes" >&2; exit 1; }

g=$(best gl-plan --policy "$fix/policy.json" --releases "$work/releases")
j=$(best jq -c .)
awk -v g="$g" -v j="$j" 'BEGIN {
  printf "gl-plan 100k envelopes: %.2f s; jq -c . %.2f s; ratio %.2f× (goal ≤ 2×: %s)\n",
         g, j, g / j, (g / j <= 2) ? "met" : "NOT met" }'
