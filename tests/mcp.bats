#!/usr/bin/env bats
# MCP servers on the python runtime (issue 7 items 1 and 3, issue 8 item 4;
# SPEC §5, §11; paper §VI "For an MCP server…", §VII-D E7; docs/mcp.md):
# an unmodified MCP server (tests/fixtures/mcp/{notes,ocr}) imported once by
# its germline, each copy continuing its stdio loop; file items served to a
# copy from its view only; the discovery check; compatibility against the
# same server run as one persistent unprotected process.
#
# Mechanisms are switched off where the paper has a reference: --mode sigpin
# (one persistent unconfined process, no labels) must disclose what germline
# execution does not, so those tests can fail.
#
# unprivileged: yes — tests/run.sh runs this suite once more as nobody
load helpers
load fixtures/run/helpers
bats_require_minimum_version 1.5.0

setup() {
  run_setup
  PIDS=$BATS_TEST_TMPDIR/pids
  : >"$PIDS"
  D=$BATS_TEST_TMPDIR/data
  mkdir -p "$D/pub" "$D/hr"
  SALARY="SALARY-$RANDOM$RANDOM"
  OTHER="OTHER-$RANDOM$RANDOM"
  printf 'Title one\nline two\n' >"$D/pub/a.txt"
  echo "$SALARY" >"$D/hr/salary.csv"
  echo "$OTHER" >"$D/hr/other.csv"
  POLICY=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg pub "$D/pub/**" --arg hr "$D/hr/**" \
    '{clearances:{agent:["hr"],"ocr.example":[]},routes:{},labels:{($pub):[],($hr):["hr"]}}' >"$POLICY"
  CLIENT=$FIX/mcp/client.py
}

teardown() { kill_pids; release_cleanup; }


# mcp_call REL FUNCTION ARGS_JSON [gl-run flags…] — one JSON Lines call through gl-plan | gl-run
mcp_call() {
  local rel=$1 fn=$2 args=$3
  shift 3
  jq -cn --arg r "$rel" --arg f "$fn" --argjson a "$args" \
    '{id:"c1",release:$r,function:$f,args:$a,items:[],consumers:["agent"]}' >"$BATS_TEST_TMPDIR/env.jsonl"
  run --separate-stderr bash -c 'gl-plan --policy "$1" <"$2" | gl-run --policy "$1" "${@:3}"' _ \
    "$POLICY" "$BATS_TEST_TMPDIR/env.jsonl" "$@"
}

@test "mcp-stdio: an unmodified server answers tools/call from a copy, its label from the file's glob" {
  REL=$(install_release "$FIX/mcp/notes")
  mcp_call "$REL" word_count '{"text":"one two three"}'
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e '.ok and .copies == 1 and .results[0].ok
    and .results[0].value.content[0].text == "3 words, 1 lines, 13 characters"
    and .results[0].label == [] and .enforcement.seccomp == "enforced"'
  mcp_call "$REL" read_note "$(jq -cn --arg p "$D/hr/salary.csv" '{path:$p}')"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e --arg s "$SALARY" '.results[0].value.structuredContent.title == $s
    and .results[0].label == ["hr"]'
  # A path no glob labels is refused before anything runs.
  mcp_call "$REL" read_note '{"path":"/etc/hostname"}'
  [ "$status" -eq 1 ]
  echo "$output" | jq -e '.ok == false and .error == "unlabelled_path"'
}

@test "mcp-stdio: the server is imported once, in the germline; every copy continues from that state" {
  # A variant of notes whose import draws a random token and whose tool
  # `bump` increments a module counter: every call (a fresh copy) sees the
  # germline's token and counter 0 → 1; one persistent process (sigpin)
  # keeps counting.
  mkdir -p "$BATS_TEST_TMPDIR/rel"
  cp -r "$FIX/mcp/notes" "$BATS_TEST_TMPDIR/rel/token"
  cat "$FIX/mcp/bump_tail.py" >>"$BATS_TEST_TMPDIR/rel/token/notes_server.py"
  jq '.functions.bump = {"destinations":[]}' "$FIX/mcp/notes/manifest.json" \
    >"$BATS_TEST_TMPDIR/rel/token/manifest.json"
  REL=$(install_release "$BATS_TEST_TMPDIR/rel/token")
  printf '%s\n' '{"name":"bump","arguments":{}}' '{"name":"bump","arguments":{}}' \
    '{"name":"bump","arguments":{}}' >"$BATS_TEST_TMPDIR/c.jsonl"
  run "$SYSPY" "$CLIENT" -- gl-run --serve-mcp --release "$REL" --policy "$POLICY" <"$BATS_TEST_TMPDIR/c.jsonl"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  echo "$output" | jq -se 'map(.result.structuredContent) | (map(.count) == [1,1,1])
    and (map(.token) | unique | length == 1)'
  # Mechanism off: one persistent process keeps its memory across calls.
  run "$SYSPY" "$CLIENT" -- gl-run --serve-mcp --release "$REL" --policy "$POLICY" --mode sigpin <"$BATS_TEST_TMPDIR/c.jsonl"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  echo "$output" | jq -se 'map(.result.structuredContent.count) == [1,2,3]'
  # Without a main(): the copy runs the module as __main__ (runpy), so its
  # top-level code runs again in each copy, before the call message (the
  # pre-call phase, docs/mcp.md), under the twin inputs the germline drew:
  # the same token in every copy, and the counter again starts from 0.
  cp -r "$BATS_TEST_TMPDIR/rel/token" "$BATS_TEST_TMPDIR/rel/nomain"
  # (the __main__ guard moves to the end, after the appended tool)
  sed -i 's/^def main():/def serve():/; /^if __name__ == "__main__":$/d; /^    main()$/d' \
    "$BATS_TEST_TMPDIR/rel/nomain/notes_server.py"
  printf '\nif __name__ == "__main__":\n    serve()\n' >>"$BATS_TEST_TMPDIR/rel/nomain/notes_server.py"
  ! grep -q 'def main' "$BATS_TEST_TMPDIR/rel/nomain/notes_server.py"
  REL=$(install_release "$BATS_TEST_TMPDIR/rel/nomain")
  run "$SYSPY" "$CLIENT" -- gl-run --serve-mcp --release "$REL" --policy "$POLICY" <"$BATS_TEST_TMPDIR/c.jsonl"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  echo "$output" | jq -se 'map(.result.structuredContent) | (map(.count) == [1,1,1])
    and (map(.token) | unique | length == 1)'
}

@test "file items: a copy reads exactly its view's files (sigpin, no views: it reads them all)" {
  sink ocr.example
  mkdir -p "$BATS_TEST_TMPDIR/rel"
  cp -r "$FIX/mcp/ocr-hostile" "$BATS_TEST_TMPDIR/rel/"
  # Hidden code also tries a user file that no call ever names.
  echo "$D/hr/other.csv" >"$BATS_TEST_TMPDIR/rel/ocr-hostile/targets.txt"
  REL=$(install_release "$BATS_TEST_TMPDIR/rel/ocr-hostile")
  args=$(jq -cn --arg p "$D/pub/a.txt" --arg r "$D/hr/salary.csv" '{path:$p,ref:$r}')
  # Mechanism off: one persistent unconfined process holding every item.
  mcp_call "$REL" ocr_pair "$args" --mode sigpin
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  run bodies ocr.example
  [[ "$output" == *"$SALARY"* ]] || { echo "sigpin did not disclose: $output"; false; }
  [[ "$output" == *"$OTHER"* ]]
  # Germline: the ocr.example copy holds a.txt only; salary.csv (an item of
  # the call, cleared for the agent) and other.csv (no item) are unreadable.
  : >"$BATS_TEST_TMPDIR/ocr.example.log"
  mcp_call "$REL" ocr_pair "$args"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  echo "$output" | jq -e '.ok and .copies == 2 and .delivered == [{"destination":"ocr.example","requests":1}]
    and (.triggers | length) == 1 and .results[0].label == ["hr"]'
  run bodies ocr.example
  [[ "$output" == *"Title one"* ]]
  [[ "$output" != *"$SALARY"* && "$output" != *"$OTHER"* ]] || { echo "disclosed: $output"; false; }
}

@test "file items: open, os.open and pathlib of an item outside the view raise PermissionError; other files are absent" {
  # A probe server (a copy of notes with one extra tool) reports what each
  # way of reading a path does in a copy.
  mkdir -p "$BATS_TEST_TMPDIR/rel"
  cp -r "$FIX/mcp/notes" "$BATS_TEST_TMPDIR/rel/probe"
  cat >>"$BATS_TEST_TMPDIR/rel/probe/notes_server.py" <<'PY'


def _probe(a):
    import os, pathlib
    out = {}
    for p in a["paths"] + a.get("extra", []):
        r = []
        for how in ("open", "os.open", "pathlib"):
            try:
                if how == "open":
                    with open(p) as f:
                        r.append(f.read().strip())
                elif how == "os.open":
                    fd = os.open(p, os.O_RDONLY)
                    r.append(os.read(fd, 100).decode().strip())
                    os.close(fd)
                else:
                    r.append(pathlib.Path(p).read_text().strip())
            except OSError as e:
                r.append("%s:%d" % (type(e).__name__, e.errno))
        if p in a["paths"]:  # items only: never truncate a user's file
            try:
                open(p, "w")
                r.append("writable")
            except OSError as e:
                r.append("%s:%d" % (type(e).__name__, e.errno))
        out[p] = r
    return out


HANDLERS["probe"] = _probe
TOOLS.append({"name": "probe", "inputSchema": {"type": "object"}})
PY
  jq '.functions.probe = {"destinations":["ocr.example"],"items_from_args":["paths"]}' \
    "$BATS_TEST_TMPDIR/rel/probe/manifest.json" >"$BATS_TEST_TMPDIR/m" &&
    mv "$BATS_TEST_TMPDIR/m" "$BATS_TEST_TMPDIR/rel/probe/manifest.json"
  REL=$(install_release "$BATS_TEST_TMPDIR/rel/probe")
  args=$(jq -cn --arg a "$D/pub/a.txt" --arg s "$D/hr/salary.csv" '{paths:[$a,$s]}')
  # The agent's copy (view: both files) answers the consumer.
  mcp_call "$REL" probe "$args"
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  v=$(echo "$output" | jq -c '.results[0].value.structuredContent')
  echo "$v" | jq -e --arg a "$D/pub/a.txt" --arg s "$D/hr/salary.csv" --arg S "$SALARY" \
    '.[$a] == ["Title one\nline two","Title one\nline two","Title one\nline two","PermissionError:13"]
     and .[$s] == [$S,$S,$S,"PermissionError:13"]'
  # A copy whose view lacks salary.csv (a consumer cleared for public only),
  # and other.csv, a user file no argument names (not an item at all).
  jq '.clearances.pub = []' "$POLICY" >"$POLICY.new" && mv "$POLICY.new" "$POLICY"
  args=$(jq -cn --arg a "$D/pub/a.txt" --arg s "$D/hr/salary.csv" --arg o "$D/hr/other.csv" \
    '{paths:[$a,$s],extra:[$o]}')
  jq -cn --arg r "$REL" --argjson a "$args" \
    '{id:"c2",release:$r,function:"probe",args:$a,items:[],consumers:["pub"]}' >"$BATS_TEST_TMPDIR/env.jsonl"
  denied='["PermissionError:13","PermissionError:13","PermissionError:13","PermissionError:13"]'
  for mode in sigpin germline; do
    run --separate-stderr bash -c 'gl-plan --policy "$1" <"$2" | gl-run --policy "$1" --mode "$3"' _ \
      "$POLICY" "$BATS_TEST_TMPDIR/env.jsonl" "$mode"
    [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
    v=$(echo "$output" | jq -c '.results[0].value.structuredContent')
    echo "$mode: $v"
    echo "$v" | jq -e --arg a "$D/pub/a.txt" '.[$a][0] == "Title one\nline two"'
    if [ "$mode" = sigpin ]; then # mechanism off: one process, every file readable
      echo "$v" | jq -e --arg s "$D/hr/salary.csv" --arg o "$D/hr/other.csv" --arg S "$SALARY" --arg O "$OTHER" \
        '.[$s][0] == $S and .[$o][0] == $O'
    else
      echo "$output" | jq -e '.results[0].label == []'
      # an item outside the view: PermissionError (the host's shim); a user
      # file that is no item is not even in the copy's minimal root
      echo "$v" | jq -e --arg s "$D/hr/salary.csv" --arg o "$D/hr/other.csv" --argjson d "$denied" \
        '.[$s] == $d and .[$o] == ["FileNotFoundError:2","FileNotFoundError:2","FileNotFoundError:2"]'
    fi
  done
}

@test "discovery: a tool list that differs from the signed manifest refuses the release" {
  mkdir -p "$BATS_TEST_TMPDIR/rel"
  cp -r "$FIX/mcp/notes" "$BATS_TEST_TMPDIR/rel/changed"
  # Signed: slugify is gone and a tool the server never lists is declared.
  jq 'del(.functions.slugify) | .functions.translate = {"destinations":[]}' \
    "$FIX/mcp/notes/manifest.json" >"$BATS_TEST_TMPDIR/rel/changed/manifest.json"
  REL=$(install_release "$BATS_TEST_TMPDIR/rel/changed")
  mcp_call "$REL" word_count '{"text":"a"}'
  [ "$status" -eq 1 ]
  echo "$output" | jq -e '.ok == false and .error == "discovery_changed"
    and (.detail | test("discovery changed after signing"))
    and (.detail | test("listed but not signed: \"slugify\""))
    and (.detail | test("signed but not listed: \"translate\""))'
  # The same through --serve-mcp: tools/list and tools/call are MCP errors.
  printf '%s\n' '{"name":"word_count","arguments":{"text":"a"}}' >"$BATS_TEST_TMPDIR/c.jsonl"
  # (stderr apart: the refusal is also a gl-run line there, docs/mcp.md)
  run --separate-stderr "$SYSPY" "$CLIENT" -- gl-run --serve-mcp --release "$REL" --policy "$POLICY" <"$BATS_TEST_TMPDIR/c.jsonl"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"gl-run: tools/call word_count: refused: discovery_changed"* ]]
  echo "$output" | jq -e '.error.code == -32000 and .error.data.error == "discovery_changed"'
  # Mechanism off (the honest manifest): the same server runs.
  REL=$(install_release "$FIX/mcp/notes")
  mcp_call "$REL" word_count '{"text":"a"}'
  [ "$status" -eq 0 ]
}

# compat KIND — E7 for one server: every tool, the same calls, once through
# gl-run --serve-mcp (germline) and once to the server itself run as one
# persistent unprotected process; outputs compared call by call.
compat() {
  local kind=$1 dir=$FIX/mcp/$1 entry rel n same
  entry=$(jq -r .entry "$dir/manifest.json")
  rel=$(install_release "$dir")
  # the plain pass runs the issue's counts; the others the same tools fewer
  # times (tests/helpers.bash count)
  "$SYSPY" "$FIX/mcp/calls.py" "$kind" "$D/pub" --cheap "$(count 200 20)" \
    --costly "$COSTLY" >"$BATS_TEST_TMPDIR/calls.jsonl"
  "$SYSPY" "$CLIENT" -- gl-run --serve-mcp --release "$rel" --policy "$POLICY" \
    <"$BATS_TEST_TMPDIR/calls.jsonl" | jq -c 'del(.result._meta)' >"$BATS_TEST_TMPDIR/germline.out"
  # The unprotected server reaches the sink as its HTTP proxy (ocr.example
  # does not resolve here); its code is unchanged.
  http_proxy="http://$(jq -r '.routes["ocr.example"] // "127.0.0.1:9"' "$POLICY")" \
    "$SYSPY" "$CLIENT" -- "$SYSPY" "$dir/$entry.py" \
    <"$BATS_TEST_TMPDIR/calls.jsonl" | jq -c . >"$BATS_TEST_TMPDIR/plain.out"
  n=$(wc -l <"$BATS_TEST_TMPDIR/calls.jsonl")
  [ "$(wc -l <"$BATS_TEST_TMPDIR/germline.out")" -eq "$n" ]
  same=$(paste -d '\t' "$BATS_TEST_TMPDIR/calls.jsonl" "$BATS_TEST_TMPDIR/germline.out" "$BATS_TEST_TMPDIR/plain.out" |
    awk -F '\t' '$2 == $3 && $2 ~ /"result"/ { split($1, a, "\""); c[a[4]]++ } END { for (t in c) printf "%s=%d ", t, c[t] }')
  echo "# E7 $kind: $n calls, identical per tool: $same" >&3
  diff "$BATS_TEST_TMPDIR/germline.out" "$BATS_TEST_TMPDIR/plain.out" | head -5
  cmp -s "$BATS_TEST_TMPDIR/germline.out" "$BATS_TEST_TMPDIR/plain.out"
}

COSTLY=$(count 30 5)

@test "E7: every notes tool, 200 calls each, same output under germline as unprotected" {
  compat notes
}

@test "E7: every ocr tool (200 calls; ocr 30 over real HTTP), same output under germline as unprotected" {
  sink ocr.example
  compat ocr
  # Each ocr call was delivered once, by its one copy.
  [ "$(wc -l <"$BATS_TEST_TMPDIR/ocr.example.log")" -eq $((2 * COSTLY)) ]
}
