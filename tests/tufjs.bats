#!/usr/bin/env bats
# The tuf-js harness (issue 16): repositories written with @tufjs/models by
# tests/fixtures/tuf/write-repo.mjs are read by tuf-js's Updater
# (tests/fixtures/tuf/updater.mjs) over tests/fixtures/tuf/serve.py on
# loopback — a self-test of the peers that gl-sign and gl-verify are checked
# against (both from npm through scripts/tufjs.sh, never vendored). Each
# option of the writer is shown to produce what it says, and the client to
# take it (or to refuse what TUF says it must refuse).
#
# sanitizers: no — no gl-* code runs here (node, @tufjs/models and Python's http.server only): it is the self-test of the harness
bats_require_minimum_version 1.5.0
load helpers
load fixtures/tuf/serve
load fixtures/tuf/tufjs

setup_file() { tufjs_setup_file; }

setup() {
  gl_setup
  head -c 70000 /dev/urandom >a.tgz
  printf 'bee\n' >b.tgz
}
teardown() { serve_stop_all; }

# client [ARGS…] — tuf-js against the repository served as REPO
client() {
  tufjs_update --metadata-url "http://127.0.0.1:$REPO_PORT" \
    --targets-url "http://127.0.0.1:$REPO_PORT/targets" --state "$PWD/state" "$@"
}
sum() { sha256sum <"$1" | cut -d' ' -f1; }

@test "tufjs: a fresh repository (canonical, consistent snapshots, a path with '/', a delegated role) is refreshed and its targets download with the right sha256" {
  run -0 write_repo --out repo --keys keys --target a.tgz=a.tgz --target dir/sub/b.tgz=b.tgz \
    --delegate 'pkgs=pkgs/*' --target pkgs/c.tgz=b.tgz --custom '{"name":"a","version":"1.0.0"}'
  json '.versions == {"root":1,"timestamp":1,"snapshot":1,"targets":1}'
  # consistent snapshots: versioned metadata, hash-prefixed targets, no plain names
  [ -f repo/1.root.json ] && [ -f repo/1.snapshot.json ] && [ -f repo/1.targets.json ] && [ -f repo/1.pkgs.json ]
  [ ! -e repo/snapshot.json ] && [ ! -e repo/targets.json ] && [ ! -e repo/targets/a.tgz ]
  [ -f "repo/targets/dir/sub/$(sum b.tgz).b.tgz" ]
  # canonical: one line, keys sorted
  [ "$(wc -l <repo/1.targets.json)" -eq 0 ]
  jq -e '.signed.consistent_snapshot == true and .signed.spec_version == "1.0.31"
    and (.signed.roles | keys) == ["root","snapshot","targets","timestamp"]' repo/root.json
  jq -e '.signed.delegations.roles[0] | .name == "pkgs" and .terminating and .paths == ["pkgs/*"]' repo/1.targets.json
  jq -e '.signed.targets["a.tgz"].custom == {"name":"a","version":"1.0.0"}' repo/1.targets.json
  serve_start REPO repo
  run -0 client --root repo/root.json --target dir/sub/b.tgz
  json ".ok and .path == \"dir/sub/b.tgz\" and .sha256 == \"$(sum b.tgz)\""
  run -0 client --target a.tgz
  json ".sha256 == \"$(sum a.tgz)\" and .length == 70000"
  run -0 client --target pkgs/c.tgz
  json ".sha256 == \"$(sum b.tgz)\""
  # a path outside the delegation's pattern is not taken from it
  run -1 client --target pkgs-other/c.tgz
}

@test "tufjs: --pretty --no-consistent --sha512 write what they say, and tuf-js takes it" {
  run -0 write_repo --out repo --keys keys --pretty --no-consistent --sha512 --target x/y.tgz=a.tgz
  [ -f repo/snapshot.json ] && [ -f repo/targets.json ] && [ -f repo/targets/x/y.tgz ]
  [ ! -e repo/1.snapshot.json ] && [ ! -e repo/1.targets.json ]
  [ "$(wc -l <repo/targets.json)" -gt 5 ]
  head -c 200 repo/targets.json | grep -q '^  "signatures"\|^  "signed"'
  jq -e '.signed.consistent_snapshot == false' repo/root.json
  jq -e '.signed.targets["x/y.tgz"].hashes | keys == ["sha512"]' repo/targets.json
  jq -e ".signed.targets[\"x/y.tgz\"].hashes.sha512 == \"$(sha512sum <a.tgz | cut -d' ' -f1)\"" repo/targets.json
  serve_start REPO repo
  run -0 client --root repo/root.json --target x/y.tgz
  json ".sha256 == \"$(sum a.tgz)\""
}

@test "tufjs: the root keys are written in gl-sign's NAME.pub format; keyids are sha256 of the canonical key; --ssl-keys adds keyid_hash_algorithms" {
  run -0 write_repo --out repo --keys keys --target a.tgz=a.tgz
  for r in root targets snapshot timestamp; do
    jq -e 'keys == ["keytype","keyval","scheme"] and .keytype == "ed25519" and .scheme == "ed25519"
      and (.keyval.public | test("^[0-9a-f]{64}$"))' keys/$r.pub
    id=$(jq -cS . keys/$r.pub | tr -d '\n' | sha256sum | cut -d' ' -f1)
    jq -e --arg id "$id" --arg r "$r" '.signed.roles[$r].keyids == [$id] and (.signed.keys | has($id))' repo/root.json
    [ "$(stat -c %a keys/$r.key)" = 600 ]
  done
  run -0 write_repo --out repo2 --keys keys2 --ssl-keys --target a.tgz=a.tgz
  jq -e '[.signed.keys[].keyid_hash_algorithms] | all(. == ["sha256","sha512"])' repo2/root.json
  serve_start REPO repo2
  run -0 client --root repo2/root.json --target a.tgz
}

@test "tufjs: an update (root rotation, a target removed, --meta-hashes) is followed from the first root; what was removed is gone" {
  run -0 write_repo --out repo --keys keys --target a.tgz=a.tgz --target b.tgz=b.tgz
  serve_start REPO repo
  run -0 client --root repo/root.json --target a.tgz
  run -0 write_repo --out repo --keys keys --rotate-root --remove a.tgz --meta-hashes
  json '.versions == {"root":2,"timestamp":2,"snapshot":2,"targets":2}'
  [ -f repo/2.root.json ] && [ -f keys/root.v1.key ]
  jq -e '.signatures | length == 2' repo/2.root.json
  jq -e '.signed.meta["snapshot.json"] | .length > 0 and (.hashes.sha256 | length) == 64' repo/timestamp.json
  run -0 client --target b.tgz
  json '.versions == {"root":2,"timestamp":2,"snapshot":2,"targets":2}'
  run -1 client --target a.tgz
  json '.error == "no target a.tgz"'
  # a client pinned to the first root walks the chain too
  rm -rf state
  run -0 client --root repo/1.root.json --target b.tgz
  json '.versions.root == 2'
}

@test "tufjs: what the harness writes for attacks is refused by tuf-js — an expired timestamp (freeze), an old timestamp replayed (rollback)" {
  run -0 write_repo --out repo --keys keys --target a.tgz=a.tgz
  cp repo/timestamp.json old-timestamp.json
  serve_start REPO repo
  run -0 client --root repo/root.json
  run -0 write_repo --out repo --keys keys --target b.tgz=b.tgz
  run -0 client --target b.tgz
  json '.versions.timestamp == 2'
  cp repo/timestamp.json new-timestamp.json
  cp old-timestamp.json repo/timestamp.json
  run -1 client --target b.tgz
  json '.name == "BadVersionError" or (.error | test("version"))'
  cp new-timestamp.json repo/timestamp.json
  run -0 write_repo --out repo --keys keys --timestamp-expires -1
  json '.versions.timestamp == 3'
  run -1 client --target b.tgz
  json '.name == "ExpiredMetadataError" or (.error | test("expired"))'
}
