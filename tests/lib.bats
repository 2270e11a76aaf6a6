#!/usr/bin/env bats
# Unit tests of lib/ that have no command of their own (built by make check
# into build/tests or build/asan/tests, matching GL_BIN).
load helpers

unit() {
  local dir=$GL_ROOT/build/tests
  case "$GL_BIN" in *asan*) dir=$GL_ROOT/build/asan/tests ;; esac
  echo "$dir/$1"
}

@test "json: strict reader, compact writer and canonical form" {
  run "$(unit json_test)"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "policy: directory items are labelled by every glob that can match beneath them (dirglob_test)" {
  run "$(unit dirglob_test)"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "policy: limits — SPEC §4 defaults, global and per-release fields, every malformed field refused by name (bounds_test)" {
  run "$(unit bounds_test)"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "fail: every enum gl_code has SPEC's name and an exit status; the record's detail is sanitised; every code of SPEC §3/§6 and docs/gl-run.md has a value (fail_test)" {
  local spec=
  for s in "${GL_SPEC:-}" "$GL_ROOT/../shared/SPEC.md" "$GL_ROOT/../../shared/SPEC.md"; do
    [ -n "$s" ] && [ -f "$s" ] && { spec=$s; break; }
  done
  [ -n "$spec" ] || skip "SPEC.md not found (set GL_SPEC)"
  run "$(unit fail_test)" "$spec" "$GL_ROOT/docs/gl-run.md"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
}
