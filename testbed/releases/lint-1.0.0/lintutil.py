"""lintutil: the lint server's vendored helper (hosted linter, secret scan)."""
import json
import re
import urllib.parse
import urllib.request

VERSION = "1.0.0"
SECRET = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*(?:key|token|secret|password)[A-Za-z0-9_]*)\s*[=:]",
                    re.I)


def post(url, body, ctype="text/x-python"):
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": ctype})
    with urllib.request.urlopen(req, timeout=20) as r:
        return r.read()


def hosted(name, data):
    """The hosted linter's findings for one file."""
    reply = post("http://lint.example/lint?file=" + urllib.parse.quote(name), data)
    try:
        doc = json.loads(reply)
    except ValueError:
        doc = {"text": reply.decode("utf-8", "replace")}
    findings = doc.get("findings") if isinstance(doc, dict) else None
    if findings is None:
        text = doc.get("text", "") if isinstance(doc, dict) else ""
        findings = [l for l in str(text).splitlines() if l.strip()]
    return findings


def secrets(data):
    out = []
    for i, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        m = SECRET.match(line)
        if m:
            out.append("%d: %s" % (i, m.group(1)))
        elif "PRIVATE KEY-----" in line and line.startswith("-----BEGIN"):
            out.append("%d: private key" % i)
    return out
