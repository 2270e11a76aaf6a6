#!/usr/bin/env bash
# make demo, in a scratch directory.
# Act 1, the signing chain (issue 2): a publisher generates keys, packs and
# signs a release; a host pins the publisher, installs the release, and then
# refuses a tampered archive and a rolled-back (replayed) timestamp.json.
# Act 2, the paper's running example (Fig. 2a-b, issue 4): a signed release
# whose hidden lines stash earlier inputs discloses an HR item to the OCR
# service when run as one persistent process, and not under gl-run.
# Act 3, evidence (Fig. 2c, issue 5): a release that copies a salary sheet
# into an OCR request within one call raises a trigger; gl-replay verifies an
# item witness, gl-damp suppresses the release and gl-run --damp refuses it;
# a second machine holding only the witness, the signed archive and the
# items reaches the same verdict.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PATH="$root/bin:$PATH"
work=$(mktemp -d /tmp/germline-demo.XXXXXX)
sink_pid=
cleanup() {
  [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null
  chmod -R u+w "$work" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export GL_HOME="$work/host"
cd "$work"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }

say "Publisher: keys (unencrypted for this demo; CI keeps them encrypted, see docs/signing.md)"
show gl-sign keygen --no-passphrase root
show gl-sign keygen --no-passphrase targets

say "Publisher: a TUF-style repository, a reproducible archive, a signed target"
show gl-sign init repo --root-key root --targets-key targets
show gl-sign pack "$root/tests/fixtures/releases/demo-docs" docs-1.0.0.tar.gz
show gl-sign add repo --key targets docs-1.0.0.tar.gz
cp repo/timestamp.json timestamp-v2.json

say "Host: pin the publisher's root (trust on first use), install the release"
show gl-verify pin repo
show gl-verify install repo docs-1.0.0.tar.gz | tee install.json
sha=$(tail -1 install.json | jq -r .release.sha256)
printf 'installed read-only at %s:\n' "$GL_HOME/releases/$sha"
ls -l "$GL_HOME/releases/$sha"

say "Attack 1: the archive on the mirror is swapped for a tampered one"
cp -r "$root/tests/fixtures/releases/demo-docs" evil && chmod -R u+w evil
echo 'import os  # hidden code' >> evil/docs_tool.py
gl-sign pack evil evil.tar.gz
cp evil.tar.gz repo/targets/docs-1.0.0.tar.gz
set +e
show gl-verify install repo docs-1.0.0.tar.gz; rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "demo: tampered archive was not refused" >&2; exit 1; }
echo "refused (exit $rc)"
cp docs-1.0.0.tar.gz repo/targets/docs-1.0.0.tar.gz

say "Attack 2: the mirror serves an older, validly signed timestamp.json (rollback)"
cp -r "$root/tests/fixtures/releases/demo-docs" v101 && chmod -R u+w v101
sed -i 's/"version":"1.0.0"/"version":"1.0.1"/' v101/manifest.json
gl-sign pack v101 docs-1.0.1.tar.gz >/dev/null
gl-sign add repo --key targets docs-1.0.1.tar.gz >/dev/null
gl-verify install repo docs-1.0.1.tar.gz >/dev/null
echo "host accepted targets version $(jq -r .signed.version repo/targets.json)"
cp timestamp-v2.json repo/timestamp.json
set +e
show gl-verify install repo docs-1.0.0.tar.gz; rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "demo: rollback was not refused" >&2; exit 1; }
echo "refused (exit $rc)"

say "Act 1 done: a valid release installed; a tampered archive and a rollback refused."

# ---- Act 2: the running example ---------------------------------------------
say "Act 2: a signed OCR tool with a carry-over Trojan (paper Fig. 2a), on a second host"
export GL_HOME="$work/host2"
gl-sign init repo2 --root-key root --targets-key targets >/dev/null
show gl-sign pack "$root/tests/fixtures/releases/demo-pool" pool-1.0.0.tar.gz
gl-sign add repo2 --key targets pool-1.0.0.tar.gz >/dev/null
gl-verify pin repo2 >/dev/null
pool=$(gl-verify install repo2 pool-1.0.0.tar.gz | jq -r .release.sha256)
echo "installed the signed release pool 1.0.0 ($pool)"
echo "its hidden lines (tests/fixtures/releases/demo-pool/pool_tool.py):"
grep -n '# hidden' "$root/tests/fixtures/releases/demo-pool/pool_tool.py" | sed 's/^/  /'

say "ocr.example is a real HTTP server on loopback that logs every request"
python3 "$root/tests/fixtures/sink.py" --port-file sink.port --log sink.log </dev/null >/dev/null 2>&1 &
sink_pid=$!
for _ in $(seq 200); do [ -s sink.port ] && break; sleep 0.05; done
[ -s sink.port ] || { echo "demo: the sink did not start" >&2; exit 1; }
jq -n --arg a "127.0.0.1:$(cat sink.port)" \
  '{clearances:{"ocr.example":["finance"],agent:["finance","hr"]},routes:{"ocr.example":$a}}' >policy.json
show jq -c . policy.json

canary="CANARY-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
b64() { printf '%s' "$1" | base64 -w0; }
salary=$(b64 "$(printf 'name,monthly salary\nalice,%s' "$canary")")
invoice=$(b64 "INVOICE 2027-001: 3 pallets, total 1200 EUR")
{
  jq -cn --arg r "$pool" --arg d "$salary" '{id:"c1",release:$r,function:"summarize",args:{},
    consumers:["agent"],items:[{name:"salary.csv",label:["hr"],data:$d}]}'
  jq -cn --arg r "$pool" --arg d "$invoice" '{id:"c2",release:$r,function:"ocr_pdf",args:{},
    consumers:["agent"],items:[{name:"invoice.pdf",label:["finance"],data:$d}]}'
} >calls.jsonl
echo "call 1: summarize an HR salary sheet (label hr) for the agent; it holds the canary $canary"
echo "call 2: OCR an invoice (label finance) at ocr.example, which is cleared for finance only"

disclosed() { python3 "$root/tests/fixtures/run/sink_grep.py" sink.log "$canary"; }

say "Reference: the same signed release as one persistent process (signature and pinning only)"
echo "\$ tests/fixtures/run/persistent.py --release \$GL_HOME/releases/$pool --policy policy.json <calls.jsonl"
python3 "$root/tests/fixtures/run/persistent.py" --release "$GL_HOME/releases/$pool" \
  --policy policy.json <calls.jsonl >/dev/null
echo "ocr.example received $(wc -l <sink.log) request(s); the field \"meta\" of the last one decodes to:"
tail -1 sink.log | jq -r '.body | @base64d | fromjson | .meta // "" | @base64d' | sed 's/^/  /'
if disclosed; then
  printf '\033[1;31mDISCLOSED\033[0m: the HR canary reached ocr.example\n'
else
  echo "demo: expected the persistent process to disclose the canary" >&2
  exit 1
fi

say "Germline: gl-plan | gl-run (every call in fresh copies of a data-free germline)"
: >sink.log
gl-sign keygen --no-passphrase host >/dev/null # the host key (docs/receipts.md)
mkdir -p receipts
echo '$ gl-plan --policy policy.json <calls.jsonl | gl-run --policy policy.json --receipts receipts --host-key host'
gl-plan --policy policy.json <calls.jsonl |
  gl-run --policy policy.json --receipts receipts --host-key host >results.jsonl
jq -c '{id, ok, copies, delivered, results: [.results[] | {consumer, ok, "label": .label}]}' results.jsonl
echo "ocr.example received $(wc -l <sink.log) request(s)"
if disclosed; then
  echo "demo: DISCLOSED under gl-run" >&2
  exit 1
fi
printf '\033[1;32mnot disclosed\033[0m: ocr.example never saw the HR canary\n'
# The sink answers like an OCR service that echoes what it read: the
# invoice (base64 in the request) must be in the text call 2 returned.
if ! jq -e --arg inv "$invoice" 'select(.id == "c2") | .ok and .results[0].ok
            and (.results[0].value["invoice.pdf"] | contains($inv))' results.jsonl >/dev/null; then
  echo "demo: the invoice did not get its OCR text under gl-run" >&2
  exit 1
fi
echo "and the invoice still got its OCR reply, labelled finance, for the agent:"
jq -r 'select(.id == "c2") | .results[0].value["invoice.pdf"]' results.jsonl | cut -c1-110 | sed 's/^/  /'

say "Act 2 done: signed and pinned, the release leaked across calls as one process; under germline it could not."

# ---- Act 3: evidence ---------------------------------------------------------
say "Act 3: a signed tool that mixes a salary sheet into an OCR request within one call (Fig. 2c)"
show gl-sign pack "$root/tests/fixtures/releases/demo-annotate" annotate-1.0.0.tar.gz
gl-sign add repo2 --key targets annotate-1.0.0.tar.gz >/dev/null
ann=$(gl-verify install repo2 annotate-1.0.0.tar.gz | jq -r .release.sha256)
echo "installed the signed release annotate 1.0.0 ($ann), which declares \"deterministic\": true"
echo "its hidden lines (tests/fixtures/releases/demo-annotate/annotate_tool.py):"
grep -n '# hidden' "$root/tests/fixtures/releases/demo-annotate/annotate_tool.py" | sed 's/^/  /'
mkdir items
printf 'INVOICE 2027-002: 5 pallets, total 2000 EUR' >items/invoice.pdf
printf 'name,monthly salary\nalice,%s\nbob,4100' "$canary" >items/salary.csv
ann_call() {
  jq -cn --arg id "$1" --arg r "$ann" --arg inv "$(base64 -w0 items/invoice.pdf)" \
    --arg sal "$(base64 -w0 items/salary.csv)" '{id:$id,release:$r,function:"ocr_annotate",
    args:{lang:"en"},consumers:["agent"],items:[{name:"invoice.pdf",label:["finance"],data:$inv},
    {name:"salary.csv",label:["hr"],data:$sal}]}'
}
ann_call a1 >calls3.jsonl
ann_call a2 >>calls3.jsonl
echo "calls a1, a2: ocr_annotate on an invoice (finance) and the salary sheet (hr) for the agent"

say "The pipeline: gl-plan | gl-run --damp | gl-replay | gl-damp, one call at a time"
: >sink.log
echo '$ gl-plan --policy policy.json | gl-run --policy policy.json --damp damp.json | tee results3.jsonl \'
echo '    | gl-replay --items items | tee verdicts.jsonl | gl-damp --state damp.json'
echo "(items/ holds the two documents: the operator replays at their clearance; the witness has none)"
for c in 1 2; do
  sed -n "${c}p" calls3.jsonl | gl-plan --policy policy.json |
    gl-run --policy policy.json --damp damp.json | tee -a results3.jsonl |
    gl-replay --items items | tee -a verdicts.jsonl | gl-damp --state damp.json >>penalties.jsonl || true
done
jq -c 'select(.id == "a1") | {id, ok, copies, delivered, triggers: [.triggers[] | {kind, position, destination}]}' results3.jsonl
if disclosed; then
  echo "demo: DISCLOSED under gl-run" >&2
  exit 1
fi
printf '\033[1;32mnot disclosed\033[0m: ocr.example got the invoice only; the agent'"'"'s copy, holding both, asked for more: a trigger\n'
witness=$(jq -r 'select(.id == "a1") | .triggers[0].witness // empty' results3.jsonl)
[ -n "$witness" ] && [ -f "$witness" ] || { echo "demo: no witness file for the trigger" >&2; exit 1; }
echo "witness: $witness ($(wc -c <"$witness") bytes)"
if grep -q "$canary" "$witness"; then
  echo "demo: the witness holds the salary sheet's contents" >&2
  exit 1
fi
echo "it names the items, their labels, the slot, the twin inputs, d's replies and both request digests; no contents"
jq -c 'select(.outcome) | {outcome, event, weight, tries, probe_differs, control_differs}' verdicts.jsonl | tee verdict1.json
jq -se 'length == 1 and .[0].outcome == "item_witness" and .[0].event == "verified" and .[0].weight == 2000' verdict1.json >/dev/null ||
  { echo "demo: gl-replay did not verify an item witness" >&2; exit 1; }
printf '\033[1;31mverified item witness\033[0m: with the salary sheet the release sends another request on every try (probe), without it never (control)\n'
paste -d' ' <(printf '%-38s\n' "gl-damp: a1, a call (decay):" "gl-damp: a1's verdict (+2000):" "gl-damp: a2, a refused call (decay):") \
  <(jq -r '"penalty \(.penalty | floor), suppressed \(.suppressed)"' penalties.jsonl)
jq -se 'map(select(.id == "a2")) | length == 1 and .[0].ok == false and .[0].error == "suppressed"
        and .[0].copies == null' results3.jsonl >/dev/null ||
  { echo "demo: gl-run --damp did not refuse the suppressed release" >&2; exit 1; }
echo "gl-damp suppressed the release at once (a declared-deterministic release, weight 2000);"
echo "the next call: $(jq -c 'select(.id == "a2") | {id, ok, error}' results3.jsonl), no copy ran"

say "A second machine: a fresh GL_HOME with only the witness, the signed archive and the items"
mkdir -p verifier
cp "$witness" annotate-1.0.0.tar.gz verifier/
cp -r items verifier/items
(
  cd verifier
  export GL_HOME="$work/verifier/home"
  echo "\$ find . -type f"
  find . -type f | sort | sed 's/^/  /'
  echo "\$ gl-replay --release annotate-1.0.0.tar.gz --items items $(basename "$witness")"
  gl-replay --release annotate-1.0.0.tar.gz --items items "$(basename "$witness")" >verdict2.json
) || { echo "demo: gl-replay failed on the second machine" >&2; exit 1; }
jq -c '{outcome, event, weight, tries, probe_differs, control_differs}' verifier/verdict2.json | tee verdict2.json
[ -s verdict2.json ] && cmp -s verdict1.json verdict2.json || { echo "demo: the second machine reached another verdict" >&2; exit 1; }
echo "the same verdict, from nothing but the witness, the release its hash names, and the items"

say "An auditor: the session's signed receipts, checked offline with only the host's public key"
mkdir -p auditor
cp host.pub receipts/*.json auditor/
(
  cd auditor
  export GL_HOME="$work/auditor/home"
  echo "\$ gl-verify receipt *.json --host host.pub --expect-release $pool"
  gl-verify receipt ./*.json --host host.pub --expect-release "$pool" >verified.jsonl
) || { echo "demo: a receipt of the session did not verify offline" >&2; exit 1; }
jq -c '{receipt: .receipt[0:16], state, profile, ok}' auditor/verified.jsonl
id=$(jq -r 'select(.id == "c1") | .receipts[0]' results.jsonl)
# -s: jq 1.6's -e exit status follows the last input, which may select nothing
jq -s -e --arg id "$id" 'any(.[]; .receipt == $id and .state == "fully_enforced")' \
  auditor/verified.jsonl >/dev/null ||
  { echo "demo: call c1 does not name its fully_enforced launch receipt" >&2; exit 1; }
echo "call c1 was served by launch receipt ${id:0:16}…: fully_enforced, signed by the host"

say "Done: signed and pinned, the release leaked as one process and not under germline; its within-call leak left a verified witness anyone holding the items can check."
