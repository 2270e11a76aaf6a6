#!/usr/bin/env bats
# Interoperability with a real peer (SPEC §3): Debian's python3-securesystemslib
# (canonical JSON, Ed25519) and python3-nacl (argon2id, secretbox), driven by
# tests/fixtures/sign/pysign.py. What gl-sign writes must verify there, and
# what securesystemslib signs must verify in gl-verify.
bats_require_minimum_version 1.5.0
load helpers
load fixtures/sign/helpers

setup() { gl_setup; }

@test "peer is present: securesystemslib 0.26+ and nacl from Debian's python" {
  run "$SYSPY" -c 'import securesystemslib, nacl; print(securesystemslib.__version__)'
  [ "$status" -eq 0 ]
  [[ "$output" =~ ^0\.(2[6-9]|[3-9][0-9]) ]] || [[ "$output" =~ ^[1-9] ]]
}

@test "gl-sign's root, targets, snapshot, timestamp and rotated root verify with securesystemslib" {
  new_repo
  run pysign verify repo/root.json repo/root.json root
  [ "$status" -eq 0 ]
  [ "$(json -c .valid)" = "[\"$(sha root.pub)\"]" ]
  run pysign verify repo/targets.json repo/root.json targets
  [ "$status" -eq 0 ]
  [ "$(json -c .valid)" = "[\"$(sha tk.pub)\"]" ]
  for f in 2.targets.json:targets snapshot.json:snapshot 2.snapshot.json:snapshot timestamp.json:timestamp; do
    run pysign verify "repo/${f%%:*}" repo/root.json "${f#*:}"
    [ "$status" -eq 0 ] || { echo "$f: $output"; false; }
    [ "$(json -c .valid)" = "[\"$(sha tk.pub)\"]" ]
  done
  gl-sign keygen --no-passphrase root2 >/dev/null
  gl-sign rotate repo --key root --new-key root2 >/dev/null
  pysign verify repo/2.root.json repo/1.root.json root
  pysign verify repo/2.root.json repo/2.root.json root
  # the verifier is not a rubber stamp: a changed byte fails there too
  jq -cj '.signed.version = 3' repo/targets.json >t.json
  run pysign verify t.json repo/root.json targets
  [ "$status" -eq 1 ]
}

@test "canonical JSON agrees byte for byte on non-ASCII, quotes and backslashes" {
  new_repo
  make_release rel2 docs 2.0.0
  name='dóçs "ünï" \ €-2.0.0.tar.gz'
  gl-sign pack rel2 "$name" >/dev/null
  gl-sign add repo --key tk "$name" >/dev/null
  run pysign verify repo/targets.json repo/root.json targets
  [ "$status" -eq 0 ]
  grep -q 'dóçs \\"ünï\\" \\\\ €' repo/targets.json
  gl-verify pin repo >/dev/null
  run --separate-stderr gl-verify install repo "$name"
  [ "$status" -eq 0 ]
  [ "$(json .release.version)" = 2.0.0 ]
}

@test "metadata and keys made by securesystemslib verify and install with gl-verify" {
  pysign keygen pr1 >/dev/null
  pysign keygen pr2 >/dev/null
  pysign keygen pt >/dev/null
  pysign root repo 1 --root-key pr1 pr2 --targets-key pt --threshold 2 --sign pr1 pr2
  pysign targets repo --sign pt
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  pysign add-target repo docs-1.0.0.tar.gz --sign pt
  run --separate-stderr gl-verify pin repo
  [ "$status" -eq 0 ]
  [ "$(json '.keyids.root | length')" = 2 ]
  [ "$(json '.keyids.targets[0]')" = "$(sha pt.pub)" ]
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json '.release.publisher[0]')" = "$(sha pt.pub)" ]
  # a root rotation signed by securesystemslib is followed
  pysign keygen pr3 >/dev/null
  pysign root repo 2 --root-key pr3 --targets-key pt --sign pr1 pr2 pr3
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  cmp "$GL_HOME"/trust/*/root.json repo/2.root.json
}

@test "securesystemslib's key format (keyid_hash_algorithms), pretty-printed metadata, consistent snapshots" {
  export PYSIGN_SSL_KEYS=1
  pysign keygen pr >/dev/null
  pysign keygen pt >/dev/null
  pysign root repo 1 --root-key pr --targets-key pt --consistent --sign pr
  jq -e '.signed.keys[] | .keyid_hash_algorithms == ["sha256","sha512"]' repo/root.json >/dev/null
  pysign targets repo --sign pt
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  pysign add-target repo docs-1.0.0.tar.gz --path a/b/docs-1.0.0.tar.gz --sign pt
  # python-tuf writes pretty-printed files: the same documents, indented (the
  # snapshot and timestamp name the targets served, so publish again)
  for f in repo/root.json repo/1.root.json repo/targets.json; do jq . "$f" >t.json && mv t.json "$f"; done
  pysign publish repo --sign pt
  grep -q '^  "signed": {' repo/2.targets.json
  run --separate-stderr gl-verify pin repo
  [ "$status" -eq 0 ]
  # the keyid is the SHA-256 of the key object as the root gives it
  kid=$(jq -cj '.signed.keys | to_entries[0].value' repo/root.json | "$SYSPY" -c 'import sys,json,hashlib
from securesystemslib import formats
print(hashlib.sha256(formats.encode_canonical(json.loads(sys.stdin.read())).encode()).hexdigest())')
  [ "$(jq -r '.signed.keys | keys[0]' repo/root.json)" = "$kid" ]
  run --separate-stderr gl-verify install repo a/b/docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json '.release.publisher[0]')" = "$(jq -r '.signed.roles.targets.keyids[0]' repo/root.json)" ]
}

@test "gl-sign signs with securesystemslib-generated keys, securesystemslib verifies" {
  pysign keygen pr >/dev/null
  pysign keygen pt >/dev/null
  gl-sign init repo --root-key pr --targets-key pt >/dev/null
  make_release rel
  gl-sign pack rel docs.tar.gz >/dev/null
  gl-sign add repo --key pt.key docs.tar.gz >/dev/null
  pysign verify repo/root.json repo/root.json root
  pysign verify repo/targets.json repo/root.json targets
}

@test "an encrypted gl-sign key decrypts with nacl (argon2id13 + secretbox)" {
  GL_PASSPHRASE='pass phrase' gl-sign keygen enc >/dev/null
  seed=$(GL_PASSPHRASE='pass phrase' pysign seed enc)
  pub=$("$SYSPY" -c 'import sys, nacl.signing as s; print(s.SigningKey(bytes.fromhex(sys.argv[1])).verify_key.encode().hex())' "$seed")
  [ "$pub" = "$(jq -r .keyval.public enc.pub)" ]
  # and a root signed by securesystemslib with that decrypted key pins
  gl-sign keygen --no-passphrase tk >/dev/null
  GL_PASSPHRASE='pass phrase' pysign root repo 1 --root-key enc --targets-key tk --sign enc
  run --separate-stderr gl-verify pin repo
  [ "$status" -eq 0 ]
  [ "$(json '.keyids.root[0]')" = "$(sha enc.pub)" ]
}
