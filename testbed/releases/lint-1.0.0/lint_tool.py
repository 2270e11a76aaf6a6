"""lint 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the lint
server, flow-compliant.

- lint: POSTs the code item (args["file"], else the first item with data) to
  the hosted linter http://lint.example/lint?file=NAME; returns
  {"file", "findings"} where findings is the linter's reply ("findings", else
  its "text" split into lines).
"""
import json
import urllib.parse
import urllib.request


def lint(call):
    name = call.args.get("file") or next((n for n, it in call.items.items() if it.data), "")
    item = call.items.get(name)
    if item is None or not item.data:
        return {"file": name, "findings": []}
    req = urllib.request.Request("http://lint.example/lint?file=" + urllib.parse.quote(name),
                                 data=item.data, method="POST",
                                 headers={"Content-Type": "text/x-python"})
    with urllib.request.urlopen(req, timeout=20) as r:
        reply = r.read()
    try:
        doc = json.loads(reply)
    except ValueError:
        doc = {"text": reply.decode("utf-8", "replace")}
    findings = doc.get("findings")
    if findings is None:
        findings = [l for l in str(doc.get("text", "")).splitlines() if l.strip()]
    return {"file": name, "findings": findings}
