#!/usr/bin/env bats
# gl-sign and gl-verify against tuf-js (issue 16 "Must show"), both from npm
# (scripts/tufjs.sh, never vendored): tuf-js's Updater refreshes a gl-sign
# repository served on loopback from its first root and downloads a target
# with the right hash, before and after a root rotation and a remove; and
# repositories written with @tufjs/models (pretty-printed and canonical, with
# and without consistent snapshots, sha512, paths with '/', securesystemslib's
# key form, a delegated role) are pinned and installed by gl-verify, from a
# directory and from a URL.
bats_require_minimum_version 1.5.0
load helpers
load fixtures/sign/helpers
load fixtures/tuf/serve
load fixtures/tuf/tufjs

setup_file() { tufjs_setup_file; }

setup() {
  gl_setup
  make_release rel docs 1.0.0
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
}
teardown() { serve_stop_all; }

# client [ARGS…] — tuf-js's Updater against the repository served as WWW
client() {
  tufjs_update --metadata-url "http://127.0.0.1:$WWW_PORT/repo" \
    --targets-url "http://127.0.0.1:$WWW_PORT/repo/targets" --state "$PWD/state" "$@"
}

@test "tuf-js refreshes a gl-sign repository from its first root, before and after a rotation and a remove" {
  new_repo
  make_release rel2 docs 1.1.0
  gl-sign pack rel2 docs-1.1.0.tar.gz >/dev/null
  gl-sign add repo --key tk docs-1.1.0.tar.gz >/dev/null
  serve_start WWW .
  run --separate-stderr client --root repo/1.root.json --target docs-1.0.0.tar.gz
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(json .ok)" = true ]
  [ "$(json .sha256)" = "$(sha docs-1.0.0.tar.gz)" ]
  # a root rotation and a withdrawn target
  gl-sign keygen --no-passphrase root2 >/dev/null
  gl-sign rotate repo --key root --new-key root2 >/dev/null
  gl-sign remove repo --key tk docs-1.0.0.tar.gz >/dev/null
  run --separate-stderr client --target docs-1.1.0.tar.gz
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(json .sha256)" = "$(sha docs-1.1.0.tar.gz)" ]
  [ "$(json .versions.root)" = 2 ]
  run --separate-stderr client --target docs-1.0.0.tar.gz
  [ "$(json .ok)" = false ]
}

# pin_install REPO PATH — gl-verify pins REPO's root and installs PATH
pin_install() {
  rm -rf "$GL_HOME"
  run --separate-stderr gl-verify pin "$1"
  [ "$status" -eq 0 ] || { echo "pin $1: $output $stderr"; return 1; }
  run --separate-stderr gl-verify install "$1" "$2"
  [ "$status" -eq 0 ] || { echo "install $1 $2: $output $stderr"; return 1; }
  [ "$(json .release.sha256)" = "$(sha docs-1.0.0.tar.gz)" ]
}

@test "repositories written with @tufjs/models are pinned and installed by gl-verify, from a directory and a URL" {
  serve_start WWW .
  local n=0 # not i: bats' run uses i
  for opts in "" "--pretty" "--no-consistent --sha512" "--pretty --hashes sha256,sha512 --meta-hashes" "--ssl-keys" \
    "--keytype ecdsa" "--keytype rsa --pretty"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    run --separate-stderr write_repo --out r$n --keys k$n $opts --target tools/docs/docs-1.0.0.tar.gz=docs-1.0.0.tar.gz
    [ "$status" -eq 0 ] || { echo "write_repo $opts: $output $stderr"; false; }
    pin_install r$n tools/docs/docs-1.0.0.tar.gz || { echo "options: $opts"; false; }
    pin_install "http://127.0.0.1:$WWW_PORT/r$n" tools/docs/docs-1.0.0.tar.gz || { echo "options: $opts"; false; }
  done
  # the pretty one really is pretty, the sha512 one lists only sha512
  grep -q '^  "signed"' r2/root.json
  [ "$(jq -c '.signed.targets[].hashes | keys' r3/targets.json)" = '["sha512"]' ]
  # targets, snapshot and timestamp signed with ECDSA P-256 (r6) and RSA-PSS
  # (r7) keys: verified through OpenSSL (lib/sign/pkey.c)
  # (root.json holds the PEM keys' newlines raw, as the canonical form
  # writes them: jq refuses such a file, Python's json in strict=False does not)
  schemes() { "$SYSPY" -c 'import json, sys
print(" ".join(sorted({k["scheme"] for k in json.loads(open(sys.argv[1]).read(), strict=False)["signed"]["keys"].values()})))' "$1"; }
  [ "$(schemes r6/root.json)" = "ecdsa-sha2-nistp256 ed25519" ]
  [ "$(schemes r7/root.json)" = "ed25519 rsassa-pss-sha256" ]
  # a flipped signature digit in r6's timestamp: refused, the others verify
  rm -rf "$GL_HOME"
  jq -c '.signatures[0].sig |= (if .[0:1] == "3" then "4" else "3" end + .[1:])' r6/timestamp.json >ts &&
    mv ts r6/timestamp.json
  gl-verify pin r6 >/dev/null
  run --separate-stderr gl-verify install r6 tools/docs/docs-1.0.0.tar.gz
  [ "$status" -eq 1 ]
  json '.error == "bad_signature" or .error == "threshold"'
}

@test "a @tufjs/models repository with a delegated role, then updated (root rotation, a remove), followed by gl-verify" {
  run --separate-stderr write_repo --out r --keys k --delegate team='tools/*' \
    --target tools/docs-1.0.0.tar.gz=docs-1.0.0.tar.gz --target docs-1.0.0.tar.gz=docs-1.0.0.tar.gz
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  pin_install r tools/docs-1.0.0.tar.gz
  [ "$(json -c .release.publisher)" = "[\"$(jq -r '.signed.delegations.roles[0].keyids[0]' r/1.targets.json)\"]" ]
  run --separate-stderr write_repo --out r --keys k --rotate-root --remove docs-1.0.0.tar.gz
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  run --separate-stderr gl-verify install r tools/docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(jq .signed.version "$GL_HOME"/trust/*/root.json)" = 2 ]
  run --separate-stderr gl-verify install r docs-1.0.0.tar.gz
  refused bad_signature
}
