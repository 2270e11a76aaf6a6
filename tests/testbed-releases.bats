#!/usr/bin/env bats
# testbed/releases (issue 6 item 2; docs/testbed.md "Releases"): the five
# tool servers as signed Python releases, 1.0.0 and the updates with hidden
# code. Every release installs through the real chain (gl-sign pack/add,
# gl-verify install) and does its advertised job under gl-run --mode sigpin,
# with 1.0.0's result for the same call; every hidden routine is shown to
# disclose a canary under sigpin and not under germline, run with its
# server's scripted session (testbed/sessions, testbed/session.py) over a
# fresh world with the real recording sinks and oracle.
#
# lane: beside — long and plain-only: tests/run.sh starts it among the first jobs when no recorded time says otherwise
# sanitizers: no — its sessions drive the same gl-plan | gl-run paths as
# tests/runtimes.bats, broker.bats and matrix.bats, which run under ASan; here
# under ASan it would only repeat them (about 4 minutes) with Python doing the work
load helpers
load fixtures/run/helpers
load fixtures/run/copies
bats_require_minimum_version 1.5.0

# The releases are assembled, signed (one key pair, one repository) and
# installed once, here, through the real chain (gl-sign pack/add, gl-verify
# install) into a template GL_HOME; every test starts from its own copy of
# that GL_HOME (its slots, scratch and state its own). $TB/sha/NAME holds
# the sha256 gl-verify install printed for NAME, $TB/sha/NAME.failed its
# output when the install failed (the first test reports it).
setup_file() {
  export TB=$BATS_FILE_TMPDIR
  export REL_DIR=$TB/releases
  "$GL_ROOT/testbed/assemble.sh" "$REL_DIR"
  mkdir -p "$TB/pub" "$TB/sha" "$TB/home"
  (
    export GL_HOME=$TB/glhome HOME=$TB/home
    unset GL_PASSPHRASE
    cd "$TB/pub"
    gl-sign keygen --no-passphrase root >/dev/null
    gl-sign keygen --no-passphrase tk >/dev/null
    gl-sign init repo --root-key root --targets-key tk >/dev/null
    gl-verify pin repo >/dev/null
    for d in "$REL_DIR"/*/; do
      d=${d%/}
      n=$(basename "$d")
      { gl-sign pack "$d" "$n.tar.gz" && gl-sign add repo --key tk "$n.tar.gz" &&
        gl-verify install repo "$n.tar.gz" | jq -er .release.sha256 >"$TB/sha/$n"; } \
        >"$TB/sha/$n.out" 2>&1 || mv "$TB/sha/$n.out" "$TB/sha/$n.failed"
    done
  )
}

teardown_file() { chmod -R u+w "$TB/glhome" 2>/dev/null || true; }

# installed DIR — the sha256 of the release tree DIR (a directory of
# $REL_DIR), installed by setup_file
installed() {
  local n
  n=$(basename "$1")
  [ -s "$TB/sha/$n" ] || { echo "$n: not installed: $(cat "$TB/sha/$n.failed" 2>/dev/null)" >&2; return 1; }
  cat "$TB/sha/$n"
}

setup() {
  gl_setup
  cp -a "$TB/glhome" "$GL_HOME"
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

VARIANTS="direct dormant evasive filesteal launder launder_text pool smuggle trigger"

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
# — one jq for the five (a jq 1.6 start costs ~45 ms of CPU; an envelope and
# an item each were eleven): byte for byte the lines envelope, salary, press
# and invoice write
docs_calls() {
  jq -cn --arg r "$1" --arg canary "$CANARY" '
    def item($n; $l; $d): {name: $n, label: $l, data: ($d | @base64)};
    def env($id; $f; $items):
      {id: $id, release: $r, function: $f, args: {}, items: $items, consumers: ["agent"]};
    item("salary.csv"; ["hr"]; "name,monthly\nalice,\($canary)") as $sal
    | item("invoice.pdf"; ["finance"]; "INVOICE 2027-001 total 1200 EUR") as $inv
    | item("press.txt"; []; "Press release\ngermline ships") as $press
    | env("c1"; "summarize"; [$sal]), env("c2"; "summarize"; [$press]), env("c3"; "ocr_pdf"; [$inv]),
      env("c4"; "ocr_annotate"; [$inv, $sal]) + {args: {invoice: "invoice.pdf"}},
      env("c5"; "ocr_pdf"; [$inv])'
}

@test "every release under testbed/releases has a valid manifest and installs through gl-sign and gl-verify" {
  n=0
  for d in "$REL_DIR"/*/; do
    d=${d%/}
    server=$(basename "$d"); server=${server%%-*}
    [ "$(jq -r .name "$d/manifest.json")" = "$server" ] || { echo "$d: name"; false; }
    [ -f "$d/$(jq -r .entry "$d/manifest.json").py" ] || { echo "$d: entry"; false; }
    sha=$(installed "$d") || { echo "$d: install failed"; false; }
    [[ "$sha" =~ ^[0-9a-f]{64}$ ]]
    # installed in this test's GL_HOME: the signed manifest is the tree's
    cmp "$d/manifest.json" "$GL_HOME/releases/$sha/manifest.json"
    n=$((n + 1))
  done
  [ "$n" -ge 57 ]
  # the nine variants that exist on every server, and the xtool pair
  for server in docs sql web lint mail; do
    for v in 1.0.0 $VARIANTS; do
      [ -d "$REL_DIR/$server-$v" ] || { echo "missing $server-$v"; false; }
    done
  done
  [ -d "$REL_DIR/sql-xtool" ] && [ -d "$REL_DIR/web-xtool" ]
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
  BASE=$(installed "$REL_DIR/docs-1.0.0")
  docs_calls "$BASE" >calls.jsonl
  rsession sigpin calls.jsonl base.jsonl
  all_ok base.jsonl
  values base.jsonl >base.values
  [ "$(sed -n 3p base.values)" = '{"invoice.pdf":"INVOICE 2027-001 total 1200 EUR"}' ]
  [ "$(jq -c '.see_also' <(sed -n 4p base.values))" = '["salary.csv"]' ]
  [ "$(sed -n 2p base.values)" = '{"press.txt":"Press release"}' ]
  for d in "$REL_DIR"/docs-*/; do
    d=${d%/}
    # docs-readpaths asks for read_paths no policy here grants: refused under
    # every mode, sigpin too (tests/adaptive.bats class 1)
    case $d in *-1.0.0 | */docs-readpaths) continue ;; esac
    v=$(basename "$d")
    SHA=$(installed "$d")
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
  SQL=$(installed "$REL_DIR/sql-1.0.0")
  WEB=$(installed "$REL_DIR/web-1.0.0")
  LINT=$(installed "$REL_DIR/lint-1.0.0")
  MAIL=$(installed "$REL_DIR/mail-1.0.0")
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
    SHA=$(installed "$REL_DIR/docs-$v")
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
  SHA=$(installed "$REL_DIR/docs-direct")
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
  SHA=$(installed "$REL_DIR/docs-launder")
  docs_calls "$SHA" >calls.jsonl
  rsession sigpin calls.jsonl out.jsonl
  [ "$(jq -s -r '.[1].results[0].value._meta' out.jsonl | base64 -d)" = "name,monthly
alice,$CANARY" ]
  rsession germline calls.jsonl out.jsonl
  all_ok out.jsonl
  [ "$(jq -s -r '.[1].results[0].value._meta' out.jsonl)" = null ]
}

@test "init_thread: runs under sigpin; germline execution refuses it (G1)" {
  SHA=$(installed "$REL_DIR/docs-init_thread")
  envelope c1 "$SHA" summarize "[$(press)]" >calls.jsonl
  rsession sigpin calls.jsonl out.jsonl
  all_ok out.jsonl
  ! rsession germline calls.jsonl out.jsonl
  grep -q "G1" out.jsonl out.jsonl.err
}

# ---- sessions over the testbed world (docs/testbed.md "Sessions") ------------

# tb_world — a fresh world and its recording sinks (one per destination and
# evil.example); the sinks' logs are emptied before each tb_run.
tb_world() {
  TBW=$BATS_TEST_TMPDIR/world
  "$SYSPY" "$GL_ROOT/testbed/world.py" --seed "tb-$RANDOM$RANDOM" --out "$TBW" >/dev/null 2>&1
  "$SYSPY" "$GL_ROOT/testbed/sinks.py" --world "$TBW" --logs "$TBW/logs" --attacker evil.example \
    --pidfile "$TBW/sinks.pid" </dev/null >/dev/null 2>&1 3>&- &
  echo $! >>"$PIDS"
  disown
  local i
  for i in $(seq 200); do [ -f "$TBW/sinks.pid" ] && break; sleep 0.05; done
  [ -f "$TBW/sinks.pid" ]
}

# tb_run MODE SESSION MAP OUT — run testbed/sessions/SESSION.json (or the
# file SESSION, if it holds a slash) with the
# releases of MAP ({server: sha}) under gl-run --mode MODE; OUT gets the
# records, OUT.summary the runner's summary, OUT.oracle the oracle's verdict.
tb_run() {
  local f
  for f in "$TBW"/logs/*.jsonl; do : >"$f"; done
  : >"$4.fwd"
  echo "$3" >"$4.map"
  local session=$2
  [[ $session == */* ]] || session=$GL_ROOT/testbed/sessions/$session.json
  "$SYSPY" "$GL_ROOT/testbed/session.py" --world "$TBW" --policy "$TBW/policy.json" \
    --session "$session" --releases "$4.map" --mode "$1" \
    --out "$4" --forwarded "$4.fwd" >"$4.summary" 2>"$4.err" 3>&- || true
  "$SYSPY" "$GL_ROOT/testbed/oracle.py" --world "$TBW" --logs "$TBW/logs" \
    --agent-forwarded "$4.fwd" >"$4.oracle"
  tb_facts "$4"
}

# tb_facts OUT — what the checks below read of a run, by one jq (a jq 1.6
# start costs ~45 ms of CPU; there were four a run): OUT.f.ok (every step ok),
# OUT.f.disclosures (the oracle's count), OUT.f.triggers (the records'
# triggers), OUT.f.values (the agent's values, one JSON line each). A file jq
# cannot read leaves them empty: steps_ok then fails and prints the run.
tb_facts() {
  local f
  for f in ok disclosures triggers values; do : >"$1.f.$f"; done
  jq -n -c --slurpfile s "$1.summary" --slurpfile o "$1.oracle" --slurpfile r "$1" '
    ($s[0] | .steps > 0 and .ok == .steps), $o[0].count, ($r | [.[].triggers[]?] | length),
    ($r[] | .results[] | select(.consumer == "agent") | .value)' >"$1.facts" 2>"$1.facts.err" || return 0
  { read -r f && echo "$f" >"$1.f.ok" && read -r f && echo "$f" >"$1.f.disclosures" &&
    read -r f && echo "$f" >"$1.f.triggers" && cat >"$1.f.values"; } <"$1.facts"
}

# every step of the session returned a value to the agent
steps_ok() {
  [ "$(cat "$1.f.ok")" = true ] ||
    { cat "$1.summary" "$1.err" "$1.facts.err"; jq -c 'select(.ok != true or ([.results[] | .ok] | all | not))' "$1"; false; }
}
disclosures() { cat "$1.f.disclosures"; }
triggers() { cat "$1.f.triggers"; }
agent_values() { cat "$1.f.values"; }

# variants_check SERVER VARIANT… — 1.0.0's session under sigpin and germline
# (every step ok, the same values, no tool disclosure); then, per variant:
# under sigpin every step ok with 1.0.0's values (launder's "_meta" and
# launder_text's zero-width characters removed) and more disclosures than
# 1.0.0 (the hidden routine's); under germline every step ok and none (and
# for smuggle and evasive a tripwire trigger; none for 1.0.0).
# $BASE_CHECK, if set, runs right after 1.0.0's sigpin run (its sink logs).
variants_check() {
  local server=$1 v sha base n0
  shift
  tb_world
  base=$(installed "$REL_DIR/$server-1.0.0")
  tb_run sigpin "$server" "{\"$server\":\"$base\"}" base
  steps_ok base
  agent_values base >base.values
  [ "$(jq .tool base.oracle)" = 0 ]
  n0=$(disclosures base)
  [ -z "${BASE_CHECK:-}" ] || "$BASE_CHECK"
  tb_run germline "$server" "{\"$server\":\"$base\"}" gbase
  steps_ok gbase
  [ "$(disclosures gbase)" = 0 ]
  [ "$(triggers gbase)" = 0 ] || { echo "$server 1.0.0: a trigger in a benign run"; false; }
  agent_values gbase | diff base.values - || { echo "$server 1.0.0: germline values differ"; false; }
  for v in "$@"; do
    sha=$(installed "$REL_DIR/$server-$v")
    tb_run sigpin "$server" "{\"$server\":\"$sha\"}" out
    steps_ok out || { echo "$server-$v: a step failed under sigpin"; false; }
    case $v in
      launder) agent_values out | jq -c 'if type == "object" then del(._meta) else . end' ;;
      launder_text) agent_values out | sed 's/\xe2\x80\x8b//g; s/\xe2\x80\x8c//g; s/\\u200[bc]//g' ;;
      *) agent_values out ;;
    esac >out.values
    diff base.values out.values || { echo "$server-$v: values differ from 1.0.0's"; false; }
    [ "$(disclosures out)" -gt "$n0" ] || { echo "$server-$v: no disclosure under sigpin"; cat out.oracle; false; }
    tb_run germline "$server" "{\"$server\":\"$sha\"}" gout
    steps_ok gout || { echo "$server-$v: a step failed under germline"; false; }
    [ "$(disclosures gout)" = 0 ] || { echo "$server-$v: disclosed under germline"; cat gout.oracle; false; }
    # the within-call variants put unseen items into a compared request: the tripwire fires
    case $v in smuggle | evasive) [ "$(triggers gout)" -gt 0 ] || { echo "$server-$v: no trigger"; false; } ;; esac
  done
}

canary() { jq -er --arg n "$1" '.items[] | select(.name == $n) | .canary' "$TBW/world.json"; }
sinklog() { jq -r '.body | @base64d' "$TBW/logs/$1.jsonl"; }

# What 1.0.0 adds for the sessions, checked on the base run of each server:
# sql share, web render and post_blog of an item, lint scan_secrets, mail
# read and attachments.
check_sql() {
  # q4 shares the debits as CSV with carol; the memo column stays unread
  [ "$(jq -s -c '.[3].results[0].value | [.to, .status, .columns]' base)" = '["mail-carol.example",200,["day","amount"]]' ]
  sinklog mail-carol.example | grep -q '^day,amount$'
  [ "$(jq -s -r '.[5].results[0].value.rows[0][1]' base)" = "canary $(canary Databases/hr.sqlite)" ]
}
check_web() {
  [ "$(jq -s -r '.[0].results[0].value["Documents/projx/roadmap.txt"]' base)" = \
    "<h1>Project X roadmap</h1><p>M1: prototype</p><p>$(sed -n 3p "$TBW/home/Documents/projx/roadmap.txt")</p><p>Roadmap id: $(canary Documents/projx/roadmap.txt)</p>" ]
  sinklog blog.example | grep -qF "$(head -1 "$TBW/home/Documents/public/press-release.txt")"
  ! sinklog blog.example | grep -q 'Roadmap id'
}
check_lint() {
  [ "$(jq -S -s -c '.[0].results[0].value' base)" = \
    '{".credentials/cloud.ini":["2: access_key_id","3: secret_access_key"],".ssh/id_ed25519":["1: private key"],"Code/projx/src/projx/config.py":["2: API_TOKEN"]}' ]
}
check_mail() {
  [ "$(jq -s -c '.[0].results[0].value | [.to, .subject[0:10]]' base)" = '["bob@corp.example","Review of "]' ]
  sinklog mail-carol.example | grep -q '^--attachment budget-2027.txt$'
  sinklog mail-dave.example | grep -q '^--attachment nimbus-offer.pdf$'
  ! sinklog mail-dave.example | grep -q 'Hi Alice'
}

@test "sql session: sql 1.0.0's share works; each variant does its job under sigpin and discloses a canary; none under germline" {
  BASE_CHECK=check_sql variants_check sql $VARIANTS
}

@test "web session: web 1.0.0's render and post_blog work; each variant does its job under sigpin and discloses a canary; none under germline" {
  BASE_CHECK=check_web variants_check web $VARIANTS
}

@test "lint session: lint 1.0.0's scan_secrets works; each variant does its job under sigpin and discloses a canary; none under germline" {
  BASE_CHECK=check_lint variants_check lint $VARIANTS
}

@test "mail session: mail 1.0.0's read and attach work; each variant does its job under sigpin and discloses a canary; none under germline" {
  BASE_CHECK=check_mail variants_check mail $VARIANTS
}

@test "docs session: dormant, trigger, evasive, init_read, filesteal, hijack, launder_text disclose under sigpin, not under germline" {
  variants_check docs dormant trigger evasive init_read filesteal hijack launder_text
  # the benign docs session: under sigpin the agent itself forwards d7's
  # protected (projx) summary to the blog; where labels exist it withholds it
  [ "$(jq -c '[.disclosures[] | [.sink, .item, .source]]' base.oracle)" = \
    '[["blog.example","Code/projx/src/projx/engine.py","agent"]]' ]
  [ "$(jq -c .withheld gbase.summary)" = '["d7"]' ]
}

@test "the five sessions' 33 steps with the 1.0.0 releases complete under sigifc, confined, fresh and nosplit too" {
  tb_world
  map=$(for s in docs sql web lint mail; do printf '%s\t%s\n' "$s" "$(installed "$REL_DIR/$s-1.0.0")"; done |
    jq -R -s -c 'split("\n") | map(select(length > 0) | split("\t") | {(.[0]): .[1]}) | add')
  # one agent session doing the five servers' steps in turn
  (cd "$GL_ROOT/testbed/sessions" && jq -s '{server: "all", steps: [.[].steps[]]}' \
    docs.json sql.json web.json lint.json mail.json) >all.json
  [ "$(jq '.steps | length' all.json)" = 33 ]
  for m in sigifc confined fresh nosplit; do
    tb_run "$m" "$PWD/all.json" "$map" out
    steps_ok out || { echo "$m"; false; }
    [ "$(jq .ok out.summary)" = 33 ]
    [ "$(disclosures out)" = 0 ] || { echo "$m"; cat out.oracle; false; }
    # labels exist: the agent withholds the protected engine summary (d7)
    [ "$(jq -c .withheld out.summary)" = '["d7"]' ]
  done
}

@test "xtool (V1+V3): sql's query hides the hr rows, web's post_blog ships them; either half alone sends nothing, germline neither" {
  tb_world
  SQL=$(installed "$REL_DIR/sql-1.0.0")
  WEB=$(installed "$REL_DIR/web-1.0.0")
  SQLX=$(installed "$REL_DIR/sql-xtool")
  WEBX=$(installed "$REL_DIR/web-xtool")
  tb_run sigpin xtool "{\"sql\":\"$SQLX\",\"web\":\"$WEBX\"}" out
  steps_ok out
  [ "$(jq -c '[.disclosures[] | [.sink, .item, .source]]' out.oracle)" = \
    '[["blog.example","Databases/hr.sqlite","tool"]]' ]
  # the agent saw the extra key; the web half posted 1.0.0's table too
  [ "$(jq -s -r '.[0].results[0].value | has("_cursor")' out)" = true ]
  for pair in "$SQL $WEB" "$SQLX $WEB" "$SQL $WEBX"; do
    set -- $pair
    tb_run sigpin xtool "{\"sql\":\"$1\",\"web\":\"$2\"}" half
    steps_ok half
    [ "$(disclosures half)" = 0 ] || { echo "$pair"; cat half.oracle; false; }
  done
  tb_run germline xtool "{\"sql\":\"$SQLX\",\"web\":\"$WEBX\"}" gout
  steps_ok gout
  [ "$(disclosures gout)" = 0 ]
}

