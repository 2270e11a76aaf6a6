#!/usr/bin/env bats
# make deb (issue 17; docs/install.md): scripts/deb.sh builds
# germline_VERSION_ARCH.deb with dpkg-deb; its Depends are the runtime
# libraries (derived by dpkg-shlibdeps) and python3; lintian reports no error
# (and does report one on a package with its copyright file taken out: the
# check is live); the package, unpacked with dpkg -x into a scratch root (this
# machine is shared: nothing is installed into the system's dpkg database),
# runs a python release with the checkout hidden.
# Cost: one package build (about 5 s: make install into a stage, strip, xz)
# shared by the suite, lintian twice (about 12 s and 6 s) where it is
# installed (GL_DEPS_DEB=1 scripts/deps.sh, which make deb runs), else those
# two tests are skipped; the plain pass only.
# sanitizers: no — it packages and runs the plain build (bin/, build/host); the paths it drives run under ASan in gl-sign.bats and runtimes.bats
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
  export DEB_OUT=$BATS_FILE_TMPDIR/deb
  GL_DEB_NO_LINTIAN=1 GL_DEB_OUT="$DEB_OUT" "$GL_ROOT/scripts/deb.sh" >"$BATS_FILE_TMPDIR/deb.log" 2>&1 ||
    { cat "$BATS_FILE_TMPDIR/deb.log" >&3; return 1; }
  VERSION=$(sed -n 's/^#define GL_VERSION "\(.*\)"$/\1/p' "$GL_ROOT/lib/core/util.h")
  export DEB=$DEB_OUT/germline_${VERSION}_$(dpkg --print-architecture).deb
  export VERSION
}

setup() {
  gl_setup
  [ -f "$DEB" ]
}

@test "deb: germline_VERSION_ARCH.deb; Depends: the runtime libraries (dpkg-shlibdeps) and python3" {
  [ "$(dpkg-deb -f "$DEB" Package)" = germline ]
  [ "$(dpkg-deb -f "$DEB" Version)" = "$VERSION" ]
  [ "$(dpkg-deb -f "$DEB" Architecture)" = "$(dpkg --print-architecture)" ]
  deps=$(dpkg-deb -f "$DEB" Depends)
  echo "# Depends: $deps" >&3
  for p in libjq1 libsodium23 libseccomp2 libarchive13 libcurl4 libc6 python3; do
    [[ ", $deps," == *", $p "* ]] || { echo "no $p in: $deps"; return 1; }
  done
  # every library an ELF file of the package names (DT_NEEDED) comes from a
  # package in Depends (dpkg-shlibdeps' derivation, checked independently)
  dpkg -x "$DEB" root
  for f in root/usr/bin/gl-* root/usr/lib/germline/gl-exec-host root/usr/lib/germline/_germline.so; do
    for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|x86_64|64bit/ {print $NF; exit}')
      [ -n "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')
      pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "/usr$(readlink -f "$path")" 2>/dev/null ||
        dpkg -S "$path" 2>/dev/null || true)
      pkg=$(head -1 <<<"$pkg" | cut -d: -f1)
      [ -n "$pkg" ] || { echo "$f: $lib ($path) belongs to no package"; return 1; }
      [[ ", $deps," == *", $pkg "* ]] || { echo "$f needs $lib from $pkg, not in Depends"; return 1; }
    done
  done
}

@test "deb: the files, owners root:root, modes (gl-exec-host 0755), man pages, copyright" {
  run dpkg-deb -c "$DEB"
  [ "$status" -eq 0 ]
  ! grep -v ' root/root ' <<<"$output"
  grep -E '^-rwxr-xr-x .* \./usr/lib/germline/gl-exec-host$' <<<"$output"
  grep -E '^-rw-r--r-- .* \./usr/lib/germline/germline_host.py$' <<<"$output"
  grep -E '^-rw-r--r-- .* \./usr/lib/germline/_germline.so$' <<<"$output"
  for c in gl-sign gl-verify gl-plan gl-run gl-replay gl-damp; do
    grep -E "^-rwxr-xr-x .* \./usr/bin/$c\$" <<<"$output"
    grep -E "\./usr/share/man/man1/$c\.1\.gz\$" <<<"$output"
  done
  grep -E '\./usr/share/man/man7/germline\.7\.gz$' <<<"$output"
  grep -E '\./usr/share/doc/germline/copyright$' <<<"$output"
  # no file of the build tree is named by the package's paths
  ! grep -F "$GL_ROOT" <<<"$output"
}

@test "deb: lintian reports no error" {
  command -v lintian >/dev/null || skip "lintian is not installed (make deb installs it: GL_DEPS_DEB=1 scripts/deps.sh)"
  run lintian --fail-on error --tag-display-limit 0 "$DEB"
  echo "$output"
  [ "$status" -eq 0 ]
  ! grep -q '^E: ' <<<"$output"
}

@test "deb: off — lintian reports an error on the package without its copyright file" {
  command -v lintian >/dev/null || skip "lintian is not installed (make deb installs it: GL_DEPS_DEB=1 scripts/deps.sh)"
  dpkg-deb -R "$DEB" bad
  rm bad/usr/share/doc/germline/copyright
  dpkg-deb --root-owner-group --build bad bad.deb >/dev/null
  run lintian --fail-on error --tags no-copyright-file bad.deb
  [ "$status" -ne 0 ]
  grep -q '^E: germline: no-copyright-file' <<<"$output"
}

@test "deb: unpacked with dpkg -x, a python release runs from it, the checkout hidden" {
  [ "$(id -u)" = 0 ] || skip "hides the checkout with a mount namespace (root only)"
  R=$BATS_TEST_TMPDIR/root
  dpkg -x "$DEB" "$R"
  cp -r "$FIX/install" "$BATS_TEST_TMPDIR/fixtures"
  printf 'salary 100\n' >"$BATS_TEST_TMPDIR/salary.txt"
  run --separate-stderr env -i PATH="$R/usr/bin:/usr/bin:/bin" GL_HOME="$GL_HOME" HOME="$HOME" \
    T="$BATS_TEST_TMPDIR" GL_ROOT="$GL_ROOT" unshare --mount --propagation private bash -c '
    set -euo pipefail
    mount -t tmpfs -o size=1m,mode=0555 none "$GL_ROOT"
    [ -z "$(ls -A "$GL_ROOT")" ]
    cd "$T"
    [ "$(command -v gl-run)" = "$T/root/usr/bin/gl-run" ]
    gl-sign keygen --no-passphrase root >/dev/null
    gl-sign keygen --no-passphrase tk >/dev/null
    gl-sign init repo --root-key root --targets-key tk >/dev/null
    gl-verify pin repo >/dev/null
    gl-sign pack fixtures/py-count py.tar.gz >/dev/null
    gl-sign add repo --key tk py.tar.gz >/dev/null
    sha=$(gl-verify install repo py.tar.gz | jq -er .release.sha256)
    echo "{\"clearances\":{\"agent\":[\"hr\"]}}" >policy.json
    jq -cn --arg r "$sha" --arg p "$T/salary.txt" \
      "{id:\"c1\",release:\$r,function:\"count\",args:{},consumers:[\"agent\"],
        items:[{name:\"salary.txt\",label:[\"hr\"],path:\$p}]}" |
      gl-plan --policy policy.json | gl-run --policy policy.json'
  [ "$status" -eq 0 ] || { echo "$output $stderr"; return 1; }
  [ "$(jq -c .results[0].value <<<"$output")" = '{"runtime":"python","sizes":{"salary.txt":11}}' ]
  [ "$(man -l "$R/usr/share/man/man1/gl-run.1.gz" 2>/dev/null | grep -c -- '--serve-mcp')" -ge 1 ]
}
