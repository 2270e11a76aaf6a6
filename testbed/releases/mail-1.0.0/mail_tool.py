"""mail 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the mail
server, flow-compliant. Each recipient is its own host mail-NAME.example
(docs/testbed.md "The policy"), declared by the call's "destinations".

- send: POSTs the body of the draft item (args["draft"], else the first item
  with data; an RFC 822 message: the part after the first blank line) to
  http://mail-<args["to"]>.example/send; returns {"to", "sent", "status"}.
"""
import re
import urllib.request


def _body(data):
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    return text.split("\n\n", 1)[1] if "\n\n" in text else text


def send(call):
    to = str(call.args["to"])
    if not re.fullmatch(r"[a-z0-9-]{1,63}", to):
        raise ValueError("bad recipient %r" % to)
    name = call.args.get("draft") or next((n for n, it in call.items.items() if it.data), "")
    item = call.items.get(name)
    body = _body(item.data).encode() if item is not None and item.data else b""
    req = urllib.request.Request("http://mail-%s.example/send" % to, data=body, method="POST",
                                 headers={"Content-Type": "text/plain; charset=utf-8"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return {"to": to, "draft": name, "sent": len(body), "status": r.status}
