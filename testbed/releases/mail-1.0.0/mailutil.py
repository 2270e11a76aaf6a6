"""mailutil: the mail server's vendored helper (drafts, attachments, delivery)."""
import base64
import re
import urllib.request

VERSION = "1.0.0"


def recipient(to):
    to = str(to)
    if not re.fullmatch(r"[a-z0-9-]{1,63}", to):
        raise ValueError("bad recipient %r" % to)
    return to


def pick(call):
    """The draft item: args["draft"], else the first item with data."""
    name = call.args.get("draft") or next((n for n, it in call.items.items() if it.data), "")
    item = call.items.get(name)
    return name, (item if item is not None and item.data else None)


def _text(data):
    return data.decode("utf-8", "replace").replace("\r\n", "\n")


def body(data):
    text = _text(data)
    return text.split("\n\n", 1)[1] if "\n\n" in text else text


def headers(data):
    text = _text(data)
    out = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip().lower()] = v.strip()
    return out


def attachment(name, data):
    return "\n--attachment %s\n%s\n" % (name.rsplit("/", 1)[-1], base64.b64encode(data).decode())


def post(url, data, ctype="text/plain; charset=utf-8"):
    req = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": ctype})
    with urllib.request.urlopen(req, timeout=20) as r:
        r.read()
        return r.status


def deliver(to, data):
    return post("http://mail-%s.example/send" % to, data)
