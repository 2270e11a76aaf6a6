#!/usr/bin/env bats
# gl-damp: the dampening rule of Appendix B-E exactly (SPEC §8), its state
# file (atomic, locked, refused when corrupt), analyze and simulate
# (Table XV within Monte-Carlo error).
load helpers
bats_require_minimum_version 1.5.0

setup() { gl_setup; }

REF="$BATS_TEST_DIRNAME/fixtures/damp/reference.py"
A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
B=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
C=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

# Records as gl-run (SPEC §6) and gl-replay (SPEC §7) write them.
call()    { printf '{"id":"c%s","ok":true,"release":"%s","function":"f","mode":"germline","copies":1}\n' "$RANDOM" "$1"; }
refused() { printf '{"id":"c%s","ok":false,"release":"%s","error":"suppressed"}\n' "$RANDOM" "$1"; }
# (each verdict its own witness: gl-damp counts a witness once)
VN=0
verdict() { VN=$((VN + 1)); printf '{"witness":"w%s-%s%s","release":"%s","destination":"ocr.example","outcome":"item_witness","event":"%s","weight":%s,"tries":5}\n' "$VN" "$RANDOM" "$RANDOM" "$1" "$2" "${3:-250}"; }
rep()     { local n=$1; shift; for ((i = 0; i < n; i++)); do "$@"; done; }

# Compare gl-damp's output ($1) with expected records ($2), penalties to a
# relative 1e-12.
same_records() {
  $SYSPY - "$1" "$2" <<'EOF'
import json, math, sys
got = [json.loads(l) for l in open(sys.argv[1])]
want = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want), (len(got), len(want))
for i, (g, w) in enumerate(zip(got, want)):
    assert set(g) == {"release", "penalty", "suppressed"}, g
    assert g["release"] == w["release"] and g["suppressed"] == w["suppressed"], (i, g, w)
    assert math.isclose(g["penalty"], w["penalty"], rel_tol=1e-12, abs_tol=1e-300), (i, g, w)
EOF
}

# ---- analyze --------------------------------------------------------------

@test "analyze at the operating point: p* 11.0%, 9 calls, 71 calls, 18/58/never" {
  run --separate-stderr gl-damp analyze
  [ "$status" -eq 0 ]
  json '.half_life == 50 and .weight == 250 and .suppress == 2000 and .reuse == 750'
  json '(.p_star * 1000 | round) == 110'          # 11.0%
  json '.calls_to_suppress == 9 and .calls_to_recover == 71'
  json '[.trajectory[] | [.rate, .calls_to_suppress]] == [[0.5,18],[0.2,58],[0.1,null]]'
  # the formulas of Appendix B-E, evaluated here independently
  read -r pstar k n < <(awk 'BEGIN { h=50; w=250; S=2000; R=750; l=2^(-1/h);
    for (k=1; w*(1-l^k)/(1-l) < S; k++); x=h*log(S/R)/log(2);
    printf "%.15g %d %d\n", S*(1-l)/w, k, (x==int(x)) ? x : int(x)+1 }')
  [ "$(json .calls_to_suppress) $(json .calls_to_recover)" = "$k $n" ]
  awk -v a="$(json .p_star)" -v b="$pstar" 'BEGIN { exit !(a - b < 1e-12 && b - a < 1e-12) }'
  run gl-damp analyze --text
  [ "$status" -eq 0 ]
  [[ "$output" == *"p* = 11.0%"* ]]
  [[ "$output" == *"suppressed after 9 calls"* ]]
  [[ "$output" == *"recovery from S to R: 71 calls"* ]]
  [[ "$output" == *"50% -> 18 calls, 20% -> 58 calls, 10% -> never"* ]]
}

@test "analyze: the paper's other settings (h 25/100, w 125) and Fig. 5's h*w >= 50,000 boundary" {
  run --separate-stderr gl-damp analyze --half-life 25
  json '(.p_star * 100 | round) == 22 and .calls_to_suppress == 9'
  run --separate-stderr gl-damp analyze --half-life 100
  json '(.p_star * 1000 | round) == 55 and .calls_to_suppress == 9'
  run --separate-stderr gl-damp analyze --half-life 100 --weight 125
  json '.calls_to_suppress == 17'
  # Fig. 5: p* lies below 3% exactly in the cells with h*w >= 50,000.
  for h in 25 50 100 200 400; do
    for w in 100 250 500 1000; do
      run --separate-stderr gl-damp analyze --half-life $h --weight $w
      below=$(printf '%s\n' "$output" | jq '.p_star < 0.03')
      if [ $((h * w)) -ge 50000 ]; then [ "$below" = true ]; else [ "$below" = false ]; fi
    done
  done
}

@test "analyze: counts equal iterating the rule, over several parameter sets" {
  for p in "50 250 2000 750" "10 100 1000 300" "200 40 2000 1999" "7 1000 900 10"; do
    set -- $p
    run --separate-stderr gl-damp analyze --half-life $1 --weight $2 --suppress $3 --reuse $4 --rate 0.3
    [ "$status" -eq 0 ]
    want=$($SYSPY -c "
l = 2 ** (-1 / $1)
def reach(a):
    if a / (1 - l) <= $3: return None
    P, k = 0.0, 0
    while P < $3: P, k = l * P + a, k + 1
    return k
P, n = float($3), 0
while P >= $4: P, n = l * P, n + 1
import json; print(json.dumps([reach($2), n, reach(0.3 * $2)], separators=(',', ':')))")
    [ "$(json -c '[.calls_to_suppress, .calls_to_recover, .trajectory[0].calls_to_suppress]')" = "$want" ]
  done
  run --separate-stderr gl-damp analyze --weight 0
  json '.p_star == null and .calls_to_suppress == null'
}

@test "analyze at the edges of the accepted parameters: counts stay whole numbers or null" {
  for p in "--half-life 1e9 --suppress 1e12 --reuse 1e-300 --weight 1e12" \
      "--half-life 1e-300" "--half-life 1e9 --weight 1e-300" "--weight 27.54767" \
      "--suppress 3000 --reuse 750"; do
    run --separate-stderr gl-damp analyze $p --rate 1 --rate 0
    [ "$status" -eq 0 ]
    json '[.calls_to_suppress, .calls_to_recover, .trajectory[].calls_to_suppress]
          | all(. == null or (. >= 0 and . == floor and . < 9007199254740992))'
  done
  # S lambda^n < R exactly: 3000 * 2^(-100/50) = 750 is not below 750
  run --separate-stderr gl-damp analyze --suppress 3000 --reuse 750
  json '.calls_to_recover == 101'
}

@test "bash completion offers the subcommands and the schedules" {
  source "$GL_ROOT/completions/bash/gl-damp"
  COMP_WORDS=(gl-damp ""); COMP_CWORD=1; _gl_damp
  [ "${COMPREPLY[*]}" = "analyze simulate" ]
  COMP_WORDS=(gl-damp simulate --schedule ""); COMP_CWORD=3; _gl_damp
  [ "${COMPREPLY[*]}" = "random bursty" ]
  COMP_WORDS=(gl-damp --st); COMP_CWORD=1; _gl_damp
  [ "${COMPREPLY[*]}" = "--state" ]
  [ -f "$GL_ROOT/completions/zsh/_gl-damp" ]
}

# ---- the rule on a stream ---------------------------------------------------

@test "stream: penalties equal the rule computed independently (reference.py)" {
  $SYSPY - "$A" "$B" "$C" > in.jsonl <<'EOF'
import json, random, sys
rnd = random.Random(7)
events = ["unverified", "unverified", "verified_undeclared", "verified", "declared_broken"]
for i in range(400):
    r = rnd.choice(sys.argv[1:])
    if rnd.random() < 0.7:
        print(json.dumps({"id": "c%d" % i, "ok": rnd.random() < 0.8, "release": r, "mode": "germline"}))
    else:
        print(json.dumps({"witness": "w%d" % i, "release": r, "event": rnd.choice(events[:3] if rnd.random() < 0.95 else events), "weight": 1}))
EOF
  run gl-damp --state s.json < in.jsonl
  [ "$status" -eq 0 ]
  printf '%s\n' "$output" > got.jsonl
  $SYSPY "$REF" < in.jsonl > want.jsonl
  same_records got.jsonl want.jsonl
  grep -q '"suppressed":true' got.jsonl
  # the same with other parameters
  gl-damp --state s2.json --half-life 10 --weight 400 --suppress 3000 --reuse 1000 < in.jsonl > got2.jsonl
  $SYSPY "$REF" --half-life 10 --weight 400 --suppress 3000 --reuse 1000 < in.jsonl > want2.jsonl
  same_records got2.jsonl want2.jsonl
}

@test "9 consecutive unverified events suppress; 8 do not (by the closed form)" {
  rep 9 eval 'call $A; verdict $A unverified' > in.jsonl
  run --separate-stderr gl-damp --state s.json < in.jsonl
  [ "$status" -eq 0 ]
  # after k calls each followed by its event: P = w(1 - l^k)/(1 - l)
  # after k calls each followed by its event: P = w(1 - l^k)/(1 - l)
  printf '%s\n' "$output" | awk 'NR % 2 == 0' | jq -r '"\(.penalty) \(.suppressed)"' |
    awk 'BEGIN { l = 2^(-1/50) } { k = NR; want = 250*(1-l^k)/(1-l); d = $1 - want;
         if (d > 1e-9 || d < -1e-9 || $2 != ((k == 9) ? "true" : "false")) bad = 1 }
         END { exit bad || NR != 9 }'
  # a call record alone only decays: 9th call record of the stream is not yet suppressed
  [ "$(printf '%s\n' "$output" | sed -n 17p | jq .suppressed)" = false ]
}

@test "hysteresis: a verified witness suppresses at once; usable again after 71 refused calls" {
  { call $A; verdict $A verified 2000; rep 71 refused $A; } > in.jsonl
  run --separate-stderr gl-damp --state s.json < in.jsonl
  [ "$status" -eq 0 ]
  lines=$(printf '%s\n' "$output" | jq -c '[.penalty, .suppressed]')
  [ "$(echo "$lines" | sed -n 2p)" = '[2000,true]' ]        # at once
  # 70 refused calls: 2000 * 2^(-70/50) = 757.9 >= R, still suppressed
  [ "$(echo "$lines" | sed -n 72p | jq '.[1]')" = true ]
  awk -v p="$(echo "$lines" | sed -n 72p | jq '.[0]')" 'BEGIN { d = p - 2000*2^(-70/50); exit !(d < 1e-9 && d > -1e-9) }'
  # the 71st: 2000 * 2^(-71/50) = 747.5 < R = 750, usable
  [ "$(echo "$lines" | sed -n 73p | jq '.[1]')" = false ]
  # and from below: rising through [R, S) does not suppress
  { rep 7 eval 'call $B; verdict $B unverified'; } | gl-damp --state s.json | tail -1 > last.json
  jq -e '.penalty > 750 and .penalty < 2000 and .suppressed == false' last.json
}

@test "hysteresis after 9 unverified events: usable after the computed number of refused calls" {
  # P9 = 250(1-l^9)/(1-l); it stays suppressed while P9 l^n >= 750
  n=$(awk 'BEGIN { l=2^(-1/50); P=250*(1-l^9)/(1-l); for (n=0; P*l^n >= 750; n++); print n }')
  [ "$n" -eq 76 ]
  { rep 9 eval 'call $A; verdict $A unverified'; rep "$n" refused $A; } > in.jsonl
  run --separate-stderr gl-damp --state s.json < in.jsonl
  flags=$(printf '%s\n' "$output" | tail -n "$n" | jq -r .suppressed | uniq -c | awk '{print $1, $2}' | paste -sd' ')
  [ "$flags" = "$((n - 1)) true 1 false" ]
}

@test "refused calls (ok:false) advance the decay exactly like calls" {
  { verdict $A unverified; rep 5 refused $A; verdict $B unverified; rep 5 call $B; } > in.jsonl
  run --separate-stderr gl-damp --state s.json < in.jsonl
  a=$(printf '%s\n' "$output" | sed -n 6p | jq .penalty)
  b=$(printf '%s\n' "$output" | sed -n 12p | jq .penalty)
  [ "$a" = "$b" ]
  awk -v p="$a" 'BEGIN { d = p - 250*2^(-5/50); exit !(d < 1e-9 && d > -1e-9) }'
}

@test "an update (a new release hash) starts at zero; the old hash stays suppressed" {
  { call $A; verdict $A declared_broken; } | gl-damp --state s.json > /dev/null
  run --separate-stderr gl-damp --state s.json < <(call $B)
  [ "$output" = "{\"penalty\":0,\"release\":\"$B\",\"suppressed\":false}" ]
  jq -e --arg a "$A" '.releases[$a] == {"penalty":2000,"suppressed":true}' s.json
  jq -e --arg b "$B" '.releases | has($b) | not' s.json   # P = 0 and usable: not stored
}

@test "weights come from the event and gl-damp's parameters, never the record's weight field" {
  { verdict $A verified_undeclared 2000; verdict $B unverified 999999; verdict $C verified 1; } > in.jsonl
  run --separate-stderr gl-damp --state s.json < in.jsonl
  [ "$(printf '%s\n' "$output" | jq -c '[.penalty, .suppressed]' | paste -sd' ')" = '[250,false] [250,false] [2000,true]' ]
  # the big weight follows --suppress, so a verified witness suppresses at once for every S
  run --separate-stderr gl-damp --state s2.json --suppress 5000 --weight 100 < in.jsonl
  [ "$(printf '%s\n' "$output" | jq -c '[.penalty, .suppressed]' | paste -sd' ')" = '[100,false] [100,false] [5000,true]' ]
}

@test "state persists across runs, byte-identical for the same stream, default path in GL_HOME" {
  { call $A; verdict $A unverified; verdict $B verified; call $C; } > in.jsonl
  head -2 in.jsonl | gl-damp --state s.json > /dev/null
  tail -2 in.jsonl | gl-damp --state s.json > /dev/null
  gl-damp --state t.json < in.jsonl > /dev/null
  cmp s.json t.json
  jq -e 'keys == ["format","releases","version"] and .format == "germline.damp" and .version == 1' s.json
  [ "$(stat -c %a s.json)" = 600 ]
  gl-damp < in.jsonl > /dev/null
  cmp s.json "$GL_HOME/damp.json"
}

# ---- each witness once ----------------------------------------------------------

@test "each witness counts once: the same verdict 8 times adds its weight once, in one stream or across runs (off, test build: the one witness suppresses)" {
  verdict $A unverified > one.jsonl
  rep 8 cat one.jsonl > in.jsonl
  run --separate-stderr gl-damp --state s.json < in.jsonl
  [ "$status" -eq 0 ]
  [ "$(printf '%s\n' "$output" | jq -c '[.penalty, .suppressed, .repeated // false]' | sort | uniq -c | awk '{print $1, $2}' | paste -sd' ')" = \
    "1 [250,false,false] 7 [250,false,true]" ]
  # a later run on the same state: still counted
  run --separate-stderr gl-damp --state s.json < one.jsonl
  [ "$output" = "{\"penalty\":250,\"release\":\"$A\",\"repeated\":true,\"suppressed\":false}" ]
  [ "$(wc -l < s.json.counted)" -eq 1 ]
  [ "$(stat -c %a s.json.counted)" = 600 ]
  # another witness of the same release counts
  verdict $A unverified | gl-damp --state s.json | jq -e '.penalty == 500 and (has("repeated") | not)'
  # a line gl-damp cannot read, repeated, is charged once too
  { echo "{\"release\":\"$B\",\"ok\":tru"; echo "{\"release\":\"$B\",\"ok\":tru"; } |
    gl-damp --state s.json | jq -sc 'map([.error, .penalty, .repeated // false])' |
    grep -qx '\[\["bad_json",250,false\],\["bad_json",250,true\]\]'
  # off: every copy adds its weight, and the one witness suppresses (8 x 250 = S)
  [ -x "$GL_ROOT/build/testing/bin/gl-damp" ] || skip "build/testing/bin/gl-damp is not built (make units)"
  GL_TEST_DAMP_ONCE_OFF=1 "$GL_ROOT/build/testing/bin/gl-damp" --state off.json < in.jsonl | tail -1 |
    jq -e '.penalty == 2000 and .suppressed'
}

@test "a corrupt or oversized list of counted witnesses is refused (exit 2), never reset" {
  verdict $A unverified > one.jsonl
  gl-damp --state s.json < one.jsonl > /dev/null
  for bad in 'xyz' "$(head -c 64 /dev/zero | tr '\0' g)"; do
    printf '%s\n' "$bad" > s.json.counted
    run --separate-stderr gl-damp --state s.json < one.jsonl
    [ "$status" -eq 2 ]
    [[ "$stderr" == "gl-damp: "*"s.json.counted"*"refusing to reset"* ]]
    [ "$(cat s.json.counted)" = "$bad" ]
  done
  # calls need no list: they are counted whatever it holds
  call $A | gl-damp --state s.json | jq -e '.penalty < 250'
  truncate -s 2M s.json.counted
  run --separate-stderr gl-damp --state s.json < one.jsonl
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"larger than"* ]]
}

# ---- bad input --------------------------------------------------------------

@test "bad records yield error records, the stream goes on, exit 1" {
  {
    echo 'not json'
    echo '[1,2]'
    echo '{"hello":"world"}'
    echo '{"id":"c1","ok":true,"release":"ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"}'
    echo '{"id":"c2","ok":true,"release":"abc"}'
    echo '{"ok":false,"error":"bad_json","detail":"x"}'
    echo "{\"witness\":\"w\",\"release\":\"$A\",\"event\":\"exploded\"}"
    echo "{\"witness\":7,\"release\":\"$A\",\"event\":\"unverified\"}"
    echo "{\"id\":\"c3\",\"ok\":\"yes\",\"release\":\"$A\"}"
    echo "{\"release\":\"$A\",\"event\":\"unverified\"}"
    echo ''
    verdict $A unverified
  } > in.jsonl
  head -c 17000000 /dev/zero | tr '\0' x >> in.jsonl; echo >> in.jsonl
  call $A >> in.jsonl
  run --separate-stderr gl-damp --state s.json < in.jsonl
  [ "$status" -eq 1 ]
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 13 ]   # the blank line is not a record
  codes=$(printf '%s\n' "$output" | jq -r '.error // "ok"' | paste -sd' ')
  [ "$codes" = "bad_json bad_record bad_record bad_release bad_release bad_release unknown_event bad_record bad_record bad_record ok too_long ok" ]
  printf '%s\n' "$output" | sed -n 1p | jq -e '.ok == false and (.detail | test("line 1"))'
  printf '%s\n' "$output" | sed -n 7p | jq -e '.detail | test("exploded")'
  printf '%s\n' "$output" | tail -1 | jq -e '.penalty > 246 and .penalty < 247'
}

@test "a corrupt or oversized state file is refused (exit 2) and left as it was" {
  for bad in 'not json' '' '{"format":"germline.damp","releases":{},"version":2}' \
      '{"format":"germline.damp","releases":[],"version":1}' \
      '{"format":"germline.damp","releases":{"abc":{"penalty":1,"suppressed":false}},"version":1}' \
      "{\"format\":\"germline.damp\",\"releases\":{\"$A\":{\"penalty\":-1,\"suppressed\":false}},\"version\":1}" \
      "{\"format\":\"germline.damp\",\"releases\":{\"$A\":{\"penalty\":1,\"suppressed\":1}},\"version\":1}" \
      "{\"format\":\"germline.damp\",\"releases\":{\"$A\":{\"penalty\":1,\"suppressed\":true,\"x\":1}},\"version\":1}" \
      '{"format":"germline.damp","releases":{},"version":1,"extra":0}'; do
    printf '%s' "$bad" > s.json
    run --separate-stderr gl-damp --state s.json < <(call $A)
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [[ "$stderr" == "gl-damp: "*"s.json"* ]]
    [ "$(cat s.json)" = "$bad" ]
  done
  [[ "$stderr" == *"corrupt state file"*"refusing to reset"* ]]
  truncate -s 17M big.json
  run --separate-stderr gl-damp --state big.json < <(call $A)
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"larger than"* ]]
}

@test "bad parameters are usage errors (exit 2)" {
  for args in "--half-life 0" "--half-life -5" "--half-life nan" "--half-life inf" "--half-life 0x10" \
      "--weight -1" "--weight abc" "--suppress 750" "--reuse 0" "--reuse 2000" "--reuse 3000" \
      "--suppress 1e13" "--bogus" "--weight" "extra-arg" "analyze --state x" \
      "simulate --rate 0.1 --calls 10" "simulate --rate 0.1 --calls 10 --releases 10 --schedule poisson" \
      "simulate --rate 0.6 --calls 10 --releases 10 --schedule bursty" \
      "simulate --rate 1.5 --calls 10 --releases 10" "simulate --rate 0.1 --calls 0 --releases 10" \
      "simulate --rate 0.1 --calls 1.5 --releases 10" "simulate --rate 0.1 --calls 10 --releases 10 --seed -1" \
      "simulate --rate 0.1 --rate 0.2 --calls 10 --releases 10" "--text" "analyze --calls 5"; do
    run --separate-stderr gl-damp $args < /dev/null
    echo "$args -> $status $stderr"
    [ "$status" -eq 2 ]
    [[ "$stderr" == "gl-damp: "* ]]
  done
  run gl-damp --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"analyze"*"simulate"* ]]
}

# ---- crash safety and locking ------------------------------------------------

@test "SIGKILL at random moments leaves the previous or the new state (60 kills)" {
  $SYSPY - "$A" "$B" "$C" > in.jsonl <<'EOF'
import json, random, sys
rnd = random.Random(11)
for r in sys.argv[1:]:   # every release starts with an event, so each record changes the state
    print(json.dumps({"witness": "w-" + r[:4], "release": r, "event": "unverified"}))
for i in range(20000):
    r = rnd.choice(sys.argv[1:])
    if rnd.random() < 0.6:
        print(json.dumps({"id": "c%d" % i, "ok": rnd.random() < 0.7, "release": r}))
    else:
        print(json.dumps({"witness": "w%d" % i, "release": r, "event": "unverified"}))
EOF
  total=$(wc -l < in.jsonl)
  $SYSPY "$REF" --states < in.jsonl > states.jsonl
  pos=0 kills=0
  local n_kills
  n_kills=$(count 60 15) # the plain pass's count (tests/helpers.bash)
  while [ "$kills" -lt "$n_kills" ] && [ "$pos" -lt "$total" ]; do
    tail -n +$((pos + 1)) in.jsonl > part.jsonl
    # emptied here, not by the job's redirection: a kill that lands between
    # the fork and that redirection would leave the last round's lines
    : > out.jsonl
    gl-damp --state s.json < part.jsonl > out.jsonl 2>/dev/null &
    pid=$!
    # Every other kill waits until the writer has saved at least one record
    # (so the stream advances even on a slow or loaded machine, e.g. under
    # the sanitizers); the others may land before it has saved anything.
    if [ $((kills % 2)) -eq 1 ]; then
      for _ in $(seq 500); do [ -s out.jsonl ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
    fi
    sleep "0.0$((RANDOM % 2))$((RANDOM % 10))"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" || true
    kills=$((kills + 1))
    if [ -e s.json ]; then
      k=$($SYSPY "$REF" match s.json states.jsonl "$pos")   # fails on a torn or wrong file
    else
      k=0
    fi
    # every line printed was saved first; at most one saved record is unprinted
    printed=$(wc -l < out.jsonl)
    [ "$printed" -eq $((k - pos)) ] || [ "$printed" -eq $((k - pos - 1)) ] ||
      { echo "kill $kills: printed $printed, state at record $k, started at $pos"; false; }
    pos=$k
  done
  echo "kills=$kills records applied=$pos of $total"
  [ "$kills" -eq "$n_kills" ]
  [ "$pos" -gt 0 ]
  [ "$(ls s.json.tmp.* 2>/dev/null | wc -l)" -le 1 ]
  # the state equals one uninterrupted run over the same prefix
  head -n "$pos" in.jsonl | gl-damp --state whole.json > /dev/null
  cmp s.json whole.json
  gl-damp --state s.json < /dev/null    # a writer removes a killed writer's temporary file
  [ "$(ls s.json.tmp.* 2>/dev/null | wc -l)" -eq 0 ]
}

@test "two gl-damp processes on one state file serialise (no lost update)" {
  rep 300 verdict $A unverified > in1.jsonl
  rep 300 verdict $A unverified > in2.jsonl
  gl-damp --state s.json < in1.jsonl > o1.jsonl &
  p1=$!
  gl-damp --state s.json < in2.jsonl > o2.jsonl &
  p2=$!
  wait $p1
  wait $p2
  # verdicts only add, so every order gives 600 * 250 if no write is lost
  jq -e --arg a "$A" '.releases[$a].penalty == 150000' s.json
  [ -e s.json.lock ]
  sort -u <(jq .penalty o1.jsonl o2.jsonl) | wc -l | grep -qx 600
}

# ---- simulate (Table XV) -------------------------------------------------------

# within CELL... : each cell "schedule rate calls releases paper_percent";
# passes when |ours - paper| <= 3 standard errors of the difference of two
# independent estimates (pooled), docs/damp.md.
within() {
  local sched=$1 rate=$2 calls=$3 rel=$4 paper=$5
  run --separate-stderr gl-damp simulate --schedule "$sched" --rate "$rate" --calls "$calls" --releases "$rel" --seed 1
  [ "$status" -eq 0 ]
  printf '%s\n' "$output" | $SYSPY -c "
import json, math, sys
o = json.load(sys.stdin); a = o['probability']; b = $paper / 100; n = $rel
assert o['releases'] == n and o['calls'] == $calls and o['suppressed'] == round(a * n)
assert math.isclose(o['stderr'], math.sqrt(a * (1 - a) / n))
pool = (a + b) / 2; se = math.sqrt(pool * (1 - pool) * 2 / n)
print('$sched $rate $calls: %.2f%% vs paper $paper%%' % (100 * a))
assert abs(a - b) <= 3 * se, (a, b, se)"
}

@test "simulate reproduces Table XV, random schedule (3 standard errors)" {
  within random 0.03 1000 2000 0.15
  within random 0.03 10000 2000 2.4
  within random 0.03 100000 500 23.2
  within random 0.01 10000 2000 0
  within random 0.04 1000 2000 2.25
  within random 0.04 10000 2000 28.35
  within random 0.05 1000 2000 15.8
  within random 0.05 10000 2000 86.4
}

@test "simulate reproduces Table XV, bursty schedule (3 standard errors)" {
  within bursty 0.01 1000 2000 11.55
  within bursty 0.01 10000 2000 74.35
  within bursty 0.02 1000 2000 34.95
  within bursty 0.03 1000 2000 61.25
  within bursty 0.04 1000 2000 82.2
  within bursty 0.05 1000 2000 91.85
  within bursty 0.05 10000 2000 100
}

@test "simulate: seeded and deterministic; the bursty model keeps the long-run rate p" {
  a=$(gl-damp simulate --rate 0.05 --calls 1000 --releases 500 --seed 42)
  b=$(gl-damp simulate --rate 0.05 --calls 1000 --releases 500 --seed 42)
  c=$(gl-damp simulate --rate 0.05 --calls 1000 --releases 500 --seed 43)
  [ "$a" = "$b" ]
  [ "$a" != "$c" ]
  # never suppressed (S huge): the observed divergence rate must be p
  for p in 0.01 0.05 0.3; do
    run --separate-stderr gl-damp simulate --schedule bursty --rate $p --calls 200000 --releases 5 --suppress 1e12 --reuse 1
    json ".calls_simulated == 1000000 and .burst.length == 10 and .burst.rate == 0.5"
    # bursts make divergences clumpy: allow 6 binomial standard errors x sqrt(10)
    json "((.divergences / .calls_simulated) - $p | fabs) < 6 * ($p * (1 - $p) * 10 / .calls_simulated | sqrt)"
  done
  run --separate-stderr gl-damp simulate --rate 1 --calls 100 --releases 3
  json '.probability == 1 and .calls_simulated == 27'     # suppressed at the 9th call
  run --separate-stderr gl-damp simulate --rate 0 --calls 100 --releases 3
  json '.probability == 0 and .divergences == 0'
  run gl-damp simulate --rate 0.03 --calls 1000 --releases 2000 --text
  [[ "$output" == "random 3%, 1000 calls, 2000 releases, seed 1: suppressed at least once: "*"% +- "* ]]
}
