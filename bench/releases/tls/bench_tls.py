"""Release of bench/tls.sh: one GET per call, over HTTPS to api.example
with the operator's API_TOKEN in its Authorization header (a secret the
broker substitutes), or over plain HTTP to plain.example. Returns the
length of the reply body."""
import os
import urllib.request


def _get(url):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " +
                                               os.environ.get("API_TOKEN", "")})
    with urllib.request.urlopen(req, timeout=10) as r:
        return len(r.read())


def https(call):
    return _get("https://api.example/bench")


def http(call):
    return _get("http://plain.example/bench")
