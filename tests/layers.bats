#!/usr/bin/env bats
# make layers (issue 18; scripts/layers.sh; docs/design/README.md "The map"):
# lib/ is folders in one order, core < json < release < sign < plan < sandbox
# < runtime < evidence < broker < replay < damp < session, and no #include
# points up it. The check is shown to refuse a deliberately added upward
# include (its mechanism at work) and a bare include that does not name its
# folder, on a copy of lib/, before it passes the real tree.
# sanitizers: no — a shell script over the sources; no binary of ours runs
# unprivileged: no — the same
load helpers

setup() {
  gl_setup
  mkdir -p tree
  cp -r "$GL_ROOT/lib" tree/lib
}

@test "layers: the tree as committed has no upward include" {
  run "$GL_ROOT/scripts/layers.sh" "$GL_ROOT"
  [ "$status" -eq 0 ]
  [[ "$output" == *"no include points up"* ]]
}

@test "layers: an upward include (core including broker) is refused, naming the file, the line and the layer" {
  run "$GL_ROOT/scripts/layers.sh" tree
  [ "$status" -eq 0 ]
  sed -i '0,/^#include "core\/cancel.h"/s//#include "core\/cancel.h"\n#include "broker\/broker.h"/' tree/lib/core/cancel.c
  grep -q '"broker/broker.h"' tree/lib/core/cancel.c
  run "$GL_ROOT/scripts/layers.sh" tree
  [ "$status" -eq 1 ]
  [[ "$output" == *'lib/core/cancel.c:'*'"broker/broker.h" points up: core may include only'* ]]
}

@test "layers: a sibling later in the order (sign including sandbox) is refused; one earlier (sandbox including sign) is not" {
  sed -i '0,/^#include "/s//#include "sandbox\/proc.h"\n#include "/' tree/lib/sign/tuf.c
  run "$GL_ROOT/scripts/layers.sh" tree
  [ "$status" -eq 1 ]
  [[ "$output" == *'lib/sign/tuf.c:'*'"sandbox/proc.h" points up'* ]]
  cp "$GL_ROOT/lib/sign/tuf.c" tree/lib/sign/tuf.c
  sed -i '0,/^#include "/s//#include "sign\/tuf.h"\n#include "/' tree/lib/sandbox/proc.c
  run "$GL_ROOT/scripts/layers.sh" tree
  [ "$status" -eq 0 ]
}

@test "layers: an include that does not name its folder, and a folder outside the order, are refused" {
  sed -i '0,/^#include "core\/cancel.h"/s//#include "cancel.h"/' tree/lib/core/cancel.c
  run "$GL_ROOT/scripts/layers.sh" tree
  [ "$status" -eq 1 ]
  [[ "$output" == *'"cancel.h" does not name its folder'* ]]
  cp "$GL_ROOT/lib/core/cancel.c" tree/lib/core/cancel.c
  mkdir tree/lib/extra && echo 'int x;' >tree/lib/extra/x.c
  run "$GL_ROOT/scripts/layers.sh" tree
  [ "$status" -eq 1 ]
  [[ "$output" == *"lib/extra is not in the order"* ]]
}

@test "funclen: a function over 80 lines is refused unless the comment above it says why (long:)" {
  run "$GL_ROOT/scripts/funclen.py" --check "$GL_ROOT"/lib/*/*.c "$GL_ROOT"/cmd/*/*.c
  [ "$status" -eq 0 ]
  { echo '/* a helper */'; echo 'int f(void)'; echo '{'; for i in $(seq 85); do echo "	int v$i = $i;"; done; echo '	return 0;'; echo '}'; } >tree/long.c
  run "$GL_ROOT/scripts/funclen.py" --check tree/long.c
  [ "$status" -eq 1 ]
  [[ "$output" == *"tree/long.c:2: f 89 lines"* ]]
  sed -i 's|/\* a helper \*/|/* a helper. long: one table, read top to bottom. */|' tree/long.c
  run "$GL_ROOT/scripts/funclen.py" --check tree/long.c
  [ "$status" -eq 0 ]
  [[ "$output" == *"(reason given)"* ]]
}
