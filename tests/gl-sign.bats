#!/usr/bin/env bats
# gl-sign keygen|init|pack|add|rotate (SPEC §3): key files, passphrases,
# process hardening, repository metadata, and gl-sign's own refusals.
bats_require_minimum_version 1.5.0
load helpers
load fixtures/sign/helpers

setup() { gl_setup; }

teardown() {
  # processes started by a test, stopped by their id
  for p in ${KILL_PIDS:-}; do kill "$p" 2>/dev/null || true; done
  [ -z "${NOBODY_DIR:-}" ] || rm -rf "$NOBODY_DIR"
}

# ---- keys ---------------------------------------------------------------------

@test "keygen --no-passphrase: .key mode 0600, canonical .pub, keyid = SHA-256 of .pub" {
  run --separate-stderr gl-sign keygen --no-passphrase ci
  [ "$status" -eq 0 ]
  [ "$(json .keyid)" = "$(sha ci.pub)" ]
  [ "$(json .encrypted)" = false ]
  [ "$(stat -c %a ci.key)" = 600 ]
  [ "$(jq -cS . ci.pub | tr -d '\n')" = "$(cat ci.pub)" ]
  [ "$(jq -r '.keyval.public' ci.pub)" = "$(jq -r '.keyval.public' ci.key)" ]
  [[ "$(jq -r '.keyval.private' ci.key)" =~ ^[0-9a-f]{64}$ ]]
  [ "$(jq -r '[.keytype,.scheme]|join(" ")' ci.key)" = "ed25519 ed25519" ]
}

@test "a plain key's seed: hex of either case decodes (sodium_hex2bin); a bad digit or length is refused" {
  gl-sign keygen --no-passphrase k >/dev/null
  gl-sign keygen --no-passphrase t >/dev/null
  cp k.key k.orig
  seed=$(jq -r .keyval.private k.orig)
  setseed() { jq -cS --arg s "$1" '.keyval.private = $s' k.orig | tr -d '\n' >k.key; }
  setseed "${seed^^}"
  run --separate-stderr gl-sign init r1 --root-key k --targets-key t
  [ "$status" -eq 0 ]
  [ "$(jq -r '.signed.roles.root.keyids[0]' r1/root.json)" = "$(sha k.pub)" ]
  for bad in "g${seed:1}" "${seed:0:63}" "${seed}00" "${seed:0:62} 0"; do
    setseed "$bad"
    run --separate-stderr gl-sign init r2 --root-key k --targets-key t
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"k.key: malformed keyval.private"* ]]
    [[ "$stderr$output" != *"${seed:8:32}"* ]]
    [ ! -e r2/root.json ]
  done
}

@test "keygen never overwrites a key without --force" {
  gl-sign keygen --no-passphrase k >/dev/null
  cp k.key before
  run --separate-stderr gl-sign keygen --no-passphrase k
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"k.key exists (use --force to replace it)"* ]]
  cmp before k.key
  run --separate-stderr gl-sign keygen --no-passphrase k.pub
  [ "$status" -eq 2 ]
  run --separate-stderr gl-sign keygen --no-passphrase --force k
  [ "$status" -eq 0 ]
  ! cmp -s before k.key
  [ "$(stat -c %a k.key)" = 600 ]
}

@test "an encrypted key: argon2id + secretbox, usable with GL_PASSPHRASE" {
  GL_PASSPHRASE='correct horse' run --separate-stderr gl-sign keygen enc
  [ "$status" -eq 0 ]
  [ "$(json .encrypted)" = true ]
  [ "$(jq -r '.keyval | keys | join(",")' enc.key)" = public ]
  [ "$(jq -r '.encrypted.kdf' enc.key)" = argon2id13 ]
  [ "$(jq -r '.encrypted.ciphertext | length' enc.key)" = 96 ]
  [ "$(stat -c %a enc.key)" = 600 ]
  GL_PASSPHRASE='correct horse' gl-sign init repo --root-key enc --targets-key enc >/dev/null
  pysign verify repo/root.json repo/root.json root >/dev/null
}

@test "a wrong passphrase: bad_passphrase, exit 1, no key material in any output" {
  GL_PASSPHRASE=right gl-sign keygen enc >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  GL_PASSPHRASE=right gl-sign init repo --root-key enc --targets-key tk >/dev/null
  make_release rel
  gl-sign pack rel docs.tar.gz >/dev/null
  GL_PASSPHRASE=right gl-sign keygen rk >/dev/null
  seed=$(GL_PASSPHRASE=right pysign seed enc)
  [[ "$seed" =~ ^[0-9a-f]{64}$ ]]
  ct=$(jq -r .encrypted.ciphertext enc.key)
  for cmd in "rotate repo --key enc --new-key rk" "init repo2 --root-key enc --targets-key tk"; do
    GL_PASSPHRASE=wrong run --separate-stderr gl-sign $cmd
    refused bad_passphrase
    [ "$(json .detail)" = "enc.key: wrong passphrase or damaged key file" ]
    [[ "$stderr" == *"wrong passphrase or damaged key file"* ]]
    for secret in "$seed" "$ct" right; do
      [[ "$output$stderr" != *"$secret"* ]]
    done
  done
  [ ! -e repo/2.root.json ]
  [ ! -e repo2 ]
  # a damaged ciphertext reads the same (its first byte changed, whatever
  # it was: a random key's may already be 00)
  jq -cj '.encrypted.ciphertext |= ((if .[0:2] == "00" then "ff" else "00" end) + .[2:])' \
    enc.key >d.key && cp enc.pub d.pub
  ! cmp -s enc.key d.key
  GL_PASSPHRASE=right run --separate-stderr gl-sign add repo --key d docs.tar.gz
  refused bad_passphrase
}

@test "no GL_PASSPHRASE and no terminal: exit 2 with a hint" {
  GL_PASSPHRASE=x gl-sign keygen enc >/dev/null
  run --separate-stderr setsid -w gl-sign keygen k </dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"set GL_PASSPHRASE or run on a terminal"* ]]
  [ ! -e k.key ]
  run --separate-stderr setsid -w gl-sign init repo --root-key enc --targets-key enc </dev/null
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--no-passphrase"* ]]
}

# Start `gl-sign keygen` on a pseudo-terminal (script(1)) as user $1 (or
# the current one); wait for its passphrase prompt; set SIGN_PID.
start_prompting() {
  local as=("$@") i
  mkfifo "$BATS_TEST_TMPDIR/tty.in"
  script -qfc "exec ${as[*]} $GL_BIN/gl-sign keygen waiting" /dev/null \
    <"$BATS_TEST_TMPDIR/tty.in" >"$BATS_TEST_TMPDIR/tty.out" 2>&1 &
  SCRIPT_PID=$!
  KILL_PIDS="${KILL_PIDS:-} $SCRIPT_PID"
  # (bats owns descriptor 3: let the shell pick one)
  exec {TTY_W}>"$BATS_TEST_TMPDIR/tty.in"
  for i in $(seq 600); do
    grep -q 'Passphrase for' "$BATS_TEST_TMPDIR/tty.out" 2>/dev/null && break
    sleep 0.05
  done
  grep -q 'Passphrase for' "$BATS_TEST_TMPDIR/tty.out"
  SIGN_PID=$(pgrep -P "$SCRIPT_PID")
  [ -n "$SIGN_PID" ]
  KILL_PIDS="$KILL_PIDS $SIGN_PID"
}

@test "gl-sign holding secrets: RLIMIT_CORE 0 and no core file when it crashes" {
  mkdir cores && cd cores
  ulimit -c unlimited 2>/dev/null || skip "cannot raise RLIMIT_CORE here"
  # control: the same set-up dumps core for an ordinary process
  sleep 60 &
  ctl=$!
  kill -ABRT "$ctl"
  wait "$ctl" || true
  [ -n "$(ls)" ] || skip "this machine writes no core files (core_pattern: $(cat /proc/sys/kernel/core_pattern))"
  rm -f -- *
  start_prompting
  grep -E '^Max core file size +0 +0 ' /proc/"$SIGN_PID"/limits
  kill -ABRT "$SIGN_PID"
  wait "$SCRIPT_PID" || true
  [ -z "$(ls)" ]
  exec {TTY_W}>&-
}

@test "gl-sign holding secrets is not dumpable (its /proc entry is root's)" {
  # A non-dumpable process's /proc/PID files belong to root; run gl-sign as
  # another user so that this is observable (as root: nobody).
  as=()
  if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null || skip "setpriv missing"
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    NOBODY_DIR=$(mktemp -d /tmp/gl-sign-nobody.XXXXXX)
    chmod 0777 "$NOBODY_DIR"
    cd "$NOBODY_DIR"
  fi
  me=$(${as[@]+"${as[@]}"} id -u)
  [ "$me" != 0 ]
  # control: an ordinary process of that user owns its /proc entry
  ${as[@]+"${as[@]}"} sleep 60 &
  KILL_PIDS="$!"
  for i in $(seq 200); do [ "$(stat -c %u /proc/$!/status)" = "$me" ] && break; sleep 0.05; done
  [ "$(stat -c %u /proc/$!/status)" = "$me" ]
  start_prompting ${as[@]+"${as[@]}"}
  [ "$(awk '/^Uid:/ {print $2}' /proc/"$SIGN_PID"/status)" = "$me" ]
  [ "$(stat -c %u /proc/"$SIGN_PID"/status)" = 0 ]
  exec {TTY_W}>&-
}

@test "a passphrase typed at the terminal is not echoed and encrypts the key" {
  start_prompting
  printf 'typed secret\n' >&"$TTY_W"
  for i in $(seq 600); do grep -q 'Again' "$BATS_TEST_TMPDIR/tty.out" && break; sleep 0.05; done
  printf 'typed secret\n' >&"$TTY_W"
  wait "$SCRIPT_PID"
  exec {TTY_W}>&-
  grep -q '"encrypted":true' "$BATS_TEST_TMPDIR/tty.out"
  ! grep -q 'typed secret' "$BATS_TEST_TMPDIR/tty.out"
  [ "$(GL_PASSPHRASE='typed secret' pysign seed waiting | wc -c)" = 65 ]
}

# ---- init, add, rotate --------------------------------------------------------

@test "init writes root.json = 1.root.json, empty targets, snapshot and timestamp v1, canonical" {
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  run --separate-stderr gl-sign init repo --root-key root --targets-key tk
  [ "$status" -eq 0 ]
  [ "$(json .root_version)" = 1 ]
  [ "$(json '.keyids.targets[0]')" = "$(sha tk.pub)" ]
  cmp repo/root.json repo/1.root.json
  [ -d repo/targets ]
  [ "$(jq -r '.signed | [._type, .version, (.targets|length)] | join(" ")' repo/targets.json)" = "targets 1 0" ]
  [ "$(jq -r '.signed.roles.root.threshold' repo/root.json)" = 1 ]
  # four roles; snapshot and timestamp default to the targets key; consistent snapshots
  [ "$(jq -c '.signed.roles | keys' repo/root.json)" = '["root","snapshot","targets","timestamp"]' ]
  [ "$(json -c .keyids.snapshot)" = "[\"$(sha tk.pub)\"]" ]
  [ "$(json -c .keyids.timestamp)" = "[\"$(sha tk.pub)\"]" ]
  [ "$(json .consistent_snapshot)" = true ]
  [ "$(jq -c '.signed.meta' repo/snapshot.json)" = '{"targets.json":{"version":1}}' ]
  [ "$(jq -c '.signed.meta["snapshot.json"].version' repo/timestamp.json)" = 1 ]
  cmp repo/targets.json repo/1.targets.json
  cmp repo/snapshot.json repo/1.snapshot.json
  for f in root targets snapshot timestamp; do
    [ "$(jq -cS . repo/$f.json | tr -d '\n')" = "$(cat repo/$f.json)" ]
    [ "$(jq -r .signed.spec_version repo/$f.json)" = 1.0.31 ]
  done
  # expiry defaults: root about 365 days, targets about 90 days ahead
  now=$(date -u +%s)
  r=$(date -u -d "$(jq -r .signed.expires repo/root.json)" +%s)
  t=$(date -u -d "$(jq -r .signed.expires repo/targets.json)" +%s)
  [ $(((r - now) / 86400)) -ge 364 ] && [ $(((r - now) / 86400)) -le 365 ]
  [ $(((t - now) / 86400)) -ge 89 ] && [ $(((t - now) / 86400)) -le 90 ]
  # already initialised
  run --separate-stderr gl-sign init repo --root-key root --targets-key tk
  [ "$status" -eq 2 ]
  # a threshold above the keys given
  run --separate-stderr gl-sign init repo3 --root-key root --targets-key tk --threshold 2
  [ "$status" -eq 2 ]
  [ ! -e repo3/root.json ]
}

@test "add: copies the archive, sets length, sha256, custom, bumps the version" {
  new_repo
  h=$(sha docs-1.0.0.tar.gz)
  cmp docs-1.0.0.tar.gz repo/targets/docs-1.0.0.tar.gz
  e=$(jq -c '.signed.targets["docs-1.0.0.tar.gz"]' repo/targets.json)
  [ "$(echo "$e" | jq -r .length)" = "$(stat -c %s docs-1.0.0.tar.gz)" ]
  [ "$(echo "$e" | jq -r .hashes.sha256)" = "$h" ]
  [ "$(echo "$e" | jq -c .custom)" = '{"name":"docs","version":"1.0.0"}' ]
  [ "$(jq .signed.version repo/targets.json)" = 2 ]
  make_release rel2 docs 1.1.0
  gl-sign pack rel2 repo/targets/docs-1.1.0.tar.gz >/dev/null
  # the archive already in place, keys after the flag, ARCHIVE last
  run --separate-stderr gl-sign add repo --key tk repo/targets/docs-1.1.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json .targets_version)" = 3 ]
  [ "$(json .version)" = 1.1.0 ]
  [ "$(jq '.signed.targets | length' repo/targets.json)" = 2 ]
  pysign verify repo/targets.json repo/root.json targets >/dev/null
  # every add re-signs snapshot and timestamp: each names its child's new version
  [ "$(json .snapshot_version)" = 3 ] && [ "$(json .timestamp_version)" = 3 ]
  [ "$(jq '.signed.meta["targets.json"].version' repo/snapshot.json)" = 3 ]
  [ "$(jq '.signed.meta["snapshot.json"].version' repo/timestamp.json)" = 3 ]
  cmp repo/targets.json repo/3.targets.json
  [ -f "repo/targets/$(sha repo/targets/docs-1.1.0.tar.gz).docs-1.1.0.tar.gz" ]
}

@test "add --minisign: targets/NAME.minisig that minisign -Vm verifies; sha256sum -c from targets.json" {
  command -v minisign >/dev/null || skip "minisign is not installed"
  new_repo
  make_release rel2 docs 1.1.0
  gl-sign pack rel2 docs-1.1.0.tar.gz >/dev/null
  run --separate-stderr gl-sign add repo --key tk --minisign docs-1.1.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json .minisig)" = repo/targets/docs-1.1.0.tar.gz.minisig ]
  pub=$(json .minisign_pubkey)
  run minisign -Vm repo/targets/docs-1.1.0.tar.gz -P "$pub"
  [ "$status" -eq 0 ]
  # another file under that signature fails
  cp repo/targets/docs-1.1.0.tar.gz.minisig repo/targets/docs-1.0.0.tar.gz.minisig
  run minisign -Vm repo/targets/docs-1.0.0.tar.gz -P "$pub"
  [ "$status" -ne 0 ]
  # and the hashes in targets.json check with coreutils alone
  (cd repo/targets && jq -r '.signed.targets | to_entries[] | "\(.value.hashes.sha256)  \(.key)"' ../targets.json | sha256sum -c)
  # only a targets key signs a .minisig
  run --separate-stderr gl-sign add repo --key tk root --minisign docs-1.1.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "remove withdraws a target, timestamp renews alone; both need their roles' keys" {
  new_repo
  run --separate-stderr gl-sign remove repo --key tk nothere.tar.gz
  [ "$status" -eq 2 ]
  run --separate-stderr gl-sign remove repo --key tk docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json .removed)" = docs-1.0.0.tar.gz ]
  [ "$(json .targets_version)" = 3 ]
  [ "$(jq '.signed.targets | length' repo/targets.json)" = 0 ]
  [ ! -e repo/targets/docs-1.0.0.tar.gz ]
  [ -e "repo/targets/$(sha docs-1.0.0.tar.gz).docs-1.0.0.tar.gz" ]
  cp repo/snapshot.json snap.json
  run --separate-stderr gl-sign timestamp repo --key tk
  [ "$status" -eq 0 ]
  [ "$(json .timestamp_version)" = 4 ]
  cmp snap.json repo/snapshot.json
  [ "$(jq -r '.signed.meta["snapshot.json"].hashes.sha256' repo/timestamp.json)" = "$(sha repo/snapshot.json)" ]
  run --separate-stderr gl-sign timestamp repo --key root
  refused threshold
  [[ "$(json .detail)" == *"the timestamp role of root version 1 needs 1 signature(s)"* ]]
  run --separate-stderr gl-sign rotate repo --role bogus --key root --new-key tk
  [ "$status" -eq 2 ]
}

@test "add refuses an archive without a valid manifest (bad_manifest), changing nothing" {
  new_repo
  cp repo/targets.json before.json
  mkdir nomani && echo 'x = 1' >nomani/docs_tool.py
  gl-sign pack nomani nomani.tar.gz >/dev/null
  run --separate-stderr gl-sign add repo --key tk nomani.tar.gz
  refused bad_manifest
  make_release bad
  echo '{"name":"docs"}' >bad/manifest.json
  gl-sign pack bad bad.tar.gz >/dev/null
  run --separate-stderr gl-sign add repo --key tk bad.tar.gz
  refused bad_manifest
  cmp before.json repo/targets.json
  # the plain name and its consistent-snapshot twin targets/HASH.NAME, nothing else
  [ "$(ls repo/targets)" = "$(printf '%s\n' "$(sha docs-1.0.0.tar.gz).docs-1.0.0.tar.gz" docs-1.0.0.tar.gz)" ]
}

@test "add: keys must reach the targets threshold; one key given twice counts once" {
  for k in r1 r2 t1 t2; do gl-sign keygen --no-passphrase $k >/dev/null; done
  gl-sign init repo --root-key r1 r2 --targets-key t1 t2 --threshold 2 >/dev/null
  make_release rel
  gl-sign pack rel docs.tar.gz >/dev/null
  cp repo/targets.json before.json
  run --separate-stderr gl-sign add repo --key t1 docs.tar.gz
  refused threshold
  run --separate-stderr gl-sign add repo --key t1 --key t1.key docs.tar.gz
  refused threshold
  run --separate-stderr gl-sign add repo --key t1 r1 docs.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"the targets role of root version 1 needs 2 signature(s)"* ]]
  cmp before.json repo/targets.json
  run --separate-stderr gl-sign add repo --key t1 --key t2 docs.tar.gz
  [ "$status" -eq 0 ]
  [ "$(jq '.signatures | length' repo/targets.json)" = 2 ]
}

@test "rotate: N+1.root.json signed by the old threshold and the new keys" {
  new_repo
  gl-sign keygen --no-passphrase new1 >/dev/null
  gl-sign keygen --no-passphrase new2 >/dev/null
  run --separate-stderr gl-sign rotate repo --key root --new-key new1 new2 --threshold 2
  [ "$status" -eq 0 ]
  [ "$(json .version)" = 2 ]
  cmp repo/root.json repo/2.root.json
  [ "$(jq -c '.signed.roles.root.keyids' repo/2.root.json)" = "$(jq -nc --arg a "$(sha new1.pub)" --arg b "$(sha new2.pub)" '[$a,$b]|sort')" ]
  [ "$(jq -c '.signed.roles.targets' repo/2.root.json)" = "$(jq -c '.signed.roles.targets' repo/1.root.json)" ]
  # the old root key is gone from the keys; its signature is there
  [ "$(jq --arg k "$(sha root.pub)" '.signed.keys | has($k)' repo/2.root.json)" = false ]
  pysign verify repo/2.root.json repo/1.root.json root >/dev/null
  pysign verify repo/2.root.json repo/2.root.json root >/dev/null
  # the old key can no longer rotate
  gl-sign keygen --no-passphrase new3 >/dev/null
  run --separate-stderr gl-sign rotate repo --key root --new-key new3
  refused threshold
  [ ! -e repo/3.root.json ]
  # new keys given only as public keys cannot meet the new threshold
  run --separate-stderr gl-sign rotate repo --key new1 new2 --new-key new3.pub
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"threshold 2 does not fit the 1 distinct --new-key keys"* ]]
  run --separate-stderr gl-sign rotate repo --key new1 new2 --new-key new3.pub --threshold 1
  refused threshold
  [[ "$(json .detail)" == *"new root role needs 1 signature(s) from its own keys; the --new-key secret keys hold 0"* ]]
  run --separate-stderr gl-sign rotate repo --key new1 new2 --new-key new3 --threshold 1
  [ "$status" -eq 0 ]
}

@test "pack: one JSON object with the archive's length and sha256; reproducible" {
  make_release rel
  run --separate-stderr gl-sign pack rel a.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json .sha256)" = "$(sha a.tar.gz)" ]
  [ "$(json .length)" = "$(stat -c %s a.tar.gz)" ]
  touch -d '2001-02-03 04:05:06' rel/*
  gl-sign pack rel b.tar.gz >/dev/null
  cmp a.tar.gz b.tar.gz
}

@test "expired metadata is written with a warning" {
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  run --separate-stderr gl-sign init repo --root-key root --targets-key tk --expires 0
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"repo/root.json is already expired"* ]]
  [[ "$stderr" == *"repo/targets.json is already expired"* ]]
  # the timestamp renewed with an expiry in the past: written, with the warning
  run --separate-stderr gl-sign timestamp repo --key tk --expires 2001-01-01T00:00:00Z
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"repo/timestamp.json is already expired"* ]]
  run --separate-stderr gl-sign init r2 --root-key root --targets-key tk --expires 2030-02-30T00:00:00Z
  [ "$status" -eq 2 ]
  run --separate-stderr gl-sign init r2 --root-key root --targets-key tk --expires 10
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
}

@test "usage errors exit 2; --help and --version" {
  run --separate-stderr gl-sign
  [ "$status" -eq 2 ]
  run --separate-stderr gl-sign frobnicate
  [ "$status" -eq 2 ]
  run --separate-stderr gl-sign add repo --bogus x y
  [ "$status" -eq 2 ]
  run --separate-stderr gl-sign add repo --key
  [ "$status" -eq 2 ]
  run --separate-stderr gl-sign init repo --root-key nothere --targets-key nothere
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"nothere.key"* ]]
  run gl-sign --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"gl-sign rotate REPO"* ]]
  run gl-sign --version
  [ "$status" -eq 0 ]
  [[ "$output" == "gl-sign "* ]]
}

@test "--log FILE (or GL_LOG) on gl-sign and gl-verify: one command event per run, the refusal's code, never a secret" {
  export GL_PASSPHRASE=sekrit-passphrase-$RANDOM
  run --separate-stderr gl-sign keygen --log log.jsonl root
  [ "$status" -eq 0 ]
  gl-sign keygen --no-passphrase tk >/dev/null
  GL_LOG=log.jsonl gl-sign init repo --root-key root --targets-key tk >/dev/null
  run --separate-stderr gl-verify install --log=log.jsonl repo missing.tar.gz
  [ "$status" -eq 1 ]
  gl-verify pin repo --log log.jsonl >/dev/null
  run --separate-stderr gl-verify install repo --log log.jsonl missing.tar.gz
  [ "$status" -eq 1 ]
  cat log.jsonl
  jq -se 'map([.prog, .command, .exit, .error]) == [["gl-sign","keygen",0,null],
    ["gl-sign","init",0,null], ["gl-verify","install",1,"not_pinned"], ["gl-verify","pin",0,null],
    ["gl-verify","install",1,.[4].error]] and (.[4].error | type) == "string"
    and all(.[]; .event == "command" and (.elapsed_ms | type) == "number")' log.jsonl
  ! grep -q "$GL_PASSPHRASE" log.jsonl
  ! grep -q "$(jq -r '.keyval.public' tk.pub)" log.jsonl
  # a log that cannot be opened is a usage error, before anything is done
  run --separate-stderr gl-sign keygen --no-passphrase --log /nonexistent/dir/l k2
  [ "$status" -eq 2 ]
  [ ! -e k2.key ]
}
