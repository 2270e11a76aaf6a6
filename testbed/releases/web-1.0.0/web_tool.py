"""web 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the web server,
flow-compliant.

- fetch: GETs args["url"] (its host is declared by the call's
  "destinations"); returns {"url", "status", "text"}.
- render: each document item as an HTML page (a preview for the agent);
  contacts nobody; returns {name: html}.
- post_blog: POSTs args["text"], else the text of the item args["item"] (a
  query result {"columns","rows"} becomes a table), to
  http://blog.example/post; returns {"posted", "status"}.
"""
import urllib.request

import webutil


def fetch(call):
    url = call.args["url"]
    with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=20) as r:
        return {"url": url, "status": r.status, "text": r.read().decode("utf-8", "replace")}


def render(call):
    return {n: webutil.html(n, it.data) for n, it in call.items.items() if it.data}


def post_blog(call):
    if "text" in call.args:
        body = str(call.args["text"]).encode()
    else:
        item = call.items.get(call.args.get("item", ""))
        body = webutil.post_text(item.data).encode() if item is not None and item.data else b""
    return {"posted": len(body), "status": webutil.post("http://blog.example/post", body)}
