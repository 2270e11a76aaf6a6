#!/usr/bin/env bats
# The man pages (issue 17): man/gl-*.1 for the six commands and germline(7).
# Each renders with groff's man macros and every warning on (-ww) without a
# single warning; each documents every flag its command's --help prints (a
# flag added to --help without its page fails here, naming the flag), and the
# sections an operator looks for. The checker is shown to fail on a page with
# a flag taken out (its mechanism off) before it passes the real pages.
# sanitizers: no — it runs only --help of each command; the option parsers run under ASan in every other suite
load helpers
bats_require_minimum_version 1.5.0

MAN=$GL_ROOT/man
CMDS=(gl-sign gl-verify gl-plan gl-run gl-replay gl-damp)

setup() {
  command -v groff >/dev/null || skip "groff is not installed (scripts/deps.sh: groff-base)"
  gl_setup
}

# render PAGE — plain ASCII, one line per paragraph (no fill breaks, no
# hyphenation), so that a flag is never split across lines.
render() { groff -man -Tascii -P-cbou -rLL=4000n -rHY=0 "$1" 2>/dev/null; }

# help_flags CMD — every --flag CMD's --help prints, sorted, once each
help_flags() { "$1" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }

# missing_flags CMD PAGE — the flags of CMD's --help that PAGE does not
# document, one per line as "CMD: FLAG"; nothing when all are there.
missing_flags() {
  local text f
  text=$(render "$2")
  for f in $(help_flags "$1"); do
    grep -qE -- "(^|[^a-z0-9-])${f}([^a-z0-9-]|\$)" <<<"$text" || echo "$1: $f"
  done
}

@test "man: every page renders with groff -man -Tutf8 -ww without a warning" {
  for p in "${CMDS[@]/#/$MAN/}"; do
    [ -f "$p.1" ] || { echo "missing $p.1"; return 1; }
  done
  [ -f "$MAN/germline.7" ]
  for p in "$MAN"/*.1 "$MAN"/*.7; do
    run --separate-stderr groff -man -Tutf8 -ww "$p"
    [ "$status" -eq 0 ] || { echo "$p: groff exit $status"; return 1; }
    [ -z "$stderr" ] || { echo "$p: $stderr"; return 1; }
    [ "${#output}" -gt 2000 ]
  done
}

@test "man: the flag checker names a flag the page lacks (checker off: page with --pool removed)" {
  help_flags gl-run | grep -qx -- --pool
  sed '/pool/d' "$MAN/gl-run.1" >gl-run.1
  ! grep -q -- 'pool' gl-run.1
  run missing_flags gl-run gl-run.1
  [ "$output" = "gl-run: --pool" ]
  # a flag that is only a prefix of a documented one is still missing
  sed 's/\\-\\-witness\\-cap\\-mb/--witness-XX/g' "$MAN/gl-run.1" >gl-run.1
  run missing_flags gl-run gl-run.1
  [ "$output" = "gl-run: --witness-cap-mb" ]
}

@test "man: every flag each command's --help prints is in its page" {
  local all=
  for c in "${CMDS[@]}"; do
    [ "$(help_flags "$c" | wc -l)" -ge 2 ] # at least --help and --version, or the extraction broke
    all+=$(missing_flags "$c" "$MAN/$c.1")
  done
  [ -z "$all" ] || { echo "undocumented flags:"; echo "$all"; return 1; }
}

@test "man: each command page has the sections an operator looks for" {
  for c in "${CMDS[@]}"; do
    text=$(render "$MAN/$c.1")
    for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
      grep -qx "$s" <<<"$text" || { echo "$c.1: no section $s"; return 1; }
    done
    # the JSON records in and out, the exit codes 0, 1 and 2, the pipeline
    grep -qE '^(OUTPUT|COMMANDS)$' <<<"$text"
    grep -q '{"' <<<"$text" || { echo "$c.1: no JSON record"; return 1; }
    exits=$(sed -n '/^EXIT STATUS$/,/^ENVIRONMENT$/p' <<<"$text")
    for e in 0 1 2; do grep -qE "^ +$e( |\$)" <<<"$exits" || { echo "$c.1: exit $e"; return 1; }; done
    grep -q "$c " <<<"$(sed -n '/^EXAMPLES$/,/^SEE ALSO$/p' <<<"$text")"
  done
}

@test "man: germline(7) defines germline, copy, view, horizon, witness and receipt" {
  text=$(render "$MAN/germline.7")
  concepts=$(sed -n '/^CONCEPTS$/,/^[A-Z]/p' <<<"$text")
  for w in germline copy view horizon witness receipt; do
    grep -qE "^ +$w( |,|\$)" <<<"$concepts" || { echo "germline.7: no concept $w"; return 1; }
  done
  for c in "${CMDS[@]}"; do grep -q "$c(1)" <<<"$text"; done
}
