"""copy_libs.py — ctypes.util.find_library in a germline and its copies
(docs/python-host.md "Libraries").

The stdlib's find_library on Linux asks `ldconfig -p`, then gcc, then ld:
none of them is in the minimal root (docs/sandbox.md), so it answers None
for every name and a package that loads its C library by name
(python-magic, and many more) fails at import. What the root does hold is
the system's library directory, read-only (the dynamic loader's, the one
the interpreter's libc came from: lib/sandbox/landlock.c), so the answer
is looked up there: the soname `lib<name>.so.<N>` (the highest N) that
ldconfig's cache would list for it, else `lib<name>.so`, else None, as
before. The directory is the host's, the same in the call and in its
replay on the machine that wrote the witness (docs/witness.md "What a
witness records"): it is no input a release could tell a replay by.
"""
import os
import re
import sysconfig

_listing = {}


def _dirs():
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    out = []
    for d in ("/usr/lib/" + arch if arch else "", "/lib/" + arch if arch else "",
              "/usr/lib64", "/lib64", "/usr/lib", "/lib"):
        if d and d not in out:
            out.append(d)
    return out


def _names(d):
    if d not in _listing:
        try:
            _listing[d] = os.listdir(d)
        except OSError:
            _listing[d] = None  # absent, or not listable: probed by name below
    return _listing[d]


def find_library(name):
    if not isinstance(name, str) or not name or "/" in name or "\0" in name:
        return None
    want = re.compile(r"lib%s\.so\.(\d+)$" % re.escape(name))
    for d in _dirs():
        names = _names(d)
        if names is None:
            # not listable: the usual sonames, by name
            names = [n for n in ("lib%s.so.%d" % (name, v) for v in range(16))
                     if os.path.exists(os.path.join(d, n))]
        hits = [(int(m.group(1)), n) for n in names if (m := want.match(n))]
        if hits:
            return max(hits)[1]
        if "lib%s.so" % name in names or os.path.exists(os.path.join(d, "lib%s.so" % name)):
            return "lib%s.so" % name
    return None


def install():
    """Replace ctypes.util.find_library (in the germline, before the
    release's import; copies inherit it)."""
    try:
        import ctypes.util
    except ImportError:  # an interpreter without ctypes: nothing to mend
        return
    ctypes.util.find_library = find_library
