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
# a second machine holding only what docs/witness.md "Verifying on a second
# machine" lists — the witness, the slot snapshots it names, the signed
# archive and the items — reaches the same verdict.
#
# Every step that fails stops the demo with "demo: …" on stderr, after the
# failing command's own stderr (and its stdout when that is a record the
# demo would otherwise keep in a file). Exit 0 only when every act did what
# it says.
#
# Environment:
#   GL_BIN=DIR      the gl-* commands to run (default: the checkout's bin/;
#                   tests/demo.bats also runs build/asan/bin)
#   GL_DEMO_DIR=DIR work in DIR (created; must not exist or be empty) and keep
#                   it afterwards (default: a mktemp -d under TMPDIR, removed)
# GL_HOME is never the caller's: each machine of the demo gets a fresh one
# under the work directory.
set -Eeuo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
GL_BIN=${GL_BIN:-$root/bin}
die() {
  printf 'demo: %s\n' "$*" >&2
  exit 1
}
# Any other command that fails stops the demo too (set -e); say which.
# (Reported once, by the script's own shell: set -E runs the trap in
# functions, and in subshells too, which stay quiet.)
on_err() { # on_err STATUS LINE; in a function (show), the line that called it
  local line=$2
  [ "$BASH_SUBSHELL" -eq 0 ] || return 0
  [ "${#FUNCNAME[@]}" -le 2 ] || line=${BASH_LINENO[${#BASH_LINENO[@]} - 2]}
  printf 'demo: stopped: %s line %s exited %s: %s\n' "${self#"$root"/}" "$line" "$1" \
    "$(sed -n "$line{s/^ *//;p}" "$self")" >&2
}
trap 'on_err $? $LINENO' ERR
for c in gl-sign gl-verify gl-plan gl-run gl-replay gl-damp; do
  [ -x "$GL_BIN/$c" ] || die "$GL_BIN/$c is missing: build first (make build), or set GL_BIN"
done
PATH="$GL_BIN:$PATH"
if [ -n "${GL_DEMO_DIR:-}" ]; then
  mkdir -p "$GL_DEMO_DIR"
  [ -z "$(ls -A "$GL_DEMO_DIR")" ] || die "GL_DEMO_DIR=$GL_DEMO_DIR is not empty"
  work=$(cd "$GL_DEMO_DIR" && pwd)
  keep=1
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/germline-demo.XXXXXX")
  keep=0
fi
sink_pid=
cleanup() {
  trap - ERR
  if [ -n "$sink_pid" ]; then kill "$sink_pid" 2>/dev/null || true; fi
  if [ "$keep" = 0 ]; then
    chmod -R u+w "$work" 2>/dev/null || true
    rm -rf "$work"
  fi
}
trap cleanup EXIT
export GL_HOME="$work/host"
cd "$work"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }
# quiet CMD... — CMD with its stdout kept in a file; when CMD fails, that
# output (its error record) is shown and the demo stops
quiet() {
  local rc=0
  "$@" >"$work/quiet.out" || rc=$?
  if [ "$rc" -ne 0 ]; then
    cat "$work/quiet.out" >&2
    die "$* failed (exit $rc)"
  fi
}

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
sha=$(tail -1 install.json | jq -er .release.sha256)
printf 'installed read-only at %s:\n' "$GL_HOME/releases/$sha"
ls -l "$GL_HOME/releases/$sha"

say "Attack 1: the archive on the mirror is swapped for a tampered one"
cp -r "$root/tests/fixtures/releases/demo-docs" evil && chmod -R u+w evil
echo 'import os  # hidden code' >> evil/docs_tool.py
quiet gl-sign pack evil evil.tar.gz
cp evil.tar.gz repo/targets/docs-1.0.0.tar.gz
rc=0
show gl-verify install repo docs-1.0.0.tar.gz || rc=$?
[ "$rc" -eq 1 ] || die "the tampered archive was not refused with exit 1 (gl-verify exited $rc)"
echo "refused (exit $rc)"
cp docs-1.0.0.tar.gz repo/targets/docs-1.0.0.tar.gz

say "Attack 2: the mirror serves an older, validly signed timestamp.json (rollback)"
cp -r "$root/tests/fixtures/releases/demo-docs" v101 && chmod -R u+w v101
sed -i 's/"version":"1.0.0"/"version":"1.0.1"/' v101/manifest.json
quiet gl-sign pack v101 docs-1.0.1.tar.gz
quiet gl-sign add repo --key targets docs-1.0.1.tar.gz
quiet gl-verify install repo docs-1.0.1.tar.gz
echo "host accepted targets version $(jq -er .signed.version repo/targets.json)"
cp timestamp-v2.json repo/timestamp.json
rc=0
show gl-verify install repo docs-1.0.0.tar.gz || rc=$?
[ "$rc" -eq 1 ] || die "the rollback was not refused with exit 1 (gl-verify exited $rc)"
echo "refused (exit $rc)"

say "Act 1 done: a valid release installed; a tampered archive and a rollback refused."

# ---- Act 2: the running example ---------------------------------------------
say "Act 2: a signed OCR tool with a carry-over Trojan (paper Fig. 2a), on a second host"
export GL_HOME="$work/host2"
quiet gl-sign init repo2 --root-key root --targets-key targets
show gl-sign pack "$root/tests/fixtures/releases/demo-pool" pool-1.0.0.tar.gz
quiet gl-sign add repo2 --key targets pool-1.0.0.tar.gz
quiet gl-verify pin repo2
quiet gl-verify install repo2 pool-1.0.0.tar.gz
pool=$(jq -er .release.sha256 "$work/quiet.out")
echo "installed the signed release pool 1.0.0 ($pool)"
echo "its hidden lines (tests/fixtures/releases/demo-pool/pool_tool.py):"
grep -n '# hidden' "$root/tests/fixtures/releases/demo-pool/pool_tool.py" | sed 's/^/  /'

say "ocr.example is a real HTTP server on loopback that logs every request"
python3 "$root/tests/fixtures/sink.py" --port-file sink.port --log sink.log </dev/null >sink.err 2>&1 &
sink_pid=$!
for _ in $(seq 200); do [ -s sink.port ] && break; sleep 0.05; done
[ -s sink.port ] || { cat sink.err >&2; die "the sink (ocr.example) did not start"; }
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

# disclosed — did a request the sink logged carry the canary? (0 yes, 1 no;
# anything else — the sink gone, its log unreadable, sink_grep.py failing,
# which exits 1 too with a traceback — stops the demo: never "not disclosed")
disclosed() {
  local rc=0
  kill -0 "$sink_pid" 2>/dev/null || { cat sink.err >&2; die "the sink (ocr.example) is no longer running"; }
  [ -f sink.log ] || die "the sink wrote no log"
  python3 "$root/tests/fixtures/run/sink_grep.py" sink.log "$canary" 2>sink_grep.err || rc=$?
  cat sink_grep.err >&2
  if [ "$rc" -gt 1 ] || { [ "$rc" -eq 1 ] && [ -s sink_grep.err ]; }; then
    die "sink_grep.py could not read the sink's log (exit $rc)"
  fi
  return "$rc"
}

say "Reference: the same signed release as one persistent process (signature and pinning only)"
echo "\$ tests/fixtures/run/persistent.py --release \$GL_HOME/releases/$pool --policy policy.json <calls.jsonl"
python3 "$root/tests/fixtures/run/persistent.py" --release "$GL_HOME/releases/$pool" \
  --policy policy.json <calls.jsonl >persistent.jsonl
echo "ocr.example received $(wc -l <sink.log) request(s); the field \"meta\" of the last one decodes to:"
tail -1 sink.log | jq -r '.body | @base64d | fromjson | .meta // "" | @base64d' | sed 's/^/  /'
if disclosed; then
  printf '\033[1;31mDISCLOSED\033[0m: the HR canary reached ocr.example\n'
else
  die "expected the persistent process to disclose the canary"
fi

say "Germline: gl-plan | gl-run (every call in fresh copies of a data-free germline)"
: >sink.log
quiet gl-sign keygen --no-passphrase host # the host key (docs/receipts.md)
mkdir -p receipts
echo '$ gl-plan --policy policy.json <calls.jsonl | gl-run --policy policy.json --receipts receipts --host-key host'
gl-plan --policy policy.json <calls.jsonl |
  gl-run --policy policy.json --receipts receipts --host-key host >results.jsonl
jq -c '{id, ok, copies, delivered, results: [.results[] | {consumer, ok, "label": .label}]}' results.jsonl
echo "ocr.example received $(wc -l <sink.log) request(s)"
[ -s sink.log ] || die "ocr.example received no request under gl-run (the invoice's OCR request is missing)"
if disclosed; then
  die "DISCLOSED under gl-run"
fi
printf '\033[1;32mnot disclosed\033[0m: ocr.example never saw the HR canary\n'
# The sink answers like an OCR service that echoes what it read: the
# invoice (base64 in the request) must be in the text call 2 returned.
if ! jq -e --arg inv "$invoice" 'select(.id == "c2") | .ok and .results[0].ok
            and (.results[0].value["invoice.pdf"] | contains($inv))' results.jsonl >/dev/null; then
  jq -c 'select(.id == "c2")' results.jsonl >&2
  die "the invoice did not get its OCR text under gl-run"
fi
echo "and the invoice still got its OCR reply, labelled finance, for the agent:"
jq -r 'select(.id == "c2") | .results[0].value["invoice.pdf"]' results.jsonl | cut -c1-110 | sed 's/^/  /'

say "Act 2 done: signed and pinned, the release leaked across calls as one process; under germline it could not."

# ---- Act 3: evidence ---------------------------------------------------------
say "Act 3: a signed tool that mixes a salary sheet into an OCR request within one call (Fig. 2c)"
show gl-sign pack "$root/tests/fixtures/releases/demo-annotate" annotate-1.0.0.tar.gz
quiet gl-sign add repo2 --key targets annotate-1.0.0.tar.gz
quiet gl-verify install repo2 annotate-1.0.0.tar.gz
ann=$(jq -er .release.sha256 "$work/quiet.out")
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
# Each stage's exit status is checked (SPEC §2): a1 must pass every stage
# with 0; a2, refused by gl-run --damp, makes gl-run exit 1 (a refused
# record) and every other stage 0 (the error record passes through
# gl-replay; gl-damp counts it as a call).
stages=(sed gl-plan gl-run tee gl-replay tee gl-damp)
for c in 1 2; do
  if sed -n "${c}p" calls3.jsonl | gl-plan --policy policy.json |
    gl-run --policy policy.json --damp damp.json | tee -a results3.jsonl |
    gl-replay --items items | tee -a verdicts.jsonl | gl-damp --state damp.json >>penalties.jsonl; then
    st=(0 0 0 0 0 0 0)
  else
    st=("${PIPESTATUS[@]}")
  fi
  want=(0 0 0 0 0 0 0)
  if [ "$c" = 2 ]; then want=(0 0 1 0 0 0 0); fi
  for n in "${!stages[@]}"; do
    if [ "${st[n]}" != "${want[n]}" ]; then
      tail -n 1 results3.jsonl verdicts.jsonl penalties.jsonl >&2
      die "call a$c: ${stages[n]} exited ${st[n]}, not ${want[n]} (its stderr, if any, is above; the last records of each stage too)"
    fi
  done
done
jq -c 'select(.id == "a1") | {id, ok, copies, delivered, triggers: [.triggers[] | {kind, position, destination}]}' results3.jsonl
[ -s sink.log ] || die "ocr.example received no request under gl-run (the invoice's OCR request is missing)"
if disclosed; then
  die "DISCLOSED under gl-run"
fi
printf '\033[1;32mnot disclosed\033[0m: ocr.example got the invoice only; the agent'"'"'s copy, holding both, asked for more: a trigger\n'
witness=$(jq -r 'select(.id == "a1") | .triggers[0].witness // empty' results3.jsonl)
if [ -z "$witness" ] || [ ! -f "$witness" ]; then
  jq -c 'select(.id == "a1") | .triggers' results3.jsonl >&2
  die "no witness file for the trigger"
fi
echo "witness: $witness ($(wc -c <"$witness") bytes)"
if grep -q "$canary" "$witness"; then
  die "the witness holds the salary sheet's contents"
fi
echo "it names the items, their labels, the slot snapshots, the twin inputs, d's replies and both request digests; no contents"
jq -c 'select(.outcome) | {outcome, event, weight, tries, probe_differs, control_differs}' verdicts.jsonl | tee verdict1.json
if ! jq -se 'length == 1 and .[0].outcome == "item_witness" and .[0].event == "verified" and .[0].weight == 2000' verdict1.json >/dev/null; then
  cat verdicts.jsonl >&2
  die "gl-replay did not verify an item witness"
fi
printf '\033[1;31mverified item witness\033[0m: with the salary sheet the release sends another request on every try (probe), without it never (control)\n'
# penalties.jsonl: a1's call (decay), a1's verdict (+2000), a2's refused call (decay)
if ! jq -se 'length == 3 and all(.[]; .release != null and (.penalty | type) == "number")
             and (.[0].suppressed | not) and .[1].suppressed and .[2].suppressed' penalties.jsonl >/dev/null; then
  cat penalties.jsonl >&2
  die "gl-damp did not write the three records expected (a1's call, a1's verdict suppressing, a2's call)"
fi
printf '%-38s\n' "gl-damp: a1, a call (decay):" "gl-damp: a1's verdict (+2000):" "gl-damp: a2, a refused call (decay):" >damp-labels.txt
jq -r '"penalty \(.penalty | floor), suppressed \(.suppressed)"' penalties.jsonl >damp-values.txt
paste -d' ' damp-labels.txt damp-values.txt
if ! jq -se 'map(select(.id == "a2")) | length == 1 and .[0].ok == false and .[0].error == "suppressed"
        and .[0].copies == null' results3.jsonl >/dev/null; then
  jq -c 'select(.id == "a2")' results3.jsonl >&2
  die "gl-run --damp did not refuse the suppressed release"
fi
echo "gl-damp suppressed the release at once (a declared-deterministic release, weight 2000);"
echo "the next call: $(jq -c 'select(.id == "a2") | {id, ok, error}' results3.jsonl), no copy ran"

say "A second machine: a fresh GL_HOME with only the witness file, the signed archive and the items"
# What docs/witness.md "Verifying on a second machine" lists: the witness
# file (it carries the slot snapshots it names), the signed release
# archive, the items' contents (the witness holds none).
mkdir -p verifier
jq -e '.version >= 5 and (.snapshots | length) >= 1' "$witness" >/dev/null ||
  die "the witness carries no slot snapshots (version $(jq -r .version "$witness"); expected 5)"
cp "$witness" annotate-1.0.0.tar.gz verifier/
cp -r items verifier/items
# and the producing host's public witness key, which the verifier obtains
# from the host's operator and chooses to trust (docs/witness.md "Who made
# a witness"); gl-run recorded it in its GL_HOME/keys/trusted/
producer=$(jq -er .producer.keyid "$witness") || die "the witness names no producer (unsigned)"
cp "$GL_HOME/keys/trusted/$producer.pub" verifier/host-witness.pub
export GL_HOME="$work/verifier-home"
[ ! -e "$GL_HOME" ] || die "the second machine's GL_HOME $GL_HOME is not fresh"
cd verifier
echo "GL_HOME=$GL_HOME (fresh: no pinned publisher, no release, no witness store)"
echo "\$ find . -type f"
find . -type f | sort | sed 's/^/  /'
wname=$(basename "$witness")
# nobody vouches for a witness by default: not replayed, weight 0
rc=0
gl-replay --release annotate-1.0.0.tar.gz --items items "$wname" >untrusted.json || rc=$?
jq -e '.trusted == false and .weight == 0' untrusted.json >/dev/null ||
  die "a witness of an untrusted producer was counted: $(cat untrusted.json)"
echo "without --trust: $(jq -c '{error, trusted, weight}' untrusted.json) (a forger's witness gets no further)"
echo "\$ gl-replay --trust host-witness.pub --release annotate-1.0.0.tar.gz --items items $wname"
rc=0
gl-replay --trust host-witness.pub --release annotate-1.0.0.tar.gz --items items "$wname" >verdict2.json || rc=$?
if [ "$rc" -ne 0 ]; then
  cat verdict2.json >&2
  die "gl-replay failed on the second machine (exit $rc); its record is above"
fi
cd "$work"
jq -c '{outcome, event, weight, tries, probe_differs, control_differs}' verifier/verdict2.json
# the whole records, field for field (release, witness, destination, counts)
jq -cS 'select(.outcome)' verdicts.jsonl >verdict1.full.json
jq -cS . verifier/verdict2.json >verdict2.full.json
if ! [ -s verdict2.full.json ] || ! cmp -s verdict1.full.json verdict2.full.json; then
  printf 'first machine:  %s\nsecond machine: %s\n' "$(cat verdict1.full.json)" "$(cat verdict2.full.json)" >&2
  die "the second machine reached another verdict"
fi
echo "the same verdict, from nothing but the witness, its slot snapshots, the release its hash names, the items and the producer's public key"

say "An auditor: the session's signed receipts, checked offline with only the host's public key"
mkdir -p auditor
cp host.pub receipts/*.json auditor/
export GL_HOME="$work/auditor-home"
cd auditor
echo "\$ gl-verify receipt *.json --host host.pub --expect-release $pool"
rc=0
gl-verify receipt ./*.json --host host.pub --expect-release "$pool" >verified.jsonl || rc=$?
if [ "$rc" -ne 0 ]; then
  cat verified.jsonl >&2
  die "a receipt of the session did not verify offline (gl-verify exited $rc; its records are above)"
fi
cd "$work"
jq -c '{receipt: .receipt[0:16], state, profile, ok}' auditor/verified.jsonl
id=$(jq -r 'select(.id == "c1") | .receipts[0] // empty' results.jsonl)
[ -n "$id" ] || die "call c1's result record names no receipt"
# -s: jq 1.6's -e exit status follows the last input, which may select nothing
if ! jq -s -e --arg id "$id" 'any(.[]; .receipt == $id and .state == "fully_enforced")' \
  auditor/verified.jsonl >/dev/null; then
  die "call c1 does not name its fully_enforced launch receipt"
fi
echo "call c1 was served by launch receipt ${id:0:16}…: fully_enforced, signed by the host"

say "Done: signed and pinned, the release leaked as one process and not under germline; its within-call leak left a verified witness anyone holding the items can check."
[ "$keep" = 0 ] || echo "(the demo's files are kept in $work)"
