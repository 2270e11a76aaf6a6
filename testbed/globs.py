#!/usr/bin/python3
"""The policy's "labels" globs (SPEC §11, docs/formats.md "Globs"), in Python.

    globs.py POLICY PATH...    prints "PATH<TAB>LABEL-JSON" per path, or
                               "PATH<TAB>unlabelled" (exit 1 if any is)

Paths match component by component: inside a component `*`, `?` and `[...]`
as fnmatch(3) without flags (`*` matches a leading dot, never `/`); a
component that is exactly `**` matches zero or more whole components. The
first glob in document order that matches gives the label; no match gives
None (gl-plan refuses such a file). world.py uses it to label its items;
tests/testbed.bats also checks the same paths through gl-plan itself.
"""
import fnmatch
import json
import sys


def _comp(pat, name):
    return fnmatch.fnmatchcase(name, pat)


def _match(pc, nc):
    if not pc:
        return not nc
    if pc[0] == "**":
        return any(_match(pc[1:], nc[i:]) for i in range(len(nc) + 1))
    return bool(nc) and _comp(pc[0], nc[0]) and _match(pc[1:], nc[1:])


def match(glob, path):
    return _match(glob.strip("/").split("/"), path.strip("/").split("/"))


def label_of(globs, path):
    """globs: iterable of (glob, label) in document order."""
    for g, lab in globs:
        if match(g, path):
            return sorted(set(lab))
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        labels = json.load(f).get("labels", {})
    bad = 0
    for p in sys.argv[2:]:
        lab = label_of(labels.items(), p)
        bad |= lab is None
        print("%s\t%s" % (p, "unlabelled" if lab is None else json.dumps(lab, separators=(",", ":"))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
