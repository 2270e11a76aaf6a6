"""docsutil: the docs server's vendored helper (text and the OCR protocol).

ocr(name, data) POSTs the document's bytes to http://ocr.example/ocr?name=NAME
and returns the recognised text (the reply's "text"). first_line(data) is a
summary: the first non-empty line of the document's text.
"""
import json
import urllib.parse
import urllib.request

VERSION = "1.0.0"


def text(data):
    return data.decode("utf-8", "replace")


def first_line(data):
    for line in text(data).splitlines():
        if line.strip():
            return line.strip()
    return ""


def post(url, body, headers=None):
    h = {"Content-Type": "application/octet-stream"}
    h.update(headers or {})
    req = urllib.request.Request(url, data=body, method="POST", headers=h)
    with urllib.request.urlopen(req, timeout=20) as r:
        return r.read()


def ocr(name, data, headers=None):
    reply = post("http://ocr.example/ocr?name=" + urllib.parse.quote(name), data, headers)
    try:
        return json.loads(reply).get("text", "")
    except ValueError:
        return text(reply)
