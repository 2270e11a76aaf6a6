#!/usr/bin/env bats
# testbed/releases (issue 6 item 2; docs/testbed.md "Releases"): the five
# tool servers as signed Python releases, 1.0.0 and the updates with hidden
# code. Every release installs through the real chain (gl-sign pack/add,
# gl-verify install) and does its advertised job under gl-run --mode sigpin,
# with 1.0.0's result for the same call; some hidden routines are shown to
# disclose a canary under sigpin and not under germline.
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  REL_DIR=$BATS_TEST_TMPDIR/releases
  "$GL_ROOT/testbed/assemble.sh" "$REL_DIR"
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  echo '{"clearances":{"agent":["finance","hr","projx"],"ocr.example":["finance"],"lint.example":["projx"],"mail-bob.example":["hr"]}}' >"$POLICY"
  start_sink
  # every testbed destination answers through the one echoing sink
  jq --arg a "127.0.0.1:$SINK_PORT" \
    '.routes += {"web.example":$a,"blog.example":$a,"lint.example":$a,"mail-bob.example":$a}' \
    "$POLICY" >"$POLICY.new" && mv "$POLICY.new" "$POLICY"
  CANARY="GLC-$(printf '%016x' "$RANDOM$RANDOM$RANDOM")"
}

teardown() {
  kill_started
  release_cleanup
}

# start_evil — a second sink standing for evil.example (routed in $POLICY)
start_evil() {
  EVIL_LOG=$BATS_TEST_TMPDIR/evil.log
  "$SYSPY" "$FIX/sink.py" --port-file "$BATS_TEST_TMPDIR/evil.port" --log "$EVIL_LOG" \
    </dev/null >/dev/null 2>&1 3>&- &
  echo $! >>"$PIDS"
  disown
  local i
  for i in $(seq 200); do [ -s "$BATS_TEST_TMPDIR/evil.port" ] && break; sleep 0.05; done
  jq --arg a "127.0.0.1:$(cat "$BATS_TEST_TMPDIR/evil.port")" '.routes["evil.example"] = $a' \
    "$POLICY" >"$POLICY.new"
  mv "$POLICY.new" "$POLICY"
  : >"$EVIL_LOG"
}

# rsession MODE CALLS OUT — gl-plan | gl-run --mode MODE (fresh sink logs)
rsession() {
  : >"$SINK_LOG"
  [ -n "${EVIL_LOG:-}" ] && : >"$EVIL_LOG"
  gl-plan --policy "$POLICY" --mode germline <"$2" |
    gl-run --policy "$POLICY" --mode "$1" >"$3" 2>"$3.err" 3>&- ||
    { jq -c "select(.ok != true)" "$3"; cat "$3.err"; false; }
}

all_ok() { [ "$(jq -s '[.[] | .ok and ([.results[] | .ok] | all)] | all' "$1")" = true ] || { cat "$1" "$1.err"; false; }; }

# values OUT — the agent's value of every call, one JSON line each
values() { jq -c '.results[0].value' "$1"; }

item() { jq -cn --arg n "$1" --arg d "$(b64 "$3")" --argjson l "$2" '{name:$n,label:$l,data:$d}'; }
salary() { item salary.csv '["hr"]' "name,monthly
alice,$CANARY"; }
invoice() { item invoice.pdf '["finance"]' "INVOICE 2027-001 total 1200 EUR${1:-}"; }
press() { item press.txt '[]' "Press release
germline ships"; }

# docs_calls SHA — the docs session: summarize(salary), summarize(press),
# ocr_pdf(invoice), ocr_annotate(invoice, salary), ocr_pdf(invoice)
docs_calls() {
  envelope c1 "$1" summarize "[$(salary)]"
  envelope c2 "$1" summarize "[$(press)]"
  envelope c3 "$1" ocr_pdf "[$(invoice)]"
  envelope c4 "$1" ocr_annotate "[$(invoice),$(salary)]" '{"args":{"invoice":"invoice.pdf"}}'
  envelope c5 "$1" ocr_pdf "[$(invoice)]"
}

@test "every release under testbed/releases has a valid manifest and installs through gl-sign and gl-verify" {
  n=0
  for d in "$REL_DIR"/*/; do
    d=${d%/}
    server=$(basename "$d"); server=${server%%-*}
    [ "$(jq -r .name "$d/manifest.json")" = "$server" ] || { echo "$d: name"; false; }
    [ -f "$d/$(jq -r .entry "$d/manifest.json").py" ] || { echo "$d: entry"; false; }
    sha=$(install_release "$d") || { echo "$d: install failed"; false; }
    [[ "$sha" =~ ^[0-9a-f]{64}$ ]]
    n=$((n + 1))
  done
  [ "$n" -ge 19 ]
  # dep changes only the vendored dependency
  cmp "$REL_DIR/docs-1.0.0/docs_tool.py" "$REL_DIR/docs-dep/docs_tool.py"
  ! cmp -s "$REL_DIR/docs-1.0.0/docsutil.py" "$REL_DIR/docs-dep/docsutil.py"
  # every variant marks its hidden lines
  for d in "$REL_DIR"/*/; do
    case $d in *-1.0.0/) continue ;; esac
    grep -rq '# hidden' "$d" || { echo "$d: no # hidden"; false; }
  done
}

@test "docs variants do docs 1.0.0's job under sigpin (same values, apart from launder's _meta and launder_text's zero-width characters)" {
  BASE=$(install_release "$REL_DIR/docs-1.0.0")
  docs_calls "$BASE" >calls.jsonl
  rsession sigpin calls.jsonl base.jsonl
  all_ok base.jsonl
  values base.jsonl >base.values
  [ "$(sed -n 3p base.values)" = '{"invoice.pdf":"INVOICE 2027-001 total 1200 EUR"}' ]
  [ "$(jq -c '.see_also' <(sed -n 4p base.values))" = '["salary.csv"]' ]
  [ "$(sed -n 2p base.values)" = '{"press.txt":"Press release"}' ]
  for d in "$REL_DIR"/docs-*/; do
    d=${d%/}
    case $d in *-1.0.0) continue ;; esac
    v=$(basename "$d")
    SHA=$(install_release "$d")
    docs_calls "$SHA" >calls.jsonl
    rsession sigpin calls.jsonl out.jsonl || { echo "$v failed"; false; }
    all_ok out.jsonl
    case $v in
      docs-launder) values out.jsonl | jq -c 'if type == "object" then del(._meta) else . end' >out.values ;;
      docs-launder_text) values out.jsonl | sed 's/\xe2\x80\x8b//g; s/\xe2\x80\x8c//g' >out.values ;;
      *) values out.jsonl >out.values ;;
    esac
    diff base.values out.values || { echo "$v: value differs from 1.0.0"; false; }
  done
}

@test "sql, web, lint and mail 1.0.0 do their jobs under sigpin" {
  db=$BATS_TEST_TMPDIR/hr.sqlite
  "$SYSPY" -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute("create table hr(id,name,salary,notes)"); d.execute("insert into hr values(1,?,5000,?)",("alice",sys.argv[2])); d.commit()' "$db" "$CANARY"
  dbitem=$(jq -cn --arg d "$(base64 -w0 "$db")" '{name:"hr.sqlite",label:["hr"],data:$d}')
  SQL=$(install_release "$REL_DIR/sql-1.0.0")
  WEB=$(install_release "$REL_DIR/web-1.0.0")
  LINT=$(install_release "$REL_DIR/lint-1.0.0")
  MAIL=$(install_release "$REL_DIR/mail-1.0.0")
  {
    envelope s1 "$SQL" query "[$dbitem]" '{"args":{"sql":"SELECT name, salary FROM hr"}}'
    envelope s2 "$SQL" query "[$dbitem]" '{"args":{"sql":"DELETE FROM hr"}}'
    envelope w1 "$WEB" fetch "[]" '{"args":{"url":"http://web.example/page"},"destinations":["web.example"]}'
    envelope w2 "$WEB" post_blog "[]" '{"args":{"text":"germline ships"}}'
    envelope l1 "$LINT" lint "[$(item engine.py '["projx"]' 'import os
x = 1')]"
    envelope m1 "$MAIL" send "[$(item to-bob.eml '["hr"]' 'To: bob@example

Dear Bob, the review.')]" '{"args":{"to":"bob"},"destinations":["mail-bob.example"]}'
  } >calls.jsonl
  rsession sigpin calls.jsonl out.jsonl
  [ "$(jq -s -c '[.[].results[0].ok]' out.jsonl)" = '[true,false,true,true,true,true]' ]
  [ "$(jq -s -c '.[0].results[0].value.rows' out.jsonl)" = '[["alice",5000]]' ]
  [[ "$(jq -s -r '.[1].results[0].detail' out.jsonl)" == *readonly* ]]
  [ "$(jq -s -r '.[2].results[0].value.status' out.jsonl)" = 200 ]
  [ "$(jq -s -c '.[4].results[0].value.findings' out.jsonl)" = '["import os","x = 1"]' ]
  [ "$(jq -s -c '.[5].results[0].value | [.to, .sent]' out.jsonl)" = '["bob",21]' ]
  sink_has "germline ships"
  sink_has "Dear Bob, the review."
  grep -q '"host": "mail-bob.example"' "$SINK_LOG" || grep -q '"host":"mail-bob.example"' "$SINK_LOG"
}

@test "pool, smuggle, capsule, dep: hidden code discloses the canary to ocr.example under sigpin, not under germline" {
  for v in pool smuggle capsule dep; do
    SHA=$(install_release "$REL_DIR/docs-$v")
    docs_calls "$SHA" >calls.jsonl
    rsession sigpin calls.jsonl out.jsonl
    all_ok out.jsonl
    sink_has "$CANARY" || { echo "$v: expected a disclosure under sigpin"; false; }
    rsession germline calls.jsonl out.jsonl
    all_ok out.jsonl
    sink_has "INVOICE 2027-001" || { echo "$v: no OCR request"; false; }
    ! sink_has "$CANARY" || { echo "$v: disclosed under germline"; false; }
  done
}

@test "direct: posts the canary to evil.example under sigpin; denied under germline" {
  start_evil
  SHA=$(install_release "$REL_DIR/docs-direct")
  docs_calls "$SHA" >calls.jsonl
  rsession sigpin calls.jsonl out.jsonl
  all_ok out.jsonl
  "$SYSPY" "$FIX/run/sink_grep.py" "$EVIL_LOG" "$CANARY"
  rsession germline calls.jsonl out.jsonl
  all_ok out.jsonl
  [ ! -s "$EVIL_LOG" ]
  [ "$(jq -s '[.[].denied[]? | select(.destination == "evil.example")] | length > 0' out.jsonl)" = true ]
}

@test "launder: the agent's value carries an earlier hr item under sigpin, not under germline" {
  SHA=$(install_release "$REL_DIR/docs-launder")
  docs_calls "$SHA" >calls.jsonl
  rsession sigpin calls.jsonl out.jsonl
  [ "$(jq -s -r '.[1].results[0].value._meta' out.jsonl | base64 -d)" = "name,monthly
alice,$CANARY" ]
  rsession germline calls.jsonl out.jsonl
  all_ok out.jsonl
  [ "$(jq -s -r '.[1].results[0].value._meta' out.jsonl)" = null ]
}

@test "init_thread: runs under sigpin; germline execution refuses it (G1)" {
  SHA=$(install_release "$REL_DIR/docs-init_thread")
  envelope c1 "$SHA" summarize "[$(press)]" >calls.jsonl
  rsession sigpin calls.jsonl out.jsonl
  all_ok out.jsonl
  ! rsession germline calls.jsonl out.jsonl
  grep -q "G1" out.jsonl out.jsonl.err
}
