#!/usr/bin/env python3
"""variants.py OUT — the testbed's release modules, written to OUT/<name>/
(docs/testbed.md "Releases"; issue 18: the variants generated, never
committed twice). The output is what testbed/releases/ held before the
variants were generated, byte for byte (tests/testbed.bats checks every file
against variants/SHA256SUMS); testbed/assemble.sh then overlays each update
on its server's 1.0.0 module, as it always did.

Sources, all under testbed/:
  releases/<name>/             committed modules: the five 1.0.0 servers and
                               the variants whose code is their own (docs'
                               adaptive ones, the xtool pair)
  variants/<attack>.py.in      one template per attack of sql, web, lint and
                               mail: the module <server>_ext.py, which wraps
                               1.0.0's functions (@@key@@ from servers.json;
                               a line "@@wrap@@ TEXT" is TEXT wrapped at 76
                               columns, so one template serves every name)
  variants/servers.json        each server's names: its functions, the
                               leaking call L, the value call V, …
  variants/manifest-<server>.json.in
                               each server's update manifest (@@version@@,
                               @@entry@@); a committed manifest.json wins
  variants/patches/<name>/<file>.diff
                               a unified diff against <server>-1.0.0/<file>
                               (docs' variants that change docs_tool.py or
                               docsutil.py)
Standard library only; run with /usr/bin/python3.
"""
import json
import os
import re
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
RELEASES = os.path.join(HERE, "releases")
VARIANTS = os.path.join(HERE, "variants")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def render(template, params):
    """@@key@@ placeholders, then the @@wrap@@ paragraphs; an unknown key fails."""
    def key(m):
        if m.group(1) == "wrap":
            return m.group(0)
        if m.group(1) not in params:
            raise KeyError("no @@%s@@ for this server" % m.group(1))
        return params[m.group(1)]
    text = re.sub(r"@@([a-zA-Z_]+)@@", key, template)
    text = re.sub(r"^@@wrap@@ (.*)$", lambda m: textwrap.fill(m.group(1), 76, break_on_hyphens=False),
                  text, flags=re.M)
    if "@@" in text:
        raise ValueError("a placeholder is left")
    return text


def patch(orig, diff):
    """Apply a unified diff (one file) to orig; every context and removed
    line must match exactly (a stale diff fails, never guesses)."""
    src = orig.decode().split("\n")
    out, pos = [], 0
    lines = diff.decode().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[i])
        i += 1
        if not m:
            continue
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out.extend(src[pos:start])
        pos = start
        while i < len(lines) and lines[i][:1] in (" ", "-", "+", "\\"):
            tag, text = lines[i][:1], lines[i][1:]
            i += 1
            if tag == "\\":
                continue
            if tag in " -":
                if src[pos] != text:
                    raise ValueError("patch does not apply at line %d" % (pos + 1))
                pos += 1
            if tag in " +":
                out.append(text)
    out.extend(src[pos:])
    return "\n".join(out).encode()


def committed():
    """{name: {relpath: bytes}} of testbed/releases/."""
    mods = {}
    for name in sorted(os.listdir(RELEASES)):
        top = os.path.join(RELEASES, name)
        if "-" not in name or not os.path.isdir(top):
            continue
        files = mods.setdefault(name, {})
        for d, _, fs in os.walk(top):
            for f in fs:
                p = os.path.join(d, f)
                files[os.path.relpath(p, top)] = read(p)
    return mods


def modules():
    """{name: {relpath: bytes}}: every release module of the testbed."""
    with open(os.path.join(VARIANTS, "servers.json"), encoding="utf-8") as f:
        servers = json.load(f)
    mods = committed()
    attacks = sorted(f[:-len(".py.in")] for f in os.listdir(VARIANTS) if f.endswith(".py.in")
                     and not f.endswith("-data.py.in"))
    for server, p in sorted(servers.items()):
        params = {"name": server, "util": server + "util", "tool": server + "_tool",
                  "pre_import": "", "hidden_import": "", "data_item": "it.data", "data_extra": "",
                  "wraps": "".join("%s = _hidden(%s)  # hidden\n" % (f, f) for f in p["functions"])}
        params.update({k: v for k, v in p.items() if isinstance(v, str)})
        if "data_extra_file" in p:
            params["data_extra"] = read(os.path.join(VARIANTS, p["data_extra_file"])).decode()
        for a in attacks:
            params["variant"] = a
            t = read(os.path.join(VARIANTS, a + ".py.in")).decode()
            mods.setdefault("%s-%s" % (server, a), {})["%s_ext.py" % server] = render(t, params).encode()
    pdir = os.path.join(VARIANTS, "patches")
    for name in sorted(os.listdir(pdir)):
        base = mods[name.split("-", 1)[0] + "-1.0.0"]
        for f in sorted(os.listdir(os.path.join(pdir, name))):
            target = f[:-len(".diff")]
            mods.setdefault(name, {})[target] = patch(base[target], read(os.path.join(pdir, name, f)))
    for name, files in mods.items():
        server, variant = name.split("-", 1)
        if variant == "1.0.0" or "manifest.json" in files:
            continue
        entry = server + ("_ext" if server + "_ext.py" in files else "_tool")
        t = read(os.path.join(VARIANTS, "manifest-%s.json.in" % server)).decode()
        files["manifest.json"] = render(t, {"version": "1.1.0-" + variant, "entry": entry}).encode()
    return mods


def names():
    return sorted(modules())


def write(out):
    for name, files in sorted(modules().items()):
        for rel, data in sorted(files.items()):
            p = os.path.join(out, name, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: variants.py OUT")
    write(sys.argv[1])
