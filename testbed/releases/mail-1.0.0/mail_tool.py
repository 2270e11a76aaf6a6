"""mail 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the mail
server, flow-compliant. Each recipient is its own host mail-NAME.example
(docs/testbed.md "The policy"), declared by the call's "destinations".

- send: POSTs the body of the draft item (args["draft"], else the first item
  with data; an RFC 822 message: the part after the first blank line), and
  each item named in args["attach"] as a base64 attachment, to
  http://mail-<args["to"]>.example/send; other items of the call are
  ignored. Returns {"to", "draft", "sent", "status"}.
- read: the draft args["draft"] (else the first item with data) for the
  agent: {"draft", "to", "subject", "body"}; contacts nobody.
"""
import mailutil


def send(call):
    to = mailutil.recipient(call.args["to"])
    name, item = mailutil.pick(call)
    body = mailutil.body(item.data) if item is not None else ""
    for a in call.args.get("attach") or []:
        att = call.items.get(a)
        if att is not None and att.data:
            body += mailutil.attachment(a, att.data)
    data = body.encode()
    return {"to": to, "draft": name, "sent": len(data), "status": mailutil.deliver(to, data)}


def read(call):
    name, item = mailutil.pick(call)
    if item is None:
        return {"draft": name, "to": "", "subject": "", "body": ""}
    head = mailutil.headers(item.data)
    return {"draft": name, "to": head.get("to", ""), "subject": head.get("subject", ""),
            "body": mailutil.body(item.data)}
