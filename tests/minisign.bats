#!/usr/bin/env bats
# lib/sign/minisign.h: FILE.minisig in minisign's format with the targets key
# (issue 16 "a standard tool can check a release without us"), driven by
# tests/unit/minisign_drive.c and checked by Debian's minisign(1) itself.
bats_require_minimum_version 1.5.0
load helpers

DRIVE=$GL_ROOT/build/tests/minisign_drive
case "$GL_BIN" in *asan*) DRIVE=$GL_ROOT/build/asan/tests/minisign_drive ;; esac

setup() {
  gl_setup
  command -v minisign >/dev/null || skip "minisign is not installed (scripts/deps.sh)"
  gl-sign keygen --no-passphrase tk >/dev/null
  head -c 300000 /dev/urandom >rel.tar.gz
}

@test "minisign: minisign -Vm verifies FILE.minisig with the key line (-P) and the key file (-p)" {
  run -0 "$DRIVE" tk rel.tar.gz --pubkey-file tk.minisign.pub
  pub=$(json -r .pubkey)
  [[ "$pub" =~ ^RW[A-Za-z0-9+/]{54}$ ]]
  [ "$(tail -n1 tk.minisign.pub)" = "$pub" ]
  [ "$(wc -l <rel.tar.gz.minisig)" -eq 4 ]
  # the prehashed algorithm minisign 0.11 writes by default ("ED")
  sed -n 2p rel.tar.gz.minisig | base64 -d | head -c 2 | grep -qx ED
  sed -n 3p rel.tar.gz.minisig | grep -q $'^trusted comment: timestamp:[0-9]*\tfile:rel.tar.gz\thashed$'
  run -0 minisign -Vm rel.tar.gz -P "$pub"
  [[ "$output" == *"Signature and comment signature verified"* ]]
  run -0 minisign -Vm rel.tar.gz -p tk.minisign.pub
}

@test "minisign: a modified file, another key and an edited trusted comment are refused by minisign" {
  run -0 "$DRIVE" tk rel.tar.gz
  pub=$(json -r .pubkey)
  cp rel.tar.gz orig.tar.gz
  printf '\x01' | dd of=rel.tar.gz bs=1 seek=1000 conv=notrunc 2>/dev/null
  ! cmp -s rel.tar.gz orig.tar.gz
  run -1 minisign -Vm rel.tar.gz -P "$pub"
  [[ "$output" == *"Signature verification failed"* ]]
  cp orig.tar.gz rel.tar.gz
  run -0 minisign -Vm rel.tar.gz -P "$pub"
  # another key: refused by key id before any signature check
  gl-sign keygen --no-passphrase other >/dev/null
  run -0 "$DRIVE" other orig.tar.gz --sig other.minisig
  other=$(json -r .pubkey)
  run -1 minisign -Vm rel.tar.gz -P "$other"
  run -1 minisign -Vm rel.tar.gz -x other.minisig -P "$pub"
  # the trusted comment is covered by the global signature
  sed -i '3s/file:rel.tar.gz/file:evil.tar.gz/' rel.tar.gz.minisig
  run -1 minisign -Vm rel.tar.gz -P "$pub"
  [[ "$output" == *"Comment signature verification failed"* ]]
}

@test "minisign: keynum is the keyid's first 8 bytes (the same key always gives the same public key line); an encrypted key works" {
  run -0 "$DRIVE" tk rel.tar.gz --pubkey-file a.pub
  keyid=$(json -r .keyid)
  first=$(json -r .pubkey)
  [ "$(printf '%s' "$first" | base64 -d | tail -c +3 | head -c 8 | od -An -tx1 | tr -d ' \n')" = "${keyid:0:16}" ]
  # minisign prints the keynum as a little-endian number
  le=$(printf '%s' "${keyid:0:16}" | sed 's/../& /g' | awk '{for (i = NF; i > 0; i--) printf "%s", toupper($i)}')
  [ "$(head -n1 a.pub)" = "untrusted comment: minisign public key $le" ]
  run -0 "$DRIVE" tk rel.tar.gz
  [ "$(json -r .pubkey)" = "$first" ]
  GL_PASSPHRASE=correct-horse gl-sign keygen enc >/dev/null
  GL_PASSPHRASE=correct-horse run -0 "$DRIVE" enc rel.tar.gz --sig enc.minisig
  run -0 minisign -Vm rel.tar.gz -x enc.minisig -P "$(json -r .pubkey)"
}

@test "minisign: a file name with a newline keeps the trusted comment one line, and still verifies" {
  name=$'bad\nname.tar.gz'
  cp rel.tar.gz "$name"
  run -0 "$DRIVE" tk "$name"
  pub=$(json -r .pubkey)
  [ "$(wc -l <"$name.minisig")" -eq 4 ]
  sed -n 3p "$name.minisig" | grep -q $'file:bad?name.tar.gz\thashed$'
  run -0 minisign -Vm "$name" -P "$pub"
}

@test "minisign: a missing file or a public-only key is an I/O error, and no .minisig is written" {
  run -2 "$DRIVE" tk nope.tar.gz
  [ ! -e nope.tar.gz.minisig ]
  run -2 "$DRIVE" tk.pub rel.tar.gz
  [ ! -e rel.tar.gz.minisig ]
}
