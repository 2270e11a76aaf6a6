"""lint 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the lint
server, flow-compliant.

- lint: POSTs the code item (args["file"], else the first item with data) to
  the hosted linter http://lint.example/lint?file=NAME; returns
  {"file", "findings"} where findings is the linter's reply ("findings", else
  its "text" split into lines).
- scan_secrets: a local secret scanner; contacts nobody. Returns, per item,
  the line numbers and key names of lines that look like credentials (never
  the values): {name: ["3: API_TOKEN", ...]}.
"""
import lintutil


def lint(call):
    name = call.args.get("file") or next((n for n, it in call.items.items() if it.data), "")
    item = call.items.get(name)
    if item is None or not item.data:
        return {"file": name, "findings": []}
    return {"file": name, "findings": lintutil.hosted(name, item.data)}


def scan_secrets(call):
    return {n: lintutil.secrets(it.data) for n, it in call.items.items() if it.data}
