#!/usr/bin/env bats
# gl-verify pin|install (SPEC §3): the round trip and every refusal,
# each provoked for real against metadata written by gl-sign or by
# Debian's securesystemslib (tests/fixtures/sign/pysign.py).
bats_require_minimum_version 1.5.0
load helpers
load fixtures/sign/helpers

setup() { gl_setup; }

# serve_targets — the publisher's snapshot and timestamp now name repo/targets.json
# as it is (pysign publish, signed with tk): what a test did to targets.json is
# what the client reads, and only the targets checks can refuse it.
serve_targets() { pysign publish repo --sign tk; }

# ---- round trip -------------------------------------------------------------

@test "round trip: keygen, init, pack, add, pin, install prints the release record" {
  new_repo
  run --separate-stderr gl-verify pin repo
  [ "$status" -eq 0 ]
  [ "$(json .ok)" = true ]
  [ "$(json .version)" = 1 ]
  [ "$(json '.keyids.root[0]')" = "$(sha root.pub)" ]
  [ "$(json '.keyids.targets[0]')" = "$(sha tk.pub)" ]
  pub=$(json .publisher)
  [[ "$pub" =~ ^[0-9a-f]{16}$ ]]
  [ -f "$GL_HOME/trust/$pub/root.json" ]
  cmp "$GL_HOME/trust/$pub/root.json" repo/1.root.json

  h=$(sha docs-1.0.0.tar.gz)
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json .ok)" = true ]
  [ "$(json .release.sha256)" = "$h" ]
  [ "$(json .release.name)" = docs ]
  [ "$(json .release.version)" = 1.0.0 ]
  [ "$(json .release.path)" = "$(cd "$GL_HOME" && pwd -P)/releases/$h" ]
  [ "$(json .release.manifest.entry)" = docs_tool ]
  [ "$(json '.release.publisher | length')" = 1 ]
  [ "$(json '.release.publisher[0]')" = "$(sha tk.pub)" ]
  # the tree: the release's files, nothing writable
  d="$GL_HOME/releases/$h"
  cmp "$d/docs_tool.py" rel/docs_tool.py
  cmp "$d/manifest.json" rel/manifest.json
  [ -z "$(find "$d" -perm /222)" ]
  # the record: the same release plus the extractor's files map
  rec="$GL_HOME/releases/$h.json"
  jq -e --argjson r "$(json .release)" '(del(.files)) == $r' "$rec"
  [ "$(jq -r '.files["docs_tool.py"]' "$rec")" = "$(sha rel/docs_tool.py)" ]
  # the trust store accepted targets version 2
  [ "$(jq -r .signed.version "$GL_HOME/trust/$pub/targets.json")" = 2 ]
}

@test "installing again re-verifies and prints the same record; a path names its target" {
  new_repo
  gl-verify pin repo >/dev/null
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  first=$output
  run --separate-stderr gl-verify install repo "$PWD/repo/targets/docs-1.0.0.tar.gz"
  [ "$status" -eq 0 ]
  [ "$output" = "$first" ]
  # re-verification is real: a tampered copy of an installed release is refused
  cp repo/targets/docs-1.0.0.tar.gz ./other.tar.gz
  printf 'x' >>other.tar.gz
  mv other.tar.gz docs-1.0.0.tar.gz
  run --separate-stderr gl-verify install repo ./docs-1.0.0.tar.gz
  refused length
}

@test "pin is idempotent and keeps a root advanced since" {
  new_repo
  run --separate-stderr gl-verify pin repo
  first=$output
  run --separate-stderr gl-verify pin repo/root.json
  [ "$status" -eq 0 ]
  [ "$output" = "$first" ]
  [ "$(ls "$GL_HOME/trust" | wc -l)" = 1 ]
  gl-sign keygen --no-passphrase root2 >/dev/null
  gl-sign rotate repo --key root --new-key root2 >/dev/null
  gl-verify install repo docs-1.0.0.tar.gz >/dev/null
  # pinning the current root.json (version 2) again finds the same publisher
  run --separate-stderr gl-verify pin repo
  [ "$status" -eq 0 ]
  [ "$(json .version)" = 2 ]
  [ "$(json .publisher)" = "$(echo "$first" | jq -r .publisher)" ]
  [ "$(ls "$GL_HOME/trust" | wc -l)" = 1 ]
}

# ---- not_pinned ---------------------------------------------------------------

@test "not_pinned: nothing pinned, or another publisher pinned" {
  new_repo
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused not_pinned
  [[ "$(json .detail)" == *"gl-verify pin repo"* ]]
  mkdir other && cd other
  new_repo
  gl-verify pin repo >/dev/null
  cd ..
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused not_pinned
  [ ! -e "$GL_HOME/releases/$(sha docs-1.0.0.tar.gz)" ]
}

# ---- bad_signature ----------------------------------------------------------

@test "bad_signature: a flipped signature of an authorised key" {
  new_repo
  gl-verify pin repo >/dev/null
  jq -cj '.signatures[0].sig |= (if .[0:1] == "0" then "1" else "0" end) + .[1:]' \
    repo/targets.json >t && mv t repo/targets.json
  serve_targets
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_signature
  [[ "$(json .detail)" == *"does not verify"* ]]
  [ ! -e "$GL_HOME/releases/$(sha docs-1.0.0.tar.gz)" ]
}

@test "bad_signature: signed content changed after signing" {
  new_repo
  gl-verify pin repo >/dev/null
  jq -cj '.signed.expires = "2098-01-01T00:00:00Z"' repo/targets.json >t && mv t repo/targets.json
  serve_targets
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_signature
}

@test "bad_signature even when other signatures meet the threshold; unknown keyids are ignored" {
  new_repo
  gl-verify pin repo >/dev/null
  pysign keygen other >/dev/null
  pysign sign repo/targets.json --key other --append
  serve_targets
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json -c '.release.publisher')" = "$(jq -nc --arg k "$(sha tk.pub)" '[$k]')" ]
  # a second, corrupt signature by the authorised key refuses the document
  jq -cj --arg k "$(sha tk.pub)" '.signatures += [{"keyid":$k,"sig":("00"*64)}]' \
    repo/targets.json >t && mv t repo/targets.json
  jq -cj '.signed.version += 1' repo/targets.json >t && mv t repo/targets.json
  pysign sign repo/targets.json --key tk
  jq -cj --arg k "$(sha tk.pub)" '.signatures += [{"keyid":$k,"sig":("00"*64)}]' \
    repo/targets.json >t && mv t repo/targets.json
  serve_targets
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_signature
}

@test "bad_signature: a target the metadata does not list" {
  new_repo
  gl-verify pin repo >/dev/null
  cp docs-1.0.0.tar.gz repo/targets/unlisted.tar.gz
  run --separate-stderr gl-verify install repo unlisted.tar.gz
  refused bad_signature
  [[ "$(json .detail)" == *'no target named "unlisted.tar.gz"'* ]]
}

# ---- non-canonical metadata ------------------------------------------------

@test "any JSON encoding is read, signatures over its canonical form; a duplicate key is refused" {
  new_repo
  gl-verify pin repo >/dev/null
  cp repo/targets.json good.json
  # whitespace, a float spelling of an integer, a trailing newline: the same
  # document, its signature over the canonical form verifies (TUF writers
  # pretty-print)
  for kind in space float newline; do
    cp good.json repo/targets.json
    pysign mangle repo/targets.json "$kind"
    serve_targets
    rm -rf "$GL_HOME/trust"/*/targets.json "$GL_HOME/trust"/*/snapshot.json "$GL_HOME/trust"/*/timestamp.json
    run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
    [ "$status" -eq 0 ] || { echo "$kind: $output $stderr"; false; }
  done
  jq . good.json >repo/targets.json
  serve_targets
  rm -rf "$GL_HOME/trust"/*/targets.json "$GL_HOME/trust"/*/snapshot.json "$GL_HOME/trust"/*/timestamp.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  # a duplicate key is ambiguous: which "version" was signed?
  cp good.json repo/targets.json
  pysign mangle repo/targets.json dup
  serve_targets
  rm -rf "$GL_HOME/trust"/*/targets.json "$GL_HOME/trust"/*/snapshot.json "$GL_HOME/trust"/*/timestamp.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_metadata
  [[ "$(json .detail)" == *"duplicate"* ]]
}

@test "a control character, signed by securesystemslib, verifies over its verbatim canonical form" {
  pysign keygen root >/dev/null
  pysign keygen tk >/dev/null
  pysign root repo 1 --root-key root --targets-key tk --sign root
  pysign targets repo --sign tk
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  gl-sign add repo --key tk docs-1.0.0.tar.gz >/dev/null
  gl-verify pin repo >/dev/null
  pysign mangle repo/targets.json control --key tk
  grep -q 'do\\u0007cs' repo/targets.json
  pysign publish repo --sign tk
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [[ "$stderr" == *'targets.json custom.name "do\\x07cs"'* ]] || [[ "$stderr" == *'custom.name'* ]]
  # the same document re-signed over the escaped form (not securesystemslib's) fails
  "$SYSPY" - repo/targets.json tk "$FIX/sign" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
import pysign
doc = json.load(open(sys.argv[1]))
doc["signed"]["version"] += 1
wrong = json.dumps(doc["signed"], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
from securesystemslib import keys
sk = pysign.ssl_key(sys.argv[2])
doc["signatures"] = [{"keyid": sk["keyid"], "sig": keys.create_signature(sk, wrong)["sig"]}]
open(sys.argv[1], "w").write(json.dumps(doc))
PY
  pysign publish repo --sign tk
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_signature
}

@test "bad_metadata and length: oversized and malformed metadata; unknown fields are kept and ignored" {
  new_repo
  gl-verify pin repo >/dev/null
  cp repo/timestamp.json ts.json
  head -c $((16 * 1024 + 1)) /dev/zero | tr '\0' ' ' >repo/timestamp.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused length
  [[ "$(json .detail)" == *"repo/timestamp.json: longer than 16384 bytes"* ]]
  cp ts.json repo/timestamp.json
  cp repo/targets.json good.json
  jq -cj '.signed.targets["docs-1.0.0.tar.gz"].length = -1' good.json >repo/targets.json
  pysign sign repo/targets.json --key tk
  serve_targets
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused bad_metadata
  [[ "$(json .detail)" == *"length is not an integer >= 0"* ]]
  # a field TUF does not define (or one it does that this host ignores): covered by
  # the signature, ignored
  jq -cj '.signed.delegations = {"keys":{},"roles":[]} | .signed.x_note = "hi"' good.json >repo/targets.json
  pysign sign repo/targets.json --key tk
  serve_targets
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(jq -r .signed.x_note "$GL_HOME"/trust/*/targets.json)" = hi ]
}

# ---- threshold ----------------------------------------------------------------

@test "threshold: 1 of 2 signatures, and one key signing twice, do not meet a threshold of 2" {
  for k in r1 r2 t1 t2; do gl-sign keygen --no-passphrase $k >/dev/null; done
  gl-sign init repo --root-key r1 r2 --targets-key t1 t2 --threshold 2 >/dev/null
  make_release rel
  gl-sign pack rel docs-1.0.0.tar.gz >/dev/null
  gl-sign add repo --key t1 t2 docs-1.0.0.tar.gz >/dev/null
  gl-verify pin repo >/dev/null
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json '.release.publisher | length')" = 2 ]
  cp repo/targets.json two.json
  # bump the version so that rollback cannot be what refuses
  jq -cj '.signed.version += 1' two.json >repo/targets.json
  pysign sign repo/targets.json --key t1
  pysign publish repo --sign t1 t2
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"1 valid signature from distinct keys of the targets role"* ]]
  pysign sign repo/targets.json --key t1 t1
  [ "$(jq '.signatures | length' repo/targets.json)" = 2 ]
  pysign publish repo --sign t1 t2
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  pysign sign repo/targets.json --key t1 t2
  pysign publish repo --sign t1 t2
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "pin refuses a root not signed by its own threshold" {
  pysign keygen r1 >/dev/null
  pysign keygen r2 >/dev/null
  pysign keygen tk >/dev/null
  pysign root repo 1 --root-key r1 r2 --targets-key tk --threshold 2 --sign r1
  run --separate-stderr gl-verify pin repo
  refused threshold
  [ ! -e "$GL_HOME/trust" ] || [ -z "$(ls "$GL_HOME/trust")" ]
}

# ---- expired ------------------------------------------------------------------

@test "expired: pin refuses an expired root; install refuses a root that expired since" {
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  run --separate-stderr gl-sign init old --root-key root --targets-key tk --expires 2001-01-01T00:00:00Z
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"already expired"* ]]
  run --separate-stderr gl-verify pin old
  refused expired
  [[ "$(json .detail)" == *"expired at 2001-01-01T00:00:00Z"* ]]

  mkdir fresh && cd fresh
  new_repo
  gl-verify pin repo >/dev/null
  gl-sign keygen --no-passphrase root2 >/dev/null
  gl-sign rotate repo --key root --new-key root2 --expires 2001-01-01T00:00:00Z >/dev/null 2>&1
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused expired
  [[ "$(json .detail)" == *"2.root.json: root version 2 expired"* ]]
}

@test "expired: targets.json past its expiry" {
  new_repo
  gl-verify pin repo >/dev/null
  gl-sign add repo --key tk --expires 2001-01-01T00:00:00Z docs-1.0.0.tar.gz >/dev/null 2>&1
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused expired
  [[ "$(json .detail)" == *"repo/3.targets.json: targets version 3 expired"* ]]
}

# ---- rollback -----------------------------------------------------------------

@test "rollback: an older timestamp, snapshot or targets replayed; a same-version one is ignored" {
  new_repo
  gl-verify pin repo >/dev/null
  gl-verify install repo docs-1.0.0.tar.gz >/dev/null
  mkdir v2 && cp repo/timestamp.json repo/snapshot.json repo/targets.json v2/
  make_release rel2 docs 1.1.0
  gl-sign pack rel2 docs-1.1.0.tar.gz >/dev/null
  gl-sign add repo --key tk docs-1.1.0.tar.gz >/dev/null
  run --separate-stderr gl-verify install repo docs-1.1.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json .release.version)" = 1.1.0 ]
  cp repo/timestamp.json ts3.json
  # the whole old state replayed (as a stale mirror serves it)
  cp v2/* repo/
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused rollback
  [[ "$(json .detail)" == *"timestamp version 2 is lower than the trusted 3"* ]]
  # the same timestamp version with other content: the trusted one is kept
  cp ts3.json repo/timestamp.json
  jq -cj '.signed.expires = "2098-06-01T00:00:00Z"' ts3.json >repo/timestamp.json
  pysign sign repo/timestamp.json --key tk
  run --separate-stderr gl-verify install repo docs-1.1.0.tar.gz
  [ "$status" -eq 0 ]
  cmp ts3.json "$GL_HOME"/trust/*/timestamp.json
}

# ---- the root chain ----------------------------------------------------------

@test "root rotation is followed as a chain and stored" {
  new_repo
  run --separate-stderr gl-verify pin repo
  pub=$(json .publisher)
  for k in root2 root3; do gl-sign keygen --no-passphrase $k >/dev/null; done
  gl-sign rotate repo --key root --new-key root2 >/dev/null
  gl-sign rotate repo --key root2 --new-key root3 >/dev/null
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  cmp "$GL_HOME/trust/$pub/root.json" repo/3.root.json
}

@test "threshold: a root that skips a version" {
  new_repo
  gl-verify pin repo >/dev/null
  for k in root2 root3; do gl-sign keygen --no-passphrase $k >/dev/null; done
  gl-sign rotate repo --key root --new-key root2 >/dev/null
  gl-sign rotate repo --key root2 --new-key root3 >/dev/null
  mv repo/2.root.json two.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"root version 3 cannot be reached from the trusted version 1"* ]]
  # version 3 under the name of version 2
  cp repo/3.root.json repo/2.root.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"holds root version 3, expected 2"* ]]
  mv two.json repo/2.root.json
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "threshold: a new root not signed by the previous root's threshold" {
  new_repo
  gl-verify pin repo >/dev/null
  gl-sign keygen --no-passphrase root2 >/dev/null
  pysign root repo 2 --root-key root2 --targets-key tk --sign root2
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  [[ "$(json .detail)" == *"2.root.json: 0 valid signatures from distinct keys of the root role of root version 1;"* ]]
  # signed by the old root only, not by its own new key: also refused
  pysign root repo 2 --root-key root2 --targets-key tk --sign root
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  # signed by both: accepted
  pysign root repo 2 --root-key root2 --targets-key tk --sign root root2
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
}

@test "a rotated targets role resets the rollback baseline; old targets keys stop counting" {
  new_repo
  gl-verify pin repo >/dev/null
  gl-verify install repo docs-1.0.0.tar.gz >/dev/null
  gl-sign keygen --no-passphrase tk2 >/dev/null
  pysign root repo 2 --root-key root --targets-key tk2 --sign root
  # targets.json still signed by tk: no longer a targets key
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused threshold
  pysign targets repo --sign tk2
  pysign add-target repo docs-1.0.0.tar.gz --sign tk2
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  [ "$status" -eq 0 ]
  [ "$(json '.release.publisher[0]')" = "$(sha tk2.pub)" ]
}

# ---- the archive ------------------------------------------------------------

@test "length: an archive one byte longer, or two bytes shorter" {
  new_repo
  gl-verify pin repo >/dev/null
  printf 'x' >>repo/targets/docs-1.0.0.tar.gz
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused length
  [[ "$(json .detail)" == *"longer than the $(stat -c %s docs-1.0.0.tar.gz) bytes targets.json says"* ]]
  [ -z "$(ls "$GL_HOME/releases")" ]
  # and one byte shorter
  head -c -2 docs-1.0.0.tar.gz >repo/targets/docs-1.0.0.tar.gz
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused length
  [[ "$(json .detail)" == *"$(($(stat -c %s docs-1.0.0.tar.gz) - 2)) bytes, but targets.json says"* ]]
}

@test "hash: same length, one byte changed" {
  new_repo
  gl-verify pin repo >/dev/null
  f=repo/targets/docs-1.0.0.tar.gz
  $SYSPY -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[-5]^=1; open(p,"wb").write(b)' "$f"
  [ "$(stat -c %s $f)" = "$(stat -c %s docs-1.0.0.tar.gz)" ]
  run --separate-stderr gl-verify install repo docs-1.0.0.tar.gz
  refused hash
  [[ "$(json .detail)" == *"SHA-256 is $(sha $f), but targets.json says $(sha docs-1.0.0.tar.gz)"* ]]
  [ -z "$(ls "$GL_HOME/releases")" ]
}

@test "bad_manifest: no manifest.json, or an invalid one, signed into targets.json" {
  new_repo
  gl-verify pin repo >/dev/null
  mkdir nomani && printf 'x = 1\n' >nomani/docs_tool.py
  gl-sign pack nomani nomani.tar.gz >/dev/null
  pysign add-target repo nomani.tar.gz --sign tk
  run --separate-stderr gl-verify install repo nomani.tar.gz
  refused bad_manifest
  [[ "$(json .detail)" == nomani.tar.gz:* ]]
  make_release badmani
  jq -c 'del(.entry)' badmani/manifest.json >m && mv m badmani/manifest.json
  gl-sign pack badmani badmani.tar.gz >/dev/null
  pysign add-target repo badmani.tar.gz --sign tk
  run --separate-stderr gl-verify install repo badmani.tar.gz
  refused bad_manifest
  [[ "$(json .detail)" == *entry* ]]
  # nothing installed
  [ -z "$(ls "$GL_HOME/releases")" ]
}

@test "unsafe_archive: install goes through safe extraction" {
  new_repo
  gl-verify pin repo >/dev/null
  $SYSPY "$FIX/archives/hostile.py" dotdot evil.tar.gz --outside "$BATS_TEST_TMPDIR/pwned"
  pysign add-target repo evil.tar.gz --sign tk
  run --separate-stderr gl-verify install repo evil.tar.gz
  refused unsafe_archive
  [ ! -e "$BATS_TEST_TMPDIR/pwned" ]
  [ -z "$(ls "$GL_HOME/releases")" ]
}

@test "usage and I/O errors exit 2" {
  run --separate-stderr gl-verify
  [ "$status" -eq 2 ]
  run --separate-stderr gl-verify pin nowhere
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"nowhere"* ]]
  new_repo
  gl-verify pin repo >/dev/null
  run --separate-stderr gl-verify install repo
  [ "$status" -eq 2 ]
  run --separate-stderr gl-verify --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"gl-verify install REPO PATH"* ]]
}
