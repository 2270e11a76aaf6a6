#!/usr/bin/env bats
# gl-verify over HTTP (issue 16): REPO is a URL, every metadata and target
# read goes through lib/sign/repo.h -> lib/sign/fetch.h. The same TUF checks as from a
# directory (tests/tuf.bats), from a loopback server that serves the
# repository (tests/fixtures/tuf/serve.py), and the transport's own: a
# redirect to another host, an endless metadata file, an endless target.
bats_require_minimum_version 1.5.0
load helpers
load fixtures/sign/helpers
load fixtures/tuf/serve

setup() {
  gl_setup
  new_repo
  gl-verify pin repo >/dev/null
  serve_start WWW .
  U=http://127.0.0.1:$WWW_PORT/repo
}

teardown() { serve_stop_all; }

@test "install from a URL: root chain, timestamp, snapshot, targets, target; the log shows the TUF reads" {
  run --separate-stderr gl-verify install "$U" docs-1.0.0.tar.gz
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$(json .release.sha256)" = "$(sha docs-1.0.0.tar.gz)" ]
  for p in /repo/1.root.json /repo/2.root.json /repo/timestamp.json /repo/2.snapshot.json \
    /repo/2.targets.json "/repo/targets/$(sha docs-1.0.0.tar.gz).docs-1.0.0.tar.gz"; do
    grep -qF "\"path\": \"$p\"" "$WWW_LOG" || { echo "no GET $p"; cat "$WWW_LOG"; false; }
  done
  # pin from a URL too, and a root rotation followed over HTTP
  rm -rf "$GL_HOME"
  run --separate-stderr gl-verify pin "$U"
  [ "$status" -eq 0 ]
  gl-sign keygen --no-passphrase root2 >/dev/null
  gl-sign rotate repo --key root --new-key root2 >/dev/null
  run --separate-stderr gl-verify install "$U/" docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(jq .signed.version "$GL_HOME"/trust/*/root.json)" = 2 ]
}

@test "over HTTP: freeze, rollback, mix-and-match, hash, too few root keys each refused by name" {
  gl-verify install "$U" docs-1.0.0.tar.gz >/dev/null
  mkdir old && cp repo/*.json old/
  gl-sign remove repo --key tk docs-1.0.0.tar.gz >/dev/null
  run --separate-stderr gl-verify install "$U" docs-1.0.0.tar.gz
  refused bad_signature
  # rollback: the old timestamp replayed
  cp repo/timestamp.json ts3.json
  cp old/timestamp.json repo/timestamp.json
  run --separate-stderr gl-verify install "$U" docs-1.0.0.tar.gz
  refused rollback
  [[ "$(json .detail)" == *"$U/timestamp.json: timestamp version 2 is lower than the trusted"* ]]
  cp ts3.json repo/timestamp.json
  # mix-and-match (on a host that has not seen targets v3): 3.targets.json serves version 2
  rm -rf "$GL_HOME/trust" && gl-verify pin repo >/dev/null
  cp repo/3.targets.json t3.json && cp old/targets.json repo/3.targets.json
  run --separate-stderr gl-verify install "$U" docs-1.0.0.tar.gz
  refused rollback
  [[ "$(json .detail)" == *"$U/3.targets.json: holds targets version 2"* ]]
  cp t3.json repo/3.targets.json
  # freeze: an expired timestamp
  gl-sign timestamp repo --key tk --expires 2001-01-01T00:00:00Z >/dev/null 2>&1
  run --separate-stderr gl-verify install "$U" docs-1.0.0.tar.gz
  refused expired
  gl-sign timestamp repo --key tk >/dev/null
  # hash: a target whose bytes differ (same length)
  gl-sign pack rel docs-1.0.1.tar.gz >/dev/null
  gl-sign add repo --key tk docs-1.0.1.tar.gz >/dev/null
  t="repo/targets/$(sha docs-1.0.1.tar.gz).docs-1.0.1.tar.gz"
  rm "$t" && cp docs-1.0.1.tar.gz "$t"
  "$SYSPY" -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[5]^=1; open(p,"wb").write(b)' "$t"
  run --separate-stderr gl-verify install "$U" docs-1.0.1.tar.gz
  refused hash
  cp docs-1.0.1.tar.gz "$t"
  run --separate-stderr gl-verify install "$U" docs-1.0.1.tar.gz
  [ "$status" -eq 0 ]
  # a root signed by a key the trusted root does not list
  gl-sign keygen --no-passphrase evil >/dev/null
  pysign root repo 2 --root-key evil --targets-key tk --consistent --sign evil
  run --separate-stderr gl-verify install "$U" docs-1.0.1.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"$U/2.root.json: 0 valid signatures from distinct keys of the root role of root version 1"* ]]
}

@test "a redirect to another host is refused (fetch), and nothing is read from it" {
  run --separate-stderr gl-verify install "http://127.0.0.1:$WWW_PORT/_/other/repo" docs-1.0.0.tar.gz
  refused fetch
  [[ "$(json .detail)" == *"redirected to http://localhost:$WWW_PORT/repo/1.root.json, another host"* ]]
  ! grep -q '"host": "localhost:' "$WWW_LOG"
  # the same server under its own name: same-origin redirects are followed
  run --separate-stderr gl-verify install "http://127.0.0.1:$WWW_PORT/_/hop/1/repo" docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "endless metadata and an endless target over HTTP are cut at their caps (length)" {
  # a timestamp of a gigabyte (sparse): its Content-Length is above the cap
  mkdir -p site/repo
  cp -r repo/. site/repo/
  serve_start EVIL site
  truncate -s 1G site/repo/timestamp.json
  E=http://127.0.0.1:$EVIL_PORT/repo
  run --separate-stderr timeout 60 gl-verify install "$E" docs-1.0.0.tar.gz
  refused length
  [[ "$(json .detail)" == *"timestamp.json"* ]]
  cp repo/timestamp.json site/repo/timestamp.json
  t="site/repo/targets/$(sha docs-1.0.0.tar.gz).docs-1.0.0.tar.gz"
  rm "$t" && cp docs-1.0.0.tar.gz "$t" && truncate -s 4G "$t"
  run --separate-stderr timeout 60 gl-verify install "$E" docs-1.0.0.tar.gz
  refused length
  [[ "$(json .detail)" == *"longer than the $(stat -c %s docs-1.0.0.tar.gz) bytes targets.json says"* ]]
  [ -z "$(ls "$GL_HOME/releases")" ]
}

@test "a repository URL that is not there: fetch naming the URL and the status" {
  run --separate-stderr gl-verify install "http://127.0.0.1:$WWW_PORT/nothing" docs-1.0.0.tar.gz
  [ "$status" -eq 1 ]
  [[ "$(json .error)" == not_pinned || "$(json .error)" == fetch ]]
  run --separate-stderr gl-verify pin "http://127.0.0.1:$WWW_PORT/nothing"
  refused fetch
  [[ "$(json .detail)" == *"/nothing/root.json"*"404"* ]]
}
