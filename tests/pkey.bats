#!/usr/bin/env bats
# lib/sign/pkey.h: TUF key types (SPEC §3 "Key types"; issue 16) — ed25519,
# ecdsa-sha2-nistp256 and rsassa-pss-sha256 — checked against
# securesystemslib (Debian python3-securesystemslib with python3-cryptography,
# tests/fixtures/tuf/sslsign.py) through tests/unit/pkey_drive.c: what
# securesystemslib signs verifies; any changed byte is refused; keyids agree.
bats_require_minimum_version 1.5.0
load helpers

DRIVE=$GL_ROOT/build/tests/pkey_drive
case "$GL_BIN" in *asan*) DRIVE=$GL_ROOT/build/asan/tests/pkey_drive ;; esac
drive() { "$DRIVE" "$@"; }

setup() {
  gl_setup
  printf 'the signed bytes: {"_type":"targets","version":3}\n' >msg
}

# ssl TYPE — a securesystemslib key TYPE.pub.json and its signature of msg in $SIG, keyid in $SSLID
ssl() {
  local o
  o=$("$SYSPY" "$FIX/tuf/sslsign.py" "$1" msg "$1")
  SIG=$(jq -r .sig <<<"$o")
  SSLID=$(jq -r .keyid <<<"$o")
}

# flip_hex HEX POS — HEX with the digit at POS changed
flip_hex() {
  local h=$1 p=$2 c=${1:$2:1} n
  if [ "$c" = 0 ]; then n=1; else n=0; fi
  printf '%s%s%s' "${h:0:p}" "$n" "${h:p+1}"
}

@test "pkey: securesystemslib's ed25519, ecdsa-sha2-nistp256 and rsassa-pss-sha256 signatures verify, with the same keyids" {
  for t in ed25519 ecdsa rsa; do
    ssl $t
    run -0 drive $t.pub.json msg "$SIG"
    json ".ok and .keyid == \"$SSLID\""
  done
  jq -e '.keytype == "ecdsa" and (.keyval.public | startswith("-----BEGIN PUBLIC KEY-----\n"))' ecdsa.pub.json
}

@test "pkey: the keyid is over the key object as given — keyid_hash_algorithms counts; any JSON encoding gives the same keyid" {
  ssl ecdsa
  run -0 drive ecdsa.pub.json
  json ".keyid == \"$SSLID\""
  jq 'del(.keyid_hash_algorithms)' ecdsa.pub.json >bare.json
  run -0 drive bare.json
  [ "$(json -r .keyid)" != "$SSLID" ]
  # the keyid of the bare object is sha256 of its canonical form (PEM newlines verbatim)
  want=$("$SYSPY" -c 'import json,sys,hashlib; from securesystemslib.formats import encode_canonical as c; print(hashlib.sha256(c(json.load(open(sys.argv[1]))).encode()).hexdigest())' bare.json)
  json ".keyid == \"$want\""
  jq . ecdsa.pub.json >pretty.json
  run -0 drive pretty.json
  json ".keyid == \"$SSLID\""
}

@test "pkey: a changed message byte or signature digit is refused bad_signature, for every key type" {
  for t in ed25519 ecdsa rsa; do
    ssl $t
    printf 'The signed bytes: {"_type":"targets","version":3}\n' >msg2
    run -1 drive $t.pub.json msg2 "$SIG"
    json '.error == "bad_signature"'
    run -1 drive $t.pub.json msg "$(flip_hex "$SIG" 40)"
    json '.error == "bad_signature"'
    run -1 drive $t.pub.json msg "${SIG:0:${#SIG}-2}"
    json '.error == "bad_signature"'
    run -1 drive $t.pub.json msg "not hex at all"
    json '.error == "bad_signature"'
  done
}

@test "pkey: a signature checked with another key, or another key type's signature, is refused bad_signature" {
  ssl ecdsa; ecsig=$SIG
  cp ecdsa.pub.json ec1.json
  ssl ecdsa
  run -1 drive ec1.json msg "$SIG"
  json '.error == "bad_signature"'
  ssl rsa
  run -1 drive rsa.pub.json msg "$ecsig"
  json '.error == "bad_signature"'
}

@test "pkey: an unknown key type or scheme is refused unsupported naming it; a key of the wrong shape is bad_metadata" {
  ssl ecdsa
  jq '.scheme = "ecdsa-sha2-nistp384"' ecdsa.pub.json >k.json
  run -1 drive k.json msg "$SIG"
  json '.error == "unsupported" and (.detail | contains("ecdsa-sha2-nistp384"))'
  jq '.keytype = "sphincs" | .scheme = "sphincs-shake-128s"' ecdsa.pub.json >k.json
  run -1 drive k.json msg "$SIG"
  json '.error == "unsupported" and (.detail | contains("sphincs"))'
  # the keytype does not go with the scheme
  jq '.keytype = "rsa"' ecdsa.pub.json >k.json
  run -1 drive k.json msg "$SIG"
  json '.error == "bad_metadata"'
  # not a PEM public key; no keyval; a number for the public key
  jq '.keyval.public = "-----BEGIN PUBLIC KEY-----\ngarbage\n-----END PUBLIC KEY-----\n"' ecdsa.pub.json >k.json
  run -1 drive k.json msg "$SIG"
  json '.error == "bad_metadata"'
  jq 'del(.keyval)' ecdsa.pub.json >k.json
  run -1 drive k.json msg "$SIG"
  json '.error == "bad_metadata"'
  jq '.keyval.public = 7' ecdsa.pub.json >k.json
  run -1 drive k.json msg "$SIG"
  json '.error == "bad_metadata" and .keyid_error != null'
  # an ed25519 key whose public key is not 64 hex digits
  ssl ed25519
  jq '.keyval.public |= .[2:]' ed25519.pub.json >k.json
  run -1 drive k.json msg "$SIG"
  json '.error == "bad_metadata"'
}

@test "pkey: the curve and the RSA size are checked — a P-384 key declared nistp256 is bad_metadata, a 1024-bit RSA key unsupported" {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:secp384r1 -out p384.pem 2>/dev/null
  openssl pkey -in p384.pem -pubout -out p384.pub 2>/dev/null
  jq -n --rawfile p p384.pub '{keytype:"ecdsa",scheme:"ecdsa-sha2-nistp256",keyval:{public:$p}}' >k.json
  sig=$(openssl dgst -sha256 -sign p384.pem msg | od -An -tx1 | tr -d ' \n')
  run -1 drive k.json msg "$sig"
  json '.error == "bad_metadata" and (.detail | contains("secp384r1"))'
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out r1024.pem 2>/dev/null
  openssl pkey -in r1024.pem -pubout -out r1024.pub 2>/dev/null
  jq -n --rawfile p r1024.pub '{keytype:"rsa",scheme:"rsassa-pss-sha256",keyval:{public:$p}}' >k.json
  sig=$(openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32 -sign r1024.pem msg | od -An -tx1 | tr -d ' \n')
  run -1 drive k.json msg "$sig"
  json '.error == "unsupported" and (.detail | contains("1024 bits"))'
  # the same check passes a 2048-bit key whose PSS signature OpenSSL made (salt 32, as securesystemslib)
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out r2048.pem 2>/dev/null
  openssl pkey -in r2048.pem -pubout -out r2048.pub 2>/dev/null
  jq -n --rawfile p r2048.pub '{keytype:"rsa",scheme:"rsassa-pss-sha256",keyval:{public:$p}}' >k.json
  sig=$(openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32 -sign r2048.pem msg | od -An -tx1 | tr -d ' \n')
  run -0 drive k.json msg "$sig"
  # and PKCS#1 v1.5 (another scheme) under a PSS key is refused
  sig=$(openssl dgst -sha256 -sign r2048.pem msg | od -An -tx1 | tr -d ' \n')
  run -1 drive k.json msg "$sig"
  json '.error == "bad_signature"'
}
