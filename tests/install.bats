#!/usr/bin/env bats
# make install / make uninstall (issue 17; docs/install.md): the tree installed
# with DESTDIR and PREFIX has the right modes, and its commands work from any
# directory with the build tree gone: a python release and a runtime "exec"
# release are signed, pinned, installed, planned and run end to end by the
# installed gl-sign, gl-verify, gl-plan and gl-run alone (PATH holds the
# prefix and /usr/bin, the checkout is hidden under an empty tmpfs in a
# private mount namespace). Off: the exec host installed 0644 (the bug of
# issue 17) fails at exec; an installed tree without its python host does
# not fall back to anything. make uninstall then leaves no file behind.
# sanitizers: no — it installs and runs the plain build (bin/, build/host); every path it drives runs under ASan in runtimes.bats, exec.bats and gl-sign.bats
load helpers
bats_require_minimum_version 1.5.0

PREFIX=/opt/germline

setup() {
  [ "$(id -u)" = 0 ] || skip "hides the checkout with a mount namespace (root only)"
  command -v unshare >/dev/null || skip "unshare (util-linux) is missing"
  gl_setup
  T=$BATS_TEST_TMPDIR
  STAGE=$T/stage
  P=$STAGE$PREFIX
  make -s -C "$GL_ROOT" install DESTDIR="$STAGE" PREFIX="$PREFIX" >"$T/install.log" 2>&1 ||
    { cat "$T/install.log"; return 1; }
  # what the run needs from the checkout, copied out before it is hidden
  cp -r "$FIX/install" "$T/fixtures"
}

teardown() { chmod -R u+w "$T" 2>/dev/null || true; }

# hidden SCRIPT — run bash SCRIPT with the checkout hidden (an empty tmpfs
# over GL_ROOT in a private mount namespace), from a directory outside it,
# with PATH = the installed bin/ and the system's. No variable of the suite
# leaks in but GL_HOME, HOME, T and P. HIDE=0: the checkout stays visible.
hidden() {
  env -i PATH="$P/bin:/usr/bin:/bin" GL_HOME="$GL_HOME" HOME="$HOME" T="$T" P="$P" \
    GL_ROOT="$GL_ROOT" HIDE="${HIDE:-1}" unshare --mount --propagation private bash -c \
    'set -euo pipefail
     if [ "$HIDE" = 1 ]; then
       mount -t tmpfs -o size=1m,mode=0555 none "$GL_ROOT"
       [ -z "$(ls -A "$GL_ROOT")" ]
     fi
     unset GL_ROOT HIDE; mkdir -p "$T/elsewhere"; cd "$T/elsewhere"; '"$1"
}

# the publisher, the host's pin, both releases installed and one call each
RUN_BOTH='
  gl-sign keygen --no-passphrase root >/dev/null
  gl-sign keygen --no-passphrase tk >/dev/null
  gl-sign init repo --root-key root --targets-key tk >/dev/null
  gl-verify pin repo >/dev/null
  for r in py-count exec-count; do
    gl-sign pack "$T/fixtures/$r" "$r.tar.gz" >/dev/null
    gl-sign add repo --key tk "$r.tar.gz" >/dev/null
    gl-verify install repo "$r.tar.gz" | jq -er .release.sha256 >"$r.sha"
  done
  echo "{\"clearances\":{\"agent\":[\"hr\"]}}" >policy.json
  printf "salary 100\n" >"$T/salary.txt"
  for r in py-count exec-count; do
    jq -cn --arg r "$(cat $r.sha)" --arg p "$T/salary.txt" \
      "{id:\$r,release:\$r,function:\"count\",args:{},consumers:[\"agent\"],
        items:[{name:\"salary.txt\",label:[\"hr\"],path:\$p}]}"
  done | gl-plan --policy policy.json | gl-run --policy policy.json
'

@test "install: modes — commands and gl-exec-host 0755, other files 0644, directories 0755" {
  for c in gl-sign gl-verify gl-plan gl-run gl-replay gl-damp; do
    [ "$(stat -c %a "$P/bin/$c")" = 755 ]
  done
  [ "$(stat -c %a "$P/lib/germline/gl-exec-host")" = 755 ]
  for f in germline_host.py _germline.so twin.cjs; do [ -f "$P/lib/germline/$f" ]; done
  run find "$STAGE" -type f ! -perm 0644 ! -path "$P/bin/*" ! -path "$P/lib/germline/gl-exec-host"
  [ -z "$output" ] || { echo "not 0644: $output"; return 1; }
  run find "$STAGE" -type d ! -perm 0755
  [ -z "$output" ] || { echo "directories not 0755: $output"; return 1; }
  for m in gl-sign gl-verify gl-plan gl-run gl-replay gl-damp; do
    [ -f "$P/share/man/man1/$m.1" ]
  done
  [ -f "$P/share/man/man7/germline.7" ]
  [ -f "$P/share/bash-completion/completions/gl-run" ]
  [ -f "$P/share/zsh/site-functions/_gl-run" ]
}

@test "install: a python and an exec release end to end from the prefix, the checkout hidden" {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  run --separate-stderr hidden "$RUN_BOTH"
  [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 2 ]
  py=$(sed -n 1p <<<"$output")
  ex=$(sed -n 2p <<<"$output")
  [ "$(jq -r '.ok' <<<"$py")" = true ] || { echo "$py"; return 1; }
  [ "$(jq -c '.results[0].value' <<<"$py")" = '{"runtime":"python","sizes":{"salary.txt":11}}' ]
  [ "$(jq -c '.results[0].label' <<<"$py")" = '["hr"]' ]
  [ "$(jq -r '.ok' <<<"$ex")" = true ] || { echo "$ex"; return 1; }
  [ "$(jq -c '.results[0].value' <<<"$ex")" = '{"runtime":"exec","sizes":{"salary.txt":11}}' ]
  # and gl-run's host was the installed one: the hidden checkout held nothing
  [ "$(jq -r .enforcement.seccomp <<<"$py")" = enforced ]
}

@test "install: off — gl-exec-host installed 0644 (issue 17's bug) fails the exec release at exec" {
  command -v node >/dev/null || skip "node is not installed (scripts/deps.sh)"
  chmod 0644 "$P/lib/germline/gl-exec-host"
  run --separate-stderr hidden "$RUN_BOTH"
  ex=$(sed -n 2p <<<"$output")
  [ "$(jq -r .results[0].ok <<<"$(sed -n 1p <<<"$output")")" = true ]
  [ "$(jq -r .ok <<<"$ex")" = false ] || [ "$(jq -r .results[0].ok <<<"$ex")" = false ]
  [[ "$ex$stderr" == *"ermission denied"* ]] || { echo "$ex $stderr"; return 1; }
  echo "# $ex" >&3
}

@test "install: off — without the installed python host, gl-run finds none (nothing from the build tree)" {
  rm "$P/lib/germline/germline_host.py"
  # the hiding is what this suite rests on: with the checkout visible, gl-run
  # falls back to the host of the build tree it was built in, and succeeds
  HIDE=0 run --separate-stderr hidden "$RUN_BOTH"
  [ "$(jq -r '.results[0].ok' <<<"$(sed -n 1p <<<"$output")")" = true ] || { echo "$output $stderr"; return 1; }
  rm -rf "$GL_HOME" "$T/elsewhere"
  run --separate-stderr hidden "$RUN_BOTH"
  py=$(sed -n 1p <<<"$output")
  [ "$(jq -r '.results[0].ok // .ok' <<<"$py")" = false ] || { echo "$output"; return 1; }
  [[ "$py$stderr" != *'"sizes"'* ]]
  echo "# $py ${stderr:0:300}" >&3
}

@test "uninstall: no file or link of germline is left in the prefix" {
  run make -s -C "$GL_ROOT" uninstall DESTDIR="$STAGE" PREFIX="$PREFIX"
  [ "$status" -eq 0 ]
  find "$STAGE" | sort # the listing, for the log
  run find "$STAGE" ! -type d
  [ -z "$output" ] || { echo "left behind: $output"; return 1; }
  [ ! -e "$P/lib/germline" ]
  # what remains are the empty shared directories (bin, share/man/man1, …)
  run find "$P" -mindepth 1 -type d -empty
  for d in $output; do
    case ${d#"$P"/} in
      bin | lib | share/man/man1 | share/man/man7 | share/bash-completion/completions | \
        share/zsh/site-functions) ;;
      *) echo "unexpected $d"; return 1 ;;
    esac
  done
}
