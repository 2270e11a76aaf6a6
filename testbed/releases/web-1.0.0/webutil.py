"""webutil: the web server's vendored helper (HTML, post text, HTTP POST)."""
import html as _html
import json
import urllib.request

VERSION = "1.0.0"


def text(data):
    return data.decode("utf-8", "replace")


def html(name, data):
    lines = [l for l in text(data).splitlines() if l.strip()]
    head = _html.escape(lines[0]) if lines else _html.escape(name)
    return "<h1>%s</h1>%s" % (head, "".join("<p>%s</p>" % _html.escape(l) for l in lines[1:]))


def post_text(data):
    """A document's text; a JSON query result {"columns","rows"} as a table."""
    try:
        doc = json.loads(data)
    except ValueError:
        return text(data)
    if isinstance(doc, dict) and isinstance(doc.get("rows"), list):
        rows = [doc.get("columns") or []] + doc["rows"]
        return "\n".join(" | ".join(str(c) for c in r) for r in rows if isinstance(r, list))
    return text(data)


def post(url, body, ctype="text/plain; charset=utf-8"):
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": ctype})
    with urllib.request.urlopen(req, timeout=20) as r:
        r.read()
        return r.status
