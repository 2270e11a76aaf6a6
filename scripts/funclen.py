#!/usr/bin/env python3
"""List C functions longer than a limit (issue 18: none over ~80 lines in lib/
and cmd/ without a comment saying why). A function passes if the comment
block just above it contains "long:" followed by the reason, e.g.
/* … long: one switch over the SPEC §6 codes, read top to bottom. */

Usage: scripts/funclen.py [--limit N] [--check] PATH...   (--check: exit 1
if any function over the limit lacks the "long:" reason)."""
import re
import sys

def functions(src):
    """(name, first line, line count, comment above) of each top-level function."""
    lines = src.split('\n')
    out = []
    depth = 0
    i = 0
    start = None
    text = src
    # strip comments and strings for brace counting, keeping line structure
    clean = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)
    clean = re.sub(r'//[^\n]*', '', clean)
    clean = re.sub(r'"(\\.|[^"\\\n])*"', '""', clean)
    clean = re.sub(r"'(\\.|[^'\\\n])*'", "''", clean)
    cl = clean.split('\n')
    for n, line in enumerate(cl):
        for ch in line:
            if ch == '{':
                if depth == 0:
                    start = n
                depth += 1
            elif ch == '}':
                depth -= 1
                if depth == 0 and start is not None:
                    # find the signature: walk up from start to a line with '('
                    s = start
                    while s > 0 and '(' not in cl[s] and cl[s].strip() in ('{', ''):
                        s -= 1
                    while s > 0 and cl[s - 1].strip() and not cl[s - 1].rstrip().endswith((';', '}', '*/')) \
                            and not cl[s - 1].startswith('#') and '(' not in cl[s].split('{')[0] :
                        s -= 1
                    sig = ' '.join(x.strip() for x in cl[s:start + 1])
                    m = re.search(r'([A-Za-z_][A-Za-z0-9_]*)\s*\([^;]*$', sig.split('{')[0])
                    is_fn = m and not re.match(r'^\s*(struct|enum|union|typedef)\b[^(]*$', sig) and '=' not in sig.split('(')[0]
                    if is_fn:
                        # the comment block above s
                        c = s - 1
                        while c >= 0 and lines[c].strip() == '':
                            c -= 1
                        com = []
                        if c >= 0 and lines[c].rstrip().endswith('*/'):
                            while c >= 0:
                                com.insert(0, lines[c])
                                if '/*' in lines[c]:
                                    break
                                c -= 1
                        out.append((m.group(1), s + 1, n - s + 1, '\n'.join(com)))
                    start = None
    return out

def main(argv):
    limit = 80
    check = False
    paths = []
    it = iter(argv)
    for a in it:
        if a == '--limit':
            limit = int(next(it))
        elif a == '--check':
            check = True
        else:
            paths.append(a)
    bad = 0
    for p in paths:
        try:
            src = open(p, encoding='utf-8', errors='replace').read()
        except OSError as e:
            print(f'{p}: {e}', file=sys.stderr)
            return 2
        for name, line, count, com in functions(src):
            if count > limit:
                why = 'long:' in com
                print(f'{p}:{line}: {name} {count} lines{" (reason given)" if why else ""}')
                bad += not why
    return 1 if check and bad else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
