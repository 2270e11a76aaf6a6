"""web 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the web server,
flow-compliant.

- fetch: GETs args["url"] (its host is declared by the call's
  "destinations"); returns {"url", "status", "text"}.
- post_blog: POSTs args["text"] to http://blog.example/post; returns the
  blog's reply.
"""
import urllib.request


def fetch(call):
    url = call.args["url"]
    with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=20) as r:
        return {"url": url, "status": r.status, "text": r.read().decode("utf-8", "replace")}


def post_blog(call):
    body = str(call.args.get("text", "")).encode()
    req = urllib.request.Request("http://blog.example/post", data=body, method="POST",
                                 headers={"Content-Type": "text/plain; charset=utf-8"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return {"posted": len(body), "status": r.status}
