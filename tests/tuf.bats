#!/usr/bin/env bats
# TUF's attacks on an update client (TUF specification §1.5.2; issue 16),
# each against a repository in a directory and refused by gl-verify with its
# named error (SPEC §3). Where a check can be switched off in the GL_TESTING
# build (build/testing/bin/gl-verify: GL_TEST_TUF_OFF=expiry|rollback|version|
# hash, GL_TEST_META_CAP_OFF=1, lib/sign/tuf_client.h, lib/sign/tuf.h), the same attack
# is first shown to work with the check off: the host installs a release the
# publisher withdrew, or reads a file to its end. Otherwise the untampered
# repository is shown to install.
bats_require_minimum_version 1.5.0
load helpers
load fixtures/sign/helpers

TGV=${GL_ROOT:-.}/build/testing/bin/gl-verify

setup() {
  gl_setup
  [ -x "$TGV" ] || skip "build/testing/bin/gl-verify is not built (make units)"
}

# tgv ARGS — the GL_TESTING gl-verify (switches honoured)
tgv() { "$TGV" "$@"; }

# withdrawn_repo — docs-1.0.0 published (targets v2), saved as old/, then
# withdrawn by the publisher (targets v3, snapshot v3, timestamp v3); the host
# pinned before. Installing docs-1.0.0 now must fail: it is not listed.
withdrawn_repo() {
  new_repo
  gl-verify pin repo >/dev/null
  mkdir old && cp repo/*.json old/
  gl-sign remove repo --key tk docs-1.0.0.tar.gz >/dev/null
  [ -e repo/targets/"$(sha docs-1.0.0.tar.gz)".docs-1.0.0.tar.gz ]
}

# installed_withdrawn — the last run installed the withdrawn release
installed_withdrawn() {
  [ "$status" -eq 0 ] || { echo "status $status: $output $stderr"; return 1; }
  [ "$(json .release.sha256)" = "$(sha docs-1.0.0.tar.gz)" ]
}

@test "the repository gl-sign writes: four roles, consistent snapshots, each file signed by its role" {
  new_repo
  for f in 1.root.json root.json 1.targets.json 2.targets.json targets.json 1.snapshot.json \
    2.snapshot.json snapshot.json timestamp.json; do
    [ -f "repo/$f" ] || { echo "missing $f"; false; }
  done
  [ "$(jq .signed.consistent_snapshot repo/root.json)" = true ]
  [ "$(jq -r .signed.spec_version repo/timestamp.json)" = 1.0.31 ]
  [ "$(jq '.signed.meta["targets.json"].version' repo/snapshot.json)" = 2 ]
  [ "$(jq '.signed.meta["snapshot.json"].version' repo/timestamp.json)" = 2 ]
  [ "$(jq -r '.signed.meta["snapshot.json"].hashes.sha256' repo/timestamp.json)" = "$(sha repo/snapshot.json)" ]
  [ "$(jq '.signed.meta["snapshot.json"].length' repo/timestamp.json)" = "$(stat -c %s repo/snapshot.json)" ]
  cmp repo/targets.json repo/2.targets.json
  cmp repo/snapshot.json repo/2.snapshot.json
  cmp docs-1.0.0.tar.gz "repo/targets/$(sha docs-1.0.0.tar.gz).docs-1.0.0.tar.gz"
  # the timestamp expires in a day, the snapshot in a week
  now=$(date -u +%s)
  ts=$(date -u -d "$(jq -r .signed.expires repo/timestamp.json)" +%s)
  sn=$(date -u -d "$(jq -r .signed.expires repo/snapshot.json)" +%s)
  [ $((ts - now)) -le 86400 ] && [ $((ts - now)) -gt 86000 ]
  [ $((sn - now)) -le $((7 * 86400)) ] && [ $((sn - now)) -gt $((7 * 86400 - 400)) ]
  for role in root targets snapshot timestamp; do
    pysign verify repo/$role.json repo/root.json $role >/dev/null
  done
}

@test "the publisher's own steps: remove withdraws, timestamp renews, the host follows" {
  withdrawn_repo
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_signature
  [[ "$(json .detail)" == *'3.targets.json: lists no target named "docs-1.0.0.tar.gz"'* ]]
  [ ! -e repo/targets/docs-1.0.0.tar.gz ]
  run --separate-stderr gl-sign timestamp repo --key tk
  [ "$status" -eq 0 ]
  [ "$(json .timestamp_version)" = 4 ]
  [ "$(jq '.signed.meta["snapshot.json"].version' repo/timestamp.json)" = 3 ]
  cmp repo/snapshot.json repo/3.snapshot.json
  # only the timestamp's keys may renew it
  gl-sign keygen --no-passphrase stranger >/dev/null
  run --separate-stderr gl-sign timestamp repo --key stranger
  refused threshold
  [[ "$(json .detail)" == *"the timestamp role of root version 1"* ]]
}

@test "freeze: an expired timestamp is refused (expired); with the check off it is used" {
  new_repo
  gl-verify pin repo >/dev/null
  gl-verify install repo docs-1.0.0.tar.gz >/dev/null
  gl-sign timestamp repo --key tk --expires 2001-01-01T00:00:00Z >/dev/null 2>&1
  GL_TEST_TUF_OFF=expiry run --separate-stderr tgv install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  rm -f "$GL_HOME"/trust/*/timestamp.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused expired
  [[ "$(json .detail)" == *"repo/timestamp.json: timestamp version 3 expired at 2001-01-01T00:00:00Z"* ]]
  # the trusted (same-version) timestamp is kept and still checked for expiry
  cp repo/timestamp.json "$(echo "$GL_HOME"/trust/*)/timestamp.json"
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused expired
  gl-sign timestamp repo --key tk >/dev/null
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "rollback: the old timestamp, snapshot and targets replayed re-offer a withdrawn release" {
  withdrawn_repo
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_signature
  cp old/timestamp.json old/snapshot.json old/targets.json repo/
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused rollback
  [[ "$(json .detail)" == *"repo/timestamp.json: timestamp version 2 is lower than the trusted 3 (rollback)"* ]]
  GL_TEST_TUF_OFF=rollback run --separate-stderr tgv install repo docs-1.0.0.tar.gz
  installed_withdrawn
}

@test "rollback: a new timestamp naming an old snapshot (a stolen timestamp key)" {
  withdrawn_repo
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_signature
  # the timestamp key signs a timestamp v4 that names snapshot v2
  cp old/snapshot.json repo/snapshot.json
  gl-sign timestamp repo --key tk >/dev/null
  [ "$(jq '.signed.meta["snapshot.json"].version' repo/timestamp.json)" = 2 ]
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused rollback
  [[ "$(json .detail)" == *"names snapshot version 2, lower than the trusted timestamp's 3"* ]]
  GL_TEST_TUF_OFF=rollback run --separate-stderr tgv install repo docs-1.0.0.tar.gz
  installed_withdrawn
}

@test "rollback: a new snapshot naming an old targets (stolen snapshot and timestamp keys)" {
  withdrawn_repo
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_signature
  # the online keys sign snapshot v4 naming the old, validly signed targets v2
  cp old/targets.json repo/targets.json
  pysign publish repo --sign tk
  [ "$(jq '.signed.meta["targets.json"].version' repo/snapshot.json)" = 2 ]
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused rollback
  [[ "$(json .detail)" == *"names targets.json version 2, lower than the trusted 3 (rollback)"* ]]
  GL_TEST_TUF_OFF=rollback run --separate-stderr tgv install repo docs-1.0.0.tar.gz
  installed_withdrawn
}

@test "mix-and-match: a snapshot names targets v3, the mirror serves v2 under that name" {
  withdrawn_repo
  cp old/targets.json repo/3.targets.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused rollback
  [[ "$(json .detail)" == *"repo/3.targets.json: holds targets version 2, but repo/3.snapshot.json names version 3"* ]]
  GL_TEST_TUF_OFF=version run --separate-stderr tgv install repo docs-1.0.0.tar.gz
  installed_withdrawn
  rm -rf "$GL_HOME"/releases "$GL_HOME"/trust && gl-verify pin repo >/dev/null
  # and a snapshot swapped the same way (the timestamp gives its hash: refused first by it)
  cp repo/targets.json repo/3.targets.json
  cp old/snapshot.json repo/3.snapshot.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused hash
  [[ "$(json .detail)" == *"repo/3.snapshot.json: SHA-256 is"* ]]
  GL_TEST_TUF_OFF=hash run --separate-stderr tgv install repo docs-1.0.0.tar.gz
  refused rollback
  [[ "$(json .detail)" == *"holds snapshot version 2, but repo/timestamp.json names version 3"* ]]
}

@test "endless metadata: each file is read only up to its cap (length)" {
  new_repo
  gl-verify pin repo >/dev/null
  cp repo/timestamp.json ts.json
  truncate -s 64M repo/timestamp.json
  GL_TEST_META_CAP_OFF=1 run --separate-stderr tgv install repo docs-1.0.0.tar.gz
  refused bad_metadata # read to its end, then found not to be JSON
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused length
  [[ "$(json .detail)" == *"repo/timestamp.json: longer than 16384 bytes"* ]]
  cp ts.json repo/timestamp.json
  # a snapshot longer than the length the timestamp gives (still valid JSON)
  printf '%*s' 100000 '' >>repo/2.snapshot.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused length
  [[ "$(json .detail)" == *"repo/2.snapshot.json: longer than $(stat -c %s repo/snapshot.json) bytes"* ]]
  cp repo/snapshot.json repo/2.snapshot.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "endless target: at most its length and one byte more is read (length)" {
  new_repo
  gl-verify pin repo >/dev/null
  t="repo/targets/$(sha docs-1.0.0.tar.gz).docs-1.0.0.tar.gz"
  rm "$t" && cp docs-1.0.0.tar.gz "$t" && truncate -s 4G "$t"
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused length
  [[ "$(json .detail)" == *"$t: longer than the $(stat -c %s docs-1.0.0.tar.gz) bytes targets.json says"* ]]
  [ -z "$(ls "$GL_HOME/releases")" ]
  cp docs-1.0.0.tar.gz "$t"
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "a target whose hash differs is refused (hash); with the check off its bytes are installed" {
  new_repo
  gl-verify pin repo >/dev/null
  t="repo/targets/$(sha docs-1.0.0.tar.gz).docs-1.0.0.tar.gz"
  rm "$t" && cp docs-1.0.0.tar.gz "$t"
  # the gzip header's MTIME (bytes 4-7) is outside its CRC: same contents, other bytes
  "$SYSPY" -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[5]^=1; open(p,"wb").write(b)' "$t"
  GL_TEST_TUF_OFF=hash run --separate-stderr tgv install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json .release.sha256)" = "$(sha "$t")" ]
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused hash
  [[ "$(json .detail)" == *"SHA-256 is $(sha "$t"), but targets.json says $(sha docs-1.0.0.tar.gz)"* ]]
}

@test "a root rotation signed by too few old keys is refused (threshold)" {
  for k in r1 r2 tk n1; do pysign keygen $k >/dev/null; done
  pysign root repo 1 --root-key r1 r2 --threshold 2 --targets-key tk --consistent --sign r1 r2
  pysign targets repo --sign tk
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  pysign add-target repo docs-1.0.0.tar.gz --sign tk
  gl-verify pin repo >/dev/null
  # root v2 signed by r1 alone (and the new key): one of the two old keys
  pysign root repo 2 --root-key n1 --targets-key tk --consistent --sign r1 n1
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"2.root.json: 1 valid signature from distinct keys of the root role of root version 1; its threshold is 2"* ]]
  [ "$(jq .signed.version "$GL_HOME"/trust/*/root.json)" = 1 ]
  # signed by both old keys: followed
  pysign root repo 2 --root-key n1 --targets-key tk --consistent --sign r1 r2 n1
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(jq .signed.version "$GL_HOME"/trust/*/root.json)" = 2 ]
}

@test "rotate --role timestamp: the new root names the new key; the old key's timestamps stop counting" {
  new_repo
  gl-verify pin repo >/dev/null
  gl-verify install repo docs-1.0.0.tar.gz >/dev/null
  gl-sign keygen --no-passphrase ts2 >/dev/null
  run --separate-stderr gl-sign rotate repo --role timestamp --key root tk --new-key ts2
  [ "$status" -eq 0 ]
  [ "$(json .version)" = 2 ]
  [ "$(json -c .keyids.timestamp)" = "[\"$(sha ts2.pub)\"]" ]
  [ "$(jq -r '.signatures[0].keyid' repo/timestamp.json)" = "$(sha ts2.pub)" ]
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  # a timestamp signed by the old key is no longer one
  run --separate-stderr gl-sign timestamp repo --key tk
  refused threshold
  jq -cj '.signed.version += 1' repo/timestamp.json >t.json && mv t.json repo/timestamp.json
  pysign sign repo/timestamp.json --key tk
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"repo/timestamp.json: 0 valid signatures from distinct keys of the timestamp role of root version 2"* ]]
  gl-sign timestamp repo --key ts2 >/dev/null
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "rotate --role targets re-signs targets, snapshot and timestamp under the new root" {
  new_repo
  gl-verify pin repo >/dev/null
  gl-sign keygen --no-passphrase tk2 >/dev/null
  gl-sign keygen --no-passphrase on >/dev/null
  # snapshot and timestamp stay with tk; targets moves to tk2
  run --separate-stderr gl-sign rotate repo --role targets --key root tk --new-key tk2
  [ "$status" -eq 0 ]
  [ "$(jq -r '.signatures[0].keyid' repo/targets.json)" = "$(sha tk2.pub)" ]
  [ "$(jq .signed.version repo/targets.json)" = 3 ]
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json -c .release.publisher)" = "[\"$(sha tk2.pub)\"]" ]
  # the old targets key cannot add any more; add --key tk2 tk signs all three
  make_release rel2 docs 1.1.0
  gl-sign pack rel2 docs-1.1.0.tar.gz >/dev/null
  run --separate-stderr gl-sign add repo --key tk docs-1.1.0.tar.gz
  refused threshold
  run --separate-stderr gl-sign add repo --key tk2 tk docs-1.1.0.tar.gz
  [ "$status" -eq 0 ]
  run --separate-stderr gl-verify install repo docs-1.1.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "init --snapshot-key --timestamp-key: each role its own key; add needs all three" {
  for k in root tk sk ts; do gl-sign keygen --no-passphrase $k >/dev/null; done
  run --separate-stderr gl-sign init repo --root-key root --targets-key tk --snapshot-key sk --timestamp-key ts
  [ "$status" -eq 0 ]
  [ "$(json '.keyids.snapshot[0]')" = "$(sha sk.pub)" ]
  [ "$(json '.keyids.timestamp[0]')" = "$(sha ts.pub)" ]
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  run --separate-stderr gl-sign add repo --key tk docs-1.0.0.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"the snapshot role"* ]]
  [ "$(jq .signed.version repo/targets.json)" = 1 ]
  run --separate-stderr gl-sign add repo --key tk sk ts docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  gl-verify pin repo >/dev/null
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "without consistent snapshots: the plain names are read" {
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  gl-sign init repo --root-key root --targets-key tk --no-consistent-snapshot >/dev/null
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  gl-sign add repo --key tk docs-1.0.0.tar.gz >/dev/null
  [ ! -e repo/2.targets.json ] && [ ! -e repo/2.snapshot.json ]
  [ "$(ls repo/targets)" = docs-1.0.0.tar.gz ]
  gl-verify pin repo >/dev/null
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "a target path with '/', sha256 and sha512 (securesystemslib writer); unsafe paths refused" {
  pysign keygen root >/dev/null
  pysign keygen tk >/dev/null
  pysign root repo 1 --root-key root --targets-key tk --consistent --sign root
  pysign targets repo --sign tk
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  pysign add-target repo docs-1.0.0.tar.gz --path tools/docs/docs-1.0.0.tar.gz --sign tk
  [ -f "repo/targets/tools/docs/$(sha docs-1.0.0.tar.gz).docs-1.0.0.tar.gz" ]
  gl-verify pin repo >/dev/null
  run --separate-stderr gl-verify install repo tools/docs/docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json .release.sha256)" = "$(sha docs-1.0.0.tar.gz)" ]
  # the sha512 is checked too: a wrong one alone refuses
  jq -cj '.signed.targets["tools/docs/docs-1.0.0.tar.gz"].hashes.sha512 |= ("0" + .[1:])' \
    repo/targets.json >t.json && mv t.json repo/targets.json
  jq -cj '.signed.version += 1' repo/targets.json >t.json && mv t.json repo/targets.json
  pysign sign repo/targets.json --key tk
  pysign publish repo --sign tk
  rm -rf "$GL_HOME/releases"
  run --separate-stderr gl-verify install repo tools/docs/docs-1.0.0.tar.gz
  refused hash
  [[ "$(json .detail)" == *"SHA-512 is"* ]]
  # a path with "..": signed, listed, and never fetched or installed
  for bad in ../escape.tar.gz tools//x.tar.gz /abs.tar.gz; do
    pysign add-target repo docs-1.0.0.tar.gz --path "x/$bad" --sign tk 2>/dev/null || true
    run --separate-stderr gl-verify install repo "x/$bad"
    refused bad_metadata
    [[ "$(json .detail)" == *"is not safe to install"* ]]
  done
}

@test "a failed update leaves the previous trusted state, byte for byte" {
  new_repo
  gl-verify pin repo >/dev/null
  gl-verify install repo docs-1.0.0.tar.gz >/dev/null
  trust=$(echo "$GL_HOME"/trust/*)
  mkdir before && cp "$trust"/*.json before/
  # a new timestamp and snapshot (valid) naming a targets whose signature fails
  make_release rel2 docs 1.1.0
  gl-sign pack rel2 docs-1.1.0.tar.gz >/dev/null
  gl-sign add repo --key tk docs-1.1.0.tar.gz >/dev/null
  jq -cj '.signatures[0].sig |= (if .[0:1] == "0" then "1" else "0" end) + .[1:]' \
    repo/3.targets.json >t.json && mv t.json repo/3.targets.json
  run --separate-stderr gl-verify install repo docs-1.1.0.tar.gz
  refused bad_signature
  [[ "$(json .detail)" == *"repo/3.targets.json: signature 0"* ]]
  for f in before/*.json; do cmp "$f" "$trust/${f#before/}"; done
  [ "$(ls "$trust")" = "$(ls before)" ]
  # the good file again: all three advance together
  cp repo/targets.json repo/3.targets.json
  run --separate-stderr gl-verify install repo docs-1.1.0.tar.gz
  [ "$status" -eq 0 ]
  for r in timestamp snapshot targets; do
    [ "$(jq .signed.version "$trust/$r.json")" = 3 ]
  done
}

@test "delegated targets, one level: paths, the delegation's keys, terminating" {
  for k in root tk dk other; do pysign keygen $k >/dev/null; done
  pysign root repo 1 --root-key root --targets-key tk --consistent --sign root
  pysign targets repo --sign tk
  pysign delegate repo team --key dk --paths 'tools/*' --terminating --sign tk
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  pysign add-target repo docs-1.0.0.tar.gz --role team --path tools/docs-1.0.0.tar.gz --sign dk --publish tk
  [ -f repo/2.team.json ]
  gl-verify pin repo >/dev/null
  run --separate-stderr gl-verify install repo tools/docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json -c .release.publisher)" = "[\"$(sha dk.pub)\"]" ]
  # the delegated role may list a path outside its patterns: not asked for it
  pysign add-target repo docs-1.0.0.tar.gz --role team --path elsewhere/docs.tar.gz --sign dk --publish tk
  run --separate-stderr gl-verify install repo elsewhere/docs.tar.gz
  refused bad_signature
  [[ "$(json .detail)" == *'lists no target named "elsewhere/docs.tar.gz"'* ]]
  # team.json signed by a key the delegation does not name
  pysign add-target repo docs-1.0.0.tar.gz --role team --path tools/x.tar.gz --sign other --publish tk
  run --separate-stderr gl-verify install repo tools/x.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"team role of the delegation in repo/"* ]]
  # gl-sign add on this repository keeps the delegation and the snapshot's entry for it
  pysign sign repo/team.json --key dk
  pysign publish repo --sign tk
  gl-sign add repo --key tk docs-1.0.0.tar.gz >/dev/null
  [ "$(jq -r '.signed.delegations.roles[0].name' repo/targets.json)" = team ]
  [ "$(jq '.signed.meta["team.json"].version' repo/snapshot.json)" = 4 ]
  run --separate-stderr gl-verify install repo tools/docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}
